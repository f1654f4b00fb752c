//! The library's files kept across reloads and browser restarts, in the browser's IndexedDB
//! (through `library_store.js`): batches of files exactly as they were loaded (a run's
//! artifact, or the files dropped together), each under a key the database numbers. What is
//! kept is read again on the next visit by the same reader that read it first. The API key is
//! never among them: a run's artifact does not hold it.

use js_sys::{Array, Reflect, Uint8Array};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

use crate::web::js::{store_all, store_clear, store_delete, store_put, store_replace};

/// One file of a kept batch: its name and bytes.
pub type KeptFile = (String, Vec<u8>);

/// A batch of files as kept, with its key.
pub struct KeptBatch {
    /// The database's key for it.
    pub key: f64,
    /// Its files, in the order they were loaded.
    pub files: Vec<KeptFile>,
}

/// Why the library could not keep (or read back, or forget) its files. Each says what to do;
/// nothing already loaded is lost by it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum KeepError {
    /// The browser gives the page no storage (a private window, storage blocked for the site).
    #[error(
        "this browser keeps nothing for the page ({0}), so the library lasts until the tab \
         closes: download the runs you want to keep"
    )]
    Unavailable(String),
    /// The browser's storage for the page is full.
    #[error(
        "the browser's storage for this page is full, so this was not kept: remove runs you no \
         longer need from the library (Remove, or Clear all) and load it again, or download it \
         ({0})"
    )]
    Quota(String),
    /// Anything else the database said.
    #[error("the library could not be kept: {0}; download the runs you want to keep")]
    Failed(String),
}

impl KeepError {
    fn of(error: JsValue) -> Self {
        let text = |name: &str| {
            Reflect::get(&error, &JsValue::from_str(name))
                .ok()
                .and_then(|value| value.as_string())
        };
        let message = text("message").unwrap_or_else(|| "no reason given".to_owned());
        match text("kind").as_deref() {
            Some("unavailable") => Self::Unavailable(message),
            Some("quota") => Self::Quota(message),
            _ => Self::Failed(message),
        }
    }
}

fn arrays(files: &[KeptFile]) -> (Array, Array) {
    let names = files
        .iter()
        .map(|(name, _)| JsValue::from_str(name))
        .collect();
    let bytes = files
        .iter()
        .map(|(_, bytes)| JsValue::from(Uint8Array::from(bytes.as_slice())))
        .collect();
    (names, bytes)
}

/// Keeps `files` as one batch; its key.
pub async fn keep(files: &[KeptFile]) -> Result<f64, KeepError> {
    let (names, bytes) = arrays(files);
    let key = JsFuture::from(store_put(names, bytes))
        .await
        .map_err(KeepError::of)?;
    key.as_f64()
        .ok_or_else(|| KeepError::Failed("the database gave no key".to_owned()))
}

/// Replaces the batch kept under `key` with `files`.
pub async fn replace(key: f64, files: &[KeptFile]) -> Result<(), KeepError> {
    let (names, bytes) = arrays(files);
    JsFuture::from(store_replace(key, names, bytes))
        .await
        .map(drop)
        .map_err(KeepError::of)
}

/// Every kept batch, in the order kept. A record that is not a batch of files is passed over.
pub async fn kept() -> Result<Vec<KeptBatch>, KeepError> {
    let records = JsFuture::from(store_all()).await.map_err(KeepError::of)?;
    let records: Array = records.dyn_into().unwrap_or_default();
    let field = |record: &JsValue, name: &str| {
        Reflect::get(record, &JsValue::from_str(name)).unwrap_or(JsValue::UNDEFINED)
    };
    Ok(records
        .iter()
        .filter_map(|record| {
            let key = field(&record, "key").as_f64()?;
            let names: Array = field(&record, "names").dyn_into().ok()?;
            let bytes: Array = field(&record, "bytes").dyn_into().ok()?;
            let files = names
                .iter()
                .zip(bytes.iter())
                .filter_map(|(name, bytes)| {
                    let bytes: Uint8Array = bytes.dyn_into().ok()?;
                    Some((name.as_string()?, bytes.to_vec()))
                })
                .collect();
            Some(KeptBatch { key, files })
        })
        .collect())
}

/// Forgets the batch kept under `key`.
pub async fn forget(key: f64) -> Result<(), KeepError> {
    JsFuture::from(store_delete(key))
        .await
        .map(drop)
        .map_err(KeepError::of)
}

/// Forgets every kept batch.
pub async fn forget_all() -> Result<(), KeepError> {
    JsFuture::from(store_clear())
        .await
        .map(drop)
        .map_err(KeepError::of)
}
