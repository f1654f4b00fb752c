//! One measurement as the page runs it, for a single run and for each step of a sweep alike:
//! plan it, start it on the chosen thread, copy its live numbers into the page a few times a
//! second, and file its artifact in the results and the library.

use std::cell::Cell;
use std::rc::Rc;
use std::sync::Arc;

use leptos::prelude::*;
use leptos::task::spawn_local;
use leptos::wasm_split::wasm_split;

use crate::core::config::choices::{LiveView, PrefixCacheReset};
use crate::core::config::settings::RunConfig;
use crate::core::config::slo::SloSpec;
use crate::core::live::LiveSnapshot;
use crate::core::plan::workload::WorkloadRequests;
use crate::core::plan::RunPlan;
use crate::core::present::capacity::{capacity_point, CapacityPoint};
use crate::core::read::opened::OpenedArtifact;
use crate::core::schema::calibration::ContextCalibration;
use crate::core::schema::ArtifactV1;
use crate::core::slo::{judge_artifact, judge_opened, judge_rows, slo_block};
use crate::core::telemetry::beside::attach_beside_client;
use crate::core::telemetry::reset::{reset_block, RunFacts};

use crate::web::measure::live_run::RunSetup;
use crate::web::platform::clock::Clock;
use crate::web::platform::scope;
use crate::web::platform::timers::sleep_ms;
use crate::web::run::checkpoint::Checkpoints;
use crate::web::run::host::Measurement;
use crate::web::run::keep;
use crate::web::run::metrics::MetricsScrape;
use crate::web::run::reset::{reset_prefix_cache, ResetCancel};
use crate::web::state::error::RunError;
use crate::web::state::library::Library;
use crate::web::state::AppState;

/// How often the live charts redraw during a run, at most: each redraw is main-thread work,
/// and a chart of the rows so far changes little in a second.
pub const LIVE_CHART_REFRESH_MS: f64 = 1_000.0;

/// How often a cool-down looks for a cancel and updates its countdown.
const COOLDOWN_TICK_MS: f64 = 100.0;

/// What every run of one press of Run shares: the page, the clock, what the endpoint check
/// found and the key.
pub struct RunContext {
    /// The page's state.
    pub state: AppState,
    /// Where finished runs are filed.
    pub library: Library,
    /// The page's clock.
    pub clock: Clock,
    /// The context window `/models` reported, if any.
    pub discovered_max_model_len: Option<u64>,
    /// The key, when one was given.
    pub api_key: Option<String>,
    /// The SLO set when Run was pressed: recorded in each artifact's `slo` block.
    pub slo: Option<SloSpec>,
    /// The context calibration made before the first run, when the form asks for one: every
    /// run's prompts are sized by it.
    pub calibration: Option<ContextCalibration>,
    /// How many measurements this press of Run has started: the first is the one
    /// `reset_prefix_cache=before_run` resets before.
    pub runs_started: Cell<u64>,
    /// The key the last measured run's checkpoint is kept under, for its artifact to take
    /// its place when it is filed ([`Checkpoints`]).
    pub checkpoint: Cell<Option<f64>>,
}

impl RunContext {
    /// Waits `ms` between two runs (steps of a sweep, or repeats), counting down on the page;
    /// false, at once or mid-way, when Cancel was pressed.
    pub async fn cool_down(&self, ms: f64) -> bool {
        let state = self.state;
        let until = self.clock.now_ms() + ms;
        loop {
            if state.cancel_requested().get_untracked() {
                state.cooling(None);
                return false;
            }
            let left = until - self.clock.now_ms();
            if left <= 0.0 {
                state.cooling(None);
                return true;
            }
            state.cooling(Some(left / 1000.0));
            sleep_ms(left.min(COOLDOWN_TICK_MS)).await;
        }
    }

