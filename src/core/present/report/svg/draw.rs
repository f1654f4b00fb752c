//! The drawing of one chart's parts in SVG: axes with ticks and names, line, scatter and bar
//! series, point labels and mark lines. Every text is escaped; every colour was checked by
//! [`super::color`].

use std::fmt::Write as _;

use serde_json::Value;

use super::{
    color, number_at, point_names, tick_label, Placed, Points, AXIS_COLOR, GRID_COLOR, TEXT_COLOR,
};
use crate::core::present::report::html::escape;

pub(super) fn draw_x_axis(svg: &mut String, x: &Placed, y: &Placed) {
    let (top, bottom) = (y.from.min(y.to), y.from.max(y.to));
    let (left, right) = (x.from.min(x.to), x.from.max(x.to));
    let mut grid_path = String::new();
    let mut labels = String::new();
    match &x.axis.categories {
        Some(categories) => {
            for (position, category) in categories.iter().enumerate() {
                let at = x.at(position as f64);
                let _ = write!(
                    labels,
                    r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
                    at,
                    bottom + 14.0,
                    escape(category)
                );
            }
        }
        None => {
            for tick in ticks(x) {
                let at = x.at(tick);
                let _ = write!(grid_path, "M{at:.1} {top:.1}V{bottom:.1}");
                let _ = write!(
                    labels,
                    r#"<text x="{at:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
                    bottom + 14.0,
                    tick_label(tick, x.step)
                );
            }
        }
    }
    if !grid_path.is_empty() {
        let _ = write!(
            svg,
            r#"<path d="{grid_path}" stroke="{GRID_COLOR}" fill="none"/>"#
        );
    }
    let _ = write!(
        svg,
        r##"<path d="M{left:.1} {bottom:.1}H{right:.1}" stroke="{AXIS_COLOR}"/><g fill="{TEXT_COLOR}">{labels}</g><text x="{:.1}" y="{:.1}" text-anchor="middle" fill="#1f2328">{}</text>"##,
        (left + right) / 2.0,
        bottom + 32.0,
        escape(&x.axis.name)
    );
}

pub(super) fn draw_y_axis(svg: &mut String, y: &Placed, x: &Placed) {
    let (left, right) = (x.from.min(x.to), x.from.max(x.to));
    let (top, bottom) = (y.from.min(y.to), y.from.max(y.to));
    let edge = if y.axis.right { right } else { left };
    let mut grid_path = String::new();
    let mut labels = String::new();
    let anchor = if y.axis.right { "start" } else { "end" };
    let label_x = if y.axis.right { edge + 5.0 } else { edge - 5.0 };
    let categories = y.axis.categories.clone();
    let tick_values: Vec<f64> = match &categories {
        Some(categories) => (0..categories.len()).map(|p| p as f64).collect(),
        None => ticks(y),
    };
    for tick in tick_values {
        let at = y.at(tick);
        if !y.axis.right && categories.is_none() {
            let _ = write!(grid_path, "M{left:.1} {at:.1}H{right:.1}");
        }
        let text = match &categories {
            Some(categories) => escape(categories.get(tick as usize).map_or("", String::as_str)),
            None => tick_label(tick, y.step),
        };
        let _ = write!(
            labels,
            r#"<text x="{label_x:.1}" y="{:.1}" text-anchor="{anchor}">{text}</text>"#,
            at + 4.0
        );
    }
    if !grid_path.is_empty() {
        let _ = write!(
            svg,
            r#"<path d="{grid_path}" stroke="{GRID_COLOR}" fill="none"/>"#
        );
    }
    let name_x = if y.axis.right { right } else { left - 50.0 };
    let _ = write!(
        svg,
        r##"<path d="M{edge:.1} {top:.1}V{bottom:.1}" stroke="{AXIS_COLOR}"/><g fill="{TEXT_COLOR}">{labels}</g><text x="{:.1}" y="{:.1}" text-anchor="{}" fill="#1f2328">{}</text>"##,
        name_x.max(2.0),
        top - 10.0,
        if y.axis.right { "end" } else { "start" },
        escape(&y.axis.name)
    );
}

fn ticks(axis: &Placed) -> Vec<f64> {
    let mut ticks = Vec::new();
    let first = (axis.low / axis.step).ceil() * axis.step;
    let mut tick = first;
    while tick <= axis.high + axis.step * 1e-9 && ticks.len() < 50 {
        ticks.push(if tick.abs() < axis.step * 1e-9 {
            0.0
        } else {
            tick
        });
        tick = first + axis.step * ticks.len() as f64;
    }
    ticks
}

