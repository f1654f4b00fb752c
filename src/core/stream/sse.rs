//! Server-sent-events decoding: bytes from the network in, OpenAI chat-completions chunks out.
//!
//! Two layers, both pure and clock-free:
//!
//! 1. [`SseDecoder`] turns arbitrary byte slices (split anywhere: inside a line, between CR and
//!    LF, inside a multi-byte UTF-8 character) into [`SseEvent`]s, following the WHATWG
//!    `text/event-stream` rules: LF, CRLF and lone CR end a line; `:` lines are comments
//!    (keep-alives, counted but silent); `data:` takes at most one space after the colon; several
//!    `data:` lines of one event are joined with `\n`; a blank line dispatches; `event:`, `id:` and
//!    `retry:` are tolerated. Lines are decoded as UTF-8 with U+FFFD replacement, as the reference
//!    client does. A line or an event larger than a limit is an [`SseError`] value instead of an
//!    unbounded allocation.
//! 2. [`ChunkEvent::from_sse_data`] reads one dispatched event as a chat-completions chunk,
//!    reproducing the reference client's interpretation (ARTIFACT.md §4.2): `[DONE]`, skipped
//!    non-JSON payloads, truthiness of deltas, `reasoning_content` before `reasoning`, and
//!    `finish_reason` stringified and cut to 128 characters. A `/v1/completions` chunk's
//!    `choices[].text` is content, read with the same truthiness as `delta.content`, so first
//!    output, token counts and the reply text come out the same on either endpoint.
//!
//! Why hand-written: the crates that decode event streams (e.g. `eventsource-stream`) are built
//! around an async `futures::Stream` and buffer without a bound; the core must stay synchronous,
//! dependency-light and bounded, and the state machine is under 200 lines.
//!
//! Deviations from the reference client, all deliberate:
//! - Multi-line events are joined per the SSE standard (the reference parsed each `data:` line
//!   alone). Every known OpenAI-compatible server sends one `data:` line per event, so both read
//!   the same chunks. A server that never sends blank lines would have its whole stream joined
//!   into one non-JSON event, which is counted as ignored and then fails stream validation
//!   loudly, instead of being timed wrongly.
//! - At end of stream an event still waiting for its blank line is dispatched
//!   ([`SseDecoder::finish`]); browsers drop it, but the reference client read every `data:` line,
//!   so a final `data: [DONE]` without a trailing blank line still counts.
//! - A JSON object with an `error` member is surfaced as [`ChunkEvent::ServerError`] (the reference
//!   ignored it and failed later with a less helpful message).

use std::borrow::Cow;

use serde_json::Value;
use thiserror::Error;

use super::chunk_json::{parse_chunk, ChoiceFields, DeltaFields, Shaped};

/// Default bound on one line and on one event's joined data: 8 MiB. A chat-completions chunk is a
/// few hundred bytes, so anything near this is not a chat stream.
pub const DEFAULT_MAX_LINE_BYTES: usize = 8 * 1024 * 1024;

/// Longest `finish_reason` kept, in characters (the reference client's `str(x)[:128]`).
pub const FINISH_REASON_MAX_CHARS: usize = 128;

/// Longest server error message kept from an `{"error": …}` event, in characters.
pub const SERVER_ERROR_MAX_CHARS: usize = 512;

/// Why the decoder gave up on a stream. Once returned, the decoder keeps returning it.
#[derive(Clone, Debug, Error, PartialEq, Eq)]
pub enum SseError {
    /// One line grew past the limit without a line end.
    #[error(
        "a server-sent-events line exceeded {limit_bytes} bytes without a line end; the response \
         is not a chat-completions stream (check that the base URL points at an OpenAI-compatible \
         /v1 endpoint)"
    )]
    LineTooLong {
        /// The limit that was exceeded, in bytes.
        limit_bytes: usize,
    },
    /// The `data:` lines of one event added up past the limit before a blank line dispatched it.
    #[error(
        "one server-sent event carried more than {limit_bytes} bytes of data; the response is not \
         a chat-completions stream (check that the base URL points at an OpenAI-compatible /v1 \
         endpoint)"
    )]
    EventTooLarge {
        /// The limit that was exceeded, in bytes.
        limit_bytes: usize,
    },
}

