//! Integration tests of `strobe::core::validate` (ARTIFACT.md §9, §10): every real and
//! hand-made artifact of every generation is accepted with the right verdict, and each §9 rule,
//! broken on its own in an otherwise valid artifact, is reported at the expected JSON path.
//!
//! The hand-made fixtures in `tests/fixtures/generations/` come from
//! `tests/fixtures/generations/make_fixtures.py` (Python 3.11, run once; not needed by the tests).

mod common;

use common::{fixture_json, fixture_path, fixture_text, reference_json};

use serde_json::{json, Value};
use strobe::core::read::validate::report::{
    detect_generation, Generation, Report, RuleId, Verdict,
};
use strobe::core::read::validate::{
    combiner_admission, combiner_field_mismatches, validate_artifact, validate_artifact_text,
};

fn g3() -> Value {
    fixture_json("generations/g3.json")
}

fn all_failed_strict() -> Value {
    fixture_json("generations/modern-all-failed-strict.json")
}

/// Sets the value at a JSON pointer, which must exist (or whose parent object must exist).
fn set(artifact: &mut Value, pointer: &str, value: Value) {
    if let Some(slot) = artifact.pointer_mut(pointer) {
        *slot = value;
        return;
    }
    let (parent, key) = pointer.rsplit_once('/').expect("pointer has a parent");
    artifact
        .pointer_mut(parent)
        .and_then(Value::as_object_mut)
        .unwrap_or_else(|| panic!("no object at {parent}"))
        .insert(key.to_string(), value);
}

fn remove(artifact: &mut Value, pointer: &str) {
    let (parent, key) = pointer.rsplit_once('/').expect("pointer has a parent");
    artifact
        .pointer_mut(parent)
        .and_then(Value::as_object_mut)
        .unwrap_or_else(|| panic!("no object at {parent}"))
        .remove(key)
        .unwrap_or_else(|| panic!("nothing at {pointer}"));
}

fn broken(mut artifact: Value, mutate: impl FnOnce(&mut Value)) -> Report {
    mutate(&mut artifact);
    validate_artifact(&artifact)
}

/// The report is invalid and holds `rule` at `path`.
#[track_caller]
fn assert_rule(report: &Report, rule: RuleId, path: &str) {
    assert_eq!(report.verdict, Verdict::Invalid, "{report}");
    assert!(
        report.has_violation(rule, path),
        "expected [{rule}] at {path}, got:\n{report}"
    );
}

/// As [`assert_rule`], and no other rule is broken: the mutation broke exactly that rule.
#[track_caller]
fn assert_only_rule(report: &Report, rule: RuleId, path: &str) {
    assert_rule(report, rule, path);
    let others: Vec<_> = report
        .violations
        .iter()
        .filter(|v| v.rule != rule)
        .collect();
    assert!(others.is_empty(), "only [{rule}] expected, got:\n{report}");
}

// ---------------------------------------------------------------------------------------------
// Accepted artifacts of every generation.
// ---------------------------------------------------------------------------------------------

#[test]
fn reference_artifact_is_valid_modern() {
    let report = validate_artifact_text(&fixture_text("reference-artifact.json"));
    assert_eq!(report.verdict, Verdict::Valid, "{report}");
    assert_eq!(report.generation, Generation::Modern);
    assert!(report.violations.is_empty());
}

/// Each real artifact with the generation its shape shows (§10). The expectations were read off
/// each file by hand: G1 files have neither `measurement_protocol` nor `request_timings`, the
/// July multimodal runs are `capacity-v2` without rows, the August runs have rows (15 keys, or 11
/// for the older capacity-v3 rows without TTFO and chunk counts) and no canaries, and the October
/// swift runs carry `request_canaries`. All of them satisfy §9 ("all local artifacts pass with
/// legacy-tolerant rules"), including the failure runs under the general index-coverage rule.
#[test]
fn every_real_artifact_is_accepted_with_its_generation() {
    let expected = [
        ("2026-07-16-gemma4-vllm0251-wsl2__control-fast-c128-ctx1024.json", Generation::G1LegacyMinimal),
        ("2026-07-16-gemma4-vllm0251-wsl2__control-fast-c128-ctx8192.json", Generation::G1LegacyMinimal),
        ("2026-07-28-agents-a1-multimodal-qualific__fp8-mm-capacity-8k-c32.json", Generation::G2),
        ("2026-07-28-agents-a1-multimodal-qualific__fp8-text-capacity-8k-c32.json", Generation::G2),
        ("2026-08-01-deepseek-v4-flash-0731-nvfp4__capacity-low-32k-c1-r2.json", Generation::G3),
        ("2026-08-01-deepseek-v4-flash-0731-nvfp4__capacity-low-32k-c1.json", Generation::G3),
        ("2026-08-01-dual-pro-tp2-campaign__deepseek-v4-flash-0731-capacity-32k-c1-max512.json", Generation::G3),
        ("2026-08-01-dual-pro-tp2-campaign__deepseek-v4-flash-0731-capacity-32k-c1-reasoning-v4-max2048.json", Generation::G3),
        ("2026-08-01-dual-pro-tp2-campaign__deepseek-v4-flash-0731-capacity-32k-c1.json", Generation::G3),
        ("2026-08-02-deepseek-0731-native-kv-offlo__prefix-sequence-256k-70k.json", Generation::G3),
        ("2026-10-05-swift__swift-capacity-8k-c1.json", Generation::Modern),
        ("2026-10-05-swift__swift-service-v2-8k-c4.json", Generation::Modern),
    ];
    let on_disk = std::fs::read_dir(fixture_path("real"))
        .expect("real fixtures exist")
        .filter_map(Result::ok)
        .filter(|entry| entry.path().extension().is_some_and(|ext| ext == "json"))
        .count();
    assert_eq!(
        on_disk,
        expected.len(),
        "a real fixture was added or removed: list it here"
    );
    for (name, generation) in expected {
        let report = validate_artifact_text(&fixture_text(&format!("real/{name}")));
        assert_eq!(report.generation, generation, "{name}");
        let verdict = if generation == Generation::Modern {
            Verdict::Valid
        } else {
            Verdict::ValidLegacy(generation)
        };
        assert_eq!(report.verdict, verdict, "{name}:\n{report}");
    }
}

