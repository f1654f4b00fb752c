//! `strobe-artifact` as a newcomer meets it (issue #39): each edge a new user trips over, run as
//! they would run it, with the exit code and a message that names the cause and the next step.
//! A hint the CLI gives is followed where it names a command, to show that it works.

mod support;

use std::path::Path;

use serde_json::Value;
use strobe::core::present::export::artifacts_zip;
use support::common::{fixture_text, repo_root};
use support::{
    assert_exit, fixture, run, run_in, stderr, stdout, summary_row, temp_dir, temp_file,
};

/// The first command in backquotes after `marker` in `text`, split into its words after the
/// program's name.
fn hinted_command(text: &str, marker: &str) -> Vec<String> {
    let after = &text[text
        .find(marker)
        .unwrap_or_else(|| panic!("{marker:?} in {text}"))..];
    let start = after.find("`strobe-artifact ").expect("a hinted command") + 1;
    let end = after[start..].find('`').expect("its closing quote") + start;
    after[start..end]
        .split_whitespace()
        .skip(1)
        .map(str::to_owned)
        .collect()
}

fn run_hinted(words: &[String]) -> std::process::Output {
    let words: Vec<&str> = words.iter().map(String::as_str).collect();
    run(&words)
}

// 1. `plan --link` with the page's whole address.

const QUERY: &str = "base_url=http://127.0.0.1:9/v1&model=m&engine=vllm&requests=4";

#[test]
fn plan_reads_the_whole_address_and_its_query_alike() {
    let from_address = temp_dir("plan-address");
    let from_query = temp_dir("plan-query");
    let address = format!("--link=http://127.0.0.1:8080/?{QUERY}");
    let out = format!("--out={}", from_address.display());
    let output = run(&["plan", &address, &out]);
    assert_exit(&output, 0);
    assert!(
        !stderr(&output).contains("not a strobe setting"),
        "{}",
        stderr(&output)
    );
    let output = run(&[
        "plan",
        "--link",
        QUERY,
        "--out",
        &from_query.to_string_lossy(),
    ]);
    assert_exit(&output, 0);
    let plan = |folder: &Path| std::fs::read(folder.join("plan.json")).expect("plan.json");
    assert_eq!(plan(&from_address), plan(&from_query), "the same bytes");
    let document: Value = serde_json::from_slice(&plan(&from_address)).expect("JSON");
    assert_eq!(
        document["endpoints"][0], "http://127.0.0.1:9/v1/chat/completions",
        "the link's base_url, not the page's host"
    );
    let _ = std::fs::remove_dir_all(from_address);
    let _ = std::fs::remove_dir_all(from_query);
}

#[test]
fn a_plan_without_a_base_url_is_refused_and_says_which_key_to_add() {
    let folder = temp_dir("plan-no-base-url").join("plan");
    let output = run(&[
        "plan",
        "--link",
        "http://127.0.0.1:8080/?model=m&engine=vllm&requests=4",
        "--out",
        &folder.to_string_lossy(),
    ]);
    assert_exit(&output, 1);
    let error = stderr(&output);
    assert!(error.contains("the link sets no base_url"), "{error}");
    assert!(error.contains("add `base_url=`"), "{error}");
    assert!(!folder.exists(), "nothing is written");
}

#[test]
fn a_plan_of_a_workload_url_without_its_file_is_refused_and_says_what_to_do() {
    let folder = temp_dir("plan-workload").join("plan");
    let output = run(&[
        "plan",
        "--link",
        "base_url=http://127.0.0.1:9/v1&model=m&engine=vllm&workload_url=https://team.example/w.jsonl",
        "--out",
        &folder.to_string_lossy(),
    ]);
    assert_exit(&output, 1);
    let error = stderr(&output);
    assert!(error.contains("cannot fetch"), "{error}");
    assert!(error.contains("--workload FILE"), "{error}");
    assert!(!folder.exists(), "nothing is written");
}

// 2. `convert` keeps, or explains, what `summary` showed of the original.

