//! The page's address bar and local storage.
//!
//! The only thing strobe ever stores is the API key, and only when the user ticks "remember on
//! this device"; the URL query holds the run configuration and never a key.

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

/// Keeps `key` on this device (called only while "remember" is ticked).
pub fn save_api_key(key: &str) {
    if let Some(storage) = local_storage() {
        if key.is_empty() {
            let _ = storage.remove_item(API_KEY_STORAGE_KEY);
        } else {
            let _ = storage.set_item(API_KEY_STORAGE_KEY, key);
        }
    }
}

/// Removes any remembered key.
pub fn forget_api_key() {
    if let Some(storage) = local_storage() {
        let _ = storage.remove_item(API_KEY_STORAGE_KEY);
    }
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
    let _ = history.replace_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(&url));
}
