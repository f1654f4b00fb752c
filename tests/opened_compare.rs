//! Opening every fixture as a dropped file, hostile text, comparison and exports.
//!
//! Proves that `OpenedArtifact` gives exactly the validator's report for every fixture of
//! every generation (and a clear refusal for unreadable bytes), that legacy files show their
//! p50/p95, that hostile strings arrive verbatim as data while the CSV and Markdown exports
//! neutralize them, and that `compare` flags workload mismatches and computes deltas/ratios.

mod common;

use std::fs;
use std::path::Path;

use common::{fixture_path, fixture_paths, fixture_text, reference_text, repo_path};

use serde_json::{json, Value};
use strobe::core::present::compare::compare;
use strobe::core::present::compare::{ComparedMetric, MetricDelta};
use strobe::core::present::export::{rows_csv, summary_markdown, CSV_COLUMNS};
use strobe::core::read::opened::metrics::{MetricKind, MetricStat};
use strobe::core::read::opened::text::LoadNotice;
use strobe::core::read::opened::{OpenRefusal, OpenedArtifact, MAX_ARTIFACT_TEXT_BYTES};
use strobe::core::read::validate::report::{Generation, RuleId, Verdict};
use strobe::core::read::validate::validate_artifact_text;

const HOSTILE: &str = "<img src=x onerror=alert(1)>";

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default()
}

fn reference_value() -> Value {
    let text =
        fs::read_to_string(fixture_path("reference-artifact.json")).expect("reference artifact");
    serde_json::from_str(&text).expect("reference parses")
}

fn load_value(name: &str, value: &Value) -> OpenedArtifact {
    OpenedArtifact::from_text(name, &value.to_string())
}

#[test]
fn every_fixture_gets_exactly_the_validators_report() {
    let paths = fixture_paths();
    assert!(paths.len() >= 20, "found {} fixtures", paths.len());
    for path in paths {
        let bytes = fs::read(&path).expect("fixture bytes");
        let opened = OpenedArtifact::from_bytes(&file_name(&path), &bytes);
        match std::str::from_utf8(&bytes) {
            Ok(text) => {
                assert_eq!(
                    opened.report,
                    validate_artifact_text(text),
                    "{}",
                    path.display()
                );
                assert_eq!(opened.refusal, None);
            }
            Err(_) => {
                // not-utf8.json: the validator takes text, so the loader refuses the bytes.
                assert!(
                    matches!(opened.refusal, Some(OpenRefusal::NotUtf8 { offset }) if offset > 0),
                    "{}",
                    path.display()
                );
                assert_eq!(opened.verdict(), Verdict::Invalid);
                assert!(opened.status_line().contains("not UTF-8"));
            }
        }
        if opened.verdict() == Verdict::Invalid {
            assert!(!opened.problems().is_empty(), "{}", path.display());
            assert!(
                opened.status_line().starts_with("Not read")
                    || opened.status_line().starts_with("Invalid")
            );
        }
    }
}

#[test]
fn verdicts_name_each_generation() {
    let cases = [
        ("tests/fixtures/reference-artifact.json", Verdict::Valid),
        (
            "tests/fixtures/generations/g1-legacy-minimal.json",
            Verdict::ValidLegacy(Generation::G1LegacyMinimal),
        ),
        (
            "tests/fixtures/generations/g2.json",
            Verdict::ValidLegacy(Generation::G2),
        ),
        (
            "tests/fixtures/generations/g3.json",
            Verdict::ValidLegacy(Generation::G3),
        ),
        (
            "tests/fixtures/generations/modern-all-failed-strict.json",
            Verdict::Valid,
        ),
        ("tests/fixtures/invalid/not-json.json", Verdict::Invalid),
    ];
    for (relative, verdict) in cases {
        let path = repo_path(relative);
        let opened = OpenedArtifact::from_bytes(&file_name(&path), &fs::read(&path).expect("read"));
        assert_eq!(opened.verdict(), verdict, "{relative}");
    }
}

#[test]
fn hostile_files_get_clear_messages() {
    for (name, rule) in [
        ("not-json.json", RuleId::InvalidJson),
        ("nan-token.json", RuleId::NonFiniteNumber),
        ("deeply-nested.json", RuleId::NestingTooDeep),
        ("wrong-schema.json", RuleId::SchemaMismatch),
    ] {
        let path = repo_path(&format!("tests/fixtures/invalid/{name}"));
        let opened = OpenedArtifact::from_bytes(name, &fs::read(&path).expect("read"));
        assert_eq!(opened.verdict(), Verdict::Invalid, "{name}");
        assert!(
            opened.report.rules().contains(&rule),
            "{name}: {}",
            opened.report
        );
        assert!(
            opened.status_line().contains(rule.id()),
            "{name}: {}",
            opened.status_line()
        );
        assert!(opened.rows.is_empty() && opened.failures.is_empty());
    }
}

