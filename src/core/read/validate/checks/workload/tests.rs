//! Tests of the `workload-block` and `workload-origin` rules on the reference artifact made
//! into a workload run: two sessions of three turns from a file of five records.

use serde_json::{json, Value};

use crate::core::read::validate::report::RuleId;
use crate::core::read::validate::validate_artifact;

const SHA: &str = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

/// The reference artifact (6 rows, no canaries) as a run of two 3-turn sessions.
fn workload_run() -> Value {
    let text = include_str!("../../../../../../tests/fixtures/reference-artifact.json");
    let mut artifact: Value = serde_json::from_str(text).expect("the reference artifact");
    artifact["workload"] = json!({
        "source": "file",
        "endpoint": "chat",
        "file": {"format": "aiperf_multi_turn", "name": "conversations.jsonl", "bytes": 2048,
                 "sha256": SHA, "records": 5, "usable_sessions": 4, "usable_turns": 12,
                 "skipped": [{"reason": "no_prompt", "count": 1, "first": 3}], "timed": false},
        "sending": {"turns": "all", "order": "file", "seed": 0, "output_lengths": "file",
                    "history": "live", "think_time_ms": 0, "session_header": "X-Session-ID",
                    "trace_speed": null, "sessions": 2, "requests": 6,
                    "marker_lines": artifact["request_canaries"].clone()}
    });
    for (position, row) in artifact["request_timings"]
        .as_array_mut()
        .expect("rows")
        .iter_mut()
        .enumerate()
    {
        let position = position as u64;
        let record = if position < 3 { 0 } else { 2 };
        row["workload"] = json!({"record": record, "session": position / 3, "turn": position % 3});
    }
    artifact
}

/// `(rule, path)` of the two rules' violations.
fn violations(artifact: &Value) -> Vec<(&'static str, String)> {
    validate_artifact(artifact)
        .violations
        .into_iter()
        .filter(|v| matches!(v.rule, RuleId::WorkloadBlock | RuleId::WorkloadOrigin))
        .map(|violation| (violation.rule.id(), violation.path))
        .collect()
}

fn paths(artifact: &Value) -> Vec<String> {
    violations(artifact)
        .into_iter()
        .map(|(_, path)| path)
        .collect()
}

fn changed(pointer: &str, value: Value) -> Value {
    let mut artifact = workload_run();
    *artifact.pointer_mut(pointer).expect(pointer) = value;
    artifact
}

#[test]
fn a_workload_run_and_a_synthetic_completions_run_pass() {
    let artifact = workload_run();
    assert!(
        violations(&artifact).is_empty(),
        "{:?}",
        violations(&artifact)
    );
    assert!(validate_artifact(&artifact).is_acceptable());
    let mut synthetic: Value = serde_json::from_str(include_str!(
        "../../../../../../tests/fixtures/reference-artifact.json"
    ))
    .expect("reference");
    assert!(violations(&synthetic).is_empty());
    synthetic["workload"] = json!({"source": "synthetic", "endpoint": "completions"});
    assert!(violations(&synthetic).is_empty());
}

