//! ECharts *options* for every chart strobe shows, built by pure functions.
//!
//! This module owns the JSON options (built with `charming`'s types, then
//! `serde_json::to_value`) for: metric distributions (histogram and CDF with p50/p95/p99
//! marked), the per-request timeline (start → first output → first content → end, failures
//! marked), context size against TTFO and effective prefill (cache hits apart), throughput and
//! requests in flight over the run, the p50/p95 bars of legacy artifacts without rows, and what
//! an SLO adds to them (thresholds, misses marked; [`overlay_slo`]). The
//! browser component only hands an option to ECharts; the options are snapshot-tested natively.
//!
//! Size: a page must draw a 10,000-request artifact well within a second. The timeline and
//! the context scatter draw at most [`SAMPLED_CHART_MAX_REQUESTS`] requests, evenly sampled by
//! request index, and say so in their subtitle; every statistic on any chart (percentile
//! lines, CDF positions, histogram counts, throughput, the counts in subtitles) still comes
//! from all rows. Scatter series above [`SCATTER_LARGE_THRESHOLD`] points use ECharts' `large`
//! mode (all symbols in one path instead of one canvas element each).
//!
//! Safety: text from files reaches ECharts only as series names and data names. Every option
//! sets `tooltip.renderMode = "richText"` (canvas text, never HTML) and no formatter here
//! contains markup. Every option also has axis names with units, `animation: false`, a toolbox
//! with `saveAsImage` (PNG export), and colours chosen per [`ChartTheme`]. Empty input gives an
//! option titled with a "No data" reason instead of a panic; output never holds NaN.

use serde_json::Value;

use crate::core::read::opened::metrics::{KeyMetrics, MetricKind};
use crate::core::read::opened::OpenedArtifact;

mod capacity;
mod distribution;
mod sections;
mod server;
mod slo;
mod style;
mod throughput;
mod timeline;
mod traces;

pub use capacity::{
    attainment_curve, capacity_curve, capacity_server, goodput_curve, offered_vs_achieved, pareto,
    CapacityAxis,
};
pub use distribution::{distribution_cdf, distribution_histogram, HistogramBins};
pub use sections::{group_charts, ChartGroup, ChartSection, NamedChart};
pub use server::server_over_time;
pub use slo::{overlay_slo, slo_metric_of, SLO_MISS_SERIES, SLO_THRESHOLD_SERIES};
use style::{distinct_labels, hide_single_entry_legend};
pub use style::{fit_subtitle, subtitle_chars_for_width, wrap_subtitle};
pub use style::{
    ChartTheme, CDF_MAX_POINTS, DISTRIBUTION_CHART_METRICS, HISTOGRAM_MAX_BINS, HISTOGRAM_MIN_BINS,
    LABEL_MAX_CHARS, SAMPLED_CHART_MAX_REQUESTS, SCATTER_LARGE_THRESHOLD, SUBTITLE_LINE_CHARS,
    THROUGHPUT_MAX_BUCKETS, THROUGHPUT_MIN_BUCKETS,
};
pub use throughput::{legacy_percentiles_bar, no_data, throughput_over_time};
pub use timeline::{context_scatter, timeline};
pub use traces::{longest_stalls, read_gap_cdf};

/// Every chart for one loaded artifact: histogram and CDF for each distribution metric the
/// rows carry, the timeline, throughput and context scatter, the stream traces when rows have
/// them; p50/p95 bars when it has no rows. A legend naming only the run is hidden.
pub fn artifact_charts(run: &OpenedArtifact, theme: ChartTheme) -> Vec<NamedChart> {
    let mut charts = if run.has_rows() {
        charts_from_rows(run, theme)
    } else {
        let label = run.label();
        let metrics = [(label.as_str(), &run.metrics)];
        vec![named(
            "percentiles",
            ChartSection::Percentiles,
            None,
            legacy_percentiles_bar(&metrics, theme),
        )]
    };
    for chart in &mut charts {
        hide_single_entry_legend(&mut chart.option);
    }
    charts
}

fn charts_from_rows(run: &OpenedArtifact, theme: ChartTheme) -> Vec<NamedChart> {
    let label = run.label();
    let mut charts = Vec::new();
    for metric in DISTRIBUTION_CHART_METRICS {
        let values = metric.values(&run.rows);
        if values.is_empty() {
            continue;
        }
        let runs = [(label.as_str(), values.as_slice())];
        charts.push(named(
            &format!("hist-{}", metric.id()),
            ChartSection::Latency,
            Some(metric),
            distribution_histogram(&runs, metric, theme),
        ));
        charts.push(named(
            &format!("cdf-{}", metric.id()),
            ChartSection::Latency,
            Some(metric),
            distribution_cdf(&runs, metric, theme),
        ));
    }
    let over_the_run = ChartSection::OverTheRun;
    let timeline_option = timeline(&run.rows, &run.failures, theme);
    charts.push(named("timeline", over_the_run, None, timeline_option));
    if let Some(block) = &run.server_metrics {
        let server = server_over_time(block, theme);
        charts.push(named("server", over_the_run, None, server));
    }
    let throughput = throughput_over_time(&run.rows, theme);
    charts.push(named("throughput", over_the_run, None, throughput));
    let context = context_scatter(&run.rows, theme);
    charts.push(named(
        "context",
        ChartSection::PromptAndCache,
        None,
        context,
    ));
    if run.rows.iter().any(|row| !row.read_gaps_ms.is_empty()) {
        let streams = ChartSection::Streams;
        charts.push(named(
            "read-gaps",
            streams,
            None,
            read_gap_cdf(&run.rows, theme),
        ));
        charts.push(named(
            "stalls",
            streams,
            None,
            longest_stalls(&run.rows, theme),
        ));
    }
    charts
}

/// Charts for comparing runs: overlaid CDFs per distribution metric (of the runs that have
/// rows) and the p50/p95 bars of every run, which also covers legacy runs without rows.
pub fn comparison_charts(runs: &[&OpenedArtifact], theme: ChartTheme) -> Vec<NamedChart> {
    let labels: Vec<String> = runs.iter().map(|run| run.label()).collect();
    let labels = distinct_labels(&labels);
    let mut charts = Vec::new();
    for metric in DISTRIBUTION_CHART_METRICS {
        let values: Vec<Vec<f64>> = runs.iter().map(|run| metric.values(&run.rows)).collect();
        if values.iter().all(Vec::is_empty) {
            continue;
        }
        // Runs without values stay in the list so every run keeps its colour across charts.
        let series: Vec<(&str, &[f64])> = labels
            .iter()
            .zip(&values)
            .map(|(label, values)| (label.as_str(), values.as_slice()))
            .collect();
        charts.push(named(
            &format!("compare-cdf-{}", metric.id()),
            ChartSection::Latency,
            Some(metric),
            distribution_cdf(&series, metric, theme),
        ));
    }
    let metrics: Vec<(&str, &KeyMetrics)> = runs
        .iter()
        .zip(&labels)
        .map(|(run, label)| (label.as_str(), &run.metrics))
        .collect();
    charts.push(named(
        "compare-percentiles",
        ChartSection::Percentiles,
        None,
        legacy_percentiles_bar(&metrics, theme),
    ));
    charts
}

fn named(id: &str, section: ChartSection, metric: Option<MetricKind>, option: Value) -> NamedChart {
    let title = option
        .pointer("/title/0/text")
        .or_else(|| option.pointer("/title/text"))
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    NamedChart {
        id: id.to_owned(),
        title,
        section,
        metric,
        option,
    }
}

#[cfg(test)]
mod tests;
