//! Tests of building, writing and recomputing artifacts.

use crate::core::artifact::build::build_artifact;
use crate::core::artifact::build::RunTiming;
use crate::core::artifact::client::WarmupError;
use crate::core::artifact::metrics::row_field_value;
use crate::core::artifact::metrics::DISTRIBUTION_FAMILIES;
use crate::core::artifact::recompute::missing_row_input;
use crate::core::artifact::recompute::parse_row;
use crate::core::artifact::recompute::rate_over_wall;
use crate::core::artifact::recompute::recompute_from_rows;
use crate::core::artifact::recompute::values_identical;
use crate::core::artifact::recompute::wall_seconds_candidates;
use crate::core::config::settings::RunConfig;
use crate::core::observe::accumulate::ReadStats;
use crate::core::observe::conclude::CompletedRequest;
use crate::core::observe::conclude::RequestOutcome;
use crate::core::observe::failure::RequestError;
use crate::core::observe::row::RowInputs;
use crate::core::observe::transport::ResourceTimingEntry;
use crate::core::plan::RunPlan;
use crate::core::read::validate::report::SCHEMA;
use crate::core::schema;
use crate::core::schema::browser_clock;
use crate::core::schema::client::ClientSseCounts;
use crate::core::schema::client::ClientWarmup;
use crate::core::schema::client::WarmupConnections;
use crate::core::schema::error::ArtifactError;
use crate::core::schema::generation::Generation;
use crate::core::schema::p99_interpretation;
use crate::core::schema::rows::FailureRecord;
use crate::core::schema::rows::OutputTokenSource;
use crate::core::schema::rows::RequestTiming;
use crate::core::schema::MetricPopulation;
use crate::core::schema::{P99_DESCRIPTIVE_ONLY, P99_TAIL_ESTIMATE, REDACTED_BASE_URL};
use serde_json::json;
use serde_json::Map;
use std::collections::BTreeSet;

fn small_config(requests: u64) -> RunConfig {
    RunConfig {
        base_url: "http://127.0.0.1:8000/v1".to_owned(),
        model: "test-model".to_owned(),
        requests,
        concurrency: 1,
        context_tokens: 1024,
        ..RunConfig::default()
    }
}

fn small_plan(requests: u64) -> (RunConfig, RunPlan) {
    let config = small_config(requests);
    let plan = RunPlan::new(&config, None).expect("a valid plan");
    (config, plan)
}

/// The artifact of `plan` when its one request completed.
fn one_row_artifact(config: &RunConfig, plan: &RunPlan) -> schema::ArtifactV1 {
    build_artifact(
        config,
        plan,
        vec![completed(0, 0.5, 1.0, 10)],
        timing(),
        None,
    )
    .expect("builds")
}

fn timing() -> RunTiming {
    RunTiming {
        started_at_unix_ns: 1_700_000_000_000_000_000,
        finished_at_unix_ns: 1_700_000_002_000_000_000,
        wall_seconds: 2.0,
    }
}

/// A usage-counted result of request `index` with the given times (seconds).
fn completed(index: u64, ttft_s: f64, e2e_s: f64, out: u64) -> RequestOutcome {
    let row = RequestTiming::from_seconds(RowInputs {
        request_index: index,
        planned_context_tokens: 1024,
        ttfo_s: None,
        ttft_s: Some(ttft_s),
        e2e_s,
        prompt_tokens: Some(1000),
        out_toks: Some(out),
        output_token_source: Some(OutputTokenSource::Usage),
        reasoning_chunks: 0,
        content_chunks: out,
        request_canary: None,
        controlled_output: None,
        visible_content_truncated: false,
        cached_tokens: None,
        started_at_ms: None,
        chunk_arrivals_ms: None,
    });
    RequestOutcome::Completed(CompletedRequest {
        request_index: index,
        row,
        out_toks: out,
        output_token_source: OutputTokenSource::Usage,
        content_chunks: out,
        reasoning_chunks: 0,
        prompt_tokens: Some(1000),
        cached_tokens: None,
        cached_fraction: None,
        read_stats: ReadStats::default(),
    })
}

fn cancelled(index: u64) -> RequestOutcome {
    RequestOutcome::Failed(FailureRecord::request_error(
        index,
        1024,
        &RequestError::cancelled(),
        0.0,
    ))
}

#[test]
fn file_names_keep_only_safe_characters() {
    let (config, plan) = small_plan(1);
    let mut artifact = one_row_artifact(&config, &plan);
    assert_eq!(artifact.file_name(), "benchmark-20231114T221320Z.json");
    artifact.run_id = "run/../é id:1".to_owned();
    assert_eq!(artifact.file_name(), "run_..___id_1.json");
    artifact.run_id = "..".to_owned();
    assert_eq!(artifact.file_name(), "benchmark...json");
    artifact.run_id = String::new();
    assert_eq!(artifact.file_name(), "benchmark.json");
}

