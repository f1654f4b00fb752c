//! The page's state, below both the components (`ui`) and the page's side of a run (`run`):
//! [`AppState`], one value provided through context whose fields are private, read through
//! read-only signals and changed only through its verbs, so a run's phase changes in one place;
//! the [`library`] of loaded files; and [`error::RunError`], why a run has no artifact.
//!
//! It imports neither `ui` nor `run`: what it knows of a run in progress is a way to cancel it,
//! which `run` hands it.

pub mod error;
pub mod library;
pub mod workload;

use std::rc::Rc;
use std::sync::Arc;

use leptos::prelude::*;

use crate::core::config::fields::FieldKey;
use crate::core::config::form::RunForm;
use crate::core::config::link::QueryNotice;
use crate::core::config::models::ModelsInfo;
use crate::core::config::settings::MAX_REQUESTS;
use crate::core::config::slo::SloSpec;
use crate::core::live::{LiveRows, LiveSnapshot};
use crate::core::present::capacity::CapacityPoint;
use crate::core::present::sweep_status::{SweepEnding, SweepPosition, SweepStatus};
use crate::core::read::opened::basis::TimeBasis;
use crate::core::read::opened::metrics::MetricKind;
use crate::core::schema::sweep::StopReason;
use crate::core::schema::ArtifactV1;
use crate::core::slo::SloOutcome;
use crate::core::telemetry::scrape::MetricsCheck;

use crate::core::workload::read::ReadOptions;
use crate::core::workload::Workload;
use crate::web::state::error::RunError;
use crate::web::state::workload::{WorkloadSource, WorkloadState};

/// Where the run view is.
#[derive(Clone, Debug, PartialEq)]
pub enum RunPhase {
    /// Nothing running; the form is editable.
    Idle,
    /// Checking the endpoint (and calibrating) before the run.
    Preflight,
    /// Emptying the server's prefix cache before a run measures (`reset_prefix_cache`);
    /// Cancel stops it, and the run then sends nothing.
    Resetting,
    /// Requests are in flight.
    Running,
    /// The run ended (completed or cancelled) and its artifact is ready.
    Finished,
    /// The run could not start, or ended without an artifact; the error says why.
    Failed(RunError),
    /// Cancel ended the run before it measured anything (while the server's prefix cache was
    /// being emptied, or while the measurement worker was starting); the text says what was
    /// and was not sent.
    Cancelled(String),
}

impl RunPhase {
    /// The `data-state` value tests and scripts read.
    pub fn as_str(&self) -> &'static str {
        match self {
            RunPhase::Idle => "idle",
            RunPhase::Preflight => "preflight",
            RunPhase::Resetting => "resetting",
            RunPhase::Running => "running",
            RunPhase::Finished => "finished",
            RunPhase::Failed(_) => "error",
            RunPhase::Cancelled(_) => "cancelled",
        }
    }

    /// Whether a run is being started or is running (the form's Run does nothing then).
    pub fn is_busy(&self) -> bool {
        matches!(
            self,
            RunPhase::Preflight | RunPhase::Resetting | RunPhase::Running
        )
    }

    /// Whether Cancel has something to stop: a reset before the run, or the run.
    pub fn is_cancellable(&self) -> bool {
        matches!(self, RunPhase::Resetting | RunPhase::Running)
    }
}

/// A finished run kept on the page until the next one starts.
#[derive(Clone, Debug)]
pub struct FinishedRun {
    /// The artifact as built by the core.
    pub artifact: Rc<ArtifactV1>,
}

/// Where a sweep is (docs/guide/load.md).
#[derive(Clone, Debug)]
pub struct SweepProgress {
    /// The `sweep` setting it runs.
    pub spec: String,
    /// The steps it plans.
    pub step_count: usize,
    /// The runs of each step (the `repeats` setting).
    pub repeats: u64,
    /// The run running or about to (or, in a cool-down, the one before it): its step, the
    /// step's variable and value, and its repeat.
    pub current: Option<SweepPosition>,
    /// The finished runs (one a step without repeats), in order.
    pub steps: Vec<SweepStepRecord>,
    /// The sweep ended: every step ran, or why it stopped.
    pub ended: Option<SweepEnd>,
}

