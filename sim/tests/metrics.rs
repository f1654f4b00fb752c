//! The simulator's `/metrics` and `/reset_prefix_cache` through a real client: vLLM's names
//! and format, numbers equal to the truth log's requests and to the state at the moment of
//! each scrape, CORS like every other route (or, with `--metrics-cors off`, none on
//! `/metrics` alone), no API key (as vLLM), and a cache reset that really empties the prefix
//! cache, held as long as `--reset-delay-ms` asks.

mod common;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use common::*;
use strobe_sim::{Running, ScrapeEndpoint, ScrapeRecord, SimConfig};

const IDLE: Duration = Duration::from_secs(5);
const PAGE: &str = "http://127.0.0.1:8080";

/// A `/metrics` text as name (labels dropped, a bucket keeping its `le`) to value.
fn parse_metrics(text: &str) -> BTreeMap<String, f64> {
    let mut values = BTreeMap::new();
    for line in text.lines().filter(|line| !line.starts_with('#')) {
        let (series, value) = line.rsplit_once(' ').expect("name and value");
        let name = series.split('{').next().expect("a name");
        let key = match series.split_once("le=\"") {
            Some((_, bound)) => format!("{name}{{le={}}}", bound.trim_end_matches("\"}")),
            None => name.to_owned(),
        };
        values.insert(key, value.parse::<f64>().expect("a number"));
    }
    values
}

/// One `/metrics` answer as a page on another origin reads it.
struct Scraped {
    status: u16,
    headers: reqwest::header::HeaderMap,
    values: BTreeMap<String, f64>,
    /// Just before sending and just after the answer, on the server's clock.
    sent_ms: f64,
    answered_ms: f64,
}

async fn scrape(client: &reqwest::Client, running: &Running) -> Scraped {
    let sent = Instant::now();
    let response = client
        .get(format!("{}/metrics", origin(running)))
        .header("origin", PAGE)
        .send()
        .await
        .expect("/metrics answers");
    let answered = Instant::now();
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let text = response.text().await.expect("a body");
    Scraped {
        status,
        headers,
        values: parse_metrics(&text),
        sent_ms: server_ms(running, sent),
        answered_ms: server_ms(running, answered),
    }
}

fn last_scrape(running: &Running) -> ScrapeRecord {
    running
        .truth
        .scrapes_since(0)
        .pop()
        .expect("the scrape is in the truth log")
}

fn header<'a>(headers: &'a reqwest::header::HeaderMap, name: &str) -> &'a str {
    headers
        .get(name)
        .and_then(|value| value.to_str().ok())
        .unwrap_or("")
}

