//! Golden and round-trip tests of the artifact builder: the reference artifact is rebuilt from
//! its settings and raw per-request measurements to the byte; the §10 all-failed strict case,
//! a mixed run and a 200-request run are built through the real observation pipeline, pass the
//! validator, and recompute from their own rows without a single differing bit.

mod common;

use common::{fixture_text, reference_config, reference_text};

#[path = "common/noise.rs"]
mod noise;

use noise::Noise;
use serde_json::{json, Value};
use strobe::core::artifact::build::{build_artifact, RunTiming};
use strobe::core::artifact::recompute::recompute_from_rows;
use strobe::core::config::choices::ControlledOutputPolicy;
use strobe::core::config::choices::{LiveView, MeasurementThread, PromptCacheMode};
use strobe::core::config::settings::RunConfig;
use strobe::core::observe::accumulate::{ReadStats, StreamAccumulator};
use strobe::core::observe::conclude::{
    conclude_request, CompletedRequest, RequestOutcome, RequestPlanFacts,
};
use strobe::core::observe::failure::RequestError;
use strobe::core::observe::row::RowInputs;
use strobe::core::observe::transport::{ResourceTimingEntry, TransportFacts};
use strobe::core::plan::RunPlan;
use strobe::core::read::validate::report::Generation;
use strobe::core::read::validate::{validate_artifact, validate_artifact_text};
use strobe::core::schema::client::{
    ClientBlock, ClientSseCounts, ClientTransport, ClientWarmup, WarmupConnections,
};
use strobe::core::schema::error::ArtifactError;
use strobe::core::schema::rows::{
    FailureClass, FailureRecord, OutputTokenSource, RequestCanary, RequestTiming,
};
use strobe::core::schema::REDACTED_BASE_URL;
use strobe::core::schema::{ArtifactV1, MeasurementProtocol};
use strobe::core::stream::sse::{ChatChunk, ChoiceDelta, ChunkEvent};

// ---------------------------------------------------------------------------------------------
// The reference artifact
// ---------------------------------------------------------------------------------------------

/// Per-request cached prompt tokens the reference rows do not keep (ARTIFACT.md §7.3: the only
/// assignment with zero misses that reproduces its `prefix_cache_hit_avg`).
fn reference_cached_tokens(request_index: u64) -> u64 {
    match request_index {
        0 => 62_320,
        4 => 62_328,
        _ => 0,
    }
}

/// A successful result from raw measurements, as `conclude_request` would have made it from a
/// stream with these readings (times in seconds; usage counts exact).
struct RawResult {
    request_index: u64,
    planned_context_tokens: u64,
    ttfo_s: f64,
    ttft_s: f64,
    e2e_s: f64,
    prompt_tokens: u64,
    output_tokens: u64,
    reasoning_chunks: u64,
    content_chunks: u64,
    cached_tokens: u64,
    request_canary: Option<RequestCanary>,
}

impl RawResult {
    fn into_outcome(self) -> RequestOutcome {
        let row = RequestTiming::from_seconds(RowInputs {
            request_index: self.request_index,
            planned_context_tokens: self.planned_context_tokens,
            ttfo_s: Some(self.ttfo_s),
            ttft_s: Some(self.ttft_s),
            e2e_s: self.e2e_s,
            prompt_tokens: Some(self.prompt_tokens),
            out_toks: Some(self.output_tokens),
            output_token_source: Some(OutputTokenSource::Usage),
            reasoning_chunks: self.reasoning_chunks,
            content_chunks: self.content_chunks,
            request_canary: self.request_canary,
            controlled_output: None,
            visible_content_truncated: false,
            // The reference producer kept no per-row cached tokens or start offsets.
            cached_tokens: None,
            started_at_ms: None,
            chunk_arrivals_ms: None,
        });
        RequestOutcome::Completed(CompletedRequest {
            request_index: self.request_index,
            row,
            out_toks: self.output_tokens,
            output_token_source: OutputTokenSource::Usage,
            content_chunks: self.content_chunks,
            reasoning_chunks: self.reasoning_chunks,
            prompt_tokens: Some(self.prompt_tokens),
            cached_tokens: Some(self.cached_tokens),
            // `StreamResult::cached_fraction`: cached / prompt as floats.
            cached_fraction: Some(self.cached_tokens as f64 / self.prompt_tokens as f64),
            read_stats: ReadStats::default(),
        })
    }
}

fn u64_field(row: &Value, key: &str) -> u64 {
    row[key]
        .as_u64()
        .unwrap_or_else(|| panic!("{key} is an int"))
}

fn f64_field(row: &Value, key: &str) -> f64 {
    row[key]
        .as_f64()
        .unwrap_or_else(|| panic!("{key} is a number"))
}

