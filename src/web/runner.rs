//! The scheduler: primes the connections with an unmeasured warm-up, keeps exactly
//! `concurrency` requests in flight until the plan is done or the user cancels, turns every
//! request into a row or a classified failure, and finally adds what the browser's Resource
//! Timing says about each request's transport to its row.
//!
//! Nothing here renders: the page polls [`LiveRun::snapshot`] once per animation frame, so the
//! UI can never slow a read callback down by more than a frame's work.

use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;

use futures::future::join_all;

use crate::core::artifact::{
    build_artifact, ArtifactV1, ClientBlock, ClientSseCounts, ClientTransport, ClientWarmup,
    RunTiming, WarmupError,
};
use crate::core::loaded::{FailureView, RowView};
use crate::core::observe::{
    conclude_request, match_resource_timings, FailureRecord, RequestError, RequestOutcome,
    RequestPlanFacts, TransportFacts,
};
use crate::core::plan::{RunConfig, RunPlan, BROWSER_HTTP1_CONNECTIONS_PER_HOST};
use crate::core::prompt::{request_body, warmup_request_body, PromptSpec};
use crate::core::stats::nearest_rank;

use super::clock::{
    cross_origin_isolated, protocols_seen, resource_timing_entries, user_agent, Clock,
};
use super::live_charts::LiveRows;
use super::timers::sleep_ms;
use super::transport::{stream_chat, AbortCause, ChatRequest, RequestControl};

/// How often, and how long apart, the end of a run looks again for Resource Timing entries
/// still missing: the browser adds an entry when the response ends, which can be a moment
/// after the last read of its stream.
const ENTRY_WAIT_ROUNDS: u32 = 10;
const ENTRY_WAIT_STEP_MS: f64 = 20.0;

/// What a run needs, fixed before the first request.
pub struct RunSetup {
    /// The validated configuration.
    pub config: RunConfig,
    /// The request plan derived from it.
    pub plan: RunPlan,
    /// The API key, if any: sent as a header, never stored in the artifact.
    pub api_key: Option<String>,
}

/// A run in progress, shared between the worker tasks, the Cancel button and the page.
pub struct LiveRun {
    clock: Clock,
    /// When the measured run started: read again after the warm-up, so that the run's wall
    /// time, throughput and every row's `started_at_ms` leave the warm-up out.
    run_started_ms: Cell<f64>,
    warming_up: Cell<bool>,
    requests: u64,
    next_index: Cell<u64>,
    in_flight: Cell<u64>,
    cancelled: Cell<bool>,
    outcomes: RefCell<Vec<RequestOutcome>>,
    controls: RefCell<BTreeMap<u64, Rc<RequestControl>>>,
    warmup_controls: RefCell<Vec<Rc<RequestControl>>>,
    /// When each measured request's `fetch()` was called, by request index: the key that
    /// pairs it with the browser's Resource Timing entry.
    sent_ms: RefCell<BTreeMap<u64, f64>>,
    finished_ms: Cell<Option<f64>>,
}

/// What the page shows while a run goes on.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LiveSnapshot {
    /// Requests planned.
    pub requests: u64,
    /// Requests that ended as results.
    pub completed: u64,
    /// Requests that ended as failures.
    pub failed: u64,
    /// Requests on the wire now.
    pub in_flight: u64,
    /// Milliseconds since the run started (frozen when it ends).
    pub elapsed_ms: f64,
    /// Running median time to first output, ms.
    pub p50_ttfo_ms: Option<f64>,
    /// Running median TTFT, ms.
    pub p50_ttft_ms: Option<f64>,
    /// Running median decode rate, tokens/s.
    pub p50_decode_tok_s: Option<f64>,
    /// Output tokens of results so far divided by elapsed time, tokens/s.
    pub throughput_tok_s: Option<f64>,
    /// The most recent failure's reason, if any.
    pub last_failure: Option<String>,
    /// Whether the user cancelled.
    pub cancelled: bool,
    /// The unmeasured warm-up is running (no measured request has started yet).
    pub warming_up: bool,
}

impl LiveRun {
    /// Cancels the run: no new request starts, and every request in flight is aborted. Rows of
    /// requests that already finished are kept.
    pub fn cancel(&self) {
        self.cancelled.set(true);
        for control in self.controls.borrow().values() {
            control.abort(AbortCause::Cancelled);
        }
        for control in self.warmup_controls.borrow().iter() {
            control.abort(AbortCause::Cancelled);
        }
    }

    /// The run's clock now, in ms.
    pub fn now_ms(&self) -> f64 {
        self.clock.now_ms()
    }