/// One dispatched server-sent event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SseEvent {
    /// The `event:` field, or `None` for the default type (`message`).
    pub event_type: Option<String>,
    /// The joined `data:` lines, without the final `\n`.
    pub data: String,
    /// The last `id:` seen on the stream so far (it persists across events, as the standard says).
    pub last_event_id: Option<String>,
}

/// Counters a reader of the artifact can use to judge the transport (ARTIFACT.md §12 `client.sse`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SseDecoderStats {
    /// Bytes pushed into the decoder.
    pub bytes: u64,
    /// Complete lines processed, blank ones included.
    pub lines: u64,
    /// Comment lines (`:` …), which servers send as keep-alives.
    pub comment_lines: u64,
    /// Events dispatched.
    pub events: u64,
}

/// Incremental `text/event-stream` decoder. Feed it every byte of a response body in order.
#[derive(Clone, Debug)]
pub struct SseDecoder {
    max_bytes: usize,
    line: Vec<u8>,
    /// The previous slice ended in CR: a leading LF of the next slice belongs to that line end.
    after_cr: bool,
    at_stream_start: bool,
    data: String,
    event_type: Option<String>,
    last_event_id: Option<String>,
    retry_ms: Option<u64>,
    stats: SseDecoderStats,
    failure: Option<SseError>,
}

impl Default for SseDecoder {
    fn default() -> Self {
        Self::new()
    }
}

impl SseDecoder {
    /// A decoder bounded by [`DEFAULT_MAX_LINE_BYTES`].
    pub fn new() -> Self {
        Self::with_max_bytes(DEFAULT_MAX_LINE_BYTES)
    }

    /// A decoder whose single line and single event's data may not exceed `max_bytes`.
    pub fn with_max_bytes(max_bytes: usize) -> Self {
        Self {
            max_bytes,
            line: Vec::new(),
            after_cr: false,
            at_stream_start: true,
            data: String::new(),
            event_type: None,
            last_event_id: None,
            retry_ms: None,
            stats: SseDecoderStats::default(),
            failure: None,
        }
    }

    /// Decodes the next piece of the body, appending every event it completes to `out`.
    ///
    /// Events completed before an error in the same slice are still appended.
    pub fn push(&mut self, bytes: &[u8], out: &mut Vec<SseEvent>) -> Result<(), SseError> {
        if let Some(failure) = &self.failure {
            return Err(failure.clone());
        }
        let result = self.push_bytes(bytes, out);
        if let Err(error) = &result {
            self.failure = Some(error.clone());
        }
        result
    }

    /// Ends the stream: a last line without a line end is processed, and an event still waiting
    /// for its blank line is dispatched (see the module notes). The decoder is then ready for a
    /// new stream; its counters keep running.
    pub fn finish(&mut self, out: &mut Vec<SseEvent>) -> Result<(), SseError> {
        if let Some(failure) = &self.failure {
            return Err(failure.clone());
        }
        if !self.line.is_empty() {
            if let Err(error) = self.end_buffered_line(out) {
                self.failure = Some(error.clone());
                return Err(error);
            }
        }
        self.dispatch(out);
        self.after_cr = false;
        self.at_stream_start = true;
        self.last_event_id = None;
        Ok(())
    }

    /// Counters so far.
    pub fn stats(&self) -> SseDecoderStats {
        self.stats
    }

    /// The last valid `retry:` value, in milliseconds (strobe never reconnects; kept for display).
    pub fn retry_ms(&self) -> Option<u64> {
        self.retry_ms
    }

    fn push_bytes(&mut self, bytes: &[u8], out: &mut Vec<SseEvent>) -> Result<(), SseError> {
        self.stats.bytes += bytes.len() as u64;
        let mut rest = bytes;
        while !rest.is_empty() {
            if self.after_cr {
                self.after_cr = false;
                if rest[0] == b'\n' {
                    rest = &rest[1..];
                    continue;
                }
            }
            match rest.iter().position(|&b| b == b'\n' || b == b'\r') {
                Some(end) => {
                    self.after_cr = rest[end] == b'\r';
                    if self.line.is_empty() {
                        // The whole line is in this slice: read it where it is.
                        if end > self.max_bytes {
                            return Err(self.line_too_long());
                        }
                        self.end_line(&rest[..end], out)?;
                    } else {
                        self.append_to_line(&rest[..end])?;
                        self.end_buffered_line(out)?;
                    }
                    rest = &rest[end + 1..];
                }
                None => {
                    self.append_to_line(rest)?;
                    rest = &[];
                }
            }
        }
        Ok(())
    }