/// The reference run's outcomes from the raw measurements of its rows: the three times (ms
/// back to the seconds the producer held), the token and chunk counts and the canary object.
fn reference_outcomes(reference: &Value) -> Vec<RequestOutcome> {
    let rows = reference["request_timings"]
        .as_array()
        .expect("request_timings is a list");
    rows.iter()
        .rev() // completion order is not index order; the builder sorts
        .map(|row| {
            let request_index = u64_field(row, "request_index");
            RawResult {
                request_index,
                planned_context_tokens: u64_field(row, "planned_context_tokens"),
                ttfo_s: f64_field(row, "time_to_first_output_ms") / 1000.0,
                ttft_s: f64_field(row, "ttft_ms") / 1000.0,
                e2e_s: f64_field(row, "e2e_ms") / 1000.0,
                prompt_tokens: u64_field(row, "prompt_tokens"),
                output_tokens: u64_field(row, "output_tokens"),
                reasoning_chunks: u64_field(row, "reasoning_chunks"),
                content_chunks: u64_field(row, "content_chunks"),
                cached_tokens: reference_cached_tokens(request_index),
                request_canary: serde_json::from_value(row["request_canary"].clone())
                    .expect("canary object"),
            }
            .into_outcome()
        })
        .collect()
}

fn reference_timing() -> RunTiming {
    RunTiming {
        started_at_unix_ns: 1_791_200_544_279_383_700,
        finished_at_unix_ns: 1_791_200_586_664_844_800,
        wall_seconds: 42_385.458_400_000_06 / 1000.0,
    }
}

fn build_reference() -> ArtifactV1 {
    let reference: Value = serde_json::from_str(&reference_text()).expect("reference parses");
    let config = reference_config();
    let plan = RunPlan::new(&config, Some(262_144)).expect("reference plan");
    build_artifact(
        &config,
        &plan,
        reference_outcomes(&reference),
        reference_timing(),
        None,
    )
    .expect("reference artifact builds")
}

#[test]
fn reference_wall_seconds_give_back_the_stored_wall_clock_ms() {
    let stored = 42_385.458_400_000_06_f64;
    assert_eq!(
        (reference_timing().wall_seconds * 1000.0).to_bits(),
        stored.to_bits()
    );
}

#[test]
fn the_reference_artifact_is_rebuilt_byte_for_byte() {
    let mut artifact = build_reference();
    assert_eq!(artifact.base_url, "http://10.0.0.7:8000/v1");
    artifact.redact_base_url();
    let text = artifact.to_json_text().expect("serializes");
    let expected = format!("{}\n", reference_text());
    if text != expected {
        // Name the first differing line rather than dumping 17 KB twice.
        let (line, (ours, theirs)) = text
            .lines()
            .zip(expected.lines())
            .enumerate()
            .find(|(_, (ours, theirs))| ours != theirs)
            .unwrap_or((0, ("<length differs>", "")));
        panic!("line {}: built {ours:?}, reference {theirs:?}", line + 1);
    }
    assert_eq!(text.len(), 17_691);
    assert_eq!(artifact.file_name(), "benchmark-20261005T114224Z.json");
}

#[test]
fn the_reference_artifact_round_trips_through_the_typed_struct() {
    let parsed: ArtifactV1 = serde_json::from_str(&reference_text()).expect("typed parse");
    assert_eq!(
        parsed.to_json_text().ok(),
        Some(format!("{}\n", reference_text()))
    );
    let mut built = build_reference();
    built.redact_base_url();
    assert_eq!(parsed, built);
}

#[test]
fn the_reference_recomputes_with_zero_mismatches() {
    let value: Value = serde_json::from_str(&reference_text()).expect("reference parses");
    let report = recompute_from_rows(&value).expect("recomputable");
    assert_eq!(report.generation, Generation::Modern);
    assert!(report.diffs.is_empty(), "{:#?}", report.diffs);
    // 6 rows × 7 derived keys, 158 metrics, 3 top-level, 10 metric_population keys, 3 labels.
    assert_eq!(report.exact, 42 + 158 + 3 + 10 + 3);
    let skipped: Vec<&str> = report.skipped.iter().map(|s| s.path.as_str()).collect();
    assert_eq!(skipped, vec!["$.metrics.prefix_cache_hit_avg"]);
    // And the artifact we write for it recomputes the same way.
    let rebuilt: Value =
        serde_json::from_str(&build_reference().to_json_text().expect("serializes"))
            .expect("parses");
    assert_eq!(recompute_from_rows(&rebuilt).ok(), Some(report));
}

#[test]
fn every_real_artifact_with_rows_recomputes_with_zero_mismatches() {
    let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let mut seen = std::collections::BTreeMap::new();
    for directory in ["real", "generations"] {
        let entries = std::fs::read_dir(fixtures.join(directory)).expect("fixture directory");
        for path in entries.filter_map(Result::ok).map(|entry| entry.path()) {
            if path.extension().is_none_or(|ext| ext != "json") {
                continue;
            }
            let text = std::fs::read_to_string(&path).expect("readable");
            let value: Value = serde_json::from_str(&text).expect("parses");
            let name = path.display();
            match recompute_from_rows(&value) {
                Ok(report) => {
                    assert!(report.diffs.is_empty(), "{name}: {:#?}", report.diffs);
                    assert!(report.exact > 20, "{name}: {}", report.exact);
                    *seen.entry(report.generation.id()).or_insert(0) += 1;
                }
                Err(ArtifactError::NotRecomputable { generation, reason }) => {
                    assert!(generation.is_legacy(), "{name}: {generation}");
                    assert!(reason.contains("no request_timings"), "{reason}");
                    *seen.entry(generation.id()).or_insert(0) += 1;
                }
                Err(error) => panic!("{name}: {error}"),
            }
        }
    }
    // 12 real files (2 G1, 2 G2, 6 G3, 2 modern) and 4 generation fixtures (one of each).
    let expected = [
        ("g1-legacy-minimal", 3),
        ("g2", 3),
        ("g3", 7),
        ("modern", 3),
    ];
    assert_eq!(seen, expected.into_iter().collect());
}

