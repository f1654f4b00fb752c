//! The server's own view of a run, from its `server_metrics` block (docs/telemetry.md): one
//! line for the results ("server (vllm): peak queue 12, KV cache 94 % at peak, 3 preemptions,
//! prefix-cache hits 41 %; client TTFT − server TTFT p50 1.90 ms", what network and client add),
//! and the block's notes; its chart is `charts::server`'s. A block from a file is data: names
//! and notes are shown as text, numbers only where they are finite.

use crate::core::artifact::schema::server_metrics::ServerMetricsBlock;
use crate::core::format::format_number;

/// What the results say of the server.
#[derive(Clone, Debug, PartialEq)]
pub struct ServerLine {
    /// The line, e.g. "server (vllm): peak queue 12, …".
    pub text: String,
    /// The block's notes (scrapes refused, text worked around), as the file gives them.
    pub notes: Vec<String>,
}

/// The results' line for a run's `server_metrics` block.
pub fn server_line(block: &ServerMetricsBlock) -> ServerLine {
    let mut parts: Vec<String> = Vec::new();
    let finite = |value: f64| value.is_finite().then_some(value);
    if let Some(summary) = &block.summary {
        let peak = |key: &str| summary.gauges.get(key).and_then(|gauge| finite(gauge.max));
        if let Some(waiting) = peak("waiting") {
            parts.push(format!("peak queue {}", format_number(waiting)));
        }
        if let Some(running) = peak("running") {
            parts.push(format!("peak running {}", format_number(running)));
        }
        if let Some(kv) = peak("kv_cache_use") {
            parts.push(format!("KV cache {} % at peak", format_number(kv * 100.0)));
        }
        if let Some(preemptions) = summary
            .counters
            .get("preemptions")
            .and_then(|counter| finite(counter.delta))
        {
            let unit = if preemptions == 1.0 {
                "preemption"
            } else {
                "preemptions"
            };
            parts.push(format!("{} {unit}", format_number(preemptions)));
        }
        if let Some(rate) = summary.prefix_cache_hit_rate.and_then(finite) {
            parts.push(format!(
                "prefix-cache hits {} %",
                format_number(rate * 100.0)
            ));
        }
    }
    let family = if block.family.trim().is_empty() {
        "unknown"
    } else {
        block.family.as_str()
    };
    let mut text = format!("server ({family}): ");
    if parts.is_empty() {
        text.push_str(match &block.summary {
            Some(_) => "no common series in its metrics",
            None => "no sample fell in the measured window",
        });
    } else {
        text.push_str(&parts.join(", "));
    }
    let gap = block
        .summary
        .as_ref()
        .and_then(|summary| summary.beside_client.as_ref())
        .and_then(|beside| {
            let ttft = &beside.ttft;
            ttft.p50_gap_ms
                .and_then(finite)
                .map(|gap| ("p50", gap))
                .or_else(|| ttft.mean_gap_ms.and_then(finite).map(|gap| ("mean", gap)))
        });
    if let Some((statistic, gap)) = gap {
        text.push_str(&format!(
            "; client TTFT − server TTFT {statistic} {} ms",
            format_number(gap)
        ));
    }
    ServerLine {
        text,
        notes: block.notes.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::present::charts::{server_over_time, ChartTheme};
    use serde_json::Value;

    fn block(json: Value) -> ServerMetricsBlock {
        serde_json::from_value(json).unwrap()
    }

    fn vllm() -> ServerMetricsBlock {
        block(serde_json::json!({
            "source": "http://127.0.0.1:8000/metrics",
            "interval_ms": 1000,
            "family": "vllm",
            "samples": [
                {"t_ms": -300.0, "latency_ms": 2.0, "values": {"vllm:num_requests_running": 0.0, "vllm:num_requests_waiting": 0.0, "vllm:kv_cache_usage_perc": 0.0}},
                {"t_ms": 1000.0, "latency_ms": 2.0, "values": {"vllm:num_requests_running": 8.0, "vllm:num_requests_waiting": 12.0, "vllm:kv_cache_usage_perc": 0.94}},
                {"t_ms": 2000.0, "latency_ms": 2.0, "values": {"vllm:num_requests_running": 4.0, "vllm:num_requests_waiting": 1.0, "vllm:kv_cache_usage_perc": 0.5}}
            ],
            "summary": {
                "window_start_ms": 0.0, "window_end_ms": 2500.0,
                "gauges": {
                    "running": {"min": 4.0, "mean": 6.0, "max": 8.0, "samples": 2},
                    "waiting": {"min": 1.0, "mean": 6.5, "max": 12.0, "samples": 2},
                    "kv_cache_use": {"min": 0.5, "mean": 0.72, "max": 0.94, "samples": 2}
                },
                "counters": {"preemptions": {"delta": 3.0, "rate_per_s": 1.2, "resets": 0}},
                "prefix_cache_hit_rate": 0.41,
                "histograms": {},
                "beside_client": {
                    "ttft": {"client_mean_ms": 30.0, "server_mean_ms": 28.0, "mean_gap_ms": 2.0,
                             "client_p50_ms": 25.0, "server_p50_ms": 23.1, "p50_gap_ms": 1.9},
                    "e2e": {}, "prompt_tokens": {}, "generation_tokens": {}
                }
            },
            "notes": ["1 scrape answered HTTP 500"]
        }))
    }

    #[test]
    fn the_line_names_queue_cache_preemptions_hits_and_what_the_client_adds() {
        let line = server_line(&vllm());
        assert_eq!(
            line.text,
            "server (vllm): peak queue 12, peak running 8, KV cache 94 % at peak, 3 preemptions, \
             prefix-cache hits 41 %; client TTFT − server TTFT p50 1.90 ms"
        );
        assert_eq!(line.notes, ["1 scrape answered HTTP 500"]);
    }

    #[test]
    fn a_block_without_a_summary_or_series_says_so() {
        let mut bare = vllm();
        bare.summary = None;
        bare.samples.clear();
        assert_eq!(
            server_line(&bare).text,
            "server (vllm): no sample fell in the measured window"
        );
        let chart = server_over_time(&bare, ChartTheme::default());
        assert!(chart
            .to_string()
            .contains("no running, waiting or KV-cache series"));
    }

    #[test]
    fn the_chart_steps_through_the_scrapes_on_the_runs_clock() {
        let chart = server_over_time(&vllm(), ChartTheme::default());
        let series = chart["series"].as_array().unwrap();
        let names: Vec<&str> = series.iter().map(|s| s["name"].as_str().unwrap()).collect();
        assert_eq!(
            names,
            ["Running (server)", "Waiting (server)", "KV cache use (%)"]
        );
        assert_eq!(series[1]["data"][1], serde_json::json!([1.0, 12.0]));
        assert_eq!(series[2]["data"][1], serde_json::json!([1.0, 94.0]));
        assert_eq!(series[2]["yAxisIndex"].as_f64(), Some(1.0));
        assert_eq!(series[0]["data"][0], serde_json::json!([-0.3, 0.0]));
    }

    #[test]
    fn a_hostile_family_and_notes_stay_text() {
        let mut hostile = vllm();
        hostile.family = "<img src=x onerror=alert(1)>".into();
        hostile.samples[1]
            .values
            .insert("vllm:num_requests_waiting".into(), f64::NAN);
        let line = server_line(&hostile);
        assert!(line
            .text
            .starts_with("server (<img src=x onerror=alert(1)>): "));
        // An unknown family has no known names: nothing drawn, and no NaN on the chart.
        let chart = server_over_time(&hostile, ChartTheme::default()).to_string();
        assert!(!chart.contains("NaN"));
    }
}
