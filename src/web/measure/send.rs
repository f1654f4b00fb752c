//! One request on the wire under the run's watch: aborted at once when the run is already
//! cancelled, sent and read to its end through the [`transport`](super::transport), marked ended
//! for the watchdog. Warm-up, dry-run and measured requests all go out through here.

use std::rc::Rc;

use wasm_bindgen::JsValue;

use crate::core::observe::accumulate::StreamResult;
use crate::core::observe::failure::RequestError;

use crate::web::measure::live_run::{LiveRun, RunSetup};
use crate::web::measure::transport::{
    stream_chat, AbortCause, ChatRequest, RequestControl, RequestHeaders,
};

/// How one request is sent and read beyond its URL and body; the default is a warm-up's.
#[derive(Default)]
pub(super) struct SendOptions<'a> {
    /// Record when each read that carried an event arrived.
    pub chunk_traces: bool,
    /// A dry run's answer: nothing is sent.
    pub synthetic: Option<&'a js_sys::Array>,
    /// A session's headers instead of the run's.
    pub headers: Option<&'a RequestHeaders>,
    /// Keep the whole reply, up to this many characters (a session's live history).
    pub reply_limit: Option<usize>,
}

/// Sends one request (aborted at once when the run is already cancelled; the run's
/// watchdog, [`scheduler`](super::scheduler)'s, aborts it when it falls idle) and reads its stream to the end: `fetch()`'s
/// clock reading and the result.
pub(super) async fn send_watched(
    live: &LiveRun,
    setup: &RunSetup,
    control: &Rc<RequestControl>,
    url: &str,
    body: &JsValue,
    options: SendOptions<'_>,
) -> (f64, Result<StreamResult, RequestError>) {
    let clock = &live.clock;
    if live.cancelled.get() {
        control.abort(AbortCause::Cancelled);
    }
    let request = ChatRequest {
        url,
        body,
        headers: options.headers.unwrap_or(&live.headers),
        api_key: setup.api_key.as_deref(),
        timeout_s: setup.config.timeout_s,
        chunk_traces: options.chunk_traces,
        synthetic: options.synthetic,
        reply_limit: options.reply_limit,
    };
    let sent_and_result = stream_chat(clock, &request, control).await;
    control.ended.set(true);
    sent_and_result
}
