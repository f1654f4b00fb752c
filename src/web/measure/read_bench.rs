//! The per-read path timed in the browser, for the read-path benchmark
//! (`tests/e2e/bench/read-path.mjs`, run by `scripts/bench-read.sh`): streams answered in the
//! browser, nothing sent, read through exactly what reads a measured stream ([`stream_chat`]:
//! `pump_response`, the copy out of the browser's chunk, the core's decoder, chunk reader and
//! accumulator, the stream's conclusion). Exported to JavaScript as `bench_read_path`, only in a build
//! with the `bench-hooks` feature (never in the shipped one), and never called by the app.

use futures::future::join_all;
use wasm_bindgen::prelude::wasm_bindgen;
use wasm_bindgen::JsValue;

use crate::web::measure::transport::{stream_chat, ChatRequest, RequestControl, RequestHeaders};
use crate::web::platform::clock::Clock;

/// Reads `streams` streams, each made of `events` (byte chunks, one per read), `concurrency` at
/// a time, and resolves to the milliseconds that took. Rejects with the reason if a stream
/// did not read as a complete chat-completions stream (then the figure would time something
/// else).
#[wasm_bindgen]
pub async fn bench_read_path(
    events: js_sys::Array,
    streams: u32,
    concurrency: u32,
) -> Result<f64, JsValue> {
    let clock = Clock::of_this_thread().ok_or("no performance clock")?;
    let headers = RequestHeaders::new(None);
    let body = JsValue::from_str("{}");
    let next = std::cell::Cell::new(0);
    let started_ms = clock.now_ms();
    let slot = || async {
        while next.get() < streams {
            next.set(next.get() + 1);
            let control = RequestControl::new(clock.now_ms()).map_err(|error| error.message)?;
            let request = ChatRequest {
                url: "about:blank",
                body: &body,
                headers: &headers,
                api_key: None,
                timeout_s: 60.0,
                chunk_traces: false,
                synthetic: Some(&events),
                reply_limit: None,
            };
            let (_, result) = stream_chat(&clock, &request, &control).await;
            let result = result.map_err(|error| error.to_string())?;
            if !result.done_observed || result.content_chunks == 0 {
                return Err("a benchmark stream did not read to [DONE] with content".to_owned());
            }
        }
        Ok::<(), String>(())
    };
    let slots = join_all((0..concurrency.max(1)).map(|_| slot())).await;
    let elapsed_ms = clock.now_ms() - started_ms;
    slots
        .into_iter()
        .collect::<Result<Vec<()>, String>>()
        .map_err(|reason| JsValue::from_str(&reason))?;
    Ok(elapsed_ms)
}
