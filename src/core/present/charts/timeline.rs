//! The per-request charts: the timeline (start → first output → first content → end, failures
//! marked) and context size against TTFO and effective prefill, sampled evenly by index above
//! [`SAMPLED_CHART_MAX_REQUESTS`](super::SAMPLED_CHART_MAX_REQUESTS) requests.

use charming::component::{DataZoom, DataZoomType, FilterMode, Grid};
use charming::datatype::DataPoint;
use charming::element::{ItemStyle, LineStyle, LineStyleType, NameLocation, Symbol, Trigger};
use charming::series::{Line, Scatter};
use serde_json::Value;

use super::distribution::even_ranks;
use super::style::{
    base_chart, default_grid, finish, name_beside_axis, named_point, point, value_axis,
    y_value_axis, ChartTheme, GRID_TOP, LABEL_MAX_CHARS, SAMPLED_CHART_MAX_REQUESTS,
};
use super::throughput::no_data;
use crate::core::format::format_count;
use crate::core::read::opened::text::CappedText;
use crate::core::read::opened::views::{FailureView, RowView};

/// The rows a sampled chart draws: all of them up to [`SAMPLED_CHART_MAX_REQUESTS`], else that
/// many evenly spaced by request index (first and last included).
pub(crate) fn sample_rows_by_index(mut rows: Vec<&RowView>) -> Vec<&RowView> {
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
pub(crate) fn sampling_note(shown: usize, of: usize, what: &str) -> Option<String> {
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

pub(crate) fn push_segment(data: &mut Vec<DataPoint>, from: f64, to: f64, request: f64) {
    if from.is_finite() && to.is_finite() {
        data.push(point(from, request));
        data.push(point(to, request));
        // `-` is ECharts' "no data": it breaks the line between requests.
        data.push(DataPoint::from("-"));
    }
}

pub(crate) fn segment_series(
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
