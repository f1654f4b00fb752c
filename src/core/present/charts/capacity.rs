//! The capacity view (docs/guide/load.md): the throughput–latency curve of a sweep (or of runs of
//! one workload), the offered against the achieved rate of its rate steps, and the Pareto view of
//! per-user decode rate against total output throughput. One point per step, labelled with its
//! value; saturated steps marked; several sweeps overlay as curves. A point that stands for a
//! group of repeats sits at their mean, with the Student-t 95 % interval across them as an
//! error bar (a capped vertical segment in the curve's colour), its label marked ⚠ when the
//! runs disagree (their coefficient of variation above 10 %). Steps that scraped their
//! server's metrics also draw the server's queue and KV cache at peak against load
//! ([`capacity_server`]), where the knee at which requests start to wait shows.

use charming::datatype::DataPoint;
use charming::element::{
    ItemStyle, Label, LabelPosition, LineStyle, LineStyleType, NameLocation, SplitLine, Symbol,
    Trigger,
};
use charming::series::Line;
use serde_json::{json, Value};

use super::style::{
    base_chart, default_grid, distinct_labels, finish, name_beside_axis, named_point, point,
    value_axis, y_value_axis, ChartTheme,
};
use super::throughput::no_data;
use crate::core::present::capacity::{CapacityPoint, CapacitySeries};
use crate::core::read::opened::metrics::{MetricKind, MetricStat};

/// What the curve's x axis counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CapacityAxis {
    /// Output tokens per second.
    Tokens,
    /// Completed requests per second.
    Requests,
}

/// Throughput on x against a latency statistic on y, one curve per series.
pub fn capacity_curve(
    series: &[CapacitySeries],
    metric: MetricKind,
    stat: MetricStat,
    axis: CapacityAxis,
    theme: ChartTheme,
) -> Value {
    let file_stem = format!("strobe-capacity-{}-{}", metric.id(), stat.id());
    let title = format!("Throughput against {} {}", metric.short_label(), stat.id());
    let x_of = |point: &CapacityPoint| match axis {
        CapacityAxis::Tokens => point.output_tok_s,
        CapacityAxis::Requests => point.requests_per_s,
    };
    // A group of repeats: the mean of its runs' statistic (its metrics are the means).
    let y_of = |point: &CapacityPoint| point.metrics.get(metric).stat(stat);
    let x_name = match axis {
        CapacityAxis::Tokens => "Output throughput (tok/s)",
        CapacityAxis::Requests => "Completed requests (req/s)",
    };
    let repeated = series
        .iter()
        .flat_map(|curve| &curve.points)
        .any(|point| point.repeats.is_some());
    // A point whose repeats disagree on this statistic (CV above 10 %) says so in its label,
    // as the table beside the chart does.
    let mut disagreeing = false;
    let labelled: Vec<CapacitySeries> = series
        .iter()
        .map(|curve| CapacitySeries {
            points: curve
                .points
                .iter()
                .map(|point| {
                    let mut point = point.clone();
                    let disagree = point.repeats.is_some()
                        && point
                            .across(metric, stat)
                            .is_some_and(|across| across.disagree());
                    if disagree {
                        disagreeing = true;
                        point.label = format!("{} {DISAGREE_MARK}", point.label);
                    }
                    point
                })
                .collect(),
            ..curve.clone()
        })
        .collect();
    let subtitle = format!(
        "one point per step, labelled with its value · ◆ saturated (below 90 % of the offered \
         rate){}{}",
        if repeated {
            " · bars: 95 % interval across repeats"
        } else {
            ""
        },
        if disagreeing {
            " · ⚠ its repeats disagree (spread above 10 % of the mean)"
        } else {
            ""
        }
    );
    let mut option = curves(
        &title,
        &subtitle,
        &file_stem,
        &labelled,
        (
            x_name,
            &format!("{} {} ({})", metric.short_label(), stat.id(), metric.unit()),
        ),
        |point| Some((x_of(point)?, y_of(point)?)),
        theme,
    );
    let names: Vec<String> = series.iter().map(|s| s.name.clone()).collect();
    let bars: Vec<Value> = series
        .iter()
        .zip(distinct_labels(&names))
        .enumerate()
        .filter_map(|(position, (curve, name))| {
            let segments: Vec<Value> = curve
                .points
                .iter()
                .filter(|point| point.repeats.is_some())
                .filter_map(|point| {
                    let x = x_of(point)?;
                    let (low, high) = point.across(metric, stat)?.interval_95()?;
                    Some([json!([x, low]), json!([x, high]), json!("-")])
                })
                .flatten()
                .collect();
            (!segments.is_empty())
                .then(|| error_bars(&name, theme.series_color(position), segments))
        })
        .collect();
    if let Some(list) = option.get_mut("series").and_then(Value::as_array_mut) {
        list.extend(bars);
    }
    option
}

