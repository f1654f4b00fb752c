//! Per-request observation: from timestamped stream events to a timing row or a failure record.
//!
//! This module owns ARTIFACT.md §4.2-§4.3 (what a stream yields and when it is valid), §5 (the
//! `request_timings[]` row), §6 (canary, controlled output, disposition, the `failures[]` object)
//! and the per-row additions of §12, including the transport accounting read from the browser's
//! Resource Timing entries ([`TransportFacts`], paired by [`match_resource_timings`]) and the
//! optional per-read traces. It never reads a clock: the caller stamps each network read
//! with one `f64` millisecond reading ([`StreamAccumulator::on_read`]), and every event decoded
//! from that read carries that arrival time, so TTFO and TTFT are the arrival times of the reads
//! that carried the first reasoning or content delta (§12; a single read that carries both gives
//! TTFO == TTFT, where the reference's two clock reads differed by ~1 µs, §11.5).
//!
//! Times are kept in **seconds** internally, `(now_ms - start_ms) / 1000.0`, and every `_ms` field
//! is `seconds * 1000.0`, exactly as the reference producer did (§11.4), so derived values are
//! bit-identical to what it would have written for the same clock readings.

use std::collections::BTreeMap;

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;
use thiserror::Error;

pub use crate::core::plan::ControlledOutputPolicy;
use crate::core::sse::{is_python_space, sanitize_excerpt, ChunkEvent, SseError};

/// Visible content kept per request for the output-contract checks, in characters (Unicode
/// scalar values, as Python's `len`).
pub const VISIBLE_CONTENT_CAPTURE_LIMIT: usize = 8192;

/// Longest `error_message` in a failure record, in characters.
pub const ERROR_MESSAGE_MAX_CHARS: usize = 2048;

/// What an empty error message is replaced with.
pub const EMPTY_ERROR_MESSAGE: &str = "<empty exception message>";

/// Longest excerpt of an HTTP error body kept in a [`RequestError`] message, in characters.
pub const HTTP_BODY_EXCERPT_MAX_CHARS: usize = 512;

/// Most `finish_reasons` kept per request. A normal stream has one per choice; the bound only
/// stops a misbehaving server from growing memory without limit.
pub const FINISH_REASONS_KEPT: usize = 1024;

/// Most arrival times a row's `chunk_arrivals_ms` keeps (the first ones). A trace is for the
/// timeline of one request; the bound stops a 65536-token answer in every row of a long run from
/// growing the page's memory without limit.
pub const CHUNK_ARRIVALS_KEPT: usize = 16_384;

/// The word a controlled-output prompt asks the model to repeat.
pub const CONTROLLED_OUTPUT_WORD: &str = "code";

/// `error_type` of the validation failures, as the reference producer wrote them (its checks
/// raised Python `ValueError`s, and readers group failures by this name).
pub const VALIDATION_ERROR_TYPE: &str = "ValueError";

const MARKER_PREFIX: &str = "ANVIL_REQ_";
const MARKER_INDEX_DIGITS: usize = 5;

// ---------------------------------------------------------------------------------------------
// Stream accumulation (§4.2)
// ---------------------------------------------------------------------------------------------

/// Where `out_toks` came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OutputTokenSource {
    /// `usage.completion_tokens` was a non-negative integer.
    Usage,
    /// The server gave no exact count; the number of content chunks stands in.
    ContentChunks,
}

impl OutputTokenSource {
    /// The artifact spelling (`"usage"` / `"content_chunks"`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Usage => "usage",
            Self::ContentChunks => "content_chunks",
        }
    }
}

/// Whether the caller should keep reading the response body.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StreamFlow {
    /// Keep reading.
    Continue,
    /// Stop reading: `[DONE]` was seen, or the stream failed (then `finish` returns the error).
    Stop,
}

/// How events arrived, per request (ARTIFACT.md §12 `client.sse`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReadStats {
    /// Network reads stamped with [`StreamAccumulator::on_read`].
    pub reads: u64,
    /// Events consumed (events after `[DONE]` or after a failure are not).
    pub events: u64,
    /// Events that arrived in a read together with at least one other event, and so share its
    /// timestamp.
    pub events_sharing_a_read: u64,
    /// Non-JSON payloads skipped.
    pub ignored_payloads: u64,
}

/// What one streamed response yielded (§4.2 step 9).
#[derive(Clone, Debug, PartialEq)]
pub struct StreamResult {
    /// The caller's clock when the request was sent, in ms.
    pub request_started_ms: f64,
    /// Time to first output (reasoning or content), in seconds; `None` if there was none.
    pub ttfo_s: Option<f64>,
    /// Time to first non-empty content delta, in seconds; `None` if there was none.
    pub ttft_s: Option<f64>,
    /// Request start to end of stream, in seconds.
    pub e2e_s: f64,
    /// Output tokens: `usage.completion_tokens` when exact, else the content chunk count.
    pub out_toks: u64,
    /// Where `out_toks` came from.
    pub output_token_source: OutputTokenSource,
    /// Non-empty content deltas seen.
    pub content_chunks: u64,
    /// Non-empty reasoning deltas seen (their text is never kept).
    pub reasoning_chunks: u64,
    /// The first [`VISIBLE_CONTENT_CAPTURE_LIMIT`] characters of visible content.
    pub visible_content: String,
    /// More visible content arrived than was captured.
    pub visible_content_truncated: bool,
    /// Each non-null `finish_reason`, stringified and cut to 128 characters.
    pub finish_reasons: Vec<String>,
    /// `[DONE]` was seen.
    pub done_observed: bool,
    /// `[DONE]` was seen or some choice finished.
    pub stream_terminal_observed: bool,
    /// The last truthy `usage` of the stream, raw.
    pub usage: Option<Value>,
    /// How the events arrived.
    pub read_stats: ReadStats,
    /// With traces on: the arrival of every read that carried an event, in ms after
    /// `request_started_ms` (at most [`CHUNK_ARRIVALS_KEPT`]); `None` with traces off.
    pub chunk_arrivals_ms: Option<Vec<f64>>,
}

impl StreamResult {
    /// `usage.prompt_tokens` when it is a non-negative integer.
    pub fn prompt_tokens(&self) -> Option<u64> {
        usage_count(self.usage.as_ref(), "prompt_tokens")
    }

    /// `usage.completion_tokens` when it is a non-negative integer.
    pub fn completion_tokens(&self) -> Option<u64> {
        usage_count(self.usage.as_ref(), "completion_tokens")
    }

    /// `usage.prompt_tokens_details.cached_tokens` when it is a non-negative integer.
    pub fn cached_tokens(&self) -> Option<u64> {
        let details = self.usage.as_ref()?.get("prompt_tokens_details")?;
        details.get("cached_tokens").and_then(exact_count)
    }

    /// The reference's `cached_fraction(usage)` (input of `prefix_cache_hit_avg`, §7.2):
    /// `cached_tokens / prompt_tokens`, or `None` when usage, the details or the cached count is
    /// missing or prompt_tokens is 0 or missing. Numbers are divided as floats, which equals
    /// Python's true division for counts below 2^53; booleans are not counts here.
    pub fn cached_fraction(&self) -> Option<f64> {
        let usage = self.usage.as_ref()?.as_object()?;
        let cached = usage
            .get("prompt_tokens_details")?
            .get("cached_tokens")?
            .as_f64()?;
        let prompt = usage.get("prompt_tokens")?.as_f64()?;
        (prompt != 0.0).then(|| cached / prompt)
    }
}

/// Folds the events of one streamed response into a [`StreamResult`] (§4.2).
///
/// Call [`on_read`](Self::on_read) once per network read with one clock reading, then
/// [`on_event`](Self::on_event) for each event decoded from that read; stop reading when it says
/// [`StreamFlow::Stop`]; call [`finish`](Self::finish) after the body is closed.
#[derive(Clone, Debug)]
pub struct StreamAccumulator {
    request_started_ms: f64,
    read_ms: Option<f64>,
    events_in_read: u64,
    ttfo_s: Option<f64>,
    ttft_s: Option<f64>,
    content_chunks: u64,
    reasoning_chunks: u64,
    visible_content: String,
    captured_chars: usize,
    visible_content_truncated: bool,
    finish_reasons: Vec<String>,
    done_observed: bool,
    usage: Option<Value>,
    failure: Option<RequestError>,
    read_stats: ReadStats,
    chunk_arrivals_ms: Option<Vec<f64>>,
}

impl StreamAccumulator {
    /// Starts observing a request sent at `request_started_ms` (taken immediately before
    /// `fetch()`).
    pub fn new(request_started_ms: f64) -> Self {
        Self {
            request_started_ms,
            read_ms: None,
            events_in_read: 0,
            ttfo_s: None,
            ttft_s: None,
            content_chunks: 0,
            reasoning_chunks: 0,
            visible_content: String::new(),
            captured_chars: 0,
            visible_content_truncated: false,
            finish_reasons: Vec::new(),
            done_observed: false,
            usage: None,
            failure: None,
            read_stats: ReadStats::default(),
            chunk_arrivals_ms: None,
        }
    }

    /// Also records when each read that carried an event arrived (the row's
    /// `chunk_arrivals_ms`, the user's "traces" choice).
    pub fn with_chunk_arrivals(mut self) -> Self {
        self.chunk_arrivals_ms = Some(Vec::new());
        self
    }

    /// Stamps the events of the next network read with its arrival time. Events passed before
    /// the first call are stamped with the request start.
    pub fn on_read(&mut self, now_ms: f64) {
        self.read_ms = Some(now_ms);
        self.events_in_read = 0;
        self.read_stats.reads += 1;
    }

    /// Consumes one event of the current read.
    pub fn on_event(&mut self, event: &ChunkEvent) -> StreamFlow {
        if self.is_stopped() {
            return StreamFlow::Stop;
        }
        self.count_event();
        match event {
            ChunkEvent::Done => {
                self.done_observed = true;
                return StreamFlow::Stop;
            }
            ChunkEvent::Ignored => self.read_stats.ignored_payloads += 1,
            ChunkEvent::Malformed { reason } => {
                self.failure = Some(RequestError::malformed_chunk(reason));
                return StreamFlow::Stop;
            }
            ChunkEvent::ServerError { message } => {
                self.failure = Some(RequestError::server_error_event(message));
                return StreamFlow::Stop;
            }
            ChunkEvent::Chunk(chunk) => {
                if let Some(usage) = &chunk.usage {
                    self.usage = Some(usage.clone());
                }
                let elapsed_s = self.read_elapsed_s();
                for choice in &chunk.choices {
                    if let Some(reason) = &choice.finish_reason {
                        if self.finish_reasons.len() < FINISH_REASONS_KEPT {
                            self.finish_reasons.push(reason.clone());
                        }
                    }
                    if choice.reasoning.is_some() {
                        self.ttfo_s.get_or_insert(elapsed_s);
                        self.reasoning_chunks += 1;
                    }
                    if let Some(content) = &choice.content {
                        self.ttfo_s.get_or_insert(elapsed_s);
                        self.ttft_s.get_or_insert(elapsed_s);
                        self.content_chunks += 1;
                        self.capture(content);
                    }
                }
            }
        }
        StreamFlow::Continue
    }

    /// Stamps one read and consumes all its events; returns [`StreamFlow::Stop`] as soon as an
    /// event ends the stream (later events of the read are not consumed).
    pub fn on_read_events(&mut self, now_ms: f64, events: &[ChunkEvent]) -> StreamFlow {
        self.on_read(now_ms);
        for event in events {
            if self.on_event(event) == StreamFlow::Stop {
                return StreamFlow::Stop;
            }
        }
        if self.is_stopped() {
            StreamFlow::Stop
        } else {
            StreamFlow::Continue
        }
    }

    /// `[DONE]` was seen or the stream failed: further events are ignored.
    pub fn is_stopped(&self) -> bool {
        self.done_observed || self.failure.is_some()
    }

    /// How events arrived so far (also available after a failure, unlike the result).
    pub fn read_stats(&self) -> ReadStats {
        self.read_stats
    }

    /// Ends the observation at `now_ms`, read after the response body was closed (§4.2 step 7).
    /// A malformed chunk or a server error event makes this the request's error.
    pub fn finish(self, now_ms: f64) -> Result<StreamResult, RequestError> {
        if let Some(failure) = self.failure {
            return Err(failure);
        }
        let completion_tokens = usage_count(self.usage.as_ref(), "completion_tokens");
        let (out_toks, output_token_source) = match completion_tokens {
            Some(tokens) => (tokens, OutputTokenSource::Usage),
            None => (self.content_chunks, OutputTokenSource::ContentChunks),
        };
        let stream_terminal_observed = self.done_observed || !self.finish_reasons.is_empty();
        Ok(StreamResult {
            request_started_ms: self.request_started_ms,
            ttfo_s: self.ttfo_s,
            ttft_s: self.ttft_s,
            e2e_s: (now_ms - self.request_started_ms) / 1000.0,
            out_toks,
            output_token_source,
            content_chunks: self.content_chunks,
            reasoning_chunks: self.reasoning_chunks,
            visible_content: self.visible_content,
            visible_content_truncated: self.visible_content_truncated,
            finish_reasons: self.finish_reasons,
            done_observed: self.done_observed,
            stream_terminal_observed,
            usage: self.usage,
            read_stats: self.read_stats,
            chunk_arrivals_ms: self.chunk_arrivals_ms,
        })
    }

    fn read_elapsed_s(&self) -> f64 {
        let read_ms = self.read_ms.unwrap_or(self.request_started_ms);
        (read_ms - self.request_started_ms) / 1000.0
    }

