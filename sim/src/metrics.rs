//! The simulator's own `/metrics`, in vLLM's names, from its true state: the engine's running
//! and waiting requests, its prefix cache (which stands for its KV cache), and running totals
//! of prefix-cache lookups, prompt and generated tokens and a time-to-first-token histogram.
//!
//! Pure: [`ServerCounters`] is updated by the engine under its lock, a [`MetricsSnapshot`]
//! is read from it in one piece, and [`render_vllm`] writes the snapshot as Prometheus text
//! (format 0.0.4) the way vLLM's prometheus_client does: `_total` counters, `le` buckets with
//! `+Inf`, labels `engine` and `model_name`.

use serde::{Deserialize, Serialize};

/// The upper bounds of the TTFT histogram, seconds: vLLM's own bounds for this histogram.
pub const TTFT_BUCKETS_S: [f64; 22] = [
    0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0,
    20.0, 40.0, 80.0, 160.0, 640.0, 2560.0,
];

/// Observations of one histogram.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HistogramSnapshot {
    /// `(upper bound in seconds, observations ≤ bound)`, cumulative, without `+Inf`.
    pub buckets: Vec<(f64, u64)>,
    /// The sum of every observation, seconds.
    pub sum: f64,
    /// How many observations (the `+Inf` bucket).
    pub count: u64,
}

/// Running totals since the server started (or since they were last cleared: never, as in
/// vLLM, whose counters only reset with the process).
#[derive(Debug, Clone, PartialEq)]
pub struct ServerCounters {
    /// Prompt tokens looked up in the prefix cache.
    pub prefix_cache_queries: u64,
    /// Prompt tokens found there.
    pub prefix_cache_hits: u64,
    /// Prompt tokens prefilled (cached ones included, as vLLM counts them).
    pub prompt_tokens: u64,
    /// Reasoning and content tokens sent.
    pub generation_tokens: u64,
    /// Observations per bucket of [`TTFT_BUCKETS_S`] (not cumulative), then above the last.
    ttft_counts: [u64; TTFT_BUCKETS_S.len() + 1],
    ttft_sum_s: f64,
}

impl Default for ServerCounters {
    fn default() -> Self {
        Self {
            prefix_cache_queries: 0,
            prefix_cache_hits: 0,
            prompt_tokens: 0,
            generation_tokens: 0,
            ttft_counts: [0; TTFT_BUCKETS_S.len() + 1],
            ttft_sum_s: 0.0,
        }
    }
}

impl ServerCounters {
    /// A prefill was booked: `prompt_tokens`, of which `cached_tokens` hit the prefix cache.
    pub fn prefill_booked(&mut self, prompt_tokens: u32, cached_tokens: u32) {
        self.prefix_cache_queries += u64::from(prompt_tokens);
        self.prefix_cache_hits += u64::from(cached_tokens);
        self.prompt_tokens += u64::from(prompt_tokens);
    }

    /// A request ended having sent `generated` tokens; `ttft_s` is the time from its receipt
    /// to its first token, when one went out.
    pub fn request_ended(&mut self, generated: u32, ttft_s: Option<f64>) {
        self.generation_tokens += u64::from(generated);
        if let Some(ttft_s) = ttft_s.filter(|ttft| ttft.is_finite() && *ttft >= 0.0) {
            let bucket = TTFT_BUCKETS_S
                .iter()
                .position(|bound| ttft_s <= *bound)
                .unwrap_or(TTFT_BUCKETS_S.len());
            self.ttft_counts[bucket] += 1;
            self.ttft_sum_s += ttft_s;
        }
    }

    /// The TTFT histogram, cumulative as Prometheus writes it.
    pub fn ttft(&self) -> HistogramSnapshot {
        let mut seen = 0;
        let buckets = TTFT_BUCKETS_S
            .iter()
            .zip(self.ttft_counts)
            .map(|(bound, count)| {
                seen += count;
                (*bound, seen)
            })
            .collect();
        HistogramSnapshot {
            buckets,
            sum: self.ttft_sum_s,
            count: self.ttft_counts.iter().sum(),
        }
    }
}

/// Everything one `/metrics` answer says, read at one moment.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MetricsSnapshot {
    /// `vllm:num_requests_running`: sequences admitted.
    pub num_requests_running: usize,
    /// `vllm:num_requests_waiting`: requests in the admission queue.
    pub num_requests_waiting: usize,
    /// `vllm:kv_cache_usage_perc`: the prefix cache's blocks held over its capacity, 0 to 1.
    pub kv_cache_usage_perc: f64,
    /// `vllm:prefix_cache_queries_total`.
    pub prefix_cache_queries: u64,
    /// `vllm:prefix_cache_hits_total`.
    pub prefix_cache_hits: u64,
    /// `vllm:num_preemptions_total`: always 0, the simulator never preempts.
    pub num_preemptions: u64,
    /// `vllm:prompt_tokens_total`.
    pub prompt_tokens: u64,
    /// `vllm:generation_tokens_total`.
    pub generation_tokens: u64,
    /// `vllm:time_to_first_token_seconds`.
    pub time_to_first_token_seconds: HistogramSnapshot,
}

/// `0.5` as prometheus_client writes a float (`1.0`, not `1`).
fn float(value: f64) -> String {
    if value.fract() == 0.0 && value.abs() < 1e15 {
        format!("{value:.1}")
    } else {
        format!("{value}")
    }
}

