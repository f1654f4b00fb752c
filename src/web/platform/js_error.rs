//! JavaScript errors at the boundary: the text of a thrown value, for a Rust error that says what
//! happened, and promises let settle with their rejections handled.

use wasm_bindgen::{JsCast, JsValue};

/// The message of a JS error value, or its string form.
pub fn js_text(value: &JsValue) -> String {
    if let Some(error) = value.dyn_ref::<js_sys::Error>() {
        return String::from(error.message());
    }
    value.as_string().unwrap_or_else(|| format!("{value:?}"))
}

/// Lets `promise` settle with nobody waiting for its value, its rejection handled: a dropped
/// promise that rejects (a `cancel()` of a stream an abort already errored) would otherwise
/// reach the page as an uncaught error.
pub fn settle_quietly(promise: js_sys::Promise) {
    wasm_bindgen_futures::spawn_local(async move {
        let _ = wasm_bindgen_futures::JsFuture::from(promise).await;
    });
}