#[test]
fn hand_made_g1_legacy_minimal_is_valid_legacy() {
    let report = validate_artifact_text(&fixture_text("generations/g1-legacy-minimal.json"));
    assert_eq!(
        report.verdict,
        Verdict::ValidLegacy(Generation::G1LegacyMinimal),
        "{report}"
    );
}

#[test]
fn hand_made_g2_is_valid_legacy() {
    let report = validate_artifact_text(&fixture_text("generations/g2.json"));
    assert_eq!(
        report.verdict,
        Verdict::ValidLegacy(Generation::G2),
        "{report}"
    );
}

#[test]
fn hand_made_g3_with_fifteen_key_rows_and_four_key_failures_is_valid_legacy() {
    let artifact = g3();
    let rows = artifact["request_timings"].as_array().expect("rows");
    assert!(rows
        .iter()
        .all(|row| row.as_object().is_some_and(|r| r.len() == 15)));
    let failures = artifact["failures"].as_array().expect("failures");
    assert!(failures
        .iter()
        .all(|f| f.as_object().is_some_and(|f| f.len() == 4)));
    let report = validate_artifact(&artifact);
    assert_eq!(
        report.verdict,
        Verdict::ValidLegacy(Generation::G3),
        "{report}"
    );
}

#[test]
fn hand_made_modern_all_failed_strict_run_is_valid() {
    let artifact = all_failed_strict();
    assert_eq!(artifact["request_timings"], json!([]));
    assert_eq!(artifact["metrics"]["output_tokens"], json!(0));
    assert_eq!(artifact["metrics"]["ttft_samples"], json!(0));
    assert_eq!(artifact["metrics"]["ttft_p50_ms"], Value::Null);
    assert_eq!(artifact["metrics"]["throughput_tok_s"], Value::Null);
    assert_eq!(artifact["response_words"], json!(128));
    let report = validate_artifact_text(&fixture_text("generations/modern-all-failed-strict.json"));
    assert_eq!(report.verdict, Verdict::Valid, "{report}");
    assert_eq!(report.generation, Generation::Modern);
}

#[test]
fn strobe_extra_keys_are_allowed() {
    let report = broken(reference_json(), |artifact| {
        set(
            artifact,
            "/client",
            json!({"name": "strobe", "version": "0.1.0", "cross_origin_isolated": false}),
        );
        set(artifact, "/request_timings/0/cached_tokens", json!(62320));
        set(artifact, "/request_timings/1/cached_tokens", Value::Null);
        set(artifact, "/request_timings/0/started_at_ms", json!(0.0));
        set(
            artifact,
            "/request_timings/0/chunk_arrivals_ms",
            json!([355.7, 1418.3]),
        );
    });
    assert_eq!(report.verdict, Verdict::Valid, "{report}");
}

#[test]
fn a_modern_observe_run_with_controlled_rows_is_valid() {
    let report = validate_artifact(&observe_run_with_controlled_rows());
    assert_eq!(report.verdict, Verdict::Valid, "{report}");
}

#[test]
fn generation_detection_follows_the_section_10_shapes() {
    assert_eq!(detect_generation(&json!({})), Generation::G1LegacyMinimal);
    assert_eq!(
        detect_generation(&json!({"measurement_protocol": "capacity-v2"})),
        Generation::G2
    );
    assert_eq!(
        detect_generation(&json!({"measurement_protocol": "capacity-v3", "request_timings": []})),
        Generation::G3
    );
    assert_eq!(
        detect_generation(&json!({"request_timings": [], "request_canaries": false})),
        Generation::Modern
    );
    assert_eq!(detect_generation(&json!([])), Generation::Unknown);
}

#[test]
fn every_violation_is_reported_not_just_the_first() {
    let report = broken(reference_json(), |artifact| {
        set(artifact, "/schema", json!("other"));
        set(artifact, "/request_timings/2/ttft_ms", json!(99_999.0));
        set(artifact, "/clock_domain_id", json!("has space"));
        set(artifact, "/request_timings/4/decode_tok_s", json!(-1.0));
    });
    assert_rule(&report, RuleId::SchemaMismatch, "$.schema");
    assert_rule(&report, RuleId::TimingOrder, "$.request_timings[2].ttft_ms");
    assert_rule(&report, RuleId::ClockDomainId, "$.clock_domain_id");
    assert_rule(
        &report,
        RuleId::RowTimingValue,
        "$.request_timings[4].decode_tok_s",
    );
}

#[test]
fn hostile_counts_do_not_blow_up_coverage() {
    // requests = 10^18 must not allocate per request; the missing indexes are summarised.
    let report = broken(g3(), |artifact| {
        set(artifact, "/requests", json!(1_000_000_000_000_000_000_i64))
    });
    assert_rule(&report, RuleId::CountsAddUp, "$.completed");
    assert_rule(&report, RuleId::IndexCoverage, "$.request_timings");
    let coverage = report
        .violations
        .iter()
        .find(|v| v.rule == RuleId::IndexCoverage)
        .expect("coverage");
    assert!(
        coverage.message.contains("999999999999999988"),
        "{}",
        coverage.message
    );
}

