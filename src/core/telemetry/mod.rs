//! The server's own view of a run: its `/metrics` answers read, named and summarized
//! (docs/guide/telemetry.md). Pure, like the rest of the core: the page scrapes, stamps each answer
//! with the run's clock and hands the bytes here.
//!
//! In pipeline order:
//! - [`exposition`]: Prometheus text (0.0.4; OpenMetrics tolerated) to one flat map of names
//!   to values summed over label sets, hostile text bounded and noted, never a panic;
//! - [`engines`]: which engine's names an answer uses, and where vLLM, SGLang, llama.cpp and
//!   TGI keep the common series (running, waiting, KV-cache use, prefix-cache hits, tokens, …);
//! - [`summary`]: those series over the measured window, counters' restarts handled, and
//!   histograms' means and quantiles;
//! - [`beside`]: the server's TTFT, E2E and token counts beside the client's;
//! - [`scrape`]: the scrape schedule as a state machine (baseline, interval, final scrape, one
//!   at a time, giving up on a server without metrics) that ends in the `server_metrics` block;
//! - [`reset`]: a prefix-cache reset's answer judged, the cache's series around it, and the
//!   `prefix_cache_reset` block with what the run's first requests say of it.
//!
//! The artifact's `server_metrics` block that carries the samples and the summary is
//! [`server_metrics`](crate::core::schema::server_metrics).

pub mod beside;
pub mod engines;
pub mod exposition;
pub mod reset;
pub mod scrape;
pub mod summary;

use crate::core::schema::server_metrics::ServerMetricsSample;
use crate::core::telemetry::exposition::{read_exposition, Exposition};

/// One scrape's answer read into a sample: sent at `t_ms` on the run's clock, answered in
/// `latency_ms`. The reading's notes come back beside it for the block's `notes`.
pub fn sample_from_answer(
    t_ms: f64,
    latency_ms: f64,
    body: &[u8],
) -> (ServerMetricsSample, Exposition) {
    let mut reading = read_exposition(body);
    let sample = ServerMetricsSample {
        t_ms,
        latency_ms,
        values: std::mem::take(&mut reading.values),
    };
    (sample, reading)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::telemetry::engines::Family;
    use crate::core::telemetry::summary::{summarize, Window};

    #[test]
    fn two_answers_become_samples_and_a_summary() {
        let before = b"vllm:num_requests_running 0\nvllm:prompt_tokens_total 100\n";
        let after = b"vllm:num_requests_running 6\nvllm:prompt_tokens_total 1100\nbad line\n";
        let (first, reading) = sample_from_answer(-20.0, 1.5, before);
        assert!(reading.notes.is_empty());
        let (second, reading) = sample_from_answer(980.0, 2.5, after);
        assert_eq!(reading.notes.len(), 1, "the broken line is noted");
        assert!(
            reading.values.is_empty(),
            "the values moved into the sample"
        );
        assert_eq!((second.t_ms, second.latency_ms), (980.0, 2.5));
        let family = Family::detect(second.values.keys().map(String::as_str));
        let window = Window {
            start_ms: 0.0,
            end_ms: 980.0,
        };
        let summary = summarize(&[first, second], family, window);
        assert_eq!(summary.gauges["running"].max, 6.0);
        assert_eq!(summary.counters["prompt_tokens"].delta, 1000.0);
        assert_eq!(summary.counters["prompt_tokens"].rate_per_s, Some(1000.0));
    }
}