impl SweepProgress {
    /// How many steps have at least one finished run.
    pub fn steps_reached(&self) -> usize {
        let mut indexes: Vec<u64> = self
            .steps
            .iter()
            .filter_map(|step| step.artifact.sweep.as_ref().map(|sweep| sweep.step_index))
            .collect();
        indexes.sort_unstable();
        indexes.dedup();
        indexes.len()
    }

    /// Where the sweep is, as the core words it: `cooling_s` left of a cool-down, and whether
    /// Cancel was pressed.
    pub fn status(&self, cooling_s: Option<f64>, cancelled: bool) -> SweepStatus<'_> {
        SweepStatus {
            spec: &self.spec,
            step_count: self.step_count,
            repeats: self.repeats,
            runs_filed: self.steps.len(),
            steps_reached: self.steps_reached(),
            current: self.current,
            ended: self.ended.as_ref().map(|end| match end {
                SweepEnd::Complete => SweepEnding::Complete,
                SweepEnd::Stopped(_, reason) => SweepEnding::Stopped(reason),
            }),
            cooling_s,
            cancelled,
        }
    }
}

/// A finished run of a sweep (a step, or one repeat of a step): its artifact, and its point of
/// the capacity curve (read once, when it is filed).
#[derive(Clone, Debug)]
pub struct SweepStepRecord {
    /// The run's artifact, with its `sweep` block (and its `repeat` block with repeats).
    pub artifact: Rc<ArtifactV1>,
    /// What it carried and its latencies; `None` without a wall time.
    pub point: Option<CapacityPoint>,
}

/// How a sweep ended.
#[derive(Clone, Debug, PartialEq)]
pub enum SweepEnd {
    /// Every planned step ran.
    Complete,
    /// A stop rule, a cancel or a step that could not run ended it; the text says more.
    Stopped(StopReason, String),
}

/// What Cancel does to the run in progress: `run` hands one over when a measurement starts.
pub type Canceller = Rc<dyn Fn()>;

/// The page's shared state. Components read it through the read-only signals of its getters
/// and change it through its verbs; the page's side of a run does the same.
#[derive(Clone, Copy)]
pub struct AppState {
    form: RwSignal<RunForm>,
    query_notices: RwSignal<Vec<QueryNotice>>,
    api_key: RwSignal<String>,
    remember_key: RwSignal<bool>,
    key_storage_note: RwSignal<Option<String>>,
    models: RwSignal<Option<ModelsInfo>>,
    metrics_check: RwSignal<Option<MetricsCheck>>,
    preflight_error: RwSignal<Option<(String, bool)>>,
    phase: RwSignal<RunPhase>,
    canceller: StoredValue<Option<Canceller>, LocalStorage>,
    snapshot: RwSignal<LiveSnapshot>,
    live_charts: RwSignal<bool>,
    quiet_run: RwSignal<bool>,
    live_rows: RwSignal<LiveRows>,
    finished: RwSignal<Option<FinishedRun>, LocalStorage>,
    sweep: RwSignal<Option<SweepProgress>, LocalStorage>,
    repeat_group: RwSignal<Vec<Rc<ArtifactV1>>, LocalStorage>,
    cancel_requested: RwSignal<bool>,
    cooling_s: RwSignal<Option<f64>>,
    slo: Memo<Result<Option<SloSpec>, String>>,
    slo_note: RwSignal<Option<String>>,
    live_slo: RwSignal<Option<SloOutcome>>,
    basis: RwSignal<TimeBasis>,
    latency_metric: RwSignal<Option<MetricKind>>,
    workload_source: RwSignal<Option<WorkloadSource>, LocalStorage>,
    /// Which reading of the workload is current: a reading that another has replaced
    /// changes nothing when it ends.
    workload_reading: RwSignal<u64>,
    workload: RwSignal<WorkloadState>,
}

