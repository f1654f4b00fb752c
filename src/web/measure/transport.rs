//! The fetch transport: one streaming `POST {base}/chat/completions`, read chunk by chunk.
//!
//! A request is sent by one call into JavaScript ([`send_chat`]) and its response taken from its
//! headers to its end by one JavaScript function ([`pump_response`]), which stamps every network
//! read with one `performance.now()` reading taken the moment it resolves and hands it to the
//! core's SSE decoder and stream accumulator in the same turn. A dry run's requests are
//! answered by synthetic streams instead ([`synthetic_stream`]). Browser errors become the core's
//! [`RequestError`] values with their reason: `TypeError` (network or CORS), `HttpError`
//! (non-2xx, with a sanitized body excerpt), `AbortError` (cancelled), `TimeoutError` (no data
//! within the timeout), `StreamError` (the body broke or was not a stream).

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use js_sys::Uint8Array;
use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{
    AbortController, Headers, ReadableStreamDefaultReader, ReadableStreamReadResult, Response,
};

use crate::core::observe::accumulate::{StreamAccumulator, StreamResult};
use crate::core::observe::failure::RequestError;
use crate::core::observe::reading::{ReadOutcome, StreamReading};

use crate::web::js::{
    pump_response, send_chat, PumpEnd, KEEP_READING, READ_TO_THE_END, STOP_READING,
};
use crate::web::platform::clock::Clock;
use crate::web::platform::js_error::{js_text, settle_quietly};

/// The most bytes of an error body strobe reads (the excerpt it keeps is shorter still).
const ERROR_BODY_READ_LIMIT: usize = 64 * 1024;

/// How long strobe keeps reading after `[DONE]` for the end of the body before it cuts the
/// stream off. The end normally follows within a millisecond; the margin is for a busy page,
/// since cutting a body off costs its connection. Only a server that keeps the stream open
/// after `[DONE]` ever waits this long, and that wait is no measured time.
const BODY_END_GRACE_MS: f64 = 200.0;

/// Why a request's [`AbortController`] fired, so the failure names the right cause.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AbortCause {
    /// Not aborted.
    None,
    /// The user pressed Cancel.
    Cancelled,
    /// No data arrived within the per-request timeout.
    TimedOut,
}

/// Shared between a running request, its timeout watchdog and the Cancel button.
pub struct RequestControl {
    /// Aborts the fetch and its body stream.
    pub controller: AbortController,
    /// Set before `controller.abort()` is called.
    pub cause: Cell<AbortCause>,
    /// The clock reading of the last network read (or of the send), for the idle timeout.
    pub last_activity_ms: Cell<f64>,
    /// The request has ended (its result is taken): the idle timeout no longer applies.
    pub ended: Cell<bool>,
}

impl RequestControl {
    /// A fresh control, or the browser's error if `AbortController` is unavailable.
    pub fn new(now_ms: f64) -> Result<Rc<Self>, RequestError> {
        let controller = AbortController::new()
            .map_err(|err| RequestError::stream(format!("AbortController: {}", js_text(&err))))?;
        Ok(Rc::new(Self {
            controller,
            cause: Cell::new(AbortCause::None),
            last_activity_ms: Cell::new(now_ms),
            ended: Cell::new(false),
        }))
    }

    /// Whether the request is still running and nothing has arrived for `timeout_ms` at `now_ms`.
    pub fn idle_past(&self, timeout_ms: f64, now_ms: f64) -> bool {
        !self.ended.get() && now_ms - self.last_activity_ms.get() >= timeout_ms
    }

    /// Aborts the request for `cause` (the first cause wins).
    pub fn abort(&self, cause: AbortCause) {
        if self.cause.get() == AbortCause::None {
            self.cause.set(cause);
        }
        self.controller.abort();
    }
}

/// What one request sends.
pub struct ChatRequest<'a> {
    /// `{base_url}/chat/completions`.
    pub url: &'a str,
    /// The JSON body built by the core, already a JavaScript string (see
    /// [`RequestHeaders`] for why everything a send needs is made beforehand).
    pub body: &'a JsValue,
    /// The run's headers, made once.
    pub headers: &'a RequestHeaders,
    /// The API key the headers carry, if any: scrubbed from an error body that echoes it.
    pub api_key: Option<&'a str>,
    /// The per-read idle timeout, for the failure message.
    pub timeout_s: f64,
    /// Record when each read that carried an event arrived (the row's `chunk_arrivals_ms`).
    pub chunk_traces: bool,
    /// A dry run's answer ([`synthetic_stream`]): nothing is sent, and the response is these
    /// events, one per read.
    pub synthetic: Option<&'a js_sys::Array>,
    /// Keep the whole visible reply, up to this many characters (a session's live history:
    /// [`StreamResult::reply`]).
    pub reply_limit: Option<usize>,
}

