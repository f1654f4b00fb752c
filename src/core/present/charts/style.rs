//! What every option shares: the base chart (title, grid, legend, toolbox with PNG export),
//! axes, rich-text tooltips (canvas text, never HTML), percentile lines and the points' shape.

use std::collections::BTreeMap;

use charming::component::{
    Axis, Feature, Grid, Legend, LegendType, SaveAsImage, SaveAsImageType, Title, Toolbox,
};
use charming::datatype::{CompositeValue, DataPoint, DataPointItem};
use charming::element::{
    AxisLabel, AxisType, Label, LabelPosition, LineStyle, LineStyleType, MarkLine, MarkLineData,
    MarkLineVariant, NameLocation, SplitLine, Symbol, TextStyle, Tooltip, Trigger,
};
use charming::Chart;
use serde_json::{json, Value};

use crate::core::format::{format_count, format_number};
use crate::core::python::stats::nearest_rank;
use crate::core::read::opened::metrics::MetricKind;
use crate::core::read::opened::text::CappedText;

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
pub(crate) const GRID_TOP: i32 = 112;

/// Longest subtitle line on the narrowest chart, in characters: what fits the about 350 px
/// wide chart of a 390 px wide screen at the subtitle's 12 px font
/// ([`subtitle_chars_for_width`] of 350).
pub const SUBTITLE_LINE_CHARS: usize = 46;

/// Average width of a subtitle character at its 12 px font, in pixels (generous, so a line of
/// wide characters still fits).
pub(crate) const SUBTITLE_CHAR_WIDTH_PX: f64 = 6.8;

/// Left inset of the title plus a margin on the right, in pixels.
pub(crate) const SUBTITLE_INSET_PX: f64 = 32.0;

/// Subtitle lines the plot area leaves room for at [`GRID_TOP`]; each further line moves the
/// plot area down by [`SUBTITLE_LINE_HEIGHT`].
pub(crate) const SUBTITLE_LINES_IN_GRID_TOP: usize = 2;

/// Height of one subtitle line, in pixels.
pub(crate) const SUBTITLE_LINE_HEIGHT: i32 = 16;

