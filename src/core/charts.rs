//! ECharts *options* for every chart strobe shows, built by pure functions.
//!
//! This module owns the JSON options (built with `charming`'s types, then
//! `serde_json::to_value`) for: metric distributions (histogram and CDF with p50/p95/p99
//! marked), the per-request timeline (start → first output → first content → end, failures
//! marked), context size against TTFO and effective prefill (cache hits apart), throughput and
//! requests in flight over the run, and the p50/p95 bars of legacy artifacts without rows. The
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

use std::collections::BTreeMap;

use charming::component::{
    Axis, DataZoom, DataZoomType, Feature, FilterMode, Grid, Legend, LegendType, SaveAsImage,
    SaveAsImageType, Title, Toolbox,
};
use charming::datatype::{CompositeValue, DataPoint, DataPointItem};
use charming::element::{
    AxisLabel, AxisType, ItemStyle, Label, LabelPosition, LineStyle, LineStyleType, MarkLine,
    MarkLineData, MarkLineVariant, NameLocation, SplitLine, Step, Symbol, TextStyle, Tooltip,
    Trigger,
};
use charming::series::{Bar, Line, Scatter};
use charming::Chart;
use serde_json::{json, Value};

pub use crate::core::loaded::MetricKind;
use crate::core::loaded::{CappedText, FailureView, KeyMetrics, LoadedArtifact, RowView};
use crate::core::stats::nearest_rank;

/// The distributions charted as histogram and CDF (prefill is shown against context instead).
pub const DISTRIBUTION_CHART_METRICS: [MetricKind; 5] = [
    MetricKind::Ttfo,
    MetricKind::Ttft,
    MetricKind::E2e,
    MetricKind::Tpot,
    MetricKind::Decode,
];

/// Fewest histogram bins: below this a distribution's shape is invisible.
pub const HISTOGRAM_MIN_BINS: usize = 10;

/// Most histogram bins: beyond this bars get thinner than a few pixels.
pub const HISTOGRAM_MAX_BINS: usize = 60;

/// Most points per CDF line; longer runs are sampled at evenly spaced ranks.
pub const CDF_MAX_POINTS: usize = 1000;

/// Most requests drawn on the timeline and on the context scatter. Longer runs show this many,
/// evenly sampled by request index (the subtitle says so): at a few hundred pixels per axis
/// more lines or dots show nothing new, and drawing 10,000 of each costs the browser seconds.
pub const SAMPLED_CHART_MAX_REQUESTS: usize = 2000;

/// Scatter series with more points than this are drawn in ECharts' `large` mode.
pub const SCATTER_LARGE_THRESHOLD: usize = 500;

/// Fewest time buckets of the throughput chart.
pub const THROUGHPUT_MIN_BUCKETS: usize = 50;

/// Most time buckets of the throughput chart.
pub const THROUGHPUT_MAX_BUCKETS: usize = 200;

/// Longest run label shown in a legend, in characters.
pub const LABEL_MAX_CHARS: usize = 64;

/// Top of every plot area: below the title, the two-line subtitle and a y axis name.
const GRID_TOP: i32 = 112;

/// The percentiles marked on distributions, computed by nearest rank like the artifact's.
const MARKED_PERCENTILES: [u32; 3] = [50, 95, 99];

/// Light or dark page: picks text, grid and series colours that stay readable on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ChartTheme {
    /// True for a dark page background.
    pub dark: bool,
}

impl ChartTheme {
    /// The light theme.
    pub const LIGHT: ChartTheme = ChartTheme { dark: false };
    /// The dark theme.
    pub const DARK: ChartTheme = ChartTheme { dark: true };

    fn palette(self) -> &'static Palette {
        if self.dark {
            &DARK_PALETTE
        } else {
            &LIGHT_PALETTE
        }
    }

    /// The colour of the `index`-th run or series (cycles through six).
    pub fn series_color(self, index: usize) -> &'static str {
        let series = &self.palette().series;
        series[index % series.len()]
    }
}

/// Colours of one theme. Series colours are the Okabe–Ito colour-blind-safe set, lightened
/// for the dark background so each keeps at least 4.5:1 contrast against it.
struct Palette {
    text: &'static str,
    muted_text: &'static str,
    axis_line: &'static str,
    split_line: &'static str,
    /// Background of exported PNGs (the live chart itself is transparent over the page).
    background: &'static str,
    series: [&'static str; 6],
    failure: &'static str,
    /// Timeline phases: waiting for first output, reasoning, content.
    phases: [&'static str; 3],
}

const LIGHT_PALETTE: Palette = Palette {
    text: "#1f2328",
    muted_text: "#57606a",
    axis_line: "#8c959f",
    split_line: "#d8dee4",
    background: "#ffffff",
    series: [
        "#0072b2", "#d55e00", "#009e73", "#cc79a7", "#b07800", "#4a90c2",
    ],
    failure: "#c62828",
    phases: ["#8c959f", "#cc79a7", "#0072b2"],
};

const DARK_PALETTE: Palette = Palette {
    text: "#e6edf3",
    muted_text: "#9da7b3",
    axis_line: "#6e7681",
    split_line: "#30363d",
    background: "#0d1117",
    series: [
        "#56b4e9", "#ff8c42", "#33c9a0", "#e08fbf", "#f0e442", "#a0a8ff",
    ],
    failure: "#ff6b6b",
    phases: ["#8b949e", "#e08fbf", "#56b4e9"],
};

/// One chart for a page: a stable id (for element ids and PNG names), its title and option.
#[derive(Debug, Clone, PartialEq)]
pub struct NamedChart {
    /// Stable id, e.g. `cdf-ttft`, `timeline`.
    pub id: String,
    /// The chart's title as shown on it.
    pub title: String,
    /// The ECharts option.
    pub option: Value,
}

/// Every chart for one loaded artifact: histogram and CDF for each distribution metric the
/// rows carry, the timeline, context scatter and throughput; p50/p95 bars when it has no rows.
pub fn artifact_charts(run: &LoadedArtifact, theme: ChartTheme) -> Vec<NamedChart> {
    let label = run.label();
    let mut charts = Vec::new();
    if !run.has_rows() {
        let metrics = [(label.as_str(), &run.metrics)];
        charts.push(named(
            "percentiles",
            legacy_percentiles_bar(&metrics, theme),
        ));
        return charts;
    }
    for metric in DISTRIBUTION_CHART_METRICS {
        let values = metric.values(&run.rows);
        if values.is_empty() {
            continue;
        }
        let runs = [(label.as_str(), values.as_slice())];
        charts.push(named(
            &format!("hist-{}", metric.id()),
            distribution_histogram(&runs, metric, theme),
        ));
        charts.push(named(
            &format!("cdf-{}", metric.id()),
            distribution_cdf(&runs, metric, theme),
        ));
    }
    charts.push(named("timeline", timeline(&run.rows, &run.failures, theme)));
    charts.push(named("context", context_scatter(&run.rows, theme)));
    charts.push(named("throughput", throughput_over_time(&run.rows, theme)));
    if run.rows.iter().any(|row| !row.read_gaps_ms.is_empty()) {
        charts.push(named("read-gaps", read_gap_cdf(&run.rows, theme)));
        charts.push(named("stalls", longest_stalls(&run.rows, theme)));
    }
    charts
}

/// Charts for comparing runs: overlaid CDFs per distribution metric (of the runs that have
/// rows) and the p50/p95 bars of every run, which also covers legacy runs without rows.
pub fn comparison_charts(runs: &[&LoadedArtifact], theme: ChartTheme) -> Vec<NamedChart> {
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
        legacy_percentiles_bar(&metrics, theme),
    ));
    charts
}

fn named(id: &str, option: Value) -> NamedChart {
    let title = option
        .pointer("/title/0/text")
        .or_else(|| option.pointer("/title/text"))
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    NamedChart {
        id: id.to_owned(),
        title,
        option,
    }
}

/// Deterministic histogram bins shared by every run of one chart.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HistogramBins {
    /// Lower edge of the first bin.
    pub lower: f64,
    /// Width of every bin.
    pub width: f64,
    /// Number of bins, within [`HISTOGRAM_MIN_BINS`]..=[`HISTOGRAM_MAX_BINS`].
    pub count: usize,
}

impl HistogramBins {
    /// Freedman–Diaconis bins (width 2·IQR/∛n) over the finite `values`, the count clamped to
    /// 10..=60. Sturges' rule replaces it when the IQR is zero, and a single distinct value
    /// gets 11 bins centred on it. `None` when there is no finite value.
    pub fn for_values(values: &[f64]) -> Option<Self> {
        let mut sorted: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
        sorted.sort_by(f64::total_cmp);
        let (&min, &max) = (sorted.first()?, sorted.last()?);
        let range = max - min;
        if !(range > 0.0 && range.is_finite()) {
            // One distinct value: an odd count puts it in the middle of the middle bin.
            let span = (min.abs() * 0.1).max(1.0);
            let count = HISTOGRAM_MIN_BINS + 1;
            return Some(Self {
                lower: min - span / 2.0,
                width: span / count as f64,
                count,
            });
        }
        let n = sorted.len() as f64;
        let p25 = nearest_rank(&sorted, 25)?;
        let p75 = nearest_rank(&sorted, 75)?;
        let fd_width = 2.0 * (p75 - p25) / n.cbrt();
        let raw_count = if fd_width > 0.0 {
            (range / fd_width).ceil()
        } else {
            n.log2().ceil() + 1.0
        };
        let count = if raw_count.is_finite() {
            (raw_count as usize).clamp(HISTOGRAM_MIN_BINS, HISTOGRAM_MAX_BINS)
        } else {
            HISTOGRAM_MAX_BINS
        };
        Some(Self {
            lower: min,
            width: range / count as f64,
            count,
        })
    }

