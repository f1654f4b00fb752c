//! The simulator's HTTP API through a real client: stream format, non-streaming answers, models,
//! prefix caching, CORS, the API key, error shapes, the output contract and several ports.

mod common;

use std::time::Duration;

use common::*;
use serde_json::Value;

const IDLE: Duration = Duration::from_secs(5);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_has_role_reasoning_content_finish_usage_and_done_in_order() {
    let running = start(fast_config()).await;
    let client = reqwest::Client::new();
    let prompt = strobe_prompt(7, 0, 4, 3_000, "");
    let body = chat_body("strobe-sim-1", &prompt, 64, true, None);
    let observed = post_stream(&client, &origin(&running), body, &[], IDLE).await;

    assert_eq!(observed.status, 200);
    let content_type = observed.headers["content-type"].to_str().expect("ascii");
    assert!(
        content_type.starts_with("text/event-stream"),
        "{content_type}"
    );
    assert!(observed.request_id.starts_with("sim-"));
    assert!(observed.done, "data: [DONE] ends the stream");
    assert_eq!(observed.unparsable, 0);

    // The kinds of chunk, in order: role, reasoning…, content…, finish, usage.
    let kinds: Vec<&str> = observed
        .chunks
        .iter()
        .map(|chunk| {
            let delta = &chunk["choices"][0]["delta"];
            if chunk["choices"].as_array().is_some_and(Vec::is_empty) {
                "usage"
            } else if !chunk["choices"][0]["finish_reason"].is_null() {
                "finish"
            } else if delta["role"] == "assistant" {
                "role"
            } else if delta.get("reasoning_content").is_some() {
                "reasoning"
            } else {
                "content"
            }
        })
        .collect();
    let mut expected = vec!["role"];
    expected.extend(["reasoning"; 2]);
    expected.extend(["content"; 5]);
    expected.extend(["finish", "usage"]);
    assert_eq!(kinds, expected);
    for chunk in &observed.chunks {
        assert_eq!(chunk["object"], "chat.completion.chunk");
        assert_eq!(chunk["model"], "strobe-sim-1");
        assert_eq!(chunk["id"], format!("chatcmpl-{}", observed.request_id));
    }

    let usage = observed
        .usage
        .as_ref()
        .expect("include_usage asked for a usage chunk");
    let expected_prompt_tokens = (3_000f64 / 3.15).ceil() as u64;
    assert_eq!(usage["prompt_tokens"], expected_prompt_tokens);
    assert_eq!(
        usage["completion_tokens"], 7,
        "2 reasoning + marker + 4 words"
    );
    assert_eq!(usage["total_tokens"], expected_prompt_tokens + 7);
    assert_eq!(usage["prompt_tokens_details"]["cached_tokens"], 0);
    assert_eq!(usage["completion_tokens_details"]["reasoning_tokens"], 2);
    assert_eq!(observed.finish_reasons, vec!["stop".to_string()]);
    running.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_non_streaming_request_gets_one_chat_completion() {
    let running = start(fast_config()).await;
    let client = reqwest::Client::new();
    let prompt = strobe_prompt(3, 2, 3, 1_000, "");
    let response = client
        .post(format!("{}/v1/chat/completions", origin(&running)))
        .body(chat_body("strobe-sim-1", &prompt, 64, false, Some(true)))
        .send()
        .await
        .expect("answered");
    assert_eq!(response.status(), 200);
    let body: Value = response.json_value().await;
    assert_eq!(body["object"], "chat.completion");
    let message = &body["choices"][0]["message"];
    assert_eq!(message["role"], "assistant");
    assert_eq!(message["content"], "ANVIL_REQ_3_00002 code code code");
    assert_eq!(message["reasoning_content"], "let me");
    assert_eq!(body["choices"][0]["finish_reason"], "stop");
    assert_eq!(body["usage"]["completion_tokens"], 6);
    running.shutdown().await;
}

/// `reqwest::Response::json` needs a crate feature; parsing the text is all it does.
trait JsonValue {
    async fn json_value(self) -> Value;
}

impl JsonValue for reqwest::Response {
    async fn json_value(self) -> Value {
        let text = self.text().await.expect("a body");
        serde_json::from_str(&text).unwrap_or_else(|error| panic!("not JSON ({error}): {text}"))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn models_lists_every_model_with_owner_and_context_length() {
    let mut config = fast_config();
    config.models = vec!["alpha".into(), "beta".into()];
    config.max_model_len = 4_096;
    let running = start(config).await;
    let body = reqwest::get(format!("{}/v1/models", origin(&running)))
        .await
        .expect("answered")
        .json_value()
        .await;
    assert_eq!(body["object"], "list");
    let ids: Vec<&str> = body["data"]
        .as_array()
        .expect("data")
        .iter()
        .map(|m| m["id"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(ids, vec!["alpha", "beta"]);
    for model in body["data"].as_array().expect("data") {
        assert_eq!(model["owned_by"], "strobe-sim");
        assert_eq!(model["max_model_len"], 4_096);
        assert_eq!(model["object"], "model");
    }
    running.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shared_prefixes_hit_the_cache_and_unique_prompts_miss() {
    let running = start(fast_config()).await;
    let client = reqwest::Client::new();
    let prefix = shared_prefix(1_000); // 3,000 chars shared
    let mut cached = Vec::new();
    for index in 0..3 {
        let prompt = strobe_prompt(1, index, 2, 6_000, &prefix);
        let observed = post_stream(
            &client,
            &origin(&running),
            chat_body("strobe-sim-1", &prompt, 32, true, None),
            &[],
            IDLE,
        )
        .await;
        let usage = observed.usage.expect("usage");
        cached.push(
            usage["prompt_tokens_details"]["cached_tokens"]
                .as_u64()
                .expect("cached tokens"),
        );
    }
    // The shared prefix is "\n" + 3,000 chars: 11 full 256-byte blocks = 2,816 bytes.
    let expected_hit = (2_816f64 / 3.15).floor() as u64;
    assert_eq!(cached, vec![0, expected_hit, expected_hit]);

    for index in 0..2 {
        let prompt = strobe_prompt(1, index + 10, 2, 6_000, "");
        let observed = post_stream(
            &client,
            &origin(&running),
            chat_body("strobe-sim-1", &prompt, 32, true, None),
            &[],
            IDLE,
        )
        .await;
        assert_eq!(
            observed.usage.expect("usage")["prompt_tokens_details"]["cached_tokens"],
            0,
            "unique prompts miss"
        );
    }
    // The same prompt again hits in all its full blocks.
    let prompt = strobe_prompt(1, 10, 2, 6_000, "");
    let observed = post_stream(
        &client,
        &origin(&running),
        chat_body("strobe-sim-1", &prompt, 32, true, None),
        &[],
        IDLE,
    )
    .await;
    let repeat_hit = observed.usage.expect("usage")["prompt_tokens_details"]["cached_tokens"]
        .as_u64()
        .expect("n");
    assert_eq!(
        repeat_hit,
        ((6_000 / 256 * 256) as f64 / 3.15).floor() as u64
    );
    running.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cors_lets_a_cross_origin_isolated_page_send_json_with_a_key() {
    let mut config = fast_config();
    config.api_key = Some("secret".into());
    let running = start(config).await;
    let client = reqwest::Client::new();
    let page = "http://127.0.0.1:8080";
    let preflight = client
        .request(
            reqwest::Method::OPTIONS,
            format!("{}/v1/chat/completions", origin(&running)),
        )
        .header("origin", page)
        .header("access-control-request-method", "POST")
        .header(
            "access-control-request-headers",
            "authorization, content-type",
        )
        .send()
        .await
        .expect("preflight answered");
    assert_eq!(preflight.status(), 204, "preflight needs no API key");
    let header = |name: &str| {
        preflight
            .headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_ascii_lowercase()
    };
    assert_eq!(header("access-control-allow-origin"), page);
    assert!(header("access-control-allow-methods").contains("post"));
    assert!(header("access-control-allow-headers").contains("authorization"));
    assert!(header("access-control-allow-headers").contains("content-type"));

    let prompt = strobe_prompt(1, 0, 2, 500, "");
    let observed = post_stream(
        &client,
        &origin(&running),
        chat_body("strobe-sim-1", &prompt, 32, true, None),
        &[("origin", page), ("authorization", "Bearer secret")],
        IDLE,
    )
    .await;
    assert_eq!(observed.status, 200);
    let header = |name: &str| {
        observed
            .headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_string()
    };
    assert_eq!(header("access-control-allow-origin"), page);
    assert_eq!(header("timing-allow-origin"), "*");
    assert_eq!(header("cross-origin-resource-policy"), "cross-origin");
    assert!(header("access-control-expose-headers").contains("x-sim-request-id"));
    running.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_api_key_is_required_when_configured() {
    let mut config = fast_config();
    config.api_key = Some("secret".into());
    let running = start(config).await;
    let client = reqwest::Client::new();
    let body = chat_body("strobe-sim-1", "hello", 8, true, None);
    for auth in [None, Some("Bearer wrong")] {
        let mut request = client
            .post(format!("{}/v1/chat/completions", origin(&running)))
            .body(body.clone());
        if let Some(value) = auth {
            request = request.header("authorization", value);
        }
        let response = request.send().await.expect("answered");
        assert_eq!(response.status(), 401);
        assert!(
            response
                .headers()
                .contains_key("access-control-allow-origin"),
            "errors are readable cross-origin"
        );
        let error = response.json_value().await;
        assert_eq!(error["error"]["code"], "invalid_api_key");
        assert!(error["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("Authorization: Bearer")));
    }
    let models = client
        .get(format!("{}/v1/models", origin(&running)))
        .send()
        .await
        .expect("answered");
    assert_eq!(models.status(), 401);
    let allowed = client
        .get(format!("{}/v1/models", origin(&running)))
        .bearer_auth("secret")
        .send()
        .await
        .expect("answered");
    assert_eq!(allowed.status(), 200);
    let health = client
        .get(format!("{}/health", origin(&running)))
        .send()
        .await
        .expect("answered");
    assert_eq!(health.status(), 200, "health needs no key");
    running.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn errors_come_in_the_openai_shape() {
    let mut config = fast_config();
    config.max_model_len = 1_000;
    let running = start(config).await;
    let client = reqwest::Client::new();
    let url = format!("{}/v1/chat/completions", origin(&running));
    let cases: Vec<(String, u16, &str)> = vec![
        (
            "{not json".into(),
            400,
            "not a valid chat completion request",
        ),
        (r#"{"messages": []}"#.into(), 400, "at least one message"),
        (
            chat_body("nope", "hi", 8, true, None),
            404,
            "does not exist",
        ),
        (
            chat_body("sim-fault-bogus", "hi", 8, true, None),
            400,
            "unknown fault `bogus`",
        ),
        (
            chat_body("strobe-sim-1", "hi", 0, true, None),
            400,
            "at least 1",
        ),
        (
            chat_body("strobe-sim-1", &"x".repeat(3_150), 10, true, None),
            400,
            "maximum context length is 1000",
        ),
    ];
    for (body, status, needle) in cases {
        let response = client
            .post(&url)
            .body(body.clone())
            .send()
            .await
            .expect("answered");
        assert_eq!(response.status().as_u16(), status, "{body}");
        let error = response.json_value().await;
        let message = error["error"]["message"].as_str().unwrap_or_default();
        assert!(
            message.contains(needle),
            "{message:?} should contain {needle:?}"
        );
        assert!(
            error["error"].get("type").is_some()
                && error["error"].get("param").is_some()
                && error["error"].get("code").is_some()
        );
    }
    let unknown = client
        .get(format!("{}/v2/nothing", origin(&running)))
        .send()
        .await
        .expect("answered");
    assert_eq!(unknown.status(), 404);
    let wrong_method = client.get(&url).send().await.expect("answered");
    assert_eq!(wrong_method.status(), 405);
    running.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_model_obeys_the_canary_and_word_contracts() {
    let running = start(fast_config()).await;
    let client = reqwest::Client::new();
    for (index, words) in [(0usize, 32u32), (1, 1), (2, 0)] {
        let prompt = strobe_prompt(1717, index, words, 4_000, "");
        let observed = post_stream(
            &client,
            &origin(&running),
            chat_body("strobe-sim-1", &prompt, 256, true, Some(false)),
            &[],
            IDLE,
        )
        .await;
        let expected_marker = marker(1717, index);
        assert!(
            observed.content.starts_with(&format!("{expected_marker} ")),
            "{:?}",
            observed.content
        );
        assert_eq!(observed.reasoning_chunks, 0, "thinking disabled");
        let body = &observed.content[expected_marker.len() + 1..];
        if words > 0 {
            assert_eq!(body, vec!["code"; words as usize].join(" "));
        } else {
            // A summary in filler words: no marker, no code words, a natural stop.
            assert!(!body.contains("ANVIL_REQ") && !body.is_empty());
            assert_eq!(observed.finish_reasons, vec!["stop".to_string()]);
        }
    }
    // The negative-seed marker from ARTIFACT.md §1.2.
    let prompt = strobe_prompt(-5, 0, 2, 1_000, "");
    let observed = post_stream(
        &client,
        &origin(&running),
        chat_body("strobe-sim-1", &prompt, 64, true, None),
        &[],
        IDLE,
    )
    .await;
    assert_eq!(observed.content, "ANVIL_REQ_-5_00000 code code");
    running.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn filler_answers_stop_at_max_tokens_or_naturally_and_repeat_under_a_seed() {
    let mut config = fast_config();
    config.answer_words = 20;
    let running = start(config).await;
    let client = reqwest::Client::new();
    let short = post_stream(
        &client,
        &origin(&running),
        chat_body("strobe-sim-1", "Tell me a story.", 7, true, Some(true)),
        &[],
        IDLE,
    )
    .await;
    assert_eq!(short.finish_reasons, vec!["length".to_string()]);
    assert_eq!(short.reasoning_chunks + short.content_chunks, 7);
    assert_eq!(short.usage.as_ref().expect("usage")["completion_tokens"], 7);

    let long = post_stream(
        &client,
        &origin(&running),
        chat_body("strobe-sim-1", "Tell me a story.", 1_000, true, Some(false)),
        &[],
        IDLE,
    )
    .await;
    assert_eq!(long.finish_reasons, vec!["stop".to_string()]);
    assert!(
        (15..=25).contains(&long.content_chunks),
        "{} words",
        long.content_chunks
    );
    let again = post_stream(
        &client,
        &origin(&running),
        chat_body("strobe-sim-1", "Tell me a story.", 1_000, true, Some(false)),
        &[],
        IDLE,
    )
    .await;
    assert_eq!(
        again.content, long.content,
        "same seed and request, same answer"
    );
    running.shutdown().await;

    let mut reseeded = fast_config();
    reseeded.answer_words = 20;
    reseeded.seed = 99;
    let running = start(reseeded).await;
    let other = post_stream(
        &client,
        &origin(&running),
        chat_body("strobe-sim-1", "Tell me a story.", 1_000, true, Some(false)),
        &[],
        IDLE,
    )
    .await;
    assert_ne!(other.content, long.content, "another seed, another answer");
    running.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn several_ports_serve_one_simulator() {
    let mut config = fast_config();
    config.ports = vec![0, 0, 0];
    let running = start(config).await;
    assert_eq!(running.addrs.len(), 3);
    let client = reqwest::Client::new();
    let mut ids = Vec::new();
    for addr in &running.addrs {
        let observed = post_stream(
            &client,
            &format!("http://{addr}"),
            chat_body("strobe-sim-1", "hi", 4, true, None),
            &[],
            IDLE,
        )
        .await;
        assert_eq!(observed.status, 200);
        ids.push(observed.request_id);
    }
    for (id, addr) in ids.iter().zip(&running.addrs) {
        let record = wait_for_record(&running, id).await;
        assert_eq!(record.port, addr.port());
    }
    let mut unique = ids.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), 3, "one id sequence across listeners");
    running.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn raw_http_clients_get_chunked_streams_and_may_send_chunked_bodies() {
    let running = start(fast_config()).await;
    let body = chat_body("strobe-sim-1", "hello", 5, true, Some(false));
    // A chunked request body sent after waiting for 100 Continue, as curl does for big bodies.
    let (first, rest) = body.split_at(10);
    let request = format!(
        "POST /v1/chat/completions HTTP/1.1\r\nHost: sim\r\nTransfer-Encoding: chunked\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n{:x}\r\n{first}\r\n{:x}\r\n{rest}\r\n0\r\n\r\n",
        first.len(),
        rest.len()
    );
    let (raw, error) = raw_exchange(running.addrs[0], request.as_bytes(), IDLE).await;
    assert_eq!(error, None);
    let text = String::from_utf8_lossy(&raw);
    assert!(
        text.starts_with("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\n"),
        "{text}"
    );
    let (head, chunks, complete) = dechunk(&raw[25..]);
    assert!(head.contains("transfer-encoding: chunked"));
    assert!(complete, "the body ends with the last chunk");
    // One event per chunk: role, 5 content, finish, usage, [DONE].
    assert_eq!(chunks.len(), 9);
    assert!(chunks
        .iter()
        .all(|chunk| chunk.starts_with(b"data: ") && chunk.ends_with(b"\n\n")));
    assert_eq!(
        chunks.last().map(Vec::as_slice),
        Some(&b"data: [DONE]\n\n"[..])
    );
    running.shutdown().await;
}
