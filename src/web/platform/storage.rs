//! The page's address bar and local storage.
//!
//! The only thing strobe ever stores is the API key, and only when the user ticks "remember on
//! this device"; the URL query holds the run configuration and never a key.

use crate::web::platform::js_error::js_text;

const API_KEY_STORAGE_KEY: &str = "strobe.api_key";

fn local_storage() -> Option<web_sys::Storage> {
    web_sys::window()?.local_storage().ok()?
}

/// The remembered API key, if the user chose to keep one.
pub fn load_api_key() -> Option<String> {
    local_storage()?
        .get_item(API_KEY_STORAGE_KEY)
        .ok()?
        .filter(|key| !key.is_empty())
}

/// Keeps `key` on this device (called only while "remember" is ticked), or says why this
/// browser would not keep it.
pub fn save_api_key(key: &str) -> Result<(), String> {
    let storage = local_storage().ok_or_else(no_storage)?;
    let outcome = if key.is_empty() {
        storage.remove_item(API_KEY_STORAGE_KEY)
    } else {
        storage.set_item(API_KEY_STORAGE_KEY, key)
    };
    outcome.map_err(|err| {
        format!(
            "This browser refused to keep the key ({}): it is used for this visit only.",
            js_text(&err)
        )
    })
}

/// Removes any remembered key, or says why it could not.
pub fn forget_api_key() -> Result<(), String> {
    let Some(storage) = local_storage() else {
        // No storage: nothing can have been remembered.
        return Ok(());
    };
    storage.remove_item(API_KEY_STORAGE_KEY).map_err(|err| {
        format!(
            "This browser would not forget the remembered key ({}): clear this site's data \
             in the browser's settings to remove it.",
            js_text(&err)
        )
    })
}

fn no_storage() -> String {
    "This browser gives this page no local storage (a private window, or storage blocked for \
     the site): the key is used for this visit only."
        .to_owned()
}

/// Replaces the page's query string without adding a history entry or reloading.
pub fn replace_query(query: &str) {
    let Some(window) = web_sys::window() else {
        return;
    };
    let Ok(history) = window.history() else {
        return;
    };
    let path = window.location().pathname().unwrap_or_default();
    let url = if query.is_empty() {
        path
    } else {
        format!("{path}?{query}")
    };
    // The address bar then lags the form; the form, and every run, are unaffected.
    if let Err(err) = history.replace_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(&url)) {
        leptos::logging::warn!(
            "strobe: the address bar could not follow the form: {}",
            js_text(&err)
        );
    }
}
