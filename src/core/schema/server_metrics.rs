//! The `server_metrics` block strobe adds to the artifact of a run that scraped the server's
//! own `/metrics` (docs/guide/telemetry.md, *The `server_metrics` block*): where from and how
//! often, which engine's names, every sample on the run's clock, and a summary of the common series
//! over the measured window. Every v1 reader that does not know the key ignores it; a run
//! without scraping has no block.
//!
//! Maps are keyed by strings, not enums, so a file naming a series a later strobe added still
//! reads.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

pub use crate::core::config::metrics::INTERVAL_MS;

/// The `server_metrics` block.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ServerMetricsBlock {
    /// The URL scraped, never with credentials (no `user:password@`, no key in the query).
    pub source: String,
    /// The interval asked for between scrapes, ms ([`INTERVAL_MS`]).
    pub interval_ms: u64,
    /// Whose names the answers used: `vllm`, `sglang`, `llamacpp`, `tgi` or `unknown`.
    pub family: String,
    /// Every answered scrape, oldest first.
    pub samples: Vec<ServerMetricsSample>,
    /// The common series over the measured window; absent when too few samples were answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<ServerMetricsSummary>,
    /// What went wrong on the way (scrapes refused or unreadable, text worked around), in words.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// One answered scrape.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ServerMetricsSample {
    /// When the scrape was sent, on the run's clock (the rows' `started_at_ms`), ms.
    pub t_ms: f64,
    /// From sending the scrape to the end of its answer, ms.
    pub latency_ms: f64,
    /// Each metric name's value summed over its label sets; a histogram as its `_sum`,
    /// `_count` and `_bucket{le="…"}` keys.
    pub values: BTreeMap<String, f64>,
}

/// The common series over the measured window.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ServerMetricsSummary {
    /// The window's start on the run's clock, ms.
    pub window_start_ms: f64,
    /// The window's end on the run's clock, ms.
    pub window_end_ms: f64,
    /// The sample the counters and histograms count from: the last at or before the start.
    pub from_t_ms: Option<f64>,
    /// The sample they count to: the first at or after the end.
    pub to_t_ms: Option<f64>,
    /// Levels by common series (`running`, `waiting`, `kv_cache_use`, …), over the samples
    /// inside the window.
    pub gauges: BTreeMap<String, GaugeSummary>,
    /// Running totals by common series (`prompt_tokens`, `preemptions`, …).
    pub counters: BTreeMap<String, CounterSummary>,
    /// Prefix-cache hits over queries in the window (from the counters), or the mean of the
    /// engine's own hit-rate gauge; 0 to 1.
    pub prefix_cache_hit_rate: Option<f64>,
    /// The server's distributions by common series (`ttft`, `e2e`, `queue_time`), in ms.
    pub histograms: BTreeMap<String, HistogramSummary>,
    /// The server's TTFT, E2E and token counts beside the client's; absent when not compared.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub beside_client: Option<BesideClient>,
}

/// The server's numbers beside the client's, for the same run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct BesideClient {
    /// Time to first token: client − server is what the network and the client add.
    pub ttft: LatencyBeside,
    /// End to end.
    pub e2e: LatencyBeside,
    /// Prompt tokens: the rows' usage beside the server's counter.
    pub prompt_tokens: TokensBeside,
    /// Tokens out: the rows' completion tokens beside the server's generation counter.
    pub generation_tokens: TokensBeside,
}

/// One latency as the client and the server saw it, ms; a gap is client − server.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LatencyBeside {
    /// The client's mean over the rows.
    pub client_mean_ms: Option<f64>,
    /// The server histogram's exact mean (its sum over its count).
    pub server_mean_ms: Option<f64>,
    /// `client_mean_ms − server_mean_ms`.
    pub mean_gap_ms: Option<f64>,
    /// The client's median over the rows.
    pub client_p50_ms: Option<f64>,
    /// The server's median, interpolated inside its buckets: only as fine as they are.
    pub server_p50_ms: Option<f64>,
    /// `client_p50_ms − server_p50_ms`.
    pub p50_gap_ms: Option<f64>,
}

/// One token count as the client and the server counted it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TokensBeside {
    /// The sum over the rows' usage; null when a row has none.
    pub client: Option<u64>,
    /// The server counter's growth over the window.
    pub server: Option<f64>,
}

/// A gauge over the window.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GaugeSummary {
    /// The lowest sample.
    pub min: f64,
    /// The samples' mean.
    pub mean: f64,
    /// The highest sample.
    pub max: f64,
    /// Samples inside the window.
    pub samples: u64,
}

/// A counter over the window.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CounterSummary {
    /// How much it grew, a restart of the server counted as growth from zero.
    pub delta: f64,
    /// `delta` per second between the two samples counted between; null over no time.
    pub rate_per_s: Option<f64>,
    /// Times it went down (the server restarted).
    pub resets: u64,
}

/// A histogram over the window: the observations made between the two samples.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HistogramSummary {
    /// Observations in the window.
    pub count: f64,
    /// Their mean, ms; null without observations.
    pub mean_ms: Option<f64>,
    /// Quantiles, ms, interpolated linearly inside the bucket the rank falls in (as
    /// Prometheus's `histogram_quantile`); null without observations.
    pub p50_ms: Option<f64>,
    /// The 90th percentile, ms.
    pub p90_ms: Option<f64>,
    /// The 95th percentile, ms.
    pub p95_ms: Option<f64>,
    /// The 99th percentile, ms.
    pub p99_ms: Option<f64>,
}

