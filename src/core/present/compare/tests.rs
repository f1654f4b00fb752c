//! Tests of the comparison: deltas and ratios, the workload fields compared, and the runs
//! that sent different traffic.

use super::*;

#[test]
fn deltas_and_ratios_need_both_values_and_a_nonzero_baseline() {
    assert_eq!(
        MetricDelta::against(Some(3.0), Some(2.0)),
        MetricDelta {
            value: Some(3.0),
            delta: Some(1.0),
            ratio: Some(1.5)
        }
    );
    assert_eq!(
        MetricDelta::against(None, Some(2.0)),
        MetricDelta::default()
    );
    assert_eq!(
        MetricDelta::against(Some(2.0), None),
        MetricDelta {
            value: Some(2.0),
            delta: None,
            ratio: None
        }
    );
    assert_eq!(
        MetricDelta::against(Some(2.0), Some(0.0)),
        MetricDelta {
            value: Some(2.0),
            delta: Some(2.0),
            ratio: None
        }
    );
    // Overflow to infinity is not a difference anyone can read.
    assert_eq!(
        MetricDelta::against(Some(f64::MAX), Some(-f64::MAX)).delta,
        None
    );
}

#[test]
fn deltas_format_with_sign_and_ratio() {
    let delta = MetricDelta::against(Some(9000.0), Some(8953.168));
    assert_eq!(format_delta(&delta, "ms", false), "9000 ms (+46.8, ×1.005)");
    assert_eq!(format_delta(&delta, "ms", true), "9000 ms");
    let lower = MetricDelta::against(Some(0.25), Some(0.5));
    assert_eq!(format_delta(&lower, "", false), "0.250 (-0.250, ×0.500)");
    assert_eq!(format_delta(&MetricDelta::default(), "ms", false), "—");
}