    /// The bin holding `value`; values on the upper edge belong to the last bin.
    pub fn bin_of(&self, value: f64) -> usize {
        let position = ((value - self.lower) / self.width).floor();
        if position.is_nan() || position < 0.0 {
            0
        } else {
            (position as usize).min(self.count - 1)
        }
    }

    /// The centre of bin `index`.
    pub fn center(&self, index: usize) -> f64 {
        self.lower + (index as f64 + 0.5) * self.width
    }

    /// The upper edge of the last bin.
    pub fn upper(&self) -> f64 {
        self.lower + self.count as f64 * self.width
    }
}

/// Histogram of one metric for one or more runs, on shared bins, with each run's p50, p95 and
/// p99 as dashed lines. One run shows request counts; several show each run's share (%) so
/// runs of different sizes compare.
pub fn distribution_histogram(
    runs: &[(&str, &[f64])],
    metric: MetricKind,
    theme: ChartTheme,
) -> Value {
    let file_stem = format!("strobe-histogram-{}", metric.id());
    let title = format!("{} distribution", metric.label());
    let given = runs.len();
    let runs = finite_runs(runs);
    let pooled: Vec<f64> = runs.iter().flat_map(|run| run.values.clone()).collect();
    let Some(bins) = HistogramBins::for_values(&pooled) else {
        return no_data(&title, "no request has this metric", &file_stem, theme);
    };
    let palette = theme.palette();
    let as_share = runs.len() > 1;
    let mut chart = base_chart(
        &title,
        &format!(
            "{} · {} bins of {} {} · dashed lines: p50, p95, p99",
            sample_summary(&runs, given),
            bins.count,
            format_number(bins.width),
            metric.unit()
        ),
        &file_stem,
        theme,
        Trigger::Item,
    )
    .grid(default_grid())
    // The axis must span every value, or percentile lines at the maximum fall off the edge;
    // rounding the bin edges outward keeps its labels round.
    .x_axis({
        let (axis_min, axis_max) = nice_extent(bins.lower, bins.upper());
        value_axis(&axis_name(metric), palette)
            .min(axis_min)
            .max(axis_max)
    })
    .y_axis(if as_share {
        y_value_axis("Share of the run's requests (%)", palette)
    } else {
        y_value_axis("Requests", palette).min_interval(1)
    });
    for run in &runs {
        let color = theme.series_color(run.color_index);
        let values = &run.values;
        let mut counts = vec![0usize; bins.count];
        for &value in values {
            counts[bins.bin_of(value)] += 1;
        }
        let total = values.len().max(1) as f64;
        let data: Vec<DataPoint> = counts
            .iter()
            .enumerate()
            .map(|(index, &count)| {
                let height = if as_share {
                    count as f64 * 100.0 / total
                } else {
                    count as f64
                };
                point(bins.center(index), height)
            })
            .collect();
        chart = chart.series(
            Bar::new()
                .name(run.label.as_str())
                .bar_gap("0%")
                .item_style(ItemStyle::new().color(color).opacity(0.8))
                .mark_line(percentile_lines(values, metric.unit(), color))
                .data(data),
        );
    }
    finish(chart, theme)
}

/// Empirical CDF of one metric for one or more runs (the share of requests at or below each
/// value), with each run's p50, p95 and p99 as dashed lines. Long runs are drawn through
/// [`CDF_MAX_POINTS`] evenly spaced ranks.
pub fn distribution_cdf(runs: &[(&str, &[f64])], metric: MetricKind, theme: ChartTheme) -> Value {
    let file_stem = format!("strobe-cdf-{}", metric.id());
    let title = format!("{} CDF", metric.label());
    let given = runs.len();
    let runs = finite_runs(runs);
    if runs.is_empty() {
        return no_data(&title, "no request has this metric", &file_stem, theme);
    }
    let palette = theme.palette();
    let mut chart = base_chart(
        &title,
        &format!(
            "{} · share of requests at or below each value · dashed lines: p50, p95, p99",
            sample_summary(&runs, given)
        ),
        &file_stem,
        theme,
        Trigger::Axis,
    )
    .grid(default_grid())
    .x_axis(value_axis(&axis_name(metric), palette).scale(true))
    .y_axis(
        y_value_axis("Requests at or below (%)", palette)
            .min(0)
            .max(100),
    );
    for run in &runs {
        let color = theme.series_color(run.color_index);
        let mut sorted = run.values.clone();
        sorted.sort_by(f64::total_cmp);
        let data = cdf_points(&sorted);
        chart = chart.series(
            Line::new()
                .name(run.label.as_str())
                .step(Step::End)
                .show_symbol(false)
                .line_style(LineStyle::new().color(color).width(2))
                .item_style(ItemStyle::new().color(color))
                .mark_line(percentile_lines(&sorted, metric.unit(), color))
                .data(data),
        );
    }
    finish(chart, theme)
}

/// The steps of an empirical CDF of ascending values: (value, percent at or below it),
/// starting at 0 % and thinned to at most [`CDF_MAX_POINTS`] steps; empty for no values.
fn cdf_points(sorted: &[f64]) -> Vec<DataPoint> {
    let count = sorted.len();
    let mut data = Vec::with_capacity(count.min(CDF_MAX_POINTS) + 1);
    if let Some(first) = sorted.first() {
        data.push(point(*first, 0.0));
    }
    for index in cdf_ranks(count) {
        data.push(point(
            sorted[index],
            (index + 1) as f64 * 100.0 / count as f64,
        ));
    }
    data
}

/// `[lower, upper]` widened to multiples of a 1-2-5 step that gives about five intervals.
fn nice_extent(lower: f64, upper: f64) -> (f64, f64) {
    let span = upper - lower;
    if !(span.is_finite() && span > 0.0) {
        return (lower, upper);
    }
    let raw_step = span / 5.0;
    let magnitude = 10f64.powf(raw_step.log10().floor());
    let step = magnitude
        * match raw_step / magnitude {
            residual if residual <= 1.0 => 1.0,
            residual if residual <= 2.0 => 2.0,
            residual if residual <= 5.0 => 5.0,
            _ => 10.0,
        };
    // Steps below 1 are decimal fractions: round away float noise such as 4.800000000000001.
    let decimals = (-magnitude.log10().round()).max(0.0) as i32;
    let scale = 10f64.powi(decimals);
    let tidy = |value: f64| (value * scale).round() / scale;
    (
        tidy((lower / step).floor() * step),
        tidy((upper / step).ceil() * step),
    )
}

/// Indexes of the sorted values drawn on a CDF: all of them up to [`CDF_MAX_POINTS`], else
/// that many evenly spaced ranks including the first and the last.
fn cdf_ranks(count: usize) -> Vec<usize> {
    even_ranks(count, CDF_MAX_POINTS)
}

/// `0..count` when it has at most `limit` items, else `limit` evenly spaced positions in it,
/// the first and the last included (`limit` below 2 keeps just the first).
fn even_ranks(count: usize, limit: usize) -> Vec<usize> {
    if count <= limit {
        return (0..count).collect();
    }
    if limit < 2 {
        return (0..limit).collect();
    }
    let steps = limit - 1;
    (0..limit).map(|step| step * (count - 1) / steps).collect()
}

/// The rows a sampled chart draws: all of them up to [`SAMPLED_CHART_MAX_REQUESTS`], else that
/// many evenly spaced by request index (first and last included).
fn sample_rows_by_index(mut rows: Vec<&RowView>) -> Vec<&RowView> {
    if rows.len() <= SAMPLED_CHART_MAX_REQUESTS {
        return rows;
    }
    rows.sort_by_key(|row| row.index_or_position());
    even_ranks(rows.len(), SAMPLED_CHART_MAX_REQUESTS)
        .into_iter()
        .map(|rank| rows[rank])
        .collect()
}

/// The subtitle line of a sampled chart, e.g. "showing 2,000 of 10,000 requests, evenly
/// sampled by index"; `None` when every request is drawn.
fn sampling_note(shown: usize, of: usize, what: &str) -> Option<String> {
    (shown < of).then(|| {
        format!(
            "showing {} of {} {what}, evenly sampled by index",
            format_count(shown),
            format_count(of)
        )
    })
}

