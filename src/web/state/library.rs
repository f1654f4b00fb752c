//! The library of loaded artifacts: every finished run and every file dropped on the page, in
//! load order, each with whether it is selected for the charts and the comparison, and the key
//! its files are kept under across reloads (`run::keep` keeps and restores them). The
//! components that list and load files are `ui::library`'s.

use std::sync::Arc;

use leptos::prelude::*;

use crate::core::read::opened::OpenedArtifact;
use crate::core::read::validate::report::Verdict;

/// One loaded file.
#[derive(Clone)]
pub struct LibraryEntry {
    /// Stable id for list keys.
    pub id: u64,
    /// What the core read from the file.
    pub artifact: Arc<OpenedArtifact>,
    /// Whether the user selected it for charts and comparison.
    pub selected: RwSignal<bool>,
    /// The key its files are kept under in the browser, once kept (several entries read from
    /// one batch of files share it).
    pub kept: RwSignal<Option<f64>>,
}

/// The library's state, provided through context.
#[derive(Clone, Copy)]
pub struct Library {
    entries: RwSignal<Vec<LibraryEntry>>,
    next_id: StoredValue<u64>,
    note: RwSignal<Option<String>>,
    restored: RwSignal<bool>,
    shared: RwSignal<Option<SharedRun>>,
}

/// What the link the page was opened with gave (docs/guide/results.md, *A link to a run*).
#[derive(Clone, Debug, PartialEq)]
pub enum SharedRun {
    /// The run it carries is in the library, shown read-only: the name of its file.
    Opened(String),
    /// It carries nothing strobe can show: why, and what to do.
    Refused(String),
}

impl Library {
    /// A new, empty library.
    pub fn new() -> Self {
        Self {
            entries: RwSignal::new(Vec::new()),
            next_id: StoredValue::new(1),
            note: RwSignal::new(None),
            restored: RwSignal::new(false),
            shared: RwSignal::new(None),
        }
    }

    /// Whether what was kept on an earlier visit has been read back (or could not be).
    pub fn restored(&self) -> ReadSignal<bool> {
        self.restored.read_only()
    }

    /// What was kept on an earlier visit has been read back (or could not be).
    pub fn set_restored(&self) {
        self.restored.set(true);
    }

    /// What keeping the library across reloads last ran into, if anything (what to do).
    pub fn note(&self) -> ReadSignal<Option<String>> {
        self.note.read_only()
    }

    /// Says what keeping the library ran into.
    pub fn set_note(&self, note: Option<String>) {
        self.note.set(note);
    }

    /// What the link the page was opened with gave, until the banner is closed.
    pub fn shared(&self) -> ReadSignal<Option<SharedRun>> {
        self.shared.read_only()
    }

    /// Says what a link gave (`None`: the banner is closed).
    pub fn set_shared(&self, shared: Option<SharedRun>) {
        self.shared.set(shared);
    }

    /// The entries read from the file named `name` holding `text` (a link's run that is already
    /// in the library, kept on an earlier visit).
    pub fn ids_of_file(&self, name: &str, text: &str) -> Vec<u64> {
        self.entries.with_untracked(|entries| {
            entries
                .iter()
                .filter(|entry| {
                    entry
                        .artifact
                        .source
                        .as_ref()
                        .is_some_and(|source| source.name == name && &*source.text == text)
                })
                .map(|entry| entry.id)
                .collect()
        })
    }

    /// Selects the entries `ids` for the charts, and no other.
    pub fn select_only(&self, ids: &[u64]) {
        self.entries.with_untracked(|entries| {
            for entry in entries {
                entry
                    .selected
                    .set(ids.contains(&entry.id) && entry.artifact.verdict() != Verdict::Invalid);
            }
        });
    }

    /// Loaded files, in load order.
    pub fn entries(&self) -> ReadSignal<Vec<LibraryEntry>> {
        self.entries.read_only()
    }

    /// Takes the entry `id` out of the library; the key its files were kept under when no
    /// other entry was read from them (they can be forgotten).
    pub fn remove(&self, id: u64) -> Option<f64> {
        let mut key = None;
        self.entries.update(|entries| {
            key = entries
                .iter()
                .find(|entry| entry.id == id)
                .and_then(|entry| entry.kept.get_untracked());
            entries.retain(|entry| entry.id != id);
            if let Some(kept) = key {
                if entries
                    .iter()
                    .any(|entry| entry.kept.get_untracked() == Some(kept))
                {
                    key = None;
                }
            }
        });
        key
    }

    /// Empties the library.
    pub fn clear(&self) {
        self.entries.set(Vec::new());
    }

    /// Adds a loaded artifact; valid ones start selected. Its id.
    pub fn add(&self, artifact: OpenedArtifact) -> u64 {
        let selected = artifact.verdict() != Verdict::Invalid;
        self.push(artifact, selected, None)
    }

    /// Adds the artifacts read back from kept files, each with its key and whether it starts
    /// selected, in one change of the library (the table is drawn once).
    pub fn add_all_kept(&self, read: Vec<(OpenedArtifact, f64, bool)>) {
        let first = self.next_id.get_value();
        self.next_id.set_value(first + read.len() as u64);
        self.entries.update(|entries| {
            for (offset, (artifact, key, selected)) in read.into_iter().enumerate() {
                let selected = selected && artifact.verdict() != Verdict::Invalid;
                entries.push(LibraryEntry {
                    id: first + offset as u64,
                    artifact: Arc::new(artifact),
                    selected: RwSignal::new(selected),
                    kept: RwSignal::new(Some(key)),
                });
            }
        });
    }

    fn push(&self, artifact: OpenedArtifact, selected: bool, kept: Option<f64>) -> u64 {
        let id = self.next_id.get_value();
        self.next_id.set_value(id + 1);
        self.entries.update(|entries| {
            entries.push(LibraryEntry {
                id,
                artifact: Arc::new(artifact),
                selected: RwSignal::new(selected),
                kept: RwSignal::new(kept),
            })
        });
        id
    }

    /// Records that the files of entries `ids` are kept under `key`.
    pub fn set_kept(&self, ids: &[u64], key: f64) {
        self.entries.with_untracked(|entries| {
            for entry in entries.iter().filter(|entry| ids.contains(&entry.id)) {
                entry.kept.set(Some(key));
            }
        });
    }

    /// The key the entry named `name` (the last of that name) is kept under.
    pub fn kept_key_of(&self, name: &str) -> Option<f64> {
        self.entries.with_untracked(|entries| {
            entries
                .iter()
                .rev()
                .find(|entry| entry.artifact.file_name.text == name)
                .and_then(|entry| entry.kept.get_untracked())
        })
    }

    /// Puts `artifact` in the place of the entry named `name` (keeping its selection), or adds
    /// it when there is none.
    pub fn replace_named(&self, name: &str, artifact: OpenedArtifact) {
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
    pub fn selected(&self) -> Vec<Arc<OpenedArtifact>> {
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
