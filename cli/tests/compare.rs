//! `strobe-artifact compare` on real artifacts of every generation and on peers' results: the
//! JSON the issue specifies, its numbers against the core's tests run directly, the table, and
//! the usage errors.

mod support;

use serde_json::Value;
use strobe::core::inference::two_sample::{mann_whitney_u, welch_t_test};
use strobe::core::read::opened::metrics::MetricKind;
use strobe::core::read::opened::OpenedArtifact;
use support::{assert_exit, common, fixture, run, stderr, stdout, temp_file};

const REAL_A: &str = "real/2026-08-01-deepseek-v4-flash-0731-nvfp4__capacity-low-32k-c1.json";
const REAL_B: &str = "real/2026-08-01-deepseek-v4-flash-0731-nvfp4__capacity-low-32k-c1-r2.json";
const METRICS: [(&str, MetricKind); 4] = [
    ("ttft_ms", MetricKind::Ttft),
    ("tpot_ms", MetricKind::Tpot),
    ("e2e_ms", MetricKind::E2e),
    ("time_to_first_output_ms", MetricKind::Ttfo),
];

fn json_of(args: &[&str]) -> Value {
    let output = run(args);
    assert_exit(&output, 0);
    serde_json::from_str(&stdout(&output)).expect("compare --json prints JSON")
}

fn opened(relative: &str) -> OpenedArtifact {
    OpenedArtifact::from_text(relative, &common::fixture_text(relative))
}

#[test]
fn two_real_runs_give_the_issues_json_with_the_cores_p_values() {
    let json = json_of(&["compare", "--json", &fixture(REAL_A), &fixture(REAL_B)]);
    assert_eq!(json["alpha"], 0.05);
    assert_eq!(json["correction"], "holm");
    assert_eq!(json["compared"], "runs");
    let (a, b) = (opened(REAL_A), opened(REAL_B));
    let mut tested = 0;
    for (key, metric) in METRICS {
        let entry = &json["metrics"][key];
        let (values_a, values_b) = (metric.values(&a.rows), metric.values(&b.rows));
        assert_eq!(entry["a"]["n"], values_a.len(), "{key}");
        assert_eq!(entry["b"]["n"], values_b.len(), "{key}");
        assert!(entry["significant"].is_boolean(), "{key}: {entry}");
        if values_a.len() >= 8 && values_b.len() >= 8 {
            let direct = mann_whitney_u(&values_a, &values_b).expect("finite rows");
            assert_eq!(entry["p_value_unadjusted"], direct.p_value, "{key}");
            let adjusted = entry["p_value"].as_f64().expect("a p-value");
            assert!(adjusted >= direct.p_value && adjusted <= 1.0, "{key}");
            assert_eq!(entry["significant"], adjusted <= 0.05, "{key}");
            let ratio = entry["ratio_of_medians"].as_f64().expect("a ratio");
            let medians = entry["b"]["median"].as_f64().expect("B's median")
                / entry["a"]["median"].as_f64().expect("A's median");
            assert_eq!(ratio, medians, "{key}");
            tested += 1;
        } else {
            assert!(entry["p_value"].is_null(), "{key}");
            assert!(entry["sentence"]
                .as_str()
                .expect("words")
                .starts_with("too few samples to tell"));
        }
    }
    assert!(tested >= 3, "only {tested} metrics tested");
}

#[test]
fn the_table_shows_the_same_words_as_the_json() {
    let json = json_of(&["compare", "--json", &fixture(REAL_A), &fixture(REAL_B)]);
    let output = run(&["compare", &fixture(REAL_A), &fixture(REAL_B)]);
    assert_exit(&output, 0);
    let text = stdout(&output);
    assert!(text.contains("Metric"), "{text}");
    assert!(text.contains("p (Holm)"), "{text}");
    for (key, metric) in METRICS {
        let sentence = json["metrics"][key]["sentence"].as_str().expect("words");
        assert!(
            text.contains(&format!("{}: {sentence}", metric.short_label())),
            "{key}: {text}"
        );
    }
    assert!(text.contains("Mann–Whitney U over the rows"), "{text}");
}

