//! The capacity view's data on small artifacts: curves by sweep id and by setup, ordering,
//! saturation, capacity at SLO, and repeats merged into one point with their interval.

use super::*;

fn run(text: &str) -> OpenedArtifact {
    OpenedArtifact::from_text("run.json", text)
}

fn closed(concurrency: u64, id: Option<&str>) -> OpenedArtifact {
    let sweep = id.map_or(String::new(), |id| {
        format!(r#", "sweep": {{"id": "{id}", "variable": "concurrency", "value": {concurrency}}}"#)
    });
    run(&format!(
        r#"{{"concurrency": {concurrency}, "completed": 10, "wall_clock_ms": 2000,
            "metrics": {{"output_tokens": 1000, "ttft_p95_ms": {}}}{sweep}}}"#,
        concurrency * 10
    ))
}

#[test]
fn a_sweep_is_one_curve_ordered_by_its_value() {
    let runs = [
        closed(8, Some("s1")),
        closed(1, Some("s1")),
        closed(4, Some("s1")),
    ];
    let refs: Vec<&OpenedArtifact> = runs.iter().collect();
    let series = capacity_series(&refs);
    assert_eq!(series.len(), 1);
    assert_eq!(series[0].name, "s1");
    assert_eq!(series[0].variable, "concurrency");
    let labels: Vec<&str> = series[0].points.iter().map(|p| p.label.as_str()).collect();
    assert_eq!(labels, ["c=1", "c=4", "c=8"]);
    assert_eq!(series[0].points[0].output_tok_s, Some(500.0));
    assert_eq!(series[0].points[0].requests_per_s, Some(5.0));
    assert_eq!(series[0].points[2].metrics.ttft.p95, Some(80.0));
}

#[test]
fn an_auto_sweep_orders_its_steps_by_the_load_they_carried() {
    let rate_step = |rate: f64, index: u64| {
        run(&format!(
            r#"{{"concurrency": 16, "completed": 10, "wall_clock_ms": 1000,
                "metrics": {{"output_tokens": 100}},
                "load": {{"mode": "rate", "rate": {rate}, "offered_rate": {rate}}},
                "sweep": {{"id": "auto-1", "step_index": {index}, "variable": "rate", "value": {rate}}}}}"#
        ))
    };
    // c=1 completes 5 req/s, c=16 30 req/s: the rates fall between them.
    let sync = closed(1, Some("auto-1"));
    let throughput = run(
        r#"{"concurrency": 16, "completed": 60, "wall_clock_ms": 2000,
            "metrics": {"output_tokens": 6000},
            "sweep": {"id": "auto-1", "step_index": 1, "variable": "concurrency", "value": 16}}"#,
    );
    let runs = [sync, throughput, rate_step(20.0, 2), rate_step(10.0, 3)];
    let refs: Vec<&OpenedArtifact> = runs.iter().collect();
    let series = capacity_series(&refs);
    assert_eq!(series.len(), 1);
    assert_eq!(series[0].variable, MIXED);
    let labels: Vec<&str> = series[0].points.iter().map(|p| p.label.as_str()).collect();
    assert_eq!(labels, ["c=1", "10 req/s", "20 req/s", "c=16"]);
}

#[test]
fn runs_outside_a_sweep_group_by_load_mode_and_one_run_is_no_curve() {
    let rate = |rate: f64, completed: u64| {
        run(&format!(
            r#"{{"concurrency": 16, "completed": {completed}, "wall_clock_ms": 1000,
                "metrics": {{"output_tokens": 100}},
                "load": {{"mode": "rate", "rate": {rate}, "offered_rate": {rate}}}}}"#
        ))
    };
    let runs = [
        rate(10.0, 10),
        rate(20.0, 12),
        closed(2, None),
        closed(1, Some("other")),
    ];
    let refs: Vec<&OpenedArtifact> = runs.iter().collect();
    let series = capacity_series(&refs);
    assert_eq!(
        series.len(),
        1,
        "the lone closed run and the one-step sweep are no curves"
    );
    assert_eq!(series[0].variable, "rate");
    assert_eq!(series[0].points[1].label, "20 req/s");
    assert!(!series[0].points[0].saturated);
    assert!(
        series[0].points[1].saturated,
        "12 completed a second of 20 offered"
    );
}