#[test]
fn oversized_text_is_refused_before_parsing() {
    let huge = " ".repeat(MAX_ARTIFACT_TEXT_BYTES + 1);
    let opened = OpenedArtifact::from_text("huge.json", &huge);
    assert_eq!(
        opened.refusal,
        Some(OpenRefusal::TooLarge {
            bytes: MAX_ARTIFACT_TEXT_BYTES + 1,
            limit: MAX_ARTIFACT_TEXT_BYTES,
        })
    );
    assert_eq!(opened.verdict(), Verdict::Invalid);
    assert!(
        opened.status_line().contains("limit"),
        "{}",
        opened.status_line()
    );
    let from_bytes = OpenedArtifact::from_bytes("huge.json", huge.as_bytes());
    assert_eq!(from_bytes.refusal, opened.refusal);
}

#[test]
fn legacy_artifacts_without_rows_show_their_p50_and_p95() {
    let mut legacy_without_rows = 0;
    // A G3 run with zero successes has no rows and null percentiles; the others state them.
    let mut with_percentiles = 0;
    for path in fixture_paths() {
        let Ok(text) = fs::read_to_string(&path) else {
            continue;
        };
        let opened = OpenedArtifact::from_text(&file_name(&path), &text);
        let Verdict::ValidLegacy(_) = opened.verdict() else {
            continue;
        };
        if opened.has_rows() {
            continue;
        }
        legacy_without_rows += 1;
        let value: Value = serde_json::from_str(&text).expect("valid legacy parses");
        let metrics = &value["metrics"];
        for (kind, key) in [(MetricKind::Ttft, "ttft"), (MetricKind::E2e, "e2e")] {
            let summary = opened.metrics.get(kind);
            assert_eq!(
                summary.p50,
                metrics[format!("{key}_p50_ms")].as_f64(),
                "{}",
                path.display()
            );
            assert_eq!(
                summary.p95,
                metrics[format!("{key}_p95_ms")].as_f64(),
                "{}",
                path.display()
            );
            if summary.p50.is_some() && summary.p95.is_some() {
                with_percentiles += 1;
            }
        }
        assert_eq!(
            opened.metrics.throughput_tok_s,
            metrics["throughput_tok_s"].as_f64()
        );
        assert!(
            opened.status_line().contains("p50/p95"),
            "{}",
            opened.status_line()
        );
    }
    assert!(
        legacy_without_rows >= 5,
        "G1, G2 and row-less G3 fixtures were read"
    );
    assert!(
        with_percentiles >= 2 * 4,
        "TTFT and E2E p50/p95 of the G1 and G2 fixtures"
    );
}

#[test]
fn g3_rows_and_tpot_fall_back_to_the_legacy_keys() {
    let path = repo_path("tests/fixtures/generations/g3.json");
    let text = fs::read_to_string(&path).expect("g3");
    let value: Value = serde_json::from_str(&text).expect("g3 parses");
    let opened = OpenedArtifact::from_text("g3.json", &text);
    let tpot = opened.metrics.get(MetricKind::Tpot);
    assert_eq!(tpot.source_prefix, Some("mean_inter_token_latency_ms"));
    assert_eq!(
        tpot.p50,
        value["metrics"]["mean_inter_token_latency_ms_p50"].as_f64()
    );
    let rows = value["request_timings"].as_array().expect("rows");
    assert_eq!(opened.rows.len(), rows.len());
    for (view, row) in opened.rows.iter().zip(rows) {
        assert_eq!(view.request_index, row["request_index"].as_u64());
        assert_eq!(view.tpot_ms, row["mean_inter_token_latency_ms"].as_f64());
        assert_eq!(view.ttft_ms, row["ttft_ms"].as_f64());
        assert_eq!(view.cached_tokens, None, "G3 rows keep no cached tokens");
        assert_eq!(view.started_at_ms, None);
    }
    let failures = value["failures"].as_array().expect("failures");
    assert_eq!(opened.failures.len(), failures.len());
    assert_eq!(
        opened.failures[0]
            .error_message
            .as_ref()
            .map(|text| text.as_str()),
        failures[0]["error_message"].as_str()
    );
}

