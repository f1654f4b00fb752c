//! The headline numbers a converted file cannot give (`source.unavailable`,
//! docs/spec/converted.md): which numbers strobe's summary shows for a tool's own file but not
//! for its conversion, why in words, and the tool's own figure for each where it has one.
//!
//! A conversion keeps a tool's token counts beside the rows, not in them, when they are not the
//! server's usage (ARTIFACT.md §5), so TPOT, the decode and prefill rates and the throughput,
//! which strobe computes from exact counts only, are null in the converted file. The tool's own
//! aggregate for the same quantity (by the tool's definition) is in `source.aggregates`; this
//! module names which aggregate stands for which of strobe's numbers.

use serde_json::{json, Map, Value};

use crate::core::read::opened::metrics::{KeyMetrics, MetricKind, MetricStat};
use crate::core::read::opened::text::CappedText;

use super::{ForeignRun, ForeignSource, Quantity};

/// One of the numbers strobe's summary of a run shows: a metric's distribution, or the
/// throughput.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Headline {
    /// A request-level metric (p50/p95/p99/mean).
    Metric(MetricKind),
    /// Output tokens per wall-clock second (`metrics.throughput_tok_s`).
    Throughput,
}

impl Headline {
    /// Every headline number, in the summary's order.
    pub const ALL: [Headline; 7] = [
        Headline::Metric(MetricKind::Ttfo),
        Headline::Metric(MetricKind::Ttft),
        Headline::Metric(MetricKind::E2e),
        Headline::Metric(MetricKind::Tpot),
        Headline::Metric(MetricKind::Decode),
        Headline::Metric(MetricKind::Prefill),
        Headline::Throughput,
    ];

    /// Stable id: the metric's id (`tpot`, `decode`, …) or `throughput_tok_s`.
    pub fn id(self) -> &'static str {
        match self {
            Headline::Metric(kind) => kind.id(),
            Headline::Throughput => "throughput_tok_s",
        }
    }

    /// The headline of an id.
    pub fn of_id(id: &str) -> Option<Headline> {
        Self::ALL.into_iter().find(|headline| headline.id() == id)
    }

    /// Its name in a sentence: `TPOT`, `the decode rate`, `the throughput`.
    pub fn name(self) -> &'static str {
        match self {
            Headline::Metric(MetricKind::Decode) => "the decode rate",
            Headline::Metric(MetricKind::Prefill) => "the effective prefill rate",
            Headline::Metric(kind) => kind.short_label(),
            Headline::Throughput => "the throughput",
        }
    }

    /// Whether `metrics` has any figure of it.
    fn is_in(self, metrics: &KeyMetrics) -> bool {
        match self {
            Headline::Metric(kind) => !metrics.get(kind).is_empty(),
            Headline::Throughput => metrics.throughput_tok_s.is_some(),
        }
    }
}

/// Which of a tool's aggregates stands for one statistic of one of strobe's headline numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct OwnFigure {
    /// strobe's number.
    pub(crate) headline: Headline,
    /// Its statistic; `None` for the throughput, which is one value.
    pub(crate) stat: Option<MetricStat>,
    /// The aggregate's name in the tool's file (`source.aggregates`).
    pub(crate) name: &'static str,
}

/// A tool's own figure for a number strobe cannot give, under the tool's name.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolFigure {
    /// The statistic it stands for; `None` for the throughput.
    pub stat: Option<MetricStat>,
    /// The tool's name for it, e.g. `median_tpot_ms`.
    pub name: String,
    /// Its value, by the tool's definition and in the tool's unit.
    pub value: f64,
}

/// A headline number the converted file cannot give.
#[derive(Debug, Clone, PartialEq)]
pub struct Unavailable {
    /// The number.
    pub headline: Headline,
    /// Why the converted file cannot give it, in words.
    pub reason: String,
    /// The tool's own figures for it, by statistic; empty when the tool has none.
    pub tool_figures: Vec<ToolFigure>,
}

impl Unavailable {
    /// The tool's own figure for `stat` (`None`: the throughput's one value).
    pub fn figure(&self, stat: Option<MetricStat>) -> Option<&ToolFigure> {
        self.tool_figures.iter().find(|figure| figure.stat == stat)
    }
}