    /// The finished requests so far, as the live charts read them.
    pub fn live_rows(&self) -> LiveRows {
        let outcomes = self.outcomes.borrow();
        let mut live = LiveRows::default();
        for outcome in outcomes.iter() {
            match outcome {
                RequestOutcome::Completed(done) => {
                    if let Some(row) = &done.row {
                        live.rows.push(RowView::from_timing(live.rows.len(), row));
                    }
                }
                RequestOutcome::Failed(failure) => {
                    live.failures
                        .push(FailureView::from_record(live.failures.len(), failure));
                }
            }
        }
        live
    }

    /// Whether every request has ended.
    pub fn is_finished(&self) -> bool {
        self.finished_ms.get().is_some()
    }

    /// The numbers the page shows now.
    pub fn snapshot(&self) -> LiveSnapshot {
        let outcomes = self.outcomes.borrow();
        let mut ttfo = Vec::new();
        let mut ttft = Vec::new();
        let mut decode = Vec::new();
        let mut output_tokens = 0u64;
        let mut completed = 0;
        let mut failed = 0;
        let mut last_failure = None;
        for outcome in outcomes.iter() {
            match outcome {
                RequestOutcome::Completed(done) => {
                    completed += 1;
                    output_tokens += done.out_toks;
                    if let Some(row) = &done.row {
                        ttfo.push(row.time_to_first_output_ms);
                        ttft.push(row.ttft_ms);
                        if let Some(rate) = row.decode_tok_s {
                            decode.push(rate);
                        }
                    }
                }
                RequestOutcome::Failed(failure) => {
                    failed += 1;
                    last_failure = Some(format!(
                        "request {}: {}: {}",
                        failure.request_index, failure.error_type, failure.error_message
                    ));
                }
            }
        }
        let end_ms = self
            .finished_ms
            .get()
            .unwrap_or_else(|| self.clock.now_ms());
        let warming_up = self.warming_up.get();
        let elapsed_ms = if warming_up {
            0.0
        } else {
            (end_ms - self.run_started_ms.get()).max(0.0)
        };
        let median = |values: &mut Vec<f64>| {
            values.sort_by(f64::total_cmp);
            nearest_rank(values, 50)
        };
        LiveSnapshot {
            requests: self.requests,
            completed,
            failed,
            in_flight: self.in_flight.get(),
            elapsed_ms,
            p50_ttfo_ms: median(&mut ttfo),
            p50_ttft_ms: median(&mut ttft),
            p50_decode_tok_s: median(&mut decode),
            throughput_tok_s: (elapsed_ms > 0.0 && completed > 0)
                .then(|| output_tokens as f64 / (elapsed_ms / 1000.0)),
            last_failure,
            cancelled: self.cancelled.get(),
            warming_up,
        }
    }

    fn take_index(&self) -> Option<u64> {
        let index = self.next_index.get();
        (index < self.requests).then(|| {
            self.next_index.set(index + 1);
            index
        })
    }
}

/// Prepares a run; call [`execute`] to start it.
pub fn start(clock: Clock, setup: &RunSetup) -> Rc<LiveRun> {
    // Provisional: `execute` reads the start again when the measured requests begin.
    let run_started_ms = clock.now_ms();
    Rc::new(LiveRun {
        clock,
        run_started_ms: Cell::new(run_started_ms),
        warming_up: Cell::new(setup.plan.warmup_requests() > 0),
        requests: setup.plan.requests(),
        next_index: Cell::new(0),
        in_flight: Cell::new(0),
        cancelled: Cell::new(false),
        outcomes: RefCell::new(Vec::new()),
        controls: RefCell::new(BTreeMap::new()),
        warmup_controls: RefCell::new(Vec::new()),
        sent_ms: RefCell::new(BTreeMap::new()),
        finished_ms: Cell::new(None),
    })
}

