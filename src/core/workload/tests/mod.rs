//! The workload reader's tests: each format on good input (`formats`), edge and hostile input
//! (`edges`), the summary sentence and the shipped samples (`summary`).

mod edges;
mod formats;
mod pieces;
mod summary;

use super::read::{read, ReadOptions};
use super::{SkipReason, Skipped, Turn, TurnInput, Workload, WorkloadError};
use crate::core::config::choices::WorkloadTurns;

/// Reads `text` with the default options (single-turn), expecting a workload.
fn first(text: &str) -> Workload {
    read(text.as_bytes(), Some("file"), &ReadOptions::default()).expect("a workload")
}

/// Reads `text` playing every turn, expecting a workload.
fn all(text: &str) -> Workload {
    let options = ReadOptions {
        turns: WorkloadTurns::All,
        ..ReadOptions::default()
    };
    read(text.as_bytes(), Some("file"), &options).expect("a workload")
}

/// Reads `text` with the default options, expecting an error.
fn refused(text: &[u8]) -> WorkloadError {
    read(text, None, &ReadOptions::default()).expect_err("refused")
}

/// The text each session's first turn sends (panics on other inputs).
fn prompts(workload: &Workload) -> Vec<&str> {
    workload
        .sessions
        .iter()
        .map(|session| text_of(&session.turns[0]))
        .collect()
}

/// A turn's text input.
fn text_of(turn: &Turn) -> &str {
    match &turn.input {
        TurnInput::Text(text) => text,
        other => panic!("not text: {other:?}"),
    }
}

/// The one skip entry for `reason`.
fn skipped(workload: &Workload, reason: SkipReason) -> &Skipped {
    workload
        .summary
        .skipped
        .iter()
        .find(|skipped| skipped.reason == reason)
        .unwrap_or_else(|| panic!("no {reason:?} in {:?}", workload.summary.skipped))
}
