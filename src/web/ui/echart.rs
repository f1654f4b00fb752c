//! `<EChart>`: one component owns one ECharts instance and updates it in place.
//!
//! Options come from the core's pure chart builders as JSON; they are handed to ECharts through
//! `JSON.parse`, so no function or HTML string can travel with them. Tooltips use ECharts'
//! `richText` mode (canvas text), set by the core, so text from an artifact or a server is never
//! parsed as HTML.
//!
//! Drawing is paced: a results page holds a dozen charts, and drawing them all in one task
//! blocked the page for as long as they took together. A chart whose option changes joins a
//! queue; one task draws queued charts, in page order, until [`DRAW_SLICE_BUDGET_MS`] is spent
//! (at least one chart), then yields to the browser for input and painting. It yields through
//! a zero-delay timeout rather than an animation frame, so no slice waits for the next vsync.
//!
//! ECharts itself is loaded when the first chart is queued (or when Run is pressed, see
//! [`load_charts`]), not by the page's first visit: a visit that draws no chart never downloads
//! it. Charts queued meanwhile wait for it; if it cannot be loaded each says so.
//!
//! `setOption` draws synchronously (no `lazyUpdate`: with it ECharts never fires `finished`,
//! apache/echarts#21073); ECharts' `finished` event then sets `data-drawn="true"` on the
//! chart's `<figure>`, which tests and the load benchmark wait for. Each draw records User
//! Timing measures: `strobe:chart-serialize` (option to JSON text), `strobe:chart-parse`
//! (`JSON.parse`), `strobe:chart-set-option` (ECharts building and painting the chart) and
//! `strobe:chart-draw` (all three).

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};

use js_sys::{Object, Reflect, JSON};
use leptos::html::Div;
use leptos::prelude::*;
use serde_json::Value;
use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};

use crate::core::present::charts::{fit_subtitle, subtitle_chars_for_width};
use crate::web::js::{echarts_init, ECharts};
use crate::web::platform::clock::{measured, Clock};
use crate::web::platform::js_error::js_text;
use crate::web::platform::script::load_script;

/// ECharts' file in the build (copied by trunk beside index.html, see index.html).
const ECHARTS_SCRIPT: &str = "echarts.min.js";

static NEXT_CHART_ID: AtomicU64 = AtomicU64::new(1);

/// Drawing time per task before the rest of the queue waits for the next task. About one
/// 60 Hz frame, so input (and, during a run, a stream read being timed) waits at most one
/// chart longer than this.
pub const DRAW_SLICE_BUDGET_MS: f64 = 16.0;

/// A handle on an ECharts instance and the `finished` listener it calls.
struct EChartsInstance {
    chart: ECharts,
    /// Kept alive as long as the instance: ECharts holds the JS side of this closure.
    _on_finished: Closure<dyn FnMut()>,
}

impl EChartsInstance {
    /// Creates the instance on `element`; `on_finished` runs whenever ECharts has finished
    /// drawing (after every draw, including re-draws on hover or resize).
    fn init(
        element: &web_sys::HtmlElement,
        on_finished: impl FnMut() + 'static,
    ) -> Result<Self, String> {
        if !echarts_present() {
            return Err("ECharts did not load (echarts.min.js is missing from the build)".into());
        }
        let options = Object::new();
        let _ = Reflect::set(&options, &"renderer".into(), &"canvas".into());
        let chart = echarts_init(element, &JsValue::NULL, &options).map_err(|err| js_text(&err))?;
        let instance = Self {
            chart,
            _on_finished: Closure::new(on_finished),
        };
        instance
            .chart
            .on("finished", instance._on_finished.as_ref().unchecked_ref())
            .map_err(|err| js_text(&err))?;
        Ok(instance)
    }

    /// Replaces the chart's option and draws it now.
    fn set_option(&self, option: &Value) -> Result<(), String> {
        let json = measured("strobe:chart-serialize", || serde_json::to_string(option))
            .map_err(|err| err.to_string())?;
        let parsed =
            measured("strobe:chart-parse", || JSON::parse(&json)).map_err(|err| js_text(&err))?;
        let settings = Object::new();
        let _ = Reflect::set(&settings, &"notMerge".into(), &JsValue::TRUE);
        measured("strobe:chart-set-option", || {
            self.chart.set_option(&parsed, &settings)
        })
        .map_err(|err| js_text(&err))
    }

    fn resize(&self) {
        let _ = self.chart.resize();
    }

    fn dispose(&self) {
        let _ = self.chart.dispose();
    }
}

