//! The scheduler: keeps exactly `concurrency` requests in flight until the plan is done or the
//! user cancels, and turns every request into a row or a classified failure.
//!
//! Nothing here renders: the page polls [`LiveRun::snapshot`] once per animation frame, so the
//! UI can never slow a read callback down by more than a frame's work.

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::rc::Rc;

use futures::future::join_all;

use crate::core::artifact::{
    build_artifact, ArtifactV1, ClientBlock, ClientSseCounts, ClientTransport, RunTiming,
};
use crate::core::observe::{
    conclude_request, FailureRecord, RequestError, RequestOutcome, RequestPlanFacts,
};
use crate::core::plan::{RunConfig, RunPlan};
use crate::core::prompt::{request_body, PromptSpec};
use crate::core::stats::nearest_rank;

use super::clock::{cross_origin_isolated, protocols_seen, user_agent, Clock};
use super::timers::sleep_ms;
use super::transport::{stream_chat, AbortCause, ChatRequest, RequestControl};

/// The browser's HTTP/1.1 connection limit per host: more requests than this to one origin
/// wait inside the browser, and that wait would land inside TTFO.
pub const HTTP1_CONNECTIONS_PER_HOST: u64 = 6;

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
    run_started_ms: f64,
    requests: u64,
    next_index: Cell<u64>,
    in_flight: Cell<u64>,
    cancelled: Cell<bool>,
    outcomes: RefCell<Vec<RequestOutcome>>,
    controls: RefCell<BTreeMap<u64, Rc<RequestControl>>>,
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
}

impl LiveRun {
    /// Cancels the run: no new request starts, and every request in flight is aborted. Rows of
    /// requests that already finished are kept.
    pub fn cancel(&self) {
        self.cancelled.set(true);
        for control in self.controls.borrow().values() {
            control.abort(AbortCause::Cancelled);
        }
    }

    /// The run's clock now, in ms.
    pub fn now_ms(&self) -> f64 {
        self.clock.now_ms()
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
        let elapsed_ms = (end_ms - self.run_started_ms).max(0.0);
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
    let run_started_ms = clock.now_ms();
    Rc::new(LiveRun {
        clock,
        run_started_ms,
        requests: setup.plan.requests(),
        next_index: Cell::new(0),
        in_flight: Cell::new(0),
        cancelled: Cell::new(false),
        outcomes: RefCell::new(Vec::new()),
        controls: RefCell::new(BTreeMap::new()),
        finished_ms: Cell::new(None),
    })
}

/// Runs every planned request with `concurrency` workers and builds the artifact.
pub async fn execute(live: Rc<LiveRun>, setup: Rc<RunSetup>) -> Result<ArtifactV1, String> {
    let clock = live.clock.clone();
    let timer_resolution_ms = clock.measure_resolution_ms();
    prepare_resource_timing(setup.plan.requests());
    let started_unix_ns = clock.unix_ns_at(live.run_started_ms);
    let prompt_spec = Rc::new(PromptSpec::for_plan(&setup.plan));
    let url = setup.config.chat_completions_url();
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
    let wall_seconds = (finished_ms - live.run_started_ms) / 1000.0;
    let finished_unix_ns = clock.unix_ns_at(finished_ms);

    let outcomes = live.outcomes.borrow().clone();
    let http_protocols_seen = protocols_seen(&setup.config.base_url);
    let multiplexed = http_protocols_seen
        .iter()
        .any(|protocol| protocol.starts_with("h2") || protocol.starts_with("h3"));
    let transport = ClientTransport {
        connection_limit_suspected: setup.plan.concurrency() > HTTP1_CONNECTIONS_PER_HOST
            && !multiplexed,
        http_protocols_seen,
    };
    let client = ClientBlock::strobe(
        user_agent(),
        cross_origin_isolated(),
        timer_resolution_ms,
        transport,
        ClientSseCounts::of_outcomes(&outcomes),
    );
    let timing = RunTiming {
        started_at_unix_ns: started_unix_ns,
        finished_at_unix_ns: finished_unix_ns,
        wall_seconds,
    };
    build_artifact(&setup.config, &setup.plan, outcomes, timing, Some(client))
        .map_err(|err| format!("the run finished but its artifact could not be built: {err}"))
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
        run_started_ms: live.run_started_ms,
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
    };
    let (_sent_ms, result) = stream_chat(clock, &request, &control).await;
    finished.set(true);
    live.controls.borrow_mut().remove(&index);
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

/// Makes sure the browser keeps a Resource Timing entry for every request of the run (the
/// default buffer holds 250), so protocols and transport facts are not silently lost.
fn prepare_resource_timing(requests: u64) {
    if let Some(performance) = web_sys::window().and_then(|window| window.performance()) {
        performance.clear_resource_timings();
        let size = (requests + 64).min(u32::MAX as u64) as u32;
        performance.set_resource_timing_buffer_size(size);
    }
}