#[test]
fn hostile_strings_arrive_verbatim_as_data() {
    let mut value = reference_value();
    value["model"] = json!(HOSTILE);
    value["engine"] = json!(HOSTILE);
    value["gpu"] = json!(HOSTILE);
    let opened = load_value(HOSTILE, &value);
    // Markup in names does not make an artifact invalid: it is data, shown as text.
    assert_eq!(opened.verdict(), Verdict::Valid, "{}", opened.report);
    for field in [
        &opened.identity.model,
        &opened.identity.engine,
        &opened.identity.gpu,
    ] {
        assert_eq!(field.as_ref().map(|text| text.as_str()), Some(HOSTILE));
    }
    let flagged: Vec<&str> = opened
        .notices
        .iter()
        .filter_map(|notice| match notice {
            LoadNotice::MarkupLikeText { path, .. } => Some(path.as_str()),
            LoadNotice::RowsSkipped { .. } => None,
        })
        .collect();
    assert_eq!(flagged, ["$.engine", "$.gpu", "$.model"]);

    let markdown = summary_markdown(&[&opened], &compare(&[&opened]));
    assert!(!markdown.contains('<'), "{markdown}");
    assert!(
        markdown.contains("&lt;img src=x onerror=alert(1)&gt;"),
        "{markdown}"
    );
}

#[test]
fn a_ten_megabyte_model_name_is_capped_for_display() {
    let mut value = reference_value();
    value["model"] = json!("m".repeat(10 * 1024 * 1024));
    let opened = load_value("big-name.json", &value);
    let model = opened.identity.model.expect("model");
    assert!(model.truncated);
    assert_eq!(model.original_chars, 10 * 1024 * 1024);
    assert_eq!(
        model.text.chars().count(),
        strobe::core::read::opened::text::DISPLAY_TEXT_MAX_CHARS
    );
    assert!(model.to_string().ends_with('…'));
}

#[test]
fn failure_messages_are_data_and_the_exports_neutralize_them() {
    let path = repo_path("tests/fixtures/generations/modern-all-failed-strict.json");
    let mut value: Value =
        serde_json::from_str(&fs::read_to_string(path).expect("fixture")).expect("parses");
    let formula = "=HYPERLINK(\"http://evil.example\",\"click\")";
    value["failures"][0]["error_message"] = json!(HOSTILE);
    value["failures"][1]["error_message"] = json!(formula);
    value["failures"][2]["error_message"] = json!("line one\r\nline | two");
    value["failures"][3]["error_type"] = json!("-2+3");
    let opened = load_value("hostile-failures.json", &value);
    assert_eq!(opened.verdict(), Verdict::Valid, "{}", opened.report);
    let messages: Vec<Option<&str>> = opened
        .failures
        .iter()
        .take(3)
        .map(|failure| failure.error_message.as_ref().map(|text| text.as_str()))
        .collect();
    assert_eq!(
        messages,
        [Some(HOSTILE), Some(formula), Some("line one\r\nline | two")]
    );

    let csv = rows_csv(&opened);
    let lines: Vec<&str> = csv.split("\r\n").collect();
    assert_eq!(lines[0], CSV_COLUMNS.join(","));
    // One header, 12 failures, the CRLF inside one quoted message, and the empty string
    // after the final CRLF.
    assert_eq!(lines.len(), 1 + 12 + 1 + 1);
    assert!(lines[1].ends_with(&format!(",{HOSTILE}")), "{}", lines[1]);
    assert!(
        lines[2].ends_with(",\"'=HYPERLINK(\"\"http://evil.example\"\",\"\"click\"\")\""),
        "{}",
        lines[2]
    );
    // The embedded CRLF stays inside one quoted cell.
    assert!(csv.contains(",\"line one\r\nline | two\"\r\n"), "{csv}");
    assert!(
        csv.contains(",'-2+3,"),
        "a formula-like error type is guarded: {csv}"
    );

    let markdown = summary_markdown(&[&opened], &compare(&[&opened]));
    assert!(!markdown.contains('<'));
}