    fn line_too_long(&self) -> SseError {
        SseError::LineTooLong {
            limit_bytes: self.max_bytes,
        }
    }

    fn append_to_line(&mut self, bytes: &[u8]) -> Result<(), SseError> {
        if self.line.len() + bytes.len() > self.max_bytes {
            return Err(self.line_too_long());
        }
        self.line.extend_from_slice(bytes);
        Ok(())
    }

    /// Ends the line gathered in `self.line` across slices, keeping its allocation for the next.
    fn end_buffered_line(&mut self, out: &mut Vec<SseEvent>) -> Result<(), SseError> {
        let line = std::mem::take(&mut self.line);
        let result = self.end_line(&line, out);
        self.line = line;
        self.line.clear();
        result
    }

    fn end_line(&mut self, raw: &[u8], out: &mut Vec<SseEvent>) -> Result<(), SseError> {
        // Valid UTF-8 (every line of a well-behaved server) is checked by the fast path and
        // borrowed; anything else is decoded with replacement characters.
        let decoded = match std::str::from_utf8(raw) {
            Ok(text) => Cow::Borrowed(text),
            Err(_) => String::from_utf8_lossy(raw),
        };
        let mut text: &str = &decoded;
        if self.at_stream_start {
            self.at_stream_start = false;
            text = text.strip_prefix('\u{FEFF}').unwrap_or(text);
        }
        self.stats.lines += 1;
        self.process_line(text, out)
    }

    fn process_line(&mut self, line: &str, out: &mut Vec<SseEvent>) -> Result<(), SseError> {
        if line.is_empty() {
            self.dispatch(out);
            return Ok(());
        }
        if line.starts_with(':') {
            self.stats.comment_lines += 1;
            return Ok(());
        }
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line, ""),
        };
        match field {
            "data" => {
                if self.data.len() + value.len() + 1 > self.max_bytes {
                    return Err(SseError::EventTooLarge {
                        limit_bytes: self.max_bytes,
                    });
                }
                // One allocation per event: the data string is handed out whole at dispatch.
                self.data.reserve(value.len() + 1);
                self.data.push_str(value);
                self.data.push('\n');
            }
            "event" => self.event_type = Some(value.to_owned()),
            "id" if !value.contains('\0') => self.last_event_id = Some(value.to_owned()),
            "retry" if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) => {
                // An absurdly long number is ignored like any other invalid retry value.
                if let Ok(retry_ms) = value.parse() {
                    self.retry_ms = Some(retry_ms);
                }
            }
            _ => {}
        }
        Ok(())
    }

    fn dispatch(&mut self, out: &mut Vec<SseEvent>) {
        let event_type = self.event_type.take();
        if self.data.is_empty() {
            return;
        }
        let mut data = std::mem::take(&mut self.data);
        data.pop();
        self.stats.events += 1;
        out.push(SseEvent {
            event_type,
            data,
            last_event_id: self.last_event_id.clone(),
        });
    }
}

/// What one choice of a chunk carried. Empty strings and JSON nulls are already dropped, as the
/// reference client's truthiness tests drop them.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ChoiceDelta {
    /// `str(finish_reason)[:128]` when the choice's `finish_reason` is not null.
    pub finish_reason: Option<String>,
    /// `delta.reasoning_content` if truthy, else `delta.reasoning`, if truthy. A non-string value
    /// is kept as its JSON text; only its presence matters to the measurement.
    pub reasoning: Option<String>,
    /// `delta.content` when it is a non-empty string, else the choice's `text` (a completions
    /// chunk) when that is a non-empty string.
    pub content: Option<String>,
}

/// One `chat.completion.chunk` as the measurement sees it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ChatChunk {
    /// The chunk's choices, in order.
    pub choices: Vec<ChoiceDelta>,
    /// The chunk's `usage` when truthy (in practice a non-empty object); the last one wins.
    pub usage: Option<Value>,
}