#[test]
fn runs_of_other_servers_or_workloads_are_never_one_curve() {
    let closed_of = |concurrency: u64, model: &str, context: u64| {
        run(&format!(
            r#"{{"concurrency": {concurrency}, "completed": 10, "wall_clock_ms": 2000,
                "model": "{model}", "engine": "vllm", "context_tokens": {context},
                "metrics": {{"output_tokens": 1000}}}}"#
        ))
    };
    // A c=1 run of one model beside a c=4 run of another: two lone runs, no curve.
    let unrelated = [closed_of(1, "m-a", 1024), closed_of(4, "m-b", 1024)];
    let refs: Vec<&OpenedArtifact> = unrelated.iter().collect();
    assert!(capacity_series(&refs).is_empty());
    // Another prompt length is another workload too.
    let contexts = [closed_of(1, "m-a", 1024), closed_of(4, "m-a", 8192)];
    let refs: Vec<&OpenedArtifact> = contexts.iter().collect();
    assert!(capacity_series(&refs).is_empty());
    // Runs of one setup at two loads are one curve, named by what they share; runs above six
    // in flight (a suspected connection limit) still belong to it.
    let same = [
        closed_of(1, "m-a", 1024),
        closed_of(8, "m-a", 1024),
        closed_of(4, "m-b", 1024),
        closed_of(2, "m-b", 1024),
    ];
    let refs: Vec<&OpenedArtifact> = same.iter().collect();
    let series = capacity_series(&refs);
    let names: Vec<&str> = series.iter().map(|series| series.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "selected runs of m-a on vllm (concurrency)",
            "selected runs of m-b on vllm (concurrency)"
        ]
    );
    let labels: Vec<&str> = series[1].points.iter().map(|p| p.label.as_str()).collect();
    assert_eq!(labels, ["c=2", "c=4"]);
}

#[test]
fn capacity_at_slo_reads_the_judged_steps_of_a_curve() {
    // Four rows per step with TTFT 10, 20, 30, 40 ms × the concurrency: at TTFT ≤ 45 ms c=1
    // meets 4 of 4, c=2 2 of 4 (20, 40), c=4 1 of 4 (40).
    let step = |concurrency: u64| {
        let rows: Vec<String> = (1..=4)
            .map(|i| {
                format!(
                    r#"{{"request_index": {i}, "ttft_ms": {}, "e2e_ms": 500, "output_tokens": 10}}"#,
                    i * 10 * concurrency
                )
            })
            .collect();
        run(&format!(
            r#"{{"measurement_protocol": "capacity-v3", "concurrency": {concurrency},
                "completed": 4, "failed": 0, "failures": [], "wall_clock_ms": 1000,
                "request_timings": [{}],
                "sweep": {{"id": "s", "variable": "concurrency", "value": {concurrency}}}}}"#,
            rows.join(",")
        ))
    };
    let runs = [step(1), step(2), step(4)];
    let refs: Vec<&OpenedArtifact> = runs.iter().collect();
    let slo: Slo = "ttft:45".parse().expect("valid");
    let series = capacity_series_with_slo(&refs, Some(&slo));
    let attainments: Vec<Option<f64>> = series[0]
        .points
        .iter()
        .map(|point| point.slo.as_ref().and_then(|o| o.attainment))
        .collect();
    assert_eq!(attainments, [Some(1.0), Some(0.5), Some(0.25)]);
    // 75 % falls halfway between c=1 and c=2.
    assert_eq!(
        series[0].capacity_at_slo(0.75),
        Some(CapacityAtSlo::Reached {
            load: 1.5,
            interpolated: true,
            lower: 1.0,
            upper: 2.0
        })
    );
    assert_eq!(series[0].describe_load(1.5), "c=1.5");
    assert_eq!(capacity_series(&refs)[0].capacity_at_slo(0.75), None);
}

/// A closed-loop run at `concurrency` with TTFT p50 `ttft_p50`, in repeat `index` of
/// `group` when given.
fn repeat(concurrency: u64, ttft_p50: f64, group: Option<(&str, u64)>) -> OpenedArtifact {
    let repeat = group.map_or(String::new(), |(id, index)| {
        format!(r#", "repeat": {{"group_id": "{id}", "index": {index}, "count": 3}}"#)
    });
    run(&format!(
        r#"{{"concurrency": {concurrency}, "completed": 10, "wall_clock_ms": 2000,
            "metrics": {{"output_tokens": 1000, "ttft_p50_ms": {ttft_p50},
                         "ttft_p95_ms": {}}}{repeat}}}"#,
        ttft_p50 * 2.0
    ))
}