/// The key of a figure's statistic in `tool_figures`: the stat's id, or `value`.
fn stat_key(stat: Option<MetricStat>) -> &'static str {
    stat.map_or("value", MetricStat::id)
}

/// The headline numbers `run`'s own metrics give but `converted`'s (the converted file's) do
/// not, each with why and the tool's own figures for it.
pub(crate) fn unavailable(run: &ForeignRun, converted: &KeyMetrics) -> Vec<Unavailable> {
    Headline::ALL
        .into_iter()
        .filter(|headline| headline.is_in(&run.metrics) && !headline.is_in(converted))
        .map(|headline| Unavailable {
            headline,
            reason: reason(&run.source, headline),
            tool_figures: run
                .source
                .tool
                .own_figures()
                .iter()
                .filter(|figure| figure.headline == headline)
                .filter_map(|figure| {
                    Some(ToolFigure {
                        stat: figure.stat,
                        name: figure.name.to_owned(),
                        value: run.source.aggregate(figure.name)?,
                    })
                })
                .collect(),
        })
        .collect()
}

/// Why a conversion leaves `headline` null: the count it needs is not the server's.
fn reason(source: &ForeignSource, headline: Headline) -> String {
    let (quantity, kept_as) = match headline {
        Headline::Metric(MetricKind::Prefill) => (Quantity::PromptTokens, "tool_prompt_tokens"),
        Headline::Metric(MetricKind::Tpot | MetricKind::Decode) | Headline::Throughput => {
            (Quantity::OutputTokens, "tool_output_tokens")
        }
        Headline::Metric(_) => {
            return format!("the converted rows do not give {}", headline.name());
        }
    };
    let counted = match source.definition(quantity) {
        Some(definition) if !definition.tool_term.is_empty() => {
            format!("{} ({})", definition.tool_term, definition.meaning)
        }
        _ => format!("{}'s own", source.tool.name()),
    };
    format!(
        "strobe computes {} only from {} ({}); this file's {} are {counted}, so the converted \
         rows keep them as `{kept_as}` and leave it null",
        headline.name(),
        quantity.strobe_meaning(),
        quantity.label(),
        quantity.label(),
    )
}

/// `source.unavailable` of a converted file.
pub(crate) fn to_json(unavailable: &[Unavailable]) -> Value {
    Value::Array(
        unavailable
            .iter()
            .map(|entry| {
                let figures: Map<String, Value> = entry
                    .tool_figures
                    .iter()
                    .map(|figure| {
                        (
                            stat_key(figure.stat).to_owned(),
                            json!({"name": figure.name, "value": figure.value}),
                        )
                    })
                    .collect();
                json!({
                    "metric": entry.headline.id(),
                    "reason": entry.reason,
                    "tool_figures": figures,
                })
            })
            .collect(),
    )
}

/// `source.unavailable` read back from a file, as data: entries of unknown metrics, figures
/// that are not finite numbers and repeated metrics are left out; text is capped.
pub(crate) fn from_json(value: Option<&Value>) -> Vec<Unavailable> {
    let mut read: Vec<Unavailable> = Vec::new();
    for entry in value.and_then(Value::as_array).into_iter().flatten() {
        let Some(headline) = entry
            .get("metric")
            .and_then(Value::as_str)
            .and_then(Headline::of_id)
        else {
            continue;
        };
        if read.iter().any(|known| known.headline == headline) {
            continue;
        }
        let figures = entry.get("tool_figures").and_then(Value::as_object);
        let stats = [None]
            .into_iter()
            .chain(MetricStat::ALL.into_iter().map(Some));
        let tool_figures = stats
            .filter_map(|stat| {
                let figure = figures?.get(stat_key(stat))?;
                Some(ToolFigure {
                    stat,
                    name: CappedText::new(figure.get("name")?.as_str()?).to_string(),
                    value: figure
                        .get("value")?
                        .as_f64()
                        .filter(|value| value.is_finite())?,
                })
            })
            .collect();
        read.push(Unavailable {
            headline,
            reason: entry
                .get("reason")
                .and_then(Value::as_str)
                .map_or_else(String::new, |reason| CappedText::new(reason).to_string()),
            tool_figures,
        });
    }
    read
}