#[test]
fn a_repeat_names_its_file_after_its_number_stays_valid_and_reads_back() {
    use crate::core::read::opened::OpenedArtifact;
    use crate::core::schema::repeat::RepeatBlock;
    let config = RunConfig {
        engine: Some("strobe-sim".to_owned()),
        ..small_config(1)
    };
    let plan = RunPlan::new(&config, None).expect("a valid plan");
    let mut artifact = one_row_artifact(&config, &plan);
    artifact.repeat = Some(RepeatBlock {
        group_id: "repeat-20231114T221320Z".to_owned(),
        index: 2,
        count: 3,
    });
    assert_eq!(
        artifact.file_name(),
        "benchmark-20231114T221320Z-repeat03.json",
        "three repeats in one second still get three names"
    );
    let text = artifact.to_json_text().expect("writes");
    let report = crate::core::read::validate::validate_artifact_text(&text);
    assert!(report.is_acceptable(), "{report}");
    let parsed: schema::ArtifactV1 = serde_json::from_str(&text).expect("reads back");
    assert_eq!(parsed.repeat, artifact.repeat);
    let opened = OpenedArtifact::from_text("r.json", &text)
        .repeat
        .expect("a repeat");
    assert_eq!(
        (
            opened.group_id.map(|id| id.to_string()),
            opened.index,
            opened.count
        ),
        (Some("repeat-20231114T221320Z".to_owned()), Some(2), Some(3))
    );
    // Without repeats the key is absent, so every v1 reader sees the file it always saw.
    artifact.repeat = None;
    let value: serde_json::Value =
        serde_json::from_str(&artifact.to_json_text().expect("writes")).expect("JSON");
    assert!(value.get("repeat").is_none());
}

#[test]
fn a_sweep_step_names_its_file_after_its_step_and_stays_valid() {
    use crate::core::schema::sweep::{SweepBlock, SweepVariable};
    // A valid file names its engine.
    let config = RunConfig {
        engine: Some("strobe-sim".to_owned()),
        ..small_config(1)
    };
    let plan = RunPlan::new(&config, None).expect("a valid plan");
    let mut artifact = one_row_artifact(&config, &plan);
    artifact.sweep = Some(SweepBlock {
        id: "sweep-benchmark-20231114T221320Z".to_owned(),
        step_index: 1,
        step_count: 4,
        variable: SweepVariable::Rate,
        value: 2.5,
        spec: "rate:1,2.5".to_owned(),
        stop_reason: None,
    });
    assert_eq!(
        artifact.file_name(),
        "benchmark-20231114T221320Z-step02-rate-2.5.json",
        "two steps in one second still get two names"
    );
    // The file keeps the block and the validator accepts it.
    let text = artifact.to_json_text().expect("writes");
    let value: serde_json::Value = serde_json::from_str(&text).expect("JSON");
    assert_eq!(value["sweep"]["variable"], "rate");
    assert_eq!(value["sweep"]["stop_reason"], serde_json::Value::Null);
    let report = crate::core::read::validate::validate_artifact_text(&text);
    assert!(report.is_acceptable(), "{report}");
    let parsed: schema::ArtifactV1 = serde_json::from_str(&text).expect("reads back");
    assert_eq!(parsed.sweep, artifact.sweep);
}

#[test]
fn browser_clock_uses_python_float_repr() {
    assert_eq!(
        browser_clock(0.005, true).ok().as_deref(),
        Some("browser performance.now(); resolution 0.005 ms; cross-origin isolated: true")
    );
    assert_eq!(
        browser_clock(0.00001, false).ok().as_deref(),
        Some("browser performance.now(); resolution 1e-05 ms; cross-origin isolated: false")
    );
    assert_eq!(
        browser_clock(100.0, false).ok().as_deref(),
        Some("browser performance.now(); resolution 100.0 ms; cross-origin isolated: false")
    );
    assert!(matches!(
        browser_clock(f64::NAN, true),
        Err(ArtifactError::NonFiniteValue { .. })
    ));
}

#[test]
fn p99_is_a_tail_estimate_from_100_samples() {
    assert_eq!(p99_interpretation(99), P99_DESCRIPTIVE_ONLY);
    assert_eq!(p99_interpretation(100), P99_TAIL_ESTIMATE);
    let mut metrics = Map::new();
    metrics.insert("ttft_samples".to_owned(), json!(100));
    metrics.insert("e2e_samples".to_owned(), json!(99));
    metrics.insert("throughput_performance_eligible".to_owned(), json!(true));
    let population = MetricPopulation::from_metrics(120, 100, 20, &metrics);
    assert_eq!(population.p99_interpretation, P99_TAIL_ESTIMATE);
    assert_eq!(
        population.p99_interpretation_by_metric["ttft"],
        P99_TAIL_ESTIMATE
    );
    assert_eq!(
        population.p99_interpretation_by_metric["e2e"],
        P99_DESCRIPTIVE_ONLY
    );
    assert_eq!(population.p99_samples_by_metric["tpot"], 0);
    assert_eq!(population.performance_eligible_requests, 100);
    assert!(population.aggregate_throughput_eligible);
}

