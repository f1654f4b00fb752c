//! Helpers shared by the simulator's integration tests: starting a server on an ephemeral port,
//! building prompts the way strobe does (ARTIFACT.md §2), and reading responses both through a
//! real HTTP client (reqwest) and as raw bytes off a TCP socket.

// Each test crate uses a different subset of these helpers.
#![allow(dead_code)]

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use serde_json::Value;
use strobe_sim::{spawn, Running, SimConfig, TruthRecord};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// A configuration that answers fast: tiny prefill cost, 2 ms decode, short answers.
pub fn fast_config() -> SimConfig {
    let mut config = SimConfig {
        ports: vec![0],
        reasoning_tokens: 2,
        answer_words: 8,
        slow_headers_ms: 300,
        hang_ms: 5_000,
        ..SimConfig::default()
    };
    config.latency.prefill_tok_s = 1_000_000.0;
    config.latency.decode_interval_ms = 2.0;
    config
}

/// Starts a server with `config`.
pub async fn start(config: SimConfig) -> Running {
    spawn(config)
        .await
        .expect("the simulator starts on an ephemeral port")
}

/// `http://addr` of the first listener.
pub fn origin(running: &Running) -> String {
    format!("http://{}", running.addrs[0])
}

/// The filler generator of ARTIFACT.md §2.
fn fill(char_budget: usize, offset: usize) -> String {
    let mut text = String::new();
    let mut k = 0;
    while text.len() < char_budget {
        text.push_str(&format!(
            "def helper_{}():\n    return compute({k})  # routine specialist context\n",
            offset + k
        ));
        k += 1;
    }
    text
}

/// strobe's marker for request `index` under `seed`.
pub fn marker(seed: i64, index: usize) -> String {
    format!("ANVIL_REQ_{seed}_{index:05}")
}

/// A prompt built by ARTIFACT.md §2 with canaries on: `words` > 0 asks for that many `code`
/// words; `shared_prefix` empty means unique mode. The prompt is `budget_chars` long.
pub fn strobe_prompt(
    seed: i64,
    index: usize,
    words: u32,
    budget_chars: usize,
    shared_prefix: &str,
) -> String {
    let instruction = format!(
        " Begin with the exact marker {}, followed by one space.",
        marker(seed, index)
    );
    let tail = if words > 0 {
        format!("\n# request {index}:{instruction} Then emit exactly {words} repetitions of the lowercase word code, separated by single spaces. Do not add other text and do not stop early.")
    } else {
        format!("\n# request {index}:{instruction} Summarize the above in one line.")
    };
    let header = if shared_prefix.is_empty() {
        format!("# unique benchmark request {}\n", marker(seed, index))
    } else {
        String::new()
    };
    let prefix = format!("{header}{shared_prefix}");
    let char_budget = budget_chars - prefix.len() - tail.len() - 1;
    let filler = fill(char_budget, index);
    format!("{prefix}\n{}{tail}", &filler[..char_budget])
}

/// The shared prefix of ARTIFACT.md §2 for `tokens` planned tokens.
pub fn shared_prefix(tokens: usize) -> String {
    let chars = tokens * 3;
    fill(chars, 0)[..chars].to_string()
}

/// A chat request body in strobe's key order (ARTIFACT.md §3).
pub fn chat_body(
    model: &str,
    prompt: &str,
    max_tokens: u32,
    stream: bool,
    thinking: Option<bool>,
) -> String {
    let mut body = serde_json::json!({
        "model": model,
        "messages": [{"role": "user", "content": prompt}],
        "max_tokens": max_tokens,
        "temperature": 0.0,
        "stream": stream,
    });
    if stream {
        body["stream_options"] = serde_json::json!({"include_usage": true});
    }
    if let Some(enable) = thinking {
        body["chat_template_kwargs"] = serde_json::json!({"enable_thinking": enable});
    }
    body.to_string()
}

