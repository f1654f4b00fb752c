//! The server's requests running and waiting, and its KV cache use, at each scrape of its
//! `/metrics` (a run's `server_metrics` block, docs/guide/telemetry.md), on the run's clock: the
//! chart under the timeline, where the moment the queue starts to grow shows.

use charming::element::{ItemStyle, LineStyle, NameLocation, SplitLine, Step, Trigger};
use charming::series::Line;
use serde_json::Value;

use super::style::{
    base_chart, default_grid, finish, name_beside_axis, point, value_axis, y_value_axis, ChartTheme,
};
use super::throughput::no_data;
use crate::core::schema::server_metrics::ServerMetricsBlock;
use crate::core::telemetry::engines::{CommonSeries, Family};

/// The gauges the chart draws: the series, its name in the legend, whether it is a share
/// drawn in %, on the right axis.
const DRAWN: [(CommonSeries, &str, bool); 3] = [
    (CommonSeries::Running, "Running (server)", false),
    (CommonSeries::Waiting, "Waiting (server)", false),
    (CommonSeries::KvCacheUse, "KV cache use (%)", true),
];

/// The server's requests running and waiting, and its KV cache use, at each scrape, on the
/// run's clock in seconds (the timeline's axis): a "no data" option when the block has no
/// sample of them.
pub fn server_over_time(block: &ServerMetricsBlock, theme: ChartTheme) -> Value {
    let title = "The server over the run";
    let file_stem = "strobe-server";
    let family = Family::from_name(&block.family);
    let mut chart_series = Vec::new();
    for (index, (series, label, share)) in DRAWN.iter().enumerate() {
        let name = series.name_in(family, |key| {
            block
                .samples
                .iter()
                .any(|sample| sample.values.contains_key(key))
        });
        let Some(name) = name else { continue };
        let points: Vec<_> = block
            .samples
            .iter()
            .filter_map(|sample| {
                let value = *sample.values.get(name)?;
                let value = if *share { value * 100.0 } else { value };
                (sample.t_ms.is_finite() && value.is_finite())
                    .then(|| point(sample.t_ms / 1000.0, value))
            })
            .collect();
        if points.is_empty() {
            continue;
        }
        let color = theme.series_color(index);
        let mut line = Line::new()
            .name(*label)
            .step(Step::End)
            .show_symbol(false)
            .line_style(LineStyle::new().color(color).width(2))
            .item_style(ItemStyle::new().color(color))
            .data(points);
        if *share {
            line = line.y_axis_index(1);
        }
        chart_series.push(line);
    }
    if chart_series.is_empty() {
        return no_data(
            title,
            "its metrics have no running, waiting or KV-cache series strobe knows",
            file_stem,
            theme,
        );
    }
    let palette = theme.palette();
    let subtitle = format!(
        "{} scrapes of {} every {} ms · a step holds until the next scrape",
        block.samples.len(),
        family.as_str(),
        block.interval_ms
    );
    let mut chart = base_chart(title, &subtitle, file_stem, theme, Trigger::Axis)
        .grid(default_grid())
        .x_axis(value_axis("Time since run start (s)", palette).scale(true))
        .y_axis(y_value_axis("Requests", palette).min(0))
        .y_axis(
            name_beside_axis(
                value_axis("KV cache use (%)", palette),
                palette,
                NameLocation::End,
                "right",
            )
            .min(0)
            .max(100)
            .split_line(SplitLine::new().show(false)),
        );
    for line in chart_series {
        chart = chart.series(line);
    }
    finish(chart, theme)
}
