//! [`MetricKind`]: the request-level metrics strobe shows, with their labels, units, row
//! accessors and the `metrics` keys (and legacy fallbacks) they are read from; the key metrics of
//! a run ([`KeyMetrics`]).

use std::fmt;

use serde_json::{Map, Value};

use crate::core::read::opened::views::{finite_f64, RowView};

/// One of the six request-level metrics strobe charts and compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum MetricKind {
    /// Time to first output (reasoning or content), ms.
    Ttfo,
    /// Time to first content token, ms.
    Ttft,
    /// End-to-end request latency, ms.
    E2e,
    /// Mean time per output token after the first, ms.
    Tpot,
    /// Decode rate after the first token, tokens per second.
    Decode,
    /// Prompt tokens divided by TTFO, tokens per second.
    Prefill,
}

impl MetricKind {
    /// Every metric, in display order.
    pub const ALL: [MetricKind; 6] = [
        MetricKind::Ttfo,
        MetricKind::Ttft,
        MetricKind::E2e,
        MetricKind::Tpot,
        MetricKind::Decode,
        MetricKind::Prefill,
    ];

    /// Stable id for file names and element ids: `ttfo`, `ttft`, `e2e`, `tpot`, `decode`,
    /// `prefill`.
    pub fn id(self) -> &'static str {
        match self {
            MetricKind::Ttfo => "ttfo",
            MetricKind::Ttft => "ttft",
            MetricKind::E2e => "e2e",
            MetricKind::Tpot => "tpot",
            MetricKind::Decode => "decode",
            MetricKind::Prefill => "prefill",
        }
    }

    /// Short label for axes and tables, e.g. `TTFT`.
    pub fn short_label(self) -> &'static str {
        match self {
            MetricKind::Ttfo => "TTFO",
            MetricKind::Ttft => "TTFT",
            MetricKind::E2e => "E2E",
            MetricKind::Tpot => "TPOT",
            MetricKind::Decode => "Decode",
            MetricKind::Prefill => "Effective prefill",
        }
    }

    /// Full label for titles, e.g. `Time to first token (TTFT)`.
    pub fn label(self) -> &'static str {
        match self {
            MetricKind::Ttfo => "Time to first output (TTFO)",
            MetricKind::Ttft => "Time to first token (TTFT)",
            MetricKind::E2e => "End-to-end latency (E2E)",
            MetricKind::Tpot => "Time per output token (TPOT)",
            MetricKind::Decode => "Decode rate",
            MetricKind::Prefill => "Effective prefill rate",
        }
    }

    /// The unit of the values: `ms` or `tok/s`.
    pub fn unit(self) -> &'static str {
        match self {
            MetricKind::Ttfo | MetricKind::Ttft | MetricKind::E2e | MetricKind::Tpot => "ms",
            MetricKind::Decode | MetricKind::Prefill => "tok/s",
        }
    }

    /// True for rates (more is better), false for latencies (less is better).
    pub fn higher_is_better(self) -> bool {
        matches!(self, MetricKind::Decode | MetricKind::Prefill)
    }

    /// The value of this metric in one row, when the row has it and it is finite.
    pub fn of_row(self, row: &RowView) -> Option<f64> {
        let value = match self {
            MetricKind::Ttfo => row.ttfo_ms,
            MetricKind::Ttft => row.ttft_ms,
            MetricKind::E2e => row.e2e_ms,
            MetricKind::Tpot => row.tpot_ms,
            MetricKind::Decode => row.decode_tok_s,
            MetricKind::Prefill => row.prefill_tok_s,
        };
        value.filter(|value| value.is_finite())
    }

    /// The finite values of this metric over `rows`, in row order.
    pub fn values(self, rows: &[RowView]) -> Vec<f64> {
        rows.iter().filter_map(|row| self.of_row(row)).collect()
    }

    /// `(key prefix, unit suffix)` of the `metrics` families that hold this metric, preferred
    /// first. TPOT falls back to the legacy `mean_inter_token_latency_ms_*` keys of G3 files.
    pub fn metric_families(self) -> &'static [(&'static str, &'static str)] {
        match self {
            MetricKind::Ttfo => &[("time_to_first_output", "_ms")],
            MetricKind::Ttft => &[("ttft", "_ms")],
            MetricKind::E2e => &[("e2e", "_ms")],
            MetricKind::Tpot => &[
                ("tpot", "_ms"),
                ("mean_time_per_output_token", "_ms"),
                ("mean_inter_token_latency_ms", ""),
            ],
            MetricKind::Decode => &[("decode_tok_s", "")],
            MetricKind::Prefill => &[("effective_prefill_tok_s", "")],
        }
    }
}