/// What a client saw of one streamed response, parsed the way ARTIFACT.md §4.2 says.
#[derive(Debug, Default)]
pub struct Observed {
    /// HTTP status.
    pub status: u16,
    /// `x-sim-request-id`.
    pub request_id: String,
    /// Every JSON chunk that parsed, in order.
    pub chunks: Vec<Value>,
    /// `data:` lines whose JSON did not parse.
    pub unparsable: usize,
    /// Comment lines (starting with `:`).
    pub comments: usize,
    /// Whether `data: [DONE]` arrived.
    pub done: bool,
    /// Concatenated content deltas.
    pub content: String,
    /// Concatenated reasoning deltas (`reasoning_content` or `reasoning`).
    pub reasoning: String,
    /// Content and reasoning delta counts.
    pub content_chunks: usize,
    pub reasoning_chunks: usize,
    /// Finish reasons seen.
    pub finish_reasons: Vec<String>,
    /// The last non-empty usage object.
    pub usage: Option<Value>,
    /// When the first reasoning / content delta was parsed, and when the body ended.
    pub first_reasoning_at: Option<Instant>,
    pub first_content_at: Option<Instant>,
    pub ended_at: Option<Instant>,
    /// The error that ended the body early, if any.
    pub body_error: Option<String>,
    /// The response headers.
    pub headers: reqwest::header::HeaderMap,
}

impl Observed {
    /// Feeds one complete line (without its `\n`).
    fn line(&mut self, raw: &[u8]) {
        let line = String::from_utf8_lossy(raw);
        let line = line.trim();
        if line.starts_with(':') {
            self.comments += 1;
            return;
        }
        let Some(payload) = line.strip_prefix("data:") else {
            return;
        };
        let payload = payload.trim();
        if payload == "[DONE]" {
            self.done = true;
            return;
        }
        let Ok(chunk) = serde_json::from_str::<Value>(payload) else {
            self.unparsable += 1;
            return;
        };
        if chunk
            .get("usage")
            .is_some_and(|usage| usage.as_object().is_some_and(|map| !map.is_empty()))
        {
            self.usage = Some(chunk["usage"].clone());
        }
        for choice in chunk["choices"].as_array().into_iter().flatten() {
            if let Some(reason) = choice["finish_reason"].as_str() {
                self.finish_reasons.push(reason.to_string());
            }
            let delta = &choice["delta"];
            let reasoning = delta["reasoning_content"]
                .as_str()
                .filter(|text| !text.is_empty())
                .or_else(|| delta["reasoning"].as_str());
            if let Some(text) = reasoning.filter(|text| !text.is_empty()) {
                self.first_reasoning_at.get_or_insert_with(Instant::now);
                self.reasoning_chunks += 1;
                self.reasoning.push_str(text);
            }
            // Chat sends `delta.content`; completions send `text` on the choice itself.
            let content = delta["content"]
                .as_str()
                .or_else(|| choice["text"].as_str());
            if let Some(text) = content.filter(|text| !text.is_empty()) {
                self.first_content_at.get_or_insert_with(Instant::now);
                self.content_chunks += 1;
                self.content.push_str(text);
            }
        }
        self.chunks.push(chunk);
    }
}

/// POSTs `body` to `/v1/chat/completions` with reqwest and parses the stream as it arrives.
/// Stops reading after `idle` without a new body chunk (for the hang fault).
pub async fn post_stream(
    client: &reqwest::Client,
    origin: &str,
    body: String,
    headers: &[(&str, &str)],
    idle: Duration,
) -> Observed {
    post_stream_to(client, origin, "/v1/chat/completions", body, headers, idle).await
}

/// A completions request body as `vllm bench serve` sends it.
pub fn completions_body(model: &str, prompt: &str, max_tokens: u32, stream: bool) -> String {
    let mut body = serde_json::json!({
        "model": model,
        "prompt": prompt,
        "max_tokens": max_tokens,
        "temperature": 0.0,
        "stream": stream,
    });
    if stream {
        body["stream_options"] = serde_json::json!({"include_usage": true});
    }
    body.to_string()
}

/// [`post_stream`] to another path, e.g. `/v1/completions`.
pub async fn post_stream_to(
    client: &reqwest::Client,
    origin: &str,
    path: &str,
    body: String,
    headers: &[(&str, &str)],
    idle: Duration,
) -> Observed {
    let mut request = client
        .post(format!("{origin}{path}"))
        .header("content-type", "application/json")
        .body(body);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let mut response = request
        .send()
        .await
        .expect("the request reaches the simulator");
    let mut observed = Observed {
        status: response.status().as_u16(),
        request_id: response
            .headers()
            .get("x-sim-request-id")
            .and_then(|value| value.to_str().ok())
            .unwrap_or_default()
            .to_string(),
        headers: response.headers().clone(),
        ..Observed::default()
    };
    let mut pending: Vec<u8> = Vec::new();
    loop {
        match tokio::time::timeout(idle, response.chunk()).await {
            Err(_) => {
                observed.body_error = Some("idle timeout".into());
                break;
            }
            Ok(Err(error)) => {
                observed.body_error = Some(format!("{error:?}"));
                break;
            }
            Ok(Ok(None)) => break,
            Ok(Ok(Some(bytes))) => {
                pending.extend_from_slice(&bytes);
                while let Some(newline) = pending.iter().position(|byte| *byte == b'\n') {
                    let line: Vec<u8> = pending.drain(..=newline).collect();
                    observed.line(&line[..line.len() - 1]);
                }
            }
        }
    }
    observed.ended_at = Some(Instant::now());
    observed
}

