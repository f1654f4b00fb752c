//! One validated request on its way out ([`Job`]) and the truth record it fills in
//! ([`Trace`]): shared by the request reader and the writers of both response shapes.

use std::sync::Arc;

use crate::contract::OutputPlan;
use crate::engine::Engine;
use crate::faults::FaultSet;
use crate::rng::SimRng;
use crate::shared::Shared;
use crate::truth::{Api, Outcome, SimClock, Stamp, TruthLog, TruthRecord, CONTENT_CAPTURE_CHARS};
use crate::wire::ChunkIdentity;

/// A validated request, ready to be paced and written.
pub(crate) struct Job {
    /// The endpoint, which decides the chunk shapes.
    pub(crate) api: Api,
    /// The request's number, also its place in the admission queue.
    pub(crate) number: u64,
    /// Headers every response to it carries (`x-sim-request-id`, `x-sim-fault`).
    pub(crate) response_headers: Vec<(String, String)>,
    pub(crate) identity: ChunkIdentity,
    pub(crate) served_model: String,
    pub(crate) stream: bool,
    pub(crate) include_usage: bool,
    pub(crate) faults: FaultSet,
    /// The prompt text: what the token estimate and the prefix cache see.
    pub(crate) prompt: String,
    pub(crate) prompt_tokens: u32,
    pub(crate) plan: OutputPlan,
    pub(crate) rng: SimRng,
}

/// The truth record being filled in; pushed to the log exactly once, by [`Trace::finish`] or,
/// if the handler is cancelled (server shutdown), by `Drop`.
pub(crate) struct Trace {
    pub(crate) record: TruthRecord,
    pushed: bool,
    log: Arc<TruthLog>,
    clock: SimClock,
    engine: Arc<Engine>,
}

impl Trace {
    pub(crate) fn new(shared: &Shared, request_id: String, port: u16, received: Stamp) -> Self {
        Self {
            record: TruthRecord::received(request_id, port, received),
            pushed: false,
            log: Arc::clone(&shared.truth),
            clock: shared.clock,
            engine: Arc::clone(&shared.engine),
        }
    }

    pub(crate) fn now(&self) -> Stamp {
        self.clock.now()
    }

    pub(crate) fn content_sent(&mut self, text: &str) {
        let record = &mut self.record;
        let room = CONTENT_CAPTURE_CHARS.saturating_sub(record.content_chars);
        record.content.extend(text.chars().take(room));
        record.content_chars += text.chars().count();
        record.content_tokens_sent += 1;
    }

    pub(crate) fn finish(mut self, outcome: Outcome, error: Option<String>) {
        self.record.outcome = outcome;
        if error.is_some() {
            self.record.error = error;
        }
        if self.record.times.last_byte_sent.is_none() && self.record.writes > 0 {
            self.record.times.last_byte_sent = Some(self.clock.now());
        }
        self.pushed = true;
        self.book();
        self.log.push(self.record.clone());
    }

    /// Adds what the request sent to the totals `/metrics` reports: its tokens, and the time
    /// from its receipt to its first token of either kind.
    fn book(&self) {
        let record = &self.record;
        let times = &record.times;
        let first = [
            times.first_reasoning_byte_sent,
            times.first_content_byte_sent,
        ]
        .into_iter()
        .flatten()
        .map(|stamp| stamp.monotonic_ms)
        .reduce(f64::min);
        let ttft_s = match (times.received, first) {
            (Some(received), Some(first)) => Some((first - received.monotonic_ms) / 1000.0),
            _ => None,
        };
        let generated = record
            .reasoning_tokens_sent
            .saturating_add(record.content_tokens_sent);
        self.engine.request_ended(generated, ttft_s);
    }
}

impl Drop for Trace {
    fn drop(&mut self) {
        if !self.pushed {
            self.record.outcome = Outcome::ServerShutdown;
            self.record.error = Some("the server shut down before the response finished".into());
            self.book();
            self.log.push(self.record.clone());
        }
    }
}