#[test]
fn identical_means_same_type_and_bits() {
    assert!(values_identical(&json!(1), &json!(1)));
    assert!(!values_identical(&json!(1), &json!(1.0)));
    assert!(!values_identical(&json!(0.0), &json!(-0.0)));
    assert!(values_identical(
        &json!({"a": [1.5, null]}),
        &json!({"a": [1.5, null]})
    ));
    assert!(!values_identical(
        &json!({"a": 1}),
        &json!({"a": 1, "b": 2})
    ));
    assert!(!values_identical(&json!([1.0]), &json!([1.0, 2.0])));
}

#[test]
fn every_family_reads_a_row_field() {
    let RequestOutcome::Completed(result) = completed(0, 0.5, 1.0, 10) else {
        panic!("a completed outcome")
    };
    let row = result.row.expect("a row");
    for family in DISTRIBUTION_FAMILIES {
        assert!(
            row_field_value(&row, family.row_field).is_some(),
            "{}",
            family.row_field
        );
    }
}

#[test]
fn every_planned_request_needs_exactly_one_outcome() {
    let (config, plan) = small_plan(3);
    let build = |outcomes| build_artifact(&config, &plan, outcomes, timing(), None);
    assert_eq!(
        build(vec![completed(0, 0.5, 1.0, 10), cancelled(2)]).err(),
        Some(ArtifactError::MissingOutcomes {
            missing: 1,
            first: vec![1]
        })
    );
    assert_eq!(
        build(vec![completed(0, 0.5, 1.0, 10), cancelled(0), cancelled(1)]).err(),
        Some(ArtifactError::DuplicateOutcome { request_index: 0 })
    );
    assert_eq!(
        build(vec![cancelled(0), cancelled(1), cancelled(2), cancelled(3)]).err(),
        Some(ArtifactError::OutcomeOutsidePlan {
            request_index: 3,
            requests: 3
        })
    );
    let all = build(vec![cancelled(2), completed(1, 0.5, 1.0, 10), cancelled(0)])
        .expect("one outcome each");
    let failed: Vec<u64> = all.failures.iter().map(|f| f.request_index).collect();
    assert_eq!(failed, vec![0, 2]);
    assert_eq!((all.completed, all.failed), (1, 2));
}

#[test]
fn outcomes_must_agree_with_the_plan() {
    let (config, plan) = small_plan(1);
    let mut other = config.clone();
    other.model = "another-model".to_owned();
    assert_eq!(
        build_artifact(&other, &plan, vec![cancelled(0)], timing(), None).err(),
        Some(ArtifactError::ConfigDoesNotMatchPlan)
    );
    let RequestOutcome::Completed(mut result) = completed(0, 0.5, 1.0, 10) else {
        panic!("a completed outcome")
    };
    if let Some(row) = result.row.as_mut() {
        row.planned_context_tokens = 2048;
    }
    assert_eq!(
        build_artifact(
            &config,
            &plan,
            vec![RequestOutcome::Completed(result.clone())],
            timing(),
            None
        )
        .err(),
        Some(ArtifactError::PlannedContextMismatch {
            request_index: 0,
            planned: 1024,
            recorded: 2048
        })
    );
    if let Some(row) = result.row.as_mut() {
        row.planned_context_tokens = 1024;
        row.request_index = 7;
    }
    assert_eq!(
        build_artifact(
            &config,
            &plan,
            vec![RequestOutcome::Completed(result)],
            timing(),
            None
        )
        .err(),
        Some(ArtifactError::RowIndexMismatch {
            request_index: 0,
            row_index: 7
        })
    );
}

