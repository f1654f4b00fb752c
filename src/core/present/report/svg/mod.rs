//! A chart of the report: the page's own ECharts option ([`crate::core::present::charts`])
//! drawn as inline SVG, so the report shows every chart the page shows without ECharts (whose
//! megabyte would break the report's size budget) and without a script. What is drawn is the
//! subset of ECharts strobe's options use: grids side by side, value and category axes (a
//! second y axis on the right), line (with steps and gaps), scatter and bar series, mark lines
//! and point labels. Beside the drawing, [`SvgChart::hover`] holds each series' values for the
//! report's hover script, which shows them as text.
//!
//! Every text from the option (series and point names, which can come from a file) is escaped;
//! no colour or number from it is written without being checked.

use std::fmt::Write as _;

use serde_json::{json, Value};

mod draw;

use draw::{
    draw_bars, draw_line, draw_marks, draw_point_labels, draw_scatter, draw_x_axis, draw_y_axis,
};

/// The drawing's width in SVG units (it scales to the page).
pub const WIDTH: f64 = 640.0;
/// The drawing's height in SVG units.
pub const HEIGHT: f64 = 320.0;
const MARGIN_LEFT: f64 = 58.0;
const MARGIN_RIGHT: f64 = 18.0;
const MARGIN_TOP: f64 = 26.0;
const MARGIN_BOTTOM: f64 = 42.0;
const TICKS: f64 = 5.0;
const DEFAULT_COLORS: [&str; 4] = ["#0072b2", "#d55e00", "#009e73", "#cc79a7"];
const AXIS_COLOR: &str = "#8c959f";
const GRID_COLOR: &str = "#d8dee4";
const TEXT_COLOR: &str = "#57606a";

/// One chart drawn.
#[derive(Clone, Debug, PartialEq)]
pub struct SvgChart {
    /// The `<svg>` element.
    pub svg: String,
    /// What the hover script reads: `{"s": [{"n", "c", "x", "y", "xn", "yn", "k"?, "l"?, "d"}]}`,
    /// one entry per series with values (`d`, x and y in turn), the transforms from values to
    /// SVG units (`x`, `y`: value from, value to, unit from, unit to).
    pub hover: Value,
    /// The legend: each series' name and colour, when the chart shows a legend.
    pub legend: Vec<(String, String)>,
}

/// An axis as the option states it.
#[derive(Clone, Debug)]
struct Axis {
    name: String,
    categories: Option<Vec<String>>,
    min: Option<f64>,
    max: Option<f64>,
    scale: bool,
    inverse: bool,
    grid: usize,
    /// A second y axis of its grid, drawn on the right.
    right: bool,
}

/// An axis laid out: its value range and where it lies in SVG units.
#[derive(Clone, Debug)]
struct Placed {
    axis: Axis,
    low: f64,
    high: f64,
    step: f64,
    /// SVG units of `low` and `high`.
    from: f64,
    to: f64,
}

impl Placed {
    fn at(&self, value: f64) -> f64 {
        if self.high == self.low {
            return (self.from + self.to) / 2.0;
        }
        self.from + (value - self.low) / (self.high - self.low) * (self.to - self.from)
    }

    fn transform(&self) -> Value {
        json!([
            round_value(self.low),
            round_value(self.high),
            round_unit(self.from),
            round_unit(self.to)
        ])
    }
}

/// A series' points in values (x, y); `None` is a gap.
type Points = Vec<Option<(f64, f64)>>;

fn as_array(value: Option<&Value>) -> Vec<&Value> {
    match value {
        Some(Value::Array(items)) => items.iter().collect(),
        Some(item @ Value::Object(_)) => vec![item],
        _ => Vec::new(),
    }
}

fn index_of(value: Option<&Value>) -> usize {
    value.and_then(Value::as_f64).map_or(0, |index| {
        if index.is_finite() && index >= 0.0 {
            index as usize
        } else {
            0
        }
    })
}