impl AppState {
    /// The page's state on its first render: the form and notices its link gave, and the key
    /// this browser remembers, if the user asked it to.
    pub fn new(form: RunForm, notices: Vec<QueryNotice>, remembered_key: Option<String>) -> Self {
        let form = RwSignal::new(form);
        Self {
            form,
            query_notices: RwSignal::new(notices),
            remember_key: RwSignal::new(remembered_key.is_some()),
            key_storage_note: RwSignal::new(None),
            api_key: RwSignal::new(remembered_key.unwrap_or_default()),
            models: RwSignal::new(None),
            metrics_check: RwSignal::new(None),
            preflight_error: RwSignal::new(None),
            phase: RwSignal::new(RunPhase::Idle),
            canceller: StoredValue::new_local(None),
            snapshot: RwSignal::new(LiveSnapshot::default()),
            live_rows: RwSignal::new(LiveRows::default()),
            live_charts: RwSignal::new(false),
            quiet_run: RwSignal::new(false),
            finished: RwSignal::new_local(None),
            sweep: RwSignal::new_local(None),
            repeat_group: RwSignal::new_local(Vec::new()),
            cancel_requested: RwSignal::new(false),
            cooling_s: RwSignal::new(None),
            slo: Memo::new(move |_| form.with(read_slo)),
            slo_note: RwSignal::new(None),
            live_slo: RwSignal::new(None),
            basis: RwSignal::new(TimeBasis::Measured),
            latency_metric: RwSignal::new(None),
            workload_source: RwSignal::new_local(None),
            workload_reading: RwSignal::new(0),
            workload: RwSignal::new(WorkloadState::None),
        }
    }

    /// The state provided to the page's components.
    pub fn expect() -> Self {
        expect_context::<AppState>()
    }
}

/// What the page shows: read-only signals, one per part of the state.
impl AppState {
    /// The form's raw field text (mirrored into the URL query).
    pub fn form(&self) -> ReadSignal<RunForm> {
        self.form.read_only()
    }

    /// Notices from reading the page's URL query.
    pub fn query_notices(&self) -> ReadSignal<Vec<QueryNotice>> {
        self.query_notices.read_only()
    }

    /// The API key: in memory only, unless [`Self::remember_key`] is on.
    pub fn api_key(&self) -> ReadSignal<String> {
        self.api_key.read_only()
    }

    /// The key as a request sends it: `None` when the field is empty.
    pub fn api_key_for_requests(&self) -> Option<String> {
        let key = self.api_key.get_untracked();
        (!key.is_empty()).then_some(key)
    }

    /// Whether the key is kept in this browser's local storage.
    pub fn remember_key(&self) -> ReadSignal<bool> {
        self.remember_key.read_only()
    }

    /// Why the browser did not keep (or forget) the key as asked, when it did not.
    pub fn key_storage_note(&self) -> ReadSignal<Option<String>> {
        self.key_storage_note.read_only()
    }

    /// What the endpoint's `/models` said, when asked.
    pub fn models(&self) -> ReadSignal<Option<ModelsInfo>> {
        self.models.read_only()
    }

    /// The last endpoint-check problem, if any, and whether CORS help applies.
    pub fn preflight_error(&self) -> ReadSignal<Option<(String, bool)>> {
        self.preflight_error.read_only()
    }

    /// Where the run view is.
    pub fn phase(&self) -> ReadSignal<RunPhase> {
        self.phase.read_only()
    }

    /// The latest numbers of the run in progress.
    pub fn snapshot(&self) -> ReadSignal<LiveSnapshot> {
        self.snapshot.read_only()
    }

    /// Whether charts are drawn while a run goes on (off by default: every redraw is
    /// main-thread time that can delay the timestamp of a read arriving meanwhile).
    pub fn live_charts(&self) -> ReadSignal<bool> {
        self.live_charts.read_only()
    }

