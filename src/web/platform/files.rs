//! Files in and out of the page: downloads built from text or bytes.

use wasm_bindgen::JsCast;
use web_sys::{Blob, BlobPropertyBag, HtmlAnchorElement, Url};

use crate::web::platform::js_error::js_text;

/// Offers the resource at `url` (an object or data URL) as a download named `file_name`.
pub fn download_url(file_name: &str, url: &str) -> Result<(), String> {
    let document = web_sys::window()
        .and_then(|window| window.document())
        .ok_or("no document to download from")?;
    let anchor: HtmlAnchorElement = document
        .create_element("a")
        .map_err(|err| js_text(&err))?
        .unchecked_into();
    anchor.set_href(url);
    anchor.set_download(file_name);
    anchor.click();
    Ok(())
}

/// Offers `text` to the user as a file named `file_name`.
pub fn download_text(file_name: &str, mime: &str, text: &str) -> Result<(), String> {
    let parts = js_sys::Array::of1(&text.into());
    download_parts(file_name, mime, &parts)
}

/// Offers `bytes` to the user as a file named `file_name`.
pub fn download_bytes(file_name: &str, mime: &str, bytes: &[u8]) -> Result<(), String> {
    let parts = js_sys::Array::of1(&js_sys::Uint8Array::from(bytes));
    download_parts(file_name, mime, &parts)
}

fn download_parts(file_name: &str, mime: &str, parts: &js_sys::Array) -> Result<(), String> {
    let options = BlobPropertyBag::new();
    options.set_type(mime);
    let blob = Blob::new_with_buffer_source_sequence_and_options(parts, &options)
        .map_err(|err| format!("could not prepare the file: {}", js_text(&err)))?;
    let url = Url::create_object_url_with_blob(&blob)
        .map_err(|err| format!("could not prepare the file: {}", js_text(&err)))?;
    download_url(file_name, &url)?;
    // Chromium starts the download asynchronously: keep the object URL alive a little while.
    leptos::prelude::set_timeout(
        move || {
            let _ = Url::revoke_object_url(&url);
        },
        std::time::Duration::from_secs(60),
    );
    Ok(())
}