#[test]
fn impossible_times_are_errors_not_nulls() {
    let (config, plan) = small_plan(1);
    let build = |outcome, timing| build_artifact(&config, &plan, vec![outcome], timing, None);
    let nan_wall = RunTiming {
        wall_seconds: f64::NAN,
        ..timing()
    };
    assert!(matches!(
        build(cancelled(0), nan_wall),
        Err(ArtifactError::NonFiniteValue { .. })
    ));
    let negative_wall = RunTiming {
        wall_seconds: -1.0,
        ..timing()
    };
    assert!(matches!(
        build(cancelled(0), negative_wall),
        Err(ArtifactError::NegativeWallTime { .. })
    ));
    let backwards = RunTiming {
        finished_at_unix_ns: timing().started_at_unix_ns - 1,
        ..timing()
    };
    assert!(matches!(
        build(cancelled(0), backwards),
        Err(ArtifactError::FinishedBeforeStarted { .. })
    ));
    let RequestOutcome::Completed(mut result) = completed(0, 0.5, 1.0, 10) else {
        panic!("a completed outcome")
    };
    if let Some(row) = result.row.as_mut() {
        row.started_at_ms = Some(f64::INFINITY);
    }
    let error = build(RequestOutcome::Completed(result), timing()).err();
    assert_eq!(
        error,
        Some(ArtifactError::NonFiniteValue {
            field: "request 0.started_at_ms".to_owned(),
            value: f64::INFINITY
        })
    );
}

#[test]
fn writing_refuses_a_non_finite_field_set_after_building() {
    let (config, plan) = small_plan(1);
    let mut artifact = one_row_artifact(&config, &plan);
    assert!(artifact.to_json_text().is_ok());
    artifact.request_timings[0].e2e_ms = f64::NAN;
    assert!(matches!(
        artifact.to_json_text(),
        Err(ArtifactError::NonFiniteValue { field, .. }) if field == "request_timings[0].e2e_ms"
    ));
}

#[test]
fn redaction_replaces_only_the_base_url() {
    let (config, plan) = small_plan(1);
    let mut artifact = one_row_artifact(&config, &plan);
    let before = artifact.clone();
    artifact.redact_base_url();
    assert_eq!(artifact.base_url, REDACTED_BASE_URL);
    artifact.base_url = before.base_url.clone();
    assert_eq!(artifact, before);
}

#[test]
fn a_check_round_is_ready_only_when_its_requests_overlapped_on_open_connections() {
    use WarmupConnections::*;
    // Values shaped like Chromium 156 entries: a reused connection has every connection
    // time equal to fetchStart.
    let entry = |start: f64, sent: f64, end: f64, opened: bool| ResourceTimingEntry {
        start_time_ms: start,
        fetch_start_ms: start,
        connect_start_ms: start,
        connect_end_ms: if opened { start + 0.4 } else { start },
        request_start_ms: sent,
        next_hop_protocol: "http/1.1".to_owned(),
        response_end_ms: end,
    };
    let a = entry(100.0, 100.3, 160.0, false);
    let b = entry(100.5, 100.9, 161.0, false);
    let c = entry(100.9, 101.2, 162.0, false);
    assert_eq!(
        WarmupConnections::of_round(&[vec![Some(&a), Some(&b), Some(&c)]]),
        Ready
    );
    // Each endpoint is judged on its own requests.
    assert_eq!(
        WarmupConnections::of_round(&[vec![Some(&a), Some(&b)], vec![Some(&c)]]),
        Ready
    );
    // A request sent after another's answer had ended may have used that connection.
    let late = entry(101.0, 170.0, 230.0, false);
    assert_eq!(
        WarmupConnections::of_round(&[vec![Some(&a), Some(&late)]]),
        NotShown
    );
    // One opened connection decides it, whatever else the round saw.
    let opened = entry(101.0, 102.0, 170.0, true);
    let withheld = ResourceTimingEntry {
        start_time_ms: 101.0,
        fetch_start_ms: 101.0,
        response_end_ms: 150.0,
        ..ResourceTimingEntry::default()
    };
    assert_eq!(
        WarmupConnections::of_round(&[vec![Some(&a), None], vec![Some(&withheld), Some(&opened)]]),
        StillOpening
    );
    assert_eq!(
        WarmupConnections::of_round(&[vec![Some(&a), None]]),
        Unknown
    );
    assert_eq!(
        WarmupConnections::of_round(&[vec![Some(&a), Some(&withheld)]]),
        Unknown
    );
    // HTTP/2 multiplexes every slot over one connection: nothing to overlap.
    let h2 = ResourceTimingEntry {
        next_hop_protocol: "h2".to_owned(),
        ..late.clone()
    };
    let h2_first = ResourceTimingEntry {
        next_hop_protocol: "h2".to_owned(),
        ..a.clone()
    };
    assert_eq!(
        WarmupConnections::of_round(&[vec![Some(&h2_first), Some(&h2)]]),
        Ready
    );
    // An endpoint with no slot sends nothing and has nothing to open.
    assert_eq!(
        WarmupConnections::of_round(&[vec![Some(&a)], vec![]]),
        Ready
    );
    assert!(StillOpening.worth_another_round());
    assert!(NotShown.worth_another_round());
    assert!(!Ready.worth_another_round());
    assert!(!Unknown.worth_another_round());
}