/// A dispatched event read as an OpenAI chat-completions stream item.
#[derive(Clone, Debug, PartialEq)]
pub enum ChunkEvent {
    /// The `[DONE]` sentinel: the reference client stops reading here.
    Done,
    /// A regular chunk.
    Chunk(ChatChunk),
    /// Valid JSON that the reference client could not process (`choices: null`, `delta: null`, a
    /// payload that is not an object, a non-string `content`). It raised an exception there,
    /// which became a `request_error`; strobe keeps that behaviour (ARTIFACT.md §11.12).
    Malformed {
        /// What was wrong, for the failure message.
        reason: String,
    },
    /// The server reported an error inside the stream (`{"error": …}`).
    ServerError {
        /// The server's message, control characters removed, at most
        /// [`SERVER_ERROR_MAX_CHARS`] characters.
        message: String,
    },
    /// A payload that is not JSON (the reference client skipped these silently; strobe counts
    /// them).
    Ignored,
}

impl ChunkEvent {
    /// Interprets a dispatched event.
    pub fn from_sse(event: &SseEvent) -> Self {
        Self::from_sse_data(&event.data)
    }

    /// Interprets an event's data (ARTIFACT.md §4.2 steps 2-6). The JSON is read for only the
    /// members the measurement uses ([`chunk_json`](super::chunk_json)), with Python's rules.
    pub fn from_sse_data(data: &str) -> Self {
        let payload = data.trim_matches(is_python_space);
        if payload == "[DONE]" {
            return Self::Done;
        }
        let Some(parsed) = parse_chunk(payload) else {
            return Self::Ignored;
        };
        let Shaped::Expected(chunk) = parsed else {
            return Self::malformed("the data payload is JSON but not an object");
        };
        if let Some(error) = chunk.error.filter(is_truthy) {
            return Self::ServerError {
                message: server_error_message(&error),
            };
        }
        let usage = chunk.usage.filter(is_truthy);
        let choices = match chunk.choices {
            None => Vec::new(),
            Some(Shaped::Expected(choices)) => {
                let mut deltas = Vec::with_capacity(choices.len());
                for choice in choices {
                    match choice_delta(choice) {
                        Ok(delta) => deltas.push(delta),
                        Err(reason) => return Self::malformed(reason),
                    }
                }
                deltas
            }
            Some(Shaped::Null) => return Self::malformed("choices is null"),
            Some(Shaped::Other) => return Self::malformed("choices is not a list"),
        };
        Self::Chunk(ChatChunk { choices, usage })
    }

    fn malformed(reason: &str) -> Self {
        Self::Malformed {
            reason: reason.to_owned(),
        }
    }
}

fn choice_delta(choice: Shaped<ChoiceFields>) -> Result<ChoiceDelta, &'static str> {
    let Shaped::Expected(choice) = choice else {
        return Err("a choice is not an object");
    };
    let finish_reason = match choice.finish_reason {
        None | Some(Value::Null) => None,
        Some(reason) => Some(
            python_str(reason)
                .chars()
                .take(FINISH_REASON_MAX_CHARS)
                .collect(),
        ),
    };
    let delta = match choice.delta {
        None => DeltaFields::default(),
        Some(Shaped::Expected(delta)) => delta,
        Some(Shaped::Null) => return Err("delta is null"),
        Some(Shaped::Other) => return Err("delta is not an object"),
    };
    let reasoning = delta
        .reasoning_content
        .filter(is_truthy)
        .or(delta.reasoning)
        .filter(is_truthy)
        .map(python_str);
    let content = match delta.content.filter(is_truthy) {
        Some(Value::String(text)) => Some(text),
        Some(_) => return Err("delta.content is not a string"),
        None => match choice.text.filter(is_truthy) {
            None => None,
            Some(Value::String(text)) => Some(text),
            Some(_) => return Err("choices[].text is not a string"),
        },
    };
    Ok(ChoiceDelta {
        finish_reason,
        reasoning,
        content,
    })
}

fn server_error_message(error: &Value) -> String {
    let text = match error {
        Value::String(message) => message.clone(),
        Value::Object(fields) => {
            let message = match fields.get("message") {
                Some(Value::String(message)) => message.clone(),
                _ => error.to_string(),
            };
            let kind = fields.get("type").and_then(Value::as_str);
            let code = fields.get("code").filter(|code| !code.is_null());
            match (kind, code) {
                (Some(kind), Some(code)) => format!("{message} (type {kind}, code {code})"),
                (Some(kind), None) => format!("{message} (type {kind})"),
                (None, Some(code)) => format!("{message} (code {code})"),
                (None, None) => message,
            }
        }
        other => other.to_string(),
    };
    sanitize_excerpt(&text, SERVER_ERROR_MAX_CHARS)
}

