//! The reading worker's side: when this app's wasm starts in a worker named
//! [`READER_NAME`], it reads one workload file off the page's thread. The page posts a
//! [`ToReader`] message (JSON text) with the `File` beside it, or a URL to fetch; the worker
//! streams the bytes through [`WorkloadReader`] piece by piece, tells the page how far it is
//! about every [`PROGRESS_INTERVAL_MS`], and ends with the workload read (only the sessions
//! kept, in messages small enough to decode without holding up the page) or the reason it
//! cannot be used. The file is never whole in memory, and the page's
//! thread stays free while hundreds of megabytes are read.

use std::cell::Cell;
use std::rc::Rc;

use js_sys::{Reflect, Uint8Array};
use leptos::wasm_split::wasm_split;
use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::{spawn_local, JsFuture};
use web_sys::{
    DedicatedWorkerGlobalScope, File, MessageEvent, ReadableStream, ReadableStreamDefaultReader,
};

use crate::core::live::{decode_message, encode_message, workload_messages, FromReader, ToReader};
use crate::core::workload::read::{ReadOptions, WorkloadReader};
use crate::core::workload::{too_large, Workload};

use crate::web::platform::clock::Clock;
use crate::web::platform::js_error::{js_text, settle_quietly};
use crate::web::platform::parts::PartNotLoaded;

/// The name the page gives a reading worker (a measurement worker has another).
pub const READER_NAME: &str = "strobe-reader";

/// How often the worker says how far it has read.
const PROGRESS_INTERVAL_MS: f64 = 100.0;

/// Whether this worker was started to read a workload file.
pub fn is_reader() -> bool {
    js_sys::global()
        .dyn_into::<DedicatedWorkerGlobalScope>()
        .map(|scope| scope.name() == READER_NAME)
        .unwrap_or(false)
}

/// Waits for the page's one request; called by `main` in a reading worker.
pub async fn serve_reading() {
    if let Err(error) = serve_part().await {
        post(&FromReader::Refused {
            reason: format!("the reading worker could not start: {error}"),
        });
    }
}

/// Sets the worker's message handler and says it is ready (a split point: the reading part of
/// the wasm, fetched as the worker starts).
#[wasm_split(reader, wasm_split_path = ::leptos::wasm_split, fallible)]
fn serve_part() -> Result<(), PartNotLoaded> {
    let scope: DedicatedWorkerGlobalScope = js_sys::global().unchecked_into();
    let taken = Rc::new(Cell::new(false));
    let on_message = Closure::<dyn FnMut(MessageEvent)>::new(move |event: MessageEvent| {
        // One file per worker: the page starts a fresh one for each reading.
        if taken.replace(true) {
            return;
        }
        let data = event.data();
        let request = Reflect::get(&data, &JsValue::from_str("request"))
            .ok()
            .and_then(|text| text.as_string())
            .ok_or_else(|| "the page sent the reading worker no request".to_owned())
            .and_then(|text| decode_message::<ToReader>(&text));
        let file = Reflect::get(&data, &JsValue::from_str("file"))
            .ok()
            .and_then(|file| file.dyn_into::<File>().ok());
        match request {
            Ok(request) => spawn_local(async move {
                let messages = read(&request, file)
                    .await
                    .and_then(workload_messages)
                    .or_else(|reason| {
                        encode_message(&FromReader::Refused { reason }).map(|text| vec![text])
                    });
                for text in messages.unwrap_or_default() {
                    post_text(&text);
                }
            }),
            Err(reason) => post(&FromReader::Refused { reason }),
        }
    });
    scope.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    // The listener lives as long as the worker.
    on_message.forget();
    post(&FromReader::Ready);
    Ok(())
}

/// Reads the file (or fetches the URL) of `request` to its end.
async fn read(request: &ToReader, file: Option<File>) -> Result<Workload, String> {
    let name = &request.name;
    let (stream, total) = match (file, &request.url) {
        (Some(file), _) => (file.stream(), Some(file.size() as u64)),
        (None, Some(url)) => fetched(url).await?,
        (None, None) => return Err("the page sent the reading worker no file".to_owned()),
    };
    if let Some(why) = total.and_then(|total| too_large(name, total)) {
        return Err(why);
    }
    let options = ReadOptions {
        turns: request.turns,
        keep: request.keep.clone(),
    };
    let mut reader = WorkloadReader::new(Some(name), options);
    let pieces: ReadableStreamDefaultReader = stream.get_reader().unchecked_into();
    let clock = Clock::of_this_thread();
    let now_ms = || clock.as_ref().map_or(0.0, Clock::now_ms);
    let mut told_ms = now_ms();
    let mut buffer: Vec<u8> = Vec::new();
    loop {
        let result = JsFuture::from(pieces.read())
            .await
            .map_err(|err| format!("the browser could not read {name}: {}", js_text(&err)))?;
        let done = Reflect::get(&result, &JsValue::from_str("done"))
            .ok()
            .and_then(|done| done.as_bool())
            .unwrap_or(true);
        if done {
            break;
        }
        let Ok(piece) = Reflect::get(&result, &JsValue::from_str("value"))
            .and_then(|value| value.dyn_into::<Uint8Array>())
        else {
            return Err(format!(
                "the browser gave {name} in a form strobe cannot read"
            ));
        };
        buffer.resize(piece.length() as usize, 0);
        piece.copy_to(&mut buffer);
        if let Err(error) = reader.push(&buffer) {
            settle_quietly(pieces.cancel());
            return Err(format!("{name}: {error}"));
        }
        if now_ms() - told_ms >= PROGRESS_INTERVAL_MS {
            told_ms = now_ms();
            post(&FromReader::Progress {
                read: reader.bytes_read(),
                total,
            });
        }
    }
    reader.finish().map_err(|error| format!("{name}: {error}"))
}

/// The body of `url` as a stream, with its length when the server says it.
async fn fetched(url: &str) -> Result<(ReadableStream, Option<u64>), String> {
    let response = gloo_net::http::Request::get(url)
        .send()
        .await
        .map_err(|err| {
            format!(
                "could not fetch the workload {url}: {err}. The server must allow this page's \
                 origin (CORS); or download the file and choose it here"
            )
        })?;
    if !response.ok() {
        return Err(format!(
            "the workload {url} answered HTTP {}: check the address",
            response.status()
        ));
    }
    let total = response
        .headers()
        .get("content-length")
        .and_then(|length| length.trim().parse::<u64>().ok());
    let body = response
        .body()
        .ok_or_else(|| format!("the workload {url} answered without a body"))?;
    Ok((body, total))
}

/// Sends the page a message; one that cannot be encoded is dropped (it cannot happen: the
/// messages are plain data).
fn post(message: &FromReader) {
    if let Ok(text) = encode_message(message) {
        post_text(&text);
    }
}

/// Sends the page a message already encoded.
fn post_text(text: &str) {
    let scope: DedicatedWorkerGlobalScope = js_sys::global().unchecked_into();
    let _ = scope.post_message(&JsValue::from_str(text));
}