/// The headers every request of a run sends, made once per run: `Content-Type`, `Accept` and,
/// with a key, `Authorization: Bearer …` (never logged or stored). A key a header cannot
/// carry fails every request with the reason, as its own `fetch()` would.
pub struct RequestHeaders(Result<Headers, RequestError>);

impl RequestHeaders {
    /// The headers for a run with this API key.
    pub fn new(api_key: Option<&str>) -> Self {
        Self(build_headers(api_key))
    }

    /// The headers of one session's requests: the run's, and `name: value` (the session
    /// header a router with session affinity reads). A value a header cannot carry fails the
    /// session's requests with the reason.
    pub fn for_session(api_key: Option<&str>, name: &str, value: &str) -> Self {
        Self(build_headers(api_key).and_then(|headers| {
            headers.set(name, value).map_err(|_| {
                RequestError::new(
                    "TypeError",
                    format!(
                        "the session id cannot be sent in the {name} header (a header value \
                         cannot hold line breaks or characters outside Latin-1): fix the \
                         file's session ids, or clear session_header"
                    ),
                )
            })?;
            Ok(headers)
        }))
    }
}

/// Sends `request` and reads its stream to the end.
///
/// The clock reading taken immediately before `fetch()` is called is the origin of TTFO, TTFT
/// and E2E; it is returned with the result.
///
/// Everything between one stream's end and the next request on the wire, and between a
/// response's headers and its first read, is time in which a read of another stream cannot be
/// stamped. So the send is one call into JavaScript with the body and headers made
/// beforehand (`send_chat`), and the response is taken from the headers to the end of its body
/// by one JavaScript function (`pump_response`) that calls into the module only per read
/// (docs/design/measurement.md, *Sending* and *Reading*).
pub async fn stream_chat(
    clock: &Clock,
    request: &ChatRequest<'_>,
    control: &Rc<RequestControl>,
) -> (f64, Result<StreamResult, RequestError>) {
    let headers = match &request.headers.0 {
        Ok(headers) => headers,
        Err(error) => return (clock.now_ms(), Err(error.clone())),
    };
    let signal = control.controller.signal();
    let synthetic = request
        .synthetic
        .map_or(JsValue::UNDEFINED, |events| events.into());
    let sent = send_chat(request.url, request.body, headers, &signal, &synthetic);
    let started_ms = sent.sent();
    control.last_activity_ms.set(started_ms);
    let mut accumulator = StreamAccumulator::new(started_ms);
    if request.chunk_traces {
        accumulator = accumulator.with_chunk_arrivals();
    }
    if let Some(limit) = request.reply_limit {
        accumulator = accumulator.with_reply(limit);
    }
    let reading = Rc::new(RefCell::new(BrowserReading::new(accumulator)));
    let on_read = {
        let reading = reading.clone();
        let control = control.clone();
        Closure::<dyn FnMut(JsValue, f64) -> u32>::new(move |chunk: JsValue, now_ms: f64| {
            control.last_activity_ms.set(now_ms);
            if chunk.is_null() {
                // The response's headers: activity, no bytes of the body yet.
                return KEEP_READING;
            }
            let mut reading = reading.borrow_mut();
            if !reading.on_read(chunk.dyn_ref::<Uint8Array>(), now_ms) {
                return KEEP_READING;
            }
            match reading.reading.outcome() {
                Some(ReadOutcome::Done { .. }) => {
                    // The measurement ended at this read (§4.2); what follows only frees the
                    // connection, and no idle timeout may cut it off meanwhile.
                    control.ended.set(true);
                    READ_TO_THE_END
                }
                _ => STOP_READING,
            }
        })
    };
    let pumped = pump_response(
        &sent.response(),
        on_read.as_ref().unchecked_ref(),
        BODY_END_GRACE_MS,
    );
    let pumped = JsFuture::from(pumped).await;
    drop(on_read);
    let result = match pumped {
        Ok(ended) => {
            let ended: PumpEnd = ended.unchecked_into();
            match ended.kind().as_str() {
                "read" => conclude_reading(reading),
                "not_a_stream" => match ended.not_a_stream_response().dyn_into::<Response>() {
                    Ok(response) => Err(not_a_stream(request, response).await),
                    Err(_) => Err(RequestError::stream(
                        "fetch resolved to something not a Response",
                    )),
                },
                _ => Err(abort_or(control, request.timeout_s, || {
                    RequestError::fetch_failed(&js_text(&ended.error()))
                })),
            }
        }
        Err(err) => Err(abort_or(control, request.timeout_s, || {
            RequestError::stream(format!(
                "the connection broke while streaming: {}",
                js_text(&err)
            ))
        })),
    };
    (started_ms, result)
}