/// Per-request timeline: one horizontal line per request, split into waiting for the first
/// output (TTFO), reasoning (first output → first content, TTFT) and content (→ end),
/// with failed requests marked. Rows with `started_at_ms` are placed on the run's clock
/// (seconds); older rows have no start times, so each request is drawn from 0 ms. The y axis
/// is the request index. Above [`SAMPLED_CHART_MAX_REQUESTS`] completed requests an even
/// sample of them by index is drawn (the subtitle says so); failures are always all drawn.
pub fn timeline(rows: &[RowView], failures: &[FailureView], theme: ChartTheme) -> Value {
    let file_stem = "strobe-timeline";
    let title = "Request timeline";
    if rows.is_empty() && failures.is_empty() {
        return no_data(title, "the artifact has no request rows", file_stem, theme);
    }
    let palette = theme.palette();
    let on_run_clock = rows.iter().any(|row| row.started_at_ms.is_some());
    // On the run clock x is in seconds; aligned at each request's start it is in ms.
    let scale = if on_run_clock { 1000.0 } else { 1.0 };
    let start_of = |row: &RowView| {
        if on_run_clock {
            row.started_at_ms
        } else {
            Some(0.0)
        }
    };
    let drawable: Vec<&RowView> = rows
        .iter()
        .filter(|row| start_of(row).is_some() && row.ttft_ms.is_some() && row.e2e_ms.is_some())
        .collect();
    let not_drawn = rows.len() - drawable.len();
    let drawable_count = drawable.len();
    let shown = sample_rows_by_index(drawable);
    let (first_index, last_index) = shown
        .iter()
        .map(|row| row.index_or_position())
        .chain(failures.iter().map(FailureView::index_or_position))
        .fold((u64::MAX, 0), |(low, high), index| {
            (low.min(index), high.max(index))
        });
    let (first_index, last_index) = if first_index > last_index {
        (0, 0)
    } else {
        (first_index, last_index)
    };
    // About 360 px of plot height shared by the requests' rows.
    let rows_on_axis = (last_index - first_index) as f64 + 1.0;
    let line_width = (360.0 / rows_on_axis).clamp(1.0, 6.0);

    let mut phases: [Vec<DataPoint>; 3] = [Vec::new(), Vec::new(), Vec::new()];
    let mut ends = Vec::new();
    for row in &shown {
        let (Some(start), Some(ttft), Some(e2e)) = (start_of(row), row.ttft_ms, row.e2e_ms) else {
            continue;
        };
        let ttfo = row.ttfo_ms.unwrap_or(ttft);
        let request = row.index_or_position() as f64;
        let at = |offset_ms: f64| (start + offset_ms) / scale;
        push_segment(&mut phases[0], at(0.0), at(ttfo), request);
        if ttft > ttfo {
            push_segment(&mut phases[1], at(ttfo), at(ttft), request);
        }
        push_segment(&mut phases[2], at(ttft), at(e2e), request);
        ends.push(point(at(e2e), request));
    }
    let mut failure_segments = Vec::new();
    let mut failure_marks = Vec::new();
    let mut unplaced_failures = Vec::new();
    for failure in failures {
        let request = failure.index_or_position() as f64;
        let class = failure
            .failure_class
            .as_ref()
            .or(failure.error_type.as_ref())
            .map(|text| CappedText::with_limit(&text.text, LABEL_MAX_CHARS).to_string())
            .unwrap_or_else(|| "failed".to_owned());
        let name = format!("request {}: {class}", failure.index_or_position());
        let start = if on_run_clock {
            failure.started_at_ms
        } else {
            Some(0.0)
        };
        let Some(start) = start else {
            // Failures keep no start time on the run clock: mark their row at the left edge.
            unplaced_failures.push(named_point(0.0, request, name));
            continue;
        };
        let end = (start + failure.elapsed_ms.unwrap_or(0.0)) / scale;
        if failure.elapsed_ms.is_some() {
            push_segment(&mut failure_segments, start / scale, end, request);
        }
        failure_marks.push(named_point(end, request, name));
    }

    let mut subtitle = format!(
        "{} requests, {} failed · ",
        format_count(rows.len() + failures.len()),
        format_count(failures.len())
    );
    subtitle.push_str(if on_run_clock {
        "placed at each request's start on the run clock"
    } else {
        "this artifact keeps no request start times, so every request is drawn from 0 ms"
    });
    if not_drawn > 0 {
        subtitle.push_str(&format!(
            " · {} rows lack the times to draw them",
            format_count(not_drawn)
        ));
    }
    if !unplaced_failures.is_empty() {
        subtitle.push_str(" · failures without a start time are marked at 0");
    }
    if let Some(note) = sampling_note(shown.len(), drawable_count, "completed requests") {
        subtitle.push_str(&format!("\n{note}; every failure is drawn"));
    }
    let x_name = if on_run_clock {
        "Time since run start (s)"
    } else {
        "Time since request start (ms)"
    };
    let mut chart = base_chart(title, &subtitle, file_stem, theme, Trigger::Item)
        .grid(default_grid())
        .x_axis(value_axis(x_name, palette).min(0))
        .y_axis(
            // A value axis, not one category per request: 10,000 category labels cost ECharts
            // more to measure than the lines cost to draw, and sampled-out requests stay gaps.
            name_beside_axis(
                value_axis("Request index", palette),
                palette,
                NameLocation::Start,
                "left",
            )
            .inverse(true)
            .min(first_index as f64)
            .max(last_index as f64)
            .min_interval(1),
        )
        .data_zoom(
            DataZoom::new()
                .type_(DataZoomType::Inside)
                .x_axis_index(0)
                .filter_mode(FilterMode::None),
        )
        .data_zoom(
            DataZoom::new()
                .type_(DataZoomType::Inside)
                .y_axis_index(0)
                .filter_mode(FilterMode::None),
        );
    let phase_names = [
        "To first output (TTFO)",
        "Reasoning (to TTFT)",
        "Content (to end)",
    ];
    for ((name, data), color) in phase_names.iter().zip(phases).zip(palette.phases) {
        if data.is_empty() {
            continue;
        }
        chart = chart.series(segment_series(
            name,
            color,
            line_width,
            LineStyleType::Solid,
            data,
        ));
    }
    if !ends.is_empty() {
        chart = chart.series(
            Scatter::new()
                .name("End")
                .symbol(Symbol::Circle)
                .symbol_size((line_width + 2.0).min(6.0))
                .item_style(ItemStyle::new().color(palette.phases[2]))
                .data(ends),
        );
    }
    if !failure_segments.is_empty() {
        chart = chart.series(segment_series(
            "Failed (to error)",
            palette.failure,
            line_width,
            LineStyleType::Dashed,
            failure_segments,
        ));
    }
    if !failure_marks.is_empty() {
        chart = chart.series(
            Scatter::new()
                .name("Failure")
                .symbol(Symbol::Triangle)
                .symbol_size(9)
                .item_style(ItemStyle::new().color(palette.failure))
                .data(failure_marks),
        );
    }
    if !unplaced_failures.is_empty() {
        chart = chart.series(
            Scatter::new()
                .name("Failure (start not recorded)")
                .symbol(Symbol::Rect)
                .symbol_size(7)
                .item_style(ItemStyle::new().color(palette.failure))
                .data(unplaced_failures),
        );
    }
    finish(chart, theme)
}

fn push_segment(data: &mut Vec<DataPoint>, from: f64, to: f64, request: f64) {
    if from.is_finite() && to.is_finite() {
        data.push(point(from, request));
        data.push(point(to, request));
        // `-` is ECharts' "no data": it breaks the line between requests.
        data.push(DataPoint::from("-"));
    }
}

fn segment_series(
    name: &str,
    color: &str,
    width: f64,
    style: LineStyleType,
    data: Vec<DataPoint>,
) -> Line {
    Line::new()
        .name(name)
        .show_symbol(false)
        .connect_nulls(false)
        .line_style(LineStyle::new().color(color).width(width).type_(style))
        .item_style(ItemStyle::new().color(color))
        .data(data)
}

