//! The workload file the page sends, as state: the bytes chosen (a file input, a drop, a
//! sample, `workload_url`) and what reading them with the form's `workload_turns` found; the
//! verbs that choose and clear it are [`AppState`](super::AppState)'s. The bytes stay in the tab: only the requests built from
//! them leave it, to the endpoint.

use std::sync::Arc;

use crate::core::config::fields::FieldKey;
use crate::core::config::form::RunForm;
use crate::core::workload::read::{read, ReadOptions};
use crate::core::workload::Workload;

/// A workload file as chosen: its name and bytes.
#[derive(Clone)]
pub struct WorkloadSource {
    /// The name to show and record (the file's, the URL's last segment, the sample's).
    pub name: String,
    /// Its bytes.
    pub bytes: Arc<[u8]>,
}

/// What the page knows of the workload: none chosen, read, or why it cannot be used.
#[derive(Clone, Debug)]
pub enum WorkloadState {
    /// Synthetic prompts.
    None,
    /// Being fetched or read (the text says what).
    Loading(String),
    /// Read: the requests to send.
    Ready(Arc<Workload>),
    /// Cannot be used; the text says why and what to do. Nothing is sent.
    Refused(String),
}

/// Two states are the same when they hold the same reading (compared by address: a workload
/// can be large, and it is read anew whenever it changes).
impl PartialEq for WorkloadState {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Self::None, Self::None) => true,
            (Self::Loading(a), Self::Loading(b)) | (Self::Refused(a), Self::Refused(b)) => a == b,
            (Self::Ready(a), Self::Ready(b)) => Arc::ptr_eq(a, b),
            _ => false,
        }
    }
}

/// Reads `source` with the form's turns setting.
pub fn read_source(source: &WorkloadSource, form: &RunForm) -> WorkloadState {
    // A bad turns field shows its error at the field; the file is read with the default
    // meanwhile.
    let turns = form
        .get(FieldKey::WorkloadTurns)
        .trim()
        .parse()
        .unwrap_or_default();
    match read(&source.bytes, Some(&source.name), &ReadOptions { turns }) {
        Ok(workload) => WorkloadState::Ready(Arc::new(workload)),
        Err(error) => WorkloadState::Refused(format!("{}: {error}", source.name)),
    }
}
