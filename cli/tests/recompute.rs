//! Runs `strobe-artifact recompute` on the golden artifact, on a tampered copy and on a legacy
//! file, and checks exit codes and the lines that name what differs.

mod support;

use std::path::PathBuf;

use serde_json::Value;
use support::{assert_exit, run};

/// A fixture's path.
fn fixture(relative: &str) -> PathBuf {
    support::common::fixture_path(relative)
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8(bytes.to_vec()).expect("UTF-8 output")
}

/// A copy of the reference artifact with `change` applied, in a file only this test uses.
fn tampered_reference(name: &str, change: impl FnOnce(&mut Value)) -> PathBuf {
    let original =
        std::fs::read_to_string(fixture("reference-artifact.json")).expect("reference readable");
    let mut value: Value = serde_json::from_str(&original).expect("reference parses");
    change(&mut value);
    let path = std::env::temp_dir().join(format!(
        "strobe-recompute-{}-{name}.json",
        std::process::id()
    ));
    std::fs::write(&path, value.to_string()).expect("temp file written");
    path
}

#[test]
fn the_reference_recomputes_exactly() {
    let path = fixture("reference-artifact.json");
    let output = run(&["recompute", path.to_str().expect("UTF-8 path")]);
    assert_exit(&output, 0);
    let stdout = text(&output.stdout);
    assert!(stdout.contains("  generation: modern\n"), "{stdout}");
    assert!(stdout.contains("  mismatch:   0\n"), "{stdout}");
    assert!(stdout.contains("$.metrics.prefix_cache_hit_avg: needs per-row cached_tokens"));
}

#[test]
fn a_tampered_metric_exits_1_and_is_named() {
    let path = tampered_reference("metric", |value| {
        value["metrics"]["e2e_p95_ms"] = Value::from(10_000.0);
    });
    let output = run(&["recompute", path.to_str().expect("UTF-8 path")]);
    let _ = std::fs::remove_file(&path);
    assert_exit(&output, 1);
    let stdout = text(&output.stdout);
    assert!(stdout.contains("  mismatch:   1\n"), "{stdout}");
    assert!(
        stdout.contains("    $.metrics.e2e_p95_ms: stored 10000.0, recomputed 10137.64810000066"),
        "{stdout}"
    );
}

#[test]
fn json_output_lists_the_differences() {
    let path = tampered_reference("json", |value| {
        value["metrics"]["output_tokens"] = Value::from(2284);
    });
    let output = run(&["recompute", "--json", path.to_str().expect("UTF-8 path")]);
    let _ = std::fs::remove_file(&path);
    assert_exit(&output, 1);
    let report: Value = serde_json::from_slice(&output.stdout).expect("JSON on stdout");
    assert_eq!(report["generation"], "modern");
    assert_eq!(report["mismatch"], 1);
    assert_eq!(report["diffs"][0]["path"], "$.metrics.output_tokens");
    assert_eq!(report["diffs"][0]["stored"], 2284);
    assert_eq!(report["diffs"][0]["recomputed"], 2283);
    assert_eq!(report["skipped"], 1);
}

#[test]
fn legacy_files_without_rows_exit_2_and_name_their_generation() {
    let path = fixture("generations/g2.json");
    let output = run(&["recompute", path.to_str().expect("UTF-8 path")]);
    assert_exit(&output, 2);
    let stderr = text(&output.stderr);
    assert!(
        stderr.contains("cannot recompute a G2") && stderr.contains("no request_timings"),
        "{stderr}"
    );
}

#[test]
fn unreadable_input_and_bad_usage_exit_2() {
    let output = run(&["recompute", "/definitely/not/here.json"]);
    assert_exit(&output, 2);
    assert!(text(&output.stderr).contains("no such file"));

    let path = fixture("invalid/not-json.json");
    let output = run(&["recompute", path.to_str().expect("UTF-8 path")]);
    assert_exit(&output, 2);
    assert!(text(&output.stderr).contains("not JSON"));

    let output = run(&["recompute"]);
    assert_exit(&output, 2);
    assert!(text(&output.stderr).contains("expected exactly one FILE, got 0"));
}