#[test]
fn every_generation_compares_as_runs_and_as_groups() {
    // G1 and G2 record no rows: the runs' verdict says too few, and claims nothing.
    let json = json_of(&[
        "compare",
        "--json",
        &fixture("generations/g1-legacy-minimal.json"),
        &fixture("generations/g3.json"),
    ]);
    let ttft = &json["metrics"]["ttft_ms"];
    assert_eq!(ttft["a"]["n"], 0);
    assert!(ttft["p_value"].is_null());
    assert!(ttft["reason"]
        .as_str()
        .expect("a reason")
        .contains("legacy artifact"));
    // As groups, every generation's p50 counts.
    let generations = [
        "generations/g1-legacy-minimal.json",
        "generations/g2.json",
        "generations/g3.json",
        "reference-artifact.json",
    ];
    let reals = [REAL_A, REAL_B];
    let mut args = vec!["compare".to_owned(), "--json".to_owned(), "--a".to_owned()];
    args.extend(generations.iter().map(|file| fixture(file)));
    args.push("--b".to_owned());
    args.extend(reals.iter().map(|file| fixture(file)));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let json = json_of(&args);
    assert_eq!(json["compared"], "groups");
    let ttft = &json["metrics"]["ttft_ms"];
    let p50s = |files: &[&str]| -> Vec<f64> {
        files
            .iter()
            .filter_map(|file| opened(file).metrics.ttft.p50)
            .collect()
    };
    let (a, b) = (p50s(&generations), p50s(&reals));
    assert_eq!(ttft["a"]["runs"], a.len());
    assert_eq!(ttft["b"]["runs"], b.len());
    let direct = welch_t_test(&a, &b).expect("two runs each");
    assert_eq!(ttft["p_value_unadjusted"], direct.p_value);
    assert_eq!(ttft["df"], direct.df);
    let interval = ttft["a"]["p50_ci95"].as_array().expect("an interval");
    let mean = ttft["a"]["p50_mean"].as_f64().expect("a mean");
    assert!(interval[0].as_f64().expect("low") < mean);
    assert!(interval[1].as_f64().expect("high") > mean);
    assert!(ttft["ratio_of_p50_means"].is_number());
}

#[test]
fn peers_results_compare_with_their_rows() {
    let a = "peers/vllm/vllm-0.33.0-c1.json";
    let b = "peers/guidellm/guidellm-0.8.1-c4.json";
    let json = json_of(&["compare", "--json", &fixture(a), &fixture(b)]);
    let e2e = &json["metrics"]["e2e_ms"];
    let (run_a, run_b) = (opened(a), opened(b));
    assert!(run_a.foreign.is_some() && run_b.foreign.is_some());
    let direct = mann_whitney_u(
        &MetricKind::E2e.values(&run_a.rows),
        &MetricKind::E2e.values(&run_b.rows),
    )
    .expect("finite rows");
    assert_eq!(e2e["p_value_unadjusted"], direct.p_value);
    // An AIPerf run's folder reads as one run too.
    let json = json_of(&[
        "compare",
        "--json",
        &fixture("peers/aiperf/aiperf-0.13.0-c1"),
        &fixture("peers/aiperf/aiperf-0.13.0-c4"),
    ]);
    assert!(json["metrics"]["ttft_ms"]["a"]["n"].as_u64().expect("rows") > 0);
}