#[test]
fn repeats_of_one_group_at_one_load_are_one_point_with_their_interval() {
    let runs = [
        repeat(1, 500.0, None),
        repeat(2, 1049.0, Some(("g", 0))),
        repeat(2, 1065.0, Some(("g", 1))),
        repeat(2, 1057.0, Some(("g", 2))),
    ];
    let refs: Vec<&OpenedArtifact> = runs.iter().collect();
    let series = capacity_series(&refs);
    assert_eq!(series.len(), 1);
    let points = &series[0].points;
    assert_eq!(points.len(), 2, "the lone run and the group");
    assert_eq!(points[0].repeats, None);
    let group = points[1].repeats.as_ref().expect("the group's point");
    assert_eq!(group.group_id, "g");
    assert_eq!(group.runs.len(), 3);
    assert_eq!(
        points[1].metrics.ttft.p50,
        Some(1057.0),
        "the mean of the p50s"
    );
    assert_eq!(points[1].metrics.ttft.p95, Some(2114.0));
    assert_eq!(points[1].output_tok_s, Some(500.0));
    let across = points[1]
        .across(MetricKind::Ttft, MetricStat::P50)
        .expect("three runs");
    let (low, high) = across.interval_95().expect("an interval");
    assert!((high - low - 2.0 * 19.873).abs() < 0.01, "{low}..{high}");
    let rows = capacity_rows(&series, MetricKind::Ttft, MetricStat::P50);
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0].latency.as_deref(), Some("500 ms (1 run)"));
    assert_eq!(
        rows[1].latency.as_deref(),
        Some("1,057 ms ± 19.9 (95 %, 3 runs)")
    );
    assert_eq!((rows[1].runs, rows[1].disagreement.clone()), (3, None));
    assert_eq!(rows[1].load, "c=2");
}

#[test]
fn one_group_alone_is_drawn_and_disagreeing_repeats_are_flagged() {
    let runs = [
        repeat(4, 929.0, Some(("tuned", 0))),
        repeat(4, 1462.0, Some(("tuned", 1))),
        repeat(4, 1336.0, Some(("tuned", 2))),
    ];
    let refs: Vec<&OpenedArtifact> = runs.iter().collect();
    let series = capacity_series(&refs);
    assert_eq!(series.len(), 1, "a repeated point is worth drawing alone");
    assert_eq!(series[0].points.len(), 1);
    let rows = capacity_rows(&series, MetricKind::Ttft, MetricStat::P50);
    let flag = rows[0].disagreement.as_deref().expect("a CV above 10 %");
    assert!(flag.starts_with("the 3 runs disagree"), "{flag}");
    // Runs of two groups, or of one group at two loads (a sweep's steps repeated), stay
    // apart; a run without a group never joins one.
    let runs = [
        repeat(4, 100.0, Some(("a", 0))),
        repeat(4, 110.0, Some(("a", 1))),
        repeat(8, 200.0, Some(("a", 0))),
        repeat(8, 210.0, Some(("a", 1))),
        repeat(4, 300.0, Some(("b", 0))),
        repeat(4, 120.0, None),
    ];
    let refs: Vec<&OpenedArtifact> = runs.iter().collect();
    let points = &capacity_series(&refs)[0].points;
    let shown: Vec<(f64, usize)> = points
        .iter()
        .map(|p| (p.value, p.repeats.as_ref().map_or(1, |r| r.runs.len())))
        .collect();
    assert_eq!(shown, [(4.0, 2), (4.0, 1), (4.0, 1), (8.0, 2)]);
}

#[test]
fn the_slo_of_a_group_pools_its_runs_requests() {
    let step = |ttfts: [u64; 2], index: u64| {
        let rows: Vec<String> = ttfts
            .iter()
            .enumerate()
            .map(|(i, ttft)| {
                format!(
                    r#"{{"request_index": {i}, "ttft_ms": {ttft}, "e2e_ms": 500, "output_tokens": 10}}"#
                )
            })
            .collect();
        run(&format!(
            r#"{{"measurement_protocol": "capacity-v3", "concurrency": 2,
                "completed": 2, "failed": 0, "failures": [], "wall_clock_ms": 1000,
                "request_timings": [{}],
                "repeat": {{"group_id": "g", "index": {index}, "count": 2}}}}"#,
            rows.join(",")
        ))
    };
    let runs = [step([10, 20], 0), step([10, 90], 1)];
    let refs: Vec<&OpenedArtifact> = runs.iter().collect();
    let slo: Slo = "ttft:45".parse().expect("valid");
    let series = capacity_series_with_slo(&refs, Some(&slo));
    let outcome = series[0].points[0].slo.as_ref().expect("judged");
    assert_eq!((outcome.sent, outcome.met), (4, 3));
    assert_eq!(outcome.attainment, Some(0.75));
    assert_eq!(outcome.bounds[0].missed, 1);
}