/// Warms the connections up (unless the user turned that off), runs every planned request with
/// `concurrency` workers, and builds the artifact. A failed warm-up ends the run before any
/// measured request, with the reason.
pub async fn execute(live: Rc<LiveRun>, setup: Rc<RunSetup>) -> Result<ArtifactV1, String> {
    let clock = live.clock.clone();
    let timer_resolution_ms = clock.measure_resolution_ms();
    let url = setup.config.chat_completions_url();
    let warmup_requests = setup.plan.warmup_requests();
    prepare_resource_timing(setup.plan.requests() + warmup_requests);
    let warmup = if warmup_requests > 0 {
        let warmup = warm_up(&live, &setup, &url, warmup_requests).await;
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
    let prompt_spec = Rc::new(PromptSpec::for_plan(&setup.plan));
    let workers = (0..setup.plan.concurrency()).map(|_| {
        worker(
            live.clone(),
            setup.clone(),
            prompt_spec.clone(),
            url.clone(),
        )
    });
    join_all(workers).await;
    let finished_ms = clock.now_ms();
    live.finished_ms.set(Some(finished_ms));
    let wall_seconds = (finished_ms - run_started_ms) / 1000.0;
    let finished_unix_ns = clock.unix_ns_at(finished_ms);

    let mut outcomes = live.outcomes.borrow().clone();
    let sent_ms = live.sent_ms.borrow().clone();
    account_transport(&mut outcomes, &sent_ms, &url).await;
    let http_protocols_seen = protocols_seen(&setup.config.base_url);
    let multiplexed = http_protocols_seen
        .iter()
        .any(|protocol| protocol.starts_with("h2") || protocol.starts_with("h3"));
    let transport = ClientTransport {
        connection_limit_suspected: setup.plan.concurrency() > BROWSER_HTTP1_CONNECTIONS_PER_HOST
            && !multiplexed,
        http_protocols_seen,
    };
    let client = ClientBlock::strobe(
        user_agent(),
        cross_origin_isolated(),
        timer_resolution_ms,
        transport,
        ClientSseCounts::of_outcomes(&outcomes),
    )
    .with_warmup(warmup);
    let timing = RunTiming {
        started_at_unix_ns: started_unix_ns,
        finished_at_unix_ns: finished_unix_ns,
        wall_seconds,
    };
    build_artifact(&setup.config, &setup.plan, outcomes, timing, Some(client))
        .map_err(|err| format!("the run finished but its artifact could not be built: {err}"))
}

/// Sends `requests` warm-up requests at once ([`RunPlan::warmup_requests`]: two per usable
/// connection) and waits for all of them. `join_all` polls every one before any waits, so all
/// the `fetch()` calls happen in one task turn: the browser opens a connection for every one
/// it cannot serve from its idle pool, up to its per-host limit, and the first CORS preflight
/// fills the preflight cache for the measured requests' URL and headers.
async fn warm_up(
    live: &LiveRun,
    setup: &RunSetup,
    url: &str,
    requests: u64,
) -> Result<ClientWarmup, WarmupError> {
    let clock = &live.clock;
    let body = warmup_request_body(&setup.config);
    let started_ms = clock.now_ms();
    let results = join_all((0..requests).map(|_| warm_up_one(live, setup, url, &body))).await;
    let duration_ms = clock.now_ms() - started_ms;
    live.warmup_controls.borrow_mut().clear();
    if live.cancelled.get() {
        return Err(WarmupError::Cancelled);
    }
    WarmupError::check(
        requests,
        duration_ms,
        results.into_iter().filter_map(Result::err),
    )
}

/// One warm-up request, read to its end. Any answer that streams counts: with `max_tokens: 1`
/// a thinking model may send no visible content, and that is no transport problem.
async fn warm_up_one(
    live: &LiveRun,
    setup: &RunSetup,
    url: &str,
    body: &str,
) -> Result<(), RequestError> {
    let clock = &live.clock;
    let control = RequestControl::new(clock.now_ms())?;
    live.warmup_controls.borrow_mut().push(control.clone());
    if live.cancelled.get() {
        control.abort(AbortCause::Cancelled);
    }
    let finished = Rc::new(Cell::new(false));
    leptos::task::spawn_local(watchdog(
        clock.clone(),
        control.clone(),
        finished.clone(),
        setup.config.timeout_s * 1000.0,
    ));
    let request = ChatRequest {
        url,
        body,
        api_key: setup.api_key.as_deref(),
        timeout_s: setup.config.timeout_s,
        chunk_traces: false,
    };
    let (_sent_ms, result) = stream_chat(clock, &request, &control).await;
    finished.set(true);
    result.map(drop)
}

async fn worker(live: Rc<LiveRun>, setup: Rc<RunSetup>, prompt_spec: Rc<PromptSpec>, url: String) {
    while let Some(index) = live.take_index() {
        let outcome = if live.cancelled.get() {
            let error = RequestError::new(
                "AbortError",
                "the run was cancelled before this request was sent",
            );
            RequestOutcome::Failed(FailureRecord::request_error(
                index,
                planned_context(&setup.plan, index),
                &error,
                0.0,
            ))
        } else {
            live.in_flight.set(live.in_flight.get() + 1);
            let outcome = run_one(&live, &setup, &prompt_spec, &url, index).await;
            live.in_flight.set(live.in_flight.get() - 1);
            outcome
        };
        live.outcomes.borrow_mut().push(outcome);
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
    url: &str,
    index: u64,
) -> RequestOutcome {
    let clock = &live.clock;
    let request_started_ms = clock.now_ms();
    let plan = &setup.plan;
    let facts = RequestPlanFacts {
        request_index: index,
        planned_context_tokens: planned_context(plan, index),
        expected_marker: setup
            .config
            .request_canaries
            .then(|| plan.marker(index as usize)),
        response_words: setup.config.response_words,
        policy: setup.config.controlled_output_policy,
        run_started_ms: live.run_started_ms.get(),
    };
    let prompt = match prompt_spec.build(index as usize, facts.planned_context_tokens) {
        Ok(prompt) => prompt,
        Err(err) => {
            let error = RequestError::new("ValueError", err.to_string());
            return conclude_request(&facts, request_started_ms, Err(error), clock.now_ms());
        }
    };
    let body = request_body(&setup.config, &prompt);
    drop(prompt);
    let control = match RequestControl::new(clock.now_ms()) {
        Ok(control) => control,
        Err(error) => {
            return conclude_request(&facts, request_started_ms, Err(error), clock.now_ms())
        }
    };
    live.controls.borrow_mut().insert(index, control.clone());
    if live.cancelled.get() {
        control.abort(AbortCause::Cancelled);
    }
    let finished = Rc::new(Cell::new(false));
    leptos::task::spawn_local(watchdog(
        clock.clone(),
        control.clone(),
        finished.clone(),
        setup.config.timeout_s * 1000.0,
    ));
    let request = ChatRequest {
        url,
        body: &body,
        api_key: setup.api_key.as_deref(),
        timeout_s: setup.config.timeout_s,
        chunk_traces: setup.config.client.chunk_traces,
    };
    let (sent_ms, result) = stream_chat(clock, &request, &control).await;
    finished.set(true);
    live.controls.borrow_mut().remove(&index);
    live.sent_ms.borrow_mut().insert(index, sent_ms);
    conclude_request(&facts, request_started_ms, result, clock.now_ms())
}

/// Aborts the request when no data has arrived for `timeout_ms` (the reference tool's timeout is
/// likewise a per-read socket timeout, not a total deadline).
async fn watchdog(
    clock: Clock,
    control: Rc<RequestControl>,
    finished: Rc<Cell<bool>>,
    timeout_ms: f64,
) {
    loop {
        let idle_ms = clock.now_ms() - control.last_activity_ms.get();
        let remaining_ms = timeout_ms - idle_ms;
        if remaining_ms <= 0.0 {
            if !finished.get() {
                control.abort(AbortCause::TimedOut);
            }
            return;
        }
        sleep_ms(remaining_ms.min(1_000.0)).await;
        if finished.get() {
            return;
        }
    }
}

/// Pairs every measured request with the browser's Resource Timing entry for it and writes the
/// transport facts into its row (null facts when the browser kept no entry). Entries still
/// missing for rows are waited for a little, since the browser adds an entry when the response
/// ends, which can be a moment after the stream's last read.
async fn account_transport(
    outcomes: &mut [RequestOutcome],
    sent_ms: &BTreeMap<u64, f64>,
    url: &str,
) {
    let indices: Vec<u64> = sent_ms.keys().copied().collect();
    let starts: Vec<f64> = sent_ms.values().copied().collect();
    let rows: BTreeSet<u64> = outcomes
        .iter()
        .filter(|outcome| outcome.row().is_some())
        .map(RequestOutcome::request_index)
        .collect();
    let with_rows: Vec<bool> = indices.iter().map(|index| rows.contains(index)).collect();
    let mut entries = resource_timing_entries(url);
    let mut pairs = match_resource_timings(&starts, &entries);
    for _ in 0..ENTRY_WAIT_ROUNDS {
        let complete = pairs
            .iter()
            .zip(&with_rows)
            .all(|(pair, has_row)| pair.is_some() || !has_row);
        if complete {
            break;
        }
        sleep_ms(ENTRY_WAIT_STEP_MS).await;
        entries = resource_timing_entries(url);
        pairs = match_resource_timings(&starts, &entries);
    }
    let facts: BTreeMap<u64, TransportFacts> = indices
        .iter()
        .zip(starts.iter().zip(&pairs))
        .map(|(index, (start_ms, pair))| {
            let facts = pair
                .and_then(|entry| entries.get(entry))
                .map(|entry| TransportFacts::from_entry(entry, *start_ms))
                .unwrap_or_default();
            (*index, facts)
        })
        .collect();
    for outcome in outcomes.iter_mut() {
        if let Some(facts) = facts.get(&outcome.request_index()) {
            outcome.set_transport(facts);
        }
    }
}

/// Makes sure the browser keeps a Resource Timing entry for every request of the run, warm-up
/// included (the default buffer holds 250), so protocols and transport facts are not silently
/// lost.
fn prepare_resource_timing(requests: u64) {
    if let Some(performance) = web_sys::window().and_then(|window| window.performance()) {
        performance.clear_resource_timings();
        let size = (requests + 64).min(u32::MAX as u64) as u32;
        performance.set_resource_timing_buffer_size(size);
    }
}
