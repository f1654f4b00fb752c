//! A page's charts as named options, the sections the results page groups them into by the
//! question they answer (docs/guide/results.md, *Charts*), and the metric switch of the latency
//! section.

use serde_json::Value;

use crate::core::read::opened::metrics::MetricKind;

/// One chart for a page: a stable id (for element ids and PNG names), its title, the section
/// it belongs to and the metric it shows (if one), and its option.
#[derive(Debug, Clone, PartialEq)]
pub struct NamedChart {
    /// Stable id, e.g. `cdf-ttft`, `timeline`.
    pub id: String,
    /// The chart's title as shown on it.
    pub title: String,
    /// The question it answers on the page.
    pub section: ChartSection,
    /// The metric it is of, when the section switches between metrics.
    pub metric: Option<MetricKind>,
    /// The ECharts option.
    pub option: Value,
}

/// A group of charts answering one question, in the order the page shows them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ChartSection {
    /// How long requests took: one metric's histogram and CDF at a time.
    Latency,
    /// What happened when: the request timeline, throughput and requests in flight.
    OverTheRun,
    /// How context size and the prefix cache shaped the time to first output.
    PromptAndCache,
    /// How smoothly tokens arrived: gaps between stream reads and the longest stalls.
    Streams,
    /// The p50/p95 bars of runs whose files keep only percentiles (and of a comparison).
    Percentiles,
}

impl ChartSection {
    /// Every section, in page order.
    pub const ALL: [ChartSection; 5] = [
        ChartSection::Latency,
        ChartSection::OverTheRun,
        ChartSection::PromptAndCache,
        ChartSection::Streams,
        ChartSection::Percentiles,
    ];

    /// Stable id for element ids and test ids, e.g. `over-the-run`.
    pub fn id(self) -> &'static str {
        match self {
            ChartSection::Latency => "latency",
            ChartSection::OverTheRun => "over-the-run",
            ChartSection::PromptAndCache => "prompt-and-cache",
            ChartSection::Streams => "streams",
            ChartSection::Percentiles => "percentiles",
        }
    }

    /// The section's heading.
    pub fn title(self) -> &'static str {
        match self {
            ChartSection::Latency => "Latency",
            ChartSection::OverTheRun => "Over the run",
            ChartSection::PromptAndCache => "Prompt and cache",
            ChartSection::Streams => "Streams",
            ChartSection::Percentiles => "Percentiles",
        }
    }

    /// The question the section answers, one line under its heading.
    pub fn question(self) -> &'static str {
        match self {
            ChartSection::Latency => "How long did requests take? One metric at a time.",
            ChartSection::OverTheRun => "What happened when: requests, throughput, load.",
            ChartSection::PromptAndCache => "How context size and cache hits shaped the wait.",
            ChartSection::Streams => "How smoothly did tokens arrive?",
            ChartSection::Percentiles => "p50 and p95 of each metric, from the files' summaries.",
        }
    }

    /// Whether its charts span the full width (time axes and two-panel charts need it).
    pub fn wide(self) -> bool {
        matches!(
            self,
            ChartSection::OverTheRun | ChartSection::PromptAndCache | ChartSection::Percentiles
        )
    }
}

/// One section of a page's charts: which charts (positions in the chart list) it holds, and
/// for a section with a metric switch, the metrics it can show.
#[derive(Debug, Clone, PartialEq)]
pub struct ChartGroup {
    /// The section.
    pub section: ChartSection,
    /// Its charts, in list order: position in the list given to [`group_charts`] and metric.
    pub charts: Vec<(usize, Option<MetricKind>)>,
    /// The metrics its charts are of, in list order without repeats; empty when its charts
    /// are of no single metric (no switch is shown).
    pub metrics: Vec<MetricKind>,
}

impl ChartGroup {
    /// The metric shown first: TTFT when the section has it, else its first metric.
    pub fn default_metric(&self) -> Option<MetricKind> {
        self.metrics
            .iter()
            .copied()
            .find(|metric| *metric == MetricKind::Ttft)
            .or_else(|| self.metrics.first().copied())
    }

    /// The metric shown when `chosen` is asked for: it, when the section has it, else the
    /// default (`None` for a section of no metric).
    pub fn shown_metric(&self, chosen: Option<MetricKind>) -> Option<MetricKind> {
        chosen
            .filter(|metric| self.metrics.contains(metric))
            .or_else(|| self.default_metric())
    }

    /// The positions to draw when `chosen` is asked for: the charts of the metric shown and
    /// those of no metric.
    pub fn positions_for(&self, chosen: Option<MetricKind>) -> Vec<usize> {
        let shown = self.shown_metric(chosen);
        self.charts
            .iter()
            .filter(|(_, metric)| metric.is_none() || *metric == shown)
            .map(|(position, _)| *position)
            .collect()
    }
}

/// The sections of `charts` that hold any chart, in page order.
pub fn group_charts(charts: &[NamedChart]) -> Vec<ChartGroup> {
    ChartSection::ALL
        .into_iter()
        .filter_map(|section| {
            let members: Vec<(usize, Option<MetricKind>)> = charts
                .iter()
                .enumerate()
                .filter(|(_, chart)| chart.section == section)
                .map(|(position, chart)| (position, chart.metric))
                .collect();
            if members.is_empty() {
                return None;
            }
            let mut metrics = Vec::new();
            for metric in members.iter().filter_map(|(_, metric)| *metric) {
                if !metrics.contains(&metric) {
                    metrics.push(metric);
                }
            }
            Some(ChartGroup {
                section,
                charts: members,
                metrics,
            })
        })
        .collect()
}
