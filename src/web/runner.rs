//! The scheduler: primes the connections with an unmeasured warm-up, keeps exactly
//! `concurrency` requests in flight until the plan is done or the user cancels (slot `k`
//! sending to endpoint `k mod n` of the endpoint pool), turns every request into a row or a
//! classified failure, and finally adds what the browser's Resource Timing says about each
//! request's transport to its row.
//!
//! It runs on whichever thread measures, the measurement worker or the page, and renders
//! nothing: the page reads [`LiveRun::progress`] and [`LiveRun::finished_since`] a few times a
//! second (directly, or through the worker's messages), so the UI can never slow a read
//! callback down by more than that copy.

use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;
use std::task::{Poll, Waker};

use futures::future::join_all;
use wasm_bindgen::JsValue;
use wasm_bindgen_futures::spawn_local;

use crate::core::artifact::build::{build_artifact, RunTiming};
use crate::core::artifact::schema::client::{
    ClientBlock, ClientSseCounts, ClientTransport, ClientWarmup, WarmupConnections, WarmupError,
};
use crate::core::artifact::schema::rows::FailureRecord;
use crate::core::artifact::schema::ArtifactV1;
use crate::core::config::choices::MeasurementThread;
use crate::core::config::settings::{RunConfig, WARMUP_CHECK_ROUNDS};
use crate::core::live::{
    decode_message, encode_message, FinishedRequest, FromMeasurement, LiveProgress, LiveTally,
};
use crate::core::observe::accumulate::StreamResult;
use crate::core::observe::conclude::{conclude_request, RequestOutcome, RequestPlanFacts};
use crate::core::observe::failure::RequestError;
use crate::core::observe::transport::{
    match_resource_timings, ResourceTimingEntry, TransportFacts,
};
use crate::core::plan::RunPlan;
use crate::core::prompt::{
    request_body, warmup_check_request_body, warmup_request_body, PromptSpec,
};

use super::clock::{
    cross_origin_isolated, protocols_seen, resource_timing_entries, user_agent, Clock,
};
use super::scope;
use super::timers::{sleep_ms, yield_to_event_loop};
use super::transport::{
    rehearse_reading, stream_chat, synthetic_stream, AbortCause, ChatRequest, RequestControl,
    RequestHeaders,
};

/// How often, and how long apart, the end of a run looks again for Resource Timing entries
/// still missing: the browser adds an entry when the response ends, which can be a moment
/// after the last read of its stream.
const ENTRY_WAIT_ROUNDS: u32 = 10;
const ENTRY_WAIT_STEP_MS: f64 = 20.0;

/// How often the run's [`watchdog`] looks for requests that fell idle past the timeout.
const WATCHDOG_TICK_MS: f64 = 250.0;

/// What a run needs, fixed before the first request.
pub struct RunSetup {
    /// The validated configuration.
    pub config: RunConfig,
    /// The request plan derived from it.
    pub plan: RunPlan,
    /// The API key, if any: sent as a header, never stored in the artifact.
    pub api_key: Option<String>,
}

impl RunSetup {
    /// What the core needs to know of request `index`'s plan to conclude it into a row.
    fn plan_facts(&self, index: u64, run_started_ms: f64) -> RequestPlanFacts {
        RequestPlanFacts {
            request_index: index,
            planned_context_tokens: planned_context(&self.plan, index),
            expected_marker: self
                .config
                .request_canaries
                .then(|| self.plan.marker(index as usize)),
            response_words: self.config.response_words,
            policy: self.config.controlled_output_policy,
            run_started_ms,
        }
    }
}

/// A run in progress, shared between the slot tasks, the Cancel button and the page.
pub struct LiveRun {
    clock: Clock,
    /// When the measured run started: read again after the warm-up, so that the run's wall
    /// time, throughput and every row's `started_at_ms` leave the warm-up out.
    run_started_ms: Cell<f64>,
    warming_up: Cell<bool>,
    requests: u64,
    next_index: Cell<u64>,
    in_flight: Cell<u64>,
    /// Measured requests in flight per endpoint (each endpoint is an origin of its own), and
    /// the most any endpoint ever had: what decides whether the browser can have queued them.
    in_flight_per_endpoint: RefCell<Vec<u64>>,
    max_in_flight_per_endpoint: Cell<u64>,
    cancelled: Cell<bool>,
    outcomes: RefCell<Vec<RequestOutcome>>,
    controls: RefCell<BTreeMap<u64, Rc<RequestControl>>>,
    warmup_controls: RefCell<Vec<Rc<RequestControl>>>,
    /// One slot at a time takes its turn to send, first come first served (see [`run_slot`]).
    sending_turns: SendingTurns,
    /// Request bodies built before anything was sent, as JavaScript strings, by request index
    /// (see [`prepare_bodies`]); a request not in it builds its own.
    prepared_bodies: RefCell<BTreeMap<u64, JsValue>>,
    /// The headers every request sends, made once.
    headers: RequestHeaders,
    /// A dry run (see [`dry_run`]): requests are answered by synthetic streams, nothing is
    /// sent.
    dry_run: bool,
    /// Which endpoint each measured request went to, and when its `fetch()` was called: the
    /// key that pairs it with the browser's Resource Timing entry for that endpoint's URL.
    sent: RefCell<BTreeMap<u64, (usize, f64)>>,
    finished_ms: Cell<Option<f64>>,
}

