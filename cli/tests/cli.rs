//! Runs the built `strobe-artifact` binary on the shared fixtures and checks exit codes and the
//! key lines of its output.

mod support;

use serde_json::Value;
use support::{assert_exit, fixture, run, stderr, stdout, summary_row, temp_file};

#[test]
fn validate_reference_is_valid_modern() {
    let output = run(&["validate", &fixture("reference-artifact.json")]);
    assert_exit(&output, 0);
    let text = stdout(&output);
    assert!(text.contains("  verdict:    valid\n"), "{text}");
    assert!(text.contains("  generation: modern\n"), "{text}");
    assert!(text.contains("  violations: none"), "{text}");
}

#[test]
fn validate_every_real_and_generation_fixture_exits_zero() {
    let mut files: Vec<String> = Vec::new();
    for directory in ["real", "generations"] {
        let mut found: Vec<String> = std::fs::read_dir(fixture(directory))
            .expect("fixture directory")
            .filter_map(Result::ok)
            .map(|entry| entry.path())
            .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
            .map(|path| path.to_string_lossy().into_owned())
            .collect();
        found.sort();
        files.extend(found);
    }
    assert_eq!(files.len(), 16);
    let args: Vec<&str> = std::iter::once("validate")
        .chain(files.iter().map(String::as_str))
        .collect();
    let output = run(&args);
    assert_exit(&output, 0);
    let text = stdout(&output);
    assert!(
        text.contains("16 files: 16 valid, 0 invalid, 0 unreadable"),
        "{text}"
    );
    assert!(text.contains("verdict:    valid (legacy g1-legacy-minimal)"));
    assert!(text.contains("verdict:    valid (legacy g2)"));
    assert!(text.contains("verdict:    valid (legacy g3)"));
}

#[test]
fn validate_reports_nan_tokens_with_path_line_and_column() {
    let output = run(&["validate", &fixture("invalid/nan-token.json")]);
    assert_exit(&output, 1);
    let text = stdout(&output);
    assert!(text.contains("  verdict:    invalid"), "{text}");
    assert!(
        text.contains("[non-finite-number] $.metrics.ttft_p95_ms: `NaN` at line 15, column 20"),
        "{text}"
    );
    assert!(
        text.contains("[non-finite-number] $.metrics.throughput_tok_s: `Infinity` at line 13"),
        "{text}"
    );
}

#[test]
fn validate_rejects_non_json_deep_nesting_and_wrong_schema() {
    for (file, line) in [
        ("invalid/not-json.json", "[invalid-json] $: the file is not valid JSON"),
        ("invalid/deeply-nested.json", "[nesting-too-deep] $: the JSON nests deeper than 128 levels"),
        ("invalid/wrong-schema.json", "[schema-mismatch] $.schema: schema must be \"anvil-serving.benchmark/v1\", found \"anvil-serving.eval-plan/v1\""),
    ] {
        let output = run(&["validate", &fixture(file)]);
        assert_exit(&output, 1);
        assert!(stdout(&output).contains(line), "{file}:\n{}", stdout(&output));
    }
}

#[test]
fn validate_exits_two_when_a_file_is_unreadable_even_beside_invalid_ones() {
    let output = run(&[
        "validate",
        &fixture("invalid/not-json.json"),
        &fixture("does-not-exist.json"),
    ]);
    assert_exit(&output, 2);
    let text = stdout(&output);
    assert!(text.contains("verdict:    unreadable"), "{text}");
    assert!(text.contains("no such file; check the path"), "{text}");
    assert!(
        text.contains("2 files: 0 valid, 1 invalid, 1 unreadable"),
        "{text}"
    );

    let output = run(&["validate", &fixture("invalid/not-utf8.json")]);
    assert_exit(&output, 2);
    assert!(stdout(&output).contains("not UTF-8 text (first invalid byte at offset 54)"));
}

#[test]
fn validate_exits_one_when_any_file_is_invalid() {
    let output = run(&[
        "validate",
        &fixture("reference-artifact.json"),
        &fixture("invalid/wrong-schema.json"),
    ]);
    assert_exit(&output, 1);
    assert!(stdout(&output).contains("2 files: 1 valid, 1 invalid, 0 unreadable"));
}