    /// Whether the run in progress shows nothing until it ends (its `live_view` is `end`).
    pub fn quiet_run(&self) -> ReadSignal<bool> {
        self.quiet_run.read_only()
    }

    /// The finished requests of the run in progress, for the live charts.
    pub fn live_rows(&self) -> ReadSignal<LiveRows> {
        self.live_rows.read_only()
    }

    /// The last finished run.
    pub fn finished(&self) -> ReadSignal<Option<FinishedRun>, LocalStorage> {
        self.finished.read_only()
    }

    /// The sweep in progress or last run: where it is, and its finished steps.
    pub fn sweep(&self) -> ReadSignal<Option<SweepProgress>, LocalStorage> {
        self.sweep.read_only()
    }

    /// The artifacts of the repeat group last run, by repeat index (empty when the last run
    /// was not repeated).
    pub fn repeat_group(&self) -> ReadSignal<Vec<Rc<ArtifactV1>>, LocalStorage> {
        self.repeat_group.read_only()
    }

    /// Whether Cancel was pressed since Run: no further step of a sweep, and no further repeat,
    /// starts.
    pub fn cancel_requested(&self) -> ReadSignal<bool> {
        self.cancel_requested.read_only()
    }

    /// Seconds of cool-down left before the next step of a sweep or the next repeat, while it
    /// cools down.
    pub fn cooling_s(&self) -> ReadSignal<Option<f64>> {
        self.cooling_s.read_only()
    }

    /// The SLO the form asks for (its `slo`, `slo_target` and `sweep_min_attainment` fields),
    /// or why it cannot be read; `Ok(None)` without one. Every view that judges reads this.
    pub fn slo(&self) -> Memo<Result<Option<SloSpec>, String>> {
        self.slo
    }

    /// The SLO in force, if the form names a readable one.
    pub fn current_slo(&self) -> Option<SloSpec> {
        self.slo.get().ok().flatten()
    }

    /// Where the SLO shown came from, when a dropped file restored it (or why it could not).
    pub fn slo_note(&self) -> ReadSignal<Option<String>> {
        self.slo_note.read_only()
    }

    /// What the SLO says of the run in progress so far.
    pub fn live_slo(&self) -> ReadSignal<Option<SloOutcome>> {
        self.live_slo.read_only()
    }

    /// The basis the results show times on: as measured (the default) or from the wire.
    pub fn basis(&self) -> ReadSignal<TimeBasis> {
        self.basis.read_only()
    }

    /// The metric the charts' latency section shows (`None`: its default, TTFT).
    pub fn latency_metric(&self) -> ReadSignal<Option<MetricKind>> {
        self.latency_metric.read_only()
    }
}

/// What the user changes in the form and the results.
impl AppState {
    /// Field `key` now reads `text`. Editing an SLO field drops the note of where a restored
    /// SLO came from: it no longer describes the fields.
    pub fn edit_field(&self, key: FieldKey, text: impl Into<String>) {
        if matches!(
            key,
            FieldKey::Slo | FieldKey::SloTarget | FieldKey::SweepMinAttainment
        ) {
            self.slo_note.set(None);
        }
        let text = text.into();
        self.form.update(|form| form.set(key, text));
    }

    /// A dropped file's SLO fills the SLO fields, with a note of where it came from (or why it
    /// could not).
    pub fn restore_slo(&self, fields: Vec<(FieldKey, String)>, note: String) {
        if !fields.is_empty() {
            self.form.update(|form| {
                for (key, text) in fields {
                    form.set(key, text);
                }
            });
        }
        self.slo_note.set(Some(note));
    }

    /// The key field now reads `key`.
    pub fn set_api_key(&self, key: String) {
        self.api_key.set(key);
    }

    /// Whether this browser keeps the key.
    pub fn set_remember_key(&self, remember: bool) {
        self.remember_key.set(remember);
    }

