//! `strobe-artifact workload` on the shipped samples and on files a newcomer might pass: the
//! sentence, the JSON summary, and the exit codes.

mod support;

use serde_json::Value;
use support::{assert_exit, run, stderr, stdout, temp_file};

/// A shipped sample's path from the CLI crate's directory.
fn sample(name: &str) -> String {
    format!("{}/../public/samples/{name}", env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn the_trace_sample_prints_its_sentence_and_hash() {
    let output = run(&["workload", &sample("trace.jsonl")]);
    assert_exit(&output, 0);
    let text = stdout(&output);
    assert!(
        text.starts_with("Mooncake trace: 40 requests over 9.6 s.\n"),
        "{text}"
    );
    assert!(text.contains("  format    mooncake_trace\n"), "{text}");
    assert!(text.contains("  sha256    sha256:"), "{text}");
}

#[test]
fn json_output_is_the_summary_with_its_sentence() {
    let output = run(&["workload", "--json", &sample("conversations.jsonl")]);
    assert_exit(&output, 0);
    let value: Value = serde_json::from_str(&stdout(&output)).expect("JSON");
    assert_eq!(value["format"], "aiperf_multi_turn");
    assert_eq!(value["name"], "conversations.jsonl");
    assert_eq!(value["sessions"], 8);
    assert_eq!(value["turns"], 23);
    assert_eq!(
        value["sentence"],
        "AIPerf multi_turn: 8 sessions (23 turns)."
    );
}

#[test]
fn turns_all_plays_every_sharegpt_turn() {
    let file = temp_file(
        "sharegpt.json",
        r#"[{"conversations": [{"from": "human", "value": "a"}, {"from": "gpt", "value": "b"},
            {"from": "human", "value": "c"}, {"from": "gpt", "value": "d"}]},
           {"conversations": [{"from": "human", "value": "alone"}]}]"#,
    );
    let path = file.to_string_lossy().into_owned();
    let first = stdout(&run(&["workload", &path]));
    assert!(
        first.starts_with("ShareGPT: 1 of 2 conversations usable, 1 has no reply.\n"),
        "{first}"
    );
    let output = run(&["workload", "--turns", "all", &path]);
    assert_exit(&output, 0);
    let all = stdout(&output);
    assert!(
        all.starts_with("ShareGPT: 1 of 2 conversations usable (2 turns), 1 has no reply.\n"),
        "{all}"
    );
    assert!(all.contains("(first at line 3, `conversations`)"), "{all}");
    assert!(!all.contains("alone"), "prompts are never printed: {all}");
}

#[test]
fn an_unknown_file_exits_one_and_says_what_was_expected() {
    let file = temp_file("unknown.jsonl", "{\"secret-key\": \"secret value\"}\n");
    let output = run(&["workload", &file.to_string_lossy()]);
    assert_exit(&output, 1);
    let message = stderr(&output);
    assert!(
        message.starts_with("strobe-artifact workload: "),
        "{message}"
    );
    assert!(
        message.contains("line 1: a JSON record with none of the keys"),
        "{message}"
    );
    assert!(!message.contains("secret"), "{message}");
}

#[test]
fn a_missing_file_or_a_bad_turns_value_exits_two() {
    let output = run(&["workload", "no-such-workload.jsonl"]);
    assert_exit(&output, 2);
    assert!(
        stderr(&output).contains("no such file"),
        "{}",
        stderr(&output)
    );
    let output = run(&["workload", "--turns", "some", &sample("prompts.jsonl")]);
    assert_exit(&output, 2);
    assert!(
        stderr(&output).contains("first, all"),
        "{}",
        stderr(&output)
    );
}