/// The percentiles marked on distributions, computed by nearest rank like the artifact's.
pub(crate) const MARKED_PERCENTILES: [u32; 3] = [50, 95, 99];

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

    pub(crate) fn palette(self) -> &'static Palette {
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
pub(crate) struct Palette {
    pub(crate) text: &'static str,
    pub(crate) muted_text: &'static str,
    pub(crate) axis_line: &'static str,
    pub(crate) split_line: &'static str,
    /// Background of exported PNGs (the live chart itself is transparent over the page).
    pub(crate) background: &'static str,
    pub(crate) series: [&'static str; 6],
    pub(crate) failure: &'static str,
    /// Timeline phases: waiting for first output, reasoning, content.
    pub(crate) phases: [&'static str; 3],
}

pub(crate) const LIGHT_PALETTE: Palette = Palette {
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

pub(crate) const DARK_PALETTE: Palette = Palette {
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

/// The plot area of single-grid charts, leaving room for title, legend and axis names.
pub(crate) fn default_grid() -> Grid {
    Grid::new()
        .left(72)
        .right(72)
        .top(GRID_TOP)
        .bottom(72)
        .contain_label(true)
}

/// Title, legend, tooltip, toolbox and colours shared by every chart (the grid is per chart).
pub(crate) fn base_chart(
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
                        .line_height(SUBTITLE_LINE_HEIGHT),
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

pub(crate) fn value_axis(name: &str, palette: &Palette) -> Axis {
    styled_axis(Axis::new().type_(AxisType::Value), name, palette)
}

/// A vertical value axis with its name written horizontally above it.
pub(crate) fn y_value_axis(name: &str, palette: &Palette) -> Axis {
    name_beside_axis(
        value_axis(name, palette),
        palette,
        NameLocation::End,
        "left",
    )
}

/// Writes a y axis name horizontally at one end of the axis (`align` away from the plot edge)
/// instead of rotated along it, where wide tick labels such as 1,000,000 would overlap it.
pub(crate) fn name_beside_axis(
    axis: Axis,
    palette: &Palette,
    location: NameLocation,
    align: &str,
) -> Axis {
    axis.name_location(location)
        .name_gap(14)
        .name_text_style(TextStyle::new().color(palette.text).align(align))
}

pub(crate) fn category_axis(name: &str, palette: &Palette) -> Axis {
    styled_axis(Axis::new().type_(AxisType::Category), name, palette)
}

pub(crate) fn styled_axis(axis: Axis, name: &str, palette: &Palette) -> Axis {
    axis.name(name)
        .name_location(NameLocation::Middle)
        .name_gap(40)
        .name_text_style(TextStyle::new().color(palette.text))
        .axis_label(AxisLabel::new().color(palette.muted_text))
        .split_line(SplitLine::new().line_style(LineStyle::new().color(palette.split_line)))
}

/// Serializes the chart and adds what charming cannot express: `renderMode: "richText"` on
/// every tooltip (canvas text, so no file text is ever parsed as HTML), the global text
/// colour, a transparent background, and axis-line colours. (The subtitle is wrapped to the
/// chart's width where it is drawn: [`fit_subtitle`].)
pub(crate) fn finish(chart: Chart, theme: ChartTheme) -> Value {
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

/// How many subtitle characters fit on a line of a chart `width_px` wide (at least 16).
pub fn subtitle_chars_for_width(width_px: f64) -> usize {
    let chars = (width_px - SUBTITLE_INSET_PX) / SUBTITLE_CHAR_WIDTH_PX;
    if chars.is_finite() {
        (chars.floor() as usize).max(16)
    } else {
        16
    }
}

/// Wraps an option's subtitle to lines of at most `max_chars` (so it is never cut at the
/// chart's edge) and moves every plot area down by the lines past the two its top leaves room
/// for. Options are built unwrapped; the page fits each to the
/// width it is drawn at.
pub fn fit_subtitle(option: &mut Value, max_chars: usize) {
    let Some(option) = option.as_object_mut() else {
        return;
    };
    let Some(subtext) = option
        .get_mut("title")
        .and_then(|title| match title {
            Value::Array(titles) => titles.first_mut(),
            title => Some(title),
        })
        .and_then(|title| title.get_mut("subtext"))
    else {
        return;
    };
    let Some(text) = subtext.as_str() else {
        return;
    };
    let wrapped = wrap_subtitle(text, max_chars);
    let extra_lines = wrapped
        .lines()
        .count()
        .saturating_sub(SUBTITLE_LINES_IN_GRID_TOP);
    *subtext = Value::String(wrapped);
    if extra_lines == 0 {
        return;
    }
    let shift = extra_lines as i64 * i64::from(SUBTITLE_LINE_HEIGHT);
    let grids = match option.get_mut("grid") {
        Some(Value::Array(grids)) => grids.iter_mut().collect(),
        Some(grid) => vec![grid],
        None => Vec::new(),
    };
    for grid in grids {
        if let Some(top) = grid.get("top").and_then(Value::as_i64) {
            grid["top"] = json!(top + shift);
        }
    }
}

/// `text` with every line longer than `max_chars` broken before a ` · ` separator where one
/// fits, else at the last space that fits (a word longer than a line stays whole).
pub fn wrap_subtitle(text: &str, max_chars: usize) -> String {
    let mut lines: Vec<String> = Vec::new();
    for line in text.split('\n') {
        let mut packed: Vec<String> = Vec::new();
        for part in line.split(" · ") {
            match packed.last_mut() {
                Some(last) if last.chars().count() + 3 + part.chars().count() <= max_chars => {
                    last.push_str(" · ");
                    last.push_str(part);
                }
                _ => packed.push(part.to_owned()),
            }
        }
        for packed_line in &packed {
            // A part longer than a line on its own: break it at spaces.
            let mut rest = packed_line.as_str();
            while rest.chars().count() > max_chars {
                let limit = rest
                    .char_indices()
                    .nth(max_chars + 1)
                    .map_or(rest.len(), |(at, _)| at);
                let Some(at) = rest[..limit].rfind(' ').filter(|&at| at > 0) else {
                    break;
                };
                lines.push(rest[..at].to_owned());
                rest = &rest[at + 1..];
            }
            lines.push(rest.to_owned());
        }
    }
    lines.join("\n")
}

/// Hides the legend of one run's chart with at most one distinct series name: that entry only
/// names the run the page's heading already names. (An SLO's bound, drawn later, adds no
/// legend back.)
pub(crate) fn hide_single_entry_legend(option: &mut Value) {
    let mut names: Vec<&str> = option
        .get("series")
        .and_then(Value::as_array)
        .map(|series| {
            series
                .iter()
                .filter_map(|series| series.get("name").and_then(Value::as_str))
                .filter(|name| !name.is_empty())
                .collect()
        })
        .unwrap_or_default();
    names.sort_unstable();
    names.dedup();
    if names.len() > 1 {
        return;
    }
    if let Some(legend) = option.get_mut("legend").and_then(Value::as_object_mut) {
        legend.insert("show".to_owned(), json!(false));
    }
}

pub(crate) fn force_rich_text(tooltip: &mut Value) {
    if let Some(tooltip) = tooltip.as_object_mut() {
        tooltip.insert("renderMode".to_owned(), json!("richText"));
    }
}

/// Puts a scatter series of more than [`SCATTER_LARGE_THRESHOLD`] points in ECharts' `large`
/// mode: its symbols become one path instead of one canvas element each (hover tooltips still
/// work), which draws thousands of points in milliseconds instead of hundreds of them.
pub(crate) fn use_large_mode_when_big(series: &mut Value) {
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

/// Colours an axis's line, and lets ECharts drop tick labels that would overlap their
/// neighbours (`axisLabel.hideOverlap`, which charming cannot set): long numbers on a narrow
/// chart otherwise run into each other ("1,0002,0003,000").
pub(crate) fn color_axis_line(axis: &mut Value, palette: &Palette) {
    if let Some(axis) = axis.as_object_mut() {
        axis.insert(
            "axisLine".to_owned(),
            json!({ "lineStyle": { "color": palette.axis_line } }),
        );
        if let Some(label) = axis
            .entry("axisLabel")
            .or_insert_with(|| json!({}))
            .as_object_mut()
        {
            label.insert("hideOverlap".to_owned(), json!(true));
        }
    }
}

/// Dashed vertical lines at the nearest-rank p50, p95 and p99 of `values`, labelled with the
/// value and unit (text this module writes, never text from a file).
pub(crate) fn percentile_lines(values: &[f64], unit: &str, color: &str) -> MarkLine {
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
pub(crate) fn named_point(x: f64, y: f64, name: String) -> DataPoint {
    DataPoint::from(DataPointItem::new(vec![finite_or_zero(x), finite_or_zero(y)]).name(name))
}

pub(crate) fn point(x: f64, y: f64) -> DataPoint {
    DataPoint::from(CompositeValue::from(vec![
        finite_or_zero(x),
        finite_or_zero(y),
    ]))
}

/// Keeps NaN and infinities out of options (ECharts would draw garbage, JSON has no NaN).
pub(crate) fn finite_or_zero(value: f64) -> f64 {
    if value.is_finite() {
        value
    } else {
        0.0
    }
}

/// One run's values as a distribution chart draws them.
pub(crate) struct RunValues {
    /// Capped, distinct legend label.
    pub(crate) label: String,
    /// The finite values.
    pub(crate) values: Vec<f64>,
    /// The run's position in the caller's list, which picks its colour, so a run keeps its
    /// colour when runs before it have nothing to draw.
    pub(crate) color_index: usize,
}

/// Runs with their non-finite values dropped and labels capped and made distinct; runs left
/// without values are dropped.
pub(crate) fn finite_runs(runs: &[(&str, &[f64])]) -> Vec<RunValues> {
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
pub(crate) fn distinct_labels(labels: &[String]) -> Vec<String> {
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

pub(crate) fn sample_summary(runs: &[RunValues], given: usize) -> String {
    match runs {
        [run] if given == 1 => format!("{} requests", format_count(run.values.len())),
        _ if runs.len() == given => format!("{given} runs"),
        _ => format!(
            "{} of {given} runs (the others have no request rows with this metric)",
            runs.len()
        ),
    }
}

pub(crate) fn axis_name(metric: MetricKind) -> String {
    format!("{} ({})", metric.short_label(), metric.unit())
}
