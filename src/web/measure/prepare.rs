//! What runs before the first measured request goes out: every request's body built ahead, and
//! the rehearsal and dry run that run the measured code with nothing on the wire, so the
//! browser has compiled it, optimized, before anything is timed
//! (docs/design/measurement.md, *Compiled before it is timed*).

use wasm_bindgen::JsValue;

use crate::core::live::{
    decode_message, encode_message, FinishedRequest, FromMeasurement, LiveProgress, LiveTally,
};
use crate::core::observe::accumulate::StreamResult;
use crate::core::observe::conclude::{conclude_request, RequestPlanFacts};
use crate::core::prompt::session::replies_known_ahead;
use crate::core::prompt::workload::workload_request_body;
use crate::core::prompt::{request_body, PromptSpec};

use crate::web::measure::live_run::{LiveRun, RunSetup};
use crate::web::measure::transport::rehearse_reading;

/// Runs, with nothing sent, the code a measured request runs after it is sent (its prompt and
/// body are built ahead for every request by [`prepare_bodies`]): the read path
/// ([`rehearse_reading`]) on a stream that answers as asked (the canary marker, then the
/// requested words), then [`REHEARSAL_CONCLUSIONS`] conclusions into rows and the progress
/// messages that carry them to the page, [`REHEARSAL_ROWS_PER_REPORT`] rows each.
///
/// Why: the browser compiles wasm lazily, a function at its first call, and again, optimized,
/// on a background thread once it has run enough; left to the measured run, those compiles
/// happen during it, on the cores the network path and the server share
/// (docs/design/measurement.md, *Compiled before it is timed*). Rehearsed here, the request
/// path runs optimized before anything goes on the wire. Nothing it makes is kept: no row, no
/// state of the run. [`rehearse_live_updates`] does the same for the page's side of the
/// reports.
pub(super) fn rehearse_request(setup: &RunSetup) {
    let Some(sample) = rehearsal_row(setup) else {
        return;
    };
    let mut finished = Vec::with_capacity(REHEARSAL_ROWS_PER_REPORT);
    for _ in 0..REHEARSAL_CONCLUSIONS {
        finished.push(std::hint::black_box(sample.conclude()));
        if finished.len() == REHEARSAL_ROWS_PER_REPORT {
            let message = FromMeasurement::Progress {
                progress: LiveProgress::default(),
                finished: std::mem::take(&mut finished),
            };
            std::hint::black_box(encode_message(&message).ok());
        }
    }
}

/// How many conclusions [`rehearse_request`] runs (with [`dry_run`]'s, enough for the browser
/// to optimize the functions a request's end runs: see there).
pub(super) const REHEARSAL_CONCLUSIONS: usize = 512;
/// Rows per rehearsed progress message: about what a report carries at concurrency 64.
pub(super) const REHEARSAL_ROWS_PER_REPORT: usize = 16;
/// How many progress messages [`rehearse_live_updates`] decodes and tallies.
pub(super) const REHEARSAL_REPORTS: usize = 128;

/// A rehearsed request: the result of reading a synthetic stream, and its plan.
pub(super) struct RehearsalRow {
    facts: RequestPlanFacts,
    result: StreamResult,
}

impl RehearsalRow {
    /// The row (or failure) the request concludes into, as the page is sent it.
    fn conclude(&self) -> FinishedRequest {
        let outcome = conclude_request(&self.facts, 0.0, Ok(self.result.clone()), 1.0);
        FinishedRequest::from(&outcome)
    }
}

/// A request read through the read path (none when the browser lacks what the rehearsal
/// needs).
pub(super) fn rehearsal_row(setup: &RunSetup) -> Option<RehearsalRow> {
    let facts = setup.plan_facts(0, 0.0);
    let result = rehearse_reading(&rehearsal_content(setup, &facts))?;
    Some(RehearsalRow { facts, result })
}