async fn send_prompt(client: &reqwest::Client, running: &Running, prompt: &str) -> u64 {
    let observed = post_stream(
        client,
        &origin(running),
        chat_body("strobe-sim-1", prompt, 32, true, None),
        &[],
        IDLE,
    )
    .await;
    assert_eq!(observed.status, 200);
    wait_for_record(running, &observed.request_id).await;
    observed.usage.expect("usage")["prompt_tokens_details"]["cached_tokens"]
        .as_u64()
        .expect("cached tokens")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_answer_in_vllm_names_what_the_truth_log_holds() {
    let running = start(fast_config()).await;
    let client = reqwest::Client::new();
    let prefix = shared_prefix(1_000);
    for index in 0..3 {
        send_prompt(
            &client,
            &running,
            &strobe_prompt(2, index, 2, 6_000, &prefix),
        )
        .await;
    }
    let Scraped {
        status,
        headers,
        values,
        sent_ms,
        answered_ms,
    } = scrape(&client, &running).await;
    assert_eq!(status, 200);
    assert_eq!(
        header(&headers, "content-type"),
        "text/plain; version=0.0.4; charset=utf-8"
    );
    assert_eq!(header(&headers, "access-control-allow-origin"), PAGE);

    let records = running.truth.since(0);
    let sum = |field: fn(&strobe_sim::TruthRecord) -> u32| -> f64 {
        records.iter().map(|record| f64::from(field(record))).sum()
    };
    let prompt_tokens = sum(|record| record.prompt_tokens);
    assert_eq!(values["vllm:prompt_tokens_total"], prompt_tokens);
    assert_eq!(values["vllm:prefix_cache_queries_total"], prompt_tokens);
    let hits = sum(|record| record.cached_tokens);
    assert!(hits > 0.0, "the shared prefix hit");
    assert_eq!(values["vllm:prefix_cache_hits_total"], hits);
    assert_eq!(
        values["vllm:generation_tokens_total"],
        sum(|record| record.reasoning_tokens_sent + record.content_tokens_sent)
    );
    assert_eq!(values["vllm:num_preemptions_total"], 0.0);
    assert_eq!(values["vllm:num_requests_running"], 0.0);
    assert_eq!(values["vllm:num_requests_waiting"], 0.0);
    assert!(values["vllm:kv_cache_usage_perc"] > 0.0);
    assert_eq!(values["vllm:time_to_first_token_seconds_count"], 3.0);
    assert_eq!(
        values["vllm:time_to_first_token_seconds_bucket{le=+Inf}"],
        3.0
    );
    // Each TTFT is the record's receipt to its first token.
    let ttft_sum: f64 = records
        .iter()
        .map(|record| {
            let first = record
                .times
                .first_reasoning_byte_sent
                .expect("reasoning went first")
                .monotonic_ms;
            (first - record.times.received.expect("received").monotonic_ms) / 1000.0
        })
        .sum();
    assert!((values["vllm:time_to_first_token_seconds_sum"] - ttft_sum).abs() < 1e-9);

    // The truth log has the scrape, with what it answered, stamped between send and answer.
    let scrape = last_scrape(&running);
    assert_eq!(scrape.endpoint, ScrapeEndpoint::Metrics);
    assert_eq!(scrape.status, 200);
    assert_eq!(scrape.port, running.addrs[0].port());
    assert!(
        (sent_ms..=answered_ms).contains(&scrape.received.monotonic_ms),
        "received at {} between {sent_ms} and {answered_ms}",
        scrape.received.monotonic_ms
    );
    let answered = scrape.metrics.expect("the snapshot");
    assert_eq!(answered.prompt_tokens as f64, prompt_tokens);
    assert_eq!(answered.prefix_cache_hits as f64, hits);
    assert_eq!(
        answered.kv_cache_usage_perc,
        values["vllm:kv_cache_usage_perc"]
    );
    assert_eq!(answered.time_to_first_token_seconds.count, 3);

    // And over HTTP, in the truth page, apart from the requests' records.
    let text = client
        .get(format!("{}/sim/truth?scrapes_since=0", origin(&running)))
        .send()
        .await
        .expect("truth answers")
        .text()
        .await
        .expect("a truth body");
    let page: strobe_sim::TruthPage = serde_json::from_str(&text).expect("a truth page");
    assert_eq!((page.records.len(), page.scrapes.len()), (3, 1));
    assert_eq!(page.last_scrape_seq, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scrape_mid_run_sees_the_batch_and_the_queue() {
    let mut config = fast_config();
    config.latency.max_num_seqs = 1;
    config.latency.decode_interval_ms = 40.0;
    let running = start(config).await;
    let client = reqwest::Client::new();
    let streams: Vec<_> = (0..3)
        .map(|index| {
            let client = client.clone();
            let origin = origin(&running);
            let body = chat_body(
                "strobe-sim-1",
                &strobe_prompt(3, index, 8, 2_000, ""),
                64,
                true,
                None,
            );
            tokio::spawn(async move { post_stream(&client, &origin, body, &[], IDLE).await })
        })
        .collect();
    let deadline = Instant::now() + Duration::from_secs(5);
    let values = loop {
        let values = scrape(&client, &running).await.values;
        if values["vllm:num_requests_waiting"] == 2.0 {
            break values;
        }
        assert!(
            Instant::now() < deadline,
            "never saw two waiting: {values:?}"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    };
    assert_eq!(values["vllm:num_requests_running"], 1.0);
    let answered = last_scrape(&running).metrics.expect("the snapshot");
    assert_eq!(
        (answered.num_requests_running, answered.num_requests_waiting),
        (1, 2)
    );
    for stream in streams {
        assert_eq!(stream.await.expect("the stream task").status, 200);
    }
    let after = scrape(&client, &running).await.values;
    assert_eq!(
        (
            after["vllm:num_requests_running"],
            after["vllm:num_requests_waiting"]
        ),
        (0.0, 0.0)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prefix_cache_reset_empties_the_cache() {
    let running = start(fast_config()).await;
    let client = reqwest::Client::new();
    let prompt = strobe_prompt(4, 0, 2, 6_000, &shared_prefix(1_000));
    assert_eq!(send_prompt(&client, &running, &prompt).await, 0, "cold");
    assert!(send_prompt(&client, &running, &prompt).await > 0, "warm");

    let response = client
        .post(format!("{}/reset_prefix_cache", origin(&running)))
        .header("origin", PAGE)
        .send()
        .await
        .expect("the reset answers");
    assert_eq!(response.status(), 200);
    assert_eq!(
        header(response.headers(), "access-control-allow-origin"),
        PAGE
    );
    assert_eq!(
        response.text().await.expect("a body"),
        "",
        "as vLLM: no body"
    );
    let reset = last_scrape(&running);
    assert_eq!(reset.endpoint, ScrapeEndpoint::ResetPrefixCache);
    assert!(reset.cleared_blocks.is_some_and(|blocks| blocks > 0));
    assert!(reset.metrics.is_none());

    let values = scrape(&client, &running).await.values;
    assert_eq!(values["vllm:kv_cache_usage_perc"], 0.0);
    assert_eq!(
        send_prompt(&client, &running, &prompt).await,
        0,
        "cold again"
    );
    // The counters kept counting through the reset, as vLLM's do.
    let values = scrape(&client, &running).await.values;
    assert_eq!(values["vllm:time_to_first_token_seconds_count"], 3.0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sglangs_flush_empties_the_cache_by_get_or_post() {
    let running = start(fast_config()).await;
    let client = reqwest::Client::new();
    let prompt = strobe_prompt(4, 0, 2, 6_000, &shared_prefix(1_000));
    assert_eq!(send_prompt(&client, &running, &prompt).await, 0, "cold");
    assert!(send_prompt(&client, &running, &prompt).await > 0, "warm");
    let flushed = client
        .post(format!("{}/flush_cache", origin(&running)))
        .header("origin", PAGE)
        .send()
        .await
        .expect("the flush answers");
    assert_eq!(flushed.status(), 200);
    assert_eq!(
        header(flushed.headers(), "access-control-allow-origin"),
        PAGE
    );
    assert!(flushed
        .text()
        .await
        .expect("a body")
        .starts_with("Cache flushed."));
    let flush = last_scrape(&running);
    assert_eq!(flush.endpoint, ScrapeEndpoint::FlushCache);
    assert_eq!(flush.status, 200);
    assert!(flush.cleared_blocks.is_some_and(|blocks| blocks > 0));
    assert_eq!(
        send_prompt(&client, &running, &prompt).await,
        0,
        "cold again"
    );
    let by_get = client
        .get(format!("{}/flush_cache", origin(&running)))
        .send()
        .await
        .expect("answers");
    assert_eq!(by_get.status(), 200, "SGLang takes GET too");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_routes_need_no_key_answer_preflights_and_refuse_other_methods() {
    let config = SimConfig {
        api_key: Some("secret".into()),
        ..fast_config()
    };
    let running = start(config).await;
    let client = reqwest::Client::new();
    // vLLM's key guards /v1 only.
    let scraped = scrape(&client, &running).await;
    assert_eq!(scraped.status, 200);
    assert!(scraped.values.contains_key("vllm:num_requests_running"));

    let preflight = client
        .request(
            reqwest::Method::OPTIONS,
            format!("{}/reset_prefix_cache", origin(&running)),
        )
        .header("origin", PAGE)
        .header("access-control-request-method", "POST")
        .send()
        .await
        .expect("the preflight answers");
    assert_eq!(preflight.status(), 204);
    assert!(header(preflight.headers(), "access-control-allow-methods").contains("POST"));

    let wrong_reset = client
        .get(format!("{}/reset_prefix_cache", origin(&running)))
        .send()
        .await
        .expect("answers");
    assert_eq!(wrong_reset.status(), 405);
    assert_eq!(header(wrong_reset.headers(), "allow"), "POST, OPTIONS");
    let wrong_metrics = client
        .post(format!("{}/metrics", origin(&running)))
        .send()
        .await
        .expect("answers");
    assert_eq!(wrong_metrics.status(), 405);
    assert_eq!(header(wrong_metrics.headers(), "allow"), "GET, OPTIONS");
    // Refused methods are not scrapes.
    assert_eq!(running.truth.scrapes_since(0).len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_cors_off_keeps_a_page_out_of_the_metrics_but_not_out_of_v1() {
    let config = SimConfig {
        metrics_cors: false,
        ..fast_config()
    };
    let running = start(config).await;
    let client = reqwest::Client::new();
    let scraped = scrape(&client, &running).await;
    assert_eq!(
        scraped.status, 200,
        "the server answers; the browser hides it"
    );
    assert!(scraped.values.contains_key("vllm:num_requests_running"));
    assert_eq!(
        header(&scraped.headers, "access-control-allow-origin"),
        "",
        "no CORS on /metrics"
    );
    assert_eq!(
        last_scrape(&running).status,
        200,
        "still a scrape of record"
    );
    let models = client
        .get(format!("{}/v1/models", origin(&running)))
        .header("origin", PAGE)
        .send()
        .await
        .expect("/v1/models answers");
    assert_eq!(
        header(models.headers(), "access-control-allow-origin"),
        PAGE,
        "/v1 keeps its CORS"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reset_delay_holds_the_reset_and_its_answer() {
    let config = SimConfig {
        reset_delay_ms: 300,
        ..fast_config()
    };
    let running = start(config).await;
    let client = reqwest::Client::new();
    let prompt = strobe_prompt(4, 0, 2, 6_000, &shared_prefix(1_000));
    assert_eq!(send_prompt(&client, &running, &prompt).await, 0, "cold");
    let sent = Instant::now();
    let response = client
        .post(format!("{}/reset_prefix_cache", origin(&running)))
        .send()
        .await
        .expect("the reset answers");
    assert_eq!(response.status(), 200);
    assert!(
        sent.elapsed() >= Duration::from_millis(300),
        "{:?}",
        sent.elapsed()
    );
    let reset = last_scrape(&running);
    assert!(reset.cleared_blocks.is_some_and(|blocks| blocks > 0));
    // The record says when the reset arrived, not when the hold ended.
    let (received_ms, sent_ms) = (reset.received.monotonic_ms, server_ms(&running, sent));
    assert!(
        received_ms >= sent_ms - 5.0 && received_ms < sent_ms + 200.0,
        "sent at {sent_ms} ms, received at {received_ms} ms"
    );
    assert_eq!(send_prompt(&client, &running, &prompt).await, 0, "emptied");
}
