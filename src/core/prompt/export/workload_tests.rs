//! Plans that carry a workload file's requests: bodies byte for byte as the page sends them,
//! sessions and turns with recorded history, a trace's times, the completions endpoint, the
//! shape the workers hand back, and what is refused.

use std::sync::Arc;

use serde_json::Value;

use super::*;
use crate::core::plan::workload::shape::WorkloadShape;

const PROMPTS: &[u8] = include_bytes!("../../../../public/samples/prompts.jsonl");
const TRACE: &[u8] = include_bytes!("../../../../public/samples/trace.jsonl");
const BASE: &str = "base_url=http://127.0.0.1:9/v1&model=m&engine=vllm";

/// ShareGPT conversations with recorded replies, text that JSON must escape included.
const SHAREGPT: &str = r#"[
  {"id": "c1", "conversations": [
    {"from": "human", "value": "Héllo \"there\"\n\ttab é 😀"},
    {"from": "gpt", "value": "Hi!\nHow can I help?"},
    {"from": "human", "value": "Tell me <b>more</b> \\ please"},
    {"from": "gpt", "value": "Sure."}]},
  {"id": "c2", "conversations": [
    {"from": "human", "value": "One"}, {"from": "gpt", "value": "Two"}]}
]"#;

/// The page's reading of `bytes` with the settings of `query`, and the plan document of both.
/// As on the page, choosing the file sets *Requests* to all of its requests and turns canaries
/// off; the query's own values come after (as a user's edits do).
fn planned(query: &str, name: &str, bytes: &[u8]) -> Result<(Value, String), PlanExportError> {
    let (mut form, _) = RunForm::from_query(query);
    let config = form.to_config().expect("valid settings");
    let options = ReadOptions {
        turns: config.workload.turns,
        ..ReadOptions::default()
    };
    let workload = read(bytes, Some(name), &options).expect("a workload");
    if !query.contains("requests=") {
        form.set(FieldKey::Requests, workload.summary.turns.to_string());
    }
    if !query.contains("request_canaries=") {
        form.set(FieldKey::RequestCanaries, "false");
    }
    let text = plan_document_with(&form, Some(&workload))?;
    // The command line's reader gives the same bytes from the same file.
    let file = WorkloadBytes { name, bytes };
    let from_link = plan_of_link(query, Some(file))?;
    assert_eq!(from_link.document, text, "the CLI writes the page's bytes");
    assert!(from_link
        .holds_prompts
        .as_deref()
        .is_some_and(|notice| notice.contains("holds the prompts of")));
    Ok((serde_json::from_str(&text).expect("JSON"), text))
}

fn body(request: &Value) -> Value {
    serde_json::from_str(request["body"].as_str().expect("a body")).expect("a JSON body")
}

/// The file's own records, read here with serde alone (not strobe's reader).
fn sample_prompts() -> Vec<(String, u64)> {
    std::str::from_utf8(PROMPTS)
        .expect("UTF-8")
        .lines()
        .map(|line| {
            let record: Value = serde_json::from_str(line).expect("a record");
            let prompt = record["prompt"].as_str().expect("prompt").to_owned();
            (prompt, record["output_tokens"].as_u64().expect("tokens"))
        })
        .collect()
}

