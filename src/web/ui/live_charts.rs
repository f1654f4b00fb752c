//! Charts that grow while a run goes on: TTFT and TTFO CDFs, the request timeline and the
//! throughput over time, rebuilt from the finished requests about once a second.
//!
//! Building options and drawing them is main-thread work that can hold the thread for tens of
//! ms, and on the page's own thread a read arriving meanwhile is stamped late
//! (docs/design/measurement.md, *Live view*). So live charts are off unless the user turns them
//! on (the toggle says why), and then they are rebuilt at most once per
//! [`LIVE_CHART_REFRESH_MS`].

use leptos::prelude::*;
use leptos::wasm_split::wasm_split;
use serde_json::Value;

use crate::core::present::charts::distribution_cdf;
use crate::core::present::charts::throughput_over_time;
use crate::core::present::charts::timeline;
use crate::core::present::charts::ChartTheme;
use crate::core::read::opened::metrics::MetricKind;

use crate::web::platform::parts::PartNotLoaded;
#[allow(unused_imports)] // named by the module's documentation
use crate::web::run::context::LIVE_CHART_REFRESH_MS;
use crate::web::state::{AppState, RunPhase};
use crate::web::ui::echart::{prefers_dark, EChart};
use crate::web::ui::part::part_view;

/// The toggle, and the live charts while a run is in progress with them on.
#[component]
pub fn LiveCharts() -> impl IntoView {
    let state = AppState::expect();
    view! {
        <label class="checkbox live-toggle">
            <input
                type="checkbox"
                data-testid="live-charts-toggle"
                prop:checked=move || state.live_charts().get()
                on:change=move |ev| state.set_live_charts(event_target_checked(&ev))
            />
            " Draw charts during the run (each redraw takes main-thread time and can delay the \
             timestamps of reads arriving meanwhile; off gives the truest numbers)"
        </label>
        <Show when=move || {
            state.phase().get() == RunPhase::Running && state.live_charts().get() && !state.quiet_run().get()
        }>
            {part_view(move || live_chart_grid(state))}
        </Show>
    }
}

/// The four charts, rebuilt as rows arrive (a split point: the live charts' part of the wasm).
#[wasm_split(live_charts, wasm_split_path = ::leptos::wasm_split, fallible)]
fn live_chart_grid(state: AppState) -> Result<AnyView, PartNotLoaded> {
    let theme = ChartTheme {
        dark: prefers_dark(),
    };
    let rows = state.live_rows();
    let cdf = move |metric: MetricKind| {
        Signal::derive(move || -> Value {
            rows.with(|live| {
                let values = metric.values(&live.rows);
                distribution_cdf(&[("this run", values.as_slice())], metric, theme)
            })
        })
    };
    let timeline_option =
        Signal::derive(move || rows.with(|live| timeline(&live.rows, &live.failures, theme)));
    let throughput_option =
        Signal::derive(move || rows.with(|live| throughput_over_time(&live.rows, theme)));
    Ok(view! {
        <div class="chart-grid" data-testid="live-charts">
            <EChart option=cdf(MetricKind::Ttft) title="TTFT (live)" test_id="live-chart-ttft" height="260px" />
            <EChart option=cdf(MetricKind::Ttfo) title="Time to first output (live)" test_id="live-chart-ttfo" height="260px" />
            <EChart option=timeline_option title="Request timeline (live)" test_id="live-chart-timeline" height="260px" />
            <EChart option=throughput_option title="Throughput (live)" test_id="live-chart-throughput" height="260px" />
        </div>
    }
    .into_any())
}