#[test]
fn ten_thousand_broken_rows_are_all_reported() {
    let row = reference_json()["request_timings"][0].clone();
    let report = broken(reference_json(), |artifact| {
        let rows: Vec<Value> = (0..10_000)
            .map(|index| {
                let mut row = row.clone();
                row["request_index"] = json!(index);
                row["ttft_ms"] = json!(1.0e9);
                row["request_canary"]["marker"] = json!(format!("ANVIL_REQ_1717_{index:05}"));
                row
            })
            .collect();
        set(artifact, "/request_timings", Value::Array(rows));
    });
    let order = report
        .violations
        .iter()
        .filter(|v| v.rule == RuleId::TimingOrder)
        .count();
    assert_eq!(order, 10_000);
}

// ---------------------------------------------------------------------------------------------
// Text-level rules.
// ---------------------------------------------------------------------------------------------

#[test]
fn rule_invalid_json() {
    let report = validate_artifact_text("<html>502 Bad Gateway</html>");
    assert_only_rule(&report, RuleId::InvalidJson, "$");
    assert_eq!(report.generation, Generation::Unknown);
    assert!(
        report.violations[0].message.contains("line 1, column 1"),
        "{report}"
    );
    assert_only_rule(&validate_artifact_text(""), RuleId::InvalidJson, "$");
    let truncated = &fixture_text("reference-artifact.json")[..5000];
    assert_only_rule(&validate_artifact_text(truncated), RuleId::InvalidJson, "$");
}

#[test]
fn rule_invalid_json_reports_a_byte_order_mark_and_still_validates_the_rest() {
    let text = format!("\u{feff}{}", fixture_text("reference-artifact.json"));
    let report = validate_artifact_text(&text);
    assert_only_rule(&report, RuleId::InvalidJson, "$");
    assert!(report.violations[0].message.contains("byte-order mark"));
    assert_eq!(report.generation, Generation::Modern);
}

#[test]
fn rule_nesting_too_deep() {
    let report = validate_artifact_text(&fixture_text("invalid/deeply-nested.json"));
    assert_only_rule(&report, RuleId::NestingTooDeep, "$");
    assert!(report.violations[0].message.contains("128"), "{report}");
    // 127 levels of arrays inside the artifact object still parse (and are just a wrong type).
    let deep = format!("{}{}", "[".repeat(120), "]".repeat(120));
    let text = fixture_text("reference-artifact.json").replacen(
        "\"manifest\": null",
        &format!("\"manifest\": {deep}"),
        1,
    );
    assert_eq!(validate_artifact_text(&text).verdict, Verdict::Valid);
}

#[test]
fn rule_non_finite_number_located_by_path_line_and_column() {
    let text = fixture_text("reference-artifact.json");
    let needle = "\"throughput_tok_s\": 53.862812534781895";
    let line = text[..text.find(needle).expect("needle")]
        .matches('\n')
        .count()
        + 1;
    let text = text.replacen(needle, "\"throughput_tok_s\": NaN", 1);
    let report = validate_artifact_text(&text);
    assert_only_rule(
        &report,
        RuleId::NonFiniteNumber,
        "$.metrics.throughput_tok_s",
    );
    let message = &report.violations[0].message;
    assert!(
        message.contains(&format!("line {line}, column 25")),
        "{message}"
    );
    assert_eq!(report.generation, Generation::Modern);
}

#[test]
fn rule_non_finite_number_for_infinity_tokens_in_rows_and_overflowing_numbers() {
    let text = fixture_text("reference-artifact.json")
        .replacen("\"e2e_ms\": 1562.8556000010576", "\"e2e_ms\": Infinity", 1)
        .replacen(
            "\"wall_clock_ms\": 42385.45840000006",
            "\"wall_clock_ms\": -Infinity",
            1,
        );
    let report = validate_artifact_text(&text);
    assert_rule(
        &report,
        RuleId::NonFiniteNumber,
        "$.request_timings[0].e2e_ms",
    );
    assert_rule(&report, RuleId::NonFiniteNumber, "$.wall_clock_ms");
    // A NaN inside a string is just text.
    let in_string = fixture_text("reference-artifact.json").replacen(
        "\"gpu\": \"rtx5090\"",
        "\"gpu\": \"NaN Infinity\"",
        1,
    );
    assert_eq!(validate_artifact_text(&in_string).verdict, Verdict::Valid);
    // 1e400 reads as infinity in Python; serde_json refuses it.
    let overflow =
        fixture_text("reference-artifact.json").replacen("42385.45840000006", "1e400", 1);
    assert_only_rule(
        &validate_artifact_text(&overflow),
        RuleId::NonFiniteNumber,
        "$",
    );
}

#[test]
fn rule_non_finite_number_in_the_crafted_fixture() {
    let report = validate_artifact_text(&fixture_text("invalid/nan-token.json"));
    assert_rule(&report, RuleId::NonFiniteNumber, "$.metrics.ttft_p95_ms");
    assert_rule(
        &report,
        RuleId::NonFiniteNumber,
        "$.metrics.throughput_tok_s",
    );
    assert_eq!(report.generation, Generation::G1LegacyMinimal);
}

// ---------------------------------------------------------------------------------------------
// Structure and types.
// ---------------------------------------------------------------------------------------------