/// Prompt tokens against TTFO (top) and against effective prefill rate (bottom). Requests
/// that hit the prefix cache (`cached_tokens > 0`) are a separate series: their huge
/// "prefill" rates are expected, not errors (§5). Rows of artifacts that record no
/// `cached_tokens` form one "cache use not recorded" series. Above
/// [`SAMPLED_CHART_MAX_REQUESTS`] plotted requests an even sample of them by index is drawn
/// (the subtitle says so; its counts are of every row).
pub fn context_scatter(rows: &[RowView], theme: ChartTheme) -> Value {
    let file_stem = "strobe-context";
    let title = "Context size against TTFO and effective prefill";
    let palette = theme.palette();
    #[derive(Clone, Copy)]
    enum CacheUse {
        Miss,
        Hit,
        Unknown,
    }
    let classes = [CacheUse::Miss, CacheUse::Hit, CacheUse::Unknown];
    let cache_use = |row: &RowView| {
        (match row.cached_tokens {
            Some(0) => CacheUse::Miss,
            Some(_) => CacheUse::Hit,
            None => CacheUse::Unknown,
        }) as usize
    };
    let ttfo_of = |row: &RowView| row.ttfo_or_ttft_ms().filter(|value| value.is_finite());
    let prefill_of = |row: &RowView| row.prefill_tok_s.filter(|value| value.is_finite());
    let plotted: Vec<&RowView> = rows
        .iter()
        .filter(|row| {
            row.prompt_tokens.is_some() && (ttfo_of(row).is_some() || prefill_of(row).is_some())
        })
        .collect();
    if plotted.is_empty() {
        return no_data(
            title,
            "no request row has prompt tokens with a TTFO or prefill rate",
            file_stem,
            theme,
        );
    }
    // The counts in the subtitle are over every row, never over the drawn sample.
    let mut ttfo_counts = [0usize; 3];
    for row in plotted.iter().filter(|row| ttfo_of(row).is_some()) {
        ttfo_counts[cache_use(row)] += 1;
    }
    let plotted_count = plotted.len();
    let shown = sample_rows_by_index(plotted);
    let mut ttfo_points: [Vec<DataPoint>; 3] = [Vec::new(), Vec::new(), Vec::new()];
    let mut prefill_points: [Vec<DataPoint>; 3] = [Vec::new(), Vec::new(), Vec::new()];
    for row in &shown {
        let Some(prompt_tokens) = row.prompt_tokens else {
            continue;
        };
        let class = cache_use(row);
        let prompt_tokens = prompt_tokens as f64;
        if let Some(ttfo) = ttfo_of(row) {
            ttfo_points[class].push(point(prompt_tokens, ttfo));
        }
        if let Some(prefill) = prefill_of(row) {
            prefill_points[class].push(point(prompt_tokens, prefill));
        }
    }
    let requests = format_count(ttfo_counts.iter().sum::<usize>());
    let hits = format_count(ttfo_counts[CacheUse::Hit as usize]);
    let mut subtitle = if ttfo_counts[CacheUse::Unknown as usize] == 0 {
        format!(
            "{requests} requests, {hits} with prefix-cache hits · cache hits skip prefill, \
             so their rates are expected to be high"
        )
    } else {
        format!(
            "{requests} requests · this artifact records no per-request cached_tokens, so \
             cache hits cannot be told apart"
        )
    };
    if let Some(note) = sampling_note(shown.len(), plotted_count, "requests") {
        subtitle.push('\n');
        subtitle.push_str(&note);
    }
    let mut chart = base_chart(title, &subtitle, file_stem, theme, Trigger::Item)
        .grid(
            Grid::new()
                .left(16)
                .right("53%")
                .top(GRID_TOP)
                .bottom(72)
                .contain_label(true),
        )
        .grid(
            Grid::new()
                .left("53%")
                .right(24)
                .top(GRID_TOP)
                .bottom(72)
                .contain_label(true),
        )
        .x_axis(
            value_axis("Prompt tokens", palette)
                .grid_index(0)
                .scale(true),
        )
        .x_axis(
            value_axis("Prompt tokens", palette)
                .grid_index(1)
                .scale(true),
        )
        .y_axis(y_value_axis("TTFO (ms)", palette).grid_index(0))
        .y_axis(y_value_axis("Effective prefill (tok/s)", palette).grid_index(1));
    for (class, (ttfo, prefill)) in classes
        .iter()
        .zip(ttfo_points.into_iter().zip(prefill_points))
    {
        let (name, color, symbol) = match class {
            CacheUse::Miss => ("No prefix-cache hit", theme.series_color(0), Symbol::Circle),
            CacheUse::Hit => (
                "Prefix-cache hit (cached_tokens > 0)",
                theme.series_color(1),
                Symbol::Diamond,
            ),
            CacheUse::Unknown => (
                "Cache use not recorded",
                theme.series_color(0),
                Symbol::Circle,
            ),
        };
        for (axis, data) in [(0.0, ttfo), (1.0, prefill)] {
            if data.is_empty() {
                continue;
            }
            chart = chart.series(
                Scatter::new()
                    .name(name)
                    .x_axis_index(axis)
                    .y_axis_index(axis)
                    .symbol(symbol.clone())
                    .symbol_size(7)
                    .item_style(ItemStyle::new().color(color).opacity(0.75))
                    .data(data),
            );
        }
    }
    finish(chart, theme)
}

/// The per-chunk view of a traced run (*Chunk traces*): the distribution of the gaps between
/// consecutive stream reads that carried events, pooled over every traced request. A gap is
/// what a user watching the stream waits for the next words; events that shared one read have
/// no gap between them (`client.sse.events_sharing_a_read` counts them).
pub fn read_gap_cdf(rows: &[RowView], theme: ChartTheme) -> Value {
    let file_stem = "strobe-read-gaps";
    let title = "Gaps between stream reads";
    let traced = rows
        .iter()
        .filter(|row| !row.read_gaps_ms.is_empty())
        .count();
    let mut gaps: Vec<f64> = rows
        .iter()
        .flat_map(|row| row.read_gaps_ms.iter().copied())
        .collect();
    if gaps.is_empty() {
        return no_data(
            title,
            "no row has a chunk trace (turn Chunk traces on before the run)",
            file_stem,
            theme,
        );
    }
    gaps.sort_by(f64::total_cmp);
    let palette = theme.palette();
    let color = theme.series_color(0);
    let count = gaps.len();
    let data = cdf_points(&gaps);
    let chart = base_chart(
        title,
        &format!(
            "{} gaps over {} traced requests · share of gaps at or below each value · dashed \
             lines: p50, p95, p99",
            format_count(count),
            format_count(traced)
        ),
        file_stem,
        theme,
        Trigger::Axis,
    )
    .grid(default_grid())
    .x_axis(value_axis("Gap between reads (ms)", palette).scale(true))
    .y_axis(
        y_value_axis("Gaps at or below (%)", palette)
            .min(0)
            .max(100),
    )
    .series(
        Line::new()
            .name("read gaps")
            .step(Step::End)
            .show_symbol(false)
            .line_style(LineStyle::new().color(color).width(2))
            .item_style(ItemStyle::new().color(color))
            .mark_line(percentile_lines(&gaps, "ms", color))
            .data(data),
    );
    finish(chart, theme)
}

/// The longest stall of every traced request (its largest gap between two reads), by request
/// index: where in the run the stream stopped flowing, and for how long.
pub fn longest_stalls(rows: &[RowView], theme: ChartTheme) -> Value {
    let file_stem = "strobe-stalls";
    let title = "Longest stall per request";
    let traced: Vec<&RowView> = rows
        .iter()
        .filter(|row| row.longest_stall_ms().is_some())
        .collect();
    let Some(worst) = traced
        .iter()
        .max_by(|a, b| {
            f64::total_cmp(
                &a.longest_stall_ms().unwrap_or(0.0),
                &b.longest_stall_ms().unwrap_or(0.0),
            )
        })
        .copied()
    else {
        return no_data(
            title,
            "no row has a chunk trace (turn Chunk traces on before the run)",
            file_stem,
            theme,
        );
    };
    let palette = theme.palette();
    let subtitle = format!(
        "{} traced requests · the worst: {} ms (request {})",
        format_count(traced.len()),
        format_number(worst.longest_stall_ms().unwrap_or(0.0)),
        worst.index_or_position()
    );
    let traced_count = traced.len();
    let shown = sample_rows_by_index(traced);
    let subtitle = match sampling_note(shown.len(), traced_count, "requests") {
        Some(note) => format!("{subtitle}\n{note}"),
        None => subtitle,
    };
    let data: Vec<DataPoint> = shown
        .iter()
        .map(|row| {
            let stall = row.longest_stall_ms().unwrap_or(0.0);
            named_point(
                row.index_or_position() as f64,
                stall,
                format!(
                    "request {}: {} ms",
                    row.index_or_position(),
                    format_number(stall)
                ),
            )
        })
        .collect();
    let chart = base_chart(title, &subtitle, file_stem, theme, Trigger::Item)
        .grid(default_grid())
        .x_axis(value_axis("Request index", palette).scale(true))
        .y_axis(y_value_axis("Longest gap between reads (ms)", palette))
        .series(
            Scatter::new()
                .name("longest stall")
                .symbol(Symbol::Circle)
                .symbol_size(7)
                .item_style(ItemStyle::new().color(theme.series_color(0)))
                .data(data),
        );
    finish(chart, theme)
}