#[test]
fn the_block_must_be_an_object_of_known_keys_and_spellings() {
    let mut artifact = workload_run();
    artifact["workload"] = json!("prompts.jsonl");
    assert_eq!(paths(&artifact), ["$.workload"]);

    let mut artifact = workload_run();
    artifact["workload"]["prompt"] = json!("What is the capital of India?");
    artifact["workload"]["file"]["first_prompt"] = json!("Tell me a joke");
    artifact["workload"]["sending"]["messages"] = json!([{"role": "user"}]);
    assert_eq!(
        paths(&artifact),
        [
            "$.workload.prompt",
            "$.workload.file.first_prompt",
            "$.workload.sending.messages"
        ]
    );
    let messages: Vec<String> = validate_artifact(&artifact)
        .violations
        .into_iter()
        .map(|violation| violation.message)
        .collect();
    assert!(
        messages
            .iter()
            .all(|message| !message.contains("capital") && !message.contains("joke")),
        "a message never repeats the text: {messages:?}"
    );

    assert_eq!(
        paths(&changed("/workload/source", json!("upload"))),
        ["$.workload.source"]
    );
    assert_eq!(
        paths(&changed("/workload/endpoint", json!("responses"))),
        ["$.workload.endpoint"]
    );
    assert_eq!(
        paths(&changed("/workload/file/format", json!("parquet"))),
        ["$.workload.file.format"]
    );
    assert_eq!(
        paths(&changed("/workload/sending/order", json!("random"))),
        ["$.workload.sending.order"]
    );
    assert_eq!(
        paths(&changed(
            "/workload/sending/session_header",
            json!("Cookie")
        )),
        ["$.workload.sending.session_header"]
    );
    assert_eq!(
        paths(&changed("/workload/sending/think_time_ms", json!(600_001))),
        ["$.workload.sending.think_time_ms"]
    );
    assert_eq!(
        paths(&changed("/workload/file/name", json!("x".repeat(1025)))),
        ["$.workload.file.name"]
    );
    assert_eq!(
        paths(&changed("/workload/file/name", json!(""))),
        ["$.workload.file.name"]
    );
    assert!(paths(&changed("/workload/file/name", json!("x".repeat(300)))).is_empty());
    // A synthetic run has no file and no sending.
    let mut synthetic = workload_run();
    synthetic["workload"]["source"] = json!("synthetic");
    let found = paths(&synthetic);
    assert_eq!(found[..2], ["$.workload.file", "$.workload.sending"]);
    // Its rows then carry an origin no block accounts for.
    assert!(found[2..]
        .iter()
        .all(|path| path.starts_with("$.request_timings[")));
}

#[test]
fn the_hash_is_sha256_and_64_lowercase_hex_digits() {
    for bad in [
        json!("0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"),
        json!(format!("sha256:{}", "A".repeat(64))),
        json!(format!("sha256:{}", "a".repeat(63))),
        json!(null),
    ] {
        assert_eq!(
            paths(&changed("/workload/file/sha256", bad)),
            ["$.workload.file.sha256"]
        );
    }
}

#[test]
fn an_aiperf_single_turn_file_counts_its_records_as_turns() {
    // Twelve records grouped by session_id into four sessions, one more skipped: the turns
    // and the skipped records add up to the records.
    let mut artifact = workload_run();
    artifact["workload"]["file"]["format"] = json!("aiperf_single_turn");
    artifact["workload"]["file"]["records"] = json!(13);
    assert_eq!(paths(&artifact), Vec::<String>::new());
    artifact["workload"]["file"]["records"] = json!(5);
    assert_eq!(paths(&artifact), ["$.workload.file.usable_turns"]);
    artifact["workload"]["file"]["records"] = json!(14);
    assert_eq!(paths(&artifact), ["$.workload.file.skipped"]);
}