fn axes(option: &Value, key: &str) -> Vec<Axis> {
    let mut seen_grids: Vec<usize> = Vec::new();
    as_array(option.get(key))
        .into_iter()
        .map(|axis| {
            let grid = index_of(axis.get("gridIndex"));
            let right = key == "yAxis" && seen_grids.contains(&grid);
            seen_grids.push(grid);
            Axis {
                name: axis
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned(),
                categories: (axis.get("type").and_then(Value::as_str) == Some("category")).then(
                    || {
                        axis.get("data")
                            .and_then(Value::as_array)
                            .map(|data| data.iter().map(label_of).collect())
                            .unwrap_or_default()
                    },
                ),
                min: axis
                    .get("min")
                    .and_then(Value::as_f64)
                    .filter(|v| v.is_finite()),
                max: axis
                    .get("max")
                    .and_then(Value::as_f64)
                    .filter(|v| v.is_finite()),
                scale: axis.get("scale").and_then(Value::as_bool).unwrap_or(false),
                inverse: axis
                    .get("inverse")
                    .and_then(Value::as_bool)
                    .unwrap_or(false),
                grid,
                right,
            }
        })
        .collect()
}

fn label_of(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        Value::Object(object) => object.get("value").map(label_of).unwrap_or_default(),
        other => other.to_string(),
    }
}

/// A point of a series' `data`: `[x, y]`, `{value: [x, y]}`, or a bare `y` at its position
/// (on a category axis); anything else (`"-"`, `null`) is a gap.
fn point_of(item: &Value, position: usize) -> Option<(f64, f64)> {
    match item {
        Value::Array(pair) => {
            let x = pair.first()?.as_f64()?;
            let y = pair.get(1)?.as_f64()?;
            (x.is_finite() && y.is_finite()).then_some((x, y))
        }
        Value::Object(object) => point_of(object.get("value")?, position),
        Value::Number(number) => {
            let y = number.as_f64()?;
            y.is_finite().then_some((position as f64, y))
        }
        _ => None,
    }
}

fn points_of(series: &Value) -> Points {
    series
        .get("data")
        .and_then(Value::as_array)
        .map(|data| {
            data.iter()
                .enumerate()
                .map(|(position, item)| point_of(item, position))
                .collect()
        })
        .unwrap_or_default()
}

