//! Tests of the readers of other tools' files: every fixture of `tests/fixtures/peers/` is read
//! and its mapped rows are held against the tool's own summary in the same file, each by the
//! tool's percentile method; a broken variant of each is refused with its field named.

use std::path::PathBuf;

use serde_json::{json, Value};

use super::*;

fn fixture_text(relative: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/peers")
        .join(relative);
    std::fs::read_to_string(&path).unwrap_or_else(|error| panic!("{}: {error}", path.display()))
}

fn fixture(relative: &str) -> Value {
    serde_json::from_str(&fixture_text(relative)).expect("fixture is JSON")
}

fn read_one(value: &Value) -> ForeignRun {
    let mut runs = read_json(value).expect("a known tool").expect("readable");
    assert_eq!(runs.len(), 1);
    runs.remove(0)
}

/// Equal to the last few bits (the tools' sums run in another order than Python's fsum).
fn assert_close(actual: Option<f64>, expected: f64, what: &str) {
    let actual = actual.unwrap_or_else(|| panic!("{what}: no value"));
    let tolerance = expected.abs() * 1e-12 + 1e-12;
    assert!(
        (actual - expected).abs() <= tolerance,
        "{what}: strobe {actual} vs the tool's {expected}"
    );
}

fn column(run: &ForeignRun, read: fn(&RowView) -> Option<f64>) -> Vec<f64> {
    run.rows.iter().filter_map(read).collect()
}

#[test]
fn vllm_rows_reproduce_vllms_own_summary() {
    for name in ["vllm/vllm-0.33.0-c1.json", "vllm/vllm-0.33.0-c4.json"] {
        let value = fixture(name);
        assert_eq!(detect(&value), Some(Tool::Vllm), "{name}");
        let run = read_one(&value);
        let tool = |key: &str| {
            value[key]
                .as_f64()
                .unwrap_or_else(|| panic!("{name}: {key}"))
        };
        assert_eq!(run.rows.len() as f64, tool("completed"), "{name}");
        assert_eq!(run.failures.len() as f64, tool("failed"), "{name}");
        assert_eq!(
            run.workload.concurrency.map(|c| c as f64),
            Some(tool("max_concurrency"))
        );
        assert_eq!(run.load, None, "request_rate inf is a closed loop");
        assert_eq!(run.identity.model.as_ref().map(|m| m.as_str()), Some("ok"));
        let date = value["date"].as_str().expect("date");
        let iso = format!(
            "{}-{}-{}T{}:{}:{}",
            &date[0..4],
            &date[4..6],
            &date[6..8],
            &date[9..11],
            &date[11..13],
            &date[13..15]
        );
        assert_eq!(
            run.identity.started_at.as_ref().map(|d| d.as_str()),
            Some(iso.as_str())
        );
        // vLLM's TTFT is mapped to TTFO; its percentiles are numpy's linear interpolation.
        let ttfo = column(&run, |row| row.ttfo_ms);
        assert!(
            run.rows.iter().all(|row| row.ttft_ms.is_none()),
            "TTFT is not recorded"
        );
        assert_close(
            linear_percentile(&ttfo, 50.0),
            tool("median_ttft_ms"),
            "median TTFT",
        );
        assert_close(
            linear_percentile(&ttfo, 99.0),
            tool("p99_ttft_ms"),
            "p99 TTFT",
        );
        assert_close(fmean(&ttfo), tool("mean_ttft_ms"), "mean TTFT");
        let tpot = column(&run, |row| row.tpot_ms);
        assert_close(
            linear_percentile(&tpot, 50.0),
            tool("median_tpot_ms"),
            "median TPOT",
        );
        assert_close(fmean(&tpot), tool("mean_tpot_ms"), "mean TPOT");
        let gaps: Vec<f64> = run
            .rows
            .iter()
            .flat_map(|row| row.read_gaps_ms.clone())
            .collect();
        assert_close(
            linear_percentile(&gaps, 50.0),
            tool("median_itl_ms"),
            "median ITL",
        );
        // strobe's own headline number is by nearest rank, which differs for an even count.
        let mut sorted = ttfo.clone();
        sorted.sort_by(f64::total_cmp);
        assert_eq!(run.metrics.ttfo.p50, nearest_rank(&sorted, 50));
        assert_eq!(run.metrics.ttft.p50, None);
        let tokens: u64 = run.rows.iter().filter_map(|row| row.output_tokens).sum();
        assert_eq!(tokens as f64, tool("total_output_tokens"));
        assert_close(
            run.metrics.throughput_tok_s,
            tool("output_throughput"),
            "output throughput",
        );
        assert_eq!(
            run.source.aggregate("median_ttft_ms"),
            Some(tool("median_ttft_ms"))
        );
        // Rows are placed on the run's clock from `start_times`.
        assert_eq!(run.rows[0].started_at_ms, Some(0.0));
        assert!(run
            .rows
            .iter()
            .all(|row| row.started_at_ms.is_some_and(|at| at >= 0.0)));
    }
}

