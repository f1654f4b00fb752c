//! The capacity view (docs/guide/load.md): when the selected artifacts form curves — the steps of a
//! sweep, or runs of one load mode — their throughput against a latency the user picks, the
//! offered against the achieved rate, and the per-user decode rate against throughput; with an
//! SLO, goodput and attainment against load and the capacity at SLO (docs/guide/metrics.md); and a
//! table of the points, a group of repeats with its 95 % interval across its runs; when the
//! steps scraped their server's metrics, the server's queue and KV cache at peak in the table
//! and against load in a chart of their own.

use std::sync::Arc;

use leptos::prelude::*;

use serde_json::Value;

use crate::core::format::{counted, format_tenths, or_missing};
use crate::core::present::capacity::{
    capacity_rows, capacity_series, capacity_series_with_slo, has_server_figures, CapacityRow,
    CAPACITY_LATENCIES,
};
use crate::core::present::charts::{
    attainment_curve, capacity_curve, capacity_server, goodput_curve, offered_vs_achieved, pareto,
    CapacityAxis, ChartTheme,
};
use crate::core::present::server::ServerFigure;
use crate::core::read::opened::metrics::{MetricKind, MetricStat};
use crate::core::read::opened::OpenedArtifact;

use crate::web::platform::clock::measured;
use crate::web::state::AppState;
use crate::web::ui::echart::{prefers_dark, EChart};