/// Output tokens per second and requests in flight over the run, in 50–200 time buckets.
/// Each request's output tokens are spread evenly over its generation time (first output to
/// end); in-flight is the time-averaged number of open requests per bucket. Needs the
/// `started_at_ms` that strobe writes; older artifacts get a "no data" option saying so.
pub fn throughput_over_time(rows: &[RowView], theme: ChartTheme) -> Value {
    let file_stem = "strobe-throughput";
    let title = "Throughput and requests in flight over the run";
    let spans: Vec<(f64, f64, f64, Option<u64>)> = rows
        .iter()
        .filter_map(|row| {
            let start = row.started_at_ms?;
            let e2e = row.e2e_ms?;
            let first_output = row
                .ttfo_or_ttft_ms()
                .unwrap_or(0.0)
                .clamp(0.0, e2e.max(0.0));
            (e2e >= 0.0).then_some((start, start + first_output, start + e2e, row.output_tokens))
        })
        .collect();
    if spans.is_empty() {
        let reason = if rows.is_empty() {
            "the artifact has no request rows"
        } else {
            "its rows have no started_at_ms (only strobe records request start times)"
        };
        return no_data(title, reason, file_stem, theme);
    }
    let run_start = spans
        .iter()
        .map(|span| span.0)
        .fold(f64::INFINITY, f64::min);
    let run_end = spans
        .iter()
        .map(|span| span.2)
        .fold(f64::NEG_INFINITY, f64::max);
    if run_end <= run_start {
        return no_data(title, "the requests span no time", file_stem, theme);
    }
    let buckets = spans
        .len()
        .clamp(THROUGHPUT_MIN_BUCKETS, THROUGHPUT_MAX_BUCKETS);
    let width_ms = (run_end - run_start) / buckets as f64;
    let bucket_of = |time: f64| {
        let position = ((time - run_start) / width_ms).floor();
        if position.is_nan() || position < 0.0 {
            0
        } else {
            (position as usize).min(buckets - 1)
        }
    };
    let mut tokens = vec![0.0f64; buckets];
    let mut open_ms = vec![0.0f64; buckets];
    for &(start, first_output, end, output_tokens) in &spans {
        let (first_bucket, last_bucket) = (bucket_of(start), bucket_of(end));
        for (bucket, open) in open_ms
            .iter_mut()
            .enumerate()
            .take(last_bucket + 1)
            .skip(first_bucket)
        {
            *open += overlap_ms(start, end, bucket, run_start, width_ms);
        }
        let Some(output_tokens) = output_tokens else {
            continue;
        };
        let generation_ms = end - first_output;
        if generation_ms <= 0.0 {
            tokens[bucket_of(end)] += output_tokens as f64;
            continue;
        }
        let (first_bucket, last_bucket) = (bucket_of(first_output), bucket_of(end));
        for (bucket, count) in tokens
            .iter_mut()
            .enumerate()
            .take(last_bucket + 1)
            .skip(first_bucket)
        {
            let share = overlap_ms(first_output, end, bucket, run_start, width_ms) / generation_ms;
            *count += output_tokens as f64 * share;
        }
    }
    let center_s = |bucket: usize| (run_start + (bucket as f64 + 0.5) * width_ms) / 1000.0;
    let rate: Vec<DataPoint> = tokens
        .iter()
        .enumerate()
        .map(|(bucket, &count)| point(center_s(bucket), count * 1000.0 / width_ms))
        .collect();
    let in_flight: Vec<DataPoint> = open_ms
        .iter()
        .enumerate()
        .map(|(bucket, &open)| point(center_s(bucket), open / width_ms))
        .collect();
    let palette = theme.palette();
    let subtitle = format!(
        "{} requests · {buckets} buckets of {} s · tokens spread evenly over each request's \
         generation time",
        format_count(spans.len()),
        format_number(width_ms / 1000.0)
    );
    let chart = base_chart(title, &subtitle, file_stem, theme, Trigger::Axis)
        .grid(default_grid())
        .x_axis(value_axis("Time since run start (s)", palette).scale(true))
        .y_axis(y_value_axis("Output tokens/s", palette).min(0))
        .y_axis(
            name_beside_axis(
                value_axis("Requests in flight", palette),
                palette,
                NameLocation::End,
                "right",
            )
            .min(0)
            .split_line(SplitLine::new().show(false)),
        )
        .series(
            Line::new()
                .name("Output tokens/s")
                .show_symbol(false)
                .line_style(LineStyle::new().color(theme.series_color(0)).width(2))
                .item_style(ItemStyle::new().color(theme.series_color(0)))
                .data(rate),
        )
        .series(
            Line::new()
                .name("Requests in flight")
                .y_axis_index(1)
                .step(Step::Middle)
                .show_symbol(false)
                .line_style(LineStyle::new().color(theme.series_color(1)).width(2))
                .item_style(ItemStyle::new().color(theme.series_color(1)))
                .data(in_flight),
        );
    finish(chart, theme)
}

/// How long `[from, to]` overlaps bucket `bucket` of width `width_ms` starting at `origin`.
fn overlap_ms(from: f64, to: f64, bucket: usize, origin: f64, width_ms: f64) -> f64 {
    let bucket_start = origin + bucket as f64 * width_ms;
    let bucket_end = bucket_start + width_ms;
    (to.min(bucket_end) - from.max(bucket_start)).max(0.0)
}

/// p50 and p95 latencies (TTFO, TTFT, E2E) as the runs' `metrics` state them, one pair
/// of bars per run. It is what artifacts without request rows (G1, G2) can show, and the
/// side-by-side view for comparisons.
pub fn legacy_percentiles_bar(runs: &[(&str, &KeyMetrics)], theme: ChartTheme) -> Value {
    let file_stem = "strobe-percentiles";
    let title = "Latency percentiles (p50, p95)";
    // TPOT (a few ms) would be invisible next to E2E (seconds); the tables carry it.
    let kinds: Vec<MetricKind> = [MetricKind::Ttfo, MetricKind::Ttft, MetricKind::E2e]
        .into_iter()
        .filter(|&kind| {
            runs.iter().any(|(_, metrics)| {
                let summary = metrics.get(kind);
                summary.p50.is_some() || summary.p95.is_some()
            })
        })
        .collect();
    if kinds.is_empty() {
        return no_data(
            title,
            "no run states a p50 or p95 latency in its metrics",
            file_stem,
            theme,
        );
    }
    let palette = theme.palette();
    let labels: Vec<String> = runs.iter().map(|(label, _)| (*label).to_owned()).collect();
    let labels = distinct_labels(&labels);
    let mut chart = base_chart(
        title,
        "from each artifact's summary metrics · solid: p50 · faded: p95",
        file_stem,
        theme,
        Trigger::Item,
    )
    .grid(default_grid())
    .x_axis(
        category_axis("Metric", palette)
            .data(kinds.iter().map(|kind| kind.short_label()).collect()),
    )
    .y_axis(y_value_axis("Latency (ms)", palette).min(0));
    for (position, ((_, metrics), label)) in runs.iter().zip(&labels).enumerate() {
        let color = theme.series_color(position);
        for (stat, opacity) in [("p50", 1.0), ("p95", 0.5)] {
            let data: Vec<DataPoint> = kinds
                .iter()
                .map(|&kind| {
                    let summary = metrics.get(kind);
                    let value = if stat == "p50" {
                        summary.p50
                    } else {
                        summary.p95
                    };
                    match value {
                        Some(value) => DataPoint::from(value),
                        None => DataPoint::from("-"),
                    }
                })
                .collect();
            chart = chart.series(
                Bar::new()
                    .name(format!("{label} · {stat}"))
                    .item_style(ItemStyle::new().color(color).opacity(opacity))
                    .data(data),
            );
        }
    }
    finish(chart, theme)
}

/// An option that draws nothing but says why, so a card never shows an empty frame.
pub fn no_data(title: &str, reason: &str, file_stem: &str, theme: ChartTheme) -> Value {
    let chart = base_chart(
        title,
        &format!("No data: {reason}."),
        file_stem,
        theme,
        Trigger::Item,
    );
    finish(chart, theme)
}

/// The plot area of single-grid charts, leaving room for title, legend and axis names.
fn default_grid() -> Grid {
    Grid::new()
        .left(72)
        .right(72)
        .top(GRID_TOP)
        .bottom(72)
        .contain_label(true)
}

/// Title, legend, tooltip, toolbox and colours shared by every chart (the grid is per chart).
fn base_chart(
    title: &str,
    subtitle: &str,
    file_stem: &str,
    theme: ChartTheme,
    trigger: Trigger,
) -> Chart {
    let palette = theme.palette();
    Chart::new()
        .animation(false)
        .color(palette.series.to_vec())
        .title(
            Title::new()
                .text(title)
                .subtext(subtitle)
                .left(16)
                .top(8)
                .text_style(TextStyle::new().color(palette.text).font_size(15))
                // An explicit line height: ECharts draws the lines of a "\n"-split subtitle
                // on top of each other without one.
                .subtext_style(
                    TextStyle::new()
                        .color(palette.muted_text)
                        .font_size(12)
                        .line_height(16),
                ),
        )
        .legend(
            Legend::new()
                .type_(LegendType::Scroll)
                .bottom(4)
                .text_style(TextStyle::new().color(palette.text)),
        )
        .tooltip(Tooltip::new().trigger(trigger))
        .toolbox(
            Toolbox::new().right(16).top(8).feature(
                Feature::new().save_as_image(
                    SaveAsImage::new()
                        .type_(SaveAsImageType::Png)
                        .name(file_stem)
                        .background_color(palette.background),
                ),
            ),
        )
}

fn value_axis(name: &str, palette: &Palette) -> Axis {
    styled_axis(Axis::new().type_(AxisType::Value), name, palette)
}

/// A vertical value axis with its name written horizontally above it.
fn y_value_axis(name: &str, palette: &Palette) -> Axis {
    name_beside_axis(
        value_axis(name, palette),
        palette,
        NameLocation::End,
        "left",
    )
}

/// Writes a y axis name horizontally at one end of the axis (`align` away from the plot edge)
/// instead of rotated along it, where wide tick labels such as 1,000,000 would overlap it.
fn name_beside_axis(axis: Axis, palette: &Palette, location: NameLocation, align: &str) -> Axis {
    axis.name_location(location)
        .name_gap(14)
        .name_text_style(TextStyle::new().color(palette.text).align(align))
}

fn category_axis(name: &str, palette: &Palette) -> Axis {
    styled_axis(Axis::new().type_(AxisType::Category), name, palette)
}