/// What a rehearsed request's stream answers: the canary marker it is asked for, if any, then
/// the requested words (at most [`REHEARSAL_MOST_WORDS`]: a run asking for more rehearses its
/// conclusion on a short answer, which fails the word count; the code is the same).
pub(super) fn rehearsal_content(setup: &RunSetup, facts: &RequestPlanFacts) -> Vec<String> {
    let mut content: Vec<String> = facts.expected_marker.iter().cloned().collect();
    let words = setup.config.response_words.clamp(1, REHEARSAL_MOST_WORDS) as usize;
    content.extend(std::iter::repeat_n(" code".to_string(), words));
    content
}

/// The page's side of a run's reports, rehearsed before the run starts (on the page, whichever
/// thread measures): [`REHEARSAL_REPORTS`] progress messages of synthetic rows decoded and
/// added to a throw-away tally, whose running numbers are computed as the page shows them.
/// The page's thread and the measuring thread share one pool of compiler threads and two
/// cores here: a page function first optimized during the run takes a core from the reads
/// being timed, as the measuring thread's would (see [`rehearse_request`]).
pub fn rehearse_live_updates(setup: &RunSetup, now_unix_ms: f64) {
    let Some(sample) = rehearsal_row(setup) else {
        return;
    };
    let finished = (0..REHEARSAL_ROWS_PER_REPORT)
        .map(|_| sample.conclude())
        .collect();
    let message = FromMeasurement::Progress {
        progress: LiveProgress::default(),
        finished,
    };
    let Ok(text) = encode_message(&message) else {
        return;
    };
    let mut tally = LiveTally::new(setup.plan.requests());
    for report in 0..REHEARSAL_REPORTS {
        if let Ok(FromMeasurement::Progress { progress, finished }) = decode_message(&text) {
            tally.update(finished, progress);
        }
        std::hint::black_box(tally.snapshot(now_unix_ms));
        if report % 8 == 7 {
            // Keep the tally small: the snapshot's cost grows with its rows.
            tally = LiveTally::new(setup.plan.requests());
        }
    }
}

/// The most bytes of request bodies [`prepare_bodies`] builds ahead (the rest are built when
/// sent): 1,000 requests of a 1,024-token context take about 3 MB.
pub(super) const PREPARED_BODIES_BUDGET_BYTES: usize = 64 * 1024 * 1024;

/// Builds the requests' bodies (prompt and JSON) in index order before anything is sent, up to
/// [`PREPARED_BODIES_BUDGET_BYTES`]. Built at send time, a body is thread time between one
/// stream's end and the next request's `fetch()`, when reads of the other streams are due; with
/// every body ready, sending is the `fetch()` call alone (docs/design/measurement.md,
/// *Sending*). It also compiles the prompt and body code before anything is timed. A prompt
/// that cannot be built is left to its request, which fails with the reason.
pub(super) fn prepare_bodies(live: &LiveRun, setup: &RunSetup, prompt_spec: &PromptSpec) {
    let mut prepared = live.prepared_bodies.borrow_mut();
    let mut bytes = 0;
    for index in 0..setup.plan.requests() {
        let Ok(body) = planned_body(setup, prompt_spec, index) else {
            continue;
        };
        bytes += body.len();
        if bytes > PREPARED_BODIES_BUDGET_BYTES {
            break;
        }
        prepared.insert(index, JsValue::from_str(&body));
    }
}

/// Request `index`'s body: its workload record's, or its synthetic prompt's. The error is the
/// request's failure (the reason its prompt or body cannot be built).
pub(super) fn planned_body(
    setup: &RunSetup,
    prompt_spec: &PromptSpec,
    index: u64,
) -> Result<String, String> {
    if setup.plan.workload().is_some() {
        // A session's later turns carry the server's replies: those are built when sent.
        let replies = replies_known_ahead(&setup.plan, index)
            .ok_or_else(|| format!("request {index} needs the replies of its session's turns"))?;
        return workload_request_body(&setup.plan, index, &replies)
            .map_err(|error| error.to_string());
    }
    let budget = setup.plan.prompt_budget_tokens(index as usize);
    prompt_spec
        .build(index as usize, budget)
        .map(|prompt| request_body(&setup.config, &prompt))
        .map_err(|error| error.to_string())
}

/// The most words a rehearsed stream answers with (a run asking for more rehearses its
/// conclusion on a short answer, which fails the word count: the code is the same).
pub(super) const REHEARSAL_MOST_WORDS: u64 = 256;
