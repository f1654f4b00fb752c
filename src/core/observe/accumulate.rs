//! Stream accumulation and validation (ARTIFACT.md §4.2–§4.3): timestamped reads of decoded
//! events in, a [`StreamResult`] out — first output, first content, end, token counts, usage,
//! the visible capture — and whether the stream was valid.

use serde_json::Value;
use thiserror::Error;

use crate::core::observe::failure::RequestError;
use crate::core::schema::rows::{OutputTokenSource, ResponseMetadata};
use crate::core::stream::sse::ChunkEvent;
use std::collections::BTreeMap;

/// Visible content kept per request for the output-contract checks, in characters (Unicode
/// scalar values, as Python's `len`).
pub const VISIBLE_CONTENT_CAPTURE_LIMIT: usize = 8192;

/// Most `finish_reasons` kept per request. A normal stream has one per choice; the bound only
/// stops a misbehaving server from growing memory without limit.
pub const FINISH_REASONS_KEPT: usize = 1024;

/// Most arrival times a row's `chunk_arrivals_ms` keeps (the first ones). A trace is for the
/// timeline of one request; the bound stops a 65536-token answer in every row of a long run from
/// growing the page's memory without limit.
pub const CHUNK_ARRIVALS_KEPT: usize = 16_384;

/// The whole visible reply of a request, kept beside the §4.2 capture when its text is needed
/// again: a session's live history sends it back as the assistant message of the next turn.
/// Kept up to a bound of its own ([`StreamAccumulator::with_reply`]); the spec's capture, its
/// 8,192-character limit and its truncation flag are untouched by it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CapturedReply {
    /// The visible content, as it streamed in (at most the bound's characters).
    pub text: String,
    /// Characters kept.
    pub chars: usize,
    /// The bound, in characters.
    pub limit: usize,
    /// More arrived than the bound: the text is not the whole reply.
    pub cut: bool,
}

impl CapturedReply {
    fn push(&mut self, content: &str) {
        if self.cut {
            return;
        }
        let remaining = self.limit.saturating_sub(self.chars);
        match content.char_indices().nth(remaining) {
            Some((offset, _)) => {
                self.text.push_str(&content[..offset]);
                self.chars += remaining;
                self.cut = true;
            }
            None => {
                self.text.push_str(content);
                self.chars += content.chars().count();
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Stream accumulation (§4.2)
// ---------------------------------------------------------------------------------------------

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

/// A stream of at least this many events that arrived in at most [`BUFFERED_MAX_READS`] reads
/// was held back on its way and delivered in one piece (docs/guide/metrics.md, *Buffered streams*).
pub const BUFFERED_MIN_EVENTS: u64 = 8;

/// See [`BUFFERED_MIN_EVENTS`].
pub const BUFFERED_MAX_READS: u64 = 2;

impl ReadStats {
    /// Whether the stream's events arrived in one or two reads although there were many of
    /// them: something between the server and the browser (a proxy with `proxy_buffering`, a
    /// CDN, compression) buffered it, so its TTFT and TPOT measure the buffer, not the server.
    pub fn looks_buffered(&self) -> bool {
        self.events >= BUFFERED_MIN_EVENTS && self.reads <= BUFFERED_MAX_READS
    }
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
    /// The whole visible reply, when the request asked for it
    /// ([`StreamAccumulator::with_reply`]).
    pub reply: Option<CapturedReply>,
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
    reply: Option<CapturedReply>,
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
            reply: None,
        }
    }

    /// Also keeps the whole visible reply, up to `limit_chars` characters (the result's
    /// [`StreamResult::reply`]).
    pub fn with_reply(mut self, limit_chars: usize) -> Self {
        self.reply = Some(CapturedReply {
            limit: limit_chars,
            ..CapturedReply::default()
        });
        self
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
                        if let Some(reply) = &mut self.reply {
                            reply.push(content);
                        }
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
            reply: self.reply,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::observe::test_support::*;
    use serde_json::json;

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
    fn the_whole_reply_is_kept_beside_the_capture_up_to_its_own_bound() {
        let reply_of = |limit: usize, pieces: &[&str]| {
            let mut accumulator = StreamAccumulator::new(0.0).with_reply(limit);
            accumulator.on_read(1.0);
            for piece in pieces {
                accumulator.on_event(&content(piece));
            }
            accumulator.on_event(&ChunkEvent::Done);
            accumulator
                .finish(2.0)
                .expect("valid")
                .reply
                .expect("asked for")
        };
        // Past the spec's 8,192-character capture, the reply is whole and the capture is not.
        let long = "é".repeat(VISIBLE_CONTENT_CAPTURE_LIMIT + 10);
        let mut accumulator = StreamAccumulator::new(0.0).with_reply(1 << 20);
        accumulator.on_read(1.0);
        accumulator.on_event(&content(&long));
        let result = accumulator.finish(2.0).expect("valid");
        assert!(result.visible_content_truncated);
        let reply = result.reply.expect("asked for");
        assert_eq!(reply.text, long);
        assert!(!reply.cut);
        assert_eq!(reply.chars, VISIBLE_CONTENT_CAPTURE_LIMIT + 10);

        // Cut at its bound in characters, never inside one.
        let cut = reply_of(4, &["ab", "世界🎉x"]);
        assert_eq!(cut.text, "ab世界");
        assert!(cut.cut);
        assert_eq!(cut.chars, 4);
        let exact = reply_of(4, &["ab", "世界"]);
        assert!(!exact.cut);
        assert_eq!(exact.text, "ab世界");
        // Nothing is kept unless asked for.
        assert_eq!(good_stream("hi").reply, None);
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
}
