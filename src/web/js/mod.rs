//! The JavaScript this layer runs, kept in real `.js` modules beside this file, and the typed
//! bindings Rust calls them through:
//!
//! - `transport.js`: the send (`send_chat`) and the reading of a response (`pump_response`),
//!   answering with tagged objects ([`SentRequest`], [`PumpEnd`]);
//! - `measure_worker.js`: the measurement worker's bootstrap ([`worker_script_url`]);
//! - `clipboard.js`: copying a link, answering whether the browser allowed it ([`copy_text`]);
//! - `library_store.js`: the library's files kept in IndexedDB ([`store_put`], [`store_all`],
//!   …), each a promise;
//! - ECharts, loaded as a page script, through [`ECharts`] instead of method names looked up at
//!   run time.
//!
//! `scripts/check.sh` runs `node --check` on the `.js` files, and `tests/architecture.rs` holds
//! the read verdicts below to the numbers `transport.js` exports.

use js_sys::{Function, Promise};
use wasm_bindgen::prelude::wasm_bindgen;
use wasm_bindgen::JsValue;
use web_sys::{AbortSignal, Headers, HtmlElement};

/// What the per-read callback answers `pump_response`: read on (`KEEP_READING` in
/// `transport.js`).
pub const KEEP_READING: u32 = 0;
/// The stream has ended (`[DONE]`): read the rest of the body to free the connection, calling
/// into the module no more (`READ_TO_THE_END`).
pub const READ_TO_THE_END: u32 = 1;
/// The stream failed (its bytes broke the decoder): cancel the rest of the body
/// (`STOP_READING`).
pub const STOP_READING: u32 = 2;

#[wasm_bindgen(module = "/src/web/js/transport.js")]
extern "C" {
    /// What `send_chat` returns: the clock reading taken immediately before `fetch()`, and the
    /// fetch's promise (rejected when `fetch()` threw).
    pub type SentRequest;

    /// The clock reading (`performance.now()`) that starts the request's times.
    #[wasm_bindgen(method, getter)]
    pub fn sent(this: &SentRequest) -> f64;

    /// The promise of the response.
    #[wasm_bindgen(method, getter)]
    pub fn response(this: &SentRequest) -> Promise;

    /// How `pump_response` ended: `kind` is `read`, `not_a_stream` (with `response`) or
    /// `fetch_failed` (with `error`).
    pub type PumpEnd;

    /// `read`, `not_a_stream` or `fetch_failed`.
    #[wasm_bindgen(method, getter)]
    pub fn kind(this: &PumpEnd) -> String;

    /// The `Response` of a `not_a_stream` end.
    #[wasm_bindgen(method, getter, js_name = response)]
    pub fn not_a_stream_response(this: &PumpEnd) -> JsValue;

    /// The error of a `fetch_failed` end.
    #[wasm_bindgen(method, getter)]
    pub fn error(this: &PumpEnd) -> JsValue;

    /// Reads the clock and calls `fetch(url, init)` at once, with the run's headers, the
    /// request's abort signal and `cache: 'default'` (so the CORS preflight cache serves it).
    /// With `synthetic` events (not `undefined`), nothing is sent: the response streams them,
    /// one per read (a dry run's).
    pub fn send_chat(
        url: &str,
        body: &JsValue,
        headers: &Headers,
        signal: &AbortSignal,
        synthetic: &JsValue,
    ) -> SentRequest;

    /// Takes a response from its headers to the end of its body, calling `on_read(chunk, now)`
    /// once per read with the clock read the moment the read resolved (`null` for the headers,
    /// `undefined` at the end), while it answers [`KEEP_READING`]; resolves to a [`PumpEnd`],
    /// rejects with a read's error. One JavaScript function per request, so a read costs one
    /// call into the module and the end of a body none.
    pub fn pump_response(response: &Promise, on_read: &Function, grace_ms: f64) -> Promise;
}

#[wasm_bindgen(module = "/src/web/js/library_store.js")]
extern "C" {
    /// Keeps a batch of files (names and `Uint8Array`s, index by index); resolves with its key.
    #[wasm_bindgen(js_name = storePut)]
    pub fn store_put(names: js_sys::Array, bytes: js_sys::Array) -> Promise;

    /// Replaces the batch kept under `key`.
    #[wasm_bindgen(js_name = storeReplace)]
    pub fn store_replace(key: f64, names: js_sys::Array, bytes: js_sys::Array) -> Promise;

    /// Every kept batch, in the order kept: `[{ key, names, bytes }]`.
    #[wasm_bindgen(js_name = storeAll)]
    pub fn store_all() -> Promise;

    /// Forgets the batch kept under `key`.
    #[wasm_bindgen(js_name = storeDelete)]
    pub fn store_delete(key: f64) -> Promise;

    /// Forgets every kept batch.
    #[wasm_bindgen(js_name = storeClear)]
    pub fn store_clear() -> Promise;
}

#[wasm_bindgen(module = "/src/web/js/clipboard.js")]
extern "C" {
    /// Copies `text` to the clipboard; resolves with `{ kind: 'copied' }` or
    /// `{ kind: 'refused', message }`, never rejects.
    #[wasm_bindgen(js_name = copyText)]
    pub fn copy_text(text: &str) -> Promise;
}

#[wasm_bindgen(module = "/src/web/js/measure_worker.js")]
extern "C" {
    /// The URL of the measurement worker's bootstrap module, to start the worker with.
    pub fn worker_script_url() -> String;
}

#[wasm_bindgen]
extern "C" {
    /// One ECharts chart instance (`echarts.init`'s result).
    pub type ECharts;

    /// `echarts.init(element, null, options)`: throws when ECharts did not load.
    #[wasm_bindgen(catch, js_namespace = echarts, js_name = init)]
    pub fn echarts_init(
        element: &HtmlElement,
        theme: &JsValue,
        options: &JsValue,
    ) -> Result<ECharts, JsValue>;

    /// `chart.setOption(option, settings)`: draws now (no `lazyUpdate`).
    #[wasm_bindgen(catch, method, js_name = setOption)]
    pub fn set_option(this: &ECharts, option: &JsValue, settings: &JsValue) -> Result<(), JsValue>;

    /// `chart.on(event, handler)`.
    #[wasm_bindgen(catch, method)]
    pub fn on(this: &ECharts, event: &str, handler: &Function) -> Result<(), JsValue>;

    /// `chart.resize()`.
    #[wasm_bindgen(catch, method)]
    pub fn resize(this: &ECharts) -> Result<(), JsValue>;

    /// `chart.dispose()`.
    #[wasm_bindgen(catch, method)]
    pub fn dispose(this: &ECharts) -> Result<(), JsValue>;
}