fn stroke_attributes(series: &Value, style: &str, default_width: f64) -> String {
    let width = number_at(series, &format!("/{style}/width")).unwrap_or(default_width);
    let dashed = series
        .pointer(&format!("/{style}/type"))
        .and_then(Value::as_str)
        == Some("dashed");
    let opacity = number_at(series, &format!("/{style}/opacity"));
    let mut attributes = format!(r#" stroke-width="{}""#, width.clamp(0.0, 20.0));
    if dashed {
        attributes.push_str(r#" stroke-dasharray="5 4""#);
    }
    if let Some(opacity) = opacity {
        let _ = write!(
            attributes,
            r#" stroke-opacity="{}""#,
            opacity.clamp(0.0, 1.0)
        );
    }
    attributes
}

pub(super) fn draw_line(
    svg: &mut String,
    series: &Value,
    points: &Points,
    x: &Placed,
    y: &Placed,
    color: &str,
) {
    let step = series.get("step").and_then(Value::as_str);
    let mut path = String::new();
    let mut last: Option<(f64, f64)> = None;
    for point in points {
        let Some((vx, vy)) = point else {
            last = None;
            continue;
        };
        let (px, py) = (x.at(*vx), y.at(*vy));
        match (last, step) {
            (None, _) => {
                let _ = write!(path, "M{px:.1} {py:.1}");
            }
            (Some(_), Some("end")) => {
                let _ = write!(path, "H{px:.1}V{py:.1}");
            }
            (Some(_), Some("start")) => {
                let _ = write!(path, "V{py:.1}H{px:.1}");
            }
            (Some((lx, _)), Some("middle")) => {
                let _ = write!(path, "H{:.1}V{py:.1}H{px:.1}", (lx + px) / 2.0);
            }
            (Some(_), _) => {
                let _ = write!(path, "L{px:.1} {py:.1}");
            }
        }
        last = Some((px, py));
    }
    let invisible = number_at(series, "/lineStyle/opacity") == Some(0.0);
    if !path.is_empty() && !invisible {
        let _ = write!(
            svg,
            r#"<path d="{path}" fill="none" stroke="{color}"{} stroke-linejoin="round"/>"#,
            stroke_attributes(series, "lineStyle", 2.0)
        );
    }
    let symbols = series.get("showSymbol").and_then(Value::as_bool) != Some(false)
        && series.get("symbol").and_then(Value::as_str) != Some("none")
        && !invisible;
    if symbols {
        let size = number_at(series, "/symbolSize")
            .unwrap_or(6.0)
            .clamp(1.0, 20.0);
        draw_dots(svg, points, x, y, color, size, 1.0);
    }
}

pub(super) fn draw_dots(
    svg: &mut String,
    points: &Points,
    x: &Placed,
    y: &Placed,
    color: &str,
    size: f64,
    opacity: f64,
) {
    let mut path = String::new();
    for (vx, vy) in points.iter().flatten() {
        let _ = write!(path, "M{:.1} {:.1}h0", x.at(*vx), y.at(*vy));
    }
    if !path.is_empty() {
        let _ = write!(
            svg,
            r#"<path d="{path}" stroke="{color}" stroke-width="{size}" stroke-linecap="round" stroke-opacity="{opacity}"/>"#
        );
    }
}

pub(super) fn draw_scatter(
    svg: &mut String,
    series: &Value,
    points: &Points,
    x: &Placed,
    y: &Placed,
    color: &str,
) {
    let size = number_at(series, "/symbolSize")
        .unwrap_or(7.0)
        .clamp(1.0, 20.0);
    let opacity = number_at(series, "/itemStyle/opacity")
        .unwrap_or(0.8)
        .clamp(0.0, 1.0);
    if series.get("symbol").and_then(Value::as_str) == Some("emptyCircle") {
        let radius = size / 2.0;
        let mut path = String::new();
        for (vx, vy) in points.iter().flatten() {
            let _ = write!(
                path,
                "M{:.1} {:.1}a{radius} {radius} 0 1 0 {} 0a{radius} {radius} 0 1 0 -{} 0",
                x.at(*vx) - radius,
                y.at(*vy),
                2.0 * radius,
                2.0 * radius
            );
        }
        if !path.is_empty() {
            let _ = write!(
                svg,
                r#"<path d="{path}" fill="none" stroke="{color}" stroke-width="1.5"/>"#
            );
        }
        return;
    }
    draw_dots(svg, points, x, y, color, size, opacity);
}

pub(super) fn draw_bars(
    svg: &mut String,
    series: &Value,
    points: &Points,
    x: &Placed,
    y: &Placed,
    color: &str,
    (slot, slots): (usize, usize),
) {
    let opacity = number_at(series, "/itemStyle/opacity")
        .unwrap_or(1.0)
        .clamp(0.0, 1.0);
    let base = y.at(y.low.max(0.0).min(y.high));
    let (offset, width) = if x.axis.categories.is_some() {
        let band = (x.at(1.0) - x.at(0.0)).abs();
        let width = band * 0.7 / slots.max(1) as f64;
        (-band * 0.35 + width * slot as f64, width)
    } else {
        // A histogram: bars as wide as the distance between bin centres.
        let mut centres: Vec<f64> = points.iter().flatten().map(|(vx, _)| *vx).collect();
        centres.sort_by(f64::total_cmp);
        let gap = centres
            .windows(2)
            .map(|pair| pair[1] - pair[0])
            .filter(|gap| *gap > 0.0)
            .fold(f64::INFINITY, f64::min);
        let width = if gap.is_finite() {
            (x.at(gap) - x.at(0.0)).abs()
        } else {
            8.0
        };
        (-width / 2.0, width)
    };
    let mut path = String::new();
    for (vx, vy) in points.iter().flatten() {
        let left = x.at(*vx) + offset;
        let _ = write!(
            path,
            "M{left:.1} {base:.1}V{:.1}H{:.1}V{base:.1}Z",
            y.at(*vy),
            left + width
        );
    }
    if !path.is_empty() {
        let _ = write!(
            svg,
            r##"<path d="{path}" fill="{color}" fill-opacity="{opacity}" stroke="#ffffff" stroke-width="0.5"/>"##
        );
    }
}

pub(super) fn draw_point_labels(
    svg: &mut String,
    series: &Value,
    points: &Points,
    x: &Placed,
    y: &Placed,
) {
    if series.pointer("/label/show").and_then(Value::as_bool) != Some(true) {
        return;
    }
    let names = point_names(series);
    let mut text = String::new();
    for (position, point) in points.iter().enumerate() {
        let (Some((vx, vy)), Some(Some(name))) = (point, names.get(position)) else {
            continue;
        };
        let _ = write!(
            text,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
            x.at(*vx),
            y.at(*vy) - 8.0,
            escape(name)
        );
    }
    if !text.is_empty() {
        let _ = write!(svg, r#"<g fill="{TEXT_COLOR}" font-size="10">{text}</g>"#);
    }
}

pub(super) fn draw_marks(
    svg: &mut String,
    series: &Value,
    x: &Placed,
    y: &Placed,
    series_color: &str,
) {
    let Some(marks) = series.pointer("/markLine/data").and_then(Value::as_array) else {
        return;
    };
    let color = color(series.pointer("/markLine/lineStyle/color"))
        .unwrap_or_else(|| series_color.to_owned());
    let dashed = series
        .pointer("/markLine/lineStyle/type")
        .and_then(Value::as_str)
        != Some("solid");
    let width = number_at(series, "/markLine/lineStyle/width")
        .unwrap_or(1.0)
        .clamp(0.5, 6.0);
    let formatter = series
        .pointer("/markLine/label/formatter")
        .and_then(Value::as_str)
        .unwrap_or("{b}");
    let (top, bottom) = (y.from.min(y.to), y.from.max(y.to));
    let (left, right) = (x.from.min(x.to), x.from.max(x.to));
    for (position, mark) in marks.iter().enumerate() {
        let name = mark.get("name").and_then(Value::as_str).unwrap_or_default();
        let label = formatter.replace("{b}", name);
        let (line, text_at) = if let Some(value) = mark.get("xAxis").and_then(Value::as_f64) {
            let at = x.at(value);
            (
                format!("M{at:.1} {top:.1}V{bottom:.1}"),
                (at + 3.0, top + 10.0 + 11.0 * position as f64, "start"),
            )
        } else if let Some(value) = mark.get("yAxis").and_then(Value::as_f64) {
            let at = y.at(value);
            (
                format!("M{left:.1} {at:.1}H{right:.1}"),
                (right - 3.0, at - 3.0, "end"),
            )
        } else {
            continue;
        };
        let _ = write!(
            svg,
            r#"<path d="{line}" stroke="{color}" stroke-width="{width}"{}/>"#,
            if dashed {
                r#" stroke-dasharray="5 4""#
            } else {
                ""
            }
        );
        if !label.is_empty() {
            let _ = write!(
                svg,
                r#"<text x="{:.1}" y="{:.1}" text-anchor="{}" fill="{color}" font-size="10">{}</text>"#,
                text_at.0,
                text_at.1,
                text_at.2,
                escape(&label)
            );
        }
    }
}