#[test]
fn rule_not_an_object() {
    let report = validate_artifact(&json!([1, 2, 3]));
    assert_only_rule(&report, RuleId::NotAnObject, "$");
    assert_eq!(report.generation, Generation::Unknown);
}

#[test]
fn rule_schema_mismatch() {
    let report = broken(reference_json(), |a| {
        set(a, "/schema", json!("anvil-serving.benchmark/v2"))
    });
    assert_only_rule(&report, RuleId::SchemaMismatch, "$.schema");
    let plan = validate_artifact_text(&fixture_text("invalid/wrong-schema.json"));
    assert_rule(&plan, RuleId::SchemaMismatch, "$.schema");
}

#[test]
fn rule_metrics_not_object() {
    let report = broken(fixture_json("generations/g2.json"), |a| {
        set(a, "/metrics", json!([]))
    });
    assert_only_rule(&report, RuleId::MetricsNotObject, "$.metrics");
}

#[test]
fn rule_serve_flags_not_object() {
    let report = broken(reference_json(), |a| set(a, "/serve_flags", json!("none")));
    assert_only_rule(&report, RuleId::ServeFlagsNotObject, "$.serve_flags");
}

// ---------------------------------------------------------------------------------------------
// Counts and population.
// ---------------------------------------------------------------------------------------------

#[test]
fn rule_count_field_rejects_booleans_and_low_values() {
    let report = broken(reference_json(), |a| set(a, "/concurrency", json!(true)));
    assert_only_rule(&report, RuleId::CountField, "$.concurrency");
    let report = broken(reference_json(), |a| set(a, "/concurrency", json!(0)));
    assert_only_rule(&report, RuleId::CountField, "$.concurrency");
    let report = broken(fixture_json("generations/g2.json"), |a| {
        remove(a, "/failed")
    });
    assert_only_rule(&report, RuleId::CountField, "$.failed");
}

#[test]
fn rule_counts_add_up() {
    let report = broken(reference_json(), |a| set(a, "/failed", json!(1)));
    assert_only_rule(&report, RuleId::CountsAddUp, "$.completed");
}

#[test]
fn rule_performance_eligible_type() {
    let report = broken(reference_json(), |a| {
        set(a, "/performance_eligible", json!("true"))
    });
    assert_only_rule(
        &report,
        RuleId::PerformanceEligibleType,
        "$.performance_eligible",
    );
}

#[test]
fn rule_plan_integer_field() {
    let report = broken(reference_json(), |a| set(a, "/max_tokens", json!(0)));
    assert_only_rule(&report, RuleId::PlanIntegerField, "$.max_tokens");
    let report = broken(reference_json(), |a| set(a, "/context_seed", json!(17.5)));
    assert_only_rule(&report, RuleId::PlanIntegerField, "$.context_seed");
}

#[test]
fn rule_wall_clock_ms() {
    let report = broken(reference_json(), |a| set(a, "/wall_clock_ms", json!(-1.0)));
    assert_only_rule(&report, RuleId::WallClockMs, "$.wall_clock_ms");
}

// ---------------------------------------------------------------------------------------------
// Modern fields and sampling.
// ---------------------------------------------------------------------------------------------

#[test]
fn rule_prompt_cache_mode() {
    let report = broken(reference_json(), |a| {
        set(a, "/prompt_cache_mode", json!("private"))
    });
    assert_only_rule(&report, RuleId::PromptCacheMode, "$.prompt_cache_mode");
}

#[test]
fn rule_request_canaries_type() {
    let report = broken(reference_json(), |a| {
        set(a, "/request_canaries", json!("yes"))
    });
    assert_only_rule(&report, RuleId::RequestCanariesType, "$.request_canaries");
}

#[test]
fn rule_controlled_output_policy() {
    let report = broken(reference_json(), |a| {
        set(a, "/controlled_output_policy", json!("lenient"))
    });
    assert_only_rule(
        &report,
        RuleId::ControlledOutputPolicy,
        "$.controlled_output_policy",
    );
}

#[test]
fn rule_engine_model_names() {
    let report = broken(reference_json(), |a| set(a, "/engine", json!("")));
    assert_only_rule(&report, RuleId::EngineModelNames, "$.engine");
}

#[test]
fn rule_source_recipe_type() {
    let report = broken(reference_json(), |a| set(a, "/source_recipe", json!(5)));
    assert_only_rule(&report, RuleId::SourceRecipeType, "$.source_recipe");
}

#[test]
fn rule_sampling_shape() {
    let report = broken(reference_json(), |a| set(a, "/sampling/seed", json!(1)));
    assert_only_rule(&report, RuleId::SamplingShape, "$.sampling");
    let report = broken(reference_json(), |a| {
        remove(a, "/sampling/temperature/sent")
    });
    assert_only_rule(&report, RuleId::SamplingShape, "$.sampling.temperature");
    let report = broken(reference_json(), |a| {
        set(a, "/sampling/top_p/sent", json!("true"))
    });
    assert_only_rule(&report, RuleId::SamplingShape, "$.sampling.top_p.sent");
}

#[test]
fn rule_sampling_range() {
    let report = broken(reference_json(), |a| {
        set(a, "/sampling/temperature/requested", json!(2.5));
        set(a, "/sampling/temperature/effective_request", json!(2.5));
    });
    assert_only_rule(
        &report,
        RuleId::SamplingRange,
        "$.sampling.temperature.requested",
    );
    let report = broken(reference_json(), |a| {
        set(a, "/sampling/top_p/requested", json!(0.0));
        set(a, "/sampling/top_p/effective_request", json!(0.0));
    });
    assert_only_rule(
        &report,
        RuleId::SamplingRange,
        "$.sampling.top_p.effective_request",
    );
}