#[test]
fn validate_json_prints_one_machine_report_per_file() {
    let output = run(&[
        "validate",
        "--json",
        &fixture("generations/g3.json"),
        &fixture("invalid/nan-token.json"),
        &fixture("does-not-exist.json"),
    ]);
    assert_exit(&output, 2);
    let reports: Value = serde_json::from_str(&stdout(&output)).expect("stdout is JSON");
    let reports = reports.as_array().expect("an array");
    assert_eq!(reports.len(), 3);
    assert_eq!(reports[0]["verdict"], "valid-legacy");
    assert_eq!(reports[0]["generation"], "g3");
    assert_eq!(reports[0]["violations"], serde_json::json!([]));
    assert_eq!(reports[1]["verdict"], "invalid");
    assert_eq!(reports[1]["violations"][0]["rule"], "non-finite-number");
    assert_eq!(
        reports[1]["violations"][0]["path"],
        "$.metrics.throughput_tok_s"
    );
    assert_eq!(reports[2]["verdict"], "unreadable");
    assert!(reports[2]["error"]
        .as_str()
        .is_some_and(|error| error.contains("no such file")));
    assert!(reports[2]["file"]
        .as_str()
        .is_some_and(|file| file.ends_with("does-not-exist.json")));
}

#[test]
fn validate_usage_errors_say_what_to_do() {
    let output = run(&["validate"]);
    assert_exit(&output, 2);
    assert!(
        stderr(&output).contains("no files given"),
        "{}",
        stderr(&output)
    );

    let output = run(&["validate", "--jsno", &fixture("reference-artifact.json")]);
    assert_exit(&output, 2);
    let error = stderr(&output);
    assert!(error.contains("unknown option \"--jsno\""), "{error}");
    assert!(error.contains("strobe-artifact validate --help"), "{error}");
}

#[test]
fn summary_of_the_reference_artifact() {
    let output = run(&["summary", &fixture("reference-artifact.json")]);
    assert_exit(&output, 0);
    let text = stdout(&output);
    assert_eq!(summary_row(&text, "verdict"), ["valid", "(modern)"]);
    assert_eq!(
        summary_row(&text, "model"),
        ["qwen38-swift15-ninfer-dflash2-c4-262k"]
    );
    assert_eq!(summary_row(&text, "engine"), ["ninfer"]);
    assert_eq!(summary_row(&text, "gpu"), ["rtx5090"]);
    assert_eq!(summary_row(&text, "protocol"), ["capacity-v4-reasoning"]);
    assert_eq!(summary_row(&text, "requests"), ["6"]);
    assert_eq!(summary_row(&text, "completed"), ["6"]);
    assert_eq!(summary_row(&text, "failed"), ["0"]);
    assert_eq!(summary_row(&text, "concurrency"), ["1"]);
    assert_eq!(
        summary_row(&text, "context"),
        ["65536", "tokens", "(max", "262144)"]
    );
    assert_eq!(summary_row(&text, "max_tokens"), ["8192"]);
    assert_eq!(summary_row(&text, "throughput"), ["53.86", "tok/s"]);
    assert_eq!(summary_row(&text, "cache hit avg"), ["0.3333"]);
    assert_eq!(summary_row(&text, "metric"), ["p50", "p95", "mean"]);
    // Values from the artifact's metrics (ttft_p50_ms 8953.168…, ttft_p95_ms 10017.0004…, …).
    assert_eq!(
        summary_row(&text, "ttfo (ms)"),
        ["8016.38", "8157.26", "5453.78"]
    );
    assert_eq!(
        summary_row(&text, "ttft (ms)"),
        ["8953.17", "10017.00", "6933.45"]
    );
    assert_eq!(
        summary_row(&text, "e2e (ms)"),
        ["9133.99", "10137.65", "7063.14"]
    );
    assert_eq!(summary_row(&text, "tpot (ms)"), ["4.17", "4.62", "4.26"]);
    assert_eq!(
        summary_row(&text, "decode (tok/s)"),
        ["231.96", "250.05", "235.31"]
    );
    // The page's summary has the same six metrics (one table, `MetricKind`).
    assert_eq!(
        summary_row(&text, "prefill (tok/s)"),
        ["7773.40", "1047830.06", "208981.08"]
    );
}