    /// The browser kept (or forgot) the key as asked (`None`), or why it did not.
    pub fn key_storage_outcome(&self, note: Option<String>) {
        if self.key_storage_note.get_untracked() != note {
            self.key_storage_note.set(note);
        }
    }

    /// Draw charts during runs, or not.
    pub fn set_live_charts(&self, on: bool) {
        self.live_charts.set(on);
    }

    /// Show times on `basis`.
    pub fn set_basis(&self, basis: TimeBasis) {
        self.basis.set(basis);
    }

    /// Chart `metric` in the latency section.
    pub fn set_latency_metric(&self, metric: MetricKind) {
        self.latency_metric.set(Some(metric));
    }
}

/// The endpoint check.
impl AppState {
    /// The check answered: its models, and the model and engine it filled into empty fields.
    pub fn endpoint_checked(
        &self,
        models: ModelsInfo,
        model: Option<String>,
        engine: Option<String>,
    ) {
        self.preflight_error.set(None);
        if model.is_some() || engine.is_some() {
            self.form.update(|form| {
                if let Some(model) = model {
                    form.set(FieldKey::Model, model);
                }
                if let Some(engine) = engine {
                    form.set(FieldKey::Engine, engine);
                }
            });
        }
        self.models.set(Some(models));
    }

    /// What the check found at the server's metrics URL (`None`: `server_metrics` is off).
    pub fn metrics_checked(&self, check: Option<MetricsCheck>) {
        self.metrics_check.set(check);
    }

    /// What the last endpoint check found at the server's metrics URL, when it looked.
    pub fn metrics_check(&self) -> ReadSignal<Option<MetricsCheck>> {
        self.metrics_check.read_only()
    }

    /// The check could not be made or failed: `summary` says why, `cors_help` whether the CORS
    /// recipes apply.
    pub fn endpoint_check_failed(&self, summary: String, cors_help: bool) {
        self.models.set(None);
        self.preflight_error.set(Some((summary, cors_help)));
    }
}

/// A run's phases, changed here and nowhere else.
impl AppState {
    /// Run was pressed: the check and the plan start. False (and nothing changes) while a run
    /// is being started or running.
    pub fn begin_run(&self) -> bool {
        if self.phase.get_untracked().is_busy() {
            return false;
        }
        self.phase.set(RunPhase::Preflight);
        true
    }

    /// The run is about to measure: what the last run (or sweep) left in the results goes.
    /// Until then a run that cannot start leaves the last results shown.
    pub fn clear_last_run(&self) {
        self.finished.set(None);
        self.sweep.set(None);
        self.repeat_group.set(Vec::new());
        self.cancel_requested.set(false);
        self.cooling_s.set(None);
    }

    /// The server's prefix cache is being emptied before a measurement: Cancel now calls
    /// `cancel`, which stops the reset so that the run sends nothing.
    pub fn resetting_cache(&self, cancel: Canceller) {
        self.canceller.set_value(Some(cancel));
        self.phase.set(RunPhase::Resetting);
    }

    /// A measurement started: Cancel now calls `cancel`; the live numbers start from
    /// `snapshot`, and a `quiet` run (`live_view: end`) shows none until it ends.
    pub fn measuring(&self, cancel: Canceller, snapshot: LiveSnapshot, quiet: bool) {
        self.canceller.set_value(Some(cancel));
        self.snapshot.set(snapshot);
        self.quiet_run.set(quiet);
        self.live_slo.set(None);
        self.phase.set(RunPhase::Running);
    }

    /// The run in progress reports: its numbers, what the SLO says so far, and (when the live
    /// charts are due) its finished rows.
    pub fn live_update(
        &self,
        snapshot: LiveSnapshot,
        slo: Option<SloOutcome>,
        rows: Option<LiveRows>,
    ) {
        if slo.is_some() {
            self.live_slo.set(slo);
        }
        self.snapshot.set(snapshot);
        if let Some(rows) = rows {
            self.live_rows.set(rows);
        }
    }