    fn count_event(&mut self) {
        if self.events_in_read == 0 {
            let arrival_ms =
                self.read_ms.unwrap_or(self.request_started_ms) - self.request_started_ms;
            if let Some(arrivals) = self
                .chunk_arrivals_ms
                .as_mut()
                .filter(|arrivals| arrivals.len() < CHUNK_ARRIVALS_KEPT)
            {
                arrivals.push(arrival_ms);
            }
        }
        self.read_stats.events += 1;
        self.events_in_read += 1;
        match self.events_in_read {
            1 => {}
            // The read's first event turns out to share it too.
            2 => self.read_stats.events_sharing_a_read += 2,
            _ => self.read_stats.events_sharing_a_read += 1,
        }
    }

    fn capture(&mut self, content: &str) {
        let remaining = VISIBLE_CONTENT_CAPTURE_LIMIT.saturating_sub(self.captured_chars);
        let mut taken = 0;
        for (offset, _) in content.char_indices() {
            if taken == remaining {
                self.visible_content.push_str(&content[..offset]);
                self.captured_chars += taken;
                self.visible_content_truncated = true;
                return;
            }
            taken += 1;
        }
        self.visible_content.push_str(content);
        self.captured_chars += taken;
    }
}

/// A usage count the reference accepts as exact: a non-negative JSON integer (not a bool, not a
/// float such as `5.0`).
fn exact_count(value: &Value) -> Option<u64> {
    match value {
        Value::Number(number) => number.as_u64(),
        _ => None,
    }
}

fn usage_count(usage: Option<&Value>, key: &str) -> Option<u64> {
    usage?.as_object()?.get(key).and_then(exact_count)
}

// ---------------------------------------------------------------------------------------------
// Stream validation (§4.3)
// ---------------------------------------------------------------------------------------------

/// Why a received stream does not count as a completion. The texts are the artifact's
/// `error_message` values and must stay byte-exact.
#[derive(Clone, Copy, Debug, Error, PartialEq, Eq)]
pub enum StreamValidationError {
    /// No non-empty content delta arrived (e.g. a reasoning model spent `max_tokens` thinking:
    /// raise max tokens or disable thinking).
    #[error("stream completed without visible content")]
    NoVisibleContent,
    /// The stream stopped without `[DONE]` and without any `finish_reason` (the connection was cut
    /// or the server crashed mid-stream).
    #[error("stream ended without a terminal event or finish reason")]
    NoTerminalEvent,
}

/// §4.3, in its order: visible content first, then a terminal event.
pub fn validate_stream(result: &StreamResult) -> Result<(), StreamValidationError> {
    if result.ttft_s.is_none() {
        return Err(StreamValidationError::NoVisibleContent);
    }
    if !result.stream_terminal_observed {
        return Err(StreamValidationError::NoTerminalEvent);
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Output contract (§6.1)
// ---------------------------------------------------------------------------------------------

/// The `request_canary` object of a row.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RequestCanary {
    /// The marker the prompt asked for, e.g. `ANVIL_REQ_1717_00000`.
    pub marker: String,
    /// Visible content starts with the marker, followed by whitespace or nothing.
    pub marker_at_start: bool,
    /// Matches of `ANVIL_REQ_-?[0-9]+_[0-9]{5}\b` in the captured visible content.
    pub observed_marker_count: u64,
    /// Matches that are not this request's marker.
    pub foreign_marker_count: u64,
    /// The capture was not truncated.
    pub capture_complete: bool,
    /// `marker_at_start && foreign_marker_count == 0 && capture_complete`.
    pub passed: bool,
}

/// The `controlled_output` object of a row (present only when `--response-words` > 0).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ControlledOutput {
    /// The policy in force.
    pub policy: ControlledOutputPolicy,
    /// `--response-words`.
    pub requested_words: u64,
    /// Words exactly equal to `code`.
    pub observed_code_words: u64,
    /// All other words.
    pub observed_extra_words: u64,
    /// The capture was not truncated.
    pub capture_complete: bool,
    /// `code words == requested && extra == 0`, or `None` when the capture is incomplete.
    pub exact_adherence: Option<bool>,
    /// `exact_adherence == Some(true)` under strict; always true under observe.
    pub passed: bool,
}

/// `marker_at_start`: `visible` begins with `marker`, and the marker is followed by nothing or by
/// a character Python's `str.isspace` accepts.
pub fn marker_at_start(visible: &str, marker: &str) -> bool {
    visible
        .strip_prefix(marker)
        .is_some_and(|rest| rest.chars().next().is_none_or(is_python_space))
}

/// All non-overlapping matches, left to right, of the Python regex
/// `ANVIL_REQ_-?[0-9]+_[0-9]{5}\b` (the pattern is deterministic, so no backtracking is needed).
///
/// `\b` after the last digit needs the next character to be a non-word character or the end.
/// Python's word characters are `str.isalnum()` or `_`. This uses `char::is_alphanumeric`, which
/// agrees on letters and digits of every script, but also counts as word characters the ~1,400
/// combining signs Unicode marks Other_Alphabetic (e.g. Devanagari vowel signs) and characters
/// newer than CPython 3.11's Unicode 14 tables: a marker glued to one of those is not counted
/// here where CPython would count it.
pub fn find_marker_matches(text: &str) -> Vec<&str> {
    let mut matches = Vec::new();
    let mut search_from = 0;
    while let Some(offset) = text[search_from..].find(MARKER_PREFIX) {
        let start = search_from + offset;
        match marker_end(text, start + MARKER_PREFIX.len()) {
            Some(end) => {
                matches.push(&text[start..end]);
                search_from = end;
            }
            // The prefix starts with an ASCII byte, so start + 1 is a character boundary.
            None => search_from = start + 1,
        }
    }
    matches
}

fn marker_end(text: &str, after_prefix: usize) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut at = after_prefix;
    if bytes.get(at) == Some(&b'-') {
        at += 1;
    }
    let seed_start = at;
    while bytes.get(at).is_some_and(u8::is_ascii_digit) {
        at += 1;
    }
    if at == seed_start || bytes.get(at) != Some(&b'_') {
        return None;
    }
    at += 1;
    let index_digits = bytes.get(at..at + MARKER_INDEX_DIGITS)?;
    if !index_digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let end = at + MARKER_INDEX_DIGITS;
    let next = text[end..].chars().next();
    if next.is_some_and(is_regex_word_char) {
        return None;
    }
    Some(end)
}

fn is_regex_word_char(c: char) -> bool {
    c == '_' || c.is_alphanumeric()
}

/// The `request_canary` object (§6.1) for the captured visible content.
pub fn observe_canary(visible: &str, expected_marker: &str, truncated: bool) -> RequestCanary {
    let marker_at_start = marker_at_start(visible, expected_marker);
    let matches = find_marker_matches(visible);
    let foreign_marker_count = matches.iter().filter(|m| **m != expected_marker).count() as u64;
    let capture_complete = !truncated;
    RequestCanary {
        marker: expected_marker.to_owned(),
        marker_at_start,
        observed_marker_count: matches.len() as u64,
        foreign_marker_count,
        capture_complete,
        passed: marker_at_start && foreign_marker_count == 0 && capture_complete,
    }
}

/// The `controlled_output` object (§6.1), or `None` when `response_words` is 0.
///
/// Words are counted after the expected marker (and the whitespace after it) when the marker is
/// at the start; otherwise in the whole content, so a misplaced marker counts as an extra word.
pub fn observe_controlled_output(
    visible: &str,
    expected_marker: Option<&str>,
    response_words: u64,
    policy: ControlledOutputPolicy,
    truncated: bool,
) -> Option<ControlledOutput> {
    if response_words == 0 {
        return None;
    }
    let body = match expected_marker {
        Some(marker) if marker_at_start(visible, marker) => {
            visible[marker.len()..].trim_start_matches(is_python_space)
        }
        _ => visible,
    };
    let mut code_words = 0;
    let mut extra_words = 0;
    for word in body.split(is_python_space).filter(|word| !word.is_empty()) {
        if word == CONTROLLED_OUTPUT_WORD {
            code_words += 1;
        } else {
            extra_words += 1;
        }
    }
    let capture_complete = !truncated;
    let exact_adherence =
        capture_complete.then_some(code_words == response_words && extra_words == 0);
    let passed = match policy {
        ControlledOutputPolicy::Strict => exact_adherence == Some(true),
        ControlledOutputPolicy::Observe => true,
    };
    Some(ControlledOutput {
        policy,
        requested_words: response_words,
        observed_code_words: code_words,
        observed_extra_words: extra_words,
        capture_complete,
        exact_adherence,
        passed,
    })
}

// ---------------------------------------------------------------------------------------------
// Timing row (§5)
// ---------------------------------------------------------------------------------------------

/// One `request_timings[]` row. Field names are the artifact's, including the three identical
/// TPOT keys; a row read from a reference artifact serializes back to the same keys.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RequestTiming {
    /// Request index i.
    pub request_index: u64,
    /// The clamped planned context of request i.
    pub planned_context_tokens: u64,
    /// `usage.prompt_tokens` when a non-negative integer.
    pub prompt_tokens: Option<u64>,
    /// Exact output tokens, or null when the source is not usage.
    pub output_tokens: Option<u64>,
    /// `usage`, `content_chunks`, or `unknown` (older producers).
    pub output_token_source: String,
    /// TTFO × 1000 (falls back to TTFT when no reasoning came first).
    pub time_to_first_output_ms: f64,
    /// TTFT × 1000.
    pub ttft_ms: f64,
    /// (E2E − TTFO) × 1000.
    pub generation_ms: f64,
    /// (E2E − TTFT) × 1000.
    pub visible_generation_ms: f64,
    /// E2E × 1000.
    pub e2e_ms: f64,
    /// prompt_tokens / TTFO (seconds), when both are known and TTFO > 0.
    pub effective_prefill_tok_s: Option<f64>,
    /// (output_tokens − 1) / generation (seconds), when both are positive.
    pub decode_tok_s: Option<f64>,
    /// generation × 1000 / (output_tokens − 1): the legacy name of TPOT.
    pub mean_inter_token_latency_ms: Option<f64>,
    /// Same value as `mean_inter_token_latency_ms`.
    pub mean_time_per_output_token_ms: Option<f64>,
    /// Same value as `mean_inter_token_latency_ms`.
    pub tpot_ms: Option<f64>,
    /// Reasoning deltas seen.
    pub reasoning_chunks: u64,
    /// Content deltas seen.
    pub content_chunks: u64,
    /// The canary observation, or null when canaries are off.
    pub request_canary: Option<RequestCanary>,
    /// The controlled-output observation, or null when `--response-words` is 0.
    pub controlled_output: Option<ControlledOutput>,
    /// The visible capture was cut at the limit.
    pub visible_content_truncated: bool,
    /// strobe addition (§12): `Some(n)` / `Some(None)` write `usage.prompt_tokens_details.
    /// cached_tokens` or null; `None` omits the key, as in rows of the reference producer.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "deserialize_present"
    )]
    pub cached_tokens: Option<Option<u64>>,
    /// strobe addition (§12): request start relative to the run start, in ms; omitted when `None`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at_ms: Option<f64>,
    /// strobe addition (§12, traces): when each read that carried an event arrived, in ms after
    /// the request start (`now − start` in ms, so the first may differ from `ttfo_ms` in the
    /// last bit); omitted unless the user asked for traces. See [`CHUNK_ARRIVALS_KEPT`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chunk_arrivals_ms: Option<Vec<f64>>,
    /// strobe addition (transport accounting): the browser opened a new connection for this
    /// request itself (see [`TransportFacts::new_connection`]). `None` omits the key (rows of
    /// the reference producer); `Some(None)` writes null (the browser did not say).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "deserialize_present"
    )]
    pub new_connection: Option<Option<bool>>,
    /// strobe addition (transport accounting): a CORS preflight preceded this request. Null
    /// in every browser today: see [`TransportFacts::preflight`].
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "deserialize_present"
    )]
    pub preflight: Option<Option<bool>>,
    /// strobe addition (transport accounting): ms from the row's start (just before `fetch()`)
    /// to the request leaving the browser (`requestStart`), time inside TTFO that the server
    /// never saw; see [`RequestTiming::browser_wait_ms`].
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "deserialize_present"
    )]
    pub client_queue_ms: Option<Option<f64>>,
    /// strobe addition (transport accounting): the protocol the request went over
    /// (`nextHopProtocol`: `http/1.1`, `h2`, `h3`).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "deserialize_present"
    )]
    pub http_protocol: Option<Option<String>>,
}

/// Everything a row is built from, with times in seconds (§5).
#[derive(Clone, Debug, PartialEq)]
pub struct RowInputs {
    /// Request index i.
    pub request_index: u64,
    /// The clamped planned context of request i.
    pub planned_context_tokens: u64,
    /// Time to first output, seconds.
    pub ttfo_s: Option<f64>,
    /// Time to first content, seconds.
    pub ttft_s: Option<f64>,
    /// End to end, seconds.
    pub e2e_s: f64,
    /// `usage.prompt_tokens` when exact.
    pub prompt_tokens: Option<u64>,
    /// Output tokens as counted by the stream.
    pub out_toks: Option<u64>,
    /// Where `out_toks` came from; `None` is the older producers' "unknown" (treated as exact).
    pub output_token_source: Option<OutputTokenSource>,
    /// Reasoning deltas seen.
    pub reasoning_chunks: u64,
    /// Content deltas seen.
    pub content_chunks: u64,
    /// Canary observation, if computed.
    pub request_canary: Option<RequestCanary>,
    /// Controlled-output observation, if computed.
    pub controlled_output: Option<ControlledOutput>,
    /// The visible capture was cut.
    pub visible_content_truncated: bool,
    /// See [`RequestTiming::cached_tokens`].
    pub cached_tokens: Option<Option<u64>>,
    /// See [`RequestTiming::started_at_ms`].
    pub started_at_ms: Option<f64>,
    /// See [`RequestTiming::chunk_arrivals_ms`].
    pub chunk_arrivals_ms: Option<Vec<f64>>,
}