#[test]
fn a_tampered_metric_is_named() {
    let mut value: Value = serde_json::from_str(&reference_text()).expect("parses");
    value["metrics"]["ttft_p50_ms"] = json!(8953.168);
    let report = recompute_from_rows(&value).expect("recomputable");
    let paths: Vec<&str> = report.diffs.iter().map(|d| d.path.as_str()).collect();
    assert_eq!(paths, vec!["$.metrics.ttft_p50_ms"]);
    assert_eq!(report.diffs[0].stored, json!(8953.168));
    assert_eq!(report.diffs[0].recomputed, json!(8953.168000000005));
}

#[test]
fn a_tampered_row_shows_at_the_row_and_in_the_metrics_it_feeds() {
    let mut value: Value = serde_json::from_str(&reference_text()).expect("parses");
    // An int where the producer wrote a float is a difference too.
    value["request_timings"][2]["decode_tok_s"] = json!(1);
    let report = recompute_from_rows(&value).expect("recomputable");
    let paths: Vec<&str> = report.diffs.iter().map(|d| d.path.as_str()).collect();
    assert_eq!(paths[0], "$.request_timings[2].decode_tok_s");
    // Metrics are defined over the stored rows (§7.1), so the decode family moves with it.
    assert!(
        paths[1..]
            .iter()
            .all(|path| path.starts_with("$.metrics.decode_tok_s_")),
        "{paths:?}"
    );
    assert!(paths.contains(&"$.metrics.decode_tok_s_min"), "{paths:?}");
}

// ---------------------------------------------------------------------------------------------
// Runs through the observation pipeline
// ---------------------------------------------------------------------------------------------

fn content(text: &str) -> ChunkEvent {
    ChunkEvent::Chunk(ChatChunk {
        choices: vec![ChoiceDelta {
            content: Some(text.to_owned()),
            ..ChoiceDelta::default()
        }],
        usage: None,
    })
}

fn reasoning() -> ChunkEvent {
    ChunkEvent::Chunk(ChatChunk {
        choices: vec![ChoiceDelta {
            reasoning: Some("…".to_owned()),
            ..ChoiceDelta::default()
        }],
        usage: None,
    })
}

fn finish(reason: &str, usage: Option<Value>) -> ChunkEvent {
    ChunkEvent::Chunk(ChatChunk {
        choices: vec![ChoiceDelta {
            finish_reason: Some(reason.to_owned()),
            ..ChoiceDelta::default()
        }],
        usage,
    })
}

fn facts(plan: &RunPlan, request_index: u64) -> RequestPlanFacts {
    let config = plan.config();
    RequestPlanFacts {
        request_index,
        planned_context_tokens: plan.planned_context_tokens()[request_index as usize],
        expected_marker: config
            .request_canaries
            .then(|| plan.marker(request_index as usize)),
        response_words: config.response_words,
        policy: config.controlled_output_policy,
        run_started_ms: 1000.0,
    }
}

/// Streams `reads` (arrival ms, events) for request `request_index` started at `start_ms` and
/// concludes it at `end_ms`.
fn streamed(
    plan: &RunPlan,
    request_index: u64,
    start_ms: f64,
    reads: Vec<(f64, Vec<ChunkEvent>)>,
    end_ms: f64,
) -> RequestOutcome {
    let mut accumulator = StreamAccumulator::new(start_ms);
    for (arrival_ms, events) in &reads {
        accumulator.on_read_events(*arrival_ms, events);
    }
    conclude_request(
        &facts(plan, request_index),
        start_ms,
        accumulator.finish(end_ms),
        end_ms,
    )
}

fn failed(plan: &RunPlan, request_index: u64, error: RequestError, end_ms: f64) -> RequestOutcome {
    conclude_request(&facts(plan, request_index), 1000.0, Err(error), end_ms)
}

/// A run timing consistent with the validator's ns/wall tolerance.
fn timing_for(started_at_unix_ns: i64, wall_ms: f64) -> RunTiming {
    RunTiming {
        started_at_unix_ns,
        finished_at_unix_ns: started_at_unix_ns + (wall_ms * 1e6) as i64 + 1_700,
        wall_seconds: wall_ms / 1000.0,
    }
}

#[track_caller]
fn assert_valid(artifact: &ArtifactV1) -> Value {
    let text = artifact.to_json_text().expect("serializes");
    let report = validate_artifact_text(&text);
    assert!(report.is_acceptable(), "{report}");
    let value: Value = serde_json::from_str(&text).expect("parses");
    assert!(validate_artifact(&value).is_acceptable());
    value
}

