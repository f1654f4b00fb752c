//! The page's side of the handshake with a measurement worker, as a state machine
//! ([`WorkerSession`]): the worker loads and says [`Ready`](FromMeasurement::Ready), the page
//! then posts [`Start`](crate::core::live::ToMeasurement::Start); the worker reports progress a
//! few times a second and ends with `Finished` or `Failed`. Every input (a message, Cancel, the
//! worker's error event, a tick of the page's timer) goes in with the page's clock, and what
//! the page must do comes out as [`WorkerAction`]s; the web layer only posts, updates the
//! tally, terminates the worker and hands the [`WorkerEnd`] on.
//!
//! A session ends exactly once: after its [`WorkerAction::Finish`], every input does nothing.
//! A worker that never says it is ready ([`WORKER_START_TIMEOUT_MS`]) or falls silent while it
//! runs ([`WORKER_SILENCE_LIMIT_MS`]) ends the session instead of hanging the run. Cancel
//! before `Ready` ends it at once having sent nothing: the worker is never told to start.
//!
//! Pure: times are the page's clock in milliseconds, from the caller.

use crate::core::live::{FinishedRequest, FromMeasurement, LiveProgress};
use crate::core::schema::ArtifactV1;

/// How long a new measurement worker may take to load and say it is ready, ms.
pub const WORKER_START_TIMEOUT_MS: f64 = 30_000.0;

/// How long a running measurement worker may stay silent before the run is given up, ms: it
/// reports every 250 ms, so this is forty missed reports.
pub const WORKER_SILENCE_LIMIT_MS: f64 = 10_000.0;

/// How often the page calls [`WorkerSession::on_tick`], ms: the watchdogs' resolution.
pub const WORKER_TICK_MS: f64 = 1_000.0;

// A silence is noticed within a tenth of its limit.
const _: () = assert!(WORKER_TICK_MS <= WORKER_SILENCE_LIMIT_MS / 10.0);

/// What the page does with the worker after an input.
#[derive(Debug, PartialEq)]
pub enum WorkerAction {
    /// Post the run's `Start` message (the page holds its text: it carries the API key).
    PostStart,
    /// Post `Cancel`.
    PostCancel,
    /// Add what the worker reported to the page's tally.
    UpdateTally {
        /// Requests that ended since its last message.
        finished: Vec<FinishedRequest>,
        /// Its counters now.
        progress: LiveProgress,
    },
    /// The run has ended: its result. Comes once per session.
    Finish(WorkerEnd),
    /// Terminate the worker: its job is done, its memory and connections are freed.
    Terminate,
}

/// How a worker's run ended, as the page's state machine sees it (the web layer words it).
#[derive(Debug, PartialEq)]
pub enum WorkerEnd {
    /// The run finished and its artifact reads.
    Finished(Box<ArtifactV1>),
    /// The measuring thread said why it failed (its own words, which say what to do).
    Failed(String),
    /// The artifact text the worker sent does not read: why.
    UnreadableArtifact(String),
    /// A message from the worker does not read: why.
    UnreadableMessage(String),
    /// The worker's error event: its message, or what the page could tell.
    WorkerFailed(String),
    /// The worker did not say it was ready within `limit_s` seconds.
    StartTimedOut {
        /// [`WORKER_START_TIMEOUT_MS`] in seconds.
        limit_s: f64,
    },
    /// The running worker sent nothing for `silence_s` seconds.
    Silent {
        /// [`WORKER_SILENCE_LIMIT_MS`] in seconds.
        silence_s: f64,
        /// How many finished requests it had reported.
        reported: usize,
    },
    /// Cancel was pressed before the worker was ready: it was never told to start, so the run
    /// sent nothing.
    CancelledBeforeStart,
}

/// Where a session is.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Stage {
    /// The worker is loading; `Start` waits for its `Ready`.
    Starting,
    /// `Start` was posted; the worker runs.
    Running,
    /// The session finished; nothing more happens.
    Ended,
}

/// One measurement worker's run, from the page's side: see the module comment.
#[derive(Debug)]
pub struct WorkerSession {
    stage: Stage,
    /// When the worker was created, page ms.
    spawned_ms: f64,
    /// When the page last heard from the worker, page ms.
    last_heard_ms: f64,
    /// Finished requests the worker has reported.
    reported: usize,
}

impl WorkerSession {
    /// A session for a worker created at `now_ms`.
    pub fn new(now_ms: f64) -> Self {
        Self {
            stage: Stage::Starting,
            spawned_ms: now_ms,
            last_heard_ms: now_ms,
            reported: 0,
        }
    }