    /// Plans `config`, measures it on the chosen thread with its live numbers shown, and returns
    /// its artifact or why there is none.
    pub async fn measure(&self, config: RunConfig) -> Result<ArtifactV1, RunError> {
        let state = self.state;
        let mut plan = plan_run(&config, self.discovered_max_model_len, state)?;
        if let (Some(calibration), None) = (&self.calibration, plan.workload()) {
            plan = plan.with_calibration(calibration.clone());
        }
        let quiet = config.client.live_view == LiveView::End;
        // The plan's settings are the run's: a workload's run records the synthetic prompt's
        // settings as unused.
        let checkpoint_plan = plan.clone();
        let setup = RunSetup {
            config: plan.config().clone(),
            plan,
            api_key: self.api_key.clone(),
        };
        // The prefix cache emptied before the warm-up (and before the metrics' baseline, so the
        // counters count from the emptied cache); a failed reset stops before anything is sent.
        let run_index = self.runs_started.get();
        self.runs_started.set(run_index + 1);
        let policy = setup.config.client.reset_prefix_cache;
        let reset = match setup.config.prefix_cache_reset_route() {
            Some(Ok(route)) if policy.resets_before(run_index) => {
                // Cancel stops the reset in flight, and the run then sends nothing.
                let cancel = Rc::new(ResetCancel::default());
                let stop = cancel.clone();
                state.resetting_cache(Rc::new(move || stop.cancel()));
                let api_key = self.api_key.as_deref();
                Some(
                    reset_prefix_cache(&setup.config, &route, api_key, &self.clock, &cancel)
                        .await?,
                )
            }
            Some(Err(reason)) => return Err(RunError::CacheReset(reason.to_string())),
            Some(Ok(_)) | None => None,
        };
        // The server's metrics: a baseline before the warm-up, then beside the run.
        let check = self.state.metrics_check().get_untracked();
        let scrape = MetricsScrape::start(&setup.config, self.clock.clone(), check.as_ref());
        let (live, result) =
            match Measurement::start(self.clock.clone(), setup, self.discovered_max_model_len) {
                Ok(started) => started,
                Err(error) => {
                    if let Some(scrape) = &scrape {
                        scrape.stop();
                    }
                    return Err(error);
                }
            };
        if let Some(scrape) = &scrape {
            spawn_local(scrape_after_warmup(live.clone(), scrape.clone()));
        }
        let cancel = {
            let live = live.clone();
            Rc::new(move || live.cancel())
        };
        let shown_before = state.snapshot().get_untracked();
        state.measuring(cancel, live.snapshot(), quiet);
        let polling = (!quiet).then(|| poll_live(live.clone(), state, self.slo.clone()));
        let checkpoints = Checkpoints::start(
            live.clone(),
            &checkpoint_plan,
            self.clock.clone(),
            self.library,
        );
        let mut result = result.await;
        live.refresh();
        let snapshot = match &result {
            // Cancelled while its worker started: this run sent nothing, so the page shows what
            // it showed before it, cancelled, as after a cancel during the reset.
            Err(error) if error.cancelled_before_measuring() => {
                if let Some(polling) = &polling {
                    polling.set(false);
                }
                LiveSnapshot {
                    cancelled: true,
                    ..shown_before
                }
            }
            _ => live.snapshot(),
        };
        state.live_update(snapshot, None, None);
        self.checkpoint.set(None);
        if let Some(checkpoints) = checkpoints {
            match &result {
                Ok(_) => self.checkpoint.set(checkpoints.ended().await),
                Err(error) => checkpoints.failed(error.to_string()).await,
            }
        }
        if let Some(scrape) = scrape {
            match result.as_mut() {
                Ok(artifact) => {
                    let started = artifact.started_at_unix_ns as f64 / 1e6;
                    let finished = artifact.finished_at_unix_ns as f64 / 1e6;
                    if artifact.completed > 0 {
                        scrape.api_answered_at(&artifact.base_url);
                    }
                    let mut block = scrape.finish(started, finished).await;
                    attach_beside_client(&mut block, &artifact.metrics, &artifact.request_timings);
                    artifact.server_metrics = Some(block);
                }
                Err(_) => scrape.stop(),
            }
        }
        if let (Ok(artifact), false) = (result.as_mut(), policy == PrefixCacheReset::Off) {
            let started = artifact.started_at_unix_ns as f64 / 1e6;
            let reset = reset.map(|mut reset| {
                reset.t_ms -= started;
                reset
            });
            let block = reset_block(policy, reset, &RunFacts::of(artifact));
            artifact.prefix_cache_reset = Some(block);
        }
        result
    }

    /// Shows a finished run in the results and adds it to the library, so it is charted and
    /// compared with saved artifacts exactly like a dropped file; returns it with its point of
    /// a capacity curve, read from the same loaded copy.
    /// With an SLO set at the start, the artifact records it and its result (the `slo` block).
    /// The page also records whether a service worker controlled it (only the page can tell).
    /// An artifact that cannot be written as text (a number JSON cannot hold) is not filed, and
    /// the error says so.
    pub async fn file(
        &self,
        mut artifact: ArtifactV1,
    ) -> Result<(Rc<ArtifactV1>, Option<CapacityPoint>), RunError> {
        if let Some(client) = artifact.client.as_mut() {
            if scope::service_worker_controlled() {
                client.isolation_service_worker = Some(true);
            }
        }
        if artifact.slo.is_none() {
            self.hold_to_slo(&mut artifact);
        }
        let text = artifact
            .to_json_text()
            .map_err(|error| RunError::Artifact(error.to_string()))?;
        let point = keep_in_library(
            self.library,
            artifact.file_name(),
            text,
            self.slo.clone(),
            self.checkpoint.take(),
        )
        .await?;
        let artifact = Rc::new(artifact);
        self.state.show_run(artifact.clone());
        Ok((artifact, point))
    }
}