impl ServerMetricsBlock {
    /// The first NaN or infinity in the block, named by its place
    /// (`server_metrics.samples[3].t_ms`), so the writer can refuse it instead of writing
    /// null. Only the offender's name is built: a long run holds many numbers.
    pub(crate) fn first_non_finite(&self) -> Option<(String, f64)> {
        for (index, sample) in self.samples.iter().enumerate() {
            let place = || format!("server_metrics.samples[{index}]");
            for (field, value) in [("t_ms", sample.t_ms), ("latency_ms", sample.latency_ms)] {
                if !value.is_finite() {
                    return Some((format!("{}.{field}", place()), value));
                }
            }
            if let Some((name, value)) = sample.values.iter().find(|(_, value)| !value.is_finite())
            {
                return Some((format!("{}.values[{name:?}]", place()), *value));
            }
        }
        self.summary
            .as_ref()?
            .floats()
            .into_iter()
            .find(|(_, value)| !value.is_finite())
    }
}

impl ServerMetricsSummary {
    fn floats(&self) -> Vec<(String, f64)> {
        let place = "server_metrics.summary";
        let mut floats = vec![
            (format!("{place}.window_start_ms"), self.window_start_ms),
            (format!("{place}.window_end_ms"), self.window_end_ms),
        ];
        let mut optional = vec![
            ("from_t_ms".to_owned(), self.from_t_ms),
            ("to_t_ms".to_owned(), self.to_t_ms),
            (
                "prefix_cache_hit_rate".to_owned(),
                self.prefix_cache_hit_rate,
            ),
        ];
        for (key, gauge) in &self.gauges {
            floats.push((format!("{place}.gauges.{key}.min"), gauge.min));
            floats.push((format!("{place}.gauges.{key}.mean"), gauge.mean));
            floats.push((format!("{place}.gauges.{key}.max"), gauge.max));
        }
        for (key, counter) in &self.counters {
            floats.push((format!("{place}.counters.{key}.delta"), counter.delta));
            optional.push((format!("counters.{key}.rate_per_s"), counter.rate_per_s));
        }
        for (key, histogram) in &self.histograms {
            floats.push((format!("{place}.histograms.{key}.count"), histogram.count));
            for (field, value) in [
                ("mean_ms", histogram.mean_ms),
                ("p50_ms", histogram.p50_ms),
                ("p90_ms", histogram.p90_ms),
                ("p95_ms", histogram.p95_ms),
                ("p99_ms", histogram.p99_ms),
            ] {
                optional.push((format!("histograms.{key}.{field}"), value));
            }
        }
        if let Some(beside) = &self.beside_client {
            for (key, latency) in [("ttft", &beside.ttft), ("e2e", &beside.e2e)] {
                for (field, value) in [
                    ("client_mean_ms", latency.client_mean_ms),
                    ("server_mean_ms", latency.server_mean_ms),
                    ("mean_gap_ms", latency.mean_gap_ms),
                    ("client_p50_ms", latency.client_p50_ms),
                    ("server_p50_ms", latency.server_p50_ms),
                    ("p50_gap_ms", latency.p50_gap_ms),
                ] {
                    optional.push((format!("beside_client.{key}.{field}"), value));
                }
            }
            for (key, tokens) in [
                ("prompt_tokens", &beside.prompt_tokens),
                ("generation_tokens", &beside.generation_tokens),
            ] {
                optional.push((format!("beside_client.{key}.server"), tokens.server));
            }
        }
        floats.extend(
            optional
                .into_iter()
                .filter_map(|(key, value)| value.map(|value| (format!("{place}.{key}"), value))),
        );
        floats
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block() -> ServerMetricsBlock {
        ServerMetricsBlock {
            source: "http://h/metrics".to_owned(),
            interval_ms: 1000,
            family: "vllm".to_owned(),
            samples: vec![ServerMetricsSample {
                t_ms: 0.0,
                latency_ms: 1.0,
                values: [("a".to_owned(), 1.0), ("b".to_owned(), 2.0)]
                    .into_iter()
                    .collect(),
            }],
            summary: Some(ServerMetricsSummary::default()),
            notes: Vec::new(),
        }
    }

    #[test]
    fn the_first_non_finite_number_is_named_by_its_place() {
        assert_eq!(block().first_non_finite(), None);
        let mut value = block();
        value.samples[0]
            .values
            .insert("b".to_owned(), f64::INFINITY);
        assert_eq!(
            value.first_non_finite(),
            Some((
                "server_metrics.samples[0].values[\"b\"]".to_owned(),
                f64::INFINITY
            ))
        );
        let mut summary = block();
        if let Some(summary) = summary.summary.as_mut() {
            summary.gauges.insert(
                "running".to_owned(),
                GaugeSummary {
                    min: 0.0,
                    mean: f64::NAN,
                    max: 1.0,
                    samples: 2,
                },
            );
        }
        let (place, _) = summary.first_non_finite().expect("the NaN");
        assert_eq!(place, "server_metrics.summary.gauges.running.mean");
        let mut rate = block();
        if let Some(summary) = rate.summary.as_mut() {
            summary.prefix_cache_hit_rate = Some(f64::NEG_INFINITY);
        }
        let (place, _) = rate.first_non_finite().expect("the infinity");
        assert_eq!(place, "server_metrics.summary.prefix_cache_hit_rate");
    }
}