/// What marks a point of repeats that disagree on the statistic shown.
pub const DISAGREE_MARK: &str = "⚠";

/// The error bars of one curve as a line series: one capped segment from low to high per
/// point, `"-"` (ECharts' empty value) between them; named as the curve, so its legend entry
/// shows and hides both.
fn error_bars(name: &str, color: &str, data: Vec<Value>) -> Value {
    json!({
        "type": "line",
        "name": name,
        "data": data,
        "connectNulls": false,
        "symbol": "rect",
        "symbolSize": [10, 2],
        "showSymbol": true,
        "silent": true,
        "tooltip": {"show": false},
        "lineStyle": {"color": color, "width": 1.5},
        "itemStyle": {"color": color},
        "z": 1,
    })
}

/// The offered rate of each rate step against the rate it completed, with `achieved = offered`
/// for reference: a step below the line did not get through what it was offered.
pub fn offered_vs_achieved(series: &[CapacitySeries], theme: ChartTheme) -> Value {
    // An `auto` sweep's rate steps are its open-loop points.
    let rate_series: Vec<CapacitySeries> = series
        .iter()
        .map(|s| CapacitySeries {
            points: s
                .points
                .iter()
                .filter(|point| point.offered_rate.is_some())
                .cloned()
                .collect(),
            ..s.clone()
        })
        .filter(|s| !s.points.is_empty())
        .collect();
    let file_stem = "strobe-offered-achieved";
    let title = "Offered against achieved rate";
    if rate_series.is_empty() {
        return no_data(
            title,
            "no rate steps (sweep rate:… or auto has them)",
            file_stem,
            theme,
        );
    }
    let mut chart = curves_chart(
        title,
        "dashed: achieved = offered · below it the server did not keep up",
        file_stem,
        &rate_series,
        ("Offered (req/s)", "Completed (req/s)"),
        |point| Some((point.offered_rate?, point.requests_per_s?)),
        theme,
    );
    let most = rate_series
        .iter()
        .flat_map(|s| s.points.iter())
        .flat_map(|point| [point.offered_rate, point.requests_per_s])
        .flatten()
        .fold(0.0_f64, f64::max);
    chart = chart.series(
        Line::new()
            .name("achieved = offered")
            .symbol(Symbol::None)
            .line_style(
                LineStyle::new()
                    .type_(LineStyleType::Dashed)
                    .color(theme.palette().muted_text),
            )
            .data(vec![point(0.0, 0.0), point(most, most)]),
    );
    finish(chart, theme)
}

/// Per-user decode rate (the median request's tokens per second) against total output
/// throughput: how much each user's stream slows as the server carries more.
pub fn pareto(series: &[CapacitySeries], theme: ChartTheme) -> Value {
    curves(
        "Per-user decode rate against total throughput",
        "one point per step · up and to the right is better for both users and the server",
        "strobe-pareto",
        series,
        ("Output throughput (tok/s)", "Per-user decode p50 (tok/s)"),
        |point| Some((point.output_tok_s?, point.metrics.decode.p50?)),
        theme,
    )
}

