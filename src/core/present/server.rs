//! The server's own view of a run, from its `server_metrics` block (docs/guide/telemetry.md): one
//! line for the results ("server (vllm): peak queue 12, KV cache 94 % at peak, 3 preemptions,
//! prefix-cache hits 41 %; client TTFT − server TTFT p50 1.90 ms", what network and client add),
//! and the block's notes; the same figures ([`ServerFigure`], [`ServerFigures`]) for the rows of
//! a comparison and the points of a capacity curve, where the load at which `waiting` starts to
//! grow shows; its chart is `charts::server`'s. A block from a file is data: names and notes are
//! shown as text, numbers only where they are finite.

use crate::core::format::format_number;
use crate::core::schema::server_metrics::ServerMetricsBlock;

/// One number of the server's summary that runs and sweep steps are compared by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServerFigure {
    /// The most requests waiting in its queue at one scrape of the measured window.
    WaitingPeak,
    /// The most requests in its running batch at one scrape.
    RunningPeak,
    /// Its KV-cache use at its highest scrape, %.
    KvCachePeak,
    /// Requests it preempted in the window (their KV cache given up, to be recomputed).
    Preemptions,
    /// Its prefix-cache hit rate over the window, %.
    PrefixCacheHits,
}

impl ServerFigure {
    /// Every figure, in the order tables show them.
    pub const ALL: [ServerFigure; 5] = [
        ServerFigure::WaitingPeak,
        ServerFigure::RunningPeak,
        ServerFigure::KvCachePeak,
        ServerFigure::Preemptions,
        ServerFigure::PrefixCacheHits,
    ];

    /// Label for tables, e.g. `server: waiting (peak)`.
    pub fn label(self) -> &'static str {
        match self {
            ServerFigure::WaitingPeak => "server: waiting (peak)",
            ServerFigure::RunningPeak => "server: running (peak)",
            ServerFigure::KvCachePeak => "server: KV cache (peak)",
            ServerFigure::Preemptions => "server: preemptions",
            ServerFigure::PrefixCacheHits => "server: prefix-cache hits",
        }
    }

    /// Unit of the values: `%` for shares, empty for counts.
    pub fn unit(self) -> &'static str {
        match self {
            ServerFigure::KvCachePeak | ServerFigure::PrefixCacheHits => "%",
            ServerFigure::WaitingPeak | ServerFigure::RunningPeak | ServerFigure::Preemptions => "",
        }
    }

    /// True when a larger value is better: only cache hits. A longer queue, a fuller cache and
    /// more preemptions all say the server is nearer its limit (more running is neither).
    pub fn higher_is_better(self) -> bool {
        self == ServerFigure::PrefixCacheHits
    }

    /// This figure of `block`'s summary; `None` when the block has no summary, the engine
    /// exposes no such series, or the file's number is not finite.
    pub fn of(self, block: &ServerMetricsBlock) -> Option<f64> {
        let summary = block.summary.as_ref()?;
        let peak = |key: &str| summary.gauges.get(key).map(|gauge| gauge.max);
        let value = match self {
            ServerFigure::WaitingPeak => peak("waiting"),
            ServerFigure::RunningPeak => peak("running"),
            ServerFigure::KvCachePeak => peak("kv_cache_use").map(|share| share * 100.0),
            ServerFigure::Preemptions => summary
                .counters
                .get("preemptions")
                .map(|counter| counter.delta),
            ServerFigure::PrefixCacheHits => summary.prefix_cache_hit_rate.map(|rate| rate * 100.0),
        }?;
        value.is_finite().then_some(value)
    }
}

/// The figures of one run (or the mean over a group of repeats): what a capacity point and a
/// sweep step's row show of the server.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct ServerFigures {
    /// [`ServerFigure::WaitingPeak`].
    pub waiting_peak: Option<f64>,
    /// [`ServerFigure::RunningPeak`].
    pub running_peak: Option<f64>,
    /// [`ServerFigure::KvCachePeak`], %.
    pub kv_cache_peak_percent: Option<f64>,
    /// [`ServerFigure::Preemptions`].
    pub preemptions: Option<f64>,
    /// [`ServerFigure::PrefixCacheHits`], %.
    pub prefix_cache_hits_percent: Option<f64>,
}

impl ServerFigures {
    /// The figures of `block`; `None` when it has none of them (no summary, or an engine
    /// whose series strobe does not know).
    pub fn of(block: &ServerMetricsBlock) -> Option<Self> {
        let figures = Self {
            waiting_peak: ServerFigure::WaitingPeak.of(block),
            running_peak: ServerFigure::RunningPeak.of(block),
            kv_cache_peak_percent: ServerFigure::KvCachePeak.of(block),
            preemptions: ServerFigure::Preemptions.of(block),
            prefix_cache_hits_percent: ServerFigure::PrefixCacheHits.of(block),
        };
        (figures != Self::default()).then_some(figures)
    }

    /// One figure.
    pub fn get(&self, figure: ServerFigure) -> Option<f64> {
        match figure {
            ServerFigure::WaitingPeak => self.waiting_peak,
            ServerFigure::RunningPeak => self.running_peak,
            ServerFigure::KvCachePeak => self.kv_cache_peak_percent,
            ServerFigure::Preemptions => self.preemptions,
            ServerFigure::PrefixCacheHits => self.prefix_cache_hits_percent,
        }
    }

