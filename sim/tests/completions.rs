//! `/v1/completions` against a real HTTP client: the streamed and the whole-body shapes vLLM
//! sends, usage, the 400s for prompts strobe-sim cannot take, faults on the completions shape,
//! and prefix-cache hits of a growing prompt on both endpoints.

mod common;

use std::time::Duration;

use common::*;
use serde_json::Value;
use strobe_sim::{Api, Outcome};

const IDLE: Duration = Duration::from_secs(10);

async fn post_json(client: &reqwest::Client, url: &str, body: String) -> (u16, Value) {
    let response = client
        .post(url)
        .header("content-type", "application/json")
        .body(body)
        .send()
        .await
        .expect("answered");
    let status = response.status().as_u16();
    let text = response.text().await.expect("a body");
    let value =
        serde_json::from_str(&text).unwrap_or_else(|error| panic!("not JSON ({error}): {text}"));
    (status, value)
}

/// The truth records once there are `count` of them: a handler records after its last write,
/// which can be a moment after the client has read the whole response.
async fn records_once(running: &strobe_sim::Running, count: usize) -> Vec<strobe_sim::TruthRecord> {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let records = running.truth.since(0);
        if records.len() >= count {
            assert_eq!(records.len(), count, "more records than requests");
            return records;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "only {} of {count} records",
            records.len()
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_streamed_completion_sends_text_chunks_usage_and_done() {
    let running = start(fast_config()).await;
    let client = reqwest::Client::new();
    let prompt = strobe_prompt(3, 2, 5, 1_200, "");
    let observed = post_stream_to(
        &client,
        &origin(&running),
        "/v1/completions",
        completions_body("strobe-sim-1", &prompt, 64, true),
        &[],
        IDLE,
    )
    .await;
    assert_eq!(observed.status, 200);
    assert!(observed.done, "data: [DONE] ends the stream");
    assert_eq!(observed.unparsable, 0);
    assert_eq!(
        observed.content,
        "ANVIL_REQ_3_00002 code code code code code"
    );
    assert_eq!(
        observed.content_chunks, 6,
        "one chunk per token, marker included"
    );
    assert_eq!(observed.reasoning_chunks, 0, "completions never think");
    assert_eq!(observed.finish_reasons, ["stop"]);

    let (usage_chunk, text_chunks) = observed.chunks.split_last().expect("chunks");
    assert_eq!(
        text_chunks.len(),
        6,
        "no role chunk, no separate finish chunk"
    );
    for (index, chunk) in text_chunks.iter().enumerate() {
        assert_eq!(chunk["object"], "text_completion");
        assert!(chunk["id"]
            .as_str()
            .is_some_and(|id| id.starts_with("cmpl-sim-")));
        assert_eq!(chunk["model"], "strobe-sim-1");
        assert!(chunk["created"].as_u64().is_some());
        let choice = &chunk["choices"][0];
        assert_eq!(choice["index"], 0);
        assert_eq!(choice["logprobs"], Value::Null);
        assert!(choice.get("delta").is_none(), "{chunk}");
        let expected_finish = if index == 5 {
            Value::from("stop")
        } else {
            Value::Null
        };
        assert_eq!(choice["finish_reason"], expected_finish, "chunk {index}");
    }
    assert_eq!(usage_chunk["object"], "text_completion");
    assert_eq!(usage_chunk["choices"], serde_json::json!([]));
    let usage = observed.usage.expect("usage was asked for");
    assert_eq!(usage["completion_tokens"], 6);
    assert_eq!(usage["prompt_tokens"], (1_200f64 / 3.15).ceil() as u64);

    let record = wait_for_record(&running, &observed.request_id).await;
    assert_eq!(record.api, Api::Completions);
    assert_eq!(record.outcome, Outcome::Completed);
    assert_eq!(record.content, observed.content);
    assert_eq!(record.prompt_chars, 1_200);
    assert_eq!(record.marker.as_deref(), Some("ANVIL_REQ_3_00002"));
    assert!(!record.thinking);
    assert!(record.done_sent);
    assert_eq!(record.finish_reason.as_deref(), Some("stop"));
    running.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_whole_completion_is_one_text_completion_body() {
    let running = start(fast_config()).await;
    let client = reqwest::Client::new();
    let prompt = strobe_prompt(3, 4, 3, 900, "");
    let url = format!("{}/v1/completions", origin(&running));
    let (status, body) = post_json(
        &client,
        &url,
        completions_body("strobe-sim-1", &prompt, 3, false),
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(body["object"], "text_completion");
    assert!(body["id"]
        .as_str()
        .is_some_and(|id| id.starts_with("cmpl-sim-")));
    let choice = &body["choices"][0];
    // max_tokens 3: the marker and two of the three words, cut by length.
    assert_eq!(choice["text"], "ANVIL_REQ_3_00004 code code");
    assert_eq!(choice["finish_reason"], "length");
    assert!(choice.get("message").is_none());
    assert_eq!(body["usage"]["completion_tokens"], 3);
    assert_eq!(
        body["usage"]["total_tokens"],
        body["usage"]["prompt_tokens"].as_u64().expect("a count") + 3
    );
    let records = records_once(&running, 1).await;
    assert_eq!(records[0].api, Api::Completions);
    assert!(!records[0].stream);
    assert_eq!(records[0].content, "ANVIL_REQ_3_00004 code code");
    running.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prompts_that_are_not_one_string_get_a_400_saying_so() {
    let running = start(fast_config()).await;
    let client = reqwest::Client::new();
    let url = format!("{}/v1/completions", origin(&running));
    let cases = [
        (
            r#"{"model": "strobe-sim-1", "prompt": [1, 2, 3]}"#,
            "a list of token ids",
        ),
        (
            r#"{"model": "strobe-sim-1", "prompt": ["a", "b"]}"#,
            "a list of 2 prompts",
        ),
        (
            r#"{"model": "strobe-sim-1", "max_tokens": 8}"#,
            "`prompt` is missing",
        ),
        (
            r#"{"model": "strobe-sim-1", "prompt": null}"#,
            "`prompt` is missing",
        ),
        (r#"{"model": "strobe-sim-1", "prompt": 7}"#, "got a number"),
        ("{not json", "not a valid completion request"),
        // A chat body sent to the completions endpoint.
        (
            r#"{"model": "strobe-sim-1", "messages": [{"role": "user", "content": "hi"}]}"#,
            "`prompt` is missing",
        ),
    ];
    for (body, needle) in cases {
        let (status, error) = post_json(&client, &url, body.to_string()).await;
        assert_eq!(status, 400, "{body}");
        let message = error["error"]["message"].as_str().unwrap_or_default();
        assert!(message.contains(needle), "{body}: {message}");
        assert_eq!(error["error"]["type"], "invalid_request_error");
        assert!(error["error"].get("code").is_some());
    }
    let (status, error) = post_json(
        &client,
        &url,
        completions_body("strobe-sim-1", "hi", 0, false),
    )
    .await;
    assert_eq!(status, 400);
    assert!(error["error"]["message"]
        .as_str()
        .unwrap_or_default()
        .contains("at least 1"));
    let records = records_once(&running, cases.len() + 1).await;
    assert!(records
        .iter()
        .all(|record| record.api == Api::Completions && record.outcome == Outcome::Rejected));
    assert_eq!(
        records[0].error.as_deref().map(|e| e.contains("token ids")),
        Some(true)
    );
    // A completions body sent to chat is refused there, naming `messages`.
    let (status, error) = post_json(
        &client,
        &format!("{}/v1/chat/completions", origin(&running)),
        completions_body("strobe-sim-1", "hi", 8, false),
    )
    .await;
    assert_eq!(status, 400);
    assert_eq!(error["error"]["param"], "messages");
    running.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn faults_apply_to_the_completions_shape() {
    let running = start(fast_config()).await;
    let client = reqwest::Client::new();
    let prompt = strobe_prompt(3, 6, 4, 600, "");
    let observed = post_stream_to(
        &client,
        &origin(&running),
        "/v1/completions",
        completions_body("sim-fault-malformed-json+crlf", &prompt, 64, true),
        &[("x-sim-fault", "no-usage")],
        IDLE,
    )
    .await;
    assert_eq!(observed.status, 200);
    assert_eq!(observed.unparsable, 1, "one cut-off event");
    assert_eq!(observed.content, "ANVIL_REQ_3_00006 code code code code");
    assert!(observed.usage.is_none());
    assert!(observed.done);
    let record = wait_for_record(&running, &observed.request_id).await;
    assert_eq!(record.malformed_events, 1);
    assert_eq!(record.faults.iter().count(), 3);

    let (status, error) = post_json(
        &client,
        &format!("{}/v1/completions", origin(&running)),
        completions_body("sim-fault-http-429", &prompt, 8, false),
    )
    .await;
    assert_eq!(status, 429);
    assert_eq!(error["error"]["type"], "rate_limit_error");
    running.shutdown().await;
}

/// The cached tokens a prompt of `prompt_chars` gets when its first `shared_bytes` bytes were
/// seen before, with the test config's 256-byte blocks and 3.15 characters a token.
fn expected_cached(shared_bytes: usize, prompt_chars: usize) -> u32 {
    let matched = shared_bytes / 256 * 256;
    let prompt_tokens = (prompt_chars as f64 / 3.15).ceil() as u32;
    ((matched as f64 / 3.15).floor() as u32).min(prompt_tokens - 1)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_growing_prompt_hits_the_prefix_cache_on_both_endpoints() {
    let running = start(fast_config()).await;
    let client = reqwest::Client::new();
    let base = origin(&running);
    let turn_one = strobe_prompt(5, 1, 0, 2_000, "");
    let turn_two = "And now the second question, with a little more context.".repeat(10);

    // Completions: the next prompt is the previous prompt, the reply and a new question.
    let url = format!("{base}/v1/completions");
    let (_, first) = post_json(
        &client,
        &url,
        completions_body("strobe-sim-1", &turn_one, 16, false),
    )
    .await;
    let reply = first["choices"][0]["text"]
        .as_str()
        .expect("a text")
        .to_string();
    let grown = format!("{turn_one}{reply}\n{turn_two}");
    let (_, second) = post_json(
        &client,
        &url,
        completions_body("strobe-sim-1", &grown, 16, false),
    )
    .await;
    // Only the prompt's blocks were cached, not the reply the server generated.
    let shared = turn_one.len();
    assert_eq!(
        second["usage"]["prompt_tokens_details"]["cached_tokens"],
        expected_cached(shared, grown.chars().count())
    );
    assert!(expected_cached(shared, grown.chars().count()) > 500);

    // Chat: the history grows by the assistant's reply and the next user message.
    let url = format!("{base}/v1/chat/completions");
    let chat_one = strobe_prompt(5, 2, 0, 2_000, "");
    let body = serde_json::json!({"model": "strobe-sim-1", "max_tokens": 16,
        "messages": [{"role": "user", "content": chat_one}]});
    let (_, first) = post_json(&client, &url, body.to_string()).await;
    let reply = first["choices"][0]["message"]["content"]
        .as_str()
        .expect("content")
        .to_string();
    let body = serde_json::json!({"model": "strobe-sim-1", "max_tokens": 16, "messages": [
        {"role": "user", "content": chat_one},
        {"role": "assistant", "content": reply},
        {"role": "user", "content": turn_two},
    ]});
    let (_, second) = post_json(&client, &url, body.to_string()).await;
    // The prompt text is the messages joined by newlines: the first turn is its prefix.
    let chars = chat_one.len() + 1 + reply.chars().count() + 1 + turn_two.len();
    assert_eq!(
        second["usage"]["prompt_tokens_details"]["cached_tokens"],
        expected_cached(chat_one.len(), chars)
    );

    let records = records_once(&running, 4).await;
    let cached: Vec<(Api, u32)> = records
        .iter()
        .map(|record| (record.api, record.cached_tokens))
        .collect();
    assert_eq!(cached[0], (Api::Completions, 0), "a cold cache");
    assert_eq!(
        cached[2],
        (Api::Chat, 0),
        "another prompt shares no first block"
    );
    assert!(cached[1].1 > 0 && cached[3].1 > 0, "{cached:?}");
    running.shutdown().await;
}