fn point_names(series: &Value) -> Vec<Option<String>> {
    series
        .get("data")
        .and_then(Value::as_array)
        .map(|data| {
            data.iter()
                .map(|item| item.get("name").and_then(Value::as_str).map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// A colour from the option, when it is one (`#rgb`, `#rrggbb`, `#rrggbbaa`); never any other
/// text in an attribute.
fn color(value: Option<&Value>) -> Option<String> {
    let text = value?.as_str()?;
    let hex = text.strip_prefix('#')?;
    (matches!(hex.len(), 3 | 6 | 8) && hex.chars().all(|c| c.is_ascii_hexdigit()))
        .then(|| text.to_owned())
}

fn series_color(series: &Value, position: usize) -> String {
    color(series.pointer("/lineStyle/color"))
        .or_else(|| color(series.pointer("/itemStyle/color")))
        .unwrap_or_else(|| DEFAULT_COLORS[position % DEFAULT_COLORS.len()].to_owned())
}

fn number_at(value: &Value, pointer: &str) -> Option<f64> {
    value
        .pointer(pointer)
        .and_then(Value::as_f64)
        .filter(|v| v.is_finite())
}

/// A "nice" tick step (1, 2 or 5 × 10ⁿ) for `span` over about [`TICKS`] ticks.
fn nice_step(span: f64) -> f64 {
    if !(span.is_finite() && span > 0.0) {
        return 1.0;
    }
    let raw = span / TICKS;
    let power = 10f64.powf(raw.log10().floor());
    let fraction = raw / power;
    let nice = if fraction <= 1.0 {
        1.0
    } else if fraction <= 2.0 {
        2.0
    } else if fraction <= 5.0 {
        5.0
    } else {
        10.0
    };
    nice * power
}

/// A value rounded to 5 significant digits for the hover data (what it shows is 3 or 4).
fn round_value(value: f64) -> f64 {
    if value == 0.0 || !value.is_finite() {
        return 0.0;
    }
    let digits = 4 - value.abs().log10().floor() as i32;
    let scale = 10f64.powi(digits.clamp(-300, 300));
    (value * scale).round() / scale
}

fn round_unit(value: f64) -> f64 {
    (value * 10.0).round() / 10.0
}

/// A tick label: thousands grouped, as many decimals as the step needs.
fn tick_label(value: f64, step: f64) -> String {
    let decimals = if step >= 1.0 {
        0
    } else {
        (-step.log10().floor()) as usize
    };
    let text = format!("{value:.decimals$}");
    if decimals == 0 && value.abs() >= 10_000.0 {
        let negative = text.starts_with('-');
        let digits = text.trim_start_matches('-');
        let mut grouped = String::new();
        for (position, digit) in digits.chars().enumerate() {
            if position > 0 && (digits.len() - position) % 3 == 0 {
                grouped.push(',');
            }
            grouped.push(digit);
        }
        return if negative {
            format!("-{grouped}")
        } else {
            grouped
        };
    }
    if text == "-0" {
        "0".to_owned()
    } else {
        text
    }
}

fn place(axis: &Axis, values: &[f64], from: f64, to: f64) -> Placed {
    if let Some(categories) = &axis.categories {
        let count = categories.len().max(1) as f64;
        let (from, to) = if axis.inverse { (to, from) } else { (from, to) };
        return Placed {
            axis: axis.clone(),
            low: -0.5,
            high: count - 0.5,
            step: 1.0,
            from,
            to,
        };
    }
    let finite = values.iter().copied().filter(|v| v.is_finite());
    let (mut low, mut high) = finite.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
        (lo.min(v), hi.max(v))
    });
    if low > high {
        (low, high) = (0.0, 1.0);
    }
    if !axis.scale && axis.min.is_none() {
        low = low.min(0.0);
        high = high.max(0.0);
    }
    if let Some(min) = axis.min {
        low = min;
    }
    if let Some(max) = axis.max {
        high = max;
    }
    if high <= low {
        let pad = if low == 0.0 { 1.0 } else { low.abs() / 10.0 };
        if axis.max.is_none() {
            high = low + pad;
        } else {
            low = high - pad;
        }
    }
    let step = nice_step(high - low);
    if axis.min.is_none() {
        low = (low / step).floor() * step;
    }
    if axis.max.is_none() {
        high = (high / step).ceil() * step;
    }
    let (from, to) = if axis.inverse { (to, from) } else { (from, to) };
    Placed {
        axis: axis.clone(),
        low,
        high,
        step,
        from,
        to,
    }
}

/// Where grid `grid` of `grids` lies: left, right, top, bottom in SVG units.
fn panel(grid: usize, grids: usize, right_axis: bool) -> (f64, f64, f64, f64) {
    let width = WIDTH / grids.max(1) as f64;
    let left = width * grid as f64 + MARGIN_LEFT;
    let right = width * (grid + 1) as f64
        - if right_axis {
            MARGIN_LEFT
        } else {
            MARGIN_RIGHT
        };
    (left, right, MARGIN_TOP, HEIGHT - MARGIN_BOTTOM)
}

/// Values of the mark lines of `series` along `key` (`xAxis` or `yAxis`).
fn mark_values(series: &Value, key: &str) -> Vec<f64> {
    series
        .pointer("/markLine/data")
        .and_then(Value::as_array)
        .map(|data| {
            data.iter()
                .filter_map(|mark| mark.get(key).and_then(Value::as_f64))
                .filter(|v| v.is_finite())
                .collect()
        })
        .unwrap_or_default()
}

fn draws(series: &Value) -> bool {
    matches!(
        series.get("type").and_then(Value::as_str),
        Some("line" | "scatter" | "bar")
    )
}

/// Draws `option`; `None` when it has no series to draw (a "No data" option: the report shows
/// its title and reason instead).
pub fn chart_svg(option: &Value) -> Option<SvgChart> {
    let all_series: Vec<&Value> = as_array(option.get("series"))
        .into_iter()
        .filter(|series| draws(series))
        .collect();
    if all_series.is_empty() {
        return None;
    }
    let x_axes = axes(option, "xAxis");
    let y_axes = axes(option, "yAxis");
    if x_axes.is_empty() || y_axes.is_empty() {
        return None;
    }
    let grids = x_axes
        .iter()
        .chain(&y_axes)
        .map(|axis| axis.grid + 1)
        .max()
        .unwrap_or(1);
    let parsed: Vec<(usize, usize, Points)> = all_series
        .iter()
        .map(|series| {
            (
                index_of(series.get("xAxisIndex")).min(x_axes.len() - 1),
                index_of(series.get("yAxisIndex")).min(y_axes.len() - 1),
                points_of(series),
            )
        })
        .collect();
    let values_on = |axis: usize, of_x: bool| -> Vec<f64> {
        let mut values = Vec::new();
        for ((x, y, points), series) in parsed.iter().zip(&all_series) {
            if (of_x && *x == axis) || (!of_x && *y == axis) {
                values.extend(
                    points
                        .iter()
                        .flatten()
                        .map(|(px, py)| if of_x { *px } else { *py }),
                );
                values.extend(mark_values(series, if of_x { "xAxis" } else { "yAxis" }));
            }
        }
        values
    };
    let right_axis_of = |grid: usize| y_axes.iter().any(|axis| axis.grid == grid && axis.right);
    let placed_x: Vec<Placed> = x_axes
        .iter()
        .enumerate()
        .map(|(position, axis)| {
            let (left, right, _, _) = panel(axis.grid, grids, right_axis_of(axis.grid));
            place(axis, &values_on(position, true), left, right)
        })
        .collect();
    let placed_y: Vec<Placed> = y_axes
        .iter()
        .enumerate()
        .map(|(position, axis)| {
            let (_, _, top, bottom) = panel(axis.grid, grids, false);
            place(axis, &values_on(position, false), bottom, top)
        })
        .collect();

    let mut svg = String::with_capacity(16 * 1024);
    let _ = write!(
        svg,
        r#"<svg class="chart" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" font-family="system-ui, sans-serif" font-size="11">"#
    );
    for x in &placed_x {
        let y = placed_y
            .iter()
            .find(|y| y.axis.grid == x.axis.grid && !y.axis.right)
            .or_else(|| placed_y.first());
        if let Some(y) = y {
            draw_x_axis(&mut svg, x, y);
        }
    }
    for y in &placed_y {
        if let Some(x) = placed_x.iter().find(|x| x.axis.grid == y.axis.grid) {
            draw_y_axis(&mut svg, y, x);
        }
    }
    let bar_series: Vec<usize> = all_series
        .iter()
        .enumerate()
        .filter(|(_, series)| series.get("type").and_then(Value::as_str) == Some("bar"))
        .map(|(position, _)| position)
        .collect();
    let mut hover = Vec::new();
    let mut legend = Vec::new();
    for (position, (series, (x_index, y_index, points))) in
        all_series.iter().zip(&parsed).enumerate()
    {
        let (x, y) = (&placed_x[*x_index], &placed_y[*y_index]);
        let color = series_color(series, position);
        let name = series
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        match series.get("type").and_then(Value::as_str) {
            Some("bar") => {
                let slot = bar_series.iter().position(|p| *p == position).unwrap_or(0);
                draw_bars(
                    &mut svg,
                    series,
                    points,
                    x,
                    y,
                    &color,
                    (slot, bar_series.len()),
                );
            }
            Some("scatter") => draw_scatter(&mut svg, series, points, x, y, &color),
            _ => draw_line(&mut svg, series, points, x, y, &color),
        }
        draw_point_labels(&mut svg, series, points, x, y);
        draw_marks(&mut svg, series, x, y, &color);
        if !name.is_empty() && !legend.iter().any(|(shown, _)| shown == &name) {
            legend.push((name.clone(), color.clone()));
        }
        let silent = series.get("silent").and_then(Value::as_bool) == Some(true)
            || series.pointer("/tooltip/show").and_then(Value::as_bool) == Some(false);
        if !silent && points.iter().any(Option::is_some) {
            hover.push(hover_series(series, &name, &color, points, x, y));
        }
    }
    svg.push_str(r##"<circle class="hover-dot" r="5" fill="none" stroke="#1f2328" stroke-width="2" visibility="hidden"/>"##);
    svg.push_str("</svg>");
    let legend_shown = option.pointer("/legend/show").and_then(Value::as_bool) != Some(false);
    Some(SvgChart {
        svg,
        hover: json!({ "s": hover }),
        legend: if legend_shown { legend } else { Vec::new() },
    })
}

fn hover_series(
    series: &Value,
    name: &str,
    color: &str,
    points: &Points,
    x: &Placed,
    y: &Placed,
) -> Value {
    let names = point_names(series);
    let mut data = Vec::new();
    let mut labels = Vec::new();
    for (position, point) in points.iter().enumerate() {
        if let Some((px, py)) = point {
            data.push(json!(round_value(*px)));
            data.push(json!(round_value(*py)));
            labels.push(names.get(position).cloned().flatten().unwrap_or_default());
        }
    }
    let mut entry = json!({
        "n": name,
        "c": color,
        "x": x.transform(),
        "y": y.transform(),
        "xn": x.axis.name,
        "yn": y.axis.name,
        "d": data,
    });
    if let Some(categories) = &x.axis.categories {
        entry["k"] = json!(categories);
    }
    if labels.iter().any(|label| !label.is_empty()) {
        entry["l"] = json!(labels);
    }
    entry
}

#[cfg(test)]
mod tests;
