//! The distribution charts: a metric's histogram (Freedman–Diaconis bins within a clamp) and
//! its CDF, with p50 / p95 / p99 marked, for one run or overlaid for several.

use charming::datatype::DataPoint;
use charming::element::{ItemStyle, LineStyle, Step, Trigger};
use charming::series::{Bar, Line};
use serde_json::Value;

use super::style::{
    axis_name, base_chart, default_grid, finish, finite_runs, percentile_lines, point,
    sample_summary, value_axis, y_value_axis, ChartTheme, CDF_MAX_POINTS, HISTOGRAM_MAX_BINS,
    HISTOGRAM_MIN_BINS,
};
use super::throughput::no_data;
use crate::core::format::format_number;
use crate::core::python::stats::nearest_rank;
use crate::core::read::opened::metrics::MetricKind;

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
pub(crate) fn cdf_points(sorted: &[f64]) -> Vec<DataPoint> {
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
pub(crate) fn nice_extent(lower: f64, upper: f64) -> (f64, f64) {
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
pub(crate) fn cdf_ranks(count: usize) -> Vec<usize> {
    even_ranks(count, CDF_MAX_POINTS)
}

/// `0..count` when it has at most `limit` items, else `limit` evenly spaced positions in it,
/// the first and the last included (`limit` below 2 keeps just the first).
pub(crate) fn even_ranks(count: usize, limit: usize) -> Vec<usize> {
    if count <= limit {
        return (0..count).collect();
    }
    if limit < 2 {
        return (0..limit).collect();
    }
    let steps = limit - 1;
    (0..limit).map(|step| step * (count - 1) / steps).collect()
}