fn strict_config() -> RunConfig {
    RunConfig {
        base_url: "http://127.0.0.1:8000/v1".to_owned(),
        model: "fixture-modern-model".to_owned(),
        engine: Some("fixture-engine".to_owned()),
        gpu: Some("fixture-gpu".to_owned()),
        requests: 12,
        concurrency: 4,
        context_tokens: 8192,
        context_seed: 42,
        max_tokens: 2048,
        response_words: 128,
        prompt_cache_mode: PromptCacheMode::Unique,
        request_canaries: true,
        controlled_output_policy: ControlledOutputPolicy::Strict,
        clock_domain_id: Some("lab-a.rack_2".to_owned()),
        configuration_fingerprint: Some(format!("sha256:{}", "0123456789abcdef".repeat(4))),
        ..RunConfig::default()
    }
}

#[test]
fn all_failed_strict_run_through_the_pipeline() {
    let config = strict_config();
    let plan = RunPlan::new(&config, Some(131_072)).expect("plan");
    // Every response only reasons until max_tokens: no visible content (§10's negative case).
    let outcomes: Vec<RequestOutcome> =
        (0..12)
            .map(|index| {
                let start = 1000.0 + 13.25 * index as f64;
                let mut events: Vec<ChunkEvent> = (0..300 + index).map(|_| reasoning()).collect();
                events.push(finish(
                "length",
                Some(json!({"prompt_tokens": 7409 + index, "completion_tokens": 1800 + 11 * index,
                            "total_tokens": 9209 + 12 * index})),
            ));
                events.push(ChunkEvent::Done);
                streamed(
                    &plan,
                    index,
                    start,
                    vec![(start + 400.0, events)],
                    start + 7950.5,
                )
            })
            .collect();
    let artifact = build_artifact(
        &config,
        &plan,
        outcomes,
        timing_for(1_791_300_000_123_456_700, 96_412.337_7),
        None,
    )
    .expect("builds");

    assert_eq!((artifact.completed, artifact.failed), (0, 12));
    assert!(artifact.failures.iter().all(|failure| {
        failure.failure_class == FailureClass::StreamValidationFailed
            && failure.response_timing == Some(None)
    }));
    assert!(artifact.request_timings.is_empty());
    // Reasoning of failed responses does not count (§11.7).
    assert_eq!(
        artifact.measurement_protocol,
        MeasurementProtocol::CapacityV3
    );
    assert_eq!(artifact.responses_received, 12);
    assert!(!artifact.performance_eligible);
    let metrics = &artifact.metrics;
    assert_eq!(metrics.len(), 159);
    assert_eq!(metrics["ttft_samples"], json!(0));
    assert_eq!(metrics["ttft_p50_ms"], Value::Null);
    assert_eq!(metrics["completion_tokens_mean"], Value::Null);
    assert_eq!(metrics["output_tokens"], json!(0));
    assert_eq!(metrics["output_token_sources"], json!({}));
    assert_eq!(metrics["throughput_tok_s"], Value::Null);
    assert_eq!(metrics["throughput_performance_eligible"], json!(false));
    assert_eq!(metrics["prefix_cache_hit_avg"], Value::Null);
    assert_eq!(metrics["prompt_tokens"], Value::Null);
    assert_eq!(metrics["reasoning_chunks"], json!(0));
    assert_eq!(artifact.metric_population.excluded_requests, 12);
    assert_eq!(artifact.metric_population.successful_requests, 0);
    let value = assert_valid(&artifact);
    let report = recompute_from_rows(&value).expect("recomputable");
    assert!(report.diffs.is_empty(), "{:#?}", report.diffs);
}

#[test]
fn the_all_failed_fixture_is_rebuilt_byte_for_byte() {
    // The fixture was written by tests/fixtures/generations/make_fixtures.py; its failure
    // records are inputs here, everything else is built.
    let fixture: Value =
        serde_json::from_str(&fixture_text("generations/modern-all-failed-strict.json"))
            .expect("fixture parses");
    let failures: Vec<FailureRecord> =
        serde_json::from_value(fixture["failures"].clone()).expect("failure records");
    let config = strict_config();
    let plan = RunPlan::new(&config, Some(131_072)).expect("plan");
    let outcomes = failures.into_iter().map(RequestOutcome::Failed).collect();
    let timing = RunTiming {
        started_at_unix_ns: 1_791_300_000_123_456_700,
        finished_at_unix_ns: 1_791_300_000_123_456_700 + 96_412_339_900,
        wall_seconds: 96_412.337_7 / 1000.0,
    };
    let mut artifact = build_artifact(&config, &plan, outcomes, timing, None).expect("builds");
    artifact.redact_base_url();
    assert_eq!(
        artifact.to_json_text().ok(),
        Some(fixture_text("generations/modern-all-failed-strict.json"))
    );
}