#[test]
fn a_guidellm_report_of_several_benchmarks_is_one_curve() {
    let path = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/peers/guidellm/guidellm-0.8.1-c4.json");
    let mut report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).expect("fixture")).expect("JSON");
    let mut second = report["benchmarks"][0].clone();
    second["config"]["strategy"]["streams"] = serde_json::json!(8);
    report["benchmarks"]
        .as_array_mut()
        .expect("array")
        .push(second);
    let runs = OpenedArtifact::all_from_text("report.json", &report.to_string());
    let refs: Vec<&OpenedArtifact> = runs.iter().collect();
    let curves = capacity_series(&refs);
    assert_eq!(curves.len(), 1);
    assert_eq!(curves[0].variable, "concurrency");
    let values: Vec<f64> = curves[0].points.iter().map(|point| point.value).collect();
    assert_eq!(values, [4.0, 8.0]);
    assert!(
        curves[0].name.starts_with("guidellm "),
        "{}",
        curves[0].name
    );
}

/// A step of sweep `s1` at `concurrency` whose server's queue peaked at `waiting`, in repeat
/// group `group` when given.
fn scraped(concurrency: u64, waiting: f64, kv: f64, group: Option<(&str, u64)>) -> OpenedArtifact {
    let gauge = |max: f64| serde_json::json!({"min": 0.0, "mean": max, "max": max, "samples": 2});
    let mut artifact = serde_json::json!({
        "concurrency": concurrency, "completed": 10, "wall_clock_ms": 2000,
        "metrics": {"output_tokens": 1000, "ttft_p95_ms": concurrency * 10},
        "server_metrics": {
            "source": "http://127.0.0.1:8000/metrics", "interval_ms": 200, "family": "vllm",
            "samples": [],
            "summary": {"window_start_ms": 0.0, "window_end_ms": 2000.0, "from_t_ms": null,
                        "to_t_ms": null, "gauges": {"waiting": gauge(waiting), "kv_cache_use": gauge(kv)},
                        "counters": {}, "prefix_cache_hit_rate": null, "histograms": {}}
        }
    });
    match group {
        Some((id, index)) => {
            artifact["repeat"] = serde_json::json!({"group_id": id, "index": index, "count": 2});
        }
        None => {
            artifact["sweep"] =
                serde_json::json!({"id": "s1", "variable": "concurrency", "value": concurrency});
        }
    }
    run(&artifact.to_string())
}

#[test]
fn each_point_carries_what_the_server_saw_so_the_queues_knee_shows() {
    let runs = [
        scraped(4, 0.0, 0.4, None),
        scraped(8, 0.0, 0.7, None),
        scraped(16, 9.0, 0.98, None),
        closed(32, Some("s1")),
    ];
    let refs: Vec<&OpenedArtifact> = runs.iter().collect();
    let series = capacity_series(&refs);
    assert!(has_server_figures(&series));
    let waiting: Vec<Option<f64>> = series[0]
        .points
        .iter()
        .map(|point| point.server.and_then(|server| server.waiting_peak))
        .collect();
    assert_eq!(waiting, [Some(0.0), Some(0.0), Some(9.0), None]);
    let rows = capacity_rows(&series, MetricKind::Ttft, MetricStat::P95);
    assert_eq!(
        rows[2].server.map(|server| server.brief()),
        Some("waiting 9 · KV 98 %".to_owned())
    );
    assert_eq!(rows[2].server_cells(), ["9", "98 %"]);
    assert_eq!(rows[3].server, None, "a step that did not scrape");
    assert_eq!(rows[3].server_cells(), ["–", "–"]);
    let plain = [closed(1, Some("s2")), closed(2, Some("s2"))];
    let plain: Vec<&OpenedArtifact> = plain.iter().collect();
    assert!(!has_server_figures(&capacity_series(&plain)));
}

#[test]
fn a_group_of_repeats_shows_the_mean_of_its_servers_figures() {
    let runs = [
        scraped(4, 2.0, 0.5, Some(("g", 0))),
        scraped(4, 4.0, 0.7, Some(("g", 1))),
    ];
    let refs: Vec<&OpenedArtifact> = runs.iter().collect();
    let series = capacity_series(&refs);
    let server = series[0].points[0].server.expect("figures");
    assert_eq!(server.waiting_peak, Some(3.0));
    assert!((server.kv_cache_peak_percent.unwrap_or_default() - 60.0).abs() < 1e-9);
}