impl LiveRun {
    /// Cancels the run: no new request starts, and every request in flight is aborted. Rows of
    /// requests that already finished are kept.
    pub fn cancel(&self) {
        self.cancelled.set(true);
        // Nothing more is sent: the bodies built ahead are not needed.
        self.prepared_bodies.borrow_mut().clear();
        for control in self.controls.borrow().values() {
            control.abort(AbortCause::Cancelled);
        }
        for control in self.warmup_controls.borrow().iter() {
            control.abort(AbortCause::Cancelled);
        }
    }

    /// The requests that ended after the first `already_seen`, in the order they ended.
    pub fn finished_since(&self, already_seen: usize) -> Vec<FinishedRequest> {
        self.outcomes
            .borrow()
            .iter()
            .skip(already_seen)
            .map(FinishedRequest::from)
            .collect()
    }

    /// The counters now, with times as Unix epoch ms.
    pub fn progress(&self) -> LiveProgress {
        let warming_up = self.warming_up.get();
        LiveProgress {
            in_flight: self.in_flight.get(),
            warming_up,
            cancelled: self.cancelled.get(),
            run_started_unix_ms: (!warming_up)
                .then(|| self.clock.unix_ms_at(self.run_started_ms.get())),
            finished_unix_ms: self
                .finished_ms
                .get()
                .map(|finished| self.clock.unix_ms_at(finished)),
        }
    }

    fn take_index(&self) -> Option<u64> {
        let index = self.next_index.get();
        (index < self.requests).then(|| {
            self.next_index.set(index + 1);
            index
        })
    }

    fn request_sent(&self, endpoint: usize) {
        self.in_flight.set(self.in_flight.get() + 1);
        let mut per_endpoint = self.in_flight_per_endpoint.borrow_mut();
        if let Some(count) = per_endpoint.get_mut(endpoint) {
            *count += 1;
            self.max_in_flight_per_endpoint
                .set(self.max_in_flight_per_endpoint.get().max(*count));
        }
    }

    fn request_ended(&self, endpoint: usize) {
        self.in_flight.set(self.in_flight.get().saturating_sub(1));
        if let Some(count) = self.in_flight_per_endpoint.borrow_mut().get_mut(endpoint) {
            *count = count.saturating_sub(1);
        }
    }
}

/// Prepares a run; call [`execute`] to start it.
pub fn start(clock: Clock, setup: &RunSetup) -> Rc<LiveRun> {
    LiveRun::new(clock, setup, setup.plan.requests(), false)
}

impl LiveRun {
    fn new(clock: Clock, setup: &RunSetup, requests: u64, dry_run: bool) -> Rc<Self> {
        // Provisional: `execute` reads the start again when the measured requests begin.
        let run_started_ms = clock.now_ms();
        Rc::new(Self {
            clock,
            run_started_ms: Cell::new(run_started_ms),
            warming_up: Cell::new(setup.plan.warmup_requests() > 0),
            requests,
            next_index: Cell::new(0),
            in_flight: Cell::new(0),
            in_flight_per_endpoint: RefCell::new(vec![0; setup.plan.endpoint_count()]),
            max_in_flight_per_endpoint: Cell::new(0),
            cancelled: Cell::new(false),
            outcomes: RefCell::new(Vec::new()),
            controls: RefCell::new(BTreeMap::new()),
            warmup_controls: RefCell::new(Vec::new()),
            sending_turns: SendingTurns::default(),
            prepared_bodies: RefCell::new(BTreeMap::new()),
            headers: RequestHeaders::new(setup.api_key.as_deref()),
            dry_run,
            sent: RefCell::new(BTreeMap::new()),
            finished_ms: Cell::new(None),
        })
    }
}

