//! Tests of workload request bodies: text and messages as given, completions, a session's
//! history, canary marker lines, and trace prompts whose shared hash ids share bytes.

use std::sync::Arc;

use serde_json::{json, Value};

use super::*;
use crate::core::config::choices::ApiEndpoint;
use crate::core::config::settings::RunConfig;
use crate::core::plan::workload::{WorkloadPlanError, WorkloadRequests};
use crate::core::workload::{Session, Turn, TurnInput, Workload, WorkloadFormat, WorkloadSummary};

fn workload(sessions: Vec<Session>) -> Workload {
    let turns = sessions.iter().map(|s| s.turns.len() as u64).sum();
    Workload {
        summary: WorkloadSummary {
            format: WorkloadFormat::AiperfMultiTurn,
            name: None,
            bytes: 1,
            sha256: format!("sha256:{}", "0".repeat(64)),
            records: sessions.len() as u64,
            sessions: sessions.len() as u64,
            turns,
            skipped: Vec::new(),
            timed: false,
            span_ms: None,
        },
        sessions,
        positions: Vec::new(),
    }
}

fn turn(input: TurnInput) -> Turn {
    Turn {
        input,
        output_tokens: Some(12),
        input_tokens: None,
        delay_ms: None,
        recorded_reply: None,
    }
}

fn text(text: &str) -> TurnInput {
    TurnInput::Text(text.into())
}

fn config(endpoint: ApiEndpoint, canaries: bool) -> RunConfig {
    RunConfig {
        base_url: "http://127.0.0.1:8011/v1".into(),
        model: "m".into(),
        engine: Some("sim".into()),
        requests: 100,
        request_canaries: canaries,
        endpoint,
        ..RunConfig::default()
    }
}

fn plan_of(workload: &Workload, config: &RunConfig) -> RunPlan {
    let requests = WorkloadRequests::plan(workload, config).unwrap();
    RunPlan::for_run(config, None, Some(Arc::new(requests))).unwrap()
}

fn body(plan: &RunPlan, index: u64, replies: &[&str]) -> Value {
    serde_json::from_str(&workload_request_body(plan, index, replies).unwrap()).unwrap()
}

#[test]
fn a_text_record_is_one_user_message_as_given_with_its_own_max_tokens() {
    let given = "Ünïcode \"quoted\"\r\n\ttabs and a very long line";
    let plan = plan_of(
        &workload(vec![Session {
            id: None,
            arrival_ms: None,
            turns: vec![turn(text(given))],
        }]),
        &config(ApiEndpoint::Chat, false),
    );
    let body = body(&plan, 0, &[]);
    assert_eq!(
        body["messages"],
        json!([{"role": "user", "content": given}])
    );
    assert_eq!(body["max_tokens"], 12);
    assert_eq!(body["stream"], true);
    assert_eq!(body["model"], "m");
}

#[test]
fn the_completions_api_gets_the_prompt_string_and_refuses_messages_and_sessions() {
    let plan = plan_of(
        &workload(vec![Session {
            id: None,
            arrival_ms: None,
            turns: vec![turn(text("Say hi."))],
        }]),
        &config(ApiEndpoint::Completions, false),
    );
    let body = body(&plan, 0, &[]);
    assert_eq!(body["prompt"], "Say hi.");
    assert!(body.get("messages").is_none());
    assert!(body.get("chat_template_kwargs").is_none());
    assert_eq!(body["stream_options"]["include_usage"], true);

    let messages = workload(vec![Session {
        id: None,
        arrival_ms: None,
        turns: vec![turn(TurnInput::Messages(vec![
            json!({"role": "user", "content": "x"}),
        ]))],
    }]);
    assert_eq!(
        WorkloadRequests::plan(&messages, &config(ApiEndpoint::Completions, false)),
        Err(WorkloadPlanError::ChatOnly {
            what: "chat messages"
        })
    );
    let session = workload(vec![Session {
        id: None,
        arrival_ms: None,
        turns: vec![turn(text("a")), turn(text("b"))],
    }]);
    assert_eq!(
        WorkloadRequests::plan(&session, &config(ApiEndpoint::Completions, false)),
        Err(WorkloadPlanError::ChatOnly {
            what: "conversations"
        })
    );
}