#[test]
fn a_converted_vllm_file_shows_vllms_own_figures_and_says_why_strobes_are_missing() {
    let source = fixture("peers/vllm/vllm-0.33.0-c4.json");
    let vllm: Value =
        serde_json::from_str(&fixture_text("peers/vllm/vllm-0.33.0-c4.json")).expect("JSON");
    let converted = run(&["convert", &source]);
    assert_exit(&converted, 0);
    let artifact: Value = serde_json::from_str(&stdout(&converted)).expect("JSON");
    let missing: Vec<&str> = artifact["source"]["unavailable"]
        .as_array()
        .expect("a list")
        .iter()
        .filter_map(|entry| entry["metric"].as_str())
        .collect();
    assert_eq!(missing, ["tpot", "decode", "prefill", "throughput_tok_s"]);
    let path = temp_file("converted-vllm.json", &stdout(&converted));
    let output = run(&["summary", &path.to_string_lossy()]);
    let _ = std::fs::remove_file(&path);
    assert_exit(&output, 0);
    let text = stdout(&output);
    let figure = |key: &str| format!("{:.2}*", vllm[key].as_f64().expect(key));
    assert_eq!(
        summary_row(&text, "tpot (ms)"),
        [
            figure("median_tpot_ms"),
            "-".to_owned(),
            figure("mean_tpot_ms")
        ]
    );
    assert_eq!(
        summary_row(&text, "throughput")[..3],
        [
            format!("{:.2}", vllm["output_throughput"].as_f64().expect("rate")),
            "tok/s*".to_owned(),
            "(vLLM's".to_owned()
        ]
    );
    // Where no figure can stand in, the summary says why in words.
    assert_eq!(summary_row(&text, "decode (tok/s)"), ["-", "-", "-"]);
    let decode = text
        .lines()
        .find(|line| line.starts_with("- The decode rate is not in the converted file"))
        .unwrap_or_else(|| panic!("no decode note in:\n{text}"));
    assert!(
        decode.contains("`output_lens`") && decode.contains("`tool_output_tokens`"),
        "{decode}"
    );
    assert!(
        decode.contains("vLLM records no figure of its own"),
        "{decode}"
    );
}

#[test]
fn a_converted_guidellm_file_shows_guidellms_own_tpot() {
    let converted = run(&["convert", &fixture("peers/guidellm/guidellm-0.8.1-c1.json")]);
    assert_exit(&converted, 0);
    let report: Value =
        serde_json::from_str(&fixture_text("peers/guidellm/guidellm-0.8.1-c1.json")).expect("JSON");
    let tpot = &report["benchmarks"][0]["metrics"]["time_per_output_token_ms"]["successful"];
    let path = temp_file("converted-guidellm.json", &stdout(&converted));
    let output = run(&["summary", &path.to_string_lossy()]);
    let _ = std::fs::remove_file(&path);
    assert_exit(&output, 0);
    let text = stdout(&output);
    assert_eq!(
        summary_row(&text, "tpot (ms)"),
        [
            format!("{:.2}*", tpot["median"].as_f64().expect("median")),
            format!("{:.2}*", tpot["percentiles"]["p95"].as_f64().expect("p95")),
            format!("{:.2}*", tpot["mean"].as_f64().expect("mean")),
        ]
    );
    assert!(text.contains("* marks GuideLLM's own figure"), "{text}");
}

// 3. `validate` on another tool's results.

#[test]
fn validate_names_a_peers_file_and_the_commands_that_read_it() {
    let vllm = fixture("peers/vllm/vllm-0.33.0-c4.json");
    let output = run(&["validate", &vllm]);
    assert_exit(&output, 1);
    let text = stdout(&output);
    assert!(text.contains("  verdict:    not an artifact\n"), "{text}");
    assert!(text.contains("vLLM's results file"), "{text}");
    assert!(!text.contains("schema-mismatch"), "{text}");
    for hinted in [
        hinted_command(&text, "not an artifact;"),
        hinted_command(&text, "shows it and"),
    ] {
        let mut words = hinted.clone();
        words.retain(|word| word != ">" && word != "run.json");
        assert_exit(&run_hinted(&words), 0);
    }

    let output = run(&["validate", "--json", &vllm]);
    assert_exit(&output, 1);
    let reports: Value = serde_json::from_str(&stdout(&output)).expect("JSON");
    assert_eq!(reports[0]["verdict"], "foreign");
    assert_eq!(reports[0]["tool"], "vllm");
}

#[test]
fn validate_reads_an_aiperf_folder_as_the_aiperf_run_it_is() {
    let folder = fixture("peers/aiperf/aiperf-0.13.0-c4");
    let output = run(&["validate", &folder]);
    assert_exit(&output, 1);
    let text = stdout(&output);
    assert!(!text.contains("unreadable"), "{text}");
    assert!(text.contains("AIPerf's results file"), "{text}");
    let hinted = hinted_command(&text, "not an artifact;");
    assert_eq!(hinted, ["summary", folder.as_str()]);
    assert_exit(&run_hinted(&hinted), 0);
}

// 4. Hints that can be followed.