#[test]
fn mixed_run_excludes_failures_and_stays_valid() {
    let config = RunConfig {
        base_url: "http://127.0.0.1:8000/v1".to_owned(),
        model: "mixed-model".to_owned(),
        // The validator requires an engine label (§9, combiner rule).
        engine: Some("vllm".to_owned()),
        requests: 7,
        concurrency: 2,
        context_tokens: 4096,
        context_seed: 5,
        max_tokens: 256,
        request_canaries: true,
        ..RunConfig::default()
    };
    let plan = RunPlan::new(&config, Some(32_768)).expect("plan");
    let ok = |index: u64, start: f64, tokens: Option<u64>| {
        let marker = plan.marker(index as usize);
        let usage = tokens.map(|tokens| {
            json!({"prompt_tokens": 3900 + index, "completion_tokens": tokens,
                   "total_tokens": 3900 + index + tokens,
                   "prompt_tokens_details": {"cached_tokens": 1024 * index}})
        });
        streamed(
            &plan,
            index,
            start,
            vec![
                (start + 120.25, vec![reasoning(), reasoning()]),
                (start + 310.5, vec![content(&format!("{marker} The"))]),
                (
                    start + 333.0,
                    vec![content(" summary."), finish("stop", usage)],
                ),
                (start + 334.0, vec![ChunkEvent::Done]),
            ],
            start + 335.75,
        )
    };
    let outcomes = vec![
        failed(
            &plan,
            6,
            RequestError::http_status(500, "Internal Server Error", "engine crashed", &[]),
            1090.0,
        ),
        ok(0, 1000.0, Some(40)),
        failed(&plan, 3, RequestError::timed_out(900.0), 1900.0),
        ok(1, 1001.5, Some(52)),
        // No usage at all: output tokens come from content chunks.
        ok(4, 1400.0, None),
        // Starts with a foreign marker: the canary fails.
        streamed(
            &plan,
            2,
            1200.0,
            vec![
                (1350.0, vec![content("ANVIL_REQ_5_00001 hello")]),
                (1360.0, vec![finish("stop", None), ChunkEvent::Done]),
            ],
            1361.0,
        ),
        ok(5, 1500.25, Some(64)),
    ];
    let artifact = build_artifact(
        &config,
        &plan,
        outcomes,
        timing_for(1_709_251_199_600_000_000, 2_250.5),
        None,
    )
    .expect("builds");

    assert_eq!(
        (artifact.requests, artifact.completed, artifact.failed),
        (7, 4, 3)
    );
    let failure_summary: Vec<(u64, FailureClass, &str)> = artifact
        .failures
        .iter()
        .map(|f| (f.request_index, f.failure_class, f.error_type.as_str()))
        .collect();
    assert_eq!(
        failure_summary,
        vec![
            (2, FailureClass::RequestCanaryFailed, "ValueError"),
            (3, FailureClass::RequestError, "TimeoutError"),
            (6, FailureClass::RequestError, "HttpError"),
        ]
    );
    let row_indexes: Vec<u64> = artifact
        .request_timings
        .iter()
        .map(|row| row.request_index)
        .collect();
    assert_eq!(row_indexes, vec![0, 1, 4, 5]);
    // The canary failure received a response; the request errors did not.
    assert_eq!(artifact.responses_received, 5);
    assert!(!artifact.performance_eligible);
    assert_eq!(
        artifact.measurement_protocol,
        MeasurementProtocol::CapacityV4Reasoning
    );
    let metrics = &artifact.metrics;
    assert_eq!(metrics["throughput_tok_s"], Value::Null);
    assert_eq!(metrics["throughput_performance_eligible"], json!(false));
    // One result counted content chunks, so the token total is not exact (§7.2) …
    assert_eq!(metrics["output_tokens"], Value::Null);
    assert_eq!(
        metrics["output_token_sources"],
        json!({"content_chunks": 1, "usage": 3})
    );
    // … and the chunk rate stands in, over all 4 results × 2 content chunks.
    assert_eq!(metrics["content_chunks"], json!(8));
    assert_eq!(metrics["content_chunks_s"], json!(8.0 / 2.2505));
    assert_eq!(metrics["reasoning_chunks"], json!(8));
    assert_eq!(metrics["request_canary_samples"], json!(4));
    assert_eq!(metrics["request_canary_passed"], json!(4));
    assert_eq!(metrics["ttft_samples"], json!(4));
    assert_eq!(metrics["completion_tokens_samples"], json!(3));
    // Cached fraction of results 0, 1, 5 (4 had no usage): 0, 1024/3901, 5120/3905.
    let fractions = [0.0, 1024.0 / 3901.0, 5120.0 / 3905.0];
    assert_eq!(
        metrics["prefix_cache_hit_avg"],
        json!(strobe::core::python::stats::exact_mean(&fractions).expect("values"))
    );
    let population = &artifact.metric_population;
    assert_eq!(
        (
            population.attempted_requests,
            population.successful_requests,
            population.performance_eligible_requests,
            population.excluded_requests,
            population.aggregate_throughput_eligible,
        ),
        (7, 4, 4, 3, false)
    );
    assert_eq!(population.p99_samples_by_metric["ttft"], 4);
    assert_eq!(population.p99_samples_by_metric["decode_tok_s"], 3);

    let value = assert_valid(&artifact);
    let report = recompute_from_rows(&value).expect("recomputable");
    assert!(report.diffs.is_empty(), "{:#?}", report.diffs);
    assert!(report.skipped.is_empty(), "{:#?}", report.skipped);
    assert_eq!(artifact.started_at, "2024-02-29T23:59:59Z");
    assert_eq!(artifact.finished_at, "2024-03-01T00:00:01Z");
}