/// The capacity charts of `runs`; nothing when they form no curve of two points.
#[component]
pub fn CapacityView(
    /// The selected artifacts.
    runs: Vec<Arc<OpenedArtifact>>,
) -> impl IntoView {
    let refs: Vec<&OpenedArtifact> = runs.iter().map(Arc::as_ref).collect();
    let series = capacity_series(&refs);
    if series.is_empty() {
        return ().into_any();
    }
    let theme = ChartTheme {
        dark: prefers_dark(),
    };
    let metric = RwSignal::new(MetricKind::Ttft);
    let stat = RwSignal::new(MetricStat::P95);
    let axis = RwSignal::new(CapacityAxis::Tokens);
    let curve_series = series.clone();
    let curve = Signal::derive(move || {
        capacity_curve(&curve_series, metric.get(), stat.get(), axis.get(), theme)
    });
    let state = AppState::expect();
    // The curves judged by the SLO in force, again whenever it changes.
    let judged_runs = runs.clone();
    let judged = Memo::new(move |_| {
        let spec = state.current_slo()?;
        let refs: Vec<&OpenedArtifact> = judged_runs.iter().map(Arc::as_ref).collect();
        let series = measured("strobe:slo-judge", || {
            capacity_series_with_slo(&refs, Some(&spec.slo))
        });
        Some((series, spec.target))
    });
    let goodput = Signal::derive(move || {
        judged.with(|judged| {
            judged
                .as_ref()
                .map(|(series, _)| goodput_curve(series, axis.get(), theme))
                .unwrap_or(Value::Null)
        })
    });
    let attainment = Signal::derive(move || {
        judged.with(|judged| {
            judged
                .as_ref()
                .map(|(series, target)| attainment_curve(series, *target, theme))
                .unwrap_or(Value::Null)
        })
    });
    let capacity_lines = move || -> Vec<String> {
        judged.with(|judged| {
            let Some((series, target)) = judged else {
                return Vec::new();
            };
            series
                .iter()
                .filter_map(|curve| {
                    let found = curve.capacity_at_slo(*target)?;
                    let text = found.describe(*target, |load| curve.describe_load(load));
                    Some(format!("{}: {text}", curve.name))
                })
                .collect()
        })
    };
    let table_series = series.clone();
    let rows = move || capacity_rows(&table_series, metric.get(), stat.get());
    let latency_heading = move || format!("{} {}", metric.get().short_label(), stat.get().id());
    let names: Vec<String> = series.iter().map(|s| s.name.clone()).collect();
    // Closed-loop steps offer no rate: the offered-against-achieved chart would be empty.
    let has_rate_steps = series
        .iter()
        .flat_map(|s| &s.points)
        .any(|point| point.offered_rate.is_some());
    // Steps that scraped their server's metrics: its queue and KV cache in the table, and
    // against load in a chart, where the knee at which requests start to wait shows.
    let server_columns = has_server_figures(&series);
    view! {
        <section class="capacity" data-testid="capacity-view">
            <h3>"Capacity"</h3>
            <p class="capacity-help">
                {format!("{}: {}. ", counted(series.len() as u64, "curve", "curves"), names.join(", "))}
                "Each point is one run, or one group of repeats at their mean with its 95 % interval. Read off the highest throughput whose latency stays within your target."
            </p>
            <div class="capacity-controls">
                <label>
                    "latency "
                    <select
                        data-testid="capacity-metric"
                        on:change=move |ev| {
                            let id = event_target_value(&ev);
                            if let Some(kind) = CAPACITY_LATENCIES.into_iter().find(|kind| kind.id() == id) {
                                metric.set(kind);
                            }
                        }
                    >
                        {CAPACITY_LATENCIES
                            .into_iter()
                            .map(|kind| {
                                view! {
                                    <option value=kind.id() selected=kind == MetricKind::Ttft>
                                        {kind.short_label()}
                                    </option>
                                }
                            })
                            .collect_view()}
                    </select>
                </label>
                <label>
                    " statistic "
                    <select
                        data-testid="capacity-stat"
                        on:change=move |ev| {
                            let id = event_target_value(&ev);
                            if let Some(found) = MetricStat::ALL.into_iter().find(|s| s.id() == id) {
                                stat.set(found);
                            }
                        }
                    >
                        {MetricStat::ALL
                            .into_iter()
                            .map(|s| view! { <option value=s.id() selected=s == MetricStat::P95>{s.id()}</option> })
                            .collect_view()}
                    </select>
                </label>
                <label>
                    " throughput in "
                    <select
                        data-testid="capacity-axis"
                        on:change=move |ev| {
                            axis.set(if event_target_value(&ev) == "requests" {
                                CapacityAxis::Requests
                            } else {
                                CapacityAxis::Tokens
                            })
                        }
                    >
                        <option value="tokens" selected=true>"output tok/s"</option>
                        <option value="requests">"requests/s"</option>
                    </select>
                </label>
            </div>
            {move || {
                let lines = capacity_lines();
                (!lines.is_empty())
                    .then(|| {
                        view! {
                            <ul class="capacity-at-slo" data-testid="capacity-at-slo">
                                {lines.into_iter().map(|line| view! { <li>{line}</li> }).collect_view()}
                            </ul>
                        }
                    })
            }}
            <table class="metrics-table" data-testid="capacity-table">
                <thead>
                    <tr>
                        <th>"curve"</th><th>"load"</th><th>"req/s"</th><th>"tok/s"</th>
                        <th>{latency_heading}</th>
                        {server_columns
                            .then(|| {
                                view! {
                                    <th>{ServerFigure::WaitingPeak.label()}</th>
                                    <th>{ServerFigure::KvCachePeak.label()}</th>
                                }
                            })}
                    </tr>
                </thead>
                <tbody>
                    {move || {
                        rows()
                            .into_iter()
                            .map(|row| view! { <PointRow row=row server_columns=server_columns /> })
                            .collect_view()
                    }}
                </tbody>
            </table>
            <div class="chart-grid">
                <EChart option=curve title="capacity" test_id="chart-capacity" />
                <Show when=move || judged.with(Option::is_some)>
                    <EChart option=goodput title="goodput" test_id="chart-goodput" />
                    <EChart option=attainment title="slo-attainment" test_id="chart-slo-attainment" />
                </Show>
                {has_rate_steps
                    .then(|| {
                        view! {
                            <EChart
                                option=Signal::stored(offered_vs_achieved(&series, theme))
                                title="offered-achieved"
                                test_id="chart-offered-achieved"
                            />
                        }
                    })}
                <EChart option=Signal::stored(pareto(&series, theme)) title="pareto" test_id="chart-pareto" />
                {server_columns
                    .then(|| {
                        view! {
                            <EChart
                                option=Signal::stored(capacity_server(&series, theme))
                                title="capacity-server"
                                test_id="chart-capacity-server"
                            />
                        }
                    })}
            </div>
        </section>
    }
    .into_any()
}

/// One point of the capacity table: its load, what it carried and its latency, across repeats
/// with their interval and the flag when they disagree.
#[component]
fn PointRow(
    /// The row as the core words it.
    row: CapacityRow,
    /// Whether the table has the server's columns.
    server_columns: bool,
) -> impl IntoView {
    let server = server_columns.then(|| {
        let [waiting, kv] = row.server_cells();
        let brief = row.server.map(|server| server.brief()).unwrap_or_default();
        view! {
            <td data-testid="capacity-server-waiting" title=brief.clone()>{waiting}</td>
            <td data-testid="capacity-server-kv" title=brief>{kv}</td>
        }
    });
    view! {
        <tr data-testid="capacity-point" data-runs=row.runs.to_string()>
            <td>{row.curve}</td>
            <td>{row.load}</td>
            <td>{format_tenths(row.requests_per_s, "")}</td>
            <td>{format_tenths(row.output_tok_s, "")}</td>
            <td data-testid="capacity-latency">
                {or_missing(row.latency)}
                {row
                    .disagreement
                    .map(|flag| {
                        view! {
                            <span class="warning" data-testid="capacity-disagreement">
                                " — "{flag}
                            </span>
                        }
                    })}
            </td>
            {server}
        </tr>
    }
}