#[test]
fn guidellm_rows_reproduce_guidellms_own_summary() {
    for name in [
        "guidellm/guidellm-0.8.1-c1.json",
        "guidellm/guidellm-0.8.1-c4.json",
    ] {
        let value = fixture(name);
        assert_eq!(detect(&value), Some(Tool::GuideLlm), "{name}");
        let run = read_one(&value);
        let benchmark = &value["benchmarks"][0];
        let successful = |metric: &str, stat: &str| -> f64 {
            let summary = &benchmark["metrics"][metric]["successful"];
            summary[stat]
                .as_f64()
                .or_else(|| summary["percentiles"][stat].as_f64())
                .unwrap_or_else(|| panic!("{name}: {metric}.{stat}"))
        };
        assert_eq!(run.rows.len(), 48, "{name}");
        assert_eq!(
            run.source.version.as_ref().map(|v| v.as_str()),
            Some("0.8.1")
        );
        let streams = benchmark["config"]["strategy"]["streams"].as_u64();
        assert_eq!(run.workload.concurrency, streams);
        for (metric, read) in [
            (
                "time_to_first_token_ms",
                (|row: &RowView| row.ttfo_ms) as fn(&RowView) -> Option<f64>,
            ),
            ("time_to_first_output_token_ms", |row: &RowView| row.ttft_ms),
        ] {
            let values = column(&run, read);
            for (stat, percent) in [("median", 50.0), ("p95", 95.0), ("p99", 99.0)] {
                assert_eq!(
                    floor_index_percentile(&values, percent),
                    Some(successful(metric, stat)),
                    "{name} {metric} {stat}"
                );
            }
            assert_close(fmean(&values), successful(metric, "mean"), metric);
        }
        let latency_s: Vec<f64> = column(&run, |row| row.e2e_ms.map(|ms| ms / 1000.0));
        assert_close(
            floor_index_percentile(&latency_s, 50.0),
            successful("request_latency", "median"),
            "median latency",
        );
        assert_eq!(
            run.source.aggregate("time_to_first_token_ms.median"),
            Some(successful("time_to_first_token_ms", "median"))
        );
    }
}

#[test]
fn aiperf_records_reproduce_aiperfs_own_summary() {
    for folder in ["aiperf/aiperf-0.13.0-c1", "aiperf/aiperf-0.13.0-c4"] {
        let records = fixture_text(&format!("{folder}/profile_export.jsonl"));
        let run = read_json_lines(&records)
            .expect("AIPerf records")
            .expect("readable")
            .remove(0);
        let summary_value = fixture(&format!("{folder}/profile_export_aiperf.json"));
        assert_eq!(detect(&summary_value), Some(Tool::AiPerf));
        let summary = read_one(&summary_value);
        let tool = |metric: &str, stat: &str| -> f64 {
            summary_value[metric][stat]
                .as_f64()
                .unwrap_or_else(|| panic!("{folder}: {metric}.{stat}"))
        };
        assert_eq!(
            run.rows.len() as f64,
            tool("request_count", "avg"),
            "{folder}"
        );
        for (metric, read) in [
            (
                "time_to_first_token",
                (|row: &RowView| row.ttfo_ms) as fn(&RowView) -> Option<f64>,
            ),
            ("time_to_first_output_token", |row: &RowView| row.ttft_ms),
            ("request_latency", |row: &RowView| row.e2e_ms),
        ] {
            let values = column(&run, read);
            for (stat, percent) in [("p50", 50.0), ("p90", 90.0), ("p99", 99.0)] {
                assert_close(
                    linear_percentile(&values, percent),
                    tool(metric, stat),
                    &format!("{folder} {metric} {stat}"),
                );
            }
            assert_close(fmean(&values), tool(metric, "avg"), metric);
        }
        let prompt: Vec<f64> = column(&run, |row| row.prompt_tokens.map(|t| t as f64));
        assert_close(
            fmean(&prompt),
            tool("usage_prompt_tokens", "avg"),
            "prompt tokens",
        );
        // The summary alone maps its own statistics; AIPerf's p50 is its linear median.
        assert_eq!(summary.rows.len(), 0);
        assert_eq!(
            summary.metrics.ttfo.p50,
            Some(tool("time_to_first_token", "p50"))
        );
        assert_eq!(
            summary.metrics.ttft.p99,
            Some(tool("time_to_first_output_token", "p99"))
        );
        assert_eq!(
            summary.source.version.as_ref().map(|v| v.as_str()),
            Some("0.13.0")
        );
        assert_eq!(
            summary.identity.model.as_ref().map(|m| m.as_str()),
            Some("ok")
        );
        let concurrency = summary_value["input_config"]["phases"][0]["concurrency"].as_u64();
        assert_eq!(summary.workload.concurrency, concurrency);
        // Chunk gaps become read gaps.
        assert!(run.rows.iter().all(|row| !row.read_gaps_ms.is_empty()));
    }
}