fn styled_axis(axis: Axis, name: &str, palette: &Palette) -> Axis {
    axis.name(name)
        .name_location(NameLocation::Middle)
        .name_gap(40)
        .name_text_style(TextStyle::new().color(palette.text))
        .axis_label(AxisLabel::new().color(palette.muted_text))
        .split_line(SplitLine::new().line_style(LineStyle::new().color(palette.split_line)))
}

/// Serializes the chart and adds what charming cannot express: `renderMode: "richText"` on
/// every tooltip (canvas text, so no file text is ever parsed as HTML), the global text
/// colour, a transparent background, and axis-line colours.
fn finish(chart: Chart, theme: ChartTheme) -> Value {
    let palette = theme.palette();
    let mut option = match serde_json::to_value(&chart) {
        Ok(Value::Object(option)) => option,
        // Serializing plain option structs cannot fail; an empty option still renders.
        _ => serde_json::Map::new(),
    };
    option.insert("backgroundColor".to_owned(), json!("transparent"));
    option.insert("textStyle".to_owned(), json!({ "color": palette.text }));
    let tooltip = option.entry("tooltip").or_insert_with(|| json!({}));
    force_rich_text(tooltip);
    if let Some(tooltip) = tooltip.as_object_mut() {
        tooltip.insert("confine".to_owned(), json!(true));
    }
    if let Some(Value::Array(series)) = option.get_mut("series") {
        for series in series {
            if let Some(tooltip) = series.get_mut("tooltip") {
                force_rich_text(tooltip);
            }
            use_large_mode_when_big(series);
        }
    }
    for axis_key in ["xAxis", "yAxis"] {
        match option.get_mut(axis_key) {
            Some(Value::Array(axes)) => axes
                .iter_mut()
                .for_each(|axis| color_axis_line(axis, palette)),
            Some(axis) => color_axis_line(axis, palette),
            None => {}
        }
    }
    Value::Object(option)
}

fn force_rich_text(tooltip: &mut Value) {
    if let Some(tooltip) = tooltip.as_object_mut() {
        tooltip.insert("renderMode".to_owned(), json!("richText"));
    }
}

/// Puts a scatter series of more than [`SCATTER_LARGE_THRESHOLD`] points in ECharts' `large`
/// mode: its symbols become one path instead of one canvas element each (hover tooltips still
/// work), which draws thousands of points in milliseconds instead of hundreds of them.
fn use_large_mode_when_big(series: &mut Value) {
    let Some(series) = series.as_object_mut() else {
        return;
    };
    let points = series
        .get("data")
        .and_then(Value::as_array)
        .map_or(0, Vec::len);
    if series.get("type") == Some(&json!("scatter")) && points > SCATTER_LARGE_THRESHOLD {
        series.insert("large".to_owned(), json!(true));
        series.insert("largeThreshold".to_owned(), json!(SCATTER_LARGE_THRESHOLD));
    }
}

fn color_axis_line(axis: &mut Value, palette: &Palette) {
    if let Some(axis) = axis.as_object_mut() {
        axis.insert(
            "axisLine".to_owned(),
            json!({ "lineStyle": { "color": palette.axis_line } }),
        );
    }
}

/// Dashed vertical lines at the nearest-rank p50, p95 and p99 of `values`, labelled with the
/// value and unit (text this module writes, never text from a file).
fn percentile_lines(values: &[f64], unit: &str, color: &str) -> MarkLine {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    // Small runs often have p95 == p99; one line labelled "p95/p99" keeps labels readable.
    let mut marks: Vec<(String, f64)> = Vec::new();
    for percent in MARKED_PERCENTILES {
        let Some(value) = nearest_rank(&sorted, percent) else {
            continue;
        };
        match marks.last_mut() {
            Some((names, last)) if *last == value => names.push_str(&format!("/p{percent}")),
            _ => marks.push((format!("p{percent}"), value)),
        }
    }
    let data: Vec<MarkLineVariant> = marks
        .into_iter()
        .map(|(names, value)| {
            MarkLineVariant::Simple(
                MarkLineData::new()
                    .name(format!("{names} {} {unit}", format_number(value)))
                    .x_axis(value),
            )
        })
        .collect();
    MarkLine::new()
        .silent(true)
        .symbol(vec![Symbol::None, Symbol::None])
        .label(
            Label::new()
                .formatter("{b}")
                .position(LabelPosition::InsideEndTop)
                .color(color),
        )
        .line_style(
            LineStyle::new()
                .color(color)
                .type_(LineStyleType::Dashed)
                .width(1),
        )
        .data(data)
}

/// A point with a name that the (rich-text) tooltip shows as plain canvas text.
fn named_point(x: f64, y: f64, name: String) -> DataPoint {
    DataPoint::from(DataPointItem::new(vec![finite_or_zero(x), finite_or_zero(y)]).name(name))
}

fn point(x: f64, y: f64) -> DataPoint {
    DataPoint::from(CompositeValue::from(vec![
        finite_or_zero(x),
        finite_or_zero(y),
    ]))
}

/// Keeps NaN and infinities out of options (ECharts would draw garbage, JSON has no NaN).
fn finite_or_zero(value: f64) -> f64 {
    if value.is_finite() {
        value
    } else {
        0.0
    }
}

/// One run's values as a distribution chart draws them.
struct RunValues {
    /// Capped, distinct legend label.
    label: String,
    /// The finite values.
    values: Vec<f64>,
    /// The run's position in the caller's list, which picks its colour, so a run keeps its
    /// colour when runs before it have nothing to draw.
    color_index: usize,
}

/// Runs with their non-finite values dropped and labels capped and made distinct; runs left
/// without values are dropped.
fn finite_runs(runs: &[(&str, &[f64])]) -> Vec<RunValues> {
    let labels: Vec<String> = runs.iter().map(|(label, _)| (*label).to_owned()).collect();
    let labels = distinct_labels(&labels);
    runs.iter()
        .zip(labels)
        .enumerate()
        .map(|(color_index, ((_, values), label))| RunValues {
            label,
            values: values.iter().copied().filter(|v| v.is_finite()).collect(),
            color_index,
        })
        .filter(|run| !run.values.is_empty())
        .collect()
}

/// Labels capped at [`LABEL_MAX_CHARS`] and made distinct (` (2)`, ` (3)` …), because ECharts
/// merges series that share a name.
fn distinct_labels(labels: &[String]) -> Vec<String> {
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    labels
        .iter()
        .map(|label| {
            let capped = CappedText::with_limit(label, LABEL_MAX_CHARS).to_string();
            let count = seen.entry(capped.clone()).or_insert(0);
            *count += 1;
            if *count == 1 {
                capped
            } else {
                format!("{capped} ({count})")
            }
        })
        .collect()
}

fn sample_summary(runs: &[RunValues], given: usize) -> String {
    match runs {
        [run] if given == 1 => format!("{} requests", format_count(run.values.len())),
        _ if runs.len() == given => format!("{given} runs"),
        _ => format!(
            "{} of {given} runs (the others have no request rows with this metric)",
            runs.len()
        ),
    }
}

fn axis_name(metric: MetricKind) -> String {
    format!("{} ({})", metric.short_label(), metric.unit())
}

/// A count with thousands separators (10000 → "10,000"), as subtitles write counts.
pub fn format_count(count: usize) -> String {
    let digits = count.to_string();
    let mut grouped = String::with_capacity(digits.len() + digits.len() / 3);
    for (position, digit) in digits.chars().enumerate() {
        if position > 0 && (digits.len() - position) % 3 == 0 {
            grouped.push(',');
        }
        grouped.push(digit);
    }
    grouped
}