#[test]
fn rule_sampling_consistency() {
    let report = broken(reference_json(), |a| {
        set(a, "/sampling/top_p/sent", json!(false))
    });
    assert_only_rule(
        &report,
        RuleId::SamplingConsistency,
        "$.sampling.top_p.sent",
    );
    let report = broken(reference_json(), |a| {
        set(a, "/sampling/temperature/effective_request", json!(0.5))
    });
    assert_only_rule(
        &report,
        RuleId::SamplingConsistency,
        "$.sampling.temperature.effective_request",
    );
    // Unrequested temperature is still sent, as 0.0.
    let report = broken(all_failed_strict(), |a| {
        set(a, "/sampling/temperature/effective_request", Value::Null)
    });
    assert_only_rule(
        &report,
        RuleId::SamplingConsistency,
        "$.sampling.temperature.effective_request",
    );
}

// ---------------------------------------------------------------------------------------------
// Timing rows.
// ---------------------------------------------------------------------------------------------

#[test]
fn rule_timing_rows_shape() {
    let report = broken(reference_json(), |a| set(a, "/request_timings", json!({})));
    assert_only_rule(&report, RuleId::TimingRowsShape, "$.request_timings");
    let report = broken(reference_json(), |a| remove(a, "/request_timings"));
    assert_only_rule(&report, RuleId::TimingRowsShape, "$.request_timings");
}

#[test]
fn rule_timing_row_count() {
    let report = broken(reference_json(), |a| {
        a["request_timings"].as_array_mut().expect("rows").pop();
    });
    assert_rule(&report, RuleId::TimingRowCount, "$.request_timings");
}

#[test]
fn rule_row_integer_field() {
    let report = broken(reference_json(), |a| {
        set(a, "/request_timings/1/content_chunks", json!(-1))
    });
    assert_only_rule(
        &report,
        RuleId::RowIntegerField,
        "$.request_timings[1].content_chunks",
    );
    let report = broken(reference_json(), |a| {
        set(a, "/request_timings/3/prompt_tokens", json!(62327.0))
    });
    assert_only_rule(
        &report,
        RuleId::RowIntegerField,
        "$.request_timings[3].prompt_tokens",
    );
}

#[test]
fn rule_row_output_tokens() {
    let report = broken(reference_json(), |a| {
        set(
            a,
            "/request_timings/0/output_token_source",
            json!("content_chunks"),
        )
    });
    assert_only_rule(
        &report,
        RuleId::RowOutputTokens,
        "$.request_timings[0].output_tokens",
    );
    let report = broken(reference_json(), |a| {
        set(a, "/request_timings/2/output_token_source", json!("guess"))
    });
    assert_only_rule(
        &report,
        RuleId::RowOutputTokens,
        "$.request_timings[2].output_token_source",
    );
}

#[test]
fn rule_row_timing_value() {
    let report = broken(reference_json(), |a| {
        set(a, "/request_timings/5/decode_tok_s", json!(-3.0))
    });
    assert_only_rule(
        &report,
        RuleId::RowTimingValue,
        "$.request_timings[5].decode_tok_s",
    );
    let report = broken(reference_json(), |a| {
        remove(a, "/request_timings/0/time_to_first_output_ms")
    });
    assert_only_rule(
        &report,
        RuleId::RowTimingValue,
        "$.request_timings[0].time_to_first_output_ms",
    );
}

#[test]
fn rule_timing_order() {
    let report = broken(reference_json(), |a| {
        set(a, "/request_timings/2/ttft_ms", json!(20_000.0))
    });
    assert_only_rule(&report, RuleId::TimingOrder, "$.request_timings[2].ttft_ms");
    let report = broken(reference_json(), |a| {
        set(
            a,
            "/request_timings/0/time_to_first_output_ms",
            json!(1500.0),
        )
    });
    assert_only_rule(
        &report,
        RuleId::TimingOrder,
        "$.request_timings[0].time_to_first_output_ms",
    );
}

#[test]
fn rule_index_coverage_zero_failure_form() {
    let report = broken(reference_json(), |a| {
        set(a, "/request_timings/3/request_index", json!(7))
    });
    assert_only_rule(
        &report,
        RuleId::IndexCoverage,
        "$.request_timings[3].request_index",
    );
    assert_rule(&report, RuleId::IndexCoverage, "$.request_timings");
    let report = broken(reference_json(), |a| {
        set(a, "/request_timings/3/request_index", json!(2))
    });
    assert_only_rule(
        &report,
        RuleId::IndexCoverage,
        "$.request_timings[3].request_index",
    );
}

#[test]
fn rule_index_coverage_general_form() {
    // G3 fixture: rows cover all but 4 and 9, which are the failures. Make failure 0 reuse 9.
    let report = broken(g3(), |a| set(a, "/failures/0/request_index", json!(9)));
    assert_only_rule(
        &report,
        RuleId::IndexCoverage,
        "$.failures[1].request_index",
    );
    assert_rule(&report, RuleId::IndexCoverage, "$.request_timings");
    // A failure that duplicates a row.
    let report = broken(g3(), |a| set(a, "/failures/1/request_index", json!(0)));
    assert_rule(
        &report,
        RuleId::IndexCoverage,
        "$.failures[1].request_index",
    );
}