#[test]
fn summary_of_a_folder_hints_commands_that_work() {
    let folder = fixture("generations");
    let output = run(&["summary", &folder]);
    assert_exit(&output, 2);
    let error = stderr(&output);
    assert!(
        error.contains("is a folder; summary reads one file"),
        "{error}"
    );
    let one = hinted_command(&error, "e.g.");
    assert_eq!(one[0], "summary");
    assert_exit(&run_hinted(&one), 0);
    let all = hinted_command(&error, "check them all with");
    assert_eq!(all, ["validate", folder.as_str()]);
    let output = run_hinted(&all);
    assert_exit(&output, 0);
    assert!(
        stdout(&output).contains("4 files: 4 valid, 0 invalid, 0 unreadable"),
        "{}",
        stdout(&output)
    );

    let output = run(&[
        "summary",
        &fixture("generations/g2.json"),
        &fixture("generations/g3.json"),
    ]);
    assert_exit(&output, 2);
    let error = stderr(&output);
    assert!(
        error.contains("`strobe-artifact validate` checks several"),
        "{error}"
    );
}

// 5. Errors that name their cause.

#[test]
fn convert_says_a_file_is_cut_short_or_empty() {
    let reference = fixture_text("reference-artifact.json");
    let cut = temp_file("cut.json", &reference[..300]);
    let empty = temp_file("empty.json", "");
    let cut_output = run(&["convert", &cut.to_string_lossy()]);
    let empty_output = run(&["convert", &empty.to_string_lossy()]);
    let validated = run(&["validate", &empty.to_string_lossy()]);
    let _ = std::fs::remove_file(&cut);
    let _ = std::fs::remove_file(&empty);
    assert_exit(&cut_output, 2);
    let error = stderr(&cut_output);
    assert!(
        error.contains("EOF while parsing") && error.contains("was not truncated"),
        "{error}"
    );
    assert_exit(&empty_output, 2);
    assert!(
        stderr(&empty_output).contains("the file is empty"),
        "{}",
        stderr(&empty_output)
    );
    assert_exit(&validated, 1);
    let text = stdout(&validated);
    assert!(
        text.contains("the file is empty: an artifact is one JSON object"),
        "{text}"
    );
    assert!(!text.contains("truncated"), "{text}");
}

#[test]
fn a_sweeps_zip_is_validated_member_by_member_and_named_elsewhere() {
    let folder = temp_dir("sweep-zip");
    let zip = folder.join("sweep.zip");
    let members = [
        (
            "step-1.json".to_owned(),
            fixture_text("reference-artifact.json"),
        ),
        (
            "step-2.json".to_owned(),
            fixture_text("generations/g3.json"),
        ),
    ];
    std::fs::write(&zip, artifacts_zip(&members).expect("a zip")).expect("write");
    let zip = zip.to_string_lossy().into_owned();
    let validated = run(&["validate", &zip]);
    let summarized = run(&["summary", &zip]);
    let _ = std::fs::remove_dir_all(&folder);
    assert_exit(&validated, 0);
    let text = stdout(&validated);
    assert!(text.contains(&format!("{zip} › step-1.json\n")), "{text}");
    assert!(
        text.contains("2 files: 2 valid, 0 invalid, 0 unreadable"),
        "{text}"
    );
    assert_exit(&summarized, 2);
    let error = stderr(&summarized);
    assert!(
        error.contains("is a zip archive of 2 artifacts (step-1.json, step-2.json)"),
        "{error}"
    );
    assert!(
        error.contains(&format!("`strobe-artifact validate {zip}`")),
        "{error}"
    );
    assert!(error.contains("unzip"), "{error}");
}

#[test]
fn import_locust_says_an_artifact_is_no_workers_records() {
    let output = run(&["import-locust", &fixture("reference-artifact.json")]);
    assert_exit(&output, 2);
    let error = stderr(&output);
    assert!(error.contains("not a worker's records file"), "{error}");
    assert!(
        error.contains("it is an anvil-serving.benchmark/v1 artifact"),
        "{error}"
    );
    assert!(error.contains("worker-*.jsonl"), "{error}");
    assert!(!error.contains("EOF"), "{error}");
}

#[test]
fn plan_names_the_engine_key_and_a_file_in_the_way() {
    let folder = temp_dir("plan-errors");
    let output = run(&[
        "plan",
        "--link",
        "base_url=http://127.0.0.1:9/v1&model=m",
        "--out",
        &folder.to_string_lossy(),
    ]);
    assert_exit(&output, 1);
    let error = stderr(&output);
    assert!(error.contains("add `engine=`"), "{error}");
    assert!(!error.contains("Check endpoint"), "{error}");

    let file = folder.join("plan.json");
    std::fs::write(&file, "{}").expect("write");
    let output = run(&["plan", "--link", QUERY, "--out", &file.to_string_lossy()]);
    let _ = std::fs::remove_dir_all(&folder);
    assert_exit(&output, 2);
    let error = stderr(&output);
    assert!(error.contains("is a file, not a folder"), "{error}");
    assert!(!error.contains("os error"), "{error}");
}