#[test]
fn no_runs_or_one_run_have_nothing_to_mismatch() {
    let empty = compare(&[]);
    assert!(empty.labels.is_empty() && empty.metrics.is_empty());
    assert!(empty.is_like_for_like());

    let run = OpenedArtifact::from_text("one.json", r#"{"concurrency": 3, "failed": 1}"#);
    let single = compare(&[&run]);
    assert!(single.is_like_for_like());
    let failed = single
        .metrics
        .iter()
        .find(|row| row.metric == ComparedMetric::FailedRequests)
        .expect("failed requests");
    assert_eq!(failed.runs, [MetricDelta::against(Some(1.0), Some(1.0))]);
    assert_eq!(single.metrics.len(), 1, "only metrics some run has");
}

#[test]
fn sampling_values_compare_exactly() {
    let a = OpenedArtifact::from_text(
        "a.json",
        r#"{"sampling": {"temperature": {"requested": 0.9}, "top_p": {"requested": null}}}"#,
    );
    let b = OpenedArtifact::from_text(
        "b.json",
        r#"{"sampling": {"temperature": {"requested": 0.90000001}, "top_p": {"requested": null}}}"#,
    );
    let mismatches = compare(&[&a, &b]).mismatches;
    assert_eq!(mismatches.len(), 1);
    assert_eq!(mismatches[0].field, "sampling.temperature.requested");
    assert_eq!(mismatches[0].values, ["0.9", "0.90000001"]);
}

#[test]
fn how_runs_were_measured_is_compared_only_between_runs_that_say() {
    let client = |thread: &str, live_view: &str, queued: bool| {
        format!(
            r#"{{"client": {{"measurement_thread": "{thread}", "live_view": "{live_view}", "transport": {{"connection_limit_suspected": {queued}}}}}}}"#
        )
    };
    let worker = OpenedArtifact::from_text("w.json", &client("worker", "during", false));
    let main = OpenedArtifact::from_text("m.json", &client("main", "end", true));
    let other_tool = OpenedArtifact::from_text("r.json", "{}");
    let fields: Vec<&str> = compare(&[&worker, &main])
        .mismatches
        .iter()
        .map(|mismatch| mismatch.field)
        .collect();
    assert_eq!(
        fields,
        [
            "client.measurement_thread",
            "client.live_view",
            "client.transport.connection_limit_suspected"
        ]
    );
    // A file from a client without the block says nothing either way.
    assert!(compare(&[&worker, &other_tool]).mismatches.is_empty());
    let three = compare(&[&worker, &other_tool, &main]).mismatches;
    assert_eq!(three[0].values, ["worker", ABSENT, "main"]);
}

#[test]
fn an_open_loop_differs_from_a_closed_one_and_rates_from_each_other() {
    let open = |rate: f64, arrivals: &str| {
        OpenedArtifact::from_text(
            "open.json",
            &format!(r#"{{"load": {{"mode": "rate", "rate": {rate}, "arrivals": "{arrivals}"}}}}"#),
        )
    };
    let closed = OpenedArtifact::from_text("closed.json", "{}");
    let fields = |runs: &[&OpenedArtifact]| -> Vec<&str> {
        compare(runs)
            .mismatches
            .iter()
            .map(|mismatch| mismatch.field)
            .collect()
    };
    let twenty = open(20.0, "poisson");
    assert_eq!(fields(&[&closed, &twenty]), ["load.mode"]);
    assert_eq!(
        compare(&[&closed, &twenty]).mismatches[0].values,
        ["concurrency", "rate"]
    );
    assert_eq!(
        fields(&[&twenty, &open(40.0, "gamma")]),
        ["load.rate", "load.arrivals"]
    );
    assert!(fields(&[&twenty, &open(20.0, "poisson")]).is_empty());
}

/// A strobe run (reference-producer shaped) with `block` as its `workload` block.
fn with_block(name: &str, block: Option<serde_json::Value>) -> OpenedArtifact {
    let mut artifact = serde_json::json!({"schema": "anvil-serving.benchmark/v1",
                                          "concurrency": 4});
    if let Some(block) = block {
        artifact["workload"] = block;
    }
    OpenedArtifact::from_text(name, &artifact.to_string())
}

fn file_block(sha_digit: char, turns: &str, order: &str, seed: i64) -> serde_json::Value {
    serde_json::json!({
        "source": "file", "endpoint": "chat",
        "file": {"format": "sharegpt", "name": "chats.json",
                 "sha256": format!("sha256:{}", sha_digit.to_string().repeat(64))},
        "sending": {"turns": turns, "order": order, "seed": seed, "output_lengths": "file",
                    "history": "live", "trace_speed": null}
    })
}

fn traffic_fields(runs: &[&OpenedArtifact]) -> Vec<&'static str> {
    compare(runs)
        .mismatches
        .iter()
        .map(|mismatch| mismatch.field)
        .filter(|field| field.starts_with("workload."))
        .collect()
}

#[test]
fn runs_of_different_files_or_settings_sent_different_traffic() {
    let a = with_block("a.json", Some(file_block('a', "first", "file", 0)));
    let same = with_block("same.json", Some(file_block('a', "first", "file", 0)));
    assert!(traffic_fields(&[&a, &same]).is_empty());
    assert_eq!(compare(&[&a, &same]).different_traffic(), None);

    let other_file = with_block("b.json", Some(file_block('b', "first", "file", 0)));
    assert_eq!(traffic_fields(&[&a, &other_file]), ["workload.file.sha256"]);
    let sentence = compare(&[&a, &other_file])
        .different_traffic()
        .expect("different");
    assert!(
        sentence
            .starts_with("These runs sent different workloads (workload.file.sha256 sha256:aaa"),
        "{sentence}"
    );
    assert!(
        sentence.contains("describe different traffic"),
        "{sentence}"
    );

    let sessions = with_block("s.json", Some(file_block('a', "all", "file", 0)));
    assert_eq!(traffic_fields(&[&a, &sessions]), ["workload.sending.turns"]);
    let shuffled = |seed| with_block("x.json", Some(file_block('a', "first", "shuffle", seed)));
    assert_eq!(
        traffic_fields(&[&shuffled(1), &shuffled(2)]),
        ["workload.sending.order"]
    );
    assert_eq!(
        compare(&[&shuffled(1), &shuffled(2)]).mismatches[0].values,
        ["shuffle (seed 1)", "shuffle (seed 2)"]
    );
    // The seed of a run in file order is no difference.
    let seeded = with_block("f.json", Some(file_block('a', "first", "file", 9)));
    assert!(traffic_fields(&[&a, &seeded]).is_empty());
}

#[test]
fn a_file_against_synthetic_prompts_and_chat_against_completions_differ() {
    let file = with_block("file.json", Some(file_block('a', "first", "file", 0)));
    let synthetic = with_block("synthetic.json", None);
    assert_eq!(traffic_fields(&[&synthetic, &file]), ["workload.source"]);
    assert_eq!(
        compare(&[&synthetic, &file]).mismatches[0].values,
        ["synthetic", "file"]
    );
    let completions = with_block(
        "completions.json",
        Some(serde_json::json!({"source": "synthetic", "endpoint": "completions"})),
    );
    assert_eq!(
        traffic_fields(&[&synthetic, &completions]),
        ["workload.endpoint"]
    );
    assert!(compare(&[&synthetic, &completions])
        .different_traffic()
        .expect("different")
        .contains("workload.endpoint chat vs completions"));
    let comparison = compare(&[&synthetic, &completions]);
    let markdown =
        crate::core::present::export::summary_markdown(&[&synthetic, &completions], &comparison);
    assert!(
        markdown.contains("**These runs sent different workloads (workload.endpoint chat vs"),
        "{markdown}"
    );
    // Another tool's results do not say what they sent: nothing to flag either way.
    let vllm = OpenedArtifact::from_text(
        "vllm.json",
        &serde_json::json!({"source": {"tool": "vllm"}, "schema": "anvil-serving.benchmark/v1"})
            .to_string(),
    );
    assert!(vllm.foreign.is_some(), "read as a converted vLLM run");
    assert!(traffic_fields(&[&file, &vllm]).is_empty());
    assert!(traffic_fields(&[&synthetic, &vllm]).is_empty());
}

#[test]
fn a_traces_speed_is_its_load_level_not_its_setup() {
    let trace = |speed: f64| {
        let mut block = file_block('c', "first", "file", 0);
        block["sending"]["trace_speed"] = serde_json::json!(speed);
        with_block("trace.json", Some(block))
    };
    let (slow, fast) = (trace(1.0), trace(4.0));
    assert_eq!(
        traffic_fields(&[&slow, &fast]),
        ["workload.sending.trace_speed"]
    );
    assert_eq!(compare(&[&slow, &fast]).different_traffic(), None);
    assert_eq!(setup_key(&slow), setup_key(&fast));
    let other = with_block("o.json", Some(file_block('d', "first", "file", 0)));
    assert_ne!(setup_key(&slow), setup_key(&other));
}

/// A run whose server's queue peaked at `waiting` with its KV cache at `kv` (0–1).
fn with_server(name: &str, concurrency: u64, waiting: f64, kv: f64) -> OpenedArtifact {
    let gauge =
        |max: f64| serde_json::json!({"min": 0.0, "mean": max / 2.0, "max": max, "samples": 3});
    let artifact = serde_json::json!({
        "schema": "anvil-serving.benchmark/v1",
        "concurrency": concurrency,
        "server_metrics": {
            "source": "http://127.0.0.1:8000/metrics", "interval_ms": 1000, "family": "vllm",
            "samples": [],
            "summary": {
                "window_start_ms": 0.0, "window_end_ms": 1000.0, "from_t_ms": null, "to_t_ms": null,
                "gauges": {"waiting": gauge(waiting), "running": gauge(8.0), "kv_cache_use": gauge(kv)},
                "counters": {"preemptions": {"delta": 0.0, "rate_per_s": 0.0, "resets": 0}},
                "prefix_cache_hit_rate": 0.25,
                "histograms": {}
            }
        }
    });
    OpenedArtifact::from_text(name, &artifact.to_string())
}

#[test]
fn the_servers_own_view_is_compared_run_by_run() {
    let calm = with_server("c8.json", 8, 0.0, 0.5);
    let queued = with_server("c32.json", 32, 12.0, 0.94);
    let plain = OpenedArtifact::from_text("plain.json", r#"{"concurrency": 8, "failed": 0}"#);
    let comparison = compare(&[&calm, &queued, &plain]);
    let row = |figure: ServerFigure| {
        comparison
            .metrics
            .iter()
            .find(|row| row.metric == ComparedMetric::Server(figure))
            .unwrap_or_else(|| panic!("{figure:?}"))
            .clone()
    };
    let waiting = row(ServerFigure::WaitingPeak);
    assert_eq!(waiting.metric.label(), "server: waiting (peak)");
    assert_eq!(
        waiting.runs,
        [
            MetricDelta::against(Some(0.0), Some(0.0)),
            MetricDelta::against(Some(12.0), Some(0.0)),
            MetricDelta::default(),
        ],
        "a run without the block has no value"
    );
    let kv = row(ServerFigure::KvCachePeak);
    assert_eq!(kv.metric.unit(), "%");
    assert_eq!(
        format_delta(&kv.runs[1], kv.metric.unit(), false),
        "94 % (+44, ×1.880)"
    );
    assert_eq!(row(ServerFigure::PrefixCacheHits).runs[0].value, Some(25.0));
    assert_eq!(row(ServerFigure::Preemptions).runs[1].value, Some(0.0));
    assert!(!ComparedMetric::Server(ServerFigure::WaitingPeak).higher_is_better());
    // Runs without the block have no server rows at all.
    let without = compare(&[&plain]);
    assert!(without
        .metrics
        .iter()
        .all(|row| !matches!(row.metric, ComparedMetric::Server(_))));
}
