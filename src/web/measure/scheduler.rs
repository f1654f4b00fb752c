//! The scheduler: primes the connections with an unmeasured warm-up, keeps exactly
//! `concurrency` requests in flight until the plan is done or the user cancels (slot `k`
//! sending to endpoint `k mod n` of the endpoint pool) — or hands the run to the open loop
//! ([`run_open_loop`]) or, for conversations, to the sessions' slots ([`run_sessions`]) —
//! turns every request into a row or a classified failure, and finally adds what the
//! browser's Resource Timing says about each request's transport to its row.
//!
//! It runs on whichever thread measures, the measurement worker or the page, and renders
//! nothing: the page reads [`LiveRun::progress`] and [`LiveRun::finished_since`] a few times a
//! second (directly, or through the worker's messages), so the UI can never slow a read
//! callback down by more than that copy.

use std::rc::Rc;

use futures::future::join_all;
use wasm_bindgen_futures::spawn_local;

use crate::core::artifact::build::{build_artifact, RunTiming};
use crate::core::config::choices::MeasurementThread;
use crate::core::prompt::PromptSpec;
use crate::core::schema::client::{ClientBlock, ClientSseCounts, ClientTransport};
use crate::core::schema::ArtifactV1;

use crate::web::measure::live_run::{LiveRun, RunSetup};
use crate::web::measure::open_loop::run_open_loop;
use crate::web::measure::prepare::{prepare_bodies, rehearse_request};
use crate::web::measure::request::{cancelled_before_sending, run_one};
use crate::web::measure::resource_timing::{account_transport, prepare_resource_timing};
use crate::web::measure::sessions::run_sessions;
use crate::web::measure::transport::{AbortCause, RequestControl};
use crate::web::measure::warmup::warm_up;
use crate::web::platform::clock::{cross_origin_isolated, protocols_seen, user_agent};
use crate::web::platform::scope;
use crate::web::platform::timers::{sleep_ms, yield_to_event_loop};

/// How often the run's [`watchdog`] looks for requests that fell idle past the timeout.
const WATCHDOG_TICK_MS: f64 = 250.0;

/// Warms the connections up (unless the user turned that off), runs every planned request with
/// `concurrency` slots, and builds the artifact. A failed warm-up ends the run before any
/// measured request, with the reason.
pub async fn execute(live: Rc<LiveRun>, setup: Rc<RunSetup>) -> Result<ArtifactV1, String> {
    let clock = live.clock.clone();
    spawn_local(watchdog(live.clone(), setup.config.timeout_s * 1000.0));
    let timer_resolution_ms = clock.measure_resolution_ms();
    let urls = setup.config.request_urls();
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
    let conversations = setup
        .plan
        .workload()
        .is_some_and(|workload| workload.has_conversations());
    if conversations {
        run_sessions(&live, &setup, &urls).await;
    } else if setup.plan.arrival_times_ms().is_some() {
        run_open_loop(&live, &setup, &prompt_spec, &urls).await;
    } else {
        run_slots(&live, &setup, &prompt_spec, &urls).await;
    }
    let finished_ms = clock.now_ms();
    live.finished_ms.set(Some(finished_ms));
    let wall_seconds = (finished_ms - run_started_ms) / 1000.0;
    let finished_unix_ns = clock.unix_ns_at(finished_ms);

    let mut outcomes = live.outcomes.borrow().clone();
    for outcome in &mut outcomes {
        if let Some(facts) = live.dispatch.borrow().get(&outcome.request_index()) {
            outcome.set_dispatch(facts);
        }
    }
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
    .with_dry_run(dry_run_requests)
    .with_context_calibration(setup.plan.calibration().cloned());
    let timing = RunTiming {
        started_at_unix_ns: started_unix_ns,
        finished_at_unix_ns: finished_unix_ns,
        wall_seconds,
    };
    build_artifact(&setup.config, &setup.plan, outcomes, timing, Some(client))
        .map_err(|err| format!("the run finished but its artifact could not be built: {err}"))
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
        // waiting when the previous request was sent: a `fetch()` call holds the thread, and a
        // wave sent from one task would hold every read behind it (docs/design/measurement.md,
        // *Sending*). A slot takes the sending turn, then yields to the event loop (a message to
        // itself, which runs after the tasks queued before it: the reads); everything from here
        // to its `fetch()` call is synchronous, so the next slot yields only once this one has
        // sent. The index is taken inside the turn, so requests are sent in index order.
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

/// Aborts every running request, warm-up or measured, on which no data has arrived for
/// `timeout_ms` (the reference tool's timeout is likewise a per-read socket timeout, not a total
/// deadline), until the run has finished. One timer for the whole run, looking every
/// [`WATCHDOG_TICK_MS`] (or a quarter of a shorter timeout): a timer per request would wake a
/// whole wave in the same instant and hold the measuring thread while reads are due.
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