#[test]
fn flags_take_equals_and_are_refused_twice() {
    let reference = fixture("reference-artifact.json");
    let output = run(&[
        "convert",
        "--benchmark=1",
        &fixture("peers/vllm/vllm-0.33.0-c1.json"),
    ]);
    assert_exit(&output, 0);
    let output = run(&["validate", "--json", "--json", &reference]);
    assert_exit(&output, 2);
    let error = stderr(&output);
    assert!(
        error.contains("--json is given more than once; give it once"),
        "{error}"
    );
    assert!(error.contains("strobe-artifact validate --help"), "{error}");
    let output = run(&["convert", "--benchmark", "0", &reference]);
    assert_exit(&output, 2);
    assert!(
        stderr(&output).contains("a number from 1 (1 = the first benchmark)"),
        "{}",
        stderr(&output)
    );
}

// 6. Docs and behaviour agree.

#[test]
fn validate_and_summary_spell_a_legacy_verdict_alike() {
    let file = fixture("generations/g1-legacy-minimal.json");
    let validated = stdout(&run(&["validate", &file]));
    let verdict = validated
        .lines()
        .find_map(|line| line.trim().strip_prefix("verdict:"))
        .expect("a verdict line")
        .trim()
        .to_owned();
    let summarized = stdout(&run(&["summary", &file]));
    assert_eq!(summary_row(&summarized, "verdict").join(" "), verdict);
}

#[test]
fn one_violation_is_counted_in_the_singular() {
    let mut g2: Value = serde_json::from_str(&fixture_text("generations/g2.json")).expect("JSON");
    g2["concurrency"] = Value::from(0);
    let path = temp_file("one-violation.json", &g2.to_string());
    let output = run(&["summary", &path.to_string_lossy()]);
    let _ = std::fs::remove_file(&path);
    assert_exit(&output, 1);
    assert!(
        stdout(&output).contains("invalid (1 violation; run `strobe-artifact validate"),
        "{}",
        stdout(&output)
    );
}

#[test]
fn recompute_refuses_converted_files_and_non_objects_in_plain_words() {
    let converted = run(&["convert", &fixture("peers/vllm/vllm-0.33.0-c1.json")]);
    let path = temp_file("converted-recompute.json", &stdout(&converted));
    let array = temp_file("array.json", "[1, 2]");
    let refused = run(&["recompute", &path.to_string_lossy()]);
    let not_object = run(&["recompute", &array.to_string_lossy()]);
    let _ = std::fs::remove_file(&path);
    let _ = std::fs::remove_file(&array);
    assert_exit(&refused, 2);
    let error = stderr(&refused);
    assert!(
        error.contains("converted from another tool's results"),
        "{error}"
    );
    assert!(
        error.contains("`strobe-artifact summary` read it"),
        "{error}"
    );
    assert_exit(&not_object, 2);
    let error = stderr(&not_object);
    assert!(
        error.contains("cannot recompute this file: the top level is not a JSON object"),
        "{error}"
    );
    assert!(!error.contains("a unknown"), "{error}");
}

#[test]
fn the_help_aligns_every_command() {
    let output = run(&["--help"]);
    assert_exit(&output, 0);
    let text = stdout(&output);
    let commands = text
        .split("Commands:\n")
        .nth(1)
        .and_then(|rest| rest.split("\n\n").next())
        .expect("a command list");
    let columns: Vec<usize> = commands
        .lines()
        .map(|line| {
            let name_end = 2 + line.trim_start().find(' ').expect("a description");
            name_end + line[name_end..].len() - line[name_end..].trim_start().len()
        })
        .collect();
    assert!(columns.len() >= 6, "{commands}");
    assert!(
        columns.iter().all(|&column| column == columns[0]),
        "{commands}"
    );
}

/// The lines of the ```text block under `$ command` in docs/guide/cli.md.
fn documented_output(command: &str) -> String {
    let docs =
        std::fs::read_to_string(repo_root().join("docs/guide/cli.md")).expect("docs/guide/cli.md");
    let start = docs
        .find(&format!("```text\n$ {command}\n"))
        .unwrap_or_else(|| panic!("docs/guide/cli.md shows `{command}`"));
    let block = &docs[start + "```text\n$ \n".len() + command.len()..];
    block[..block.find("```").expect("the block ends")].to_owned()
}

#[test]
fn docs_cli_md_shows_the_output_as_it_is() {
    for command in [
        "strobe-artifact summary tests/fixtures/reference-artifact.json",
        "strobe-artifact recompute tests/fixtures/reference-artifact.json",
    ] {
        let words: Vec<&str> = command.split_whitespace().skip(1).collect();
        let output = run_in(&repo_root(), &words);
        assert_exit(&output, 0);
        assert_eq!(stdout(&output), documented_output(command), "{command}");
    }
}