    /// Cancel was pressed: a sweep starts no further step and a group of repeats no further
    /// repeat (a cool-down in progress ends), the measurement in flight stops
    /// sending, and a quiet run says it is cancelling (its worker's report comes later). A
    /// reset in flight is stopped; a group of repeats or a sweep that measured before it ends
    /// as cancelled.
    pub fn cancel_run(&self) {
        self.cancel_requested.set(true);
        if let Some(cancel) = self.canceller.get_value() {
            cancel();
            let resetting = self.phase.get_untracked() == RunPhase::Resetting;
            if resetting || self.quiet_run.get_untracked() {
                self.snapshot.update(|snapshot| snapshot.cancelled = true);
            }
        }
    }

    /// A run's artifact is ready: it is the one the results show.
    pub fn show_run(&self, artifact: Rc<ArtifactV1>) {
        self.finished.set(Some(FinishedRun { artifact }));
    }

    /// A repeat of the group in progress is filed: it joins the group's download.
    pub fn repeat_filed(&self, artifact: Rc<ArtifactV1>) {
        self.repeat_group.update(|group| group.push(artifact));
    }

    /// The run (or the sweep) ended with its artifacts filed.
    pub fn finish_run(&self) {
        self.canceller.set_value(None);
        self.phase.set(RunPhase::Finished);
    }

    /// Cancel ended the run before it measured anything; `note` says what was sent.
    pub fn cancelled_before_measuring(&self, note: String) {
        self.canceller.set_value(None);
        self.phase.set(RunPhase::Cancelled(note));
    }

    /// The run ended without an artifact, or could not start: `error` says why.
    pub fn fail(&self, error: RunError) {
        self.canceller.set_value(None);
        self.phase.set(RunPhase::Failed(error));
    }
}

/// A sweep's progress.
impl AppState {
    /// A sweep of `step_count` steps over `spec`, each run `repeats` times, begins.
    pub fn begin_sweep(&self, spec: String, step_count: usize, repeats: u64) {
        self.sweep.set(Some(SweepProgress {
            spec,
            step_count,
            repeats,
            current: None,
            steps: Vec::new(),
            ended: None,
        }));
    }

    /// The run at `position` (a step, or a repeat of it) is running.
    pub fn sweep_step_started(&self, position: SweepPosition) {
        self.sweep.update(|sweep| {
            if let Some(sweep) = sweep {
                sweep.current = Some(position);
            }
        });
    }

    /// A run of a step finished and is filed.
    pub fn sweep_step_filed(&self, step: SweepStepRecord) {
        self.sweep.update(|sweep| {
            if let Some(sweep) = sweep {
                sweep.steps.push(step);
            }
        });
    }

    /// The last finished run's artifact, if any.
    pub fn last_sweep_step(&self) -> Option<Rc<ArtifactV1>> {
        self.sweep.with_untracked(|sweep| {
            sweep
                .as_ref()
                .and_then(|sweep| sweep.steps.last().map(|step| step.artifact.clone()))
        })
    }

    /// The last run's artifact is now `artifact` (it records why the sweep stopped after it),
    /// in the sweep and, when it is the run shown, in the results.
    pub fn replace_last_sweep_step(&self, old: &Rc<ArtifactV1>, artifact: Rc<ArtifactV1>) {
        self.sweep.update(|sweep| {
            if let Some(step) = sweep.as_mut().and_then(|sweep| sweep.steps.last_mut()) {
                step.artifact = artifact.clone();
            }
        });
        let shown = self.finished.with_untracked(|finished| {
            finished
                .as_ref()
                .is_some_and(|run| Rc::ptr_eq(&run.artifact, old))
        });
        if shown {
            self.finished.set(Some(FinishedRun { artifact }));
        }
    }

    /// Seconds of cool-down left before the next step or repeat, or `None` when it is over.
    pub fn cooling(&self, left_s: Option<f64>) {
        self.cooling_s.set(left_s);
    }