#[test]
fn a_warmup_either_records_itself_or_says_what_failed() {
    assert_eq!(
        WarmupError::check(4, 38.5, []),
        Ok(ClientWarmup {
            requests: 4,
            duration_ms: 38.5,
            failures: 0,
            check_rounds: None,
            connections: None,
        })
    );
    let refused = RequestError::fetch_failed("Failed to fetch");
    let result = WarmupError::check(
        4,
        2.0,
        [refused.clone(), RequestError::http_status(500, "", "", &[])],
    );
    assert_eq!(
        result,
        Err(WarmupError::Failed {
            failed: 2,
            requests: 4,
            first: refused
        })
    );
    let message = result
        .err()
        .map(|error| error.to_string())
        .unwrap_or_default();
    assert!(
        message.starts_with(
            "the warm-up failed, so no request was measured: 2 of 4 warm-up requests \
             failed, the first with TypeError: Failed to fetch (the server is unreachable"
        ),
        "{message}"
    );
    assert!(message.contains("fix what the error names"), "{message}");
    assert_eq!(
        WarmupError::Cancelled.to_string(),
        "the run was cancelled during the warm-up, before any request was measured"
    );
}

#[test]
fn sse_counts_sum_completed_requests() {
    let RequestOutcome::Completed(mut first) = completed(0, 0.5, 1.0, 10) else {
        panic!("a completed outcome")
    };
    first.read_stats = ReadStats {
        reads: 3,
        events: 7,
        events_sharing_a_read: 5,
        ignored_payloads: 1,
    };
    let mut second = first.clone();
    second.request_index = 1;
    // A third whose 9 events came in 2 reads: buffered on its way.
    let mut third = first.clone();
    third.request_index = 3;
    third.read_stats = ReadStats {
        reads: 2,
        events: 9,
        events_sharing_a_read: 9,
        ignored_payloads: 0,
    };
    let outcomes = vec![
        RequestOutcome::Completed(first),
        cancelled(2),
        RequestOutcome::Completed(second),
        RequestOutcome::Completed(third),
    ];
    let counts = ClientSseCounts::of_outcomes(&outcomes);
    assert_eq!(
        counts,
        ClientSseCounts {
            reads: 8,
            events: 23,
            events_sharing_a_read: 19,
            buffered_streams: 1,
        }
    );
    let json = serde_json::to_value(counts).expect("serializes");
    assert_eq!(json["buffered_streams"], 1);
    let clean = ClientSseCounts::of_outcomes(&outcomes[..3]);
    let json = serde_json::to_value(clean).expect("serializes");
    assert!(
        json.get("buffered_streams").is_none(),
        "omitted when none: {json}"
    );
}

#[test]
fn wall_time_candidates_are_every_consistent_inverse() {
    // A real G3 wall time whose producer held the float just below 612139.659200002 / 1000.
    let wall_ms = 612_139.659_200_002;
    let candidates = wall_seconds_candidates(wall_ms);
    assert_eq!(candidates.len(), 2);
    assert_eq!(candidates[0], wall_ms / 1000.0);
    assert!(candidates.iter().all(|seconds| seconds * 1000.0 == wall_ms));
    let stored = json!(7.59630572878913);
    assert_eq!(rate_over_wall(4650, &candidates, &stored), stored);
    // Without a match the primary inverse is reported.
    assert_eq!(
        rate_over_wall(4650, &candidates, &json!(1.0)),
        json!(4650.0 / (wall_ms / 1000.0))
    );
    assert_eq!(wall_seconds_candidates(0.0), vec![0.0]);
}

#[test]
fn the_oldest_g3_rows_get_stand_ins_and_their_metrics_are_skipped() {
    let row = json!({"request_index": 0, "planned_context_tokens": 32000,
        "prompt_tokens": 30000, "output_tokens": 101, "output_token_source": "usage",
        "ttft_ms": 2000.0, "e2e_ms": 3000.0, "generation_ms": 1000.0,
        "effective_prefill_tok_s": 15000.0, "decode_tok_s": 100.0,
        "mean_inter_token_latency_ms": 10.0});
    let mut filled = BTreeSet::new();
    let parsed = parse_row(0, &row, &mut filled).expect("parses");
    assert_eq!(parsed.time_to_first_output_ms, 2000.0);
    let expected: BTreeSet<&str> = [
        "time_to_first_output_ms",
        "reasoning_chunks",
        "content_chunks",
        "visible_generation_ms",
        "visible_content_truncated",
    ]
    .into_iter()
    .collect();
    assert_eq!(filled, expected);
    assert_eq!(
        missing_row_input("content_chunks_s", &filled),
        Some("content_chunks")
    );
    assert_eq!(
        missing_row_input("time_to_first_output_p50_ms", &filled),
        Some("time_to_first_output_ms")
    );
    assert_eq!(missing_row_input("ttft_p50_ms", &filled), None);
    assert_eq!(missing_row_input("prompt_tokens", &filled), None);
    let artifact = json!({"schema": SCHEMA, "measurement_protocol": "capacity-v3",
        "requests": 1, "completed": 1, "failed": 0, "failures": [],
        "wall_clock_ms": 3100.0, "request_timings": [row],
        "metrics": {"content_chunks": 7, "ttft_p50_ms": 2000.0, "output_tokens": 101,
                    "throughput_tok_s": 101.0 / 3.1}});
    let report = recompute_from_rows(&artifact).expect("recomputable");
    assert!(report.diffs.is_empty(), "{:#?}", report.diffs);
    let skipped: Vec<&str> = report.skipped.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(
        skipped,
        vec!["$.metrics.content_chunks", "$.measurement_protocol"]
    );
    // generation_ms, prefill, decode, ITL of the row; ttft p50, tokens, throughput.
    assert_eq!(report.exact, 4 + 3);
}

