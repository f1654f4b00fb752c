//! The truth log against what a real client received: joined by canary marker and request id,
//! token counts, content and times must agree; `since`, reset and the JSON-lines file work; the
//! admission queue and the latency model show up in the recorded times.

mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use common::*;
use strobe_sim::{Outcome, TruthRecord};

const IDLE: Duration = Duration::from_secs(10);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_truth_log_agrees_with_what_the_client_received() {
    let mut config = fast_config();
    config.latency.decode_interval_ms = 4.0;
    config.latency.prefill_tok_s = 200_000.0;
    let running = Arc::new(start(config).await);
    let client = reqwest::Client::new();
    let gate = Arc::new(tokio::sync::Semaphore::new(4));
    let prefix = shared_prefix(2_000);
    let mut tasks = Vec::new();
    for index in 0..8 {
        let (running, client, gate, prefix) = (
            Arc::clone(&running),
            client.clone(),
            Arc::clone(&gate),
            prefix.clone(),
        );
        tasks.push(tokio::spawn(async move {
            let _permit = gate.acquire().await.expect("open semaphore");
            let prompt = strobe_prompt(1717, index, 12, 12_000, &prefix);
            let started = Instant::now();
            let observed = post_stream(
                &client,
                &origin(&running),
                chat_body("strobe-sim-1", &prompt, 64, true, None),
                &[],
                IDLE,
            )
            .await;
            (index, started, observed)
        }));
    }
    let mut rows = Vec::new();
    for task in tasks {
        rows.push(task.await.expect("client task"));
    }
    let mut gaps_ms = Vec::new();
    for (index, started, observed) in &rows {
        let expected_marker = marker(1717, *index);
        let record = wait_for_record(&running, &observed.request_id).await;
        // Join by marker as well as by id: both name the same request.
        let by_marker: Vec<TruthRecord> = running
            .truth
            .since(0)
            .into_iter()
            .filter(|r| r.marker.as_deref() == Some(expected_marker.as_str()))
            .collect();
        assert_eq!(by_marker.len(), 1);
        assert_eq!(by_marker[0].request_id, observed.request_id);

        assert_eq!(record.outcome, Outcome::Completed);
        assert_eq!(record.content, observed.content);
        assert_eq!(record.content_tokens_sent as usize, observed.content_chunks);
        assert_eq!(
            record.reasoning_tokens_sent as usize,
            observed.reasoning_chunks
        );
        let usage = observed.usage.as_ref().expect("usage");
        let recorded = record.usage.expect("usage recorded");
        assert_eq!(usage["prompt_tokens"], recorded.prompt_tokens);
        assert_eq!(usage["completion_tokens"], recorded.completion_tokens);
        assert_eq!(
            usage["prompt_tokens_details"]["cached_tokens"],
            record.cached_tokens
        );
        assert_eq!(record.requested_words, Some(12));

        // Times: the server stamps after each write returns, so the client sees the event at
        // about that moment; on loopback the gap is normally well under a millisecond.
        let times = &record.times;
        let received = times.received.expect("received").monotonic_ms;
        assert!(received >= server_ms(&running, *started));
        let server_first_content = times
            .first_content_byte_sent
            .expect("content sent")
            .monotonic_ms;
        let client_first_content =
            server_ms(&running, observed.first_content_at.expect("content seen"));
        let server_first_reasoning = times
            .first_reasoning_byte_sent
            .expect("reasoning sent")
            .monotonic_ms;
        let client_first_reasoning = server_ms(
            &running,
            observed.first_reasoning_at.expect("reasoning seen"),
        );
        let server_last = times.last_byte_sent.expect("ended").monotonic_ms;
        let client_end = server_ms(&running, observed.ended_at.expect("ended"));
        for (server, client, what) in [
            (server_first_content, client_first_content, "first content"),
            (
                server_first_reasoning,
                client_first_reasoning,
                "first reasoning",
            ),
            (server_last, client_end, "last byte"),
        ] {
            let gap = client - server;
            // The client may parse the event a hair before the server reads its clock.
            assert!(
                gap > -2.0 && gap < 50.0,
                "{what}: client {client:.3} ms vs server {server:.3} ms"
            );
            gaps_ms.push(gap);
        }
        assert!(received <= times.admitted.expect("admitted").monotonic_ms);
        assert!(
            times.prefill_finished.expect("prefill").monotonic_ms <= server_first_reasoning + 0.001
        );
        assert!(
            server_first_reasoning < server_first_content && server_first_content <= server_last
        );
        // The last write began after the first content went out and before the last write
        // returned; the client cannot have read the end before it began.
        let last_write_started = times
            .last_write_started
            .expect("a stream's last write")
            .monotonic_ms;
        assert!(server_first_content <= last_write_started && last_write_started <= server_last);
        assert!(client_end >= last_write_started);
        // Both clocks tell the same story.
        let unix_span = times.last_byte_sent.expect("ended").unix_ns
            - times.received.expect("received").unix_ns;
        assert!(((unix_span as f64 / 1e6) - (server_last - received)).abs() < 0.01);
    }
    gaps_ms.sort_by(f64::total_cmp);
    let median = gaps_ms[gaps_ms.len() / 2];
    println!(
        "client-minus-server gaps over {} events: median {median:.3} ms, max {:.3} ms",
        gaps_ms.len(),
        gaps_ms[gaps_ms.len() - 1]
    );
    assert!(
        median.abs() < 5.0,
        "median client/server gap {median:.3} ms"
    );
    // Later requests share the 6,000-char prefix with earlier ones.
    let hits = rows
        .iter()
        .filter(|(_, _, observed)| {
            observed
                .usage
                .as_ref()
                .is_some_and(|u| u["prompt_tokens_details"]["cached_tokens"].as_u64() > Some(0))
        })
        .count();
    assert!(hits >= 4, "{hits} of 8 requests hit the prefix cache");
    match Arc::try_unwrap(running) {
        Ok(running) => running.shutdown().await,
        Err(_) => panic!("client tasks still hold the server"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn since_and_reset_page_through_the_log_over_http() {
    let running = start(fast_config()).await;
    let client = reqwest::Client::new();
    let mut ids = Vec::new();
    for index in 0..3 {
        let observed = post_stream(
            &client,
            &origin(&running),
            chat_body(
                "strobe-sim-1",
                &strobe_prompt(5, index, 1, 500, ""),
                16,
                true,
                None,
            ),
            &[],
            IDLE,
        )
        .await;
        ids.push(observed.request_id);
    }
    for id in &ids {
        wait_for_record(&running, id).await;
    }
    let all = truth_over_http(&client, &origin(&running), 0).await;
    assert_eq!(
        all.iter().map(|r| r.request_id.clone()).collect::<Vec<_>>(),
        ids
    );
    let after_first = truth_over_http(&client, &origin(&running), all[0].seq).await;
    assert_eq!(after_first.len(), 2);
    assert_eq!(after_first[0].seq, all[1].seq);

    let reset = client
        .post(format!("{}/sim/truth/reset", origin(&running)))
        .send()
        .await
        .expect("reset answered");
    assert_eq!(reset.status(), 200);
    assert!(truth_over_http(&client, &origin(&running), 0)
        .await
        .is_empty());
    let observed = post_stream(
        &client,
        &origin(&running),
        chat_body("strobe-sim-1", "again", 4, true, None),
        &[],
        IDLE,
    )
    .await;
    let record = wait_for_record(&running, &observed.request_id).await;
    assert!(record.seq > all[2].seq, "seqs keep growing across a reset");
    let deleted = client
        .delete(format!("{}/sim/truth", origin(&running)))
        .send()
        .await
        .expect("delete answered");
    assert_eq!(deleted.status(), 200);
    assert!(running.truth.since(0).is_empty());
    let bad = client
        .get(format!("{}/sim/truth?since=minus", origin(&running)))
        .send()
        .await
        .expect("answered");
    assert_eq!(bad.status(), 400);
    running.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_jsonl_file_holds_the_same_records() {
    let path = std::env::temp_dir().join(format!(
        "strobe-sim-truth-test-{}.jsonl",
        std::process::id()
    ));
    let _ = std::fs::remove_file(&path);
    let mut config = fast_config();
    config.truth_jsonl = Some(path.clone());
    let running = start(config).await;
    let client = reqwest::Client::new();
    for index in 0..3 {
        let observed = post_stream(
            &client,
            &origin(&running),
            chat_body(
                "strobe-sim-1",
                &strobe_prompt(6, index, 2, 500, ""),
                16,
                true,
                None,
            ),
            &[],
            IDLE,
        )
        .await;
        wait_for_record(&running, &observed.request_id).await;
    }
    let in_memory = running.truth.since(0);
    running.shutdown().await;
    let text = std::fs::read_to_string(&path).expect("the truth file exists");
    let from_file: Vec<TruthRecord> = text
        .lines()
        .map(|line| serde_json::from_str(line).expect("a record per line"))
        .collect();
    assert_eq!(from_file, in_memory);
    let _ = std::fs::remove_file(&path);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_beyond_max_num_seqs_wait_in_a_fifo_queue() {
    let mut config = fast_config();
    config.latency.max_num_seqs = 1;
    // 9 tokens each: about 80 ms per request, so arrivals 20 ms apart must queue.
    config.latency.decode_interval_ms = 10.0;
    let running = Arc::new(start(config).await);
    let client = reqwest::Client::new();
    let mut tasks = Vec::new();
    for index in 0..3 {
        let (running, client) = (Arc::clone(&running), client.clone());
        tasks.push(tokio::spawn(async move {
            // Stagger the arrivals so the queue order is known.
            tokio::time::sleep(Duration::from_millis(20 * index as u64)).await;
            post_stream(
                &client,
                &origin(&running),
                chat_body(
                    "strobe-sim-1",
                    &strobe_prompt(8, index, 6, 500, ""),
                    32,
                    true,
                    None,
                ),
                &[],
                IDLE,
            )
            .await
        }));
    }
    let mut records = Vec::new();
    for task in tasks {
        let observed = task.await.expect("client task");
        records.push(wait_for_record(&running, &observed.request_id).await);
    }
    assert_eq!(
        records.iter().map(|r| r.queued_behind).collect::<Vec<_>>(),
        vec![0, 0, 1]
    );
    for pair in records.windows(2) {
        let previous_end = pair[0].times.last_byte_sent.expect("ended").monotonic_ms;
        let next_admitted = pair[1].times.admitted.expect("admitted").monotonic_ms;
        assert!(
            next_admitted >= previous_end - 0.5,
            "admitted at {next_admitted} before the slot freed at {previous_end}"
        );
        assert!(
            pair[1].times.headers_sent.expect("headers").monotonic_ms < previous_end,
            "stream headers go out while queued"
        );
    }
    assert_eq!(running.peak_active_sequences(), 1);
    match Arc::try_unwrap(running) {
        Ok(running) => running.shutdown().await,
        Err(_) => panic!("client tasks still hold the server"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn recorded_times_follow_the_latency_model() {
    let mut config = fast_config();
    config.latency.prefill_tok_s = 20_000.0;
    config.latency.decode_interval_ms = 10.0;
    config.reasoning_tokens = 0;
    let running = start(config).await;
    let client = reqwest::Client::new();
    // 3,150 chars = 1,000 prompt tokens = 50 ms of prefill at 20,000 tok/s.
    let prompt = strobe_prompt(9, 0, 9, 3_150, "");
    let observed = post_stream(
        &client,
        &origin(&running),
        chat_body("strobe-sim-1", &prompt, 64, true, None),
        &[],
        IDLE,
    )
    .await;
    let record = wait_for_record(&running, &observed.request_id).await;
    let times = &record.times;
    let admitted = times.admitted.expect("admitted").monotonic_ms;
    let prefill_end = times.prefill_finished.expect("prefill").monotonic_ms;
    assert!(
        (prefill_end - admitted - 50.0).abs() < 0.01,
        "prefill {} ms",
        prefill_end - admitted
    );
    let first = times.first_content_byte_sent.expect("content").monotonic_ms;
    let last = times.last_byte_sent.expect("end").monotonic_ms;
    // Tokio's timer has 1 ms granularity, so each deadline may be met up to ~1 ms late (plus
    // scheduling noise on a shared machine); intervals are scheduled from the previous deadline,
    // so lateness does not accumulate.
    assert!(
        first >= prefill_end && first - prefill_end < 15.0,
        "first token {} ms after prefill",
        first - prefill_end
    );
    // The last of 10 tokens is due 9 intervals of 10 ms after prefill; never early, barely late.
    let lateness = last - (prefill_end + 90.0);
    assert!(
        (-0.01..15.0).contains(&lateness),
        "the last token came {lateness} ms after its deadline"
    );
    running.shutdown().await;
}

/// POSTs a raw body with headers and returns the `x-sim-request-id`.
async fn post_raw(
    client: &reqwest::Client,
    url: &str,
    body: &str,
    headers: &[(&str, &str)],
) -> String {
    let mut request = client
        .post(url)
        .header("content-type", "application/json")
        .body(body.to_string());
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let response = request.send().await.expect("answered");
    let id = response
        .headers()
        .get("x-sim-request-id")
        .and_then(|value| value.to_str().ok())
        .unwrap_or_default()
        .to_string();
    response.bytes().await.expect("a body");
    id
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn records_name_the_api_and_the_client_headers_but_no_prompt_by_default() {
    let running = start(fast_config()).await;
    let client = reqwest::Client::new();
    let base = origin(&running);
    let headers = [
        ("X-Session-ID", "session-7"),
        ("x-correlation-id", "corr-1"),
        ("x-request-id", "req-42"),
        ("x-tenant", "not kept without --truth-headers"),
    ];
    let chat = post_raw(
        &client,
        &format!("{base}/v1/chat/completions"),
        &chat_body("strobe-sim-1", "hello", 4, false, None),
        &headers,
    )
    .await;
    let completions = post_raw(
        &client,
        &format!("{base}/v1/completions"),
        &completions_body("strobe-sim-1", "hello", 4, false),
        &headers[..1],
    )
    .await;
    let chat = wait_for_record(&running, &chat).await;
    let completions = wait_for_record(&running, &completions).await;
    assert_eq!(chat.api, strobe_sim::Api::Chat);
    assert_eq!(completions.api, strobe_sim::Api::Completions);
    let kept: Vec<(&str, &str)> = chat
        .client_headers
        .iter()
        .map(|(name, value)| (name.as_str(), value.as_str()))
        .collect();
    assert_eq!(
        kept,
        [
            ("x-correlation-id", "corr-1"),
            ("x-request-id", "req-42"),
            ("x-session-id", "session-7"),
        ]
    );
    assert_eq!(completions.client_headers.len(), 1);
    assert!(chat.received.is_none() && completions.received.is_none());
    // Over HTTP the record has the new fields and no `received` member at all.
    let text = client
        .get(format!("{base}/sim/truth"))
        .send()
        .await
        .expect("answered")
        .text()
        .await
        .expect("a body");
    let page: serde_json::Value = serde_json::from_str(&text).expect("JSON");
    let first = &page["records"][0];
    assert_eq!(first["api"], "chat");
    assert_eq!(first["client_headers"]["x-session-id"], "session-7");
    assert!(first.get("received").is_none(), "{first}");
    assert_eq!(page["records"][1]["api"], "completions");
    running.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_truth_prompts_records_keep_what_was_received_byte_for_byte() {
    let mut config = fast_config();
    config.truth_prompts = true;
    config.truth_headers = vec!["x-tenant".into()];
    let jsonl =
        std::env::temp_dir().join(format!("strobe-sim-received-{}.jsonl", std::process::id()));
    let _ = std::fs::remove_file(&jsonl);
    config.truth_jsonl = Some(jsonl.clone());
    let running = start(config).await;
    let client = reqwest::Client::new();
    let base = origin(&running);
    // Odd spacing, escapes and a non-ASCII character: kept as sent, not re-encoded.
    let messages = r#"[ {"role":"system","content":"Be brief."},{"role": "user", "content": "caf\u00e9 \"quoted\"\n line two ☕"} ]"#;
    let chat = format!(r#"{{"model":"strobe-sim-1","messages":{messages},"max_tokens":4}}"#);
    let prompt = r#""once upon a time \u2014 \ud83d\ude00 tab\there""#;
    let completions =
        format!(r#"{{"model":"strobe-sim-1","prompt": {prompt},"max_tokens":4,"stream":true}}"#);
    let token_ids = r#"[1,2, 3]"#;
    let rejected = format!(r#"{{"model":"strobe-sim-1","prompt":{token_ids}}}"#);
    let ids = [
        post_raw(
            &client,
            &format!("{base}/v1/chat/completions"),
            &chat,
            &[("x-tenant", "t-9")],
        )
        .await,
        post_raw(
            &client,
            &format!("{base}/v1/completions"),
            &completions,
            &[],
        )
        .await,
        post_raw(&client, &format!("{base}/v1/completions"), &rejected, &[]).await,
    ];
    let mut records = Vec::new();
    for id in &ids {
        records.push(wait_for_record(&running, id).await);
    }
    let received: Vec<Option<&str>> = records
        .iter()
        .map(|record| record.received.as_ref().map(strobe_sim::ReceivedJson::get))
        .collect();
    assert_eq!(received, [Some(messages), Some(prompt), Some(token_ids)]);
    assert_eq!(
        records[0]
            .client_headers
            .get("x-tenant")
            .map(String::as_str),
        Some("t-9")
    );
    assert_eq!(records[2].outcome, Outcome::Rejected);
    // The prompt the model saw is the decoded string.
    assert_eq!(
        records[1].prompt_chars,
        "once upon a time — 😀 tab\there".chars().count()
    );

    // Over HTTP and in the JSON-lines file the raw bytes are embedded as they came.
    let text = client
        .get(format!("{base}/sim/truth"))
        .send()
        .await
        .expect("answered")
        .text()
        .await
        .expect("a body");
    assert!(
        text.contains(&format!(r#""received":{messages}"#)),
        "{text}"
    );
    let page: strobe_sim::TruthPage = serde_json::from_str(&text).expect("a truth page");
    assert_eq!(page.records, records);
    running.shutdown().await;
    let lines = std::fs::read_to_string(&jsonl).expect("the file was written");
    assert!(
        lines.contains(&format!(r#""received":{prompt}"#)),
        "{lines}"
    );
    let _ = std::fs::remove_file(&jsonl);
}
