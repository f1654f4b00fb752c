//! The server's numbers beside the client's for the same run (docs/guide/telemetry.md, *Beside the
//! client*): TTFT and E2E means and medians with their gaps (client − server is what the
//! network and the client add), and the tokens the rows' usage reports beside the server's
//! counters.
//!
//! The client's side is read from the artifact's own metrics and rows, so the comparison is
//! of one file with itself.

use serde_json::{Map, Value};

use crate::core::schema::rows::RequestTiming;
use crate::core::schema::server_metrics::{
    BesideClient, LatencyBeside, ServerMetricsBlock, ServerMetricsSummary, TokensBeside,
};
use crate::core::telemetry::engines::CommonSeries;

/// What the client measured, from an artifact's metrics and rows.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ClientFigures {
    /// `ttft_mean_ms` and `ttft_p50_ms`.
    pub ttft_mean_ms: Option<f64>,
    /// The median TTFT.
    pub ttft_p50_ms: Option<f64>,
    /// `e2e_mean_ms`.
    pub e2e_mean_ms: Option<f64>,
    /// `e2e_p50_ms`.
    pub e2e_p50_ms: Option<f64>,
    /// The rows' prompt tokens summed; `None` when a row has none.
    pub prompt_tokens: Option<u64>,
    /// The rows' output tokens summed; `None` when a row has none.
    pub completion_tokens: Option<u64>,
}

impl ClientFigures {
    /// The figures of an artifact: its `metrics` map (ARTIFACT.md §7) and its rows.
    pub fn of_artifact(metrics: &Map<String, Value>, rows: &[RequestTiming]) -> Self {
        let metric = |key: &str| metrics.get(key).and_then(Value::as_f64);
        let sum = |field: fn(&RequestTiming) -> Option<u64>| {
            rows.iter()
                .map(field)
                .try_fold(0u64, |total, tokens| total.checked_add(tokens?))
        };
        Self {
            ttft_mean_ms: metric("ttft_mean_ms"),
            ttft_p50_ms: metric("ttft_p50_ms"),
            e2e_mean_ms: metric("e2e_mean_ms"),
            e2e_p50_ms: metric("e2e_p50_ms"),
            prompt_tokens: sum(|row| row.prompt_tokens),
            completion_tokens: sum(|row| row.output_tokens),
        }
    }
}

/// Sets a run's `server_metrics` summary beside the client's figures of the same artifact
/// (its `metrics` and rows), in `summary.beside_client`; a block without a summary stays as it
/// is.
pub fn attach_beside_client(
    block: &mut ServerMetricsBlock,
    metrics: &Map<String, Value>,
    rows: &[RequestTiming],
) {
    if let Some(summary) = block.summary.as_mut() {
        let beside = beside_client(summary, &ClientFigures::of_artifact(metrics, rows));
        summary.beside_client = Some(beside);
    }
}

