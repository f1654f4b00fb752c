//! Timers as futures, on the browser's `setTimeout` (the page's or the worker's).

use wasm_bindgen::closure::Closure;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;

use super::scope;

/// Resolves after about `ms` milliseconds (at least one event-loop turn).
pub async fn sleep_ms(ms: f64) {
    let promise = js_sys::Promise::new(&mut |resolve, _reject| {
        let resolve_later = resolve.clone();
        let callback = Closure::once_into_js(move || {
            let _ = resolve_later.call0(&wasm_bindgen::JsValue::NULL);
        });
        let delay = ms.clamp(0.0, i32::MAX as f64) as i32;
        if !scope::set_timeout(callback.unchecked_ref(), delay) {
            // No timer to wait on: resolve now rather than never.
            let _ = resolve.call0(&wasm_bindgen::JsValue::NULL);
        }
    });
    let _ = JsFuture::from(promise).await;
}