#[test]
fn rule_failure_shape() {
    let report = broken(g3(), |a| set(a, "/failures/0/error_type", json!(5)));
    assert_only_rule(&report, RuleId::FailureShape, "$.failures[0].error_type");
    let report = broken(all_failed_strict(), |a| {
        set(a, "/failures/3/performance_eligible", json!(true))
    });
    assert_only_rule(
        &report,
        RuleId::FailureShape,
        "$.failures[3].performance_eligible",
    );
    let report = broken(all_failed_strict(), |a| {
        set(a, "/failures/2/failure_class", json!("oops"))
    });
    assert_only_rule(&report, RuleId::FailureShape, "$.failures[2].failure_class");
}

#[test]
fn rule_output_tokens_sum() {
    let report = broken(reference_json(), |a| {
        set(a, "/metrics/output_tokens", json!(2284))
    });
    assert_only_rule(&report, RuleId::OutputTokensSum, "$.metrics.output_tokens");
    let report = broken(all_failed_strict(), |a| {
        set(a, "/metrics/output_tokens", json!(1.5))
    });
    assert_only_rule(&report, RuleId::OutputTokensSum, "$.metrics.output_tokens");
}

#[test]
fn rule_throughput_value() {
    let report = broken(reference_json(), |a| {
        set(a, "/metrics/throughput_tok_s", json!(-1.0))
    });
    assert_only_rule(
        &report,
        RuleId::ThroughputValue,
        "$.metrics.throughput_tok_s",
    );
}

// ---------------------------------------------------------------------------------------------
// Canaries and controlled output.
// ---------------------------------------------------------------------------------------------

/// The reference artifact turned into an observe run with W = 8 where every row adhered.
fn observe_run_with_controlled_rows() -> Value {
    let mut artifact = reference_json();
    set(&mut artifact, "/response_words", json!(8));
    for index in 0..6 {
        set(
            &mut artifact,
            &format!("/request_timings/{index}/controlled_output"),
            json!({
                "policy": "observe", "requested_words": 8, "observed_code_words": 8,
                "observed_extra_words": 0, "capture_complete": true, "exact_adherence": true,
                "passed": true,
            }),
        );
    }
    artifact
}

#[test]
fn rule_canary_unexpected() {
    let report = broken(reference_json(), |a| {
        set(a, "/request_canaries", json!(false))
    });
    assert_only_rule(
        &report,
        RuleId::CanaryUnexpected,
        "$.request_timings[0].request_canary",
    );
    assert_eq!(report.violations.len(), 6);
}

#[test]
fn rule_canary_required() {
    let report = broken(reference_json(), |a| {
        set(a, "/request_timings/0/request_canary/passed", json!(false))
    });
    assert_only_rule(
        &report,
        RuleId::CanaryRequired,
        "$.request_timings[0].request_canary.passed",
    );
    let report = broken(reference_json(), |a| {
        set(a, "/request_timings/4/request_canary", Value::Null)
    });
    assert_only_rule(
        &report,
        RuleId::CanaryRequired,
        "$.request_timings[4].request_canary",
    );
}

#[test]
fn rule_canary_modern_evidence() {
    let report = broken(reference_json(), |a| {
        set(
            a,
            "/request_timings/1/request_canary/marker_at_start",
            json!(false),
        )
    });
    assert_only_rule(
        &report,
        RuleId::CanaryModernEvidence,
        "$.request_timings[1].request_canary",
    );
    // Without a policy the same canary is acceptable legacy substring-only evidence.
    let report = broken(reference_json(), |a| {
        set(
            a,
            "/request_timings/1/request_canary/marker_at_start",
            json!(false),
        );
        set(a, "/controlled_output_policy", Value::Null);
    });
    assert_eq!(report.verdict, Verdict::Valid, "{report}");
}

#[test]
fn rule_controlled_output_unexpected() {
    let report = broken(reference_json(), |a| {
        set(
            a,
            "/request_timings/0/controlled_output",
            json!({"policy": "observe", "requested_words": 0}),
        );
    });
    assert_only_rule(
        &report,
        RuleId::ControlledOutputUnexpected,
        "$.request_timings[0].controlled_output",
    );
}

#[test]
fn rule_controlled_output_shape() {
    let report = broken(reference_json(), |a| set(a, "/response_words", json!(32)));
    assert_only_rule(
        &report,
        RuleId::ControlledOutputShape,
        "$.request_timings[5].controlled_output",
    );
    let report = broken(observe_run_with_controlled_rows(), |a| {
        set(
            a,
            "/request_timings/2/controlled_output/requested_words",
            json!(9),
        );
    });
    assert_only_rule(
        &report,
        RuleId::ControlledOutputShape,
        "$.request_timings[2].controlled_output.requested_words",
    );
    let report = broken(observe_run_with_controlled_rows(), |a| {
        set(
            a,
            "/request_timings/2/controlled_output/policy",
            json!("strict"),
        );
    });
    assert_only_rule(
        &report,
        RuleId::ControlledOutputShape,
        "$.request_timings[2].controlled_output.policy",
    );
}

#[test]
fn rule_controlled_output_adherence() {
    let report = broken(observe_run_with_controlled_rows(), |a| {
        set(
            a,
            "/request_timings/0/controlled_output/observed_extra_words",
            json!(3),
        );
    });
    assert_only_rule(
        &report,
        RuleId::ControlledOutputAdherence,
        "$.request_timings[0].controlled_output.exact_adherence",
    );
    // An incomplete capture makes adherence unobservable: it must be null.
    let report = broken(observe_run_with_controlled_rows(), |a| {
        set(
            a,
            "/request_timings/1/controlled_output/capture_complete",
            json!(false),
        );
    });
    assert_only_rule(
        &report,
        RuleId::ControlledOutputAdherence,
        "$.request_timings[1].controlled_output.exact_adherence",
    );
}

