//! The per-chunk charts of traced runs: the gaps between reads over every traced request, and
//! each request's longest stall by index.

use charming::datatype::DataPoint;
use charming::element::{ItemStyle, LineStyle, Step, Symbol, Trigger};
use charming::series::{Line, Scatter};
use serde_json::Value;

use super::distribution::cdf_points;
use super::style::{
    base_chart, default_grid, finish, named_point, percentile_lines, value_axis, y_value_axis,
    ChartTheme,
};
use super::throughput::no_data;
use super::timeline::sample_rows_by_index;
use super::timeline::sampling_note;
use crate::core::format::{format_count, format_number};
use crate::core::read::opened::views::RowView;

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