/// The server's own view of each step against its load: the most requests waiting in its
/// queue (solid, left axis) and its KV-cache use at peak (dashed, right axis), one point per
/// step that scraped the server's metrics. Where waiting leaves zero the server is full: more
/// load only queues.
pub fn capacity_server(series: &[CapacitySeries], theme: ChartTheme) -> Value {
    let title = "The server's queue against load";
    let file_stem = "strobe-capacity-server";
    let (on_load, x_name) = by_load(series);
    let drawn = |read: fn(&CapacityPoint) -> Option<f64>| {
        on_load
            .iter()
            .any(|curve| curve.points.iter().any(|p| read(p).is_some()))
    };
    let waiting = |point: &CapacityPoint| point.server?.waiting_peak;
    let kv = |point: &CapacityPoint| point.server?.kv_cache_peak_percent;
    if !drawn(waiting) && !drawn(kv) {
        return no_data(
            title,
            "no step scraped its server's metrics (server_metrics)",
            file_stem,
            theme,
        );
    }
    let palette = theme.palette();
    let names: Vec<String> = on_load.iter().map(|s| s.name.clone()).collect();
    let names = distinct_labels(&names);
    let mut chart = base_chart(
        title,
        "solid: requests waiting in the server's queue at its peak · dashed: its KV-cache use \
         at peak (right axis) · one point per step · where waiting leaves 0 the server is full",
        file_stem,
        theme,
        Trigger::Item,
    )
    .grid(default_grid())
    .x_axis(value_axis(x_name, palette).min(0))
    .y_axis(y_value_axis("Waiting at peak (requests)", palette).min(0))
    .y_axis(
        name_beside_axis(
            value_axis("KV cache at peak (%)", palette),
            palette,
            NameLocation::End,
            "right",
        )
        .min(0)
        .max(100)
        .split_line(SplitLine::new().show(false)),
    );
    for (position, (curve, name)) in on_load.iter().zip(&names).enumerate() {
        let color = theme.series_color(position);
        let data = |read: fn(&CapacityPoint) -> Option<f64>| -> Vec<DataPoint> {
            curve
                .points
                .iter()
                .filter_map(|point| {
                    Some(named_point(point.value, read(point)?, point.label.clone()))
                })
                .collect()
        };
        let (queue, cache) = (data(waiting), data(kv));
        if !queue.is_empty() {
            chart = chart.series(
                Line::new()
                    .name(format!("{name} · waiting (peak)"))
                    .symbol(Symbol::Circle)
                    .symbol_size(8)
                    .item_style(ItemStyle::new().color(color))
                    .line_style(LineStyle::new().color(color))
                    .label(
                        Label::new()
                            .show(true)
                            .position(LabelPosition::Top)
                            .formatter("{b}"),
                    )
                    .data(queue),
            );
        }
        if !cache.is_empty() {
            chart = chart.series(
                Line::new()
                    .name(format!("{name} · KV cache (peak)"))
                    .symbol(Symbol::Diamond)
                    .symbol_size(7)
                    .y_axis_index(1)
                    .item_style(ItemStyle::new().color(color))
                    .line_style(LineStyle::new().color(color).type_(LineStyleType::Dashed))
                    .data(cache),
            );
        }
    }
    finish(chart, theme)
}

/// Each curve with its points' values replaced by the load they stand for on it (an `auto`
/// curve's mixed steps become requests per second), and the x axis name that goes with it.
fn by_load(series: &[CapacitySeries]) -> (Vec<CapacitySeries>, &'static str) {
    let on_load = series
        .iter()
        .map(|curve| CapacitySeries {
            points: curve
                .points
                .iter()
                .map(|point| CapacityPoint {
                    value: curve.load(point),
                    ..point.clone()
                })
                .collect(),
            ..curve.clone()
        })
        .collect();
    let variables: Vec<&str> = series.iter().map(|curve| curve.variable).collect();
    let name = match variables.first() {
        Some(&"concurrency") if variables.iter().all(|v| *v == "concurrency") => "Concurrency",
        Some(&"rate") if variables.iter().all(|v| *v == "rate") => "Offered rate (req/s)",
        _ => "Load (concurrency, or req/s carried)",
    };
    (on_load, name)
}

/// Goodput (requests, or output tokens, per second that met the SLO) against the load of each
/// step: where it stops growing, more load only adds requests that miss the SLO.
pub fn goodput_curve(series: &[CapacitySeries], axis: CapacityAxis, theme: ChartTheme) -> Value {
    let (on_load, x_name) = by_load(series);
    let (y_name, file_stem) = match axis {
        CapacityAxis::Tokens => ("Goodput (output tok/s)", "strobe-goodput-tokens"),
        CapacityAxis::Requests => ("Goodput (req/s)", "strobe-goodput-requests"),
    };
    curves(
        "Goodput against load",
        "requests that met the SLO, per second of wall time · one point per step",
        file_stem,
        &on_load,
        (x_name, y_name),
        |point| {
            let outcome = point.slo.as_ref()?;
            let goodput = match axis {
                CapacityAxis::Tokens => outcome.goodput_output_tok_s,
                CapacityAxis::Requests => outcome.goodput_req_s,
            };
            Some((point.value, goodput?))
        },
        theme,
    )
}