/// One `<EChart>`'s state, shared by its effect, the draw queue and ECharts' `finished`
/// listener. Every field is an arena handle, so a chart disposed while queued is skipped.
#[derive(Clone, Copy)]
struct ChartSlot {
    container: NodeRef<Div>,
    instance: StoredValue<Option<EChartsInstance>, LocalStorage>,
    /// The option waiting to be drawn; `Some` exactly while the chart is in the queue.
    pending: StoredValue<Option<Value>, LocalStorage>,
    /// True from `setOption` until ECharts reports `finished`.
    drawing: StoredValue<bool, LocalStorage>,
    /// The subtitle width, in characters, of the last draw (0 before the first).
    subtitle_chars: StoredValue<usize, LocalStorage>,
    drawn: RwSignal<bool>,
    error: RwSignal<Option<String>>,
}

impl ChartSlot {
    /// Queues `option`; a chart already in the queue just draws the newer option.
    fn queue(self, option: Value) {
        let already_queued = self.pending.with_value(Option::is_some);
        self.pending.set_value(Some(option));
        self.drawn.set(false);
        if !already_queued {
            DrawQueue::push(self);
        }
    }

    /// Draws the pending option (the draw queue calls this). Does nothing for a chart that was
    /// disposed or unmounted meanwhile.
    fn draw_pending(self) {
        let Some(Some(mut option)) = self.pending.try_update_value(Option::take) else {
            return;
        };
        let Some(element) = self.container.get_untracked() else {
            return;
        };
        let chars = subtitle_chars_for_width(f64::from(element.client_width()));
        self.subtitle_chars.set_value(chars);
        fit_subtitle(&mut option, chars);
        measured("strobe:chart-draw", || {
            if self.instance.with_value(Option::is_none) {
                match EChartsInstance::init(&element, move || self.on_finished()) {
                    Ok(created) => self.instance.set_value(Some(created)),
                    Err(reason) => {
                        self.error.set(Some(reason));
                        return;
                    }
                }
            }
            self.drawing.set_value(true);
            let result = self.instance.with_value(|chart| match chart {
                Some(chart) => chart.set_option(&option),
                None => Ok(()),
            });
            if let Err(reason) = result {
                self.drawing.set_value(false);
                self.error
                    .set(Some(format!("the chart could not be drawn: {reason}")));
            }
        });
    }

    /// ECharts could not be loaded: the chart shows why instead of drawing.
    fn fail_pending(self, reason: &str) {
        if self
            .pending
            .try_update_value(Option::take)
            .flatten()
            .is_some()
        {
            self.error
                .try_set(Some(format!("the chart could not be drawn: {reason}")));
        }
    }

    /// ECharts' `finished`: marks the chart drawn when it follows a draw (it also fires after
    /// hover and resize re-draws, which change nothing here).
    fn on_finished(self) {
        if self.drawing.try_update_value(std::mem::take) == Some(true) {
            self.drawn.try_set(true);
        }
    }
}

thread_local! {
    static QUEUED_CHARTS: RefCell<VecDeque<ChartSlot>> = const { RefCell::new(VecDeque::new()) };
    static SLICE_SCHEDULED: Cell<bool> = const { Cell::new(false) };
    static LIBRARY: RefCell<Library> = const { RefCell::new(Library::NotLoaded) };
}

/// Where loading ECharts stands on this page.
enum Library {
    /// Nothing has asked for a chart yet.
    NotLoaded,
    /// Its script is on the way; queued charts wait.
    Loading,
    /// `window.echarts` is there.
    Loaded,
    /// Its script could not be loaded: why, for every chart that asks.
    Failed(String),
}

/// Whether `window.echarts` exists (loaded by [`load_charts`], or by the page itself).
fn echarts_present() -> bool {
    web_sys::window()
        .is_some_and(|window| Reflect::has(&window, &"echarts".into()).unwrap_or(false))
}

/// Starts loading ECharts unless it is loaded or on the way; charts queued meanwhile are drawn
/// once it has run. The Run button calls it so the live charts do not wait for it: the load
/// then runs beside the endpoint check, rehearsal, dry run and warm-up that come before the
/// measured requests. Nothing waits for it, so a load slower than all of those would land in
/// the measured run.
pub fn load_charts() {
    let start = LIBRARY.with(|library| {
        let mut library = library.borrow_mut();
        match *library {
            Library::NotLoaded | Library::Failed(_) if echarts_present() => {
                *library = Library::Loaded;
                false
            }
            Library::NotLoaded => {
                *library = Library::Loading;
                true
            }
            Library::Loading | Library::Loaded | Library::Failed(_) => false,
        }
    });
    if start {
        leptos::task::spawn_local(async {
            let loaded = load_script(ECHARTS_SCRIPT).await.and_then(|()| {
                if echarts_present() {
                    Ok(())
                } else {
                    Err(format!("{ECHARTS_SCRIPT} ran but did not define ECharts"))
                }
            });
            LIBRARY.with(|library| {
                *library.borrow_mut() = match loaded {
                    Ok(()) => Library::Loaded,
                    Err(reason) => Library::Failed(reason),
                }
            });
            DrawQueue::schedule_slice();
        });
    }
}