#[test]
fn definitions_say_where_each_tool_differs_from_strobe() {
    let vllm = read_one(&fixture("vllm/vllm-0.33.0-c1.json"));
    let guidellm = read_one(&fixture("guidellm/guidellm-0.8.1-c1.json"));
    let same = |run: &ForeignRun, quantity| {
        run.source
            .definition(quantity)
            .map(|definition| definition.same_as_strobe)
    };
    assert_eq!(same(&vllm, Quantity::Ttfo), Some(false));
    assert_eq!(same(&vllm, Quantity::E2e), Some(false));
    assert_eq!(same(&guidellm, Quantity::Ttfo), Some(true));
    assert_eq!(same(&guidellm, Quantity::E2e), Some(true));
    let notes = vllm.source.notes().join("\n");
    assert!(notes.contains("vLLM's TTFT (`ttfts`)"), "{notes}");
    assert!(notes.contains("last content chunk"), "{notes}");
    for tool in [&vllm, &guidellm] {
        let quantities: Vec<Quantity> = tool
            .source
            .definitions
            .iter()
            .map(|definition| definition.quantity)
            .collect();
        assert_eq!(quantities, Quantity::ALL, "one definition per quantity");
    }
}

/// A copy of `value` with `edit` applied.
fn broken(value: &Value, edit: impl FnOnce(&mut Value)) -> Value {
    let mut copy = value.clone();
    edit(&mut copy);
    copy
}

fn error_of(value: &Value) -> ForeignError {
    match read_json(value) {
        Some(Err(error)) => error,
        Some(Ok(_)) => panic!("the broken file was read"),
        None => panic!("the broken file was not recognized"),
    }
}

#[test]
fn broken_files_are_refused_with_their_field_named() {
    let vllm = fixture("vllm/vllm-0.33.0-c4.json");
    let short = broken(&vllm, |file| {
        file["itls"].as_array_mut().expect("array").pop();
    });
    let error = error_of(&short);
    assert_eq!(error.field, "itls");
    assert!(
        error
            .to_string()
            .contains("47 entries where `ttfts` has 48"),
        "{error}"
    );
    let wrong_type = broken(&vllm, |file| file["ttfts"][3] = json!("fast"));
    assert_eq!(error_of(&wrong_type).field, "ttfts[3]");
    let negative = broken(&vllm, |file| file["latencies"][0] = json!(-1.0));
    assert_eq!(error_of(&negative).field, "latencies[0]");
    let inverted = broken(&vllm, |file| file["ttfts"][5] = json!(99.0));
    assert_eq!(error_of(&inverted).field, "ttfts[5]");

    let guidellm = fixture("guidellm/guidellm-0.8.1-c1.json");
    let no_latency = broken(&guidellm, |file| {
        file["benchmarks"][0]["requests"]["successful"][2]
            .as_object_mut()
            .expect("object")
            .remove("request_latency");
    });
    assert_eq!(
        error_of(&no_latency).field,
        "benchmarks[0].requests.successful[2].request_latency"
    );
    let text_count = broken(&guidellm, |file| {
        file["benchmarks"][0]["requests"]["successful"][0]["output_tokens"] = json!("64")
    });
    assert_eq!(
        error_of(&text_count).field,
        "benchmarks[0].requests.successful[0].output_tokens"
    );
    let empty = broken(&guidellm, |file| file["benchmarks"] = json!([]));
    assert_eq!(error_of(&empty).field, "benchmarks");

    let records = fixture_text("aiperf/aiperf-0.13.0-c1/profile_export.jsonl");
    let mut lines: Vec<String> = records.lines().map(str::to_owned).collect();
    lines[4] = lines[4].replace(
        "\"request_latency\":{\"value\":",
        "\"request_latency\":{\"value\":\"x\",\"was\":",
    );
    let error = read_json_lines(&lines.join("\n"))
        .expect("records")
        .expect_err("broken");
    assert_eq!(error.field, "line 5.metrics.request_latency.value");
    let truncated = &records[..records.len() / 2];
    let error = read_json_lines(truncated)
        .expect("records")
        .expect_err("truncated");
    assert!(error.field.starts_with("line "), "{error}");
    assert!(error.reason.contains("not one JSON record"), "{error}");
}