/// Warms the connections up (unless the user turned that off), runs every planned request with
/// `concurrency` slots, and builds the artifact. A failed warm-up ends the run before any
/// measured request, with the reason.
pub async fn execute(live: Rc<LiveRun>, setup: Rc<RunSetup>) -> Result<ArtifactV1, String> {
    let clock = live.clock.clone();
    spawn_local(watchdog(live.clone(), setup.config.timeout_s * 1000.0));
    let timer_resolution_ms = clock.measure_resolution_ms();
    let urls = setup.config.chat_completions_urls();
    prepare_resource_timing(setup.plan.requests() + setup.plan.most_warmup_requests());
    let prompt_spec = Rc::new(PromptSpec::for_plan(&setup.plan));
    prepare_bodies(&live, &setup, &prompt_spec);
    rehearse_request(&setup);
    let dry_run_requests = dry_run(&live, &setup, &prompt_spec, &urls).await;
    let warmup = if setup.plan.warmup_requests() > 0 {
        let warmup = warm_up(&live, &setup, &urls).await;
        live.warming_up.set(false);
        if let Err(error) = &warmup {
            live.finished_ms.set(Some(clock.now_ms()));
            return Err(error.to_string());
        }
        warmup.ok()
    } else {
        None
    };

    // The measured run starts here, after the warm-up: its wall time and throughput, and every
    // row's `started_at_ms`, count from this reading.
    let run_started_ms = clock.now_ms();
    live.run_started_ms.set(run_started_ms);
    let started_unix_ns = clock.unix_ns_at(run_started_ms);
    run_slots(&live, &setup, &prompt_spec, &urls).await;
    let finished_ms = clock.now_ms();
    live.finished_ms.set(Some(finished_ms));
    let wall_seconds = (finished_ms - run_started_ms) / 1000.0;
    let finished_unix_ns = clock.unix_ns_at(finished_ms);

    let mut outcomes = live.outcomes.borrow().clone();
    let sent = live.sent.borrow().clone();
    account_transport(&mut outcomes, &sent, &urls).await;
    let protocols = setup
        .config
        .endpoints()
        .into_iter()
        .flat_map(protocols_seen)
        .collect();
    let transport = ClientTransport::observed(
        protocols,
        setup.plan.endpoint_count() as u64,
        live.max_in_flight_per_endpoint.get(),
    );
    let thread = if scope::in_worker() {
        MeasurementThread::Worker
    } else {
        MeasurementThread::Main
    };
    let client = ClientBlock::strobe(
        user_agent(),
        cross_origin_isolated(),
        timer_resolution_ms,
        transport,
        ClientSseCounts::of_outcomes(&outcomes),
    )
    .with_warmup(warmup)
    .with_measurement_thread(thread)
    .with_live_view(setup.config.client.live_view)
    .with_dry_run(dry_run_requests);
    let timing = RunTiming {
        started_at_unix_ns: started_unix_ns,
        finished_at_unix_ns: finished_unix_ns,
        wall_seconds,
    };
    build_artifact(&setup.config, &setup.plan, outcomes, timing, Some(client))
        .map_err(|err| format!("the run finished but its artifact could not be built: {err}"))
}

/// Runs, with nothing sent, the code a measured request runs after it is sent (its prompt and
/// body are built ahead for every request by [`prepare_bodies`]): the read path
/// ([`rehearse_reading`]) on a stream that answers as asked (the canary marker, then the
/// requested words), then [`REHEARSAL_CONCLUSIONS`] conclusions into rows and the progress
/// messages that carry them to the page, [`REHEARSAL_ROWS_PER_REPORT`] rows each.
///
/// The browser compiles wasm lazily, a function at its first call (on the calling thread), and
/// compiles it again, optimized, once it has run enough: on a background thread, taking from
/// 1 to 30 ms of a core. Left to the measured run, those optimizing compiles came during it,
/// on the cores the browser's network service, the server and the measuring thread share: a
/// trace of a concurrency-16 run showed about 80 ms of them inside the measured part, the
/// largest (13, 13 and 31 ms) when the first requests ended and the first progress reports
/// went out. With the read path alone rehearsed, the first wave paid for compiling the
/// request path inside its timing; with a single conclusion rehearsed, the steady state paid
/// for optimizing it. Rehearsed here, everything runs optimized before anything goes on the
/// wire. Nothing it makes is kept: no row, no state of the run. [`rehearse_live_updates`]
/// does the same for the page's side of the reports.
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