impl fmt::Display for MetricKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.label())
    }
}

/// One summary statistic of a metric family in `metrics`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum MetricStat {
    /// Arithmetic mean (modern only).
    Mean,
    /// Median (every generation).
    P50,
    /// 95th percentile (every generation).
    P95,
    /// 99th percentile (modern only; descriptive below 100 samples).
    P99,
}

impl MetricStat {
    /// Every statistic, in display order.
    pub const ALL: [MetricStat; 4] = [
        MetricStat::P50,
        MetricStat::P95,
        MetricStat::P99,
        MetricStat::Mean,
    ];

    /// The stat's name inside a `metrics` key (`p50`, `mean`, …) and in tables.
    pub fn id(self) -> &'static str {
        match self {
            MetricStat::Mean => "mean",
            MetricStat::P50 => "p50",
            MetricStat::P95 => "p95",
            MetricStat::P99 => "p99",
        }
    }
}

/// What `metrics` says about one [`MetricKind`]. G1/G2 files carry p50/p95 only.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct MetricSummary {
    /// Median.
    pub p50: Option<f64>,
    /// 95th percentile.
    pub p95: Option<f64>,
    /// 99th percentile, when present.
    pub p99: Option<f64>,
    /// Mean, when present.
    pub mean: Option<f64>,
    /// `{prefix}_samples`, when present.
    pub samples: Option<u64>,
    /// The key prefix the values were read from (e.g. `mean_inter_token_latency_ms` for a G3
    /// TPOT), or `None` when the file has none of them.
    pub source_prefix: Option<&'static str>,
}

impl MetricSummary {
    /// One statistic.
    pub fn stat(&self, stat: MetricStat) -> Option<f64> {
        match stat {
            MetricStat::Mean => self.mean,
            MetricStat::P50 => self.p50,
            MetricStat::P95 => self.p95,
            MetricStat::P99 => self.p99,
        }
    }

    /// True when no statistic is present.
    pub fn is_empty(&self) -> bool {
        self.p50.is_none() && self.p95.is_none() && self.p99.is_none() && self.mean.is_none()
    }
}

/// How TTFO, TTFT and E2E are counted: as measured, or from the wire (see
/// [`basis`](crate::core::read::opened::basis)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum TimeBasis {
    /// From just before `fetch()`: the artifact's standard fields.
    #[default]
    Measured,
    /// From the request leaving the browser (Resource Timing `requestStart`).
    FromWire,
}

impl TimeBasis {
    /// Both, in the order the switch shows them.
    pub const ALL: [TimeBasis; 2] = [TimeBasis::Measured, TimeBasis::FromWire];

    /// The form and query value: `measured` or `from_wire`.
    pub fn id(self) -> &'static str {
        match self {
            TimeBasis::Measured => "measured",
            TimeBasis::FromWire => "from_wire",
        }
    }

    /// The basis named `id`, if any.
    pub fn named(id: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|basis| basis.id() == id)
    }

    /// What the page calls it.
    pub fn label(self) -> &'static str {
        match self {
            TimeBasis::Measured => "as measured",
            TimeBasis::FromWire => "from the wire",
        }
    }
}

impl fmt::Display for TimeBasis {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.label())
    }
}

/// The headline numbers of a run as its `metrics` object states them.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct KeyMetrics {
    /// TTFO summary.
    pub ttfo: MetricSummary,
    /// TTFT summary.
    pub ttft: MetricSummary,
    /// E2E summary.
    pub e2e: MetricSummary,
    /// TPOT summary (with the legacy key fallback).
    pub tpot: MetricSummary,
    /// Decode rate summary.
    pub decode: MetricSummary,
    /// Effective prefill rate summary.
    pub prefill: MetricSummary,
    /// `throughput_tok_s`: output tokens per wall-clock second (null when any request failed).
    pub throughput_tok_s: Option<f64>,
    /// `prefix_cache_hit_avg`: mean cached fraction of the prompt.
    pub prefix_cache_hit_avg: Option<f64>,
    /// `output_tokens`: total output tokens of the successful requests.
    pub output_tokens: Option<u64>,
}

impl KeyMetrics {
    /// The summary of one metric.
    pub fn get(&self, kind: MetricKind) -> &MetricSummary {
        match kind {
            MetricKind::Ttfo => &self.ttfo,
            MetricKind::Ttft => &self.ttft,
            MetricKind::E2e => &self.e2e,
            MetricKind::Tpot => &self.tpot,
            MetricKind::Decode => &self.decode,
            MetricKind::Prefill => &self.prefill,
        }
    }