    /// The sweep ended as `end`; it measured at least one step when it has any filed.
    pub fn end_sweep(&self, end: SweepEnd) -> bool {
        let mut measured_any = false;
        self.sweep.update(|sweep| {
            if let Some(sweep) = sweep {
                sweep.current = None;
                sweep.ended = Some(end);
                measured_any = !sweep.steps.is_empty();
            }
        });
        self.cooling_s.set(None);
        measured_any
    }
}

/// The form's SLO fields read as an SLO, their errors joined into one message.
pub fn read_slo(form: &RunForm) -> Result<Option<SloSpec>, String> {
    form.to_slo().map_err(|errors| {
        errors
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("; ")
    })
}

/// The workload file the next run sends (docs/guide/workloads.md).
impl AppState {
    /// The workload the next run sends.
    pub fn workload(&self) -> RwSignal<WorkloadState> {
        self.workload
    }

    /// The file chosen, if any, to read again when a setting needs it.
    pub fn workload_source(&self) -> Option<WorkloadSource> {
        self.workload_source.get_untracked()
    }

    /// The workload the next run sends, if one is ready; an error to show if one was chosen
    /// but cannot be used (nothing is sent then).
    pub fn workload_for_run(&self) -> Result<Option<Arc<Workload>>, String> {
        match self.workload.get_untracked() {
            WorkloadState::None => Ok(None),
            WorkloadState::Ready(workload, _) => Ok(Some(workload)),
            WorkloadState::Loading { what, .. } => Err(format!("{what}: wait until it is read")),
            WorkloadState::Refused(why) => Err(format!(
                "{why} (clear the workload to send synthetic prompts)"
            )),
        }
    }

    /// Reading `source` begins (`what` says how): the reading's number, which its progress
    /// and its end name.
    pub fn workload_reading(&self, source: WorkloadSource, what: String) -> u64 {
        self.workload_source.set(Some(source));
        self.workload.set(WorkloadState::Loading {
            what,
            read: 0,
            total: None,
        });
        self.workload_reading.update(|reading| *reading += 1);
        self.workload_reading.get_untracked()
    }

    /// Reading number `reading` has come `read` bytes of `total`.
    pub fn workload_progress(&self, reading: u64, read: u64, total: Option<u64>) {
        if reading != self.workload_reading.get_untracked() {
            return;
        }
        self.workload.update(|state| {
            if let WorkloadState::Loading {
                read: now,
                total: size,
                ..
            } = state
            {
                *now = read;
                *size = total;
            }
        });
    }

    /// Reading number `reading` found `workload` with `options`: the workload the next run
    /// sends. A file newly chosen (`chosen`) sets Requests to all of its requests (at most
    /// 10,000), and turns canaries off so the server receives the file's text as given (the
    /// field can turn them on again: then one marker line precedes each request's text).
    pub fn workload_read(
        &self,
        reading: u64,
        workload: Workload,
        options: ReadOptions,
        chosen: bool,
    ) {
        if reading != self.workload_reading.get_untracked() {
            return;
        }
        if chosen {
            let requests = workload.summary.turns.clamp(1, MAX_REQUESTS);
            self.form.update(|form| {
                form.set(FieldKey::Requests, requests.to_string());
                form.set(FieldKey::RequestCanaries, "false");
            });
        }
        self.workload
            .set(WorkloadState::Ready(Arc::new(workload), options));
    }

    /// A workload file could not be fetched or read at all (reading number `reading`, or
    /// none: before reading began).
    pub fn workload_failed(&self, reading: Option<u64>, why: String) {
        if reading.is_some_and(|reading| reading != self.workload_reading.get_untracked()) {
            return;
        }
        self.workload_source.set(None);
        self.workload.set(WorkloadState::Refused(why));
    }

    /// Back to synthetic prompts; a reading still going on changes nothing when it ends.
    pub fn clear_workload(&self) {
        self.workload_reading.update(|reading| *reading += 1);
        self.workload_source.set(None);
        self.workload.set(WorkloadState::None);
    }
}
