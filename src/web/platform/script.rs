//! Scripts the page loads only when they are first needed: one `<script>` element appended to
//! the document's head, its `load` or `error` event as a future. ECharts (about 200 KiB
//! gzipped) is one: a first visit that draws no chart never downloads it.

use js_sys::Promise;
use wasm_bindgen::closure::Closure;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;

use crate::web::platform::js_error::js_text;

/// Appends `<script src=src>` (a URL relative to the page, as the build writes it) and resolves
/// when it has run, or with why it could not be loaded.
pub async fn load_script(src: &str) -> Result<(), String> {
    let document = web_sys::window()
        .and_then(|window| window.document())
        .ok_or_else(|| "this thread has no document to load a script into".to_owned())?;
    let head = document
        .head()
        .ok_or_else(|| "the page has no <head> to load a script into".to_owned())?;
    let script = document
        .create_element("script")
        .map_err(|err| js_text(&err))?;
    script
        .set_attribute("src", src)
        .map_err(|err| js_text(&err))?;
    let mut outcome: Result<(), String> = Ok(());
    let settled = Promise::new(&mut |resolve, reject| {
        let on_load = Closure::once_into_js(move || {
            let _ = resolve.call0(&wasm_bindgen::JsValue::NULL);
        });
        let on_error = Closure::once_into_js(move || {
            let _ = reject.call0(&wasm_bindgen::JsValue::NULL);
        });
        if let Err(err) = script
            .add_event_listener_with_callback("load", on_load.unchecked_ref())
            .and_then(|()| {
                script.add_event_listener_with_callback("error", on_error.unchecked_ref())
            })
        {
            outcome = Err(js_text(&err));
        }
    });
    outcome?;
    head.append_child(&script).map_err(|err| js_text(&err))?;
    JsFuture::from(settled).await.map(|_| ()).map_err(|_| {
        format!(
            "{src} could not be loaded (the build may be incomplete, or the host or the \
             network did not answer): reload the page to try again"
        )
    })
}