fn synthetic_run(client: Option<ClientBlock>) -> ArtifactV1 {
    let config = RunConfig {
        base_url: "http://127.0.0.1:8000/v1".to_owned(),
        model: "synthetic-model".to_owned(),
        engine: Some("strobe-sim".to_owned()),
        requests: 200,
        concurrency: 8,
        context_tokens: 0,
        context_seed: 7,
        max_tokens: 512,
        response_words: 16,
        request_canaries: true,
        max_model_len: 32_768,
        ..RunConfig::default()
    };
    let plan = RunPlan::new(&config, None).expect("plan");
    let mut noise = Noise(0x5eed_1234_abcd_0001);
    let mut outcomes = Vec::new();
    for index in 0..200_u64 {
        let marker = plan.marker(index as usize);
        let start = 1000.0 + 37.5 * index as f64 + noise.between(0.0, 5.0);
        let first = start + noise.between(40.0, 2500.0);
        let mut reads = Vec::new();
        if index % 3 == 0 {
            reads.push((first, vec![reasoning(), reasoning(), reasoning()]));
        }
        let content_at = first + noise.between(0.0, 300.0);
        let words = match index % 10 {
            0 => 15,
            _ => 16,
        };
        let mut body = marker.clone();
        for _ in 0..words {
            body.push_str(" code");
        }
        if index % 17 == 0 {
            body.push_str(" done");
        }
        reads.push((content_at, vec![content(&body)]));
        let prompt_tokens = plan.planned_context_tokens()[index as usize] * 19 / 20 + index;
        let completion_tokens = 20 + noise.next() % 400;
        let mut usage = json!({"prompt_tokens": prompt_tokens,
                               "completion_tokens": completion_tokens,
                               "total_tokens": prompt_tokens + completion_tokens});
        if index % 4 != 1 {
            usage["prompt_tokens_details"] =
                json!({"cached_tokens": (noise.next() % 2) * prompt_tokens / 2});
        }
        let end = content_at + noise.between(1.0, 9000.0);
        reads.push((
            end - 0.5,
            vec![finish("stop", Some(usage)), ChunkEvent::Done],
        ));
        outcomes.push(streamed(&plan, index, start, reads, end));
    }
    let wall_ms = 1000.0 + 37.5 * 200.0 + 12_000.0;
    build_artifact(
        &config,
        &plan,
        outcomes,
        timing_for(1_735_689_590_000_000_000, wall_ms),
        client,
    )
    .expect("builds")
}

#[test]
fn a_200_request_run_round_trips_and_recomputes_exactly() {
    let artifact = synthetic_run(None);
    assert_eq!(artifact.completed, 200);
    assert!(artifact.performance_eligible);
    assert_eq!(
        artifact.metric_population.p99_interpretation,
        "tail-estimate"
    );
    assert_eq!(
        artifact.metric_population.p99_interpretation_by_metric["ttft"],
        "tail-estimate"
    );
    assert_eq!(artifact.metrics["controlled_output_samples"], json!(200));
    // 20 rows give 15 words, 12 add an extra word, 2 (0 and 170) do both.
    assert_eq!(
        artifact.metrics["controlled_output_exact_adherence"],
        json!(200 - 20 - 12 + 2)
    );
    assert!(artifact.metrics["throughput_tok_s"].is_f64());
    assert!(artifact.metrics["prefix_cache_hit_avg"].is_f64());

    let text = artifact.to_json_text().expect("serializes");
    let typed: ArtifactV1 = serde_json::from_str(&text).expect("typed parse");
    assert_eq!(typed, artifact);
    assert_eq!(typed.to_json_text().ok().as_ref(), Some(&text));

    let value = assert_valid(&artifact);
    let report = recompute_from_rows(&value).expect("recomputable");
    assert!(report.diffs.is_empty(), "{:#?}", report.diffs);
    // Rows carry cached_tokens, so even the cache average is recomputed.
    assert!(report.skipped.is_empty(), "{:#?}", report.skipped);
    assert_eq!(report.exact, 200 * 7 + 159 + 3 + 10 + 3);
}