/// What a rehearsed request's stream answers: the canary marker it is asked for, if any, then
/// the requested words (at most [`REHEARSAL_MOST_WORDS`]: a run asking for more rehearses its
/// conclusion on a short answer, which fails the word count; the code is the same).
fn rehearsal_content(setup: &RunSetup, facts: &RequestPlanFacts) -> Vec<String> {
    let mut content: Vec<String> = facts.expected_marker.iter().cloned().collect();
    let words = setup.config.response_words.clamp(1, REHEARSAL_MOST_WORDS) as usize;
    content.extend(std::iter::repeat_n(" code".to_string(), words));
    content
}

/// How many requests [`dry_run`] runs in all, and at most per round.
const DRY_RUN_REQUESTS: u64 = 384;
const DRY_RUN_ROUND: u64 = 64;
/// The body of a dry run's requests, which are never sent.
const DRY_RUN_BODY: &str = "{}";

/// Runs the scheduler dry before anything goes on the wire: [`DRY_RUN_REQUESTS`] requests of
/// the plan (in rounds of at most [`DRY_RUN_ROUND`]) through the very code of the measured
/// run, its slots, sending turns and yields, the transport's send and read path and the
/// conclusion into rows, with each request answered by a synthetic stream
/// ([`synthetic_stream`]) instead of being sent. Nothing it makes is kept.
///
/// Why: the browser optimizes a wasm function only after it has run enough, then compiles it
/// on a background thread for 1–50 ms, and the measured run's own request path runs nowhere
/// before the run (the warm-up's requests take another path). Without it, a trace of a
/// concurrency-16 run showed the largest optimizing compile (about 50 ms) starting 20 ms into
/// the first wave, on the two cores the network service, the server and the measuring thread
/// share; [`rehearse_request`] covers the reads and conclusions, this the rest. Stops early
/// when the run is cancelled. Returns how many requests it ran.
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
/// every body ready, sending is the `fetch()` call alone. Measured against the build before
/// (interleaved, quiet rounds): TTFO p95 lower in 7 of 9 rounds at c = 6 and at c = 16. It
/// also compiles the prompt and body code before anything is timed. A prompt that cannot be built is left to its request, which fails with the reason.
fn prepare_bodies(live: &LiveRun, setup: &RunSetup, prompt_spec: &PromptSpec) {
    let mut prepared = live.prepared_bodies.borrow_mut();
    let mut bytes = 0;
    for index in 0..setup.plan.requests() {
        let tokens = planned_context(&setup.plan, index);
        let Ok(prompt) = prompt_spec.build(index as usize, tokens) else {
            continue;
        };
        let body = request_body(&setup.config, &prompt);
        bytes += body.len();
        if bytes > PREPARED_BODIES_BUDGET_BYTES {
            break;
        }
        prepared.insert(index, JsValue::from_str(&body));
    }
}

/// The most words a rehearsed stream answers with (a run asking for more rehearses its
/// conclusion on a short answer, which fails the word count: the code is the same).
const REHEARSAL_MOST_WORDS: u64 = 256;

/// Warms the connections up: a priming round, then check rounds until one shows the
/// connections open (see [`WARMUP_CHECK_ROUNDS`] and [`WarmupConnections::of_round`]). Stops
/// at the first failed or cancelled round.
///
/// The priming round sends every endpoint [`RunPlan::warmup_requests_per_endpoint`] requests
/// (two per connection its slots can use, `max_tokens: 1`) at once: the browser opens a
/// connection for every one it cannot serve from its idle pool, up to its per-host limit, and
/// the first CORS preflight to each origin fills the preflight cache for the measured
/// requests' URL and headers. A one-token answer can end before a connection opened for
/// another request is up, and the browser then drops that connection, so each check round
/// sends one longer request per connection ([`RunPlan::warmup_check_requests_per_endpoint`],
/// [`WARMUP_CHECK_MAX_TOKENS`](crate::core::prompt::WARMUP_CHECK_MAX_TOKENS) tokens) and asks Resource Timing whether they all went out
/// together on connections that were already open.
async fn warm_up(
    live: &LiveRun,
    setup: &RunSetup,
    urls: &[String],
) -> Result<ClientWarmup, WarmupError> {
    let clock = &live.clock;
    let started_ms = clock.now_ms();
    let priming_body = JsValue::from_str(&warmup_request_body(&setup.config));
    let priming = setup.plan.warmup_requests_per_endpoint();
    let mut round = warm_up_round(live, setup, urls, &priming, &priming_body).await;
    let mut requests = round.sent.len() as u64;
    let mut errors = std::mem::take(&mut round.errors);
    let mut check_rounds = 0;
    let mut connections = WarmupConnections::Unknown;
    let check_body = JsValue::from_str(&warmup_check_request_body(&setup.config));
    let check = setup.plan.warmup_check_requests_per_endpoint();
    while errors.is_empty() && !live.cancelled.get() && check_rounds < WARMUP_CHECK_ROUNDS {
        round = warm_up_round(live, setup, urls, &check, &check_body).await;
        check_rounds += 1;
        requests += round.sent.len() as u64;
        errors = std::mem::take(&mut round.errors);
        if !errors.is_empty() || live.cancelled.get() {
            break;
        }
        connections = round.connections(urls).await;
        if !connections.worth_another_round() {
            break;
        }
    }
    let duration_ms = clock.now_ms() - started_ms;
    live.warmup_controls.borrow_mut().clear();
    if live.cancelled.get() {
        return Err(WarmupError::Cancelled);
    }
    WarmupError::check(requests, duration_ms, errors)
        .map(|warmup| warmup.with_check(check_rounds, connections))
}