#[test]
fn reference_rows_export_as_csv_with_their_values() {
    let value = reference_value();
    let opened = load_value("reference-artifact.json", &value);
    let csv = rows_csv(&opened);
    let rows = value["request_timings"].as_array().expect("rows");
    let lines: Vec<&str> = csv.trim_end().split("\r\n").collect();
    assert_eq!(lines.len(), 1 + rows.len());
    let header: Vec<&str> = lines[0].split(',').collect();
    for (line, row) in lines[1..].iter().zip(rows) {
        let cells: Vec<&str> = line.split(',').collect();
        assert_eq!(cells.len(), CSV_COLUMNS.len());
        let cell = |column: &str| {
            cells[header
                .iter()
                .position(|name| *name == column)
                .expect(column)]
        };
        assert_eq!(cell("status"), "ok");
        for column in [
            "ttft_ms",
            "e2e_ms",
            "time_to_first_output_ms",
            "decode_tok_s",
        ] {
            let parsed: f64 = cell(column).parse().expect("a number");
            assert_eq!(Some(parsed), row[column].as_f64(), "{column}");
        }
        assert_eq!(cell("tpot_ms").parse::<f64>().ok(), row["tpot_ms"].as_f64());
        assert_eq!(
            cell("prompt_tokens").parse::<u64>().ok(),
            row["prompt_tokens"].as_u64()
        );
        assert_eq!(
            cell("cached_tokens"),
            "",
            "the reference rows keep no cached tokens"
        );
    }
}

#[test]
fn identical_runs_have_no_mismatch_and_unit_ratios() {
    let value = reference_value();
    let first = load_value("a.json", &value);
    let second = load_value("b.json", &value);
    let comparison = compare(&[&first, &second]);
    assert!(comparison.is_like_for_like(), "{:?}", comparison.mismatches);
    assert_eq!(comparison.labels, ["a.json", "b.json"]);
    for row in &comparison.metrics {
        let other = row.runs[1];
        assert_eq!(other.value, row.runs[0].value);
        if let Some(value) = other.value {
            assert_eq!(other.delta, Some(0.0));
            assert_eq!(
                other.ratio,
                (value != 0.0).then_some(1.0),
                "{:?}",
                row.metric
            );
        }
    }
}

#[test]
fn concurrency_and_cache_mode_mismatches_are_flagged() {
    let baseline = reference_value();
    let mut other = baseline.clone();
    other["concurrency"] = json!(4);
    other["prompt_cache_mode"] = json!("shared");
    let first = load_value("c1.json", &baseline);
    let second = load_value("c4-shared.json", &other);
    let comparison = compare(&[&first, &second]);
    let fields: Vec<&str> = comparison
        .mismatches
        .iter()
        .map(|mismatch| mismatch.field)
        .collect();
    assert_eq!(fields, ["prompt_cache_mode", "concurrency"]);
    assert_eq!(comparison.mismatches[0].values, ["unique", "shared"]);
    assert_eq!(comparison.mismatches[1].values, ["1", "4"]);
    assert!(comparison.mismatches[1].explanation.contains("queueing"));

    let markdown = summary_markdown(&[&first, &second], &comparison);
    assert!(markdown.contains("## Workload mismatches"), "{markdown}");
    assert!(
        markdown.contains("- **concurrency** (c1.json: 1; c4-shared.json: 4)"),
        "{markdown}"
    );
}

#[test]
fn deltas_and_ratios_are_against_the_first_run() {
    let baseline = reference_value();
    let baseline_p50 = baseline["metrics"]["ttft_p50_ms"].as_f64().expect("p50");
    let mut faster = baseline.clone();
    faster["metrics"]["ttft_p50_ms"] = json!(baseline_p50 / 4.0);
    let first = load_value("base.json", &baseline);
    let second = load_value("faster.json", &faster);
    let comparison = compare(&[&first, &second]);
    let ttft_p50 = comparison
        .metrics
        .iter()
        .find(|row| row.metric == ComparedMetric::Distribution(MetricKind::Ttft, MetricStat::P50))
        .expect("TTFT p50 compared");
    assert_eq!(
        ttft_p50.runs[0],
        MetricDelta {
            value: Some(baseline_p50),
            delta: Some(0.0),
            ratio: Some(1.0)
        }
    );
    assert_eq!(
        ttft_p50.runs[1],
        MetricDelta {
            value: Some(baseline_p50 / 4.0),
            delta: Some(baseline_p50 / 4.0 - baseline_p50),
            ratio: Some(0.25)
        }
    );
}