/// A number for labels: whole numbers without decimals, else fewer decimals as magnitude grows
/// (1234.5 → 1235, 12.35 → 12.3, 4.3109 → 4.31, 0.3333 → 0.333).
pub fn format_number(value: f64) -> String {
    if !value.is_finite() {
        return "n/a".to_owned();
    }
    let magnitude = value.abs();
    if magnitude >= 100.0 || (value.fract() == 0.0 && magnitude < 1e15) {
        format!("{value:.0}")
    } else if magnitude >= 10.0 {
        format!("{value:.1}")
    } else if magnitude >= 1.0 {
        format!("{value:.2}")
    } else {
        format!("{value:.3}")
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;

    fn row(index: u64, started_at_ms: f64, ttfo: f64, ttft: f64, e2e: f64, out: u64) -> RowView {
        RowView {
            position: index as usize,
            request_index: Some(index),
            started_at_ms: Some(started_at_ms),
            ttfo_ms: Some(ttfo),
            ttft_ms: Some(ttft),
            e2e_ms: Some(e2e),
            output_tokens: Some(out),
            ..RowView::default()
        }
    }

    fn points(series: &Value) -> Vec<(f64, f64)> {
        series["data"]
            .as_array()
            .map(|data| {
                data.iter()
                    .filter_map(|point| Some((point[0].as_f64()?, point[1].as_f64()?)))
                    .collect()
            })
            .unwrap_or_default()
    }

    #[test]
    fn histogram_bins_follow_freedman_diaconis_within_the_clamp() {
        assert_eq!(HistogramBins::for_values(&[]), None);
        assert_eq!(HistogramBins::for_values(&[f64::NAN]), None);

        // 0..=9999: nearest-rank p25 = 2499 and p75 = 7499, so the FD width is
        // 2 · 5000 / ∛10000 = 464.2 and 9999 / 464.2 rounds up to 22 bins.
        let uniform: Vec<f64> = (0..10_000).map(f64::from).collect();
        let bins = HistogramBins::for_values(&uniform).expect("bins");
        let fd_width = 2.0 * 5000.0 / 10_000f64.cbrt();
        assert_eq!(bins.count, (9999.0 / fd_width).ceil() as usize);
        assert_eq!(bins.lower, 0.0);
        assert_eq!(
            bins.bin_of(9999.0),
            bins.count - 1,
            "the maximum is in the last bin"
        );
        assert_eq!(bins.bin_of(-5.0), 0);
        assert_eq!(bins.bin_of(f64::NAN), 0);

        // A long tail asks for thousands of FD bins; the clamp keeps 60.
        let mut tailed = uniform.clone();
        tailed.push(1e9);
        assert_eq!(
            HistogramBins::for_values(&tailed).map(|bins| bins.count),
            Some(HISTOGRAM_MAX_BINS)
        );

        // Zero IQR falls back to Sturges (log2 8 + 1 = 4), clamped up to 10.
        let spiky = [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 100.0];
        assert_eq!(
            HistogramBins::for_values(&spiky).map(|bins| bins.count),
            Some(HISTOGRAM_MIN_BINS)
        );
    }

    #[test]
    fn a_single_distinct_value_sits_in_the_middle_bin() {
        let bins = HistogramBins::for_values(&[250.0, 250.0]).expect("bins");
        assert_eq!(bins.count, 11);
        assert_eq!(bins.bin_of(250.0), 5);
        assert!((bins.center(5) - 250.0).abs() < 1e-9);
    }

    #[test]
    fn histogram_axes_round_outward_to_a_nice_step() {
        assert_eq!(nice_extent(59.49, 8157.3), (0.0, 10_000.0));
        assert_eq!(nice_extent(1418.3, 10_017.0), (0.0, 12_000.0));
        assert_eq!(nice_extent(4.01, 4.63), (4.0, 4.8));
        assert_eq!(nice_extent(7.0, 7.0), (7.0, 7.0));
        let (low, high) = nice_extent(216.2, 249.7);
        assert!(low <= 216.2 && high >= 249.7 && (high - low) <= 2.0 * (249.7 - 216.2));
    }

    #[test]
    fn cdf_ranks_keep_both_ends_and_stay_bounded() {
        assert_eq!(cdf_ranks(3), [0, 1, 2]);
        let ranks = cdf_ranks(10_000);
        assert_eq!(ranks.len(), CDF_MAX_POINTS);
        assert_eq!((ranks[0], ranks[CDF_MAX_POINTS - 1]), (0, 9_999));
        assert!(ranks.windows(2).all(|pair| pair[0] < pair[1]));
    }

    #[test]
    fn histogram_counts_every_value_once_and_shares_sum_to_100() {
        let first = [1.0, 2.0, 2.5, 9.0];
        let second = [3.0, 4.0];
        let single = distribution_histogram(&[("a", &first)], MetricKind::E2e, ChartTheme::LIGHT);
        let counted: f64 = points(&single["series"][0]).iter().map(|p| p.1).sum();
        assert_eq!(counted, first.len() as f64);
        assert_eq!(single["yAxis"]["name"], "Requests");

        let both = distribution_histogram(
            &[("a", &first), ("b", &second)],
            MetricKind::E2e,
            ChartTheme::LIGHT,
        );
        for series in both["series"].as_array().expect("series") {
            let share: f64 = points(series).iter().map(|p| p.1).sum();
            assert!((share - 100.0).abs() < 1e-9, "{share}");
        }
        // Both runs use the same bins.
        let centers = |series: &Value| points(series).iter().map(|p| p.0).collect::<Vec<_>>();
        assert_eq!(centers(&both["series"][0]), centers(&both["series"][1]));
    }

    #[test]
    fn throughput_buckets_conserve_tokens_and_request_time() {
        let rows = [
            row(0, 0.0, 100.0, 150.0, 1000.0, 90),
            row(1, 200.0, 50.0, 50.0, 2200.0, 300),
            row(2, 1500.0, 10.0, 20.0, 20.0, 7),
        ];
        let option = throughput_over_time(&rows, ChartTheme::LIGHT);
        let rate = points(&option["series"][0]);
        let in_flight = points(&option["series"][1]);
        assert_eq!(rate.len(), THROUGHPUT_MIN_BUCKETS);
        let width_ms = 2400.0 / THROUGHPUT_MIN_BUCKETS as f64;
        let tokens: f64 = rate.iter().map(|p| p.1 * width_ms / 1000.0).sum();
        assert!((tokens - 397.0).abs() < 1e-9, "{tokens}");
        let open_ms: f64 = in_flight.iter().map(|p| p.1 * width_ms).sum();
        assert!(
            (open_ms - (1000.0 + 2200.0 + 20.0)).abs() < 1e-9,
            "{open_ms}"
        );
        assert!(
            in_flight.iter().all(|p| p.1 <= 2.0 + 1e-12),
            "at most two overlap"
        );
    }

    #[test]
    fn traced_rows_give_a_gap_distribution_and_their_longest_stalls() {
        let traced = |index: u64, gaps: &[f64]| RowView {
            read_gaps_ms: gaps.to_vec(),
            ..row(index, index as f64 * 100.0, 20.0, 30.0, 200.0, 10)
        };
        let rows = vec![
            traced(0, &[10.0, 12.0, 11.0]),
            row(1, 100.0, 20.0, 30.0, 200.0, 10),
            traced(2, &[9.0, 250.0, 10.0]),
        ];
        let gaps = read_gap_cdf(&rows, ChartTheme::default());
        assert_eq!(
            gaps.pointer("/title/0/subtext")
                .or_else(|| gaps.pointer("/title/subtext")),
            Some(&json!(
                "6 gaps over 2 traced requests · share of gaps at or below each value · dashed \
                 lines: p50, p95, p99"
            ))
        );
        let line = points(&gaps["series"][0]);
        assert_eq!(line.first(), Some(&(9.0, 0.0)));
        assert_eq!(line.last(), Some(&(250.0, 100.0)));

        let stalls = longest_stalls(&rows, ChartTheme::default());
        let subtitle = stalls
            .pointer("/title/0/subtext")
            .or_else(|| stalls.pointer("/title/subtext"))
            .and_then(Value::as_str)
            .unwrap_or_default();
        assert_eq!(
            subtitle,
            "2 traced requests · the worst: 250 ms (request 2)"
        );
        let stall_points: Vec<Value> = stalls["series"][0]["data"]
            .as_array()
            .map(|data| data.iter().map(|point| point["value"].clone()).collect())
            .unwrap_or_default();
        assert_eq!(stall_points, vec![json!([0.0, 12.0]), json!([2.0, 250.0])]);
        assert_eq!(
            stalls["series"][0]["data"][1]["name"],
            json!("request 2: 250 ms")
        );

        let untraced = [row(0, 0.0, 1.0, 2.0, 3.0, 4)];
        for empty in [
            read_gap_cdf(&untraced, ChartTheme::default()),
            longest_stalls(&untraced, ChartTheme::default()),
        ] {
            assert!(
                empty.to_string().contains("turn Chunk traces on"),
                "{empty}"
            );
        }
    }

    #[test]
    fn throughput_without_start_times_explains_itself() {
        let mut legacy = row(0, 0.0, 1.0, 2.0, 3.0, 4);
        legacy.started_at_ms = None;
        let option = throughput_over_time(&[legacy], ChartTheme::DARK);
        let subtext = option["title"][0]["subtext"].as_str().unwrap_or_default();
        assert!(subtext.contains("started_at_ms"), "{subtext}");
    }

    #[test]
    fn timeline_splits_each_request_into_its_phases() {
        let rows = [
            row(0, 0.0, 100.0, 400.0, 900.0, 10),
            row(1, 500.0, 300.0, 300.0, 800.0, 10),
        ];
        let failure = FailureView {
            request_index: Some(2),
            elapsed_ms: Some(50.0),
            ..FailureView::default()
        };
        let option = timeline(&rows, &[failure], ChartTheme::LIGHT);
        let names: Vec<&str> = option["series"]
            .as_array()
            .expect("series")
            .iter()
            .filter_map(|series| series["name"].as_str())
            .collect();
        assert_eq!(
            names,
            [
                "To first output (TTFO)",
                "Reasoning (to TTFT)",
                "Content (to end)",
                "End",
                "Failure (start not recorded)",
            ]
        );
        // On the run clock, in seconds: request 1 waits from 0.5 s to 0.8 s.
        assert_eq!(
            points(&option["series"][0]),
            [(0.0, 0.0), (0.1, 0.0), (0.5, 1.0), (0.8, 1.0)]
        );
        // Only request 0 reasoned (TTFT > TTFO).
        assert_eq!(points(&option["series"][1]), [(0.1, 0.0), (0.4, 0.0)]);
        // The y axis is the request index, first request on top.
        let y_axis = &option["yAxis"];
        assert_eq!(
            (
                &y_axis["type"],
                &y_axis["min"],
                &y_axis["max"],
                &y_axis["inverse"]
            ),
            (&json!("value"), &json!(0.0), &json!(2.0), &json!(true))
        );
        assert_eq!(option["xAxis"]["name"], "Time since run start (s)");
        let subtext = option["title"][0]["subtext"].as_str().unwrap_or_default();
        assert!(!subtext.contains("sampled"), "{subtext}");
    }

    /// 10,000 completed requests (a quarter with prefix-cache hits, the rest misses) and
    /// `failures` failed ones after them.
    fn big_run(failures: u64) -> (Vec<RowView>, Vec<FailureView>) {
        let rows = (0..10_000u64)
            .map(|index| RowView {
                prompt_tokens: Some(1000 + index % 7),
                cached_tokens: Some(if index % 4 == 0 { 500 } else { 0 }),
                prefill_tok_s: Some(5000.0 + index as f64),
                ..row(index, index as f64 * 10.0, 50.0, 80.0, 400.0, 20)
            })
            .collect();
        let failures = (0..failures)
            .map(|offset| FailureView {
                request_index: Some(10_000 + offset),
                started_at_ms: Some(100_000.0 + offset as f64),
                elapsed_ms: Some(5.0),
                ..FailureView::default()
            })
            .collect();
        (rows, failures)
    }

    /// The y values (request indexes) of a series' points, plain or named.
    fn requests_drawn(series: &Value) -> BTreeSet<u64> {
        series["data"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|point| point.get("value").unwrap_or(point)[1].as_f64())
            .map(|y| y as u64)
            .collect()
    }

    #[test]
    fn a_long_timeline_draws_an_even_sample_says_so_and_keeps_every_failure() {
        let (rows, failures) = big_run(3);
        let option = timeline(&rows, &failures, ChartTheme::LIGHT);
        let series = option["series"].as_array().expect("series");
        let waiting = requests_drawn(&series[0]);
        assert_eq!(waiting.len(), SAMPLED_CHART_MAX_REQUESTS);
        // First and last request included.
        assert_eq!(waiting.first(), Some(&0));
        assert_eq!(waiting.last(), Some(&9_999));
        let gaps: BTreeSet<u64> = waiting
            .iter()
            .zip(waiting.iter().skip(1))
            .map(|(a, b)| b - a)
            .collect();
        // Ranks step by 9,999 / 1,999 ≈ 5.002: gaps of 5, now and then 6.
        assert_eq!(gaps, BTreeSet::from([5, 6]), "even spacing");
        let failure_marks = series
            .iter()
            .find(|series| series["name"] == "Failure")
            .expect("failure marks");
        assert_eq!(
            requests_drawn(failure_marks),
            BTreeSet::from([10_000, 10_001, 10_002])
        );
        let subtext = option["title"][0]["subtext"].as_str().unwrap_or_default();
        assert!(
            subtext.starts_with("10,003 requests, 3 failed"),
            "{subtext}"
        );
        assert!(
            subtext.contains(
                "\nshowing 2,000 of 10,000 completed requests, evenly sampled by index; \
                 every failure is drawn"
            ),
            "{subtext}"
        );
        let ends = series
            .iter()
            .find(|series| series["name"] == "End")
            .expect("ends");
        assert_eq!(ends["large"], true, "2,000 end marks draw as one path");
        assert_eq!(option["yAxis"]["max"], 10_002.0);
    }

    #[test]
    fn a_big_context_scatter_draws_a_sample_but_counts_every_row() {
        let (rows, _) = big_run(0);
        let option = context_scatter(&rows, ChartTheme::LIGHT);
        let series = option["series"].as_array().expect("series");
        let drawn_in_panel = |panel: f64| -> usize {
            series
                .iter()
                .filter(|series| series["xAxisIndex"].as_f64() == Some(panel))
                .map(|series| points(series).len())
                .sum()
        };
        assert_eq!(drawn_in_panel(0.0), SAMPLED_CHART_MAX_REQUESTS);
        assert_eq!(drawn_in_panel(1.0), SAMPLED_CHART_MAX_REQUESTS);
        assert!(series.iter().all(
            |series| series["large"] == true || points(series).len() <= SCATTER_LARGE_THRESHOLD
        ));
        let subtext = option["title"][0]["subtext"].as_str().unwrap_or_default();
        assert!(
            subtext.starts_with("10,000 requests, 2,500 with prefix-cache hits"),
            "{subtext}"
        );
        assert!(
            subtext.ends_with("\nshowing 2,000 of 10,000 requests, evenly sampled by index"),
            "{subtext}"
        );

        let small = context_scatter(&rows[..SAMPLED_CHART_MAX_REQUESTS], ChartTheme::LIGHT);
        let subtext = small["title"][0]["subtext"].as_str().unwrap_or_default();
        assert!(!subtext.contains("sampled"), "{subtext}");
        assert!(
            small["series"][0].get("large").is_some(),
            "1,500 misses still draw large"
        );
    }

    #[test]
    fn distributions_are_drawn_from_every_value() {
        // Values 1..=10,000 shuffled by a fixed stride: nothing about them is sampled.
        let values: Vec<f64> = (0..10_000u64)
            .map(|i| ((i * 7_919) % 10_000 + 1) as f64)
            .collect();
        let histogram =
            distribution_histogram(&[("run", &values)], MetricKind::E2e, ChartTheme::LIGHT);
        let counted: f64 = points(&histogram["series"][0]).iter().map(|p| p.1).sum();
        assert_eq!(counted, 10_000.0);
        let cdf = distribution_cdf(&[("run", &values)], MetricKind::E2e, ChartTheme::LIGHT);
        let marks: Vec<f64> = cdf["series"][0]["markLine"]["data"]
            .as_array()
            .expect("marks")
            .iter()
            .filter_map(|mark| mark["xAxis"].as_f64())
            .collect();
        // Nearest rank over all 10,000 values: p50 is the 5,000th value, p95 the 9,500th and
        // p99 the 9,900th.
        assert_eq!(marks, [5_000.0, 9_500.0, 9_900.0]);
        let subtext = cdf["title"][0]["subtext"].as_str().unwrap_or_default();
        assert!(subtext.starts_with("10,000 requests"), "{subtext}");
    }

    #[test]
    fn even_ranks_keep_both_ends_and_never_exceed_the_limit() {
        assert_eq!(even_ranks(0, 5), Vec::<usize>::new());
        assert_eq!(even_ranks(3, 5), [0, 1, 2]);
        assert_eq!(even_ranks(10, 4), [0, 3, 6, 9]);
        assert_eq!(even_ranks(10, 1), [0]);
        assert_eq!(even_ranks(10, 0), Vec::<usize>::new());
    }

    #[test]
    fn counts_get_thousands_separators() {
        assert_eq!(format_count(0), "0");
        assert_eq!(format_count(999), "999");
        assert_eq!(format_count(1_000), "1,000");
        assert_eq!(format_count(10_000), "10,000");
        assert_eq!(format_count(1_234_567), "1,234,567");
    }

    #[test]
    fn a_run_keeps_its_colour_when_an_earlier_run_has_nothing_to_draw() {
        let option = distribution_cdf(
            &[("legacy", &[]), ("modern", &[5.0, 6.0])],
            MetricKind::Ttft,
            ChartTheme::LIGHT,
        );
        let series = option["series"].as_array().expect("series");
        assert_eq!(series.len(), 1);
        assert_eq!(series[0]["name"], "modern");
        assert_eq!(
            series[0]["itemStyle"]["color"],
            ChartTheme::LIGHT.series_color(1)
        );
        let subtext = option["title"][0]["subtext"].as_str().unwrap_or_default();
        assert!(subtext.starts_with("1 of 2 runs"), "{subtext}");
    }

    #[test]
    fn labels_are_capped_and_made_distinct() {
        let long = "n".repeat(LABEL_MAX_CHARS + 10);
        let labels = distinct_labels(&["a".to_owned(), "a".to_owned(), long, "b".to_owned()]);
        assert_eq!(labels[0], "a");
        assert_eq!(labels[1], "a (2)");
        assert_eq!(
            labels[2].chars().count(),
            LABEL_MAX_CHARS + 1,
            "cap plus the ellipsis"
        );
        assert_eq!(labels[3], "b");
    }

    #[test]
    fn numbers_lose_decimals_as_they_grow() {
        assert_eq!(format_number(12345.678), "12346");
        assert_eq!(format_number(42.25), "42.2");
        assert_eq!(format_number(4.3109), "4.31");
        assert_eq!(format_number(0.33330124), "0.333");
        assert_eq!(format_number(-0.5), "-0.500");
        assert_eq!(format_number(0.0), "0");
        assert_eq!(format_number(4.0), "4");
        assert_eq!(format_number(f64::NAN), "n/a");
    }

    #[test]
    fn themes_differ_in_colour_only() {
        let values = [1.0, 2.0, 3.0];
        let light = distribution_cdf(&[("a", &values)], MetricKind::Ttft, ChartTheme::LIGHT);
        let dark = distribution_cdf(&[("a", &values)], MetricKind::Ttft, ChartTheme::DARK);
        assert_ne!(light["textStyle"], dark["textStyle"]);
        assert_ne!(light["color"], dark["color"]);
        assert_eq!(light["series"][0]["data"], dark["series"][0]["data"]);
        assert_eq!(
            ChartTheme::DARK.series_color(6),
            ChartTheme::DARK.series_color(0)
        );
    }
}
