//! The page's shared state, provided once through context.

use std::rc::Rc;

use leptos::prelude::*;

use crate::core::artifact::schema::sweep::{StopReason, SweepVariable};
use crate::core::artifact::schema::ArtifactV1;
use crate::core::config::form::RunForm;
use crate::core::config::link::QueryNotice;
use crate::core::config::slo::SloSpec;
use crate::core::present::capacity::CapacityPoint;
use crate::core::read::loaded::basis::TimeBasis;
use crate::core::read::loaded::metrics::MetricKind;
use crate::core::slo::SloOutcome;

use crate::core::live::LiveRows;
use crate::core::live::LiveSnapshot;
use crate::web::run::host::Measurement;
use crate::web::run::preflight::ModelsInfo;

/// Where the run view is.
#[derive(Clone, Debug, PartialEq)]
pub enum RunPhase {
    /// Nothing running; the form is editable.
    Idle,
    /// Asking the endpoint for its models before the run.
    Preflight,
    /// Requests are in flight.
    Running,
    /// The run ended (completed or cancelled) and its artifact is ready.
    Finished,
    /// The run could not start or its artifact could not be built.
    Failed(String),
}

impl RunPhase {
    /// The `data-state` value tests and scripts read.
    pub fn as_str(&self) -> &'static str {
        match self {
            RunPhase::Idle => "idle",
            RunPhase::Preflight => "preflight",
            RunPhase::Running => "running",
            RunPhase::Finished => "finished",
            RunPhase::Failed(_) => "error",
        }
    }
}

/// A finished run kept on the page until the next one starts.
#[derive(Clone, Debug)]
pub struct FinishedRun {
    /// The artifact as built by the core.
    pub artifact: Rc<ArtifactV1>,
}

/// State shared by the run and results views.
#[derive(Clone, Copy)]
pub struct AppState {
    /// The form's raw field text (mirrored into the URL query).
    pub form: RwSignal<RunForm>,
    /// Notices from reading the page's URL query.
    pub query_notices: RwSignal<Vec<QueryNotice>>,
    /// The API key: in memory only, unless `remember_key` is ticked.
    pub api_key: RwSignal<String>,
    /// Whether the key is kept in this browser's local storage.
    pub remember_key: RwSignal<bool>,
    /// What the endpoint's `/models` said, when asked.
    pub models: RwSignal<Option<ModelsInfo>>,
    /// The last preflight problem, if any, and whether CORS help applies.
    pub preflight_error: RwSignal<Option<(String, bool)>>,
    /// Where the run view is.
    pub phase: RwSignal<RunPhase>,
    /// The run in progress (not reactive: polled by a timer a few times a second).
    pub live: StoredValue<Option<Rc<Measurement>>, LocalStorage>,
    /// The latest numbers of the run in progress.
    pub snapshot: RwSignal<LiveSnapshot>,
    /// Whether charts are drawn while a run goes on (off by default: every redraw is
    /// main-thread time that can delay the timestamp of a read arriving meanwhile).
    pub live_charts: RwSignal<bool>,
    /// Whether the run in progress shows nothing until it ends (its `live_view` is `end`): no
    /// counters, medians or charts are drawn meanwhile.
    pub quiet_run: RwSignal<bool>,
    /// The finished requests of the run in progress, for the live charts.
    pub live_rows: RwSignal<LiveRows>,
    /// The last finished run.
    pub finished: RwSignal<Option<FinishedRun>, LocalStorage>,
    /// The sweep in progress or last run: where it is, and its finished steps.
    pub sweep: RwSignal<Option<SweepProgress>, LocalStorage>,
    /// Cancel was pressed during the sweep in progress: no further step starts.
    pub sweep_cancelled: RwSignal<bool>,
    /// Seconds of cool-down left before a sweep's next step, while it cools down (apart from
    /// [`SweepProgress`], so the countdown redraws only the status line).
    pub sweep_cooling_s: RwSignal<Option<f64>>,
    /// The SLO the form asks for (its `slo`, `slo_target` and `sweep_min_attainment` fields),
    /// or why it cannot be read; `Ok(None)` without one. Every view that judges reads this.
    pub slo: Memo<Result<Option<SloSpec>, String>>,
    /// Where the SLO shown came from, when a dropped file restored it (or why it could not).
    pub slo_note: RwSignal<Option<String>>,
    /// What the SLO says of the run in progress so far (refreshed with its live numbers).
    pub live_slo: RwSignal<Option<SloOutcome>>,
    /// The basis the results show times on: as measured (the default) or from the wire.
    pub basis: RwSignal<TimeBasis>,
    /// The metric the charts' latency section shows (`None`: its default, TTFT); kept when
    /// another run is selected.
    pub latency_metric: RwSignal<Option<MetricKind>>,
}

/// Where a sweep is (docs/load.md).
#[derive(Clone, Debug)]
pub struct SweepProgress {
    /// The `sweep` setting it runs.
    pub spec: String,
    /// The steps it plans.
    pub step_count: usize,
    /// The step running or about to (from 0), its variable and value.
    pub current: Option<(usize, SweepVariable, f64)>,
    /// The finished steps, in order.
    pub steps: Vec<SweepStepRecord>,
    /// The sweep ended: every step ran, or why it stopped.
    pub ended: Option<SweepEnd>,
}

/// A finished step of a sweep: its artifact, and its point of the capacity curve (read once,
/// when it is filed).
#[derive(Clone, Debug)]
pub struct SweepStepRecord {
    /// The step's artifact, with its `sweep` block.
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

impl AppState {
    /// The state provided to the page's components.
    pub fn expect() -> Self {
        expect_context::<AppState>()
    }

    /// The SLO in force, if the form names a readable one.
    pub fn current_slo(&self) -> Option<SloSpec> {
        self.slo.get().ok().flatten()
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