#[test]
fn rule_controlled_output_passed() {
    let report = broken(observe_run_with_controlled_rows(), |a| {
        set(
            a,
            "/request_timings/3/controlled_output/passed",
            json!(false),
        );
    });
    assert_only_rule(
        &report,
        RuleId::ControlledOutputPassed,
        "$.request_timings[3].controlled_output.passed",
    );
}

#[test]
fn rule_controlled_output_strict() {
    let report = broken(observe_run_with_controlled_rows(), |a| {
        set(a, "/controlled_output_policy", json!("strict"));
        for index in 0..6 {
            set(
                a,
                &format!("/request_timings/{index}/controlled_output/policy"),
                json!("strict"),
            );
        }
        set(
            a,
            "/request_timings/4/controlled_output/capture_complete",
            json!(false),
        );
        set(
            a,
            "/request_timings/4/controlled_output/exact_adherence",
            Value::Null,
        );
        set(
            a,
            "/request_timings/4/controlled_output/passed",
            json!(false),
        );
    });
    assert_only_rule(
        &report,
        RuleId::ControlledOutputStrict,
        "$.request_timings[4].controlled_output",
    );
    assert_eq!(report.violations.len(), 1);
}

// ---------------------------------------------------------------------------------------------
// Time.
// ---------------------------------------------------------------------------------------------

#[test]
fn rule_iso_timestamp() {
    let report = broken(reference_json(), |a| {
        set(a, "/started_at", json!("2026-10-05T11:42:24"))
    });
    assert_only_rule(&report, RuleId::IsoTimestamp, "$.started_at");
    let report = broken(reference_json(), |a| {
        set(a, "/finished_at", json!("2026-10-05T11:43:06.250000Z"))
    });
    assert_only_rule(&report, RuleId::IsoTimestamp, "$.finished_at");
    let report = broken(g3(), |a| {
        set(a, "/started_at", json!("2026-02-30T10:00:00Z"))
    });
    assert_only_rule(&report, RuleId::IsoTimestamp, "$.started_at");
    // Other spellings Python accepts are fine when they name the same second.
    let report = broken(reference_json(), |a| {
        set(a, "/started_at", json!("2026-10-05 13:42:24.000+02:00"))
    });
    assert_eq!(report.verdict, Verdict::Valid, "{report}");
}

#[test]
fn rule_nanosecond_fields() {
    let report = broken(reference_json(), |a| {
        set(
            a,
            "/finished_at_unix_ns",
            json!(1_791_200_544_279_383_000_i64),
        )
    });
    assert_only_rule(&report, RuleId::NanosecondFields, "$.finished_at_unix_ns");
    let report = broken(reference_json(), |a| {
        set(a, "/started_at_unix_ns", json!("1791200544279383700"))
    });
    assert_only_rule(&report, RuleId::NanosecondFields, "$.started_at_unix_ns");
}

#[test]
fn rule_nanosecond_iso_second() {
    let report = broken(reference_json(), |a| {
        set(a, "/started_at", json!("2026-10-05T11:42:25Z"))
    });
    assert_only_rule(&report, RuleId::NanosecondIsoSecond, "$.started_at_unix_ns");
}

#[test]
fn rule_wall_clock_reconciliation() {
    // The ns interval is 42385.4611 ms; 10 ms off exceeds max(5 ms, 0.01 % = 4.24 ms).
    let report = broken(reference_json(), |a| {
        set(a, "/wall_clock_ms", json!(42395.4611))
    });
    assert_only_rule(&report, RuleId::WallClockReconciliation, "$.wall_clock_ms");
    let report = broken(reference_json(), |a| {
        set(a, "/wall_clock_ms", json!(42390.0))
    });
    assert_eq!(
        report.verdict,
        Verdict::Valid,
        "4.54 ms is inside the 5 ms floor:\n{report}"
    );
}

#[test]
fn rule_clock_domain_id() {
    let report = broken(reference_json(), |a| {
        set(a, "/clock_domain_id", json!("lab a"))
    });
    assert_only_rule(&report, RuleId::ClockDomainId, "$.clock_domain_id");
    let report = broken(reference_json(), |a| {
        set(a, "/clock_domain_id", json!("x".repeat(65)))
    });
    assert_only_rule(&report, RuleId::ClockDomainId, "$.clock_domain_id");
}

#[test]
fn rule_configuration_fingerprint() {
    let upper = format!("sha256:{}", "ABCDEF0123456789".repeat(4));
    let report = broken(reference_json(), |a| {
        set(a, "/configuration_fingerprint", json!(upper))
    });
    assert_only_rule(
        &report,
        RuleId::ConfigurationFingerprint,
        "$.configuration_fingerprint",
    );
}

// ---------------------------------------------------------------------------------------------
// Distributions.
// ---------------------------------------------------------------------------------------------

#[test]
fn rule_distribution_value() {
    let report = broken(reference_json(), |a| {
        set(a, "/metrics/ttft_p50_ms", json!(-1.0))
    });
    assert_only_rule(&report, RuleId::DistributionValue, "$.metrics.ttft_p50_ms");
    let report = broken(fixture_json("generations/g1-legacy-minimal.json"), |a| {
        set(a, "/metrics/e2e_p95_ms", json!("slow"))
    });
    assert_only_rule(&report, RuleId::DistributionValue, "$.metrics.e2e_p95_ms");
}

