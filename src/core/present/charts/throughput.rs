//! Throughput and requests in flight over the run; the p50 / p95 bars of legacy artifacts
//! without rows; and the "no data" option with its reason.

use charming::datatype::DataPoint;
use charming::element::{ItemStyle, LineStyle, NameLocation, SplitLine, Step, Trigger};
use charming::series::{Bar, Line};
use serde_json::Value;

use super::style::{
    base_chart, category_axis, default_grid, distinct_labels, finish, name_beside_axis, point,
    value_axis, y_value_axis, ChartTheme, THROUGHPUT_MAX_BUCKETS, THROUGHPUT_MIN_BUCKETS,
};
use crate::core::format::{format_count, format_number};
use crate::core::read::opened::metrics::{KeyMetrics, MetricKind};
use crate::core::read::opened::views::RowView;

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
pub(crate) fn overlap_ms(from: f64, to: f64, bucket: usize, origin: f64, width_ms: f64) -> f64 {
    let bucket_start = origin + bucket as f64 * width_ms;
    let bucket_end = bucket_start + width_ms;
    (to.min(bucket_end) - from.max(bucket_start)).max(0.0)
}

/// p50 and p95 latencies (TTFO, TTFT, E2E) as the runs' `metrics` state them, one pair
/// of bars per run. It is what artifacts without request rows (G1, G2) can show, and the
/// side-by-side view for comparisons. One run's series are named `p50` and `p95` alone: the
/// page names the run above its charts.
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
            let name = if runs.len() == 1 {
                stat.to_owned()
            } else {
                format!("{label} · {stat}")
            };
            chart = chart.series(
                Bar::new()
                    .name(name)
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
