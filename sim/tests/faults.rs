//! Every fault, requested by model id or header, checked from the client's side (reqwest or raw
//! bytes) and against the truth log.

mod common;

use std::time::{Duration, Instant};

use common::*;
use strobe_sim::{Fault, Outcome};

const IDLE: Duration = Duration::from_secs(5);

/// A canary prompt asking for `words` code words.
fn prompt(index: usize, words: u32) -> String {
    strobe_prompt(42, index, words, 2_000, "")
}

async fn stream_with_fault(running: &strobe_sim::Running, fault: &str, words: u32) -> Observed {
    let client = reqwest::Client::new();
    let model = format!("sim-fault-{fault}");
    post_stream(
        &client,
        &origin(running),
        chat_body(&model, &prompt(0, words), 64, true, None),
        &[],
        IDLE,
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_500_and_429_answer_with_openai_error_bodies() {
    let running = start(fast_config()).await;
    let client = reqwest::Client::new();
    for (fault, status, code) in [
        ("http-500", 500, "sim_fault_http_500"),
        ("http-429", 429, "rate_limit_exceeded"),
    ] {
        // Once by model id, once by header on the ordinary model.
        for (model, header) in [
            (format!("sim-fault-{fault}"), None),
            ("strobe-sim-1".to_string(), Some(fault)),
        ] {
            let mut request = client
                .post(format!("{}/v1/chat/completions", origin(&running)))
                .body(chat_body(&model, "hi", 8, true, None));
            if let Some(name) = header {
                request = request.header("x-sim-fault", name);
            }
            let response = request.send().await.expect("answered");
            assert_eq!(response.status().as_u16(), status);
            if status == 429 {
                assert_eq!(response.headers()["retry-after"], "1");
            }
            let id = response.headers()["x-sim-request-id"]
                .to_str()
                .expect("ascii")
                .to_string();
            let body: serde_json::Value =
                serde_json::from_str(&response.text().await.expect("body")).expect("JSON");
            assert_eq!(body["error"]["code"], code);
            let record = wait_for_record(&running, &id).await;
            assert_eq!((record.status, record.outcome), (status, Outcome::Rejected));
            assert!(record.faults.contains(Fault::parse(fault).expect("known")));
        }
    }
    running.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reset_cuts_the_connection_with_an_rst_mid_stream() {
    let running = start(fast_config()).await;
    let observed = stream_with_fault(&running, "reset", 8).await;
    assert!(
        observed.body_error.is_some(),
        "the body ends in an error, not a clean end"
    );
    assert!(!observed.done && observed.finish_reasons.is_empty());
    // Half the content (marker + 8 words = 9 tokens, rounded up to 5) arrived first.
    assert_eq!(observed.content_chunks, 5);
    let record = wait_for_record(&running, &observed.request_id).await;
    assert_eq!(record.outcome, Outcome::Reset);
    assert_eq!(record.content, observed.content);

    // On the raw socket the end is a reset, not an orderly close.
    let (_, error) = raw_exchange(
        running.addrs[0],
        &raw_post(
            &chat_body("sim-fault-reset", &prompt(1, 8), 64, true, None),
            "",
        ),
        IDLE,
    )
    .await;
    assert_eq!(error, Some(std::io::ErrorKind::ConnectionReset));
    running.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_json_adds_one_unparsable_event_and_loses_no_content() {
    let running = start(fast_config()).await;
    let observed = stream_with_fault(&running, "malformed-json", 3).await;
    assert_eq!(observed.unparsable, 1);
    assert_eq!(observed.content, "ANVIL_REQ_42_00000 code code code");
    assert!(observed.done);
    let record = wait_for_record(&running, &observed.request_id).await;
    assert_eq!(record.malformed_events, 1);
    running.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_usage_and_no_done_leave_out_what_they_say() {
    let running = start(fast_config()).await;
    let without_usage = stream_with_fault(&running, "no-usage", 2).await;
    assert!(without_usage.usage.is_none() && without_usage.done);
    let record = wait_for_record(&running, &without_usage.request_id).await;
    assert_eq!(record.usage, None);

    let without_done = stream_with_fault(&running, "no-done", 2).await;
    assert!(!without_done.done && without_done.usage.is_some());
    assert_eq!(
        without_done.finish_reasons,
        vec!["stop".to_string()],
        "the finish chunk still ends it"
    );
    assert!(
        without_done.body_error.is_none(),
        "the HTTP body still ends cleanly"
    );
    let record = wait_for_record(&running, &without_done.request_id).await;
    assert!(!record.done_sent);
    running.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn crlf_ends_every_line_with_cr_lf() {
    let running = start(fast_config()).await;
    let (raw, _) = raw_exchange(
        running.addrs[0],
        &raw_post(
            &chat_body("sim-fault-crlf", &prompt(0, 2), 64, true, None),
            "",
        ),
        IDLE,
    )
    .await;
    let (_, chunks, complete) = dechunk(&raw);
    assert!(complete);
    for chunk in &chunks {
        assert!(
            chunk.ends_with(b"\r\n\r\n"),
            "{:?}",
            String::from_utf8_lossy(chunk)
        );
        let lone_lf = chunk
            .windows(2)
            .filter(|w| w[1] == b'\n' && w[0] != b'\r')
            .count();
        assert_eq!(lone_lf, 0);
    }
    // A client that strips whitespace per line (ARTIFACT.md §4.2) still reads it all.
    let observed = stream_with_fault(&running, "crlf", 2).await;
    assert_eq!(observed.content, "ANVIL_REQ_42_00000 code code");
    assert!(observed.done && observed.usage.is_some());
    running.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn split_writes_send_events_three_bytes_at_a_time() {
    let running = start(fast_config()).await;
    let (raw, _) = raw_exchange(
        running.addrs[0],
        &raw_post(
            &chat_body("sim-fault-split-writes", &prompt(0, 2), 64, true, None),
            "",
        ),
        IDLE,
    )
    .await;
    let (_, chunks, complete) = dechunk(&raw);
    assert!(complete);
    assert!(chunks.len() > 100);
    assert!(chunks.iter().all(|chunk| (1..=3).contains(&chunk.len())));
    let observed = stream_with_fault(&running, "split-writes", 2).await;
    assert_eq!(observed.content, "ANVIL_REQ_42_00000 code code");
    let record = wait_for_record(&running, &observed.request_id).await;
    assert!(record.writes as usize > 100);
    running.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keep_alive_comments_come_before_the_first_token_and_between_events() {
    let running = start(fast_config()).await;
    let observed = stream_with_fault(&running, "keep-alive", 2).await;
    // One before the first token, one after each of 2 reasoning and 3 content events.
    assert_eq!(observed.comments, 6);
    assert_eq!(observed.content, "ANVIL_REQ_42_00000 code code");
    let record = wait_for_record(&running, &observed.request_id).await;
    assert_eq!(record.keep_alive_comments, 6);
    running.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reasoning_field_moves_reasoning_to_reasoning() {
    let running = start(fast_config()).await;
    let observed = stream_with_fault(&running, "reasoning-field", 2).await;
    assert_eq!(observed.reasoning, "let me");
    let in_reasoning = observed
        .chunks
        .iter()
        .filter(|c| c["choices"][0]["delta"].get("reasoning").is_some())
        .count();
    let in_reasoning_content = observed
        .chunks
        .iter()
        .filter(|c| c["choices"][0]["delta"].get("reasoning_content").is_some())
        .count();
    assert_eq!((in_reasoning, in_reasoning_content), (2, 0));
    running.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wrong_and_foreign_markers_break_the_canary() {
    let running = start(fast_config()).await;
    let wrong = stream_with_fault(&running, "wrong-marker", 2).await;
    assert_eq!(wrong.content, "ANVIL_REQ_42_00001 code code");
    let record = wait_for_record(&running, &wrong.request_id).await;
    assert_eq!(record.marker.as_deref(), Some("ANVIL_REQ_42_00000"));
    assert_eq!(record.emitted_marker.as_deref(), Some("ANVIL_REQ_42_00001"));

    let foreign = stream_with_fault(&running, "foreign-marker", 2).await;
    assert_eq!(
        foreign.content,
        "ANVIL_REQ_42_00000 ANVIL_REQ_42_00001 code code"
    );
    running.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_headers_hold_the_response_head_back() {
    let running = start(fast_config()).await;
    let client = reqwest::Client::new();
    let sent = Instant::now();
    let response = client
        .post(format!("{}/v1/chat/completions", origin(&running)))
        .header("x-sim-fault", "slow-headers")
        .body(chat_body("strobe-sim-1", "hi", 4, true, None))
        .send()
        .await
        .expect("answered");
    let waited = sent.elapsed();
    assert!(
        waited >= Duration::from_millis(300),
        "headers after {waited:?}"
    );
    let id = response.headers()["x-sim-request-id"]
        .to_str()
        .expect("ascii")
        .to_string();
    assert!(response.text().await.expect("body").contains("[DONE]"));
    let record = wait_for_record(&running, &id).await;
    let times = &record.times;
    let held = times.headers_sent.expect("sent").monotonic_ms
        - times.received.expect("received").monotonic_ms;
    assert!(held >= 300.0, "held {held} ms");
    running.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hang_stops_mid_stream_until_the_client_gives_up() {
    let running = start(fast_config()).await;
    let client = reqwest::Client::new();
    let observed = post_stream(
        &client,
        &origin(&running),
        chat_body("sim-fault-hang", &prompt(0, 4), 64, true, None),
        &[],
        Duration::from_millis(400),
    )
    .await;
    assert_eq!(observed.body_error.as_deref(), Some("idle timeout"));
    assert_eq!(
        observed.content, "ANVIL_REQ_42_00000 code code",
        "half of 5 tokens, rounded up"
    );
    drop(observed);
    drop(client); // closes the pooled connection, which ends the hang on the server
    let record = wait_for_truth(&running, Duration::from_secs(4), "the hang's end", |r| {
        r.outcome == Outcome::Hung
    })
    .await;
    assert!(record
        .error
        .as_deref()
        .is_some_and(|e| e.contains("the client closed")));
    assert_eq!(record.content_tokens_sent, 3);
    running.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hold_after_done_sends_everything_then_keeps_the_body_open() {
    let running = start(fast_config()).await;
    let client = reqwest::Client::new();
    let observed = post_stream(
        &client,
        &origin(&running),
        chat_body("sim-fault-hold-after-done", &prompt(0, 4), 64, true, None),
        &[],
        Duration::from_millis(400),
    )
    .await;
    assert!(observed.done, "[DONE] went out");
    assert!(observed.usage.is_some(), "so did the usage chunk");
    assert_eq!(observed.content, "ANVIL_REQ_42_00000 code code code code");
    assert_eq!(
        observed.body_error.as_deref(),
        Some("idle timeout"),
        "the body never ended"
    );
    drop(observed);
    drop(client); // closes the pooled connection, which ends the hold on the server
    let record = wait_for_truth(&running, Duration::from_secs(4), "the hold's end", |r| {
        r.error
            .as_deref()
            .is_some_and(|e| e.contains("hold-after-done"))
    })
    .await;
    assert_eq!(record.outcome, Outcome::Completed);
    assert!(record.done_sent);
    assert!(record
        .error
        .as_deref()
        .is_some_and(|e| e.contains("the client closed")));
    let times = &record.times;
    let done_to_close = times
        .last_byte_sent
        .expect("stamped at [DONE]")
        .monotonic_ms
        - times.headers_sent.expect("sent").monotonic_ms;
    assert!(
        done_to_close < 400.0,
        "last_byte_sent is the [DONE] write, not the close ({done_to_close} ms after the headers)"
    );
    running.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn utf8_split_cuts_writes_inside_multibyte_characters() {
    let running = start(fast_config()).await;
    // Filler answers carry the multibyte words.
    let body = chat_body(
        "sim-fault-utf8-split",
        "Say something.",
        12,
        true,
        Some(false),
    );
    let (raw, _) = raw_exchange(running.addrs[0], &raw_post(&body, ""), IDLE).await;
    let (_, chunks, complete) = dechunk(&raw);
    assert!(complete);
    let cut_inside = chunks
        .iter()
        .filter(|chunk| std::str::from_utf8(chunk).is_err())
        .count();
    assert!(
        cut_inside >= 6,
        "{cut_inside} writes end inside a character"
    );

    let client = reqwest::Client::new();
    let observed = post_stream(&client, &origin(&running), body, &[], IDLE).await;
    assert!(
        !observed.content.contains('\u{FFFD}'),
        "a correct client reassembles every character"
    );
    assert!(observed.content.chars().any(|c| c.len_utf8() > 1));
    let record = wait_for_record(&running, &observed.request_id).await;
    assert_eq!(record.content, observed.content);
    // Each content event holds a multibyte word and is cut once; every other event is ASCII.
    assert_eq!(record.utf8_split_writes, record.content_tokens_sent);
    running.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fault_rate_draws_faults_deterministically() {
    let mut config = fast_config();
    config.fault_rate = 0.5;
    config.fault_kinds = vec![Fault::NoDone];
    let running = start(config.clone()).await;
    let client = reqwest::Client::new();
    let mut first_run = Vec::new();
    for index in 0..20 {
        let observed = post_stream(
            &client,
            &origin(&running),
            chat_body("strobe-sim-1", &prompt(index, 1), 16, true, None),
            &[],
            IDLE,
        )
        .await;
        first_run.push(observed.done);
    }
    running.shutdown().await;
    let faulted = first_run.iter().filter(|done| !**done).count();
    assert!(
        (3..=17).contains(&faulted),
        "{faulted} of 20 faulted at rate 0.5"
    );

    let running = start(config).await;
    for (index, done) in first_run.iter().enumerate() {
        let observed = post_stream(
            &client,
            &origin(&running),
            chat_body("strobe-sim-1", &prompt(index, 1), 16, true, None),
            &[],
            IDLE,
        )
        .await;
        assert_eq!(
            observed.done, *done,
            "request {index} draws the same under the same seed"
        );
    }
    running.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn faults_combine_from_model_id_and_header() {
    let running = start(fast_config()).await;
    let client = reqwest::Client::new();
    let observed = post_stream(
        &client,
        &origin(&running),
        chat_body("sim-fault-crlf+no-usage", &prompt(0, 2), 64, true, None),
        &[("x-sim-fault", "keep-alive, no-done")],
        IDLE,
    )
    .await;
    assert_eq!(
        observed.headers["x-sim-fault"],
        "no-usage,no-done,crlf,keep-alive"
    );
    assert!(observed.usage.is_none() && !observed.done && observed.comments > 0);
    assert_eq!(observed.content, "ANVIL_REQ_42_00000 code code");
    running.shutdown().await;
}