#[test]
fn rule_distribution_value_leaves_ci_bounds_unchecked() {
    // The reference artifact itself has effective_prefill_tok_s_mean_ci95_low = −124187.7.
    let low = &reference_json()["metrics"]["effective_prefill_tok_s_mean_ci95_low"];
    assert!(low.as_f64().is_some_and(|low| low < 0.0));
    let report = broken(reference_json(), |a| {
        set(a, "/metrics/ttft_mean_ci95_low_ms", json!(-5.0))
    });
    assert_eq!(report.verdict, Verdict::Valid);
}

#[test]
fn rule_distribution_order() {
    let report = broken(reference_json(), |a| {
        set(a, "/metrics/decode_tok_s_p75", json!(230.0))
    });
    assert_only_rule(
        &report,
        RuleId::DistributionOrder,
        "$.metrics.decode_tok_s_p75",
    );
    let report = broken(reference_json(), |a| {
        set(a, "/metrics/completion_tokens_mean", json!(600.0))
    });
    assert_only_rule(
        &report,
        RuleId::DistributionOrder,
        "$.metrics.completion_tokens_mean",
    );
    // Legacy metrics have only p50/p95, which must still be ordered.
    let report = broken(g3(), |a| set(a, "/metrics/ttft_p95_ms", json!(1.0)));
    assert_only_rule(&report, RuleId::DistributionOrder, "$.metrics.ttft_p95_ms");
}

#[test]
fn rule_context_within_max() {
    let report = broken(reference_json(), |a| {
        set(a, "/context_tokens", json!(300_000))
    });
    assert_only_rule(&report, RuleId::ContextWithinMax, "$.context_tokens");
}

// ---------------------------------------------------------------------------------------------
// Report forms and combiner admission.
// ---------------------------------------------------------------------------------------------

#[test]
fn report_json_and_display_name_rules_by_stable_id() {
    let report = broken(reference_json(), |a| {
        set(a, "/request_timings/2/ttft_ms", json!(20_000.0))
    });
    let machine = report.to_json();
    assert_eq!(machine["verdict"], json!("invalid"));
    assert_eq!(machine["generation"], json!("modern"));
    assert_eq!(machine["violations"][0]["rule"], json!("timing-order"));
    assert_eq!(
        machine["violations"][0]["path"],
        json!("$.request_timings[2].ttft_ms")
    );
    let human = report.to_string();
    assert!(
        human.contains(
            "[timing-order] $.request_timings[2].ttft_ms: ttft_ms (20000) exceeds e2e_ms"
        ),
        "{human}"
    );
}

#[test]
fn combiner_admits_the_reference_but_not_runs_with_failures() {
    assert_eq!(combiner_admission(&reference_json()), Vec::<String>::new());
    let reasons = combiner_admission(&g3());
    assert!(
        reasons.iter().any(|r| r.contains("2 failed requests")),
        "{reasons:?}"
    );
    let reasons = combiner_admission(&all_failed_strict());
    assert!(
        reasons
            .iter()
            .any(|r| r.contains("performance_eligible is false")),
        "{reasons:?}"
    );
    let reasons = combiner_admission(&fixture_json("generations/g2.json"));
    assert!(
        reasons.iter().any(|r| r.contains("no request_timings")),
        "{reasons:?}"
    );
}

#[test]
fn combiner_lists_mismatched_replica_fields() {
    let mut other = reference_json();
    set(&mut other, "/max_tokens", json!(4096));
    set(&mut other, "/sampling/top_p/requested", json!(0.9));
    let mismatches = combiner_field_mismatches(&reference_json(), &other);
    assert_eq!(mismatches.len(), 2, "{mismatches:?}");
    assert!(mismatches[0].starts_with("max_tokens differs: 8192 versus 4096"));
    assert!(mismatches[1].starts_with("sampling differs"));
}

/// A converted file (`source.tool` names vLLM, GuideLLM or AIPerf) may leave null what the tool
/// cannot know; the same nulls in any other artifact are still violations.
#[test]
fn only_converted_files_may_leave_unknowable_fields_null() {
    let unknowable = |artifact: &mut Value| {
        set(artifact, "/engine", Value::Null);
        set(artifact, "/prompt_cache_mode", Value::Null);
        set(artifact, "/sampling", Value::Null);
        set(
            artifact,
            "/request_timings/0/planned_context_tokens",
            Value::Null,
        );
        set(artifact, "/request_timings/0/content_chunks", Value::Null);
        set(artifact, "/request_timings/0/reasoning_chunks", Value::Null);
    };
    let plain = broken(reference_json(), unknowable);
    assert_rule(&plain, RuleId::EngineModelNames, "$.engine");
    assert_rule(&plain, RuleId::PromptCacheMode, "$.prompt_cache_mode");
    assert_rule(&plain, RuleId::SamplingShape, "$.sampling");
    assert_rule(
        &plain,
        RuleId::RowIntegerField,
        "$.request_timings[0].planned_context_tokens",
    );
    for (tool, accepted) in [("vllm", true), ("aiperf", true), ("someone-else", false)] {
        let report = broken(reference_json(), |artifact| {
            unknowable(artifact);
            set(artifact, "/source", json!({ "tool": tool }));
        });
        assert_eq!(
            report.verdict == Verdict::Valid,
            accepted,
            "{tool}: {:?}",
            report.violations
        );
    }
    // Types are still checked: a converted engine that is a number is wrong.
    let wrong = broken(reference_json(), |artifact| {
        set(artifact, "/source", json!({ "tool": "vllm" }));
        set(artifact, "/engine", json!(7));
    });
    assert_rule(&wrong, RuleId::EngineModelNames, "$.engine");
}