/// The five values a row derives from its times and token counts (§5), computed in seconds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DerivedTimings {
    /// (E2E − TTFO) × 1000.
    pub generation_ms: f64,
    /// (E2E − TTFT) × 1000.
    pub visible_generation_ms: f64,
    /// prompt_tokens / TTFO.
    pub effective_prefill_tok_s: Option<f64>,
    /// decode tokens / generation.
    pub decode_tok_s: Option<f64>,
    /// generation × 1000 / decode tokens (the value of all three TPOT keys).
    pub tpot_ms: Option<f64>,
}

impl DerivedTimings {
    /// Derives from seconds in the producer's exact operation order (`decode_tokens` is
    /// `max(out − 1, 0)` when the output count is exact, else `None`).
    pub fn from_seconds(
        ttfo_s: f64,
        ttft_s: f64,
        e2e_s: f64,
        prompt_tokens: Option<u64>,
        decode_tokens: Option<u64>,
    ) -> Self {
        let generation_s = e2e_s - ttfo_s;
        let visible_generation_s = e2e_s - ttft_s;
        let decode = decode_tokens.filter(|&tokens| tokens > 0 && generation_s > 0.0);
        Self {
            generation_ms: generation_s * 1000.0,
            visible_generation_ms: visible_generation_s * 1000.0,
            effective_prefill_tok_s: prompt_tokens
                .filter(|_| ttfo_s > 0.0)
                .map(|tokens| tokens as f64 / ttfo_s),
            decode_tok_s: decode.map(|tokens| tokens as f64 / generation_s),
            tpot_ms: decode.map(|tokens| generation_s * 1000.0 / tokens as f64),
        }
    }
}

impl RequestTiming {
    /// Builds a row, or `None` under the §5 no-row rules: TTFT or E2E missing or non-finite,
    /// TTFT < 0, E2E < TTFT, or (after TTFO falls back to TTFT) TTFO < 0 or TTFO > TTFT.
    pub fn from_seconds(inputs: RowInputs) -> Option<Self> {
        let ttft_s = inputs.ttft_s.filter(|t| t.is_finite())?;
        let e2e_s = Some(inputs.e2e_s).filter(|t| t.is_finite())?;
        if ttft_s < 0.0 || e2e_s < ttft_s {
            return None;
        }
        // The reference treats a non-finite TTFO like a missing one.
        let ttfo_s = inputs.ttfo_s.filter(|t| t.is_finite()).unwrap_or(ttft_s);
        if ttfo_s < 0.0 || ttfo_s > ttft_s {
            return None;
        }
        let exact = matches!(
            inputs.output_token_source,
            None | Some(OutputTokenSource::Usage)
        );
        let decode_tokens = inputs
            .out_toks
            .filter(|_| exact)
            .map(|tokens| tokens.saturating_sub(1));
        let derived = DerivedTimings::from_seconds(
            ttfo_s,
            ttft_s,
            e2e_s,
            inputs.prompt_tokens,
            decode_tokens,
        );
        Some(Self {
            request_index: inputs.request_index,
            planned_context_tokens: inputs.planned_context_tokens,
            prompt_tokens: inputs.prompt_tokens,
            output_tokens: inputs.out_toks.filter(|_| exact),
            output_token_source: inputs
                .output_token_source
                .map_or("unknown", OutputTokenSource::as_str)
                .to_owned(),
            time_to_first_output_ms: ttfo_s * 1000.0,
            ttft_ms: ttft_s * 1000.0,
            generation_ms: derived.generation_ms,
            visible_generation_ms: derived.visible_generation_ms,
            e2e_ms: e2e_s * 1000.0,
            effective_prefill_tok_s: derived.effective_prefill_tok_s,
            decode_tok_s: derived.decode_tok_s,
            mean_inter_token_latency_ms: derived.tpot_ms,
            mean_time_per_output_token_ms: derived.tpot_ms,
            tpot_ms: derived.tpot_ms,
            reasoning_chunks: inputs.reasoning_chunks,
            content_chunks: inputs.content_chunks,
            request_canary: inputs.request_canary,
            controlled_output: inputs.controlled_output,
            visible_content_truncated: inputs.visible_content_truncated,
            cached_tokens: inputs.cached_tokens,
            started_at_ms: inputs.started_at_ms,
            chunk_arrivals_ms: inputs.chunk_arrivals_ms,
            // Transport facts come from the browser after the run: `set_transport`.
            new_connection: None,
            preflight: None,
            client_queue_ms: None,
            http_protocol: None,
        })
    }

    /// This row with generation, visible generation, prefill, decode and the three TPOT keys
    /// recomputed from its ms fields the way the producer computed them: each ms value is
    /// inverted to the seconds the producer held ([`seconds_from_ms`]) and the arithmetic is
    /// redone in seconds. Decode uses `output_tokens` when the source is `usage` or `unknown`.
    pub fn recompute_derived(&self) -> Self {
        let ttfo_s = seconds_from_ms(self.time_to_first_output_ms);
        let ttft_s = seconds_from_ms(self.ttft_ms);
        let e2e_s = seconds_from_ms(self.e2e_ms);
        let exact = matches!(self.output_token_source.as_str(), "usage" | "unknown");
        let decode_tokens = self
            .output_tokens
            .filter(|_| exact)
            .map(|tokens| tokens.saturating_sub(1));
        let derived =
            DerivedTimings::from_seconds(ttfo_s, ttft_s, e2e_s, self.prompt_tokens, decode_tokens);
        Self {
            generation_ms: derived.generation_ms,
            visible_generation_ms: derived.visible_generation_ms,
            effective_prefill_tok_s: derived.effective_prefill_tok_s,
            decode_tok_s: derived.decode_tok_s,
            mean_inter_token_latency_ms: derived.tpot_ms,
            mean_time_per_output_token_ms: derived.tpot_ms,
            tpot_ms: derived.tpot_ms,
            ..self.clone()
        }
    }
}

/// The float seconds `s` a producer held when it wrote `ms = s * 1000.0`: `ms / 1000.0`.
///
/// For every `ms` that is such a product, `(ms / 1000.0) * 1000.0 == ms` (checked on 5·10⁷ random
/// products over 30 decades, and on every reference row), so this is a valid inverse; the
/// arithmetic redone from it reproduces the producer's derived values bit for bit on the
/// reference artifact. It need not be the only inverse: about 2% of products have a neighbouring
/// `s` that maps to the same `ms`, and which one the producer held is unknowable from the file;
/// a recomputation can then differ from the producer's value in the last bit.
pub fn seconds_from_ms(ms: f64) -> f64 {
    ms / 1000.0
}

/// Deserializes a present key (even when null) as `Some(value)`, so that `Option<Option<T>>`
/// tells "absent" (`None`, via `#[serde(default)]`) from "null" (`Some(None)`).
fn deserialize_present<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    T::deserialize(deserializer).map(Some)
}

// ---------------------------------------------------------------------------------------------
// Transport accounting (strobe addition): what happened in the browser before a request left it
// ---------------------------------------------------------------------------------------------

/// A row whose [`RequestTiming::browser_wait_ms`] is above this has a TTFO that includes time
/// the browser held the request (waiting for a connection, opening one, a CORS preflight, or a
/// busy page) before sending it: time the server never saw. Measured in Chromium 156 against
/// strobe-sim on a loaded 2-core loopback machine, first waves of 16 runs each: after the
/// warm-up the wait was 2.6 ms median and 5.9 ms at most (2 of 64 rows above this bound);
/// without it 11 ms median and up to 46 ms (48 of 64 rows above).
pub const BROWSER_WAIT_FLAG_MS: f64 = 5.0;

/// The most ms between a request's start (read just before `fetch()`) and the `startTime` of
/// the browser's Resource Timing entry for it. The browser stamps the entry inside the
/// `fetch()` call (0.2–0.9 ms later in Chromium), so an entry further from every start is no
/// request of the run.
pub const MAX_FETCH_ENTRY_LAG_MS: f64 = 50.0;

/// The fields strobe reads from one `PerformanceResourceTiming` entry, in ms on the page's
/// clock (the one that stamps request starts).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ResourceTimingEntry {
    /// `startTime`: when `fetch()` created the request.
    pub start_time_ms: f64,
    /// `fetchStart`.
    pub fetch_start_ms: f64,
    /// `connectStart`: 0 when timing is withheld; equals `fetchStart` on a reused connection.
    pub connect_start_ms: f64,
    /// `connectEnd`: 0 when timing is withheld; equals `fetchStart` on a reused connection.
    pub connect_end_ms: f64,
    /// `requestStart`: just before the browser sent the request; 0 when timing is withheld.
    pub request_start_ms: f64,
    /// `nextHopProtocol`; empty when timing is withheld or unknown.
    pub next_hop_protocol: String,
    /// `responseEnd`: when the response's last byte arrived (reported even when timing is
    /// withheld); 0 while the response has not ended.
    pub response_end_ms: f64,
}

impl ResourceTimingEntry {
    /// The server withheld detailed timing from this page (no `Timing-Allow-Origin` for its
    /// origin): the browser then reports 0 for `requestStart` and the connection times.
    pub fn timing_withheld(&self) -> bool {
        self.request_start_ms == 0.0
    }
}

/// What the browser's transport did for one request, as the row's `new_connection`,
/// `preflight`, `client_queue_ms` and `http_protocol` keys. Each is `None` (written as null)
/// when the browser did not say; nothing is guessed.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TransportFacts {
    /// The request opened its own connection: `connectEnd > fetchStart` (on a reused
    /// connection the browser reports `connectStart == connectEnd == fetchStart`). A connection
    /// that the request's own CORS preflight opened looks reused, because the preflight is not
    /// reported separately; its cost shows in `client_queue_ms`.
    pub new_connection: Option<bool>,
    /// A CORS preflight preceded the request. Always `None`: Resource Timing folds the
    /// preflight into the request's own entry and reports no field for it, and the time it
    /// takes cannot be told apart from waiting for a connection or a busy page (both also
    /// delay `requestStart`), so strobe does not infer it. `client_queue_ms` carries the cost.
    pub preflight: Option<bool>,
    /// `requestStart` minus the row's start, in ms: everything the browser did before sending
    /// the request (queueing for a connection, connecting, preflight). Measured from the row's
    /// start (read just before `fetch()`, the origin of its TTFO) rather than from the entry's
    /// `startTime`, which the browser stamps 0.2–0.9 ms later inside `fetch()`, so that
    /// `TTFO − client_queue_ms` is the time from the request leaving the browser.
    pub client_queue_ms: Option<f64>,
    /// `nextHopProtocol`, e.g. `http/1.1` or `h2`.
    pub http_protocol: Option<String>,
}

impl TransportFacts {
    /// The facts one entry gives about the request started at `request_started_ms`.
    pub fn from_entry(entry: &ResourceTimingEntry, request_started_ms: f64) -> Self {
        let http_protocol =
            Some(entry.next_hop_protocol.trim()).filter(|protocol| !protocol.is_empty());
        if entry.timing_withheld() {
            return Self {
                http_protocol: http_protocol.map(str::to_owned),
                ..Self::default()
            };
        }
        let client_queue_ms = entry.request_start_ms - request_started_ms;
        Self {
            new_connection: Some(entry.connect_end_ms > entry.fetch_start_ms),
            preflight: None,
            // A negative wait would mean the two clocks disagree: say nothing rather than guess.
            client_queue_ms: Some(client_queue_ms)
                .filter(|queue_ms| queue_ms.is_finite() && *queue_ms >= 0.0),
            http_protocol: http_protocol.map(str::to_owned),
        }
    }
}

/// Pairs requests with the browser's Resource Timing entries for their URL: `result[i]` is the
/// index in `entries` of the entry of the request started at `request_started_ms[i]`, if any.
///
/// JavaScript runs one task at a time and each start is read immediately before its own
/// `fetch()` call, which stamps the entry's `startTime`, so a request's entry starts at or after
/// its start and at or before the next request's start. Taking requests in order of start, each
/// gets the earliest entry not yet taken in that window, if the entry is at most
/// [`MAX_FETCH_ENTRY_LAG_MS`] after the start. Entries before every start (the warm-up's) and
/// requests without an entry (some failed fetches) stay unpaired; requests started in the same
/// clock tick take their entries in order.
pub fn match_resource_timings(
    request_started_ms: &[f64],
    entries: &[ResourceTimingEntry],
) -> Vec<Option<usize>> {
    let mut by_start: Vec<usize> = (0..request_started_ms.len())
        .filter(|&request| request_started_ms[request].is_finite())
        .collect();
    by_start.sort_by(|&a, &b| request_started_ms[a].total_cmp(&request_started_ms[b]));
    let mut by_entry_start: Vec<usize> = (0..entries.len())
        .filter(|&entry| entries[entry].start_time_ms.is_finite())
        .collect();
    by_entry_start.sort_by(|&a, &b| {
        entries[a]
            .start_time_ms
            .total_cmp(&entries[b].start_time_ms)
    });

    let mut paired: Vec<Option<usize>> = vec![None; request_started_ms.len()];
    let mut next_entry = by_entry_start.iter().peekable();
    for (position, &request) in by_start.iter().enumerate() {
        let start_ms = request_started_ms[request];
        let next_start_ms = by_start
            .get(position + 1)
            .map_or(f64::INFINITY, |&next| request_started_ms[next]);
        let window_end_ms = next_start_ms.min(start_ms + MAX_FETCH_ENTRY_LAG_MS);
        while next_entry
            .next_if(|&&entry| entries[entry].start_time_ms < start_ms)
            .is_some()
        {}
        if let Some(&entry) =
            next_entry.next_if(|&&entry| entries[entry].start_time_ms <= window_end_ms)
        {
            paired[request] = Some(entry);
        }
    }
    paired
}