#[test]
fn a_later_turn_carries_the_history_with_the_replies_given() {
    let plan = plan_of(
        &workload(vec![Session {
            id: Some("s1".into()),
            arrival_ms: None,
            turns: vec![
                turn(text("What is ML?")),
                turn(text("An example?")),
                turn(text("Thanks.")),
            ],
        }]),
        &config(ApiEndpoint::Chat, false),
    );
    assert_eq!(
        body(&plan, 2, &["Machine learning is…", "Spam filters."])["messages"],
        json!([
            {"role": "user", "content": "What is ML?"},
            {"role": "assistant", "content": "Machine learning is…"},
            {"role": "user", "content": "An example?"},
            {"role": "assistant", "content": "Spam filters."},
            {"role": "user", "content": "Thanks."},
        ])
    );
    assert_eq!(
        workload_request_body(&plan, 2, &["only one"]),
        Err(WorkloadBodyError::MissingHistory {
            index: 2,
            turn: 2,
            replies: 1
        })
    );
    assert_eq!(
        workload_request_body(&plan, 3, &[]),
        Err(WorkloadBodyError::NoSuchRequest(3))
    );
}

#[test]
fn file_messages_go_as_given_and_canaries_add_one_marker_line_before_the_user_text() {
    let messages = vec![
        json!({"role": "system", "content": "You are terse."}),
        json!({"role": "user", "content": [
            {"type": "text", "text": "What is in this image?"},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}},
        ]}),
    ];
    let one = workload(vec![Session {
        id: None,
        arrival_ms: None,
        turns: vec![turn(TurnInput::Messages(messages.clone()))],
    }]);
    let plain = plan_of(&one, &config(ApiEndpoint::Chat, false));
    assert_eq!(
        body(&plain, 0, &[])["messages"],
        Value::Array(messages.clone())
    );

    let canary = plan_of(&one, &config(ApiEndpoint::Chat, true));
    let sent = body(&canary, 0, &[]);
    let marker = canary.marker(0);
    assert_eq!(
        sent["messages"][0], messages[0],
        "the system message is untouched"
    );
    assert_eq!(
        sent["messages"][1]["content"][0],
        json!({"type": "text", "text": marker_line(&marker)})
    );
    assert_eq!(sent["messages"][1]["content"][1], messages[1]["content"][0]);

    let texts = workload(vec![Session {
        id: None,
        arrival_ms: None,
        turns: vec![turn(text("Hello."))],
    }]);
    let canary = plan_of(&texts, &config(ApiEndpoint::Chat, true));
    assert_eq!(
        body(&canary, 0, &[])["messages"][0]["content"],
        format!("{}Hello.", marker_line(&canary.marker(0)))
    );
}

#[test]
fn trace_prompts_share_the_bytes_of_shared_hash_ids_and_have_the_size_asked() {
    let a = trace_prompt(1300, &[0, 1, 2], 0, 3);
    let b = trace_prompt(1100, &[0, 1, 7], 1, 3);
    let c = trace_prompt(1300, &[5, 1, 2], 2, 3);
    assert_eq!(a.len(), 3900, "1300 tokens at 3 characters");
    assert_eq!(b.len(), 3300);
    let block = (TRACE_BLOCK_TOKENS * 3) as usize;
    assert_eq!(
        a[..2 * block],
        b[..2 * block],
        "shared ids 0 and 1: shared bytes"
    );
    assert_ne!(a[2 * block..2 * block + 100], b[2 * block..2 * block + 100]);
    assert_ne!(
        a[..block],
        c[..block],
        "a different first id: a different first block"
    );
    assert_eq!(
        a[block..2 * block],
        c[block..2 * block],
        "equal ids, equal blocks"
    );
    // Without ids: unique per record, exactly the size.
    let x = trace_prompt(100, &[], 3, 3);
    let y = trace_prompt(100, &[], 4, 3);
    assert_eq!(x.len(), 300);
    assert_ne!(x, y);
    assert!(a.is_ascii());
}