    /// The mean of each figure over `runs` (a group of repeats at one load), over the runs that
    /// have it; `None` when no run has any.
    pub fn mean_of(runs: &[Option<ServerFigures>]) -> Option<Self> {
        let mean = |figure: ServerFigure| {
            let values: Vec<f64> = runs
                .iter()
                .flatten()
                .filter_map(|figures| figures.get(figure))
                .collect();
            (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
        };
        let figures = Self {
            waiting_peak: mean(ServerFigure::WaitingPeak),
            running_peak: mean(ServerFigure::RunningPeak),
            kv_cache_peak_percent: mean(ServerFigure::KvCachePeak),
            preemptions: mean(ServerFigure::Preemptions),
            prefix_cache_hits_percent: mean(ServerFigure::PrefixCacheHits),
        };
        (figures != Self::default()).then_some(figures)
    }

    /// In a few words for a table cell: "waiting 12 · running 8 · KV 94 % · 3 preemptions ·
    /// hits 41 %", the figures the server had.
    pub fn brief(&self) -> String {
        let mut parts = Vec::new();
        if let Some(waiting) = self.waiting_peak {
            parts.push(format!("waiting {}", format_number(waiting)));
        }
        if let Some(running) = self.running_peak {
            parts.push(format!("running {}", format_number(running)));
        }
        if let Some(kv) = self.kv_cache_peak_percent {
            parts.push(format!("KV {} %", format_number(kv)));
        }
        if let Some(preemptions) = self.preemptions {
            parts.push(preemptions_text(preemptions));
        }
        if let Some(hits) = self.prefix_cache_hits_percent {
            parts.push(format!("hits {} %", format_number(hits)));
        }
        parts.join(" · ")
    }
}

/// "1 preemption", "3 preemptions".
fn preemptions_text(count: f64) -> String {
    let unit = if count == 1.0 {
        "preemption"
    } else {
        "preemptions"
    };
    format!("{} {unit}", format_number(count))
}

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
    if let Some(figures) = ServerFigures::of(block) {
        if let Some(waiting) = figures.waiting_peak {
            parts.push(format!("peak queue {}", format_number(waiting)));
        }
        if let Some(running) = figures.running_peak {
            parts.push(format!("peak running {}", format_number(running)));
        }
        if let Some(kv) = figures.kv_cache_peak_percent {
            parts.push(format!("KV cache {} % at peak", format_number(kv)));
        }
        if let Some(preemptions) = figures.preemptions {
            parts.push(preemptions_text(preemptions));
        }
        if let Some(hits) = figures.prefix_cache_hits_percent {
            parts.push(format!("prefix-cache hits {} %", format_number(hits)));
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
    fn the_figures_are_the_summarys_peaks_preemptions_and_hits_in_percent() {
        let figures = ServerFigures::of(&vllm()).expect("figures");
        assert_eq!(
            figures,
            ServerFigures {
                waiting_peak: Some(12.0),
                running_peak: Some(8.0),
                kv_cache_peak_percent: Some(94.0),
                preemptions: Some(3.0),
                prefix_cache_hits_percent: Some(41.0),
            }
        );
        assert_eq!(
            figures.brief(),
            "waiting 12 · running 8 · KV 94 % · 3 preemptions · hits 41 %"
        );
        assert_eq!(ServerFigure::KvCachePeak.unit(), "%");
        assert!(ServerFigure::PrefixCacheHits.higher_is_better());
        assert!(!ServerFigure::WaitingPeak.higher_is_better());
        let mut bare = vllm();
        bare.summary = None;
        assert_eq!(ServerFigures::of(&bare), None, "no summary, no figures");
        assert_eq!(ServerFigure::WaitingPeak.of(&bare), None);
    }

    #[test]
    fn repeats_average_each_figure_over_the_runs_that_have_it() {
        let one = ServerFigures {
            waiting_peak: Some(10.0),
            kv_cache_peak_percent: Some(80.0),
            ..ServerFigures::default()
        };
        let two = ServerFigures {
            waiting_peak: Some(14.0),
            preemptions: Some(1.0),
            ..ServerFigures::default()
        };
        let mean = ServerFigures::mean_of(&[Some(one), None, Some(two)]).expect("mean");
        assert_eq!(mean.waiting_peak, Some(12.0));
        assert_eq!(mean.kv_cache_peak_percent, Some(80.0));
        assert_eq!(mean.preemptions, Some(1.0));
        assert_eq!(mean.running_peak, None);
        assert_eq!(mean.brief(), "waiting 12 · KV 80 % · 1 preemption");
        assert_eq!(ServerFigures::mean_of(&[None, None]), None);
    }

    #[test]
    fn a_figure_that_is_not_finite_is_left_out() {
        let mut odd = vllm();
        if let Some(summary) = odd.summary.as_mut() {
            summary.prefix_cache_hit_rate = Some(f64::INFINITY);
            if let Some(gauge) = summary.gauges.get_mut("waiting") {
                gauge.max = f64::NAN;
            }
        }
        let figures = ServerFigures::of(&odd).expect("figures");
        assert_eq!(figures.waiting_peak, None);
        assert_eq!(figures.prefix_cache_hits_percent, None);
        assert_eq!(figures.running_peak, Some(8.0));
        assert!(!server_line(&odd).text.contains("NaN"));
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