impl RequestTiming {
    /// Writes the row's transport keys (all four, null where the browser did not say).
    pub fn set_transport(&mut self, facts: &TransportFacts) {
        self.new_connection = Some(facts.new_connection);
        self.preflight = Some(facts.preflight);
        self.client_queue_ms = Some(facts.client_queue_ms);
        self.http_protocol = Some(facts.http_protocol.clone());
    }

    /// The ms of this row's TTFO that passed in the browser before the request was sent
    /// (`client_queue_ms`), when the browser reported it.
    pub fn browser_wait_ms(&self) -> Option<f64> {
        self.client_queue_ms.flatten()
    }

    /// Whether the row's TTFO includes browser-side waiting above [`BROWSER_WAIT_FLAG_MS`];
    /// `None` when the browser did not report the wait.
    pub fn ttfo_includes_browser_wait(&self) -> Option<bool> {
        self.browser_wait_ms()
            .map(|wait_ms| wait_ms > BROWSER_WAIT_FLAG_MS)
    }
}

// ---------------------------------------------------------------------------------------------
// Failures (§6.3) and browser-side request errors (§12)
// ---------------------------------------------------------------------------------------------

/// `failure_class` of a failure record.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FailureClass {
    /// Building the prompt or streaming failed; no usable response.
    RequestError,
    /// A response arrived but §4.3 rejected it.
    StreamValidationFailed,
    /// The canary did not pass.
    RequestCanaryFailed,
    /// Strict policy and the controlled output did not pass.
    ControlledOutputFailed,
    /// The worker itself failed (reduced record shape).
    RunnerError,
}

impl FailureClass {
    /// The artifact's spelling (the serde name).
    pub fn as_str(self) -> &'static str {
        match self {
            FailureClass::RequestError => "request_error",
            FailureClass::StreamValidationFailed => "stream_validation_failed",
            FailureClass::RequestCanaryFailed => "request_canary_failed",
            FailureClass::ControlledOutputFailed => "controlled_output_failed",
            FailureClass::RunnerError => "runner_error",
        }
    }
}

/// `response_metadata` of a failure whose response arrived.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ResponseMetadata {
    /// `usage` or `content_chunks`.
    pub output_token_source: String,
    /// Content deltas seen.
    pub content_chunks: u64,
    /// Reasoning deltas seen.
    pub reasoning_chunks: u64,
    /// Finish reasons seen.
    pub finish_reasons: Vec<String>,
    /// `[DONE]` or a finish reason was seen.
    pub stream_terminal_observed: bool,
    /// The visible capture was cut.
    pub visible_content_truncated: bool,
    /// The non-null members among `prompt_tokens`, `completion_tokens`, `total_tokens` of usage.
    pub usage: BTreeMap<String, Value>,
}

impl ResponseMetadata {
    /// The metadata of a received stream.
    pub fn from_stream(stream: &StreamResult) -> Self {
        let mut usage = BTreeMap::new();
        if let Some(Value::Object(fields)) = &stream.usage {
            for key in ["prompt_tokens", "completion_tokens", "total_tokens"] {
                if let Some(value) = fields.get(key).filter(|value| !value.is_null()) {
                    usage.insert(key.to_owned(), value.clone());
                }
            }
        }
        Self {
            output_token_source: stream.output_token_source.as_str().to_owned(),
            content_chunks: stream.content_chunks,
            reasoning_chunks: stream.reasoning_chunks,
            finish_reasons: stream.finish_reasons.clone(),
            stream_terminal_observed: stream.stream_terminal_observed,
            visible_content_truncated: stream.visible_content_truncated,
            usage,
        }
    }
}

/// One `failures[]` object. Optional keys are omitted exactly as §6.3 says; `Some(None)` in the
/// double options writes an explicit null.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FailureRecord {
    /// Request index i.
    pub request_index: u64,
    /// The clamped planned context (absent from `runner_error` records).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub planned_context_tokens: Option<u64>,
    /// The failure class.
    pub failure_class: FailureClass,
    /// Exception class name (`ValueError`, `HttpError`, `TypeError`, …).
    pub error_type: String,
    /// At most [`ERROR_MESSAGE_MAX_CHARS`] characters, never empty.
    pub error_message: String,
    /// The original message was longer than the limit.
    pub error_message_truncated: bool,
    /// A stream result existed (every class except `request_error` and `runner_error`).
    pub response_received: bool,
    /// Always false.
    pub performance_eligible: bool,
    /// Request start to failure, ms (absent from `runner_error` records).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elapsed_ms: Option<f64>,
    /// Present when a response arrived: the row, or null when no row is possible.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "deserialize_present"
    )]
    pub response_timing: Option<Option<RequestTiming>>,
    /// Present when a response arrived.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_metadata: Option<ResponseMetadata>,
    /// Present for canary and controlled-output failures (null when canaries were off).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "deserialize_present"
    )]
    pub request_canary: Option<Option<RequestCanary>>,
    /// Present for canary and controlled-output failures (null when `--response-words` was 0).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "deserialize_present"
    )]
    pub controlled_output: Option<Option<ControlledOutput>>,
}

impl FailureRecord {
    /// A `request_error`: the request failed before a usable stream existed.
    pub fn request_error(
        request_index: u64,
        planned_context_tokens: u64,
        error: &RequestError,
        elapsed_ms: f64,
    ) -> Self {
        let (error_message, error_message_truncated) = bounded_error_message(&error.message);
        Self {
            request_index,
            planned_context_tokens: Some(planned_context_tokens),
            failure_class: FailureClass::RequestError,
            error_type: error.error_type.clone(),
            error_message,
            error_message_truncated,
            response_received: false,
            performance_eligible: false,
            elapsed_ms: Some(elapsed_ms),
            response_timing: None,
            response_metadata: None,
            request_canary: None,
            controlled_output: None,
        }
    }

    /// The reduced `runner_error` shape, for an error that escaped the request worker itself.
    pub fn runner_error(request_index: u64, error_type: &str, message: &str) -> Self {
        let (error_message, error_message_truncated) = bounded_error_message(message);
        Self {
            request_index,
            planned_context_tokens: None,
            failure_class: FailureClass::RunnerError,
            error_type: error_type.to_owned(),
            error_message,
            error_message_truncated,
            response_received: false,
            performance_eligible: false,
            elapsed_ms: None,
            response_timing: None,
            response_metadata: None,
            request_canary: None,
            controlled_output: None,
        }
    }
}

/// The §6.3 message rule: an empty message becomes [`EMPTY_ERROR_MESSAGE`]; the first
/// [`ERROR_MESSAGE_MAX_CHARS`] characters are kept; the flag says whether anything was cut.
pub fn bounded_error_message(message: &str) -> (String, bool) {
    if message.is_empty() {
        return (EMPTY_ERROR_MESSAGE.to_owned(), false);
    }
    match message.char_indices().nth(ERROR_MESSAGE_MAX_CHARS) {
        Some((cut, _)) => (message[..cut].to_owned(), true),
        None => (message.to_owned(), false),
    }
}

/// A request that failed in the browser or in the stream, as the web layer reports it: the
/// `error_type` that lands in the artifact and a message that says what went wrong and, where
/// it can, what to change.
#[derive(Clone, Debug, Error, PartialEq, Eq)]
#[error("{error_type}: {message}")]
pub struct RequestError {
    /// `TypeError`, `HttpError`, `AbortError`, `TimeoutError`, `StreamError`, `ValueError`, …
    pub error_type: String,
    /// Human-readable, sanitized; bounded to [`ERROR_MESSAGE_MAX_CHARS`] when recorded.
    pub message: String,
}

impl RequestError {
    /// This error, saying which endpoint of a pool it came from: with several base URLs the
    /// user must know which one to fix.
    pub fn at_endpoint(self, url: &str) -> Self {
        Self {
            message: format!("from {url}: {}", self.message),
            ..self
        }
    }

    /// Any error type and message.
    pub fn new(error_type: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            error_type: error_type.into(),
            message: message.into(),
        }
    }

    /// `fetch()` rejected (`TypeError`): the network failed or CORS blocked the response. The
    /// browser's own text says nothing useful, so the remedy is added.
    pub fn fetch_failed(browser_message: &str) -> Self {
        let detail = sanitize_excerpt(browser_message, HTTP_BODY_EXCERPT_MAX_CHARS);
        Self::new(
            "TypeError",
            format!(
                "{detail} (the server is unreachable, or it does not allow this page's origin: \
                 enable CORS on the server, e.g. vLLM --allowed-origins, and check the base URL)"
            ),
        )
    }

    /// A non-2xx response (`HttpError`) with the status and a sanitized, bounded excerpt of the
    /// body. Every non-empty string in `secrets` (the API key) is replaced with `[redacted]`
    /// first, in case the server echoes it.
    pub fn http_status(status: u16, status_text: &str, body: &str, secrets: &[&str]) -> Self {
        let mut redacted = body.to_owned();
        for secret in secrets.iter().filter(|secret| !secret.is_empty()) {
            redacted = redacted.replace(secret, "[redacted]");
        }
        let excerpt = sanitize_excerpt(&redacted, HTTP_BODY_EXCERPT_MAX_CHARS);
        let status_text = sanitize_excerpt(status_text, 64);
        let mut message = format!("HTTP {status}");
        if !status_text.is_empty() {
            message.push(' ');
            message.push_str(&status_text);
        }
        if excerpt.is_empty() {
            message.push_str(" (empty body)");
        } else {
            message.push_str(": ");
            message.push_str(&excerpt);
        }
        if let Some(hint) = http_status_hint(status) {
            message.push_str("; ");
            message.push_str(hint);
        }
        Self::new("HttpError", message)
    }

    /// The user cancelled the run (`AbortError`).
    pub fn cancelled() -> Self {
        Self::new(
            "AbortError",
            "request cancelled before the response completed",
        )
    }

    /// No data arrived within the timeout (`TimeoutError`), the analogue of the reference's
    /// per-read socket timeout.
    pub fn timed_out(timeout_s: f64) -> Self {
        Self::new(
            "TimeoutError",
            format!(
                "no response data for {timeout_s} s; raise the timeout field if the server is \
                 just slow (long prompts can take minutes to prefill)"
            ),
        )
    }

    /// A stream-level failure (`StreamError`).
    pub fn stream(message: impl Into<String>) -> Self {
        Self::new("StreamError", message)
    }

    /// A chunk the reference client could not process (§11.12: a `request_error`).
    pub fn malformed_chunk(reason: &str) -> Self {
        Self::stream(format!(
            "malformed chat-completions chunk: {reason}; the server is not OpenAI-compatible \
             for streaming"
        ))
    }

    /// The server reported an error inside the stream.
    pub fn server_error_event(message: &str) -> Self {
        Self::stream(format!("the server sent an error event: {message}"))
    }
}

impl From<SseError> for RequestError {
    fn from(error: SseError) -> Self {
        Self::stream(error.to_string())
    }
}

fn http_status_hint(status: u16) -> Option<&'static str> {
    match status {
        401 | 403 => Some("check the API key"),
        404 => Some("check the base URL (it usually ends in /v1) and the model name"),
        413 => Some("the request is too large for the server; lower the context size"),
        429 => Some("the server is rate limiting; lower the concurrency"),
        _ => None,
    }
}

// ---------------------------------------------------------------------------------------------
// Disposition (§1.3 step 3, §6.2): the one call the web layer makes per request
// ---------------------------------------------------------------------------------------------

/// The plan's facts about one request that its conclusion needs.
#[derive(Clone, Debug, PartialEq)]
pub struct RequestPlanFacts {
    /// Request index i.
    pub request_index: u64,
    /// The clamped planned context of request i.
    pub planned_context_tokens: u64,
    /// `ANVIL_REQ_{seed}_{i:05}` when canaries are on.
    pub expected_marker: Option<String>,
    /// `--response-words`.
    pub response_words: u64,
    /// `--controlled-output-policy`.
    pub policy: ControlledOutputPolicy,
    /// The caller's clock at the start of the run, in ms (for the row's `started_at_ms`).
    pub run_started_ms: f64,
}