#[test]
fn legacy_generations_without_rows_are_not_recomputable() {
    let g1 = json!({"schema": SCHEMA, "metrics": {}, "requests": 1, "completed": 1});
    assert!(matches!(
        recompute_from_rows(&g1),
        Err(ArtifactError::NotRecomputable {
            generation: Generation::G1LegacyMinimal,
            ..
        })
    ));
    let g2 = json!({"schema": SCHEMA, "measurement_protocol": "capacity-v2"});
    let error = recompute_from_rows(&g2)
        .err()
        .map(|error| error.to_string());
    assert!(
        error
            .as_deref()
            .is_some_and(|text| text.contains("G2") && text.contains("no request_timings")),
        "{error:?}"
    );
    assert!(matches!(
        recompute_from_rows(&json!([1, 2])),
        Err(ArtifactError::NotRecomputable {
            generation: Generation::Unknown,
            ..
        })
    ));
    let error = recompute_from_rows(&json!([1, 2]))
        .err()
        .map(|error| error.to_string());
    assert_eq!(
        error.as_deref(),
        Some(
            "cannot recompute this file: the top level is not a JSON object, so it is not an \
             artifact"
        )
    );
    let bad_row = json!({"schema": SCHEMA, "request_canaries": true, "request_timings": [{"ttft_ms": "fast"}]});
    assert!(matches!(
        recompute_from_rows(&bad_row),
        Err(ArtifactError::MalformedField { path, .. }) if path == "$.request_timings[0]"
    ));
}

/// An open-loop config: four requests at 4 a second, constant gaps, at most two in flight.
fn rate_config() -> RunConfig {
    use crate::core::config::choices::{Arrivals, LoadMode};
    use crate::core::config::load::LoadOptions;
    RunConfig {
        concurrency: 2,
        engine: Some("strobe-sim".to_owned()),
        load: LoadOptions {
            mode: LoadMode::Rate,
            rate: 4.0,
            arrivals: Arrivals::Constant,
            ..LoadOptions::default()
        },
        ..small_config(4)
    }
}

#[test]
fn an_open_loop_run_records_its_load_and_how_it_was_kept() {
    use crate::core::observe::dispatch::DispatchFacts;
    use crate::core::schema::load::LagSummary;
    let config = rate_config();
    let plan = RunPlan::new(&config, None).expect("plan");
    assert_eq!(
        plan.arrival_times_ms(),
        Some(&[0.0, 250.0, 500.0, 750.0][..])
    );
    // Sent 1, 2, 1 and 12 ms late; the last waited 10 ms for a slot.
    let sends = [
        (0.0, 1.0, 0.0),
        (250.0, 252.0, 0.0),
        (500.0, 501.0, 0.0),
        (750.0, 762.0, 10.0),
    ];
    let outcomes: Vec<RequestOutcome> = sends
        .iter()
        .enumerate()
        .map(|(index, &(scheduled_ms, sent_ms, cap_wait_ms))| {
            let mut outcome = completed(index as u64, 0.05, 0.3, 10);
            outcome.set_dispatch(&DispatchFacts {
                scheduled_ms,
                sent_ms,
                cap_wait_ms,
            });
            outcome
        })
        .collect();
    let artifact = build_artifact(&config, &plan, outcomes, timing(), None).expect("builds");
    let load = artifact
        .load
        .as_ref()
        .expect("an open loop has a load block");
    assert_eq!(load.cap, 2);
    assert_eq!((load.scheduled_requests, load.sent_requests), (4, 4));
    assert_eq!(load.offered_rate, Some(4.0));
    assert_eq!(load.achieved_rate, Some(3.0 / 0.761));
    assert_eq!(load.completed_per_s, Some(2.0), "4 in the 2 s wall time");
    assert_eq!(
        load.dispatch_lag_ms,
        LagSummary {
            p50: Some(1.0),
            p95: Some(12.0),
            max: Some(12.0)
        }
    );
    assert_eq!((load.late_sends, load.capped_sends), (1, 1));
    assert!(!load.schedule_kept && load.throttled);
    assert_eq!(load.max_in_flight, 2, "each request takes 300 ms");
    let row = &artifact.request_timings[3];
    assert_eq!(
        (row.scheduled_ms, row.dispatch_lag_ms, row.cap_wait_ms),
        (Some(750.0), Some(12.0), Some(10.0))
    );
    // The file keeps it, and the reader and the validator take it.
    let text = artifact.to_json_text().expect("writes");
    let value: serde_json::Value = serde_json::from_str(&text).expect("JSON");
    assert_eq!(value["load"]["mode"], "rate");
    assert_eq!(value["load"]["arrivals"], "constant");
    assert_eq!(value["load"]["burstiness"], serde_json::Value::Null);
    assert_eq!(value["request_timings"][0]["scheduled_ms"], 0.0);
    let report = crate::core::read::validate::validate_artifact_text(&text);
    assert!(report.is_acceptable(), "{report}");
    let parsed: schema::ArtifactV1 = serde_json::from_str(&text).expect("reads back");
    assert_eq!(parsed.load, artifact.load);
}