#[test]
fn summary_of_a_legacy_artifact_has_only_p50_and_p95() {
    let output = run(&["summary", &fixture("generations/g1-legacy-minimal.json")]);
    assert_exit(&output, 0);
    let text = stdout(&output);
    // One spelling of the verdict: `validate`'s (issue #39).
    assert_eq!(
        summary_row(&text, "verdict"),
        ["valid", "(legacy", "g1-legacy-minimal)"]
    );
    assert_eq!(summary_row(&text, "engine"), ["-"]);
    assert_eq!(summary_row(&text, "failed"), ["-"]);
    assert_eq!(summary_row(&text, "ttft (ms)"), ["201.75", "388.00", "-"]);
    assert_eq!(summary_row(&text, "tpot (ms)"), ["-", "-", "-"]);
}

#[test]
fn summary_exit_codes() {
    let output = run(&["summary", &fixture("invalid/not-json.json")]);
    assert_exit(&output, 1);
    assert!(
        stderr(&output).contains("cannot be summarized"),
        "{}",
        stderr(&output)
    );

    let output = run(&["summary", &fixture("does-not-exist.json")]);
    assert_exit(&output, 2);
    assert!(stderr(&output).contains("no such file"));

    let output = run(&[
        "summary",
        &fixture("generations/g2.json"),
        &fixture("generations/g3.json"),
    ]);
    assert_exit(&output, 2);
    assert!(stderr(&output).contains("expected exactly one FILE, got 2"));
}

#[test]
fn summary_names_the_tool_of_another_tools_file() {
    let output = run(&["summary", &fixture("peers/vllm/vllm-0.33.0-c4.json")]);
    assert_exit(&output, 0);
    let text = stdout(&output);
    assert_eq!(summary_row(&text, "read as")[0], "vLLM");
    assert_eq!(summary_row(&text, "rows"), ["48"]);
    assert_eq!(summary_row(&text, "concurrency"), ["4"]);
    assert_eq!(
        summary_row(&text, "ttft (ms)"),
        ["-", "-", "-"],
        "vLLM records no TTFT"
    );
    assert!(text.contains("vLLM's TTFT (`ttfts`)"), "{text}");

    let output = run(&["summary", &fixture("peers/guidellm/guidellm-0.8.1-c1.json")]);
    assert_exit(&output, 0);
    let text = stdout(&output);
    assert_eq!(summary_row(&text, "read as")[..2], ["GuideLLM", "0.8.1"]);
    assert_eq!(summary_row(&text, "endpoint"), ["http://127.0.0.1:19001"]);

    // An AIPerf run's folder: the records' rows with the summary's version and configuration.
    let output = run(&["summary", &fixture("peers/aiperf/aiperf-0.13.0-c4")]);
    assert_exit(&output, 0);
    let text = stdout(&output);
    assert_eq!(summary_row(&text, "read as")[..2], ["AIPerf", "0.13.0"]);
    assert_eq!(summary_row(&text, "rows"), ["48"]);
    assert_eq!(summary_row(&text, "concurrency"), ["4"]);
    assert!(text.contains("profile_export.jsonl"), "{text}");
}