#[test]
fn a_prompt_file_plan_sends_each_text_byte_for_byte_with_its_max_tokens() {
    let query = format!("{BASE}&requests=100&concurrency=4");
    let (plan, text) = planned(&query, "prompts.jsonl", PROMPTS).expect("plans");
    let expected = sample_prompts();
    let requests = plan["requests"].as_array().expect("requests");
    assert_eq!(requests.len(), expected.len());
    for (index, (request, (prompt, tokens))) in requests.iter().zip(&expected).enumerate() {
        let sent = body(request);
        assert_eq!(request["index"], index);
        assert_eq!(
            (request["session"].clone(), request["turn"].clone()),
            (index.into(), 0.into())
        );
        assert_eq!(sent["messages"].as_array().map(Vec::len), Some(1));
        assert_eq!(sent["messages"][0]["role"], "user");
        assert_eq!(
            sent["messages"][0]["content"].as_str(),
            Some(prompt.as_str())
        );
        assert_eq!(sent["max_tokens"].as_u64(), Some(*tokens));
        assert_eq!(request["canary_marker"], Value::Null);
        assert_eq!(request["prompt"], Value::Null);
    }
    assert_eq!(plan["load"]["mode"], "concurrency");
    assert!(plan["load"].get("session_arrival_ms").is_none());
    assert!(plan["prompts"]
        .as_str()
        .is_some_and(|notice| notice.contains("prompts.jsonl")));
    // The shape the workers copy into their records holds no prompt.
    let shape = plan["workload"].to_string();
    for (prompt, _) in &expected {
        assert!(!shape.contains(prompt.as_str()), "{prompt}");
    }
    assert_eq!(plan["workload"]["file"]["format"], "prompt_columns");
    assert_eq!(
        plan["workload"]["sessions"].as_array().map(Vec::len),
        Some(20)
    );
    // The bodies are the page's own: the core's body of each request, as one string, with the
    // settings the plan records (the page's: canaries off once the file is chosen).
    assert!(plan["link"]
        .as_str()
        .unwrap()
        .contains("request_canaries=false"));
    let (form, _) = RunForm::from_query(plan["link"].as_str().unwrap());
    let config = form.to_config().expect("valid");
    let workload = read(PROMPTS, Some("prompts.jsonl"), &ReadOptions::default()).expect("reads");
    let requests_plan = WorkloadRequests::plan(&workload, &config).expect("plans");
    let run = RunPlan::for_run(&config, None, Some(Arc::new(requests_plan))).expect("plans");
    assert_eq!(run.requests(), requests.len() as u64);
    for (index, request) in requests.iter().enumerate() {
        let page = workload_request_body(&run, index as u64, &[]).expect("a body");
        assert_eq!(request["body"].as_str(), Some(page.as_str()));
    }
    assert!(text.ends_with('\n'));
}

#[test]
fn the_completions_endpoint_gets_the_text_as_its_prompt() {
    let query = format!("{BASE}&requests=3&endpoint=completions");
    let (plan, _) = planned(&query, "prompts.jsonl", PROMPTS).expect("plans");
    assert_eq!(plan["endpoints"][0], "http://127.0.0.1:9/v1/completions");
    let expected = sample_prompts();
    let requests = plan["requests"].as_array().expect("requests");
    assert_eq!(requests.len(), 3);
    for (request, (prompt, tokens)) in requests.iter().zip(&expected) {
        let sent = body(request);
        assert_eq!(sent["prompt"].as_str(), Some(prompt.as_str()));
        assert!(sent.get("messages").is_none());
        assert_eq!(sent["max_tokens"].as_u64(), Some(*tokens));
    }
}