#[test]
fn a_closed_loop_run_has_no_load_block_and_no_dispatch_keys() {
    let (config, plan) = small_plan(2);
    assert_eq!(plan.arrival_times_ms(), None);
    let outcomes = vec![completed(0, 0.05, 0.15, 10), completed(1, 0.05, 0.15, 10)];
    let artifact = build_artifact(&config, &plan, outcomes, timing(), None).expect("builds");
    assert_eq!(artifact.load, None);
    let value: serde_json::Value =
        serde_json::from_str(&artifact.to_json_text().expect("writes")).expect("JSON");
    assert!(value.get("load").is_none());
    assert!(value["request_timings"][0].get("scheduled_ms").is_none());
}

#[test]
fn a_duration_sets_how_many_requests_an_open_loop_has() {
    let mut config = rate_config();
    config.requests = 100;
    config.load.duration_s = Some(0.8);
    let plan = RunPlan::new(&config, None).expect("plan");
    assert_eq!(plan.requests(), 4, "due at 0, 250, 500 and 750 ms");
    assert_eq!(plan.planned_context_tokens().len(), 4);
}

#[test]
fn a_server_metrics_block_stays_valid_reads_back_and_refuses_nan() {
    use crate::core::schema::server_metrics::ServerMetricsBlock;
    use crate::core::telemetry::beside::{beside_client, ClientFigures};
    use crate::core::telemetry::engines::Family;
    use crate::core::telemetry::sample_from_answer;
    use crate::core::telemetry::summary::{summarize, Window};
    let config = RunConfig {
        engine: Some("strobe-sim".to_owned()),
        ..small_config(1)
    };
    let plan = RunPlan::new(&config, None).expect("a valid plan");
    let mut artifact = one_row_artifact(&config, &plan);
    let answers: [(f64, &[u8]); 3] = [
        (
            -25.0,
            b"vllm:num_requests_running 0\nvllm:prompt_tokens_total 10\n\
              vllm:time_to_first_token_seconds_bucket{le=\"0.1\"} 0\n\
              vllm:time_to_first_token_seconds_bucket{le=\"+Inf\"} 0\n\
              vllm:time_to_first_token_seconds_sum 0\nvllm:time_to_first_token_seconds_count 0\n",
        ),
        (
            500.0,
            b"vllm:num_requests_running 1\nvllm:prompt_tokens_total 30\n",
        ),
        (
            1100.0,
            b"vllm:num_requests_running 0\nvllm:prompt_tokens_total 52\n\
              vllm:time_to_first_token_seconds_bucket{le=\"0.1\"} 1\n\
              vllm:time_to_first_token_seconds_bucket{le=\"+Inf\"} 1\n\
              vllm:time_to_first_token_seconds_sum 0.05\nvllm:time_to_first_token_seconds_count 1\n",
        ),
    ];
    let samples: Vec<_> = answers
        .iter()
        .map(|(t_ms, body)| sample_from_answer(*t_ms, 1.5, body).0)
        .collect();
    let window = Window {
        start_ms: 0.0,
        end_ms: 1000.0,
    };
    let mut summary = summarize(&samples, Family::Vllm, window);
    assert_eq!(summary.counters["prompt_tokens"].delta, 42.0);
    assert_eq!(summary.histograms["ttft"].mean_ms, Some(50.0));
    let client = ClientFigures::of_artifact(&artifact.metrics, &artifact.request_timings);
    summary.beside_client = Some(beside_client(&summary, &client));
    artifact.server_metrics = Some(ServerMetricsBlock {
        source: "http://127.0.0.1:8000/metrics".to_owned(),
        interval_ms: 500,
        family: Family::Vllm.as_str().to_owned(),
        samples,
        summary: Some(summary),
        notes: vec!["1 scrape was refused (HTTP 503)".to_owned()],
    });
    let text = artifact.to_json_text().expect("writes");
    let report = crate::core::read::validate::validate_artifact_text(&text);
    assert!(report.is_acceptable(), "{report}");
    let parsed: schema::ArtifactV1 = serde_json::from_str(&text).expect("reads back");
    assert_eq!(parsed.server_metrics, artifact.server_metrics);
    let value: serde_json::Value = serde_json::from_str(&text).expect("JSON");
    assert_eq!(
        value["server_metrics"]["samples"][2]["values"]["vllm:prompt_tokens_total"],
        52.0
    );
    assert_eq!(
        value["server_metrics"]["summary"]["gauges"]["running"]["max"],
        1.0
    );
    // The one row's TTFT beside the server's: client − server.
    let ttft = &value["server_metrics"]["summary"]["beside_client"]["ttft"];
    assert_eq!(ttft["server_mean_ms"], 50.0);
    assert!(ttft["mean_gap_ms"].is_number(), "{ttft}");

    // A non-finite number is refused by name rather than written as null.
    let mut broken = artifact.clone();
    if let Some(block) = broken.server_metrics.as_mut() {
        block.samples[1].latency_ms = f64::NAN;
    }
    match broken.to_json_text() {
        Err(ArtifactError::NonFiniteValue { field, .. }) => {
            assert_eq!(field, "server_metrics.samples[1].latency_ms");
        }
        other => panic!("a NaN must be refused, got {other:?}"),
    }

    // Without scraping the key is absent, so every v1 reader sees the file it always saw.
    artifact.server_metrics = None;
    let value: serde_json::Value =
        serde_json::from_str(&artifact.to_json_text().expect("writes")).expect("JSON");
    assert!(value.get("server_metrics").is_none());
}