/// What one warm-up round sent and which of its requests failed.
struct WarmupRound {
    /// Per request: its endpoint (index into the run's URLs) and when `fetch()` was called.
    sent: Vec<(usize, f64)>,
    /// The failures, each naming its endpoint when the run has several.
    errors: Vec<RequestError>,
}

impl WarmupRound {
    /// The round's verdict on the connections, from the browser's Resource Timing entries of
    /// its requests.
    async fn connections(&self, urls: &[String]) -> WarmupConnections {
        let sent: BTreeMap<u64, (usize, f64)> = (0..).zip(self.sent.iter().copied()).collect();
        let everyone: BTreeSet<u64> = sent.keys().copied().collect();
        let entries = resource_entries(&sent, urls, &everyone).await;
        let by_endpoint: Vec<Vec<Option<&ResourceTimingEntry>>> = (0..urls.len())
            .map(|endpoint| {
                sent.iter()
                    .filter(|(_, (to, _))| *to == endpoint)
                    .map(|(index, _)| entries.get(index).and_then(Option::as_ref))
                    .collect()
            })
            .collect();
        WarmupConnections::of_round(&by_endpoint)
    }
}

/// Sends each endpoint `per_endpoint[endpoint]` copies of `body` at once and waits for all of
/// them. `join_all` polls every one before any waits, so all the `fetch()` calls happen in one
/// task turn.
async fn warm_up_round(
    live: &LiveRun,
    setup: &RunSetup,
    urls: &[String],
    per_endpoint: &[u64],
    body: &JsValue,
) -> WarmupRound {
    let several = urls.len() > 1;
    let targets = urls
        .iter()
        .enumerate()
        .zip(per_endpoint)
        .flat_map(|(target, count)| std::iter::repeat_n(target, *count as usize));
    let results = join_all(targets.map(|(endpoint, url)| async move {
        let (sent_ms, result) = warm_up_one(live, setup, url, body).await;
        let result = result.map_err(|error| {
            if several {
                error.at_endpoint(url)
            } else {
                error
            }
        });
        ((endpoint, sent_ms), result)
    }))
    .await;
    let mut round = WarmupRound {
        sent: Vec::with_capacity(results.len()),
        errors: Vec::new(),
    };
    for (sent, result) in results {
        round.sent.push(sent);
        round.errors.extend(result.err());
    }
    round
}

/// One warm-up request, read to its end: when its `fetch()` was called, and whether it failed.
/// Any answer that streams counts: with `max_tokens: 1` a thinking model may send no visible
/// content, and that is no transport problem.
async fn warm_up_one(
    live: &LiveRun,
    setup: &RunSetup,
    url: &str,
    body: &JsValue,
) -> (f64, Result<(), RequestError>) {
    let control = match RequestControl::new(live.clock.now_ms()) {
        Ok(control) => control,
        Err(error) => return (f64::NAN, Err(error)),
    };
    live.warmup_controls.borrow_mut().push(control.clone());
    let (sent_ms, result) = send_watched(live, setup, &control, url, body, false, None).await;
    (sent_ms, result.map(drop))
}