#[test]
fn recorded_conversations_are_sessions_of_turns_with_the_files_replies_as_history() {
    let query = format!(
        "{BASE}&requests=100&concurrency=2&workload_turns=all&history=recorded\
         &think_time_ms=700&session_header=X-Session-ID&request_canaries=true"
    );
    let (plan, _) = planned(&query, "chats.json", SHAREGPT.as_bytes()).expect("plans");
    let requests = plan["requests"].as_array().expect("requests");
    let places: Vec<(u64, u64)> = requests
        .iter()
        .map(|r| (r["session"].as_u64().unwrap(), r["turn"].as_u64().unwrap()))
        .collect();
    assert_eq!(places, [(0, 0), (0, 1), (1, 0)]);
    let second = body(&requests[1]);
    let messages = second["messages"].as_array().expect("messages");
    let roles: Vec<&str> = messages.iter().filter_map(|m| m["role"].as_str()).collect();
    assert_eq!(roles, ["user", "assistant", "user"]);
    let marker = |index: usize| {
        requests[index]["canary_marker"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    assert_eq!(
        messages[0]["content"].as_str(),
        Some(
            format!(
                "Begin your reply with the exact marker {}, followed by one space.\n\
             Héllo \"there\"\n\ttab é 😀",
                marker(0)
            )
            .as_str()
        )
    );
    assert_eq!(messages[1]["content"], "Hi!\nHow can I help?");
    assert!(messages[2]["content"]
        .as_str()
        .is_some_and(|text| text.ends_with("Tell me <b>more</b> \\ please")));
    assert_eq!(requests[0]["delay_ms"], 0.0);
    assert_eq!(
        requests[1]["delay_ms"], 700.0,
        "the think time where the file gives none"
    );
    assert_eq!(requests[0]["headers"]["X-Session-ID"], "c1");
    assert_eq!(requests[2]["headers"]["X-Session-ID"], "c2");
    assert!(plan["load"]["rule"]
        .as_str()
        .unwrap()
        .contains("next unsent session"));
    // The first turn's body is exactly what a session's first turn sends on the page.
    assert_eq!(
        body(&requests[0])["messages"].as_array().map(Vec::len),
        Some(1)
    );
}

/// A reply as Python's `json.dumps(reply, ensure_ascii=False)` writes it (the locustfile's
/// way), for [`REPLY`]: quotes, backslashes, new lines and tabs escaped short, other control
/// characters as lowercase `\u00xx`, everything else as is.
const REPLY_AS_PYTHON_WRITES_IT: &str =
    "\"Sure: \\\"quoted\\\" \\\\ back\\nslash\\u0001\\t é 😀 \u{2028}\"";
const REPLY: &str = "Sure: \"quoted\" \\ back\nslash\u{1}\t é 😀 \u{2028}";

#[test]
fn a_live_turn_comes_in_parts_that_make_the_pages_body_around_the_servers_replies() {
    let query =
        format!("{BASE}&requests=100&workload_turns=all&history=live&request_canaries=true");
    let (plan, _) = planned(&query, "chats.json", SHAREGPT.as_bytes()).expect("plans");
    let requests = plan["requests"].as_array().expect("requests");
    assert!(
        requests[0]["body"].is_string(),
        "a first turn needs no history"
    );
    assert!(requests[0].get("body_parts").is_none());
    assert!(
        requests[1]["body"].is_null(),
        "a later turn waits for the reply"
    );
    let parts: Vec<&str> = requests[1]["body_parts"]
        .as_array()
        .expect("parts")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert_eq!(parts.len(), 2);
    assert_eq!(
        Value::String(REPLY.to_owned()).to_string(),
        REPLY_AS_PYTHON_WRITES_IT
    );
    let spliced = format!("{}{REPLY_AS_PYTHON_WRITES_IT}{}", parts[0], parts[1]);
    // The page's body of that turn, the server having replied REPLY to the first.
    let (form, _) = RunForm::from_query(&query);
    let config = form.to_config().expect("valid");
    let options = ReadOptions {
        turns: config.workload.turns,
        ..ReadOptions::default()
    };
    let workload = read(SHAREGPT.as_bytes(), Some("chats.json"), &options).expect("reads");
    let run = plan_with(&config, Some(&workload)).expect("plans");
    assert_eq!(
        spliced,
        workload_request_body(&run, 1, &[REPLY]).expect("a body")
    );
    let live = &plan["live_history"];
    assert_eq!(live["reply_limit_chars"], 4 * 1024 * 1024);
    assert!(live["failed_turn"]
        .as_str()
        .is_some_and(|text| text.starts_with("not sent: turn {turn} of this session failed")));
    assert!(live["long_reply"]
        .as_str()
        .is_some_and(|text| text.contains("{turn}")));
    // Recorded history, or one turn a record, needs no parts.
    for query in [
        format!("{BASE}&workload_turns=all&history=recorded"),
        format!("{BASE}&history=live"),
    ] {
        let (plan, _) = planned(&query, "chats.json", SHAREGPT.as_bytes()).expect("plans");
        assert!(plan.get("live_history").is_none(), "{query}");
        let requests = plan["requests"].as_array().expect("requests");
        assert!(requests.iter().all(|request| request["body"].is_string()));
    }
}

#[test]
fn recorded_history_without_the_files_replies_is_refused_with_what_to_set() {
    let text = r#"{"session_id": "s", "turns": [{"text": "a"}, {"text": "b"}]}"#;
    let query = format!("{BASE}&history=recorded");
    let refusal = planned(&query, "multi.jsonl", text.as_bytes()).expect_err("refused");
    assert!(
        refusal.to_string().contains("set history=live"),
        "{refusal}"
    );
}

#[test]
fn a_trace_is_planned_open_loop_at_its_timestamps_over_the_speed() {
    let stamps: Vec<f64> = std::str::from_utf8(TRACE)
        .expect("UTF-8")
        .lines()
        .map(|line| {
            let record: Value = serde_json::from_str(line).expect("a record");
            record["timestamp"].as_f64().expect("timestamp")
        })
        .collect();
    for speed in [1.0, 2.0] {
        let query = format!("{BASE}&requests=1000&concurrency=8&trace_speed={speed}");
        let (plan, _) = planned(&query, "trace.jsonl", TRACE).expect("plans");
        assert_eq!(plan["load"]["mode"], "rate");
        assert_eq!(plan["load"]["max_in_flight"], 8);
        let arrivals: Vec<f64> = plan["load"]["arrival_ms"]
            .as_array()
            .expect("schedule")
            .iter()
            .map(|ms| ms.as_f64().expect("ms"))
            .collect();
        let due: Vec<f64> = stamps.iter().map(|ms| (ms - stamps[0]) / speed).collect();
        assert_eq!(arrivals, due);
        let requests = plan["requests"].as_array().expect("requests");
        assert_eq!(requests.len(), stamps.len());
        // Records that share leading hash ids share those prompt bytes.
        let first = body(&requests[0])["messages"][0]["content"]
            .as_str()
            .unwrap()
            .to_owned();
        let second = body(&requests[1])["messages"][0]["content"]
            .as_str()
            .unwrap()
            .to_owned();
        let shared = 6 * 512 * 3;
        assert_eq!(first[..shared], second[..shared]);
        assert_eq!(first.len(), 4080 * 3);
        assert_eq!(plan["workload"]["timed"], true);
    }
}

#[test]
fn the_shape_makes_the_same_plan_for_the_artifact_without_a_prompt() {
    for (query, name, bytes) in [
        (format!("{BASE}&requests=7"), "prompts.jsonl", PROMPTS),
        (
            format!("{BASE}&requests=25&trace_speed=4"),
            "trace.jsonl",
            TRACE,
        ),
        (
            format!(
                "{BASE}&workload_turns=all&history=recorded&workload_order=shuffle&workload_seed=3"
            ),
            "chats.json",
            SHAREGPT.as_bytes(),
        ),
    ] {
        let (form, _) = RunForm::from_query(&query);
        let config = form.to_config().expect("valid");
        let options = ReadOptions {
            turns: config.workload.turns,
            ..ReadOptions::default()
        };
        let workload = read(bytes, Some(name), &options).expect("reads");
        let sent = plan_with(&config, Some(&workload)).expect("plans");
        let (plan, _) = planned(&query, name, bytes).expect("plans");
        let shape: WorkloadShape =
            serde_json::from_value(plan["workload"].clone()).expect("a shape");
        let requests = WorkloadRequests::from_shape(shape).expect("a plan");
        let back = RunPlan::for_run(&config, None, Some(Arc::new(requests))).expect("plans");
        assert_eq!(back.requests(), sent.requests(), "{name}");
        assert_eq!(back.planned_context_tokens(), sent.planned_context_tokens());
        assert_eq!(back.arrival_times_ms(), sent.arrival_times_ms());
        // What the artifact's workload block and each row's origin are made of.
        let (from_shape, planned) = (back.workload().unwrap(), sent.workload().unwrap());
        assert_eq!(from_shape.file(), planned.file(), "{name}");
        assert_eq!(from_shape.is_timed(), planned.is_timed());
        assert_eq!(from_shape.sessions().len(), planned.sessions().len());
        assert_eq!(from_shape.requests(), planned.requests());
        for index in 0..sent.requests() {
            let origin = |workload: &WorkloadRequests| {
                let (session, turn) = workload.position(index).expect("planned");
                (workload.sessions()[session].record, session, turn)
            };
            assert_eq!(origin(from_shape), origin(planned));
            assert_eq!(back.max_tokens_of(index), sent.max_tokens_of(index));
            assert_eq!(
                workload_request_body(&back, index, &[]),
                Err(WorkloadBodyError::Withheld(index)),
                "a shape sends nothing"
            );
        }
    }
}

#[test]
fn a_hostile_shape_is_refused() {
    let (plan, _) =
        planned(&format!("{BASE}&requests=5"), "prompts.jsonl", PROMPTS).expect("plans");
    let good = plan["workload"].clone();
    let with = |pointer: &str, value: Value| {
        let mut shape = good.clone();
        *shape.pointer_mut(pointer).expect(pointer) = value;
        shape
    };
    for bad in [
        with("/file/format", "a secret prompt".into()),
        with("/sessions/0/record", 99.into()),
        with("/sessions/1/record", 0.into()),
        with("/sessions/0/turns", Value::Array(Vec::new())),
        with("/sessions/0/turns/0/delay_ms", (-1.0).into()),
        with("/sessions", Value::Array(Vec::new())),
        with("/file/usable_turns", 2.into()),
        with(
            "/file/skipped",
            serde_json::json!([{"reason": "text", "count": 1, "first": 1}]),
        ),
    ] {
        let refused = serde_json::from_value::<WorkloadShape>(bad.clone())
            .map_err(|error| error.to_string())
            .and_then(WorkloadRequests::from_shape);
        assert!(refused.is_err(), "{bad}");
    }
    let mut extra = good.clone();
    extra["sessions"][0]["text"] = "Hello".into();
    assert!(
        serde_json::from_value::<WorkloadShape>(extra).is_err(),
        "no room for a prompt"
    );
}