/// The page's charts waiting to be drawn, in the order their options arrived (page order on a
/// fresh results view).
struct DrawQueue;

impl DrawQueue {
    fn push(chart: ChartSlot) {
        QUEUED_CHARTS.with(|queue| queue.borrow_mut().push_back(chart));
        Self::schedule_slice();
    }

    fn schedule_slice() {
        if !SLICE_SCHEDULED.with(|scheduled| scheduled.replace(true)) {
            set_timeout(Self::draw_slice, std::time::Duration::ZERO);
        }
    }

    /// One task's share: charts until [`DRAW_SLICE_BUDGET_MS`] is spent. Before ECharts has
    /// loaded it only starts loading it (the load schedules the next slice); if it cannot be
    /// loaded, each queued chart says why.
    fn draw_slice() {
        SLICE_SCHEDULED.with(|scheduled| scheduled.set(false));
        load_charts();
        let failed = LIBRARY.with(|library| match &*library.borrow() {
            Library::Loaded => None,
            Library::Failed(reason) => Some(Some(reason.clone())),
            Library::NotLoaded | Library::Loading => Some(None),
        });
        match failed {
            None => {}
            Some(None) => return,
            Some(Some(reason)) => {
                while let Some(chart) = QUEUED_CHARTS.with(|queue| queue.borrow_mut().pop_front()) {
                    chart.fail_pending(&reason);
                }
                return;
            }
        }
        let clock = Clock::of_this_thread();
        let slice_started = clock.as_ref().map(Clock::now_ms);
        // Popped before drawing: a draw may queue charts itself (through effects).
        while let Some(chart) = QUEUED_CHARTS.with(|queue| queue.borrow_mut().pop_front()) {
            chart.draw_pending();
            let spent = match (&clock, slice_started) {
                (Some(clock), Some(started)) => clock.now_ms() - started,
                _ => f64::INFINITY,
            };
            if spent >= DRAW_SLICE_BUDGET_MS {
                break;
            }
        }
        if QUEUED_CHARTS.with(|queue| !queue.borrow().is_empty()) {
            Self::schedule_slice();
        }
    }
}

/// Whether the page is in dark mode (`prefers-color-scheme: dark`).
pub fn prefers_dark() -> bool {
    web_sys::window()
        .and_then(|window| {
            window
                .match_media("(prefers-color-scheme: dark)")
                .ok()
                .flatten()
        })
        .is_some_and(|query| query.matches())
}

/// A chart. `option` is an ECharts option built by `crate::core::charts`; when it changes the
/// same instance is updated. The option carries the chart's title and its one export control
/// (the toolbox's PNG download); `title` is the container's accessible name.
#[component]
pub fn EChart(
    /// The chart's option JSON.
    #[prop(into)]
    option: Signal<Value>,
    /// The accessible label of the chart.
    #[prop(into)]
    title: String,
    /// The `data-testid` of the chart's container.
    #[prop(into, optional)]
    test_id: Option<String>,
    /// CSS height of the chart, e.g. `"320px"`.
    #[prop(into, default = "320px".to_string())]
    height: String,
) -> impl IntoView {
    let id = format!("chart-{}", NEXT_CHART_ID.fetch_add(1, Ordering::Relaxed));
    let container = NodeRef::<Div>::new();
    let slot = ChartSlot {
        container,
        instance: StoredValue::new_local(None),
        pending: StoredValue::new_local(None),
        drawing: StoredValue::new_local(false),
        subtitle_chars: StoredValue::new_local(0),
        drawn: RwSignal::new(false),
        error: RwSignal::new(None),
    };
    let (instance, drawn, error) = (slot.instance, slot.drawn, slot.error);

    Effect::new(move |_| {
        let option = option.get();
        if container.get().is_some() {
            slot.queue(option);
        }
    });

    let resize = window_event_listener(leptos::ev::resize, move |_| {
        instance.with_value(|chart| {
            if let Some(chart) = chart {
                chart.resize();
            }
        });
        // A width that fits another subtitle line length draws the chart again, wrapped anew.
        let width = container
            .get_untracked()
            .map(|element| element.client_width());
        if let Some(width) = width {
            let chars = subtitle_chars_for_width(f64::from(width));
            if slot.subtitle_chars.get_value() != chars && slot.subtitle_chars.get_value() != 0 {
                slot.queue(option.get_untracked());
            }
        }
    });
    on_cleanup(move || {
        resize.remove();
        instance.with_value(|chart| {
            if let Some(chart) = chart {
                chart.dispose();
            }
        });
    });

    view! {
        <figure
            class="chart"
            data-testid=test_id
            data-drawn=move || if drawn.get() { "true" } else { "false" }
        >
            <div class="chart-canvas" id=id node_ref=container style:height=height aria-label=title.clone() role="img"></div>
            {move || error.get().map(|reason| view! { <p class="error-box">{reason}</p> })}
        </figure>
    }
}