/// Sends one request (aborted at once when the run is already cancelled; the run's
/// [`watchdog`] aborts it when it falls idle) and reads its stream to the end: `fetch()`'s
/// clock reading and the result.
async fn send_watched(
    live: &LiveRun,
    setup: &RunSetup,
    control: &Rc<RequestControl>,
    url: &str,
    body: &JsValue,
    chunk_traces: bool,
    synthetic: Option<&js_sys::Array>,
) -> (f64, Result<StreamResult, RequestError>) {
    let clock = &live.clock;
    if live.cancelled.get() {
        control.abort(AbortCause::Cancelled);
    }
    let request = ChatRequest {
        url,
        body,
        headers: &live.headers,
        api_key: setup.api_key.as_deref(),
        timeout_s: setup.config.timeout_s,
        chunk_traces,
        synthetic,
    };
    let sent_and_result = stream_chat(clock, &request, control).await;
    control.ended.set(true);
    sent_and_result
}

/// Runs `run`'s requests with the plan's `concurrency` slots, slot `k` sending to endpoint
/// `k mod n` of `urls`, until none is left.
async fn run_slots(
    run: &Rc<LiveRun>,
    setup: &Rc<RunSetup>,
    prompt_spec: &Rc<PromptSpec>,
    urls: &[String],
) {
    let slots = (0..setup.plan.concurrency()).map(|slot| {
        let endpoint = setup.plan.endpoint_of_slot(slot);
        run_slot(
            run.clone(),
            setup.clone(),
            prompt_spec.clone(),
            endpoint,
            urls[endpoint].clone(),
        )
    });
    join_all(slots).await;
}

/// One concurrency slot: takes the next request index until none is left, and sends each to
/// its endpoint.
async fn run_slot(
    live: Rc<LiveRun>,
    setup: Rc<RunSetup>,
    prompt_spec: Rc<PromptSpec>,
    endpoint: usize,
    url: String,
) {
    loop {
        if live.cancelled.get() {
            // Nothing more is sent: every index left is accounted for at once, without turns.
            while let Some(index) = live.take_index() {
                let outcome = cancelled_before_sending(&setup.plan, index);
                live.outcomes.borrow_mut().push(outcome);
            }
            break;
        }
        // Each request is sent from a task of its own, and only after every read that was
        // waiting when the previous request was sent. A `fetch()` call holds the thread for
        // about a millisecond (0.6–0.8 ms median, about 1.2 ms mean at concurrency 64 in
        // Chromium 156 on a 2-core machine), and the first wave sends one per slot: sent
        // from one task, 64 of them held every read for 115 ms, and the streams that had
        // already answered were stamped that late. A slot takes the sending turn, then yields
        // to the event loop (a message to itself, which runs after the tasks queued before it:
        // the reads); it lets the turn go before it sends, but everything from here to its
        // `fetch()` call is synchronous, so the next slot yields only once this one has sent.
        // Yielding without the turn would queue all 64 yields at once, ahead of every read,
        // and change nothing. The index is taken inside the turn, so requests are sent in
        // index order.
        let index = {
            let _turn = live.sending_turns.take().await;
            yield_to_event_loop().await;
            live.take_index()
        };
        let Some(index) = index else {
            break;
        };
        let outcome = if live.cancelled.get() {
            cancelled_before_sending(&setup.plan, index)
        } else {
            live.request_sent(endpoint);
            let outcome = run_one(&live, &setup, &prompt_spec, endpoint, &url, index).await;
            live.request_ended(endpoint);
            outcome
        };
        live.outcomes.borrow_mut().push(outcome);
    }
}

/// The failure of a request the run was cancelled before it sent.
fn cancelled_before_sending(plan: &RunPlan, index: u64) -> RequestOutcome {
    let error = RequestError::new(
        "AbortError",
        "the run was cancelled before this request was sent",
    );
    RequestOutcome::Failed(FailureRecord::request_error(
        index,
        planned_context(plan, index),
        &error,
        0.0,
    ))
}

/// Turns to send, taken first come first served (a ticket lock): a slot that has waited
/// longest sends next, so no slot waits out several others' sends and the run keeps its
/// concurrency. A turn ends when its [`SendingTurn`] is dropped. A slot's future is never
/// dropped while it waits for its turn (slots run to the end of the run), so no ticket is
/// left unserved.
#[derive(Default)]
struct SendingTurns {
    next_ticket: Cell<u64>,
    serving: Cell<u64>,
    waiting: RefCell<BTreeMap<u64, Waker>>,
}