    fn get_mut(&mut self, kind: MetricKind) -> &mut MetricSummary {
        match kind {
            MetricKind::Ttfo => &mut self.ttfo,
            MetricKind::Ttft => &mut self.ttft,
            MetricKind::E2e => &mut self.e2e,
            MetricKind::Tpot => &mut self.tpot,
            MetricKind::Decode => &mut self.decode,
            MetricKind::Prefill => &mut self.prefill,
        }
    }

    /// Reads a `client.from_wire` block's statistics (the `metrics` keys of its families), or
    /// `None` when it holds no TTFT or E2E statistic (timing was withheld).
    pub fn of_from_wire(block: &Map<String, Value>) -> Option<Self> {
        Some(Self::from_metrics(block))
            .filter(|metrics| !metrics.ttft.is_empty() || !metrics.e2e.is_empty())
    }

    /// Reads the summaries from a `metrics` object, taking each statistic from the first
    /// family (see [`MetricKind::metric_families`]) that holds a finite number for it.
    pub fn from_metrics(metrics: &Map<String, Value>) -> Self {
        let mut key_metrics = KeyMetrics {
            throughput_tok_s: finite_f64(metrics.get("throughput_tok_s")),
            prefix_cache_hit_avg: finite_f64(metrics.get("prefix_cache_hit_avg")),
            output_tokens: metrics.get("output_tokens").and_then(Value::as_u64),
            ..KeyMetrics::default()
        };
        for kind in MetricKind::ALL {
            let summary = key_metrics.get_mut(kind);
            for &(prefix, suffix) in kind.metric_families() {
                let stat_of = |stat: MetricStat| {
                    finite_f64(metrics.get(&format!("{prefix}_{}{suffix}", stat.id())))
                };
                let found = MetricSummary {
                    p50: stat_of(MetricStat::P50),
                    p95: stat_of(MetricStat::P95),
                    p99: stat_of(MetricStat::P99),
                    mean: stat_of(MetricStat::Mean),
                    samples: metrics
                        .get(&format!("{prefix}_samples"))
                        .and_then(Value::as_u64),
                    source_prefix: Some(prefix),
                };
                if !found.is_empty() {
                    *summary = found;
                    break;
                }
                if summary.samples.is_none() {
                    summary.samples = found.samples;
                }
            }
        }
        key_metrics
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn key_metrics_prefer_the_modern_tpot_keys_and_fall_back_to_the_legacy_ones() {
        let modern = json!({
            "tpot_p50_ms": 4.5,
            "tpot_samples": 6,
            "mean_inter_token_latency_ms_p50": 9.0,
        });
        let metrics = KeyMetrics::from_metrics(modern.as_object().expect("object"));
        assert_eq!(metrics.tpot.p50, Some(4.5));
        assert_eq!(metrics.tpot.samples, Some(6));
        assert_eq!(metrics.tpot.source_prefix, Some("tpot"));

        let legacy = json!({
            "mean_inter_token_latency_ms_p50": 9.0,
            "mean_inter_token_latency_ms_p95": 12.0,
            "ttft_p50_ms": null,
            "throughput_tok_s": true,
        });
        let metrics = KeyMetrics::from_metrics(legacy.as_object().expect("object"));
        assert_eq!(metrics.tpot.p95, Some(12.0));
        assert_eq!(
            metrics.tpot.source_prefix,
            Some("mean_inter_token_latency_ms")
        );
        assert!(metrics.ttft.is_empty());
        assert_eq!(metrics.ttft.source_prefix, None);
        assert_eq!(metrics.throughput_tok_s, None, "a bool is not a number");
    }

    #[test]
    fn metric_kinds_read_their_row_field() {
        let row = RowView {
            ttfo_ms: Some(1.0),
            ttft_ms: Some(2.0),
            e2e_ms: Some(3.0),
            tpot_ms: Some(4.0),
            decode_tok_s: Some(5.0),
            prefill_tok_s: Some(6.0),
            ..RowView::default()
        };
        let values: Vec<Option<f64>> = MetricKind::ALL
            .iter()
            .map(|kind| kind.of_row(&row))
            .collect();
        assert_eq!(
            values,
            [
                Some(1.0),
                Some(2.0),
                Some(3.0),
                Some(4.0),
                Some(5.0),
                Some(6.0)
            ]
        );
        let units: Vec<&str> = MetricKind::ALL.iter().map(|kind| kind.unit()).collect();
        assert_eq!(units, ["ms", "ms", "ms", "ms", "tok/s", "tok/s"]);
        assert_eq!(RowView::default().ttfo_or_ttft_ms(), None);
        let without_ttfo = RowView {
            ttft_ms: Some(2.0),
            ..RowView::default()
        };
        assert_eq!(without_ttfo.ttfo_or_ttft_ms(), Some(2.0));
    }
}