/// A request that counts as a result.
#[derive(Clone, Debug, PartialEq)]
pub struct CompletedRequest {
    /// Request index i.
    pub request_index: u64,
    /// Its timing row. `None` only when the caller's clock produced an impossible order
    /// (E2E < TTFT) or a non-finite time: the reference then kept the result without a row,
    /// and so does strobe.
    pub row: Option<RequestTiming>,
    /// Output tokens (for `metrics.output_tokens`).
    pub out_toks: u64,
    /// Where they came from (for `output_token_sources` and exactness).
    pub output_token_source: OutputTokenSource,
    /// Content deltas (for `metrics.content_chunks`).
    pub content_chunks: u64,
    /// Reasoning deltas (for `metrics.reasoning_chunks` and the protocol name).
    pub reasoning_chunks: u64,
    /// `usage.prompt_tokens` when exact.
    pub prompt_tokens: Option<u64>,
    /// `usage.prompt_tokens_details.cached_tokens` when exact.
    pub cached_tokens: Option<u64>,
    /// The reference's `cached_fraction(usage)`, input of `prefix_cache_hit_avg`.
    pub cached_fraction: Option<f64>,
    /// How the events arrived.
    pub read_stats: ReadStats,
}

/// What became of one request.
#[derive(Clone, Debug, PartialEq)]
pub enum RequestOutcome {
    /// A successful result.
    Completed(CompletedRequest),
    /// A failure record for `failures[]`.
    Failed(FailureRecord),
}

impl RequestOutcome {
    /// The request's index.
    pub fn request_index(&self) -> u64 {
        match self {
            Self::Completed(completed) => completed.request_index,
            Self::Failed(failure) => failure.request_index,
        }
    }

    /// The row this outcome carries: a result's row, or a failure's `response_timing` row.
    pub fn row(&self) -> Option<&RequestTiming> {
        match self {
            Self::Completed(completed) => completed.row.as_ref(),
            Self::Failed(failure) => failure.response_timing.as_ref().and_then(Option::as_ref),
        }
    }

    /// Writes `facts` into the row this outcome carries (see [`row`](Self::row)). An outcome
    /// without a row is left as it is.
    pub fn set_transport(&mut self, facts: &TransportFacts) {
        let row = match self {
            Self::Completed(completed) => completed.row.as_mut(),
            Self::Failed(failure) => failure.response_timing.as_mut().and_then(Option::as_mut),
        };
        if let Some(row) = row {
            row.set_transport(facts);
        }
    }
}

