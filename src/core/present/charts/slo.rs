//! What an SLO adds to the charts (docs/guide/metrics.md, *Service-level objectives*): a threshold
//! line on the histogram and CDF of every metric it bounds, and the requests that miss it
//! marked on the timeline and on the context scatter. The overlay works on finished options,
//! so a changed SLO redraws the same charts with new marks and nothing else is rebuilt.

use serde_json::{json, Value};

use super::sections::NamedChart;
use super::style::{ChartTheme, SCATTER_LARGE_THRESHOLD};
use super::timeline::sample_rows_by_index;
use crate::core::config::slo::{Slo, SloMetric};
use crate::core::format::format_number;
use crate::core::read::opened::metrics::MetricKind;
use crate::core::read::opened::views::RowView;
use crate::core::slo::row_meets;

/// The series name of the marks for requests that miss the SLO.
pub const SLO_MISS_SERIES: &str = "misses the SLO";

/// The series name of a threshold line.
pub const SLO_THRESHOLD_SERIES: &str = "SLO bound";

/// The SLO metric a chart's metric is, when an SLO can bound it.
pub fn slo_metric_of(kind: MetricKind) -> Option<SloMetric> {
    match kind {
        MetricKind::Ttfo => Some(SloMetric::Ttfo),
        MetricKind::Ttft => Some(SloMetric::Ttft),
        MetricKind::Tpot => Some(SloMetric::Tpot),
        MetricKind::E2e => Some(SloMetric::E2el),
        MetricKind::Decode | MetricKind::Prefill => None,
    }
}

/// Adds the SLO to every chart of `charts` it concerns: thresholds on the distributions (ids
/// `hist-<metric>`, `cdf-<metric>`, `compare-cdf-<metric>`) and, with `rows` (one run's succeeded
/// requests), the misses on `timeline` and `context`.
pub fn overlay_slo(
    charts: &mut [NamedChart],
    slo: &Slo,
    rows: Option<&[RowView]>,
    theme: ChartTheme,
) {
    for chart in charts {
        let metric_id = chart
            .id
            .strip_prefix("compare-cdf-")
            .or_else(|| chart.id.strip_prefix("hist-"))
            .or_else(|| chart.id.strip_prefix("cdf-"));
        let bounded = metric_id
            .and_then(|id| MetricKind::ALL.into_iter().find(|kind| kind.id() == id))
            .and_then(slo_metric_of)
            .and_then(|metric| slo.limit_ms(metric));
        if let Some(limit_ms) = bounded {
            add_threshold(&mut chart.option, limit_ms, theme);
        }
        match (chart.id.as_str(), rows) {
            ("timeline", Some(rows)) => mark_timeline_misses(&mut chart.option, slo, rows, theme),
            ("context", Some(rows)) => mark_context_misses(&mut chart.option, slo, rows, theme),
            _ => {}
        }
    }
}

/// A solid vertical line at `limit_ms` labelled `SLO ≤ 500 ms`, carried by an invisible series
/// whose one point also stretches an automatic x axis to the line.
fn add_threshold(option: &mut Value, limit_ms: f64, theme: ChartTheme) {
    let color = theme.palette().failure;
    widen_x_axis(option, limit_ms);
    push_series(
        option,
        json!({
            "type": "line",
            "name": SLO_THRESHOLD_SERIES,
            "data": [[limit_ms, 0.0]],
            "showSymbol": false,
            "silent": true,
            "lineStyle": {"opacity": 0.0},
            "tooltip": {"show": false, "renderMode": "richText"},
            "markLine": {
                "silent": true,
                "symbol": "none",
                "animation": false,
                "lineStyle": {"color": color, "type": "solid", "width": 2},
                "label": {
                    "formatter": format!("SLO ≤ {} ms", format_number(limit_ms)),
                    "position": "insideEndTop",
                    "color": color,
                },
                "data": [{"xAxis": limit_ms}],
            },
        }),
    );
}

/// A histogram fixes its x extent to its bins: reach out to the line when it lies outside.
fn widen_x_axis(option: &mut Value, limit_ms: f64) {
    let axis = match option.get_mut("xAxis") {
        Some(Value::Array(axes)) => axes.first_mut(),
        Some(axis @ Value::Object(_)) => Some(axis),
        _ => None,
    };
    let Some(axis) = axis.and_then(Value::as_object_mut) else {
        return;
    };
    if let Some(max) = axis.get("max").and_then(Value::as_f64) {
        if limit_ms > max {
            axis.insert("max".to_owned(), json!(limit_ms));
        }
    }
    if let Some(min) = axis.get("min").and_then(Value::as_f64) {
        if limit_ms < min {
            axis.insert("min".to_owned(), json!(limit_ms));
        }
    }
}

fn push_series(option: &mut Value, series: Value) {
    match option.get_mut("series") {
        Some(Value::Array(all)) => all.push(series),
        _ => {
            if let Some(object) = option.as_object_mut() {
                object.insert("series".to_owned(), json!([series]));
            }
        }
    }
}

/// Ring marks, in the failure colour, at the given points of one grid.
fn push_misses(option: &mut Value, points: Vec<[f64; 2]>, grid: usize, theme: ChartTheme) {
    if points.is_empty() {
        return;
    }
    let large = points.len() > SCATTER_LARGE_THRESHOLD;
    push_series(
        option,
        json!({
            "type": "scatter",
            "name": SLO_MISS_SERIES,
            "xAxisIndex": grid,
            "yAxisIndex": grid,
            "symbol": "emptyCircle",
            "symbolSize": 9,
            "large": large,
            "itemStyle": {"color": theme.palette().failure},
            "z": 5,
            "data": points,
        }),
    );
}

/// The succeeded requests that miss `slo`, evenly sampled by index like the charts' own rows.
fn missing_rows<'a>(slo: &Slo, rows: &'a [RowView]) -> Vec<&'a RowView> {
    sample_rows_by_index(rows.iter().filter(|row| !row_meets(slo, row)).collect())
}

/// On the timeline, a ring at each missing request's end.
fn mark_timeline_misses(option: &mut Value, slo: &Slo, rows: &[RowView], theme: ChartTheme) {
    let on_run_clock = rows.iter().any(|row| row.started_at_ms.is_some());
    let points = missing_rows(slo, rows)
        .into_iter()
        .filter_map(|row| {
            let start = if on_run_clock {
                row.started_at_ms?
            } else {
                0.0
            };
            let end = start + row.e2e_ms?;
            let x = if on_run_clock { end / 1000.0 } else { end };
            Some([x, row.index_or_position() as f64])
        })
        .collect();
    push_misses(option, points, 0, theme);
}

/// On the context scatter's upper grid (TTFO against prompt tokens), a ring round each
/// missing request.
fn mark_context_misses(option: &mut Value, slo: &Slo, rows: &[RowView], theme: ChartTheme) {
    let points = missing_rows(slo, rows)
        .into_iter()
        .filter_map(|row| {
            let ttfo = row.ttfo_or_ttft_ms().filter(|value| value.is_finite())?;
            Some([row.prompt_tokens? as f64, ttfo])
        })
        .collect();
    push_misses(option, points, 0, theme);
}