/// A chat-completions event stream as an OpenAI-compatible server sends one, each element one
/// whole event (`data: …` and its blank line): a role chunk, `reasoning_tokens` reasoning chunks,
/// one content chunk per piece of `content` (JSON-escaped), the finish chunk, the usage chunk
/// and `[DONE]`. It is what the browser rehearses its read path on before a measured run, so the
/// engine has compiled that code before the first timestamp is taken (see
/// `web::transport::rehearse_reading`).
pub fn sample_stream_events(reasoning_tokens: usize, content: &[String]) -> Vec<String> {
    // One `chat.completion.chunk` event whose members after the envelope are `rest`.
    let event = |rest: &str| {
        format!(
            "data: {{\"id\":\"chatcmpl-rehearsal\",\"object\":\"chat.completion.chunk\",\
             \"created\":0,\"model\":\"rehearsal\",{rest}}}\n\n"
        )
    };
    let chunk = |delta: &str, finish_reason: &str| {
        event(&format!(
            "\"choices\":[{{\"index\":0,\"delta\":{{{delta}}},\"logprobs\":null,\
             \"finish_reason\":{finish_reason}}}]"
        ))
    };
    let mut events = Vec::with_capacity(reasoning_tokens + content.len() + 4);
    events.push(chunk("\"role\":\"assistant\",\"content\":\"\"", "null"));
    events.extend(
        (0..reasoning_tokens)
            .map(|i| chunk(&format!("\"reasoning_content\":\" step{i}\""), "null")),
    );
    events.extend(content.iter().map(|piece| {
        let text = Value::String(piece.clone()).to_string();
        chunk(&format!("\"content\":{text}"), "null")
    }));
    events.push(chunk("", "\"stop\""));
    let completion_tokens = reasoning_tokens + content.len();
    events.push(event(&format!(
        "\"choices\":[],\"usage\":{{\"prompt_tokens\":16,\
         \"completion_tokens\":{completion_tokens},\"total_tokens\":{}}}",
        16 + completion_tokens
    )));
    events.push("data: [DONE]\n\n".to_string());
    events
}

/// Replaces control characters with spaces, collapses runs of whitespace and keeps at most
/// `max_chars` characters (an ellipsis marks a cut). For text from servers that ends up in
/// messages and artifacts.
pub fn sanitize_excerpt(text: &str, max_chars: usize) -> String {
    let mut cleaned = String::new();
    let mut kept = 0;
    let mut pending_space = false;
    for c in text.chars() {
        if c.is_control() || is_python_space(c) {
            pending_space = kept > 0;
            continue;
        }
        let needed = if pending_space { 2 } else { 1 };
        if kept + needed > max_chars {
            cleaned.push('…');
            return cleaned;
        }
        if pending_space {
            cleaned.push(' ');
            pending_space = false;
        }
        cleaned.push(c);
        kept += needed;
    }
    cleaned
}

/// Python's `bool(value)` for a JSON value.
pub fn is_truthy(value: &Value) -> bool {
    match value {
        Value::Null => false,
        Value::Bool(flag) => *flag,
        Value::Number(number) => number.as_f64().is_some_and(|n| n != 0.0),
        Value::String(text) => !text.is_empty(),
        Value::Array(items) => !items.is_empty(),
        Value::Object(fields) => !fields.is_empty(),
    }
}

/// Python's `str.isspace()` for one character: Unicode White_Space plus the four ASCII
/// separators U+001C..U+001F, which Python also treats as whitespace.
pub fn is_python_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

/// Python's `str(value)` for the JSON values a server may put in `finish_reason`: strings as
/// they are, booleans as `True`/`False`, numbers and containers as their JSON text (exact for
/// integers; other shapes only appear from broken servers).
fn python_str(value: Value) -> String {
    match value {
        Value::String(text) => text,
        Value::Bool(true) => "True".to_owned(),
        Value::Bool(false) => "False".to_owned(),
        Value::Null => "None".to_owned(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests;