/// Decides the fate of one request (§1.3 steps 3.3-3.7, §4.3, §6).
///
/// `request_started_ms` is the caller's clock at the start of request i, before its prompt was
/// built; `now_ms` is read when the outcome is known. `elapsed_ms` of a failure is
/// `((now_ms - request_started_ms) / 1000.0) * 1000.0`: seconds first, then ms, as the reference
/// computed `(perf_counter() - request_started) * 1000`. The stream's own times are relative to
/// its send time ([`StreamResult::request_started_ms`]), which also gives the row's
/// `started_at_ms` relative to `plan.run_started_ms`.
pub fn conclude_request(
    plan: &RequestPlanFacts,
    request_started_ms: f64,
    outcome: Result<StreamResult, RequestError>,
    now_ms: f64,
) -> RequestOutcome {
    let elapsed_ms = ((now_ms - request_started_ms) / 1000.0) * 1000.0;
    let stream = match outcome {
        Ok(stream) => stream,
        Err(error) => {
            return RequestOutcome::Failed(FailureRecord::request_error(
                plan.request_index,
                plan.planned_context_tokens,
                &error,
                elapsed_ms,
            ))
        }
    };
    let row_inputs =
        |canary: Option<RequestCanary>, controlled: Option<ControlledOutput>| RowInputs {
            request_index: plan.request_index,
            planned_context_tokens: plan.planned_context_tokens,
            ttfo_s: stream.ttfo_s,
            ttft_s: stream.ttft_s,
            e2e_s: stream.e2e_s,
            prompt_tokens: stream.prompt_tokens(),
            out_toks: Some(stream.out_toks),
            output_token_source: Some(stream.output_token_source),
            reasoning_chunks: stream.reasoning_chunks,
            content_chunks: stream.content_chunks,
            request_canary: canary,
            controlled_output: controlled,
            visible_content_truncated: stream.visible_content_truncated,
            cached_tokens: Some(stream.cached_tokens()),
            started_at_ms: Some(stream.request_started_ms - plan.run_started_ms),
            chunk_arrivals_ms: stream.chunk_arrivals_ms.clone(),
        };
    let failure =
        |class: FailureClass,
         message: &str,
         row: Option<RequestTiming>,
         contract: Option<(Option<RequestCanary>, Option<ControlledOutput>)>| {
            let (error_message, error_message_truncated) = bounded_error_message(message);
            let (request_canary, controlled_output) = match contract {
                Some((canary, controlled)) => (Some(canary), Some(controlled)),
                None => (None, None),
            };
            RequestOutcome::Failed(FailureRecord {
                request_index: plan.request_index,
                planned_context_tokens: Some(plan.planned_context_tokens),
                failure_class: class,
                error_type: VALIDATION_ERROR_TYPE.to_owned(),
                error_message,
                error_message_truncated,
                response_received: true,
                performance_eligible: false,
                elapsed_ms: Some(elapsed_ms),
                response_timing: Some(row),
                response_metadata: Some(ResponseMetadata::from_stream(&stream)),
                request_canary,
                controlled_output,
            })
        };

    if let Err(invalid) = validate_stream(&stream) {
        let row = RequestTiming::from_seconds(row_inputs(None, None));
        return failure(
            FailureClass::StreamValidationFailed,
            &invalid.to_string(),
            row,
            None,
        );
    }

    let truncated = stream.visible_content_truncated;
    let canary = plan
        .expected_marker
        .as_deref()
        .map(|marker| observe_canary(&stream.visible_content, marker, truncated));
    let controlled = observe_controlled_output(
        &stream.visible_content,
        plan.expected_marker.as_deref(),
        plan.response_words,
        plan.policy,
        truncated,
    );
    let row = RequestTiming::from_seconds(row_inputs(canary.clone(), controlled.clone()));

    if canary.as_ref().is_some_and(|canary| !canary.passed) {
        return failure(
            FailureClass::RequestCanaryFailed,
            "request canary validation failed",
            row,
            Some((canary, controlled)),
        );
    }
    let strict = plan.policy == ControlledOutputPolicy::Strict && plan.response_words > 0;
    if strict
        && controlled
            .as_ref()
            .is_some_and(|controlled| !controlled.passed)
    {
        return failure(
            FailureClass::ControlledOutputFailed,
            "controlled output validation failed",
            row,
            Some((canary, controlled)),
        );
    }

    RequestOutcome::Completed(CompletedRequest {
        request_index: plan.request_index,
        row,
        out_toks: stream.out_toks,
        output_token_source: stream.output_token_source,
        content_chunks: stream.content_chunks,
        reasoning_chunks: stream.reasoning_chunks,
        prompt_tokens: stream.prompt_tokens(),
        cached_tokens: stream.cached_tokens(),
        cached_fraction: stream.cached_fraction(),
        read_stats: stream.read_stats,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::sse::{ChatChunk, ChoiceDelta};
    use serde_json::json;

    /// What the browser's rehearsal before a run relies on (`web::runner::rehearse_request`):
    /// the sample stream, answering with the marker and the requested words, concludes as a
    /// completed request with both checks passed, so the rehearsal runs the success path.
    #[test]
    fn a_sample_stream_that_answers_as_asked_concludes_as_completed() {
        use crate::core::sse::{sample_stream_events, SseDecoder};
        let marker = "ANVIL_REQ_7_00000".to_string();
        let mut content = vec![marker.clone()];
        content.extend(std::iter::repeat_n(" code".to_string(), 24));
        let mut decoder = SseDecoder::new();
        let mut accumulator = StreamAccumulator::new(0.0);
        let mut flow = StreamFlow::Continue;
        for (read, event) in sample_stream_events(8, &content).iter().enumerate() {
            let mut decoded = Vec::new();
            decoder
                .push(event.as_bytes(), &mut decoded)
                .expect("a valid stream");
            let events: Vec<ChunkEvent> = decoded.iter().map(ChunkEvent::from_sse).collect();
            flow = accumulator.on_read_events(read as f64, &events);
            if flow == StreamFlow::Stop {
                break;
            }
        }
        assert_eq!(flow, StreamFlow::Stop, "[DONE] ends the reading");
        let facts = RequestPlanFacts {
            request_index: 0,
            planned_context_tokens: 1024,
            expected_marker: Some(marker),
            response_words: 24,
            policy: ControlledOutputPolicy::Strict,
            run_started_ms: 0.0,
        };
        let stream = accumulator.finish(40.0).expect("a complete stream");
        match conclude_request(&facts, 0.0, Ok(stream), 41.0) {
            RequestOutcome::Completed(_) => {}
            RequestOutcome::Failed(failure) => panic!("failed: {failure:?}"),
        }
    }

    #[test]
    fn failure_class_spelling_is_the_serde_name() {
        for class in [
            FailureClass::RequestError,
            FailureClass::StreamValidationFailed,
            FailureClass::RequestCanaryFailed,
            FailureClass::ControlledOutputFailed,
            FailureClass::RunnerError,
        ] {
            assert_eq!(serde_json::to_value(class).unwrap(), class.as_str());
        }
    }

    fn content(text: &str) -> ChunkEvent {
        ChunkEvent::Chunk(ChatChunk {
            choices: vec![ChoiceDelta {
                content: Some(text.to_owned()),
                ..ChoiceDelta::default()
            }],
            usage: None,
        })
    }

    fn reasoning(text: &str) -> ChunkEvent {
        ChunkEvent::Chunk(ChatChunk {
            choices: vec![ChoiceDelta {
                reasoning: Some(text.to_owned()),
                ..ChoiceDelta::default()
            }],
            usage: None,
        })
    }

    fn finish_reason(reason: &str) -> ChunkEvent {
        ChunkEvent::Chunk(ChatChunk {
            choices: vec![ChoiceDelta {
                finish_reason: Some(reason.to_owned()),
                ..ChoiceDelta::default()
            }],
            usage: None,
        })
    }

    fn usage(value: Value) -> ChunkEvent {
        ChunkEvent::Chunk(ChatChunk {
            choices: Vec::new(),
            usage: Some(value),
        })
    }

    /// A stream of `reads`, each `(arrival ms, events)`, ended at `end_ms`.
    fn observe(start_ms: f64, reads: &[(f64, Vec<ChunkEvent>)], end_ms: f64) -> StreamResult {
        let mut accumulator = StreamAccumulator::new(start_ms);
        for (now_ms, events) in reads {
            if accumulator.on_read_events(*now_ms, events) == StreamFlow::Stop {
                break;
            }
        }
        accumulator.finish(end_ms).expect("well-formed stream")
    }

    fn plan(marker: Option<&str>, words: u64, policy: ControlledOutputPolicy) -> RequestPlanFacts {
        RequestPlanFacts {
            request_index: 3,
            planned_context_tokens: 8192,
            expected_marker: marker.map(str::to_owned),
            response_words: words,
            policy,
            run_started_ms: 100.0,
        }
    }

    fn good_stream(text: &str) -> StreamResult {
        observe(
            1000.0,
            &[
                (1100.0, vec![reasoning("r")]),
                (1250.5, vec![content(text)]),
                (
                    1300.0,
                    vec![
                        finish_reason("stop"),
                        usage(json!({"prompt_tokens": 100, "completion_tokens": 12,
                                     "total_tokens": 112})),
                        ChunkEvent::Done,
                    ],
                ),
            ],
            1301.0,
        )
    }

    #[test]
    fn reasoning_first_gives_ttfo_before_ttft() {
        let result = good_stream("hi");
        assert_eq!(result.ttfo_s, Some((1100.0 - 1000.0) / 1000.0));
        assert_eq!(result.ttft_s, Some((1250.5 - 1000.0) / 1000.0));
        assert_eq!(result.e2e_s, (1301.0 - 1000.0) / 1000.0);
        assert!(result.ttfo_s < result.ttft_s);
        assert_eq!((result.reasoning_chunks, result.content_chunks), (1, 1));
    }

    #[test]
    fn one_clock_reading_stamps_every_event_of_a_read() {
        let result = observe(
            0.0,
            &[
                (5.0, vec![]),
                (7.25, vec![content("a"), content("b"), reasoning("late")]),
                (9.0, vec![content("c"), finish_reason("stop")]),
            ],
            10.0,
        );
        assert_eq!(result.ttfo_s, Some(7.25 / 1000.0));
        assert_eq!(result.ttft_s, result.ttfo_s);
        assert_eq!(result.visible_content, "abc");
        assert_eq!(
            result.read_stats,
            ReadStats {
                reads: 3,
                events: 5,
                events_sharing_a_read: 5,
                ignored_payloads: 0
            }
        );
    }

    #[test]
    fn events_before_the_first_read_are_stamped_with_the_start() {
        let mut accumulator = StreamAccumulator::new(42.0);
        accumulator.on_event(&content("x"));
        let result = accumulator.finish(50.0).expect("well-formed");
        assert_eq!(result.ttft_s, Some(0.0));
    }

    #[test]
    fn reasoning_only_stream_has_no_visible_content() {
        let result = observe(
            0.0,
            &[(
                10.0,
                vec![reasoning("a"), reasoning("b"), finish_reason("length")],
            )],
            11.0,
        );
        assert_eq!(result.ttfo_s, Some(0.01));
        assert_eq!(result.ttft_s, None);
        assert_eq!(result.reasoning_chunks, 2);
        assert_eq!(
            validate_stream(&result),
            Err(StreamValidationError::NoVisibleContent)
        );
        assert_eq!(
            StreamValidationError::NoVisibleContent.to_string(),
            "stream completed without visible content"
        );
    }

    #[test]
    fn a_stream_needs_done_or_a_finish_reason() {
        let cut = observe(0.0, &[(10.0, vec![content("a")])], 11.0);
        assert!(!cut.stream_terminal_observed);
        assert_eq!(
            validate_stream(&cut),
            Err(StreamValidationError::NoTerminalEvent)
        );
        assert_eq!(
            StreamValidationError::NoTerminalEvent.to_string(),
            "stream ended without a terminal event or finish reason"
        );
        let finished = observe(
            0.0,
            &[(10.0, vec![content("a"), finish_reason("stop")])],
            11.0,
        );
        assert!(finished.stream_terminal_observed && !finished.done_observed);
        assert_eq!(validate_stream(&finished), Ok(()));
        let done = observe(0.0, &[(10.0, vec![content("a"), ChunkEvent::Done])], 11.0);
        assert!(done.stream_terminal_observed && done.done_observed);
        assert_eq!(validate_stream(&done), Ok(()));
    }

    #[test]
    fn visible_content_check_comes_before_terminal_check() {
        let empty = observe(0.0, &[(10.0, vec![ChunkEvent::Ignored])], 11.0);
        assert_eq!(
            validate_stream(&empty),
            Err(StreamValidationError::NoVisibleContent)
        );
        assert_eq!(empty.read_stats.ignored_payloads, 1);
    }

    #[test]
    fn nothing_after_done_is_consumed() {
        let mut accumulator = StreamAccumulator::new(0.0);
        let flow = accumulator.on_read_events(
            1.0,
            &[
                content("a"),
                ChunkEvent::Done,
                content("b"),
                finish_reason("x"),
            ],
        );
        assert_eq!(flow, StreamFlow::Stop);
        assert_eq!(accumulator.on_event(&content("c")), StreamFlow::Stop);
        let result = accumulator.finish(2.0).expect("well-formed");
        assert_eq!(result.visible_content, "a");
        assert_eq!(result.content_chunks, 1);
        assert!(result.finish_reasons.is_empty());
        assert_eq!(result.read_stats.events, 2);
    }

    #[test]
    fn last_non_empty_usage_wins_and_sets_the_token_source() {
        let result = observe(
            0.0,
            &[(
                1.0,
                vec![
                    content("a"),
                    usage(json!({"completion_tokens": 5})),
                    usage(json!({"completion_tokens": 9, "prompt_tokens": 4,
                                 "prompt_tokens_details": {"cached_tokens": 2}})),
                    finish_reason("stop"),
                ],
            )],
            2.0,
        );
        assert_eq!(result.out_toks, 9);
        assert_eq!(result.output_token_source, OutputTokenSource::Usage);
        assert_eq!(result.prompt_tokens(), Some(4));
        assert_eq!(result.cached_tokens(), Some(2));
        assert_eq!(result.cached_fraction(), Some(0.5));
    }

    #[test]
    fn inexact_completion_tokens_fall_back_to_content_chunks() {
        for completion in [json!(5.0), json!(-1), json!(true), json!("5"), json!(null)] {
            let result = observe(
                0.0,
                &[(
                    1.0,
                    vec![
                        content("a"),
                        content("b"),
                        usage(json!({"completion_tokens": completion, "prompt_tokens": 1})),
                    ],
                )],
                2.0,
            );
            assert_eq!(result.out_toks, 2, "{completion}");
            assert_eq!(result.output_token_source, OutputTokenSource::ContentChunks);
        }
    }

    #[test]
    fn cached_fraction_skips_what_the_reference_skips() {
        let with_usage = |value: Value| StreamResult {
            usage: Some(value),
            ..observe(0.0, &[], 1.0)
        };
        assert_eq!(observe(0.0, &[], 1.0).cached_fraction(), None);
        assert_eq!(
            with_usage(json!({"prompt_tokens": 10})).cached_fraction(),
            None
        );
        assert_eq!(
            with_usage(json!({"prompt_tokens": 0, "prompt_tokens_details": {"cached_tokens": 0}}))
                .cached_fraction(),
            None
        );
        assert_eq!(
            with_usage(json!({"prompt_tokens": 8, "prompt_tokens_details": {"cached_tokens": 0}}))
                .cached_fraction(),
            Some(0.0)
        );
        assert_eq!(
            with_usage(json!({"prompt_tokens": 8, "prompt_tokens_details": null})).cached_tokens(),
            None
        );
    }

    #[test]
    fn capture_stops_at_8192_characters_not_bytes() {
        let almost = "é".repeat(VISIBLE_CONTENT_CAPTURE_LIMIT - 2);
        let result = observe(
            0.0,
            &[(1.0, vec![content(&almost), content("世界🎉")])],
            2.0,
        );
        assert!(result.visible_content_truncated);
        assert_eq!(
            result.visible_content.chars().count(),
            VISIBLE_CONTENT_CAPTURE_LIMIT
        );
        assert!(result.visible_content.ends_with("éé世界"));
        assert_eq!(result.content_chunks, 2);

        let exact = "🎉".repeat(VISIBLE_CONTENT_CAPTURE_LIMIT);
        let full = observe(0.0, &[(1.0, vec![content(&exact)])], 2.0);
        assert!(!full.visible_content_truncated);
        assert_eq!(full.visible_content, exact);

        let more = observe(0.0, &[(1.0, vec![content(&exact), content("x")])], 2.0);
        assert!(more.visible_content_truncated);
        assert_eq!(more.visible_content, exact);
    }

    #[test]
    fn malformed_chunks_and_server_errors_fail_the_request() {
        let mut accumulator = StreamAccumulator::new(0.0);
        let flow = accumulator.on_read_events(
            1.0,
            &[
                content("a"),
                ChunkEvent::Malformed {
                    reason: "choices is null".to_owned(),
                },
                ChunkEvent::Done,
            ],
        );
        assert_eq!(flow, StreamFlow::Stop);
        assert_eq!(accumulator.read_stats().events, 2);
        let error = accumulator.finish(2.0).expect_err("malformed chunk");
        assert_eq!(error.error_type, "StreamError");
        assert!(error.message.contains("choices is null"), "{error}");

        let mut accumulator = StreamAccumulator::new(0.0);
        accumulator.on_read(1.0);
        accumulator.on_event(&ChunkEvent::ServerError {
            message: "out of memory".to_owned(),
        });
        let error = accumulator.finish(2.0).expect_err("server error");
        assert_eq!(error.error_type, "StreamError");
        assert!(error.message.contains("out of memory"), "{error}");
    }

    #[test]
    fn finish_reasons_are_kept_in_order_and_bounded() {
        let events: Vec<_> = (0..FINISH_REASONS_KEPT + 5)
            .map(|i| finish_reason(&format!("r{i}")))
            .collect();
        let result = observe(0.0, &[(1.0, events)], 2.0);
        assert_eq!(result.finish_reasons.len(), FINISH_REASONS_KEPT);
        assert_eq!(result.finish_reasons[0], "r0");
        assert_eq!(
            result.finish_reasons[FINISH_REASONS_KEPT - 1],
            format!("r{}", FINISH_REASONS_KEPT - 1)
        );
    }

    #[test]
    fn canary_examples_from_the_spec() {
        let marker = "ANVIL_REQ_0_00000";
        let passing = observe_canary("ANVIL_REQ_0_00000 summary", marker, false);
        assert_eq!(
            passing,
            RequestCanary {
                marker: marker.to_owned(),
                marker_at_start: true,
                observed_marker_count: 1,
                foreign_marker_count: 0,
                capture_complete: true,
                passed: true,
            }
        );
        let colon = observe_canary("ANVIL_REQ_0_00000: summary", marker, false);
        assert!(!colon.marker_at_start && !colon.passed);
        assert_eq!(colon.observed_marker_count, 1);
        let late = observe_canary("\n\nANVIL_REQ_0_00000 summary", marker, false);
        assert!(!late.marker_at_start && !late.passed);
        let truncated = observe_canary("ANVIL_REQ_0_00000 summary", marker, true);
        assert!(truncated.marker_at_start && !truncated.capture_complete && !truncated.passed);
        let foreign = observe_canary("ANVIL_REQ_0_00000 and ANVIL_REQ_0_00001.", marker, false);
        assert_eq!(
            (foreign.observed_marker_count, foreign.foreign_marker_count),
            (2, 1)
        );
        assert!(!foreign.passed);
        let repeated = observe_canary("ANVIL_REQ_0_00000 ANVIL_REQ_0_00000", marker, false);
        assert_eq!(repeated.observed_marker_count, 2);
        assert!(repeated.passed);
    }

    #[test]
    fn marker_at_start_accepts_python_whitespace_and_the_end() {
        let marker = "ANVIL_REQ_7_00001";
        assert!(marker_at_start(marker, marker));
        for follower in ["\t", "\n", "\u{1c}", "\u{85}", "\u{a0}", "\u{3000}"] {
            assert!(
                marker_at_start(&format!("{marker}{follower}x"), marker),
                "{follower:?}"
            );
        }
        for follower in [".", ":", "x", "0", "\u{200b}"] {
            assert!(
                !marker_at_start(&format!("{marker}{follower}"), marker),
                "{follower:?}"
            );
        }
        assert!(!marker_at_start("ANVIL_REQ_7_0000", marker));
    }

    #[test]
    fn marker_regex_matches_python_re() {
        // Expected lists from CPython 3.11.7:
        // re.compile(r"ANVIL_REQ_-?[0-9]+_[0-9]{5}\b").findall(text)
        let cases: [(&str, &[&str]); 23] = [
            ("ANVIL_REQ_1_00000x", &[]),
            ("ANVIL_REQ_1_00000é", &[]),
            ("ANVIL_REQ_1_00000 ", &["ANVIL_REQ_1_00000"]),
            ("ANVIL_REQ_1_00000.", &["ANVIL_REQ_1_00000"]),
            ("ANVIL_REQ_1_000001", &[]),
            ("ANVIL_REQ_-5_00000", &["ANVIL_REQ_-5_00000"]),
            ("ANVIL_REQ_-_00000", &[]),
            ("ANVIL_REQ__00000", &[]),
            ("ANVIL_REQ_1_0000", &[]),
            ("ANVIL_REQ_1_00000ANVIL_REQ_2_00001", &["ANVIL_REQ_2_00001"]),
            ("xANVIL_REQ_1_00000 ", &["ANVIL_REQ_1_00000"]),
            ("ANVIL_REQ_1_00000_", &[]),
            ("ANVIL_REQ_1_00000世", &[]),
            ("ANVIL_REQ_1_00000🎉", &["ANVIL_REQ_1_00000"]),
            ("ANVIL_REQ_1_00000-", &["ANVIL_REQ_1_00000"]),
            (
                "ANVIL_REQ_12_34567,ANVIL_REQ_12_34568",
                &["ANVIL_REQ_12_34567", "ANVIL_REQ_12_34568"],
            ),
            ("ANVIL_REQ_1_2_00000", &[]),
            ("ANVIL_REQ_ANVIL_REQ_3_00003", &["ANVIL_REQ_3_00003"]),
            ("ANVIL_REQ_1_00000٣", &[]),
            ("ANVIL_REQ_1_00000²", &[]),
            ("ANVIL_REQ_1_00000\u{a0}", &["ANVIL_REQ_1_00000"]),
            ("ANVIL_REQ_--1_00000", &[]),
            ("ANVIL_REQ_１_00000", &[]),
        ];
        for (text, expected) in cases {
            assert_eq!(find_marker_matches(text), expected, "{text:?}");
        }
    }

    #[test]
    fn controlled_output_counts_words_after_the_marker() {
        let marker = Some("ANVIL_REQ_1_00000");
        let exact = observe_controlled_output(
            "ANVIL_REQ_1_00000 \u{1c}code code\ncode",
            marker,
            3,
            ControlledOutputPolicy::Strict,
            false,
        )
        .expect("W > 0");
        assert_eq!(
            exact,
            ControlledOutput {
                policy: ControlledOutputPolicy::Strict,
                requested_words: 3,
                observed_code_words: 3,
                observed_extra_words: 0,
                capture_complete: true,
                exact_adherence: Some(true),
                passed: true,
            }
        );
        // A misplaced marker is an extra word; `code,` and `Code` are extra words.
        let misplaced = observe_controlled_output(
            "ANVIL_REQ_1_00000: code, Code code",
            marker,
            3,
            ControlledOutputPolicy::Strict,
            false,
        )
        .expect("W > 0");
        assert_eq!(
            (
                misplaced.observed_code_words,
                misplaced.observed_extra_words
            ),
            (1, 3)
        );
        assert_eq!(misplaced.exact_adherence, Some(false));
        assert!(!misplaced.passed);
        let no_canary =
            observe_controlled_output("code code", None, 3, ControlledOutputPolicy::Observe, false)
                .expect("W > 0");
        assert_eq!(no_canary.exact_adherence, Some(false));
        assert!(no_canary.passed, "observe never fails");
    }

    #[test]
    fn controlled_output_is_unobservable_when_truncated() {
        let strict =
            observe_controlled_output("code", None, 1, ControlledOutputPolicy::Strict, true)
                .expect("W > 0");
        assert_eq!(strict.exact_adherence, None);
        assert!(!strict.passed);
        let observe =
            observe_controlled_output("code", None, 1, ControlledOutputPolicy::Observe, true)
                .expect("W > 0");
        assert_eq!(observe.exact_adherence, None);
        assert!(observe.passed);
        assert_eq!(
            observe_controlled_output("code", None, 0, ControlledOutputPolicy::Strict, false),
            None
        );
    }

    #[test]
    fn controlled_output_serializes_null_adherence() {
        let value = serde_json::to_value(
            observe_controlled_output("", None, 2, ControlledOutputPolicy::Observe, true)
                .expect("W > 0"),
        )
        .expect("serializable");
        assert_eq!(
            value,
            json!({"policy": "observe", "requested_words": 2, "observed_code_words": 0,
                   "observed_extra_words": 0, "capture_complete": false,
                   "exact_adherence": null, "passed": true})
        );
    }

    fn row_inputs() -> RowInputs {
        RowInputs {
            request_index: 0,
            planned_context_tokens: 1024,
            ttfo_s: Some(0.5),
            ttft_s: Some(1.0),
            e2e_s: 2.0,
            prompt_tokens: Some(100),
            out_toks: Some(11),
            output_token_source: Some(OutputTokenSource::Usage),
            reasoning_chunks: 1,
            content_chunks: 2,
            request_canary: None,
            controlled_output: None,
            visible_content_truncated: false,
            cached_tokens: None,
            started_at_ms: None,
            chunk_arrivals_ms: None,
        }
    }

    #[test]
    fn row_formulas() {
        let row = RequestTiming::from_seconds(row_inputs()).expect("valid times");
        assert_eq!(row.time_to_first_output_ms, 500.0);
        assert_eq!(row.generation_ms, 1500.0);
        assert_eq!(row.visible_generation_ms, 1000.0);
        assert_eq!(row.effective_prefill_tok_s, Some(200.0));
        assert_eq!(row.decode_tok_s, Some(10.0 / 1.5));
        assert_eq!(row.tpot_ms, Some(150.0));
        assert_eq!(row.mean_inter_token_latency_ms, row.tpot_ms);
        assert_eq!(row.mean_time_per_output_token_ms, row.tpot_ms);
        assert_eq!(row.output_tokens, Some(11));
    }

    #[test]
    fn no_row_when_times_are_impossible() {
        let cases = [
            RowInputs {
                ttft_s: None,
                ..row_inputs()
            },
            RowInputs {
                ttft_s: Some(f64::NAN),
                ..row_inputs()
            },
            RowInputs {
                e2e_s: f64::INFINITY,
                ..row_inputs()
            },
            RowInputs {
                ttft_s: Some(-0.1),
                ttfo_s: None,
                ..row_inputs()
            },
            RowInputs {
                e2e_s: 0.9,
                ..row_inputs()
            },
            RowInputs {
                ttfo_s: Some(1.5),
                ..row_inputs()
            },
            RowInputs {
                ttfo_s: Some(-0.5),
                ..row_inputs()
            },
        ];
        for inputs in cases {
            assert_eq!(
                RequestTiming::from_seconds(inputs.clone()),
                None,
                "{inputs:?}"
            );
        }
    }

    #[test]
    fn ttfo_falls_back_to_ttft() {
        let row = RequestTiming::from_seconds(RowInputs {
            ttfo_s: None,
            ..row_inputs()
        })
        .expect("valid times");
        assert_eq!(row.time_to_first_output_ms, row.ttft_ms);
    }

    #[test]
    fn inexact_counts_and_zero_times_leave_rates_null() {
        let chunks = RequestTiming::from_seconds(RowInputs {
            output_token_source: Some(OutputTokenSource::ContentChunks),
            ..row_inputs()
        })
        .expect("valid times");
        assert_eq!(chunks.output_tokens, None);
        assert_eq!(chunks.output_token_source, "content_chunks");
        assert_eq!((chunks.decode_tok_s, chunks.tpot_ms), (None, None));

        let unknown = RequestTiming::from_seconds(RowInputs {
            output_token_source: None,
            ..row_inputs()
        })
        .expect("valid times");
        assert_eq!(unknown.output_token_source, "unknown");
        assert_eq!(unknown.output_tokens, Some(11), "unknown counts as exact");

        let one_token = RequestTiming::from_seconds(RowInputs {
            out_toks: Some(1),
            ..row_inputs()
        })
        .expect("valid times");
        assert_eq!((one_token.decode_tok_s, one_token.tpot_ms), (None, None));

        let instant = RequestTiming::from_seconds(RowInputs {
            ttfo_s: Some(0.0),
            ttft_s: Some(0.0),
            e2e_s: 0.0,
            ..row_inputs()
        })
        .expect("valid times");
        assert_eq!(instant.effective_prefill_tok_s, None);
        assert_eq!(instant.decode_tok_s, None);
    }

    #[test]
    fn plain_rows_omit_strobe_keys_and_strobe_rows_write_null_cached_tokens() {
        let plain =
            serde_json::to_value(RequestTiming::from_seconds(row_inputs())).expect("serializable");
        assert!(plain.get("cached_tokens").is_none());
        assert!(plain.get("started_at_ms").is_none());
        let strobe = serde_json::to_value(RequestTiming::from_seconds(RowInputs {
            cached_tokens: Some(None),
            started_at_ms: Some(12.5),
            ..row_inputs()
        }))
        .expect("serializable");
        assert_eq!(strobe["cached_tokens"], Value::Null);
        assert_eq!(strobe["started_at_ms"], json!(12.5));
        let back: RequestTiming = serde_json::from_value(strobe).expect("deserializable");
        assert_eq!(back.cached_tokens, Some(None));
    }

    #[test]
    fn generation_is_computed_in_seconds_like_the_producer() {
        // CPython: ttfo = (t1 - start) / 1000; e2e = (end - start) / 1000;
        // (e2e - ttfo) * 1000.0 == 7953.983720001313, while the ms difference
        // e2e * 1000.0 - ttfo * 1000.0 == 7953.9837200013135.
        let (start, t1, end) = (62667.26779408049, 70087.71981679519, 78041.7035367965);
        let stream = observe(
            start,
            &[(t1, vec![content("a"), finish_reason("stop")])],
            end,
        );
        let row = RequestTiming::from_seconds(RowInputs {
            ttfo_s: stream.ttfo_s,
            ttft_s: stream.ttft_s,
            e2e_s: stream.e2e_s,
            ..row_inputs()
        })
        .expect("valid times");
        assert_eq!(row.generation_ms, 7953.983720001313);
    }

    #[test]
    fn seconds_from_ms_inverts_producer_products() {
        // 29.016414840733052 s was written as 29016.414840733054 ms; CPython shows that
        // 29.016414840733056 maps to the same ms, so either is a valid inverse.
        let ms = 29.016414840733052_f64 * 1000.0;
        assert_eq!(ms, 29016.414840733054);
        assert_eq!(seconds_from_ms(ms) * 1000.0, ms);
    }

    #[test]
    fn error_messages_are_bounded_and_never_empty() {
        assert_eq!(
            bounded_error_message(""),
            (EMPTY_ERROR_MESSAGE.to_owned(), false)
        );
        let exact = "é".repeat(ERROR_MESSAGE_MAX_CHARS);
        assert_eq!(bounded_error_message(&exact), (exact.clone(), false));
        let long = format!("{exact}🎉");
        assert_eq!(bounded_error_message(&long), (exact, true));
    }

    #[test]
    fn http_errors_carry_status_and_a_clean_bounded_excerpt() {
        let error = RequestError::http_status(
            401,
            "Unauthorized",
            "{\"error\": \"invalid key sk-secret\"}\r\n\u{7}",
            &["sk-secret", ""],
        );
        assert_eq!(error.error_type, "HttpError");
        assert_eq!(
            error.message,
            "HTTP 401 Unauthorized: {\"error\": \"invalid key [redacted]\"}; check the API key"
        );
        let huge = RequestError::http_status(500, "", &"x".repeat(100_000), &[]);
        assert!(huge.message.starts_with("HTTP 500: xxx"));
        assert!(huge.message.chars().count() < HTTP_BODY_EXCERPT_MAX_CHARS + 20);
        let empty = RequestError::http_status(502, "Bad Gateway", " \n", &[]);
        assert_eq!(empty.message, "HTTP 502 Bad Gateway (empty body)");
    }

    #[test]
    fn browser_errors_have_their_types() {
        assert_eq!(
            RequestError::fetch_failed("Failed to fetch").error_type,
            "TypeError"
        );
        assert!(RequestError::fetch_failed("Failed to fetch")
            .message
            .contains("CORS"));
        assert_eq!(RequestError::cancelled().error_type, "AbortError");
        assert_eq!(RequestError::timed_out(900.0).error_type, "TimeoutError");
        let sse = RequestError::from(SseError::LineTooLong { limit_bytes: 8 });
        assert_eq!(sse.error_type, "StreamError");
        assert!(sse.message.contains("8 bytes"));
    }

    fn keys(value: &Value) -> Vec<&str> {
        let mut keys: Vec<&str> = value
            .as_object()
            .expect("an object")
            .keys()
            .map(String::as_str)
            .collect();
        keys.sort_unstable();
        keys
    }

    fn failed(outcome: RequestOutcome) -> FailureRecord {
        match outcome {
            RequestOutcome::Failed(record) => record,
            RequestOutcome::Completed(done) => panic!("expected a failure, got {done:?}"),
        }
    }

    #[test]
    fn request_error_shape() {
        let record = failed(conclude_request(
            &plan(None, 0, ControlledOutputPolicy::Observe),
            1000.0,
            Err(RequestError::fetch_failed("Failed to fetch")),
            1250.0,
        ));
        assert_eq!(record.failure_class, FailureClass::RequestError);
        assert_eq!(record.error_type, "TypeError");
        assert_eq!(
            record.elapsed_ms,
            Some(((1250.0 - 1000.0) / 1000.0) * 1000.0)
        );
        let value = serde_json::to_value(&record).expect("serializable");
        assert_eq!(
            keys(&value),
            [
                "elapsed_ms",
                "error_message",
                "error_message_truncated",
                "error_type",
                "failure_class",
                "performance_eligible",
                "planned_context_tokens",
                "request_index",
                "response_received"
            ]
        );
        assert_eq!(value["failure_class"], "request_error");
        assert_eq!(value["response_received"], false);
    }

    #[test]
    fn runner_error_shape() {
        let value = serde_json::to_value(FailureRecord::runner_error(4, "RuntimeError", ""))
            .expect("serializable");
        assert_eq!(
            value,
            json!({"request_index": 4, "error_type": "RuntimeError",
                   "error_message": "<empty exception message>",
                   "error_message_truncated": false, "response_received": false,
                   "performance_eligible": false, "failure_class": "runner_error"})
        );
    }

    #[test]
    fn stream_validation_failure_keeps_metadata_and_a_null_row() {
        let reasoning_only = observe(
            0.0,
            &[(
                10.0,
                vec![
                    reasoning("r"),
                    finish_reason("length"),
                    usage(json!({"prompt_tokens": 7, "completion_tokens": 8,
                                 "total_tokens": null})),
                ],
            )],
            20.0,
        );
        let record = failed(conclude_request(
            &plan(
                Some("ANVIL_REQ_1_00003"),
                0,
                ControlledOutputPolicy::Observe,
            ),
            0.0,
            Ok(reasoning_only),
            21.0,
        ));
        assert_eq!(record.failure_class, FailureClass::StreamValidationFailed);
        assert_eq!(record.error_type, "ValueError");
        assert_eq!(
            record.error_message,
            "stream completed without visible content"
        );
        let value = serde_json::to_value(&record).expect("serializable");
        assert_eq!(value["response_timing"], Value::Null);
        assert!(value.get("request_canary").is_none());
        assert_eq!(
            value["response_metadata"],
            json!({"output_token_source": "usage", "content_chunks": 0, "reasoning_chunks": 1,
                   "finish_reasons": ["length"], "stream_terminal_observed": true,
                   "visible_content_truncated": false,
                   "usage": {"prompt_tokens": 7, "completion_tokens": 8}})
        );
    }

    #[test]
    fn unterminated_stream_failure_keeps_its_row() {
        let cut = observe(0.0, &[(10.0, vec![content("ANVIL_REQ_1_00003 x")])], 20.0);
        let record = failed(conclude_request(
            &plan(
                Some("ANVIL_REQ_1_00003"),
                0,
                ControlledOutputPolicy::Observe,
            ),
            0.0,
            Ok(cut),
            21.0,
        ));
        assert_eq!(record.failure_class, FailureClass::StreamValidationFailed);
        let row = record
            .response_timing
            .flatten()
            .expect("times are valid, so a row exists");
        assert_eq!(row.ttft_ms, 10.0);
        assert_eq!(
            row.request_canary, None,
            "validation runs before the canary"
        );
        assert_eq!(row.output_token_source, "content_chunks");
    }

    #[test]
    fn canary_failure_comes_before_controlled_output_failure() {
        let record = failed(conclude_request(
            &plan(Some("ANVIL_REQ_1_00003"), 2, ControlledOutputPolicy::Strict),
            1000.0,
            Ok(good_stream("ANVIL_REQ_1_00004 code code")),
            1400.0,
        ));
        assert_eq!(record.failure_class, FailureClass::RequestCanaryFailed);
        assert_eq!(record.error_message, "request canary validation failed");
        let canary = record.request_canary.clone().flatten().expect("computed");
        assert_eq!(canary.foreign_marker_count, 1);
        let controlled = record.controlled_output.clone().flatten().expect("W > 0");
        assert_eq!(controlled.observed_extra_words, 1);
        let row = record
            .response_timing
            .clone()
            .flatten()
            .expect("valid times");
        assert_eq!(row.request_canary, Some(canary));
    }

    #[test]
    fn canary_failure_without_controlled_output_writes_null() {
        let record = failed(conclude_request(
            &plan(
                Some("ANVIL_REQ_1_00003"),
                0,
                ControlledOutputPolicy::Observe,
            ),
            1000.0,
            Ok(good_stream("Sure! ANVIL_REQ_1_00003")),
            1400.0,
        ));
        let value = serde_json::to_value(&record).expect("serializable");
        assert_eq!(value["controlled_output"], Value::Null);
        assert_eq!(value["request_canary"]["marker_at_start"], false);
    }

    #[test]
    fn strict_controlled_output_failure() {
        let record = failed(conclude_request(
            &plan(Some("ANVIL_REQ_1_00003"), 3, ControlledOutputPolicy::Strict),
            1000.0,
            Ok(good_stream("ANVIL_REQ_1_00003 code code")),
            1400.0,
        ));
        assert_eq!(record.failure_class, FailureClass::ControlledOutputFailed);
        assert_eq!(record.error_message, "controlled output validation failed");
        assert!(record.request_canary.flatten().is_some_and(|c| c.passed));
    }

    #[test]
    fn observe_policy_keeps_non_exact_output_as_a_success() {
        let outcome = conclude_request(
            &plan(
                Some("ANVIL_REQ_1_00003"),
                3,
                ControlledOutputPolicy::Observe,
            ),
            990.0,
            Ok(good_stream("ANVIL_REQ_1_00003 code code")),
            1400.0,
        );
        let RequestOutcome::Completed(done) = outcome else {
            panic!("observe must not fail: {outcome:?}");
        };
        let row = done.row.expect("valid times");
        let controlled = row.controlled_output.expect("W > 0");
        assert_eq!(controlled.exact_adherence, Some(false));
        assert!(controlled.passed);
        assert_eq!(row.started_at_ms, Some(1000.0 - 100.0));
        assert_eq!(row.cached_tokens, Some(None));
        assert_eq!(row.prompt_tokens, Some(100));
        assert_eq!(done.out_toks, 12);
        assert_eq!(done.output_token_source, OutputTokenSource::Usage);
        assert_eq!((done.reasoning_chunks, done.content_chunks), (1, 1));
    }

    // --- traces ---------------------------------------------------------------------------

    /// `good_stream`'s reads, traced.
    fn traced_stream(reads: &[(f64, Vec<ChunkEvent>)], end_ms: f64) -> StreamResult {
        let mut accumulator = StreamAccumulator::new(1000.0).with_chunk_arrivals();
        for (now_ms, events) in reads {
            if accumulator.on_read_events(*now_ms, events) == StreamFlow::Stop {
                break;
            }
        }
        accumulator.finish(end_ms).expect("well-formed stream")
    }

    #[test]
    fn traces_record_every_read_that_carried_an_event_once() {
        let result = traced_stream(
            &[
                (1001.5, vec![]),
                (1100.0, vec![reasoning("r")]),
                (1250.5, vec![content("a"), content("b")]),
                (1260.0, vec![]),
                (1300.0, vec![finish_reason("stop"), ChunkEvent::Done]),
                (1400.0, vec![content("after done")]),
            ],
            1301.0,
        );
        // Empty reads carry no event and a read after [DONE] is never consumed.
        assert_eq!(result.chunk_arrivals_ms, Some(vec![100.0, 250.5, 300.0]));
        assert_eq!(result.read_stats.reads, 5);
        // Off by default.
        assert_eq!(good_stream("hi").chunk_arrivals_ms, None);
    }

    #[test]
    fn traces_are_bounded() {
        let reads: Vec<(f64, Vec<ChunkEvent>)> = (0..CHUNK_ARRIVALS_KEPT + 5)
            .map(|read| (1000.0 + read as f64, vec![content("x")]))
            .collect();
        let result = traced_stream(&reads, 1000.0 + reads.len() as f64);
        let arrivals = result.chunk_arrivals_ms.expect("traced");
        assert_eq!(arrivals.len(), CHUNK_ARRIVALS_KEPT);
        assert_eq!(arrivals.last(), Some(&((CHUNK_ARRIVALS_KEPT - 1) as f64)));
        assert_eq!(result.content_chunks, reads.len() as u64);
    }

    #[test]
    fn traces_reach_the_row_and_only_then_its_keys() {
        let stream = traced_stream(
            &[
                (1100.0, vec![content("hi")]),
                (1300.0, vec![finish_reason("stop"), ChunkEvent::Done]),
            ],
            1300.0,
        );
        let outcome = conclude_request(
            &plan(None, 0, ControlledOutputPolicy::Observe),
            990.0,
            Ok(stream),
            1300.0,
        );
        let RequestOutcome::Completed(done) = outcome else {
            panic!("a good stream completes: {outcome:?}");
        };
        let row = done.row.expect("valid times");
        assert_eq!(row.chunk_arrivals_ms, Some(vec![100.0, 300.0]));
        let value = serde_json::to_value(&row).expect("serializable");
        assert_eq!(value["chunk_arrivals_ms"], json!([100.0, 300.0]));

        let untraced = conclude_request(
            &plan(None, 0, ControlledOutputPolicy::Observe),
            990.0,
            Ok(good_stream("hi")),
            1400.0,
        );
        let RequestOutcome::Completed(done) = untraced else {
            panic!("a good stream completes: {untraced:?}");
        };
        let value = serde_json::to_value(done.row.expect("valid times")).expect("serializable");
        assert!(value.get("chunk_arrivals_ms").is_none());
    }

    // --- transport accounting -------------------------------------------------------------

    /// An entry as Chromium reports it: a reused connection has every connection time equal
    /// to `fetchStart`.
    fn entry(
        start_ms: f64,
        request_start_ms: f64,
        connect_ms: Option<(f64, f64)>,
    ) -> ResourceTimingEntry {
        let (connect_start_ms, connect_end_ms) = connect_ms.unwrap_or((start_ms, start_ms));
        ResourceTimingEntry {
            start_time_ms: start_ms,
            fetch_start_ms: start_ms,
            connect_start_ms,
            connect_end_ms,
            request_start_ms,
            next_hop_protocol: "http/1.1".to_owned(),
            response_end_ms: request_start_ms + 50.0,
        }
    }

    #[test]
    fn transport_facts_from_chromium_entries() {
        // Values from a Chromium 156 run against strobe-sim: a warm request...
        let warm = TransportFacts::from_entry(&entry(630.25, 632.15, None), 629.855);
        assert_eq!(warm.new_connection, Some(false));
        assert_eq!(warm.preflight, None);
        assert_eq!(warm.client_queue_ms, Some(632.15 - 629.855));
        assert_eq!(warm.http_protocol.as_deref(), Some("http/1.1"));
        // ...and a cold one that opened its own connection after its preflight.
        let cold =
            TransportFacts::from_entry(&entry(506.375, 542.495, Some((525.37, 528.435))), 505.475);
        assert_eq!(cold.new_connection, Some(true));
        assert_eq!(cold.client_queue_ms, Some(542.495 - 505.475));
    }

    #[test]
    fn withheld_timing_gives_nulls_never_guesses() {
        let withheld = ResourceTimingEntry {
            start_time_ms: 10.0,
            fetch_start_ms: 10.0,
            next_hop_protocol: String::new(),
            ..ResourceTimingEntry::default()
        };
        assert!(withheld.timing_withheld());
        assert_eq!(
            TransportFacts::from_entry(&withheld, 9.5),
            TransportFacts::default()
        );
        // A protocol the browser did name is kept even when the times are withheld.
        let named = ResourceTimingEntry {
            next_hop_protocol: "h2".to_owned(),
            ..withheld
        };
        assert_eq!(
            TransportFacts::from_entry(&named, 9.5)
                .http_protocol
                .as_deref(),
            Some("h2")
        );
        // A request that seems to leave before it started means the clocks disagree.
        let inconsistent = TransportFacts::from_entry(&entry(10.0, 11.0, None), 12.0);
        assert_eq!(inconsistent.client_queue_ms, None);
        assert_eq!(inconsistent.new_connection, Some(false));
    }

    #[test]
    fn entries_pair_with_the_request_whose_fetch_made_them() {
        let starts = [100.0, 101.0, 102.0, 150.0, 400.0];
        let entries = [
            // The warm-up's, before the run: nobody's.
            entry(20.0, 21.0, None),
            // Out of completion order, as the browser lists them.
            entry(150.3, 151.0, None),
            entry(100.4, 101.5, None),
            // Request 1 (101.0) failed without an entry; 102's entry must not go to it.
            entry(102.2, 103.0, None),
            // Far after the last start: no request's.
            entry(400.0 + MAX_FETCH_ENTRY_LAG_MS + 1.0, 460.0, None),
        ];
        assert_eq!(
            match_resource_timings(&starts, &entries),
            vec![Some(2), None, Some(3), Some(1), None]
        );
    }

    #[test]
    fn requests_started_in_one_tick_take_entries_in_order() {
        let starts = [5.0, 5.0, f64::NAN];
        let entries = [
            entry(5.0, 6.0, None),
            entry(5.0, 6.5, None),
            entry(5.0, 7.0, None),
        ];
        // Two requests, three entries in their tick: the third entry is nobody's.
        assert_eq!(
            match_resource_timings(&starts, &entries),
            vec![Some(0), Some(1), None]
        );
        assert_eq!(
            match_resource_timings(&[], &entries),
            Vec::<Option<usize>>::new()
        );
        // An entry stamped in the tick the next request starts in is still the earlier one's.
        let starts = [10.0, 10.5];
        let entries = [entry(10.5, 11.0, None), entry(10.9, 11.5, None)];
        assert_eq!(
            match_resource_timings(&starts, &entries),
            vec![Some(0), Some(1)]
        );
    }

    #[test]
    fn transport_keys_are_written_only_when_set_and_null_when_unknown() {
        let plain = RequestTiming::from_seconds(row_inputs()).expect("valid times");
        let value = serde_json::to_value(&plain).expect("serializable");
        for key in [
            "new_connection",
            "preflight",
            "client_queue_ms",
            "http_protocol",
        ] {
            assert!(value.get(key).is_none(), "{key}");
        }
        assert_eq!(plain.browser_wait_ms(), None);
        assert_eq!(plain.ttfo_includes_browser_wait(), None);

        let mut accounted = plain.clone();
        accounted.set_transport(&TransportFacts::from_entry(&entry(10.0, 17.5, None), 9.5));
        let value = serde_json::to_value(&accounted).expect("serializable");
        assert_eq!(value["new_connection"], json!(false));
        assert_eq!(value["preflight"], Value::Null);
        assert_eq!(value["client_queue_ms"], json!(8.0));
        assert_eq!(value["http_protocol"], json!("http/1.1"));
        assert_eq!(accounted.browser_wait_ms(), Some(8.0));
        assert_eq!(accounted.ttfo_includes_browser_wait(), Some(true));
        let back: RequestTiming = serde_json::from_value(value).expect("deserializable");
        assert_eq!(back, accounted);
        assert_eq!(back.preflight, Some(None));

        let mut unknown = plain.clone();
        unknown.set_transport(&TransportFacts::default());
        let value = serde_json::to_value(&unknown).expect("serializable");
        for key in [
            "new_connection",
            "preflight",
            "client_queue_ms",
            "http_protocol",
        ] {
            assert_eq!(value[key], Value::Null, "{key}");
        }

        let mut quick = plain;
        quick.set_transport(&TransportFacts::from_entry(&entry(10.0, 11.0, None), 9.5));
        assert_eq!(quick.ttfo_includes_browser_wait(), Some(false));
    }

    #[test]
    fn outcomes_take_transport_facts_into_whichever_row_they_carry() {
        let facts = TransportFacts::from_entry(&entry(10.0, 12.0, None), 9.0);
        let mut completed = conclude_request(
            &plan(None, 0, ControlledOutputPolicy::Observe),
            990.0,
            Ok(good_stream("hi")),
            1400.0,
        );
        completed.set_transport(&facts);
        assert_eq!(completed.request_index(), 3);
        assert_eq!(
            completed.row().and_then(RequestTiming::browser_wait_ms),
            Some(3.0)
        );
        let RequestOutcome::Completed(done) = completed else {
            panic!("completes");
        };
        assert_eq!(
            done.row.and_then(|row| row.client_queue_ms),
            Some(Some(3.0))
        );

        let mut invalid = conclude_request(
            &plan(
                Some("ANVIL_REQ_1_00003"),
                0,
                ControlledOutputPolicy::Observe,
            ),
            990.0,
            Ok(good_stream("no marker")),
            1400.0,
        );
        invalid.set_transport(&facts);
        assert!(invalid.row().is_some());
        let record = failed(invalid);
        let row = record
            .response_timing
            .flatten()
            .expect("a row was possible");
        assert_eq!(row.new_connection, Some(Some(false)));

        let mut errored = conclude_request(
            &plan(None, 0, ControlledOutputPolicy::Observe),
            990.0,
            Err(RequestError::cancelled()),
            1400.0,
        );
        let before = errored.clone();
        assert_eq!(errored.row(), None);
        errored.set_transport(&facts);
        assert_eq!(errored, before, "no row, nothing to write");
    }

    #[test]
    fn an_error_can_say_which_endpoint_it_came_from() {
        let error = RequestError::fetch_failed("Failed to fetch")
            .at_endpoint("http://127.0.0.1:8012/v1/chat/completions");
        assert_eq!(error.error_type, "TypeError");
        assert!(
            error
                .message
                .starts_with("from http://127.0.0.1:8012/v1/chat/completions: Failed to fetch"),
            "{error}"
        );
    }
}
