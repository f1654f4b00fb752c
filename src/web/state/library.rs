//! The library of loaded artifacts: every finished run and every file dropped on the page, in
//! load order, each with whether it is selected for the charts and the comparison. The
//! components that list and load files are `ui::library`'s.

use std::sync::Arc;

use leptos::prelude::*;

use crate::core::read::loaded::LoadedArtifact;
use crate::core::read::validate::report::Verdict;

/// One loaded file.
#[derive(Clone)]
pub struct LibraryEntry {
    /// Stable id for list keys.
    pub id: u64,
    /// What the core read from the file.
    pub artifact: Arc<LoadedArtifact>,
    /// Whether the user selected it for charts and comparison.
    pub selected: RwSignal<bool>,
}

/// The library's state, provided through context.
#[derive(Clone, Copy)]
pub struct Library {
    entries: RwSignal<Vec<LibraryEntry>>,
    next_id: StoredValue<u64>,
}

impl Library {
    /// A new, empty library.
    pub fn new() -> Self {
        Self {
            entries: RwSignal::new(Vec::new()),
            next_id: StoredValue::new(1),
        }
    }

    /// Loaded files, in load order.
    pub fn entries(&self) -> ReadSignal<Vec<LibraryEntry>> {
        self.entries.read_only()
    }

    /// Takes the entry `id` out of the library.
    pub fn remove(&self, id: u64) {
        self.entries
            .update(|entries| entries.retain(|entry| entry.id != id));
    }

    /// Adds a loaded artifact; valid ones start selected.
    pub fn add(&self, artifact: LoadedArtifact) {
        let id = self.next_id.get_value();
        self.next_id.set_value(id + 1);
        let selected = RwSignal::new(artifact.verdict() != Verdict::Invalid);
        self.entries.update(|entries| {
            entries.push(LibraryEntry {
                id,
                artifact: Arc::new(artifact),
                selected,
            })
        });
    }

    /// Puts `artifact` in the place of the entry named `name` (keeping its selection), or adds
    /// it when there is none.
    pub fn replace_named(&self, name: &str, artifact: LoadedArtifact) {
        let mut artifact = Some(artifact);
        self.entries.update(|entries| {
            if let Some(entry) = entries
                .iter_mut()
                .rev()
                .find(|entry| entry.artifact.file_name.text == name)
            {
                if let Some(artifact) = artifact.take() {
                    entry.artifact = Arc::new(artifact);
                }
            }
        });
        if let Some(artifact) = artifact {
            self.add(artifact);
        }
    }

    /// The selected, readable artifacts, in load order.
    pub fn selected(&self) -> Vec<Arc<LoadedArtifact>> {
        self.entries.with(|entries| {
            entries
                .iter()
                .filter(|entry| {
                    entry.selected.get() && entry.artifact.verdict() != Verdict::Invalid
                })
                .map(|entry| entry.artifact.clone())
                .collect()
        })
    }
}

impl Default for Library {
    fn default() -> Self {
        Self::new()
    }
}