#[test]
fn a_client_block_states_the_browser_clock() {
    let client = ClientBlock::strobe(
        "Mozilla/5.0 (X11; Linux x86_64) Chrome/131.0",
        true,
        0.005,
        ClientTransport {
            http_protocols_seen: vec!["h2".to_owned()],
            connection_limit_suspected: false,
            ..ClientTransport::default()
        },
        ClientSseCounts {
            reads: 610,
            events: 1400,
            events_sharing_a_read: 1020,
            buffered_streams: 0,
        },
    );
    let artifact = synthetic_run(Some(client));
    assert_eq!(
        artifact.timing_methodology.clock,
        "browser performance.now(); resolution 0.005 ms; cross-origin isolated: true"
    );
    let mut value = assert_valid(&artifact);
    // The builder adds the times from the wire of the rows; these synthetic rows carry no
    // transport facts, so the block has none and says why.
    let from_wire = value["client"]
        .as_object_mut()
        .and_then(|client| client.remove("from_wire"))
        .expect("the builder adds client.from_wire");
    assert_eq!(from_wire["rows"], json!(200));
    assert_eq!(from_wire["rows_with_wire_time"], json!(0));
    assert_eq!(from_wire["ttft_samples"], json!(0));
    assert_eq!(from_wire["ttft_p50_ms"], Value::Null);
    assert!(from_wire["unavailable"]
        .as_str()
        .is_some_and(|reason| reason.contains("Timing-Allow-Origin")));
    assert_eq!(
        value["client"],
        json!({
            "name": "strobe",
            "version": env!("CARGO_PKG_VERSION"),
            "user_agent": "Mozilla/5.0 (X11; Linux x86_64) Chrome/131.0",
            "cross_origin_isolated": true,
            "timer_resolution_ms": 0.005,
            "transport": {"http_protocols_seen": ["h2"], "connection_limit_suspected": false},
            "sse": {"reads": 610, "events": 1400, "events_sharing_a_read": 1020},
        })
    );
    // The other methodology strings stay the reference's.
    let reference: Value = serde_json::from_str(&reference_text()).expect("parses");
    for (key, text) in reference["timing_methodology"]
        .as_object()
        .expect("an object")
    {
        if key != "clock" {
            assert_eq!(&value["timing_methodology"][key], text, "{key}");
        }
    }
    assert!(synthetic_run(None).client.is_none());
    assert_eq!(
        artifact.measurement_protocol.to_string(),
        "capacity-v4-reasoning"
    );
}

fn browser_client() -> ClientBlock {
    ClientBlock::strobe(
        "Mozilla/5.0 (X11; Linux x86_64) Chrome/156.0",
        true,
        0.005,
        ClientTransport {
            http_protocols_seen: vec!["http/1.1".to_owned()],
            connection_limit_suspected: false,
            ..ClientTransport::default()
        },
        ClientSseCounts::default(),
    )
}

#[test]
fn the_warmup_block_is_written_typed_and_read_back() {
    let warmup = ClientWarmup {
        requests: 12,
        duration_ms: 41.87,
        failures: 0,
        check_rounds: None,
        connections: None,
    }
    .with_check(1, WarmupConnections::Ready);
    let artifact = synthetic_run(Some(browser_client().with_warmup(Some(warmup))));
    let value = assert_valid(&artifact);
    assert_eq!(
        value["client"]["warmup"],
        json!({"requests": 12, "duration_ms": 41.87, "failures": 0, "check_rounds": 1, "connections": "ready"})
    );
    let text = artifact.to_json_text().expect("serializes");
    assert!(
        text.contains("\"warmup\": {\n      \"check_rounds\": 1,\n      \"connections\": \"ready\",\n      \"duration_ms\": 41.87,\n      \"failures\": 0,\n      \"requests\": 12\n    }"),
        "sorted keys, Python float repr"
    );
    let typed: ArtifactV1 = serde_json::from_str(&text).expect("typed parse");
    assert_eq!(
        typed.client.as_ref().and_then(|client| client.warmup),
        Some(warmup)
    );
    assert_eq!(typed.to_json_text().ok(), Some(text));

    // Without a warm-up the key is absent, not null.
    let cold = assert_valid(&synthetic_run(Some(browser_client().with_warmup(None))));
    assert!(cold["client"].get("warmup").is_none());
    // A warm-up of the wrong shape is not silently accepted by the typed reader.
    let mut malformed = value.clone();
    malformed["client"]["warmup"] = json!({"requests": "eight"});
    assert!(serde_json::from_value::<ArtifactV1>(malformed).is_err());
    let mut unknown_verdict = value.clone();
    unknown_verdict["client"]["warmup"]["connections"] = json!("probably");
    assert!(serde_json::from_value::<ArtifactV1>(unknown_verdict).is_err());
    // A warm-up block written before check rounds existed still reads, without them.
    let mut older = value.clone();
    for key in ["check_rounds", "connections"] {
        older["client"]["warmup"]
            .as_object_mut()
            .map(|block| block.remove(key));
    }
    let older: ArtifactV1 = serde_json::from_value(older).expect("older warm-up block reads");
    let older_warmup = older.client.and_then(|client| client.warmup);
    assert_eq!(
        older_warmup.map(|w| (w.check_rounds, w.connections)),
        Some((None, None))
    );
}