#[test]
fn the_counts_must_agree() {
    // Usable sessions and skipped records add up to the records.
    assert_eq!(
        paths(&changed("/workload/file/records", json!(7))),
        ["$.workload.file.skipped"]
    );
    assert_eq!(
        paths(&changed("/workload/file/records", json!(3))),
        ["$.workload.file.usable_sessions"]
    );
    assert_eq!(
        paths(&changed("/workload/file/usable_turns", json!(3))),
        [
            "$.workload.file.usable_turns",
            "$.workload.sending.requests"
        ]
    );
    assert_eq!(
        paths(&changed(
            "/workload/file/skipped",
            json!([{"reason": "no_prompt", "count": 0, "first": 3}])
        )),
        ["$.workload.file.skipped[0].count"]
    );
    assert_eq!(
        paths(&changed(
            "/workload/file/skipped",
            json!([{"reason": "no_prompt", "count": 1, "first": 3},
                   {"reason": "no_prompt", "count": 1, "first": 4}])
        )),
        [
            "$.workload.file.skipped[1].reason",
            "$.workload.file.skipped"
        ]
    );
    assert_eq!(
        paths(&changed(
            "/workload/file/skipped",
            json!([{"reason": "too_long", "count": 1, "first": 3, "text": "…"}])
        )),
        [
            "$.workload.file.skipped[0].text",
            "$.workload.file.skipped[0].reason"
        ]
    );
    // The run's sessions come from the usable ones, its requests from their turns.
    assert_eq!(
        paths(&changed("/workload/sending/sessions", json!(5))),
        ["$.workload.sending.sessions"]
    );
    assert_eq!(
        paths(&changed("/workload/sending/requests", json!(13))),
        ["$.workload.sending.requests"]
    );
    assert_eq!(
        paths(&changed("/workload/sending/requests", json!(5))),
        ["$.workload.sending.requests"]
    );
    // A trace has a speed, an untimed file none.
    assert_eq!(
        paths(&changed("/workload/sending/trace_speed", json!(2.0))),
        ["$.workload.sending.trace_speed"]
    );
    let mut trace = changed("/workload/file/timed", json!(true));
    assert_eq!(paths(&trace), ["$.workload.sending.trace_speed"]);
    trace["workload"]["sending"]["trace_speed"] = json!(2.0);
    assert!(paths(&trace).is_empty());
    // The marker lines are the canaries.
    let flipped = !workload_run()["request_canaries"].as_bool().expect("bool");
    assert_eq!(
        paths(&changed("/workload/sending/marker_lines", json!(flipped))),
        ["$.workload.sending.marker_lines"]
    );
}

#[test]
fn rows_say_where_they_came_from_within_the_blocks_counts() {
    assert_eq!(
        paths(&changed("/request_timings/1/workload/record", json!(4))),
        ["$.request_timings[1].workload.record"]
    );
    assert_eq!(
        paths(&changed("/request_timings/1/workload/session", json!(2))),
        ["$.request_timings[1].workload.session"]
    );
    assert_eq!(
        paths(&changed("/request_timings/1/workload/turn", json!(-1))),
        ["$.request_timings[1].workload.turn"]
    );
    // A session is one record.
    assert_eq!(
        paths(&changed("/request_timings/4/workload/record", json!(1))),
        ["$.request_timings[4].workload.record"]
    );
    // A row without an origin, or one that carries text.
    let mut artifact = workload_run();
    artifact["request_timings"][2]
        .as_object_mut()
        .expect("row")
        .remove("workload");
    artifact["request_timings"][3]["workload"]["text"] = json!("Hello");
    assert_eq!(
        paths(&artifact),
        [
            "$.request_timings[2].workload",
            "$.request_timings[3].workload.text"
        ]
    );
    // Without a block no row has an origin.
    let mut artifact = workload_run();
    artifact.as_object_mut().expect("object").remove("workload");
    assert_eq!(paths(&artifact).len(), 6);
}

#[test]
fn each_sessions_turns_count_from_zero_each_once() {
    let mut artifact = workload_run();
    for (position, turn) in [(3, 1), (4, 2), (5, 3)] {
        artifact["request_timings"][position]["workload"]["turn"] = json!(turn);
    }
    assert_eq!(
        violations(&artifact),
        [(
            "workload-origin",
            "$.request_timings[3].workload.turn".to_owned()
        )]
    );
    // A gap, and a turn given twice.
    let mut artifact = workload_run();
    artifact["request_timings"][2]["workload"]["turn"] = json!(3);
    assert_eq!(paths(&artifact), ["$.request_timings[0].workload.turn"]);
    let message = validate_artifact(&artifact)
        .violations
        .into_iter()
        .find(|violation| violation.rule == RuleId::WorkloadOrigin)
        .map(|violation| violation.message)
        .unwrap_or_default();
    assert!(
        message.starts_with("session 0 has turn 3 but no turn 2"),
        "{message}"
    );
    let mut artifact = workload_run();
    artifact["request_timings"][5]["workload"]["turn"] = json!(1);
    assert_eq!(paths(&artifact), ["$.request_timings[5].workload.turn"]);
}