fn build_headers(api_key: Option<&str>) -> Result<Headers, RequestError> {
    let headers = Headers::new().map_err(|err| RequestError::stream(js_text(&err)))?;
    let set = |name: &str, value: &str| {
        headers
            .set(name, value)
            .map_err(|_| RequestError::new("TypeError", format!("the {name} header is not valid")))
    };
    set("Content-Type", "application/json")?;
    set("Accept", "text/event-stream")?;
    if let Some(key) = api_key.filter(|key| !key.is_empty()) {
        // The key's text is never put into the error: say only that it was refused.
        headers.set("Authorization", &format!("Bearer {key}")).map_err(|_| {
            RequestError::new(
                "TypeError",
                "the API key contains characters a header cannot carry; paste it again without spaces or line breaks",
            )
        })?;
    }
    Ok(headers)
}

/// The failure of a response that is no event stream: an HTTP error status (with a sanitized
/// excerpt of its body), a JSON document, or no body at all.
async fn not_a_stream(request: &ChatRequest<'_>, response: Response) -> RequestError {
    if !response.ok() {
        let body = read_text_bounded(&response).await.unwrap_or_default();
        let secrets: Vec<&str> = request.api_key.into_iter().collect();
        return RequestError::http_status(
            response.status(),
            &response.status_text(),
            &body,
            &secrets,
        );
    }
    let content_type = response
        .headers()
        .get("content-type")
        .ok()
        .flatten()
        .unwrap_or_default();
    if content_type.starts_with("application/json") {
        let body = read_text_bounded(&response).await.unwrap_or_default();
        return RequestError::json_instead_of_stream(&body);
    }
    RequestError::stream("the response has no body")
}

/// The result of a stream `pump_response` has read: to the end of its body, or to `[DONE]`
/// (and then, without timing anything, on to the end of the body).
fn conclude_reading(reading: Rc<RefCell<BrowserReading>>) -> Result<StreamResult, RequestError> {
    // One clock reading per read, taken before the connection is released: the stream's end
    // is the read that carried its last byte.
    Rc::try_unwrap(reading)
        .map_err(|_| RequestError::stream("the stream reader was still in use"))?
        .into_inner()
        .reading
        .finish()
}

/// About how many events [`rehearse_reading`] reads in all: enough for V8 to recompile every
/// function on the per-read path with its optimizing compiler.
const REHEARSAL_EVENTS: usize = 2_000;
/// Reasoning events per rehearsed stream.
const REHEARSAL_REASONING_TOKENS: usize = 8;

/// Reads synthetic streams (a role chunk, [`REHEARSAL_REASONING_TOKENS`] reasoning chunks, one
/// content chunk per piece of `content`, finish, usage and `[DONE]`: about
/// [`REHEARSAL_EVENTS`] events in all) through the per-read path of a real request
/// ([`BrowserReading::on_read`]: the copy out of a `Uint8Array`, the SSE decoder, the chunk
/// interpreter, the accumulator), one event per read, and returns the last stream's result for
/// the rest of a request's rehearsal ([`prepare`](crate::web::measure::prepare)). As for a
/// real stream, reading stops at `[DONE]`; the body's end is read only when a stream has none.
///
/// Why: V8 first runs wasm from a quick baseline compile and recompiles a hot function with its
/// optimizing compiler on background threads; left to the measured run, that recompiling
/// happens during it, on the cores the network path and the server share
/// (docs/design/measurement.md, *Compiled before it is timed*). The synthetic timestamps touch
/// nothing measured.
pub fn rehearse_reading(content: &[String]) -> Option<StreamResult> {
    let events = synthetic_events(content);
    let streams = (REHEARSAL_EVENTS / events.len().max(1)).max(1);
    let mut last = None;
    for _ in 0..streams {
        let mut reading = BrowserReading::new(StreamAccumulator::new(0.0));
        let stopped = events
            .iter()
            .enumerate()
            .any(|(read, event)| reading.on_read(Some(event), read as f64));
        if !stopped {
            reading.on_read(None, events.len() as f64);
        }
        let (accumulator, _) = reading.reading.into_parts();
        last = std::hint::black_box(accumulator.finish(events.len() as f64).ok());
    }
    last
}

