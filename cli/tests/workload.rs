//! `strobe-artifact workload` on the shipped samples and on files a newcomer might pass: the
//! sentence, the JSON summary, and the exit codes; `strobe-artifact plan --workload`.

mod support;

use serde_json::Value;
use support::{assert_exit, run, stderr, stdout, temp_dir, temp_file};

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

#[test]
fn the_summary_of_a_conversation_run_shows_ttft_by_turn() {
    let mut value: Value =
        serde_json::from_str(&support::common::reference_text()).expect("the reference");
    let canaries = value["request_canaries"].clone();
    value["workload"] = serde_json::json!({
        "source": "file", "endpoint": "chat",
        "file": {"format": "aiperf_multi_turn", "name": "chats.jsonl", "bytes": 100,
                 "sha256": format!("sha256:{}", "0".repeat(64)), "records": 2,
                 "usable_sessions": 2, "usable_turns": 6, "skipped": [], "timed": false},
        "sending": {"turns": "all", "order": "file", "seed": 0, "output_lengths": "file",
                    "history": "live", "think_time_ms": 0, "session_header": null,
                    "trace_speed": null, "sessions": 2, "requests": 6, "marker_lines": canaries}
    });
    for (position, row) in value["request_timings"]
        .as_array_mut()
        .expect("rows")
        .iter_mut()
        .enumerate()
    {
        let position = position as u64;
        row["workload"] = serde_json::json!({"record": position / 3, "session": position / 3,
                                             "turn": position % 3});
    }
    let file = temp_file("summary-conversations.json", &value.to_string());
    let output = run(&["summary", file.to_str().expect("a path")]);
    assert_exit(&output, 0);
    let text = stdout(&output);
    let table = text
        .split("\nTTFT by turn\n")
        .nth(1)
        .expect("a turns table");
    let lines: Vec<&str> = table.lines().collect();
    assert!(
        lines[0]
            .trim_start()
            .starts_with("turn  requests  failed  TTFT p50"),
        "{text}"
    );
    assert_eq!(lines.len(), 5, "a header, three turns, the note: {text}");
    assert!(
        lines[1].trim_start().starts_with("0         2       0"),
        "{text}"
    );
    assert!(lines[4].starts_with("2 sessions;"), "{text}");
    // A run without sessions has no such table.
    let plain = run(&["summary", &support::fixture("reference-artifact.json")]);
    assert!(!stdout(&plain).contains("TTFT by turn"));
}

#[test]
fn plan_with_a_workload_carries_its_prompts_and_says_so() {
    let folder = temp_dir("plan-with-workload");
    let output = run(&[
        "plan",
        "--link",
        "base_url=http://127.0.0.1:9/v1&model=m&engine=vllm&requests=5&concurrency=2",
        "--out",
        &folder.to_string_lossy(),
        "--workload",
        &sample("prompts.jsonl"),
    ]);
    assert_exit(&output, 0);
    let note = stderr(&output);
    assert!(
        note.contains("This plan holds the prompts of prompts.jsonl"),
        "{note}"
    );
    let text = std::fs::read_to_string(folder.join("plan.json")).expect("plan.json");
    let plan: Value = serde_json::from_str(&text).expect("JSON");
    let lines = std::fs::read_to_string(sample("prompts.jsonl")).expect("the sample");
    let requests = plan["requests"].as_array().expect("requests");
    assert_eq!(requests.len(), 5);
    for (request, line) in requests.iter().zip(lines.lines()) {
        let record: Value = serde_json::from_str(line).expect("a record");
        let body: Value =
            serde_json::from_str(request["body"].as_str().expect("body")).expect("JSON body");
        assert_eq!(body["messages"][0]["content"], record["prompt"]);
        assert_eq!(body["max_tokens"], record["output_tokens"]);
    }
    assert_eq!(plan["workload"]["file"]["name"], "prompts.jsonl");
    assert!(folder.join("locustfile.py").exists());
    let _ = std::fs::remove_dir_all(&folder);

    // Conversations with live history: a later turn's body comes in parts around the replies.
    let output = run(&[
        "plan",
        "--link",
        "base_url=http://127.0.0.1:9/v1&model=m&engine=vllm",
        "--out",
        &folder.to_string_lossy(),
        "--workload",
        &sample("conversations.jsonl"),
    ]);
    assert_exit(&output, 0);
    let text = std::fs::read_to_string(folder.join("plan.json")).expect("plan.json");
    let plan: Value = serde_json::from_str(&text).expect("JSON");
    let requests = plan["requests"].as_array().expect("requests");
    assert_eq!(requests.len(), 23);
    assert_eq!(requests[1]["turn"], 1);
    assert_eq!(requests[1]["delay_ms"], 4000.0);
    assert_eq!(requests[1]["body_parts"].as_array().map(Vec::len), Some(2));
    let _ = std::fs::remove_dir_all(&folder);

    // Recorded history of a file without replies is refused with what to set; a missing file
    // exits 2.
    let output = run(&[
        "plan",
        "--link",
        "base_url=http://127.0.0.1:9/v1&model=m&engine=vllm&history=recorded",
        "--out",
        &folder.to_string_lossy(),
        "--workload",
        &sample("conversations.jsonl"),
    ]);
    assert_exit(&output, 1);
    assert!(
        stderr(&output).contains("set history=live"),
        "{}",
        stderr(&output)
    );
    assert!(!folder.exists(), "nothing is written");
    let output = run(&[
        "plan",
        "--link",
        "base_url=http://127.0.0.1:9/v1&model=m&engine=vllm",
        "--out",
        &folder.to_string_lossy(),
        "--workload",
        "/nonexistent/w.jsonl",
    ]);
    assert_exit(&output, 2);
    assert!(
        stderr(&output).contains("--workload /nonexistent/w.jsonl"),
        "{}",
        stderr(&output)
    );
}
