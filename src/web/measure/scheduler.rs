//! The scheduler: a run's stages in order, each in a module of its own. Before the wire
//! ([`before_the_wire`]: bodies, rehearsal, dry run); the unmeasured warm-up ([`warm_up`]); the
//! measured run through one of three loops, the closed loop's `concurrency` slots
//! ([`run_slots`]), the open loop's arrival schedule ([`run_open_loop`]) or the conversations'
//! sessions ([`run_sessions`]), each turning every request into a row or a classified failure;
//! and after it, what the browser's Resource Timing says about each request's transport
//! ([`account_transport`]) and the artifact. A watchdog aborts requests that fall idle.
//!
//! It runs on whichever thread measures, the measurement worker or the page, and renders
//! nothing: the page reads [`LiveRun::progress`] and [`LiveRun::finished_since`] a few times a
//! second (directly, or through the worker's messages), so the UI can never slow a read
//! callback down by more than that copy.

use std::rc::Rc;

use wasm_bindgen_futures::spawn_local;

use crate::core::artifact::build::{build_artifact, RunTiming};
use crate::core::config::choices::MeasurementThread;
use crate::core::schema::client::{ClientBlock, ClientSseCounts, ClientTransport};
use crate::core::schema::ArtifactV1;

use crate::web::measure::live_run::{LiveRun, RunSetup};
use crate::web::measure::open_loop::run_open_loop;
use crate::web::measure::prepare::{before_the_wire, Prepared};
use crate::web::measure::resource_timing::account_transport;
use crate::web::measure::sessions::run_sessions;
use crate::web::measure::slots::run_slots;
use crate::web::measure::transport::{AbortCause, RequestControl};
use crate::web::measure::warmup::warm_up;
use crate::web::platform::clock::{cross_origin_isolated, protocols_seen, user_agent};
use crate::web::platform::scope;
use crate::web::platform::timers::sleep_ms;

/// How often the run's [`watchdog`] looks for requests that fell idle past the timeout.
const WATCHDOG_TICK_MS: f64 = 250.0;

/// Runs a run's stages in order: before the wire, the warm-up (unless the user turned it off),
/// every planned request through the plan's loop, Resource Timing's account, and the artifact.
/// A failed warm-up ends the run before any measured request, with the reason.
pub async fn execute(live: Rc<LiveRun>, setup: Rc<RunSetup>) -> Result<ArtifactV1, String> {
    let clock = live.clock.clone();
    spawn_local(watchdog(live.clone(), setup.config.timeout_s * 1000.0));
    let timer_resolution_ms = clock.measure_resolution_ms();
    let urls = setup.config.request_urls();
    let Prepared {
        prompt_spec,
        dry_run_requests,
    } = before_the_wire(&live, &setup, &urls).await;
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