impl SendingTurns {
    /// Waits for this caller's turn.
    async fn take(&self) -> SendingTurn<'_> {
        let ticket = self.next_ticket.get();
        self.next_ticket.set(ticket + 1);
        std::future::poll_fn(|context| {
            if self.serving.get() == ticket {
                Poll::Ready(())
            } else {
                self.waiting
                    .borrow_mut()
                    .insert(ticket, context.waker().clone());
                Poll::Pending
            }
        })
        .await;
        SendingTurn { turns: self }
    }
}

/// One slot's turn to send; dropping it hands the turn to the next ticket.
struct SendingTurn<'a> {
    turns: &'a SendingTurns,
}

impl Drop for SendingTurn<'_> {
    fn drop(&mut self) {
        let next = self.turns.serving.get() + 1;
        self.turns.serving.set(next);
        let waker = self.turns.waiting.borrow_mut().remove(&next);
        if let Some(waker) = waker {
            waker.wake();
        }
    }
}

fn planned_context(plan: &RunPlan, index: u64) -> u64 {
    plan.planned_context_tokens()
        .get(index as usize)
        .copied()
        .unwrap_or_default()
}

async fn run_one(
    live: &LiveRun,
    setup: &RunSetup,
    prompt_spec: &PromptSpec,
    endpoint: usize,
    url: &str,
    index: u64,
) -> RequestOutcome {
    let clock = &live.clock;
    let request_started_ms = clock.now_ms();
    let facts = setup.plan_facts(index, live.run_started_ms.get());
    let prepared = live.prepared_bodies.borrow_mut().remove(&index);
    let body = match prepared {
        Some(body) => body,
        // A dry run sends nothing: its requests need no prompt (building one per request
        // would cost a long context's run seconds).
        None if live.dry_run => JsValue::from_str(DRY_RUN_BODY),
        None => match prompt_spec.build(index as usize, facts.planned_context_tokens) {
            Ok(prompt) => JsValue::from_str(&request_body(&setup.config, &prompt)),
            Err(err) => {
                let error = RequestError::new("ValueError", err.to_string());
                return conclude_request(&facts, request_started_ms, Err(error), clock.now_ms());
            }
        },
    };
    let control = match RequestControl::new(clock.now_ms()) {
        Ok(control) => control,
        Err(error) => {
            return conclude_request(&facts, request_started_ms, Err(error), clock.now_ms())
        }
    };
    live.controls.borrow_mut().insert(index, control.clone());
    let chunk_traces = setup.config.client.chunk_traces;
    let synthetic = live
        .dry_run
        .then(|| synthetic_stream(&rehearsal_content(setup, &facts)));
    let (sent_ms, result) = send_watched(
        live,
        setup,
        &control,
        url,
        &body,
        chunk_traces,
        synthetic.as_ref(),
    )
    .await;
    live.controls.borrow_mut().remove(&index);
    live.sent.borrow_mut().insert(index, (endpoint, sent_ms));
    conclude_request(&facts, request_started_ms, result, clock.now_ms())
}

/// Aborts every running request, warm-up or measured, on which no data has arrived for
/// `timeout_ms` (the reference tool's timeout is likewise a per-read socket timeout, not a total
/// deadline), until the run has finished. One timer for the whole run, looking every
/// [`WATCHDOG_TICK_MS`] (or a quarter of a shorter timeout): a timer per request woke all of a
/// wave's requests in the same instant every second, and at concurrency 64 those wake-ups held
/// the measuring thread for 6–10 ms at a time.
async fn watchdog(live: Rc<LiveRun>, timeout_ms: f64) {
    let tick_ms = (timeout_ms / 4.0).clamp(1.0, WATCHDOG_TICK_MS);
    while live.finished_ms.get().is_none() {
        sleep_ms(tick_ms).await;
        let now_ms = live.clock.now_ms();
        let idle: Vec<Rc<RequestControl>> = live
            .controls
            .borrow()
            .values()
            .chain(live.warmup_controls.borrow().iter())
            .filter(|control| control.idle_past(timeout_ms, now_ms))
            .cloned()
            .collect();
        for control in idle {
            control.abort(AbortCause::TimedOut);
        }
    }
}