#[test]
fn comparing_with_a_legacy_run_leaves_missing_values_empty_and_flags_the_workload() {
    let reference = load_value("reference.json", &reference_value());
    let path = repo_path(
        "tests/fixtures/real/2026-07-16-gemma4-vllm0251-wsl2__control-fast-c128-ctx1024.json",
    );
    let legacy = OpenedArtifact::from_text("g1.json", &fs::read_to_string(path).expect("g1"));
    let comparison = compare(&[&reference, &legacy]);
    let ttfo_p50 = comparison
        .metrics
        .iter()
        .find(|row| row.metric == ComparedMetric::Distribution(MetricKind::Ttfo, MetricStat::P50))
        .expect("TTFO p50 compared");
    assert_eq!(ttfo_p50.runs[1], MetricDelta::default(), "G1 has no TTFO");
    // Failed requests: 0 in the reference, unknown in G1 (no `failed` key).
    let failed = comparison
        .metrics
        .iter()
        .find(|row| row.metric == ComparedMetric::FailedRequests)
        .expect("failed compared");
    assert_eq!(failed.runs[0].value, Some(0.0));
    assert_eq!(failed.runs[1].value, None);
    let fields: Vec<&str> = comparison
        .mismatches
        .iter()
        .map(|mismatch| mismatch.field)
        .collect();
    for expected in [
        "measurement_protocol",
        "prompt_cache_mode",
        "context_tokens",
        "concurrency",
        "max_tokens",
        "request_canaries",
        "sampling.temperature.requested",
        "serve_flags.thinking_mode",
        "engine",
        "gpu",
    ] {
        assert!(fields.contains(&expected), "{expected} in {fields:?}");
    }
    let protocol = &comparison.mismatches[0];
    assert_eq!(protocol.values, ["capacity-v4-reasoning", "(absent)"]);
}

#[test]
fn a_zero_baseline_gives_a_delta_but_no_ratio() {
    let baseline = reference_value();
    let mut other = baseline.clone();
    other["metrics"]["prefix_cache_hit_avg"] = json!(0.5);
    let mut zero = baseline.clone();
    zero["metrics"]["prefix_cache_hit_avg"] = json!(0.0);
    let first = load_value("zero.json", &zero);
    let second = load_value("half.json", &other);
    let comparison = compare(&[&first, &second]);
    let cache = comparison
        .metrics
        .iter()
        .find(|row| row.metric == ComparedMetric::PrefixCacheHitAvg)
        .expect("cache compared");
    assert_eq!(
        cache.runs[1],
        MetricDelta {
            value: Some(0.5),
            delta: Some(0.5),
            ratio: None
        }
    );
}

#[test]
fn files_refused_before_reading_say_why() {
    use strobe::core::read::opened::{OpenRefusal, OpenedArtifact, MAX_ARTIFACT_TEXT_BYTES};
    use strobe::core::read::validate::report::Verdict;

    let huge = OpenedArtifact::too_large("huge.json", 300 * 1024 * 1024);
    assert_eq!(huge.verdict(), Verdict::Invalid);
    assert_eq!(
        huge.refusal,
        Some(OpenRefusal::TooLarge {
            bytes: 300 * 1024 * 1024,
            limit: MAX_ARTIFACT_TEXT_BYTES
        })
    );
    assert!(huge
        .status_line()
        .starts_with("Not read: the file is 314572800 bytes"));

    let lost = OpenedArtifact::unreadable("gone.json", "NotReadableError: permission lost");
    assert_eq!(lost.verdict(), Verdict::Invalid);
    assert!(lost.problems()[0].contains("permission lost"));
    assert!(lost.rows.is_empty() && lost.failures.is_empty());
}

#[test]
fn live_rows_and_failures_read_like_loaded_ones() {
    use strobe::core::read::opened::views::{FailureView, RowView};
    use strobe::core::read::opened::OpenedArtifact;
    use strobe::core::schema::rows::RequestTiming;

    // Every row of the reference artifact, taken as the typed row strobe measures, gives the
    // same view as the tolerant reader of the file.
    let text = reference_text();
    let opened = OpenedArtifact::from_text("reference.json", &text);
    let value: Value = serde_json::from_str(&text).unwrap();
    let rows = value["request_timings"].as_array().unwrap();
    for (position, row) in rows.iter().enumerate() {
        let timing: RequestTiming = serde_json::from_value(row.clone()).unwrap();
        assert_eq!(
            RowView::from_timing(position, &timing),
            opened.rows[position]
        );
    }

    let swift = fixture_text("real/2026-10-05-swift__swift-capacity-8k-c1.json");
    let opened = OpenedArtifact::from_text("swift.json", &swift);
    let value: Value = serde_json::from_str(&swift).unwrap();
    let failures = value["failures"].as_array().unwrap();
    assert!(!failures.is_empty());
    for (position, failure) in failures.iter().enumerate() {
        let record = serde_json::from_value(failure.clone()).unwrap();
        let view = FailureView::from_record(position, &record);
        let from_file = &opened.failures[position];
        assert_eq!(view.request_index, from_file.request_index);
        assert_eq!(view.failure_class, from_file.failure_class);
        assert_eq!(view.error_type, from_file.error_type);
        assert_eq!(view.error_message, from_file.error_message);
        assert_eq!(view.elapsed_ms, from_file.elapsed_ms);
    }
}