/// Opens the finished run's file as the library reads it, keeps it there (in the place of its
/// checkpoint), and gives its capacity point, judged against the run's SLO (a split point: the
/// results part of the wasm, which the run's own code does not need).
#[wasm_split(results, wasm_split_path = ::leptos::wasm_split, fallible)]
fn keep_in_library(
    library: Library,
    file_name: String,
    text: String,
    slo: Option<SloSpec>,
    checkpoint: Option<f64>,
) -> Result<Option<CapacityPoint>, RunError> {
    let opened = OpenedArtifact::from_text(&file_name, &text);
    let mut point = capacity_point(&opened);
    if let (Some(spec), Some(point)) = (&slo, point.as_mut()) {
        point.slo = judge_opened(&spec.slo, &opened).ok();
    }
    keep::add_run(library, &file_name, &text, opened, checkpoint);
    Ok(point)
}

/// The plan of `config` with the page's workload, if one is chosen: refused, with what to do,
/// when the workload cannot be sent (it is being read, it was refused, or its settings do not
/// fit it).
pub fn plan_run(
    config: &RunConfig,
    discovered_max_model_len: Option<u64>,
    state: AppState,
) -> Result<RunPlan, RunError> {
    let workload = state.workload_for_run().map_err(RunError::Plan)?;
    let requests = match workload {
        None => None,
        Some(workload) => {
            let requests = WorkloadRequests::plan(&workload, config)
                .map_err(|error| RunError::Plan(error.to_string()))?;
            Some(Arc::new(requests))
        }
    };
    RunPlan::for_run(config, discovered_max_model_len, requests)
        .map_err(|error| RunError::Plan(error.to_string()))
}

impl RunContext {
    /// Records the run's SLO and what it says of the run in the artifact's `slo` block, when
    /// an SLO was set (a sweep reads it before deciding its next step).
    pub fn hold_to_slo(&self, artifact: &mut ArtifactV1) {
        let Some(spec) = &self.slo else {
            return;
        };
        let outcome = judge_artifact(&spec.slo, artifact);
        artifact.slo = Some(slo_block(spec, &outcome));
    }
}

/// Asks for a scrape as soon as the page hears that the warm-up has ended, so the server's
/// counters count from a sample that leaves the warm-up out.
async fn scrape_after_warmup(live: Rc<Measurement>, scrape: Rc<MetricsScrape>) {
    while live.warming_up() && !live.is_finished() {
        sleep_ms(WARMUP_WATCH_MS).await;
    }
    scrape.want_now();
}

/// How often [`scrape_after_warmup`] looks whether the warm-up has ended.
const WARMUP_WATCH_MS: f64 = 20.0;

/// How often the live numbers are refreshed: a few times a second is plenty for a person, and
/// every refresh is main-thread work that competes for the CPU with the thread taking the
/// measurements (on the same thread in main-thread mode, on a shared core in worker mode).
const LIVE_REFRESH_MS: f64 = 250.0;

/// Copies the run's numbers into the page every [`LIVE_REFRESH_MS`], and the rows for the live
/// charts at most every [`LIVE_CHART_REFRESH_MS`], until the run ends. A timer, not an
/// animation-frame loop: a page that asks for every frame makes the browser produce 60 frames a
/// second even when nothing changed: CPU time taken from the cores the measurement shares.
/// With an SLO, the requests so far are judged at each refresh too. Returns its switch: set to
/// false, it stops without another refresh (a run that sent nothing leaves the page's numbers
/// as they were).
fn poll_live(live: Rc<Measurement>, state: AppState, slo: Option<SloSpec>) -> Rc<Cell<bool>> {
    let polling = Rc::new(Cell::new(true));
    let still_polling = polling.clone();
    spawn_local(async move {
        let mut charts_at = f64::NEG_INFINITY;
        loop {
            if !still_polling.get() {
                return;
            }
            live.refresh();
            let finished = live.is_finished();
            let snapshot = live.snapshot();
            let judged = slo.as_ref().map(|spec| {
                let (rows, _) = live.views();
                judge_rows(&spec.slo, &rows, snapshot.failed, Some(snapshot.elapsed_ms))
            });
            let now_ms = live.now_ms();
            let rows = (state.live_charts().get_untracked()
                && (finished || now_ms - charts_at >= LIVE_CHART_REFRESH_MS))
                .then(|| {
                    charts_at = now_ms;
                    live.views().into()
                });
            state.live_update(snapshot, judged, rows);
            if finished {
                return;
            }
            sleep_ms(LIVE_REFRESH_MS).await;
        }
    });
    polling
}