/// A label value with `\`, `"` and newlines escaped.
fn label_value(text: &str) -> String {
    text.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// The snapshot as vLLM's `/metrics` text, labelled with `model_name`.
pub fn render_vllm(snapshot: &MetricsSnapshot, model_name: &str) -> String {
    let labels = format!("engine=\"0\",model_name=\"{}\"", label_value(model_name));
    let mut text = String::new();
    let mut family = |name: &str, kind: &str, help: &str, value: f64| {
        text.push_str(&format!(
            "# HELP {name} {help}\n# TYPE {name} {kind}\n{name}{{{labels}}} {}\n",
            float(value)
        ));
    };
    family(
        "vllm:num_requests_running",
        "gauge",
        "Number of requests in model execution batches.",
        snapshot.num_requests_running as f64,
    );
    family(
        "vllm:num_requests_waiting",
        "gauge",
        "Number of requests waiting to be processed.",
        snapshot.num_requests_waiting as f64,
    );
    family(
        "vllm:kv_cache_usage_perc",
        "gauge",
        "KV-cache usage. 1 means 100 percent usage.",
        snapshot.kv_cache_usage_perc,
    );
    family(
        "vllm:prefix_cache_queries_total",
        "counter",
        "Prefix cache queries, in terms of number of queried tokens.",
        snapshot.prefix_cache_queries as f64,
    );
    family(
        "vllm:prefix_cache_hits_total",
        "counter",
        "Prefix cache hits, in terms of number of cached tokens.",
        snapshot.prefix_cache_hits as f64,
    );
    family(
        "vllm:num_preemptions_total",
        "counter",
        "Cumulative number of preemption from the engine.",
        snapshot.num_preemptions as f64,
    );
    family(
        "vllm:prompt_tokens_total",
        "counter",
        "Number of prefill tokens processed.",
        snapshot.prompt_tokens as f64,
    );
    family(
        "vllm:generation_tokens_total",
        "counter",
        "Number of generation tokens processed.",
        snapshot.generation_tokens as f64,
    );
    let ttft = &snapshot.time_to_first_token_seconds;
    let name = "vllm:time_to_first_token_seconds";
    text.push_str(&format!(
        "# HELP {name} Histogram of time to first token in seconds.\n# TYPE {name} histogram\n"
    ));
    for (bound, count) in &ttft.buckets {
        text.push_str(&format!(
            "{name}_bucket{{{labels},le=\"{}\"}} {}\n",
            float(*bound),
            float(*count as f64)
        ));
    }
    text.push_str(&format!(
        "{name}_bucket{{{labels},le=\"+Inf\"}} {}\n{name}_count{{{labels}}} {}\n{name}_sum{{{labels}}} {}\n",
        float(ttft.count as f64),
        float(ttft.count as f64),
        float(ttft.sum)
    ));
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ttft_lands_in_its_bucket_and_the_histogram_is_cumulative() {
        let mut counters = ServerCounters::default();
        counters.request_ended(10, Some(0.03));
        counters.request_ended(5, Some(0.04));
        counters.request_ended(0, None);
        counters.request_ended(1, Some(5000.0));
        counters.request_ended(1, Some(f64::NAN));
        assert_eq!(counters.generation_tokens, 17);
        let ttft = counters.ttft();
        assert_eq!(ttft.count, 3);
        assert!((ttft.sum - 5000.07).abs() < 1e-9);
        let at = |bound: f64| {
            ttft.buckets
                .iter()
                .find(|(b, _)| *b == bound)
                .map(|(_, c)| *c)
        };
        assert_eq!(at(0.02), Some(0));
        assert_eq!(at(0.04), Some(2), "a bound holds what equals it");
        assert_eq!(
            at(2560.0),
            Some(2),
            "above the last bound counts only in +Inf"
        );
    }

    #[test]
    fn the_text_is_vllm_s_names_in_prometheus_format() {
        let mut counters = ServerCounters::default();
        counters.prefill_booked(100, 64);
        counters.request_ended(7, Some(0.2));
        let snapshot = MetricsSnapshot {
            num_requests_running: 3,
            num_requests_waiting: 1,
            kv_cache_usage_perc: 0.25,
            prefix_cache_queries: counters.prefix_cache_queries,
            prefix_cache_hits: counters.prefix_cache_hits,
            num_preemptions: 0,
            prompt_tokens: counters.prompt_tokens,
            generation_tokens: counters.generation_tokens,
            time_to_first_token_seconds: counters.ttft(),
        };
        let text = render_vllm(&snapshot, "sim\"model");
        let labels = "engine=\"0\",model_name=\"sim\\\"model\"";
        for line in [
            format!("vllm:num_requests_running{{{labels}}} 3.0"),
            format!("vllm:num_requests_waiting{{{labels}}} 1.0"),
            format!("vllm:kv_cache_usage_perc{{{labels}}} 0.25"),
            format!("vllm:prefix_cache_queries_total{{{labels}}} 100.0"),
            format!("vllm:prefix_cache_hits_total{{{labels}}} 64.0"),
            format!("vllm:prompt_tokens_total{{{labels}}} 100.0"),
            format!("vllm:generation_tokens_total{{{labels}}} 7.0"),
            format!("vllm:time_to_first_token_seconds_bucket{{{labels},le=\"0.1\"}} 0.0"),
            format!("vllm:time_to_first_token_seconds_bucket{{{labels},le=\"0.25\"}} 1.0"),
            format!("vllm:time_to_first_token_seconds_bucket{{{labels},le=\"+Inf\"}} 1.0"),
            format!("vllm:time_to_first_token_seconds_count{{{labels}}} 1.0"),
            format!("vllm:time_to_first_token_seconds_sum{{{labels}}} 0.2"),
            "# TYPE vllm:prompt_tokens_total counter".to_owned(),
        ] {
            assert!(
                text.lines().any(|l| l == line),
                "missing `{line}` in\n{text}"
            );
        }
        assert!(text.ends_with('\n'));
    }
}