/// A dry run's answer to a request: the events of a stream that answers `content` (the canary
/// marker, then the requested words) after [`REHEARSAL_REASONING_TOKENS`] reasoning tokens,
/// as the byte chunks [`ChatRequest::synthetic`] streams one per read.
pub fn synthetic_stream(content: &[String]) -> js_sys::Array {
    synthetic_events(content)
        .into_iter()
        .map(JsValue::from)
        .collect()
}

/// The events of a synthetic stream that answers `content` after
/// [`REHEARSAL_REASONING_TOKENS`] reasoning tokens, one byte chunk each: what the rehearsal
/// reads and a dry run's requests are answered with.
fn synthetic_events(content: &[String]) -> Vec<Uint8Array> {
    crate::core::stream::sse::sample_stream_events(REHEARSAL_REASONING_TOKENS, content)
        .iter()
        .map(|event| Uint8Array::from(event.as_bytes()))
        .collect()
}

/// One stream being read in the browser: the core's [`StreamReading`] and one buffer that
/// every read's bytes are copied into out of the browser's `Uint8Array`.
struct BrowserReading {
    reading: StreamReading,
    bytes: Vec<u8>,
}

impl BrowserReading {
    fn new(accumulator: StreamAccumulator) -> Self {
        Self {
            reading: StreamReading::new(accumulator),
            bytes: Vec::new(),
        }
    }

    /// One read, stamped `now_ms`: `chunk` is `None` once the body has ended. Returns whether
    /// reading should stop (the stream ended, failed, or said `[DONE]`).
    fn on_read(&mut self, chunk: Option<&Uint8Array>, now_ms: f64) -> bool {
        let Some(chunk) = chunk else {
            return self.reading.on_body_end(now_ms);
        };
        self.bytes.resize(chunk.length() as usize, 0);
        chunk.copy_to(&mut self.bytes);
        self.reading.on_bytes(&self.bytes, now_ms)
    }
}

/// The bytes a `reader.read()` result carries, or `None` when the body has ended (or the
/// result is not a chunk of bytes at all). Read through the result's typed getters: no
/// property-name string crosses into JS on this per-read path.
fn read_chunk(read: &JsValue) -> Option<Uint8Array> {
    let result: &ReadableStreamReadResult = read.unchecked_ref();
    if result.get_done().unwrap_or(true) {
        return None;
    }
    result.get_value().dyn_into::<Uint8Array>().ok()
}

fn abort_or(
    control: &RequestControl,
    timeout_s: f64,
    otherwise: impl FnOnce() -> RequestError,
) -> RequestError {
    match control.cause.get() {
        AbortCause::Cancelled => RequestError::cancelled(),
        AbortCause::TimedOut => RequestError::timed_out(timeout_s),
        AbortCause::None => otherwise(),
    }
}

/// Reads at most [`ERROR_BODY_READ_LIMIT`] bytes of a body (an error page or a JSON answer) and
/// releases the rest unread: a hostile or runaway body can neither stall the request nor fill
/// memory. Invalid UTF-8 is replaced.
async fn read_text_bounded(response: &Response) -> Option<String> {
    let (bytes, _) = read_bytes_bounded(response, ERROR_BODY_READ_LIMIT).await?;
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

/// Reads at most `limit` bytes of `response`'s body and releases the rest unread, so a hostile
/// or runaway body can neither stall the reader nor fill memory: the bytes read, and the error
/// that stopped the reading early, if one did. `None` when the response has no body.
pub async fn read_bytes_bounded(
    response: &Response,
    limit: usize,
) -> Option<(Vec<u8>, Option<JsValue>)> {
    let reader: ReadableStreamDefaultReader = response.body()?.get_reader().unchecked_into();
    let mut bytes: Vec<u8> = Vec::new();
    let mut error = None;
    while bytes.len() < limit {
        let read = match JsFuture::from(reader.read()).await {
            Ok(read) => read,
            Err(err) => {
                error = Some(err);
                break;
            }
        };
        let Some(chunk) = read_chunk(&read) else {
            break;
        };
        bytes.extend(chunk.to_vec());
    }
    settle_quietly(reader.cancel());
    bytes.truncate(limit);
    Some((bytes, error))
}