/// Pairs every measured request with the browser's Resource Timing entry for it and writes the
/// transport facts into its row (null facts when the browser kept no entry). `sent` says, per
/// request index, which endpoint of `urls` it went to and when its `fetch()` was called.
async fn account_transport(
    outcomes: &mut [RequestOutcome],
    sent: &BTreeMap<u64, (usize, f64)>,
    urls: &[String],
) {
    let rows: BTreeSet<u64> = outcomes
        .iter()
        .filter(|outcome| outcome.row().is_some())
        .map(RequestOutcome::request_index)
        .collect();
    let entries = resource_entries(sent, urls, &rows).await;
    for outcome in outcomes.iter_mut() {
        let index = outcome.request_index();
        if let Some((_, sent_ms)) = sent.get(&index) {
            let facts = entries
                .get(&index)
                .and_then(Option::as_ref)
                .map(|entry| TransportFacts::from_entry(entry, *sent_ms))
                .unwrap_or_default();
            outcome.set_transport(&facts);
        }
    }
}

/// The browser's Resource Timing entry of every request in `sent` (request index → endpoint
/// of `urls` and when its `fetch()` was called); `None` when the browser kept none. Entries
/// still missing for the `awaited` requests are waited for a little, once for all endpoints:
/// the browser adds an entry when the response ends, which can be a moment after the
/// stream's last read.
async fn resource_entries(
    sent: &BTreeMap<u64, (usize, f64)>,
    urls: &[String],
    awaited: &BTreeSet<u64>,
) -> BTreeMap<u64, Option<ResourceTimingEntry>> {
    let groups: Vec<EndpointRequests> = urls
        .iter()
        .enumerate()
        .map(|(endpoint, url)| EndpointRequests::new(url, endpoint, sent, awaited))
        .filter(|group| !group.indices.is_empty())
        .collect();
    let mut rounds = 0;
    let mut paired = pair_entries(&groups);
    while rounds < ENTRY_WAIT_ROUNDS
        && !groups
            .iter()
            .zip(&paired)
            .all(|(group, (_, pairs))| group.complete(pairs))
    {
        sleep_ms(ENTRY_WAIT_STEP_MS).await;
        paired = pair_entries(&groups);
        rounds += 1;
    }
    let mut found = BTreeMap::new();
    for (group, (entries, pairs)) in groups.iter().zip(&paired) {
        for (index, pair) in group.indices.iter().zip(pairs) {
            found.insert(*index, pair.and_then(|entry| entries.get(entry)).cloned());
        }
    }
    found
}

/// The requests sent to one endpoint's URL, in index order.
struct EndpointRequests<'a> {
    url: &'a str,
    indices: Vec<u64>,
    /// When each one's `fetch()` was called.
    starts: Vec<f64>,
    /// Whether each one's entry is worth waiting for (a measured request's only if it has a
    /// row: a failed fetch may leave none).
    awaited: Vec<bool>,
}

impl<'a> EndpointRequests<'a> {
    fn new(
        url: &'a str,
        endpoint: usize,
        sent: &BTreeMap<u64, (usize, f64)>,
        awaited: &BTreeSet<u64>,
    ) -> Self {
        let (indices, starts): (Vec<u64>, Vec<f64>) = sent
            .iter()
            .filter(|(_, (to, _))| *to == endpoint)
            .map(|(index, (_, sent_ms))| (*index, *sent_ms))
            .unzip();
        let awaited = indices
            .iter()
            .map(|index| awaited.contains(index))
            .collect();
        Self {
            url,
            indices,
            starts,
            awaited,
        }
    }

    /// Whether every awaited request found its entry.
    fn complete(&self, pairs: &[Option<usize>]) -> bool {
        pairs
            .iter()
            .zip(&self.awaited)
            .all(|(pair, awaited)| pair.is_some() || !awaited)
    }
}

/// Each endpoint's Resource Timing entries now, and which entry each of its requests matches.
fn pair_entries(
    groups: &[EndpointRequests<'_>],
) -> Vec<(Vec<ResourceTimingEntry>, Vec<Option<usize>>)> {
    let urls: Vec<&str> = groups.iter().map(|group| group.url).collect();
    groups
        .iter()
        .zip(resource_timing_entries(&urls))
        .map(|(group, entries)| {
            let pairs = match_resource_timings(&group.starts, &entries);
            (entries, pairs)
        })
        .collect()
}

/// Makes sure the browser keeps a Resource Timing entry for every request of the run, warm-up
/// included (the default buffer holds 250), so protocols and transport facts are not silently
/// lost.
fn prepare_resource_timing(requests: u64) {
    if let Some(performance) = scope::performance() {
        performance.clear_resource_timings();
        let size = (requests + 64).min(u32::MAX as u64) as u32;
        performance.set_resource_timing_buffer_size(size);
    }
}
