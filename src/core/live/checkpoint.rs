//! A checkpoint of a run in progress (docs/guide/results.md, *Checkpoints*): the requests that have
//! ended so far, as the page holds them ([`FinishedRequest`]), written as an artifact the page
//! keeps in the browser every few seconds, so that a tab closed or crashed during a run leaves
//! its finished rows behind. When the run ends, its own artifact replaces the checkpoint.
//!
//! A checkpoint says truthfully that it is one: every request that had not ended when it was
//! saved is a failure of type `AbortError` that says so (as the requests a cancel stopped are),
//! so `completed` counts only what finished, the run is not performance-eligible and its
//! throughput is withheld; and `client.checkpoint` holds how many requests had ended and, when
//! the page saw the run fail, why.

use std::collections::BTreeSet;

use thiserror::Error;

use crate::core::artifact::build::{build_artifact, RunTiming};
use crate::core::live::{FinishedRequest, LiveProgress};
use crate::core::observe::conclude::RequestOutcome;
use crate::core::observe::failure::RequestError;
use crate::core::plan::RunPlan;
use crate::core::schema::client::{CheckpointBlock, ClientBlock, ClientSseCounts};
use crate::core::schema::rows::FailureRecord;
use crate::core::schema::ArtifactV1;

/// The `error_message` of every request a checkpoint saw unfinished.
pub const UNFINISHED_MESSAGE: &str = "not finished when the page saved this checkpoint of the \
     run: the run did not end on its page (the tab was closed, reloaded or crashed, or the \
     measurement failed), so this request has no result";

/// What the page knows when it saves a checkpoint.
pub struct CheckpointInput<'a> {
    /// The run's plan (its configuration is the run's).
    pub plan: &'a RunPlan,
    /// Every request that has ended so far, as the page received them.
    pub finished: &'a [FinishedRequest],
    /// The run's counters as last reported.
    pub progress: LiveProgress,
    /// When the checkpoint is saved, Unix epoch ms (the page's clock).
    pub saved_unix_ms: f64,
    /// The `client` block as the page can tell it (its browser, isolation and timer); its SSE
    /// counts are summed from the requests that ended.
    pub client: ClientBlock,
    /// Why the run stopped, when the page saw it fail; `None` while it measures.
    pub run_failed: Option<String>,
}

/// Why no checkpoint was made.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum CheckpointError {
    /// The measured run has not started (it warms up), or no request has ended yet.
    #[error("nothing of the run has ended yet")]
    NothingYet,
    /// The artifact could not be built from what has ended.
    #[error("the run so far could not be written as an artifact: {0}")]
    Artifact(String),
}

/// The artifact of the run so far: each request that ended, as the artifact counts it, and
/// every other planned request as a failure saying that it had not finished.
pub fn checkpoint_artifact(input: CheckpointInput<'_>) -> Result<ArtifactV1, CheckpointError> {
    let Some(started_unix_ms) = input.progress.run_started_unix_ms else {
        return Err(CheckpointError::NothingYet);
    };
    if input.finished.is_empty() {
        return Err(CheckpointError::NothingYet);
    }
    let plan = input.plan;
    let requests = plan.requests();
    let mut seen = BTreeSet::new();
    let mut outcomes: Vec<RequestOutcome> = Vec::with_capacity(requests as usize);
    for finished in input.finished {
        let outcome = finished.outcome();
        let index = outcome.request_index();
        // A request ends once; anything else (an index off the plan) is not the run's.
        if index < requests && seen.insert(index) {
            outcomes.push(outcome);
        }
    }
    let ended = seen.len() as u64;
    let unfinished = RequestError::new("AbortError", UNFINISHED_MESSAGE);
    for index in (0..requests).filter(|index| !seen.contains(index)) {
        let planned = plan
            .planned_context_tokens()
            .get(index as usize)
            .copied()
            .unwrap_or_default();
        outcomes.push(RequestOutcome::Failed(FailureRecord::request_error(
            index,
            planned,
            &unfinished,
            0.0,
        )));
    }
    // The run's clock runs from its start to the checkpoint; never backwards, whatever two
    // threads' clocks say.
    let saved_unix_ms = input.saved_unix_ms.max(started_unix_ms);
    let timing = RunTiming {
        started_at_unix_ns: (started_unix_ms * 1e6) as i64,
        finished_at_unix_ns: (saved_unix_ms * 1e6) as i64,
        wall_seconds: (saved_unix_ms - started_unix_ms) / 1000.0,
    };
    let client = ClientBlock {
        sse: ClientSseCounts::of_outcomes(&outcomes),
        ..input.client
    };
    let mut artifact = build_artifact(plan.config(), plan, outcomes, timing, Some(client))
        .map_err(|error| CheckpointError::Artifact(error.to_string()))?;
    if let Some(client) = artifact.client.as_mut() {
        client.checkpoint = Some(CheckpointBlock {
            finished_requests: ended,
            run_failed: input.run_failed,
        });
    }
    Ok(artifact)
}

#[cfg(test)]
mod tests;