#[test]
fn other_json_and_artifacts_are_not_taken_for_another_tools_file() {
    assert_eq!(detect(&json!({})), None);
    assert_eq!(detect(&json!([1, 2])), None);
    assert_eq!(
        detect(&json!({"schema": "x", "median_ttft_ms": 1, "completed": 1, "backend": "x"})),
        None
    );
    assert!(read_json_lines("not json\n").is_none());
    assert!(read_json_lines("{\"a\": 1}\n").is_none());
}

#[test]
fn percentile_methods_of_the_tools() {
    let values = [4.0, 1.0, 3.0, 2.0];
    assert_eq!(linear_percentile(&values, 50.0), Some(2.5));
    assert_eq!(linear_percentile(&values, 100.0), Some(4.0));
    assert_eq!(floor_index_percentile(&values, 50.0), Some(3.0));
    assert_eq!(floor_index_percentile(&values, 99.0), Some(4.0));
    assert_eq!(linear_percentile(&[], 50.0), None);
    assert_eq!(floor_index_percentile(&[f64::NAN], 50.0), None);
}

#[test]
fn every_fixture_with_rows_converts_to_an_artifact_the_validator_accepts() {
    use crate::core::read::opened::OpenedArtifact;
    use crate::core::read::validate::{validate_artifact, Verdict};
    let runs = [
        read_one(&fixture("vllm/vllm-0.33.0-c1.json")),
        read_one(&fixture("guidellm/guidellm-0.8.1-c4.json")),
        read_aiperf_pair(
            &fixture_text("aiperf/aiperf-0.13.0-c4/profile_export.jsonl"),
            &fixture_text("aiperf/aiperf-0.13.0-c4/profile_export_aiperf.json"),
        )
        .expect("AIPerf pair"),
    ];
    for run in &runs {
        let tool = run.source.tool;
        let artifact = convert::to_artifact(run).expect("rows convert");
        let report = validate_artifact(&artifact);
        assert_eq!(
            report.verdict,
            Verdict::Valid,
            "{tool:?}: {:?}",
            report.violations
        );
        assert_eq!(artifact["source"]["tool"], tool.id());
        assert_eq!(
            artifact["source"]["mapping"].as_array().map(Vec::len),
            Some(6)
        );
        let rows = artifact["request_timings"].as_array().expect("rows");
        assert_eq!(rows.len(), run.rows.len());
        // Nothing the file held is lost: inexact counts are kept beside strobe's null.
        let first = &rows[0];
        match tool {
            Tool::AiPerf => {
                assert_eq!(first["output_token_source"], "usage");
                assert_eq!(first["output_tokens"].as_u64(), run.rows[0].output_tokens);
            }
            _ => {
                assert_eq!(first["output_tokens"], Value::Null);
                assert_eq!(
                    first["tool_output_tokens"].as_u64(),
                    run.rows[0].output_tokens
                );
            }
        }
        assert_eq!(
            artifact["metrics"]["time_to_first_output_samples"].as_u64(),
            Some(run.rows.len() as u64)
        );
        // Read back, the artifact names its tool and keeps the tool's definitions.
        let text = crate::core::python::json::dumps_artifact(&artifact).expect("writes");
        let opened = OpenedArtifact::from_text("converted.json", &text);
        assert_eq!(opened.verdict(), Verdict::Valid);
        let source = opened.foreign.as_ref().expect("source read");
        assert_eq!(source.tool, tool);
        assert_eq!(source.definitions, tool.definitions());
        assert!(opened.verdict_label().starts_with("valid (converted from "));
        assert_eq!(opened.rows.len(), run.rows.len());
    }
    // vLLM records no TTFT: the converted rows say so with null, never a copy of its TTFO.
    let vllm = convert::to_artifact(&runs[0]).expect("converts");
    assert!(vllm["request_timings"]
        .as_array()
        .expect("rows")
        .iter()
        .all(|row| row["ttft_ms"].is_null()));
    assert_eq!(vllm["metrics"]["ttft_samples"], 0);
    // A summary alone has nothing to convert.
    let summary = read_one(&fixture(
        "aiperf/aiperf-0.13.0-c1/profile_export_aiperf.json",
    ));
    assert!(matches!(
        convert::to_artifact(&summary),
        Err(convert::ConvertError::NoRows { .. })
    ));
}