#[test]
fn rows_with_transport_facts_and_traces_validate_recompute_and_round_trip() {
    let mut artifact = synthetic_run(Some(browser_client()));
    for (position, row) in artifact.request_timings.iter_mut().enumerate() {
        let start_ms = 1000.0 + position as f64;
        let entry = ResourceTimingEntry {
            start_time_ms: start_ms + 0.4,
            fetch_start_ms: start_ms + 0.4,
            connect_start_ms: start_ms + 0.4,
            connect_end_ms: start_ms + 0.4,
            request_start_ms: start_ms + 1.25,
            next_hop_protocol: "http/1.1".to_owned(),
            response_end_ms: start_ms + 80.0,
        };
        match position % 3 {
            0 => row.set_transport(&TransportFacts::from_entry(&entry, start_ms)),
            // The server withheld timing, or the browser kept no entry.
            1 => row.set_transport(&TransportFacts::default()),
            _ => {}
        }
        row.chunk_arrivals_ms = Some(vec![12.5, 13.0, 250.125]);
    }
    let value = assert_valid(&artifact);
    let rows = value["request_timings"].as_array().expect("rows");
    assert_eq!(rows[0]["client_queue_ms"], json!(1.25));
    assert_eq!(rows[0]["new_connection"], json!(false));
    assert_eq!(rows[0]["preflight"], Value::Null);
    assert_eq!(rows[0]["http_protocol"], json!("http/1.1"));
    assert_eq!(rows[1]["client_queue_ms"], Value::Null);
    assert!(rows[2].get("client_queue_ms").is_none());
    assert_eq!(rows[2]["chunk_arrivals_ms"], json!([12.5, 13.0, 250.125]));

    let report = recompute_from_rows(&value).expect("recomputable");
    assert!(report.diffs.is_empty(), "{:#?}", report.diffs);
    let text = artifact.to_json_text().expect("serializes");
    let typed: ArtifactV1 = serde_json::from_str(&text).expect("typed parse");
    assert_eq!(typed, artifact);
    assert_eq!(typed.to_json_text().ok(), Some(text));
}

#[test]
fn a_cancelled_run_must_record_unstarted_requests() {
    let config = strict_config();
    let plan = RunPlan::new(&config, Some(131_072)).expect("plan");
    let started: Vec<RequestOutcome> = (0..5)
        .map(|index| failed(&plan, index, RequestError::cancelled(), 1500.0))
        .collect();
    let timing = timing_for(1_791_300_000_000_000_000, 500.0);
    let error = build_artifact(&config, &plan, started.clone(), timing, None).err();
    assert!(
        matches!(&error, Some(ArtifactError::MissingOutcomes { missing: 7, first }) if first == &vec![5, 6, 7, 8, 9]),
        "{error:?}"
    );
    let mut all = started;
    all.extend((5..12).map(|index| failed(&plan, index, RequestError::cancelled(), 1000.0)));
    let artifact = build_artifact(&config, &plan, all, timing, None).expect("builds");
    assert_eq!(artifact.failed, 12);
    assert_eq!(artifact.responses_received, 0);
    assert_eq!(artifact.failures[11].error_type, "AbortError");
    assert_eq!(artifact.base_url, "http://127.0.0.1:8000/v1");
    let mut redacted = artifact.clone();
    redacted.redact_base_url();
    assert_eq!(redacted.base_url, REDACTED_BASE_URL);
    assert_valid(&redacted);
}

#[test]
fn the_transport_block_says_where_requests_went_and_whether_the_browser_queued_them() {
    let http1 = || vec!["http/1.1".to_owned()];
    // Six to one origin fit the browser's connections; seven do not, unless HTTP/2 carries them.
    assert!(!ClientTransport::observed(http1(), 1, 6).connection_limit_suspected);
    assert!(ClientTransport::observed(http1(), 1, 7).connection_limit_suspected);
    assert!(!ClientTransport::observed(vec!["h2".to_owned()], 1, 64).connection_limit_suspected);
    // A pool of three carrying sixteen keeps every origin at six or fewer.
    let pooled = ClientTransport::observed(vec!["http/1.1".into(), "http/1.1".into()], 3, 6);
    assert_eq!(pooled.http_protocols_seen, http1());
    assert!(!pooled.connection_limit_suspected);

    let client = browser_client()
        .with_measurement_thread(MeasurementThread::Worker)
        .with_live_view(LiveView::End)
        .with_dry_run(384);
    let client = ClientBlock {
        transport: pooled,
        ..client
    };
    let artifact = synthetic_run(Some(client));
    let value = assert_valid(&artifact);
    assert_eq!(value["client"]["measurement_thread"], json!("worker"));
    assert_eq!(value["client"]["dry_run_requests"], json!(384));
    assert_eq!(value["client"]["live_view"], json!("end"));
    assert_eq!(
        value["client"]["transport"],
        json!({
            "http_protocols_seen": ["http/1.1"],
            "connection_limit_suspected": false,
            "endpoints": 3,
            "max_in_flight_per_origin": 6,
        })
    );
    let text = artifact.to_json_text().expect("serializes");
    let typed: ArtifactV1 = serde_json::from_str(&text).expect("typed parse");
    assert_eq!(typed, artifact);
    // Files of strobe versions without these keys still read.
    assert!(browser_client().measurement_thread.is_none());
    assert!(browser_client().dry_run_requests.is_none());
    let written = serde_json::to_value(browser_client()).expect("serializes");
    assert!(written.get("dry_run_requests").is_none());
    assert!(written.get("live_view").is_none());
    assert_eq!(browser_client().transport.endpoints, None);
}