/// The server's summary beside the client's figures.
pub fn beside_client(summary: &ServerMetricsSummary, client: &ClientFigures) -> BesideClient {
    let latency = |series: CommonSeries, client_mean: Option<f64>, client_p50: Option<f64>| {
        let server = summary.histograms.get(series.key());
        let server_mean_ms = server.and_then(|histogram| histogram.mean_ms);
        let server_p50_ms = server.and_then(|histogram| histogram.p50_ms);
        let gap = |client: Option<f64>, server: Option<f64>| Some(client? - server?);
        LatencyBeside {
            client_mean_ms: client_mean,
            server_mean_ms,
            mean_gap_ms: gap(client_mean, server_mean_ms),
            client_p50_ms: client_p50,
            server_p50_ms,
            p50_gap_ms: gap(client_p50, server_p50_ms),
        }
    };
    let counted = |series: CommonSeries| summary.counters.get(series.key()).map(|c| c.delta);
    BesideClient {
        ttft: latency(CommonSeries::Ttft, client.ttft_mean_ms, client.ttft_p50_ms),
        e2e: latency(CommonSeries::E2e, client.e2e_mean_ms, client.e2e_p50_ms),
        prompt_tokens: TokensBeside {
            client: client.prompt_tokens,
            server: counted(CommonSeries::PromptTokens),
        },
        generation_tokens: TokensBeside {
            client: client.completion_tokens,
            server: counted(CommonSeries::GenerationTokens),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::schema::server_metrics::{CounterSummary, HistogramSummary};

    fn summary() -> ServerMetricsSummary {
        let mut summary = ServerMetricsSummary::default();
        summary.histograms.insert(
            "ttft".to_owned(),
            HistogramSummary {
                count: 24.0,
                mean_ms: Some(40.0),
                p50_ms: Some(37.5),
                p90_ms: None,
                p95_ms: None,
                p99_ms: None,
            },
        );
        summary.counters.insert(
            "prompt_tokens".to_owned(),
            CounterSummary {
                delta: 24_000.0,
                rate_per_s: Some(2_400.0),
                resets: 0,
            },
        );
        summary
    }

    #[test]
    fn gaps_are_client_minus_server_where_both_exist() {
        let client = ClientFigures {
            ttft_mean_ms: Some(41.9),
            ttft_p50_ms: Some(39.0),
            e2e_mean_ms: Some(900.0),
            e2e_p50_ms: None,
            prompt_tokens: Some(24_000),
            completion_tokens: Some(3_072),
        };
        let beside = beside_client(&summary(), &client);
        assert!((beside.ttft.mean_gap_ms.expect("both means") - 1.9).abs() < 1e-9);
        assert_eq!(beside.ttft.p50_gap_ms, Some(1.5));
        // The server has no E2E histogram here: the client's stands alone.
        assert_eq!(beside.e2e.client_mean_ms, Some(900.0));
        assert_eq!(
            (beside.e2e.server_mean_ms, beside.e2e.mean_gap_ms),
            (None, None)
        );
        assert_eq!(
            (beside.prompt_tokens.client, beside.prompt_tokens.server),
            (Some(24_000), Some(24_000.0))
        );
        assert_eq!(
            (
                beside.generation_tokens.client,
                beside.generation_tokens.server
            ),
            (Some(3_072), None)
        );
    }

    #[test]
    fn the_client_side_is_read_from_the_reference_artifact() {
        let text = include_str!("../../../tests/fixtures/reference-artifact.json");
        let artifact: crate::core::schema::ArtifactV1 =
            serde_json::from_str(text).expect("the reference artifact");
        let figures = ClientFigures::of_artifact(&artifact.metrics, &artifact.request_timings);
        assert_eq!(
            figures.ttft_p50_ms,
            artifact.metrics["ttft_p50_ms"].as_f64(),
            "the file's own median"
        );
        assert!(figures.e2e_mean_ms.is_some());
        // The reference run's six rows all carry usage.
        assert_eq!(figures.prompt_tokens, Some(373_981));
        assert_eq!(figures.completion_tokens, Some(2_283));
        // A row without usage leaves the sum unknown rather than short.
        let mut rows = artifact.request_timings.clone();
        if let Some(row) = rows.first_mut() {
            row.output_tokens = None;
        }
        let partial = ClientFigures::of_artifact(&Map::new(), &rows);
        assert_eq!(
            (partial.completion_tokens, partial.ttft_p50_ms),
            (None, None)
        );
        let empty = ClientFigures::of_artifact(&Map::new(), &[]);
        assert_eq!(empty.prompt_tokens, Some(0));
    }

    #[test]
    fn a_blocks_summary_is_set_beside_its_own_artifact() {
        let text = include_str!("../../../tests/fixtures/reference-artifact.json");
        let artifact: crate::core::schema::ArtifactV1 =
            serde_json::from_str(text).expect("the reference artifact");
        let mut block = ServerMetricsBlock {
            source: "http://127.0.0.1:8000/metrics".to_owned(),
            interval_ms: 1_000,
            family: "vllm".to_owned(),
            samples: Vec::new(),
            summary: Some(summary()),
            notes: Vec::new(),
        };
        attach_beside_client(&mut block, &artifact.metrics, &artifact.request_timings);
        let beside = block.summary.and_then(|summary| summary.beside_client);
        let client_p50 = artifact.metrics["ttft_p50_ms"].as_f64().expect("a median");
        assert_eq!(
            beside.map(|beside| beside.ttft.p50_gap_ms),
            Some(Some(client_p50 - 37.5))
        );
        // Without a summary there is nothing to set beside.
        let mut bare = ServerMetricsBlock {
            source: "http://127.0.0.1:8000/metrics".to_owned(),
            interval_ms: 1_000,
            family: "vllm".to_owned(),
            samples: Vec::new(),
            summary: None,
            notes: Vec::new(),
        };
        attach_beside_client(&mut bare, &artifact.metrics, &artifact.request_timings);
        assert_eq!(bare.summary, None);
    }
}
