//! The stage before the wire ([`before_the_wire`]), the first of the scheduler's: Resource
//! Timing's buffer sized for the run, every request's body built ahead, and the rehearsal and
//! dry run that run the measured code with nothing on the wire, so the browser has compiled
//! it, optimized, before anything is timed (docs/design/measurement.md, *Compiled before it is
//! timed*). The page's side of the reports is rehearsed here too ([`rehearse_live_updates`]).

use std::rc::Rc;

use wasm_bindgen::JsValue;

use crate::core::live::{
    decode_message, encode_message, FinishedRequest, FromMeasurement, LiveProgress, LiveTally,
};
use crate::core::observe::accumulate::StreamResult;
use crate::core::observe::conclude::{conclude_request, RequestPlanFacts};
use crate::core::prompt::PromptSpec;

use crate::web::measure::body::planned_body;
use crate::web::measure::live_run::{LiveRun, RunSetup};
use crate::web::measure::request::rehearsal_content;
use crate::web::measure::resource_timing::prepare_resource_timing;
use crate::web::measure::slots::run_slots;
use crate::web::measure::transport::rehearse_reading;

/// What the stage before the wire hands the measured run.
pub(super) struct Prepared {
    /// The synthetic prompts' source, shared by every request that builds its body when sent.
    pub prompt_spec: Rc<PromptSpec>,
    /// How many requests the dry run ran (the artifact's `client.dry_run_requests`).
    pub dry_run_requests: u64,
}

/// Everything before the first request goes on the wire, warm-up included: Resource Timing's
/// buffer holds every request of the run, the bodies are built ([`prepare_bodies`]), the read
/// path and conclusions rehearsed ([`rehearse_request`]) and the scheduler run dry
/// ([`dry_run`]).
pub(super) async fn before_the_wire(
    live: &LiveRun,
    setup: &Rc<RunSetup>,
    urls: &[String],
) -> Prepared {
    prepare_resource_timing(setup.plan.requests() + setup.plan.most_warmup_requests());
    let prompt_spec = Rc::new(PromptSpec::for_plan(&setup.plan));
    prepare_bodies(live, setup, &prompt_spec);
    rehearse_request(setup);
    let dry_run_requests = dry_run(live, setup, &prompt_spec, urls).await;
    Prepared {
        prompt_spec,
        dry_run_requests,
    }
}

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
fn rehearse_request(setup: &RunSetup) {
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
const REHEARSAL_CONCLUSIONS: usize = 512;
/// Rows per rehearsed progress message: about what a report carries at concurrency 64.
const REHEARSAL_ROWS_PER_REPORT: usize = 16;
/// How many progress messages [`rehearse_live_updates`] decodes and tallies.
const REHEARSAL_REPORTS: usize = 128;

/// A rehearsed request: the result of reading a synthetic stream, and its plan.
struct RehearsalRow {
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
fn rehearsal_row(setup: &RunSetup) -> Option<RehearsalRow> {
    let facts = setup.plan_facts(0, 0.0);
    let result = rehearse_reading(&rehearsal_content(setup, &facts))?;
    Some(RehearsalRow { facts, result })
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
const PREPARED_BODIES_BUDGET_BYTES: usize = 64 * 1024 * 1024;

/// Builds the requests' bodies (prompt and JSON) in index order before anything is sent, up to
/// [`PREPARED_BODIES_BUDGET_BYTES`]. Built at send time, a body is thread time between one
/// stream's end and the next request's `fetch()`, when reads of the other streams are due; with
/// every body ready, sending is the `fetch()` call alone (docs/design/measurement.md,
/// *Sending*). It also compiles the prompt and body code before anything is timed. A prompt
/// that cannot be built is left to its request, which fails with the reason.
fn prepare_bodies(live: &LiveRun, setup: &RunSetup, prompt_spec: &PromptSpec) {
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

/// How many requests [`dry_run`] runs in all, and at most per round.
const DRY_RUN_REQUESTS: u64 = 384;
const DRY_RUN_ROUND: u64 = 64;

/// Runs the scheduler dry before anything goes on the wire: [`DRY_RUN_REQUESTS`] requests of
/// the plan (in rounds of at most [`DRY_RUN_ROUND`]) through the very code of the measured
/// run, its slots, sending turns and yields, the transport's send and read path and the
/// conclusion into rows, with each request answered by a synthetic stream
/// ([`synthetic_stream`]) instead of being sent. Nothing it makes is kept.
///
/// Why: the browser optimizes a wasm function only after it has run enough, on a background
/// thread, and the measured run's own request path runs nowhere before the run (the warm-up's
/// requests take another path); without it, the largest optimizing compile came during the
/// first wave (docs/design/measurement.md, *Compiled before it is timed*).
/// [`rehearse_request`] covers the reads and conclusions, this the rest. Stops early when the
/// run is cancelled. Returns how many requests it ran.
async fn dry_run(
    live: &LiveRun,
    setup: &Rc<RunSetup>,
    prompt_spec: &Rc<PromptSpec>,
    urls: &[String],
) -> u64 {
    let round = setup.plan.requests().clamp(1, DRY_RUN_ROUND);
    let mut done = 0;
    while done < DRY_RUN_REQUESTS && !live.cancelled.get() {
        let dry = LiveRun::new(live.clock.clone(), setup, round, true);
        run_slots(&dry, setup, prompt_spec, urls).await;
        done += dry.outcomes.borrow().len() as u64;
    }
    done
}
