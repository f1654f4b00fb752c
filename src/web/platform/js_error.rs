//! JavaScript errors at the boundary: the text of a thrown value, for a Rust error that says what
//! happened.

use wasm_bindgen::{JsCast, JsValue};

/// The message of a JS error value, or its string form.
pub fn js_text(value: &JsValue) -> String {
    if let Some(error) = value.dyn_ref::<js_sys::Error>() {
        return String::from(error.message());
    }
    value.as_string().unwrap_or_else(|| format!("{value:?}"))
}