    /// Whether the session has ended (its [`WorkerAction::Finish`] came).
    pub fn is_ended(&self) -> bool {
        self.stage == Stage::Ended
    }

    /// A message from the worker at `now_ms`: the decoded message, or why it does not read.
    pub fn on_message(
        &mut self,
        message: Result<FromMeasurement, String>,
        now_ms: f64,
    ) -> Vec<WorkerAction> {
        if self.is_ended() {
            return Vec::new();
        }
        self.last_heard_ms = now_ms;
        match message {
            Ok(FromMeasurement::Ready) => {
                if self.stage == Stage::Starting {
                    self.stage = Stage::Running;
                    vec![WorkerAction::PostStart]
                } else {
                    // A second Ready: the run was started once, and is not started again.
                    Vec::new()
                }
            }
            Ok(FromMeasurement::Progress { progress, finished }) => {
                vec![self.tally(finished, progress)]
            }
            Ok(FromMeasurement::Finished {
                progress,
                finished,
                artifact_text,
            }) => {
                let update = self.tally(finished, progress);
                let end = match serde_json::from_str::<ArtifactV1>(&artifact_text) {
                    Ok(artifact) => WorkerEnd::Finished(Box::new(artifact)),
                    Err(error) => WorkerEnd::UnreadableArtifact(error.to_string()),
                };
                let mut actions = vec![update];
                actions.extend(self.end(end));
                actions
            }
            Ok(FromMeasurement::Failed {
                progress,
                finished,
                reason,
            }) => {
                let mut actions = vec![self.tally(finished, progress)];
                actions.extend(self.end(WorkerEnd::Failed(reason)));
                actions
            }
            Err(reason) => self.end(WorkerEnd::UnreadableMessage(reason)),
        }
    }

    /// Cancel was pressed. Before `Ready` the session ends at once and the worker, never told
    /// to start, is terminated (a `Cancel` posted to a loading worker reaches no listener);
    /// after it, `Cancel` is posted and the worker's own end follows.
    pub fn on_cancel(&mut self) -> Vec<WorkerAction> {
        match self.stage {
            Stage::Starting => self.end(WorkerEnd::CancelledBeforeStart),
            Stage::Running => vec![WorkerAction::PostCancel],
            Stage::Ended => Vec::new(),
        }
    }

    /// The worker's error event (or the page could not post to it): `detail` says what
    /// failed.
    pub fn on_worker_error(&mut self, detail: String) -> Vec<WorkerAction> {
        if self.is_ended() {
            return Vec::new();
        }
        self.end(WorkerEnd::WorkerFailed(detail))
    }

    /// The page's timer at `now_ms` (every [`WORKER_TICK_MS`]): the watchdogs. Until
    /// [`WORKER_START_TIMEOUT_MS`] after the worker was created, nothing happens; then a worker
    /// still not ready has timed out, and a running one silent for more than
    /// [`WORKER_SILENCE_LIMIT_MS`] is given up. The silence is only judged after that first
    /// grace period, so a worker busy planning a large run right after `Ready` has it too.
    pub fn on_tick(&mut self, now_ms: f64) -> Vec<WorkerAction> {
        if now_ms - self.spawned_ms < WORKER_START_TIMEOUT_MS {
            return Vec::new();
        }
        match self.stage {
            Stage::Starting => self.end(WorkerEnd::StartTimedOut {
                limit_s: WORKER_START_TIMEOUT_MS / 1000.0,
            }),
            Stage::Running if now_ms - self.last_heard_ms > WORKER_SILENCE_LIMIT_MS => {
                self.end(WorkerEnd::Silent {
                    silence_s: WORKER_SILENCE_LIMIT_MS / 1000.0,
                    reported: self.reported,
                })
            }
            Stage::Running | Stage::Ended => Vec::new(),
        }
    }

    fn tally(&mut self, finished: Vec<FinishedRequest>, progress: LiveProgress) -> WorkerAction {
        self.reported += finished.len();
        WorkerAction::UpdateTally { finished, progress }
    }

    /// The one end of the session: its result, then the worker goes.
    fn end(&mut self, end: WorkerEnd) -> Vec<WorkerAction> {
        self.stage = Stage::Ended;
        vec![WorkerAction::Finish(end), WorkerAction::Terminate]
    }
}

#[cfg(test)]
mod tests;
