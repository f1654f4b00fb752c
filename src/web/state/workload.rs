//! The workload file the page sends, as state: the bytes chosen (a file input, a drop, a
//! sample, `workload_url`), what reading them with the form's `workload_turns` found, and the
//! verbs that choose and clear it. The bytes stay in the tab: only the requests built from
//! them leave it, to the endpoint.

use std::sync::Arc;

use leptos::prelude::*;

use crate::core::config::fields::FieldKey;
use crate::core::config::form::RunForm;
use crate::core::config::settings::MAX_REQUESTS;
use crate::core::workload::read::{read, ReadOptions};
use crate::core::workload::Workload;

use crate::web::state::AppState;

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
pub(super) fn read_source(source: &WorkloadSource, form: &RunForm) -> WorkloadState {
    let turns = match form.get(FieldKey::WorkloadTurns).trim().parse() {
        Ok(turns) => turns,
        // The field's own error shows at the field; read with the default meanwhile.
        Err(_) => Default::default(),
    };
    match read(&source.bytes, Some(&source.name), &ReadOptions { turns }) {
        Ok(workload) => WorkloadState::Ready(Arc::new(workload)),
        Err(error) => WorkloadState::Refused(format!("{}: {error}", source.name)),
    }
}

impl AppState {
    /// The workload the next run sends.
    pub fn workload(&self) -> Memo<WorkloadState> {
        self.workload
    }

    /// The workload the next run sends, if one is ready; an error to show if one was chosen
    /// but cannot be used (nothing is sent then).
    pub fn workload_for_run(&self) -> Result<Option<Arc<Workload>>, String> {
        match self.workload.get_untracked() {
            WorkloadState::None => Ok(None),
            WorkloadState::Ready(workload) => Ok(Some(workload)),
            WorkloadState::Loading(what) => Err(format!("{what}: wait until it is read")),
            WorkloadState::Refused(why) => Err(format!(
                "{why} (clear the workload to send synthetic prompts)"
            )),
        }
    }

    /// A workload file is being fetched (`workload_url`).
    pub fn workload_loading(&self, what: String) {
        self.workload_loading.set(Some(what));
    }

    /// A workload file could not be fetched or read at all.
    pub fn workload_failed(&self, why: String) {
        self.workload_loading.set(None);
        self.workload_source.set(None);
        self.workload_error.set(Some(why));
    }

    /// `source` is the workload the next run sends. Requests becomes all of its requests (at
    /// most 10,000), and canaries go off so the server receives the file's text as given (the
    /// field can turn them on again: then one marker line precedes each request's text).
    pub fn choose_workload(&self, source: WorkloadSource) {
        self.workload_loading.set(None);
        self.workload_error.set(None);
        let state = self.form.with_untracked(|form| read_source(&source, form));
        if let WorkloadState::Ready(workload) = &state {
            let requests = workload.summary.turns.clamp(1, MAX_REQUESTS);
            self.form.update(|form| {
                form.set(FieldKey::Requests, requests.to_string());
                form.set(FieldKey::RequestCanaries, "false");
            });
        }
        self.workload_source.set(Some(source));
    }

    /// Back to synthetic prompts.
    pub fn clear_workload(&self) {
        self.workload_loading.set(None);
        self.workload_error.set(None);
        self.workload_source.set(None);
    }
}