#[test]
fn conversion_keeps_failures_traces_and_dates_and_pairs_only_matching_aiperf_files() {
    use crate::core::read::opened::OpenedArtifact;
    use crate::core::read::validate::{validate_artifact, Verdict};
    // A vLLM run with a failed request converts to an artifact the validator accepts.
    let with_error = broken(&fixture("vllm/vllm-0.33.0-c1.json"), |file| {
        file["errors"][3] = json!("Server disconnected");
        file["completed"] = json!(47);
        file["failed"] = json!(1);
    });
    let run = read_one(&with_error);
    assert_eq!(run.failures.len(), 1);
    let artifact = convert::to_artifact(&run).expect("converts");
    let report = validate_artifact(&artifact);
    assert_eq!(report.verdict, Verdict::Valid, "{:?}", report.violations);
    assert_eq!(
        artifact["failures"][0]["error_message"],
        "Server disconnected"
    );
    // The read gaps travel as chunk traces, and come back as the same gaps.
    let arrivals = artifact["request_timings"][0]["chunk_arrivals_ms"]
        .as_array()
        .expect("traces");
    assert_eq!(arrivals.len(), run.rows[0].read_gaps_ms.len() + 1);
    let text = crate::core::python::json::dumps_artifact(&artifact).expect("writes");
    let opened = OpenedArtifact::from_text("converted.json", &text);
    assert_eq!(
        opened.rows[0].read_gaps_ms.len(),
        run.rows[0].read_gaps_ms.len()
    );
    for (read_back, original) in opened.rows[0]
        .read_gaps_ms
        .iter()
        .zip(&run.rows[0].read_gaps_ms)
    {
        assert!((read_back - original).abs() < 1e-9);
    }
    // The tool's start label survives the round trip.
    assert_eq!(opened.identity.started_at, run.identity.started_at);

    // One AIPerf record alone is one JSON value, and still AIPerf's.
    let records = fixture_text("aiperf/aiperf-0.13.0-c1/profile_export.jsonl");
    let one = records.lines().next().expect("a record");
    let single = read_text(one).expect("AIPerf").expect("readable");
    assert_eq!(single[0].rows.len(), 1);
    // A summary of another run is not paired with these records.
    let other_summary = fixture_text("aiperf/aiperf-0.13.0-c4/profile_export_aiperf.json");
    let fewer: String = records.lines().take(10).collect::<Vec<_>>().join("\n");
    let error = read_aiperf_pair(&fewer, &other_summary).expect_err("different runs");
    assert!(error.reason.contains("different runs"), "{error}");
}