/// SLO attainment (% of sent requests that met it) against the load of each step, with the
/// target as a dashed line: the curve crosses it at the capacity at SLO.
pub fn attainment_curve(series: &[CapacitySeries], target: f64, theme: ChartTheme) -> Value {
    let (on_load, x_name) = by_load(series);
    let title = "SLO attainment against load";
    let file_stem = "strobe-slo-attainment";
    let xy = |point: &CapacityPoint| Some((point.value, point.slo.as_ref()?.attainment? * 100.0));
    let drawable = on_load
        .iter()
        .any(|s| s.points.iter().filter(|point| xy(point).is_some()).count() >= 2);
    if !drawable {
        return no_data(
            title,
            "no curve has two steps the SLO could judge",
            file_stem,
            theme,
        );
    }
    let target_percent = target * 100.0;
    let mut chart = curves_chart(
        title,
        &format!(
            "share of sent requests that met the SLO · dashed: the {target_percent:.0} % target"
        ),
        file_stem,
        &on_load,
        (x_name, "Met the SLO (%)"),
        xy,
        theme,
    );
    let most = on_load
        .iter()
        .flat_map(|s| s.points.iter().map(|point| point.value))
        .fold(0.0_f64, f64::max);
    chart = chart.series(
        Line::new()
            .name("target")
            .symbol(Symbol::None)
            .line_style(
                LineStyle::new()
                    .type_(LineStyleType::Dashed)
                    .color(theme.palette().failure),
            )
            .data(vec![
                point(0.0, target_percent),
                point(most, target_percent),
            ]),
    );
    finish(chart, theme)
}

fn curves(
    title: &str,
    subtitle: &str,
    file_stem: &str,
    series: &[CapacitySeries],
    axes: (&str, &str),
    xy: impl Fn(&CapacityPoint) -> Option<(f64, f64)>,
    theme: ChartTheme,
) -> Value {
    // A lone point of repeats is drawn for its interval.
    let drawable = series.iter().any(|s| {
        let drawn: Vec<&CapacityPoint> = s
            .points
            .iter()
            .filter(|point| xy(point).is_some())
            .collect();
        drawn.len() >= 2 || drawn.iter().any(|point| point.repeats.is_some())
    });
    if !drawable {
        return no_data(
            title,
            "no curve has two steps (or a repeated step) with these values",
            file_stem,
            theme,
        );
    }
    finish(
        curves_chart(title, subtitle, file_stem, series, axes, xy, theme),
        theme,
    )
}