#[test]
fn usage_mistakes_and_files_that_are_no_run_say_what_works() {
    let output = run(&["compare", &fixture(REAL_A)]);
    assert_exit(&output, 2);
    assert!(
        stderr(&output).contains("expected two FILEs (A then B), got 1"),
        "{}",
        stderr(&output)
    );
    let output = run(&["compare", "--a", &fixture(REAL_A)]);
    assert_exit(&output, 2);
    assert!(
        stderr(&output).contains("both --a and --b"),
        "{}",
        stderr(&output)
    );
    let not_a_run = temp_file("compare-not-a-run.json", r#"{"hello": "world"}"#);
    let output = run(&[
        "compare",
        &fixture(REAL_A),
        not_a_run.to_str().expect("a path"),
    ]);
    assert_exit(&output, 1);
    assert!(
        stderr(&output).contains("not an artifact"),
        "{}",
        stderr(&output)
    );
    let output = run(&["compare", &fixture(REAL_A), "missing.json"]);
    assert_exit(&output, 2);
}

#[test]
fn a_repeat_group_with_a_gap_is_noted() {
    let repeat = |index: u64| {
        let mut value: Value =
            serde_json::from_str(&common::fixture_text(REAL_A)).expect("an artifact");
        value["repeat"] = serde_json::json!({"group_id": "g", "index": index, "count": 3});
        temp_file(&format!("compare-repeat-{index}.json"), &value.to_string())
    };
    let (first, third) = (repeat(0), repeat(2));
    let output = run(&[
        "compare",
        "--a",
        first.to_str().expect("a path"),
        third.to_str().expect("a path"),
        "--b",
        &fixture(REAL_A),
        &fixture(REAL_B),
    ]);
    assert_exit(&output, 0);
    assert!(
        stderr(&output).contains("repeat group g lacks repeat 2 of 3"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn runs_of_different_workloads_are_said_to_be() {
    let mut value: Value =
        serde_json::from_str(&common::fixture_text(REAL_A)).expect("an artifact");
    value["workload"] = serde_json::json!({"source": "synthetic", "endpoint": "completions"});
    let completions = temp_file("compare-completions.json", &value.to_string());
    let completions = completions.to_str().expect("a path");
    let output = run(&["compare", &fixture(REAL_A), completions]);
    assert_exit(&output, 0);
    let text = stdout(&output);
    assert!(
        text.contains("Different workloads: These runs sent different workloads (workload.endpoint chat vs completions)"),
        "{text}"
    );
    let json = json_of(&["compare", "--json", &fixture(REAL_A), completions]);
    assert!(json["workloads_differ"]
        .as_str()
        .is_some_and(|words| words.contains("workload.endpoint")));
    let same = json_of(&["compare", "--json", &fixture(REAL_A), &fixture(REAL_A)]);
    assert_eq!(same["workloads_differ"], Value::Null);
    assert!(
        !stdout(&run(&["compare", &fixture(REAL_A), &fixture(REAL_B)]))
            .contains("Different workloads")
    );
}

#[test]
fn a_sweep_of_repeated_steps_compares_step_by_step_never_pooled() {
    // Two steps of one sweep, each repeated twice: one repeat group per step.
    let run_of = |step: u64, repeat: u64| {
        let mut value: Value =
            serde_json::from_str(&common::fixture_text(REAL_A)).expect("an artifact");
        value["sweep"] = serde_json::json!({
            "id": "sweep-x", "step_index": step, "step_count": 2, "variable": "concurrency",
            "value": step + 1, "spec": "concurrency:1,2", "stop_reason": null
        });
        value["repeat"] = serde_json::json!({
            "group_id": format!("repeat-x-step0{}", step + 1), "index": repeat, "count": 2
        });
        let path = temp_file(
            &format!("compare-sweep-step0{}-repeat0{}.json", step + 1, repeat + 1),
            &value.to_string(),
        );
        path.to_str().expect("a path").to_owned()
    };
    let (s1r1, s1r2, s2r1, s2r2) = (run_of(0, 0), run_of(0, 1), run_of(1, 0), run_of(1, 1));
    let output = run(&[
        "compare", "--a", &s1r1, &s1r2, &s2r1, &s2r2, "--b", &s1r1, &s1r2,
    ]);
    assert_exit(&output, 2);
    let message = stderr(&output);
    assert!(
        message.contains(
            "group A holds sweep steps at 2 different loads: concurrency 1 (step 1 of \
             sweep-x); concurrency 2 (step 2 of sweep-x)"
        ),
        "{message}"
    );
    assert!(message.contains("pass one step's runs to --a"), "{message}");
    // One step against the other: two groups, compared as groups, with nothing to note.
    let output = run(&[
        "compare", "--json", "--a", &s1r1, &s1r2, "--b", &s2r1, &s2r2,
    ]);
    assert_exit(&output, 0);
    assert_eq!(stderr(&output), "", "one group a side");
    let json: Value = serde_json::from_str(&stdout(&output)).expect("JSON");
    assert_eq!(json["compared"], "groups");
    assert_eq!(json["metrics"]["ttft_ms"]["a"]["runs"], 2);
    // Two single files of the sweep compare as runs.
    let json = json_of(&["compare", "--json", &s1r1, &s2r1]);
    assert_eq!(json["compared"], "runs");
}