#[test]
fn a_conversion_says_which_numbers_it_cannot_give_and_carries_the_tools_own() {
    use crate::core::read::opened::foreign::unavailable::Headline;
    use crate::core::read::opened::metrics::{MetricKind, MetricStat};
    use crate::core::read::opened::OpenedArtifact;
    let lost = [
        Headline::Metric(MetricKind::Tpot),
        Headline::Metric(MetricKind::Decode),
        Headline::Metric(MetricKind::Prefill),
        Headline::Throughput,
    ];
    let vllm_file = fixture("vllm/vllm-0.33.0-c4.json");
    let guidellm_file = fixture("guidellm/guidellm-0.8.1-c1.json");
    let guidellm_tpot =
        &guidellm_file["benchmarks"][0]["metrics"]["time_per_output_token_ms"]["successful"];
    for (run, tpot_p50, tpot_mean, throughput, count_term) in [
        (
            read_one(&vllm_file),
            ("median_tpot_ms", &vllm_file["median_tpot_ms"]),
            ("mean_tpot_ms", &vllm_file["mean_tpot_ms"]),
            ("output_throughput", &vllm_file["output_throughput"]),
            "`output_lens`",
        ),
        (
            read_json(&guidellm_file)
                .expect("GuideLLM")
                .expect("readable")[0]
                .clone(),
            ("time_per_output_token_ms.median", &guidellm_tpot["median"]),
            ("time_per_output_token_ms.mean", &guidellm_tpot["mean"]),
            (
                "output_tokens_per_second.mean",
                &guidellm_file["benchmarks"][0]["metrics"]["output_tokens_per_second"]
                    ["successful"]["mean"],
            ),
            "`output_tokens`",
        ),
    ] {
        let tool = run.source.tool;
        // The tool's own file gives every one of them (from its counts) ...
        assert!(run.metrics.tpot.p50.is_some() && run.metrics.throughput_tok_s.is_some());
        let artifact = convert::to_artifact(&run).expect("converts");
        let listed = &artifact["source"]["unavailable"];
        let metrics: Vec<&str> = listed
            .as_array()
            .expect("a list")
            .iter()
            .filter_map(|entry| entry["metric"].as_str())
            .collect();
        // ... the conversion none, and says so.
        assert_eq!(
            metrics,
            ["tpot", "decode", "prefill", "throughput_tok_s"],
            "{tool:?}"
        );
        assert_eq!(listed[0]["tool_figures"]["p50"]["name"], tpot_p50.0);
        assert_eq!(&listed[0]["tool_figures"]["p50"]["value"], tpot_p50.1);
        assert_eq!(&listed[0]["tool_figures"]["mean"]["value"], tpot_mean.1);
        assert_eq!(listed[1]["tool_figures"], json!({}), "no decode figure");
        assert_eq!(listed[3]["tool_figures"]["value"]["name"], throughput.0);
        assert_eq!(&listed[3]["tool_figures"]["value"]["value"], throughput.1);
        let reason = listed[0]["reason"].as_str().expect("a reason");
        assert!(
            reason.contains(count_term) && reason.contains("`tool_output_tokens`"),
            "{reason}"
        );
        let prefill = listed[2]["reason"].as_str().expect("a reason");
        assert!(prefill.contains("`tool_prompt_tokens`"), "{prefill}");

        // Read back, the list is the one written.
        let text = crate::core::python::json::dumps_artifact(&artifact).expect("writes");
        let opened = OpenedArtifact::from_text("converted.json", &text);
        let source = opened.foreign.expect("a converted file");
        let headlines: Vec<Headline> = source.unavailable.iter().map(|u| u.headline).collect();
        assert_eq!(headlines, lost);
        let tpot = &source.unavailable[0];
        assert_eq!(
            tpot.figure(Some(MetricStat::P50))
                .map(|figure| figure.value),
            tpot_p50.1.as_f64()
        );
        assert_eq!(tpot.reason, reason);
        assert!(source.unavailable[3].figure(None).is_some());
    }
    // AIPerf's rows carry the server's usage: nothing is lost.
    let aiperf = read_aiperf_pair(
        &fixture_text("aiperf/aiperf-0.13.0-c4/profile_export.jsonl"),
        &fixture_text("aiperf/aiperf-0.13.0-c4/profile_export_aiperf.json"),
    )
    .expect("AIPerf pair");
    let artifact = convert::to_artifact(&aiperf).expect("converts");
    assert_eq!(artifact["source"]["unavailable"], json!([]));
}

#[test]
fn a_hostile_unavailable_list_is_read_as_data() {
    use crate::core::read::opened::foreign::unavailable::{from_json, Headline};
    let list = json!([
        {"metric": "tpot", "reason": "x".repeat(100_000), "tool_figures": {
            "p50": {"name": "a", "value": 1.5},
            "p95": {"name": "b", "value": "NaN"},
            "mean": {"name": 3, "value": 2.0},
        }},
        {"metric": "tpot", "reason": "again"},
        {"metric": "nonsense"},
        "not an object",
        {"metric": "throughput_tok_s", "tool_figures": {"value": {"name": "t", "value": 9.0}}},
    ]);
    let read = from_json(Some(&list));
    assert_eq!(read.len(), 2);
    assert_eq!(
        read[0].headline,
        Headline::Metric(crate::core::read::opened::metrics::MetricKind::Tpot)
    );
    assert!(read[0].reason.chars().count() < 100_000);
    assert_eq!(read[0].tool_figures.len(), 1, "{:?}", read[0].tool_figures);
    assert_eq!(read[1].headline, Headline::Throughput);
    assert_eq!(read[1].reason, "");
    assert_eq!(read[1].figure(None).map(|figure| figure.value), Some(9.0));
    assert!(from_json(Some(&json!({"metric": "tpot"}))).is_empty());
    assert!(from_json(None).is_empty());
}