#[test]
fn a_prefix_cache_reset_block_stays_valid_reads_back_and_refuses_nan() {
    use crate::core::config::choices::PrefixCacheReset;
    use crate::core::schema::cache_reset::{ResetRecord, ResetVerdict};
    use crate::core::telemetry::reset::{reset_block, RunFacts};
    let config = RunConfig {
        engine: Some("vllm".to_owned()),
        ..small_config(1)
    };
    let plan = RunPlan::new(&config, None).expect("a valid plan");
    let mut artifact = one_row_artifact(&config, &plan);
    let reset = ResetRecord {
        engine: "vllm".to_owned(),
        method: "POST".to_owned(),
        url: "http://127.0.0.1:8000/reset_prefix_cache".to_owned(),
        status: 200,
        attempts: 1,
        t_ms: -120.25,
        latency_ms: 0.75,
        counters_before: Some([("prefix_cache_hits".to_owned(), 512.0)].into()),
        counters_after: Some([("prefix_cache_hits".to_owned(), 512.0)].into()),
    };
    let block = reset_block(
        PrefixCacheReset::BeforeEachStep,
        Some(reset),
        &RunFacts::of(&artifact),
    );
    assert_eq!(
        block.check.verdict,
        ResetVerdict::Unchecked,
        "no usage in the row"
    );
    artifact.prefix_cache_reset = Some(block);
    let text = artifact.to_json_text().expect("writes");
    let report = crate::core::read::validate::validate_artifact_text(&text);
    assert!(report.is_acceptable(), "{report}");
    let parsed: schema::ArtifactV1 = serde_json::from_str(&text).expect("reads back");
    assert_eq!(parsed.prefix_cache_reset, artifact.prefix_cache_reset);
    let value: serde_json::Value = serde_json::from_str(&text).expect("JSON");
    assert_eq!(value["prefix_cache_reset"]["reset"]["t_ms"], -120.25);

    let mut broken = artifact.clone();
    if let Some(reset) = broken
        .prefix_cache_reset
        .as_mut()
        .and_then(|block| block.reset.as_mut())
    {
        reset.latency_ms = f64::INFINITY;
    }
    match broken.to_json_text() {
        Err(ArtifactError::NonFiniteValue { field, .. }) => {
            assert_eq!(field, "prefix_cache_reset.reset.latency_ms");
        }
        other => panic!("an infinity must be refused, got {other:?}"),
    }
    artifact.prefix_cache_reset = None;
    let value: serde_json::Value =
        serde_json::from_str(&artifact.to_json_text().expect("writes")).expect("JSON");
    assert!(value.get("prefix_cache_reset").is_none());
}
