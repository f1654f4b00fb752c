//! The workload file the page sends, as state: the file chosen (a file input, a drop, a
//! sample, `workload_url`), how far reading it has come, and what reading found; the verbs
//! that change it are [`AppState`](super::AppState)'s, and the reading itself is
//! `run::workload`'s, in a worker. The file stays in the tab: only the requests built from it
//! leave it, to the endpoint.

use std::sync::Arc;

use crate::core::workload::read::ReadOptions;
use crate::core::workload::Workload;

/// A workload file as chosen: its name, and where its bytes are.
#[derive(Clone)]
pub struct WorkloadSource {
    /// The name to show and record (the file's, the URL's last segment, the sample's).
    pub name: String,
    /// Where to read it from, again if a setting needs it read anew.
    pub origin: WorkloadOrigin,
}

/// Where a workload file's bytes are.
#[derive(Clone)]
pub enum WorkloadOrigin {
    /// A file the user chose or dropped (read from disk, never copied whole).
    File(web_sys::File),
    /// An address to fetch with CORS (a sample, `workload_url`).
    Url(String),
}

/// What the page knows of the workload: none chosen, being read, read, or why it cannot be
/// used.
#[derive(Clone, Debug)]
pub enum WorkloadState {
    /// Synthetic prompts.
    None,
    /// Being fetched or read.
    Loading {
        /// What is happening, e.g. "reading conversations.json".
        what: String,
        /// Bytes read so far.
        read: u64,
        /// The file's size, when known.
        total: Option<u64>,
    },
    /// Read: the requests to send, and the options it was read with.
    Ready(Arc<Workload>, ReadOptions),
    /// Cannot be used; the text says why and what to do. Nothing is sent.
    Refused(String),
}

/// Two states are the same when they hold the same reading (compared by address: a workload
/// can be large).
impl PartialEq for WorkloadState {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Self::None, Self::None) => true,
            (
                Self::Loading { what, read, total },
                Self::Loading {
                    what: what_b,
                    read: read_b,
                    total: total_b,
                },
            ) => what == what_b && read == read_b && total == total_b,
            (Self::Refused(a), Self::Refused(b)) => a == b,
            (Self::Ready(a, options_a), Self::Ready(b, options_b)) => {
                Arc::ptr_eq(a, b) && options_a == options_b
            }
            _ => false,
        }
    }
}
