//! The clipboard (through `clipboard.js`): copying a link, or why the browser would not.

use js_sys::Reflect;
use wasm_bindgen::JsValue;
use wasm_bindgen_futures::JsFuture;

use crate::web::js::copy_text;
use crate::web::platform::js_error::js_text;

/// Why the browser did not copy (no permission, no focus, no clipboard at all).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("the browser did not let the page copy ({0})")]
pub struct CopyRefused(pub String);

/// Copies `text` to the clipboard.
pub async fn copy(text: &str) -> Result<(), CopyRefused> {
    let answer = JsFuture::from(copy_text(text))
        .await
        .map_err(|error| CopyRefused(js_text(&error)))?;
    let field = |name: &str| {
        Reflect::get(&answer, &JsValue::from_str(name))
            .ok()
            .and_then(|value| value.as_string())
    };
    match field("kind").as_deref() {
        Some("copied") => Ok(()),
        _ => Err(CopyRefused(
            field("message").unwrap_or_else(|| "no reason given".to_owned()),
        )),
    }
}
