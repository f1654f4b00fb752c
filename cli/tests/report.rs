//! `strobe-artifact report`: the same report the page saves, written to `--out`; it carries the
//! files it was made from, reads a report again, and says what is wrong with bad usage.

mod support;

use support::{assert_exit, fixture, run, stderr, stdout, temp_dir};

#[test]
fn a_report_carries_its_artifacts_and_reads_back() {
    let dir = temp_dir("report");
    let out = dir.join("report.html");
    let out_text = out.to_string_lossy().into_owned();
    let reference = fixture("reference-artifact.json");
    let output = run(&[
        "report",
        &reference,
        "--slo",
        "ttft:5000",
        "--out",
        &out_text,
    ]);
    assert_exit(&output, 0);
    assert!(
        stdout(&output).contains("1 run, carrying 1 file"),
        "{}",
        stdout(&output)
    );
    let html = std::fs::read_to_string(&out).expect("the report");
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(html.contains("Content-Security-Policy"));
    assert!(html.contains(r#"data-testid="report-slo">SLO: "#));
    // The same files again, from the report: the same document.
    let again = dir.join("again.html");
    let again_text = again.to_string_lossy().into_owned();
    let output = run(&[
        "report",
        &out_text,
        "--slo",
        "ttft:5000",
        "--out",
        &again_text,
    ]);
    assert_exit(&output, 0);
    assert_eq!(std::fs::read_to_string(&again).expect("again"), html);
}

#[test]
fn usage_mistakes_say_what_to_do() {
    let reference = fixture("reference-artifact.json");
    let output = run(&["report", &reference]);
    assert_exit(&output, 2);
    assert!(stderr(&output).contains("--out"), "{}", stderr(&output));
    let output = run(&["report", &reference, "--out", "/dev/null", "--slo", "ttft"]);
    assert_exit(&output, 2);
    assert!(stderr(&output).contains("--slo: "), "{}", stderr(&output));
    let page = support::temp_file("page.html", "<!DOCTYPE html><p>hi</p>");
    let output = run(&["report", &page.to_string_lossy(), "--out", "/dev/null"]);
    assert_exit(&output, 1);
    assert!(
        stderr(&output).contains("not a strobe report"),
        "{}",
        stderr(&output)
    );
}