#[test]
fn summary_of_a_broken_tool_file_names_the_field() {
    let mut vllm: Value = serde_json::from_str(
        &std::fs::read_to_string(fixture("peers/vllm/vllm-0.33.0-c1.json")).expect("fixture"),
    )
    .expect("JSON");
    vllm["output_lens"][7] = Value::from(-3);
    let path = std::env::temp_dir().join(format!("strobe-broken-vllm-{}.json", std::process::id()));
    std::fs::write(&path, vllm.to_string()).expect("write");
    let output = run(&["summary", &path.to_string_lossy()]);
    let _ = std::fs::remove_file(&path);
    assert_exit(&output, 1);
    assert!(
        stderr(&output).contains("`output_lens[7]` must be a whole number"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn convert_writes_an_artifact_that_validate_accepts() {
    for source in [
        "peers/vllm/vllm-0.33.0-c4.json",
        "peers/guidellm/guidellm-0.8.1-c1.json",
        "peers/aiperf/aiperf-0.13.0-c1",
        "peers/aiperf/aiperf-0.13.0-c4/profile_export.jsonl",
    ] {
        let output = run(&["convert", &fixture(source)]);
        assert_exit(&output, 0);
        let text = stdout(&output);
        let artifact: Value = serde_json::from_str(&text).expect("JSON");
        assert!(artifact["source"]["tool"].is_string(), "{source}");
        let path = temp_file("converted.json", &text);
        let validated = run(&["validate", &path.to_string_lossy()]);
        let summary = run(&["summary", &path.to_string_lossy()]);
        let _ = std::fs::remove_file(&path);
        assert_exit(&validated, 0);
        assert!(
            stdout(&validated).contains("verdict:    valid"),
            "{source}: {}",
            stdout(&validated)
        );
        assert_exit(&summary, 0);
    }
    // The folder gives the AIPerf summary's version and concurrency.
    let output = run(&["convert", &fixture("peers/aiperf/aiperf-0.13.0-c1")]);
    let artifact: Value = serde_json::from_str(&stdout(&output)).expect("JSON");
    assert_eq!(artifact["source"]["version"], "0.13.0");
    assert_eq!(artifact["concurrency"], 1);
}

#[test]
fn convert_refuses_what_it_cannot_convert_and_says_why() {
    let output = run(&[
        "convert",
        &fixture("peers/aiperf/aiperf-0.13.0-c1/profile_export_aiperf.json"),
    ]);
    assert_exit(&output, 1);
    assert!(
        stderr(&output).contains("no per-request rows"),
        "{}",
        stderr(&output)
    );

    let output = run(&["convert", &fixture("reference-artifact.json")]);
    assert_exit(&output, 2);
    assert!(
        stderr(&output).contains("not a results file of another tool"),
        "{}",
        stderr(&output)
    );

    let mut report: Value = serde_json::from_str(
        &std::fs::read_to_string(fixture("peers/guidellm/guidellm-0.8.1-c1.json"))
            .expect("fixture"),
    )
    .expect("JSON");
    let benchmark = report["benchmarks"][0].clone();
    report["benchmarks"]
        .as_array_mut()
        .expect("array")
        .push(benchmark);
    let path = temp_file("two-benchmarks.json", &report.to_string());
    let several = run(&["convert", &path.to_string_lossy()]);
    let second = run(&["convert", "--benchmark", "2", &path.to_string_lossy()]);
    let third = run(&["convert", "--benchmark", "3", &path.to_string_lossy()]);
    let _ = std::fs::remove_file(&path);
    assert_exit(&several, 2);
    assert!(stderr(&several).contains("holds 2 benchmarks; pick one with `--benchmark N`"));
    assert_exit(&second, 0);
    assert_exit(&third, 2);
}

#[test]
fn every_command_has_help() {
    for command in ["validate", "summary", "recompute"] {
        let output = run(&[command, "--help"]);
        assert_exit(&output, 0);
        let text = stdout(&output);
        assert!(
            text.starts_with(&format!("Usage: strobe-artifact {command}")),
            "{text}"
        );
        assert!(text.contains("Exit codes:"), "{text}");
    }
    let output = run(&["--help"]);
    assert_exit(&output, 0);
    let text = stdout(&output);
    for command in ["validate", "summary", "recompute"] {
        assert!(text.contains(&format!("  {command} ")), "{text}");
    }
}

#[test]
fn no_command_or_an_unknown_one_is_a_usage_error() {
    let output = run(&[]);
    assert_exit(&output, 2);
    assert!(stderr(&output).contains("Usage: strobe-artifact <command>"));
    let output = run(&["check"]);
    assert_exit(&output, 2);
    assert!(stderr(&output).contains("unknown command \"check\""));
}