/// Sends raw request bytes and reads until the server closes (or `limit` passes). Returns the
/// bytes read and the read error that ended it, if any.
pub async fn raw_exchange(
    addr: SocketAddr,
    request: &[u8],
    limit: Duration,
) -> (Vec<u8>, Option<std::io::ErrorKind>) {
    let mut stream = TcpStream::connect(addr).await.expect("connects");
    stream.write_all(request).await.expect("request written");
    let mut received = Vec::new();
    let mut scratch = [0u8; 8192];
    let deadline = tokio::time::Instant::now() + limit;
    loop {
        match tokio::time::timeout_at(deadline, stream.read(&mut scratch)).await {
            Err(_) => return (received, Some(std::io::ErrorKind::TimedOut)),
            Ok(Ok(0)) => return (received, None),
            Ok(Ok(read)) => received.extend_from_slice(&scratch[..read]),
            Ok(Err(error)) => return (received, Some(error.kind())),
        }
    }
}

/// A raw HTTP/1.1 POST of a chat body that asks the server to close afterwards.
pub fn raw_post(body: &str, extra_headers: &str) -> Vec<u8> {
    format!(
        "POST /v1/chat/completions HTTP/1.1\r\nHost: sim\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n{extra_headers}\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// Splits a raw chunked response into its head and the data of each chunk, in order. Stops at
/// the last chunk or at the end of the bytes (a cut-off body).
pub fn dechunk(raw: &[u8]) -> (String, Vec<Vec<u8>>, bool) {
    let head_end = raw
        .windows(4)
        .position(|window| window == b"\r\n\r\n")
        .expect("a complete response head")
        + 4;
    let head = String::from_utf8_lossy(&raw[..head_end]).into_owned();
    let mut chunks = Vec::new();
    let mut at = head_end;
    loop {
        let Some(line_length) = raw[at..].windows(2).position(|window| window == b"\r\n") else {
            return (head, chunks, false);
        };
        let size_text = String::from_utf8_lossy(&raw[at..at + line_length]).into_owned();
        let size = usize::from_str_radix(size_text.trim(), 16).expect("a hex chunk size");
        at += line_length + 2;
        if size == 0 {
            return (head, chunks, true);
        }
        if raw.len() < at + size + 2 {
            return (head, chunks, false);
        }
        chunks.push(raw[at..at + size].to_vec());
        at += size + 2;
    }
}

/// Fetches `GET /sim/truth?since=<since>` over HTTP and returns its records.
pub async fn truth_over_http(
    client: &reqwest::Client,
    origin: &str,
    since: u64,
) -> Vec<TruthRecord> {
    let text = client
        .get(format!("{origin}/sim/truth?since={since}"))
        .send()
        .await
        .expect("truth endpoint answers")
        .text()
        .await
        .expect("truth body");
    let page: strobe_sim::TruthPage = serde_json::from_str(&text).expect("a truth page");
    page.records
}

/// Waits until the truth log holds a record for `request_id` (handlers record after the last
/// write, which can be a moment after the client saw the end).
pub async fn wait_for_record(running: &Running, request_id: &str) -> TruthRecord {
    wait_for_truth(running, Duration::from_secs(10), request_id, |record| {
        record.request_id == request_id
    })
    .await
}

/// Polls the truth log until a record `matches` and returns it; fails the test naming `what`
/// if none did `within`.
pub async fn wait_for_truth(
    running: &Running,
    within: Duration,
    what: &str,
    matches: impl Fn(&TruthRecord) -> bool,
) -> TruthRecord {
    let deadline = Instant::now() + within;
    loop {
        if let Some(record) = running.truth.since(0).into_iter().find(&matches) {
            return record;
        }
        assert!(Instant::now() < deadline, "no truth record for {what}");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// `instant` in ms since the server started, comparable with `Stamp::monotonic_ms`.
pub fn server_ms(running: &Running, instant: Instant) -> f64 {
    running.clock().stamp_at(instant).monotonic_ms
}