fn curves_chart(
    title: &str,
    subtitle: &str,
    file_stem: &str,
    series: &[CapacitySeries],
    (x_name, y_name): (&str, &str),
    xy: impl Fn(&CapacityPoint) -> Option<(f64, f64)>,
    theme: ChartTheme,
) -> charming::Chart {
    let palette = theme.palette();
    let names: Vec<String> = series.iter().map(|s| s.name.clone()).collect();
    let names = distinct_labels(&names);
    let mut chart = base_chart(title, subtitle, file_stem, theme, Trigger::Item)
        .grid(default_grid())
        .x_axis(value_axis(x_name, palette).min(0))
        .y_axis(y_value_axis(y_name, palette).min(0));
    for (position, (curve, name)) in series.iter().zip(&names).enumerate() {
        let color = theme.series_color(position);
        let data: Vec<DataPoint> = curve
            .points
            .iter()
            .filter_map(|point| {
                let (x, y) = xy(point)?;
                let label = if point.saturated {
                    format!("◆ {}", point.label)
                } else {
                    point.label.clone()
                };
                Some(named_point(x, y, label))
            })
            .collect();
        chart = chart.series(
            Line::new()
                .name(name.as_str())
                .symbol(Symbol::Circle)
                .symbol_size(8)
                .item_style(ItemStyle::new().color(color))
                .label(
                    Label::new()
                        .show(true)
                        .position(LabelPosition::Top)
                        .formatter("{b}"),
                )
                .data(data),
        );
    }
    chart
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::read::opened::metrics::{KeyMetrics, MetricSummary};

    fn step(value: f64, tok_s: f64, ttft_p95: f64, saturated: bool) -> CapacityPoint {
        CapacityPoint {
            value,
            label: format!("c={value}"),
            output_tok_s: Some(tok_s),
            requests_per_s: Some(tok_s / 100.0),
            metrics: KeyMetrics {
                ttft: MetricSummary {
                    p95: Some(ttft_p95),
                    ..MetricSummary::default()
                },
                decode: MetricSummary {
                    p50: Some(1000.0 / value),
                    ..MetricSummary::default()
                },
                ..KeyMetrics::default()
            },
            // A closed-loop step offers no rate.
            offered_rate: None,
            slo: None,
            saturated,
            repeats: None,
            server: None,
        }
    }

    #[test]
    fn each_step_is_a_labelled_point_and_saturation_is_marked() {
        let series = [CapacitySeries {
            name: "sweep-1".to_owned(),
            variable: "concurrency",
            points: vec![step(1.0, 100.0, 50.0, false), step(8.0, 700.0, 400.0, true)],
        }];
        let option = capacity_curve(
            &series,
            MetricKind::Ttft,
            MetricStat::P95,
            CapacityAxis::Tokens,
            ChartTheme::LIGHT,
        );
        let data = &option["series"][0]["data"];
        assert_eq!(data[0]["value"], serde_json::json!([100.0, 50.0]));
        assert_eq!(data[0]["name"], "c=1");
        assert_eq!(data[1]["name"], "◆ c=8");
        assert_eq!(option["tooltip"]["renderMode"], "richText");
        assert_eq!(option["series"][0]["name"], "sweep-1");
        let empty = capacity_curve(
            &series,
            MetricKind::E2e,
            MetricStat::P95,
            CapacityAxis::Tokens,
            ChartTheme::LIGHT,
        );
        assert!(empty["title"][0]["subtext"]
            .as_str()
            .unwrap_or_default()
            .starts_with("No data"));
        let pareto_option = pareto(&series, ChartTheme::DARK);
        assert_eq!(
            pareto_option["series"][0]["data"][1]["value"],
            serde_json::json!([700.0, 125.0])
        );
        let offered = offered_vs_achieved(&series, ChartTheme::LIGHT);
        assert!(offered["title"][0]["subtext"]
            .as_str()
            .unwrap_or_default()
            .starts_with("No data"));
        let mut auto = series[0].clone();
        auto.points[1].offered_rate = Some(10.0);
        let offered = offered_vs_achieved(&[auto], ChartTheme::LIGHT);
        assert_eq!(
            offered["series"][0]["data"][0]["value"],
            serde_json::json!([10.0, 7.0]),
            "only the open-loop step of a mixed curve: offered 10, completed 7 req/s"
        );
    }

    #[test]
    fn a_point_of_repeats_carries_its_95_percent_interval_as_an_error_bar() {
        let run = |ttft_p95: f64| KeyMetrics {
            ttft: MetricSummary {
                p95: Some(ttft_p95),
                ..MetricSummary::default()
            },
            ..KeyMetrics::default()
        };
        let mut group = step(4.0, 400.0, 1057.0, false);
        group.repeats = Some(crate::core::present::capacity::PointRepeats {
            group_id: "g".to_owned(),
            runs: vec![run(1049.0), run(1065.0), run(1057.0)],
        });
        let series = [CapacitySeries {
            name: "selected runs".to_owned(),
            variable: "concurrency",
            points: vec![group],
        }];
        let option = capacity_curve(
            &series,
            MetricKind::Ttft,
            MetricStat::P95,
            CapacityAxis::Tokens,
            ChartTheme::LIGHT,
        );
        assert_eq!(
            option["series"][0]["data"][0]["value"],
            json!([400.0, 1057.0])
        );
        let bars = &option["series"][1];
        assert_eq!(
            bars["name"], "selected runs",
            "one legend entry with its curve"
        );
        assert_eq!(bars["data"][0][0], 400.0);
        let (low, high) = (
            bars["data"][0][1].as_f64().expect("low"),
            bars["data"][1][1].as_f64().expect("high"),
        );
        assert!(
            (low - 1037.13).abs() < 0.01 && (high - 1076.87).abs() < 0.01,
            "{low} {high}"
        );
        assert_eq!(bars["data"][2], "-");
        assert_eq!(bars["tooltip"]["show"], false);
        assert!(option["title"][0]["subtext"]
            .as_str()
            .unwrap_or_default()
            .ends_with("bars: 95 % interval across repeats"));
        assert_eq!(
            option["series"][0]["data"][0]["name"], "c=4",
            "runs that agree carry no mark"
        );
    }

    #[test]
    fn each_repeated_step_of_a_sweep_has_its_bar_and_disagreeing_steps_are_marked() {
        let run = |ttft_p95: f64| KeyMetrics {
            ttft: MetricSummary {
                p95: Some(ttft_p95),
                ..MetricSummary::default()
            },
            ..KeyMetrics::default()
        };
        let repeated = |value: f64, tok_s: f64, ttfts: [f64; 2]| {
            let mut point = step(value, tok_s, (ttfts[0] + ttfts[1]) / 2.0, false);
            point.repeats = Some(crate::core::present::capacity::PointRepeats {
                group_id: format!("repeat-s-step{value}"),
                runs: ttfts.iter().map(|ttft| run(*ttft)).collect(),
            });
            point
        };
        let series = [CapacitySeries {
            name: "sweep-s".to_owned(),
            variable: "concurrency",
            // c=1 agrees (CV 1.4 %); c=2 does not (CV 47 %).
            points: vec![
                repeated(1.0, 100.0, [100.0, 102.0]),
                repeated(2.0, 190.0, [100.0, 200.0]),
            ],
        }];
        let option = capacity_curve(
            &series,
            MetricKind::Ttft,
            MetricStat::P95,
            CapacityAxis::Tokens,
            ChartTheme::LIGHT,
        );
        let points = &option["series"][0]["data"];
        assert_eq!(points[0]["name"], "c=1");
        assert_eq!(points[1]["name"], format!("c=2 {DISAGREE_MARK}"));
        assert_eq!(points[1]["value"], json!([190.0, 150.0]));
        let bars = option["series"][1]["data"].as_array().expect("bars");
        assert_eq!(bars.len(), 6, "two capped segments, each low, high, gap");
        assert_eq!(
            (bars[0][0].clone(), bars[3][0].clone()),
            (json!(100.0), json!(190.0))
        );
        let (low, high) = (
            bars[3][1].as_f64().expect("low"),
            bars[4][1].as_f64().expect("high"),
        );
        // Two runs: t(0.975, 1) = 12.706; sd 70.71; half width 12.706 · 70.71 / √2 = 635.3.
        assert!((low - (150.0 - 635.31)).abs() < 0.01, "{low}");
        assert!((high - (150.0 + 635.31)).abs() < 0.01, "{high}");
        assert!(option["title"][0]["subtext"]
            .as_str()
            .unwrap_or_default()
            .ends_with("⚠ its repeats disagree (spread above 10 % of the mean)"));
        // Another statistic the runs agree on: no mark.
        let p50 = capacity_curve(
            &series,
            MetricKind::Ttft,
            MetricStat::P50,
            CapacityAxis::Tokens,
            ChartTheme::LIGHT,
        );
        assert!(!p50["title"][0]["subtext"]
            .as_str()
            .unwrap_or_default()
            .contains('⚠'));
    }

    #[test]
    fn the_servers_queue_and_kv_cache_are_drawn_against_load() {
        use crate::core::present::server::ServerFigures;
        let with_server = |value: f64, waiting: f64, kv: f64| CapacityPoint {
            server: Some(ServerFigures {
                waiting_peak: Some(waiting),
                kv_cache_peak_percent: Some(kv),
                ..ServerFigures::default()
            }),
            ..step(value, value * 100.0, value * 10.0, false)
        };
        let series = [CapacitySeries {
            name: "sweep-1".to_owned(),
            variable: "concurrency",
            points: vec![
                with_server(4.0, 0.0, 40.0),
                with_server(8.0, 0.0, 70.0),
                with_server(16.0, 9.0, 98.0),
                step(32.0, 3200.0, 320.0, false),
            ],
        }];
        let option = capacity_server(&series, ChartTheme::LIGHT);
        let drawn = option["series"].as_array().expect("series");
        assert_eq!(drawn.len(), 2);
        assert_eq!(drawn[0]["name"], "sweep-1 · waiting (peak)");
        assert_eq!(drawn[0]["data"][2]["value"], json!([16.0, 9.0]));
        assert_eq!(drawn[0]["data"][2]["name"], "c=16");
        assert_eq!(
            drawn[0]["data"].as_array().map(Vec::len),
            Some(3),
            "the step without the server's figures is left out"
        );
        assert_eq!(drawn[1]["name"], "sweep-1 · KV cache (peak)");
        assert_eq!(drawn[1]["yAxisIndex"].as_f64(), Some(1.0));
        assert_eq!(drawn[1]["data"][1]["value"], json!([8.0, 70.0]));
        assert_eq!(option["tooltip"]["renderMode"], "richText");
        assert_eq!(option["xAxis"]["name"], "Concurrency");
        let plain = [CapacitySeries {
            points: vec![step(1.0, 100.0, 10.0, false), step(2.0, 200.0, 20.0, false)],
            ..series[0].clone()
        }];
        assert!(
            capacity_server(&plain, ChartTheme::LIGHT)["title"][0]["subtext"]
                .as_str()
                .unwrap_or_default()
                .starts_with("No data")
        );
    }
}
