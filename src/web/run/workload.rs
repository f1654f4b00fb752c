//! Reading a workload file for the page, off its thread: a reading worker (this app's wasm in
//! a worker named [`READER_NAME`]) streams the file or the fetched URL and reports how far it
//! is, and the page's state shows it ([`AppState::workload_progress`]). Only the sessions a run
//! can send stay in memory ([`sessions_to_keep`]); a change of `workload_turns`, or of the
//! shuffle's order or seed when the file holds more sessions than a run sends, reads the file
//! again ([`follow_settings`]).

use std::cell::RefCell;

use futures::channel::oneshot;
use leptos::prelude::*;
use leptos::task::spawn_local;
use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};
use web_sys::{ErrorEvent, MessageEvent, Worker};

use crate::core::config::choices::WorkloadOrder;
use crate::core::config::fields::FieldKey;
use crate::core::config::form::RunForm;
use crate::core::config::settings::MAX_REQUESTS;
use crate::core::config::workload::WorkloadOptions;
use crate::core::live::{decode_message, encode_message, FromReader, ToReader, WorkloadGathering};
use crate::core::plan::workload::sessions_to_keep;
use crate::core::workload::read::{Keep, ReadOptions};
use crate::core::workload::{too_large, Workload};

use crate::web::measure::reading::READER_NAME;
use crate::web::platform::js_error::js_text;
use crate::web::run::host::new_app_worker;
use crate::web::state::workload::{WorkloadOrigin, WorkloadSource, WorkloadState};
use crate::web::state::AppState;

thread_local! {
    /// The reading worker at work, ended when another reading replaces it.
    static CURRENT: RefCell<Option<Worker>> = const { RefCell::new(None) };
}

/// Reads a file the user chose or dropped; one too large is refused before reading.
pub fn choose_file(state: AppState, file: web_sys::File) {
    let name = file.name();
    if let Some(why) = too_large(&name, file.size() as u64) {
        state.workload_failed(None, why);
        return;
    }
    let source = WorkloadSource {
        name: name.clone(),
        origin: WorkloadOrigin::File(file),
    };
    spawn_local(read(state, source, format!("reading {name}"), true));
}

/// Fetches and reads a workload file at `url` (a sample, or `workload_url`; relative to the
/// page), named `name`.
pub fn choose_url(state: AppState, url: String, name: String) {
    let what = format!("fetching {name}");
    // The reading worker's own address is another: it is handed the address the page means.
    let url = web_sys::window()
        .and_then(|window| window.document())
        .and_then(|document| document.base_uri().ok().flatten())
        .and_then(|base| web_sys::Url::new_with_base(&url, &base).ok())
        .map_or(url, |absolute| absolute.href());
    let source = WorkloadSource {
        name,
        origin: WorkloadOrigin::Url(url),
    };
    spawn_local(read(state, source, what, true));
}

/// Reads the chosen file again whenever the form's workload settings need another reading:
/// another `workload_turns`, or another order or seed of a file with more sessions than a run
/// sends.
pub fn follow_settings(state: AppState) {
    let settings = Memo::new(move |_| state.form().with(workload_settings));
    Effect::new(move |_| {
        let wanted = settings.get();
        let Some(source) = state.workload_source() else {
            return;
        };
        let WorkloadState::Ready(workload, read_with) = state.workload().get_untracked() else {
            return;
        };
        if options_for(&wanted, workload.summary.sessions) != read_with {
            let what = format!("reading {} again", source.name);
            spawn_local(read(state, source, what, false));
        }
    });
}

/// The form's settings that decide how a workload file is read.
fn workload_settings(form: &RunForm) -> WorkloadOptions {
    WorkloadOptions {
        turns: form
            .get(FieldKey::WorkloadTurns)
            .trim()
            .parse()
            .unwrap_or_default(),
        order: form
            .get(FieldKey::WorkloadOrder)
            .trim()
            .parse()
            .unwrap_or(WorkloadOrder::File),
        seed: form.get(FieldKey::WorkloadSeed).trim().parse().unwrap_or(0),
        ..WorkloadOptions::default()
    }
}

/// How to read a file of `usable` sessions (when known) for `settings`.
fn options_for(settings: &WorkloadOptions, usable: u64) -> ReadOptions {
    ReadOptions {
        turns: settings.turns,
        keep: sessions_to_keep(usable, settings),
    }
}

/// Reads `source` with the form's settings into the state. A first reading keeps the first
/// sessions a run can send; when the form shuffles a file with more, a second reading keeps
/// those the shuffle draws.
async fn read(state: AppState, source: WorkloadSource, what: String, chosen: bool) {
    let settings = state.form().with_untracked(workload_settings);
    let reading = state.workload_reading(source.clone(), what);
    let progress = move |read, total| state.workload_progress(reading, read, total);
    let first = ReadOptions {
        turns: settings.turns,
        keep: Keep::First(MAX_REQUESTS),
    };
    let outcome = match read_in_worker(&source, &first, progress).await {
        Ok(workload) => {
            let needed = options_for(&settings, workload.summary.sessions);
            if needed.keep == Keep::First(MAX_REQUESTS) || needed.keep == Keep::All {
                Ok((workload, needed))
            } else {
                read_in_worker(&source, &needed, progress)
                    .await
                    .map(|workload| (workload, needed))
            }
        }
        Err(why) => Err(why),
    };
    match outcome {
        Ok((workload, options)) => state.workload_read(reading, workload, options, chosen),
        Err(why) => state.workload_failed(Some(reading), why),
    }
}

/// Reads `source` with `options` in a reading worker of its own, `progress` told the bytes
/// read and the size as they come.
async fn read_in_worker(
    source: &WorkloadSource,
    options: &ReadOptions,
    progress: impl Fn(u64, Option<u64>) + 'static,
) -> Result<Workload, String> {
    let (worker, code) = new_app_worker(READER_NAME).map_err(|error| error.to_string())?;
    let request = ToReader {
        name: source.name.clone(),
        url: match &source.origin {
            WorkloadOrigin::Url(url) => Some(url.clone()),
            WorkloadOrigin::File(_) => None,
        },
        turns: options.turns,
        keep: options.keep.clone(),
    };
    let message = js_sys::Object::new();
    let request = encode_message(&request)?;
    let _ = js_sys::Reflect::set(&message, &"request".into(), &JsValue::from_str(&request));
    if let WorkloadOrigin::File(file) = &source.origin {
        let _ = js_sys::Reflect::set(&message, &"file".into(), file);
    }
    let (sender, receiver) = oneshot::channel::<Result<Workload, String>>();
    let sender = std::rc::Rc::new(RefCell::new(Some(sender)));
    let finish = {
        let sender = sender.clone();
        move |outcome: Result<Workload, String>| {
            if let Some(sender) = sender.borrow_mut().take() {
                let _ = sender.send(outcome);
            }
        }
    };
    let gathering = RefCell::new(WorkloadGathering::default());
    let on_message = {
        let worker = worker.clone();
        let finish = finish.clone();
        Closure::<dyn FnMut(MessageEvent)>::new(move |event: MessageEvent| {
            let text = event.data().as_string().unwrap_or_default();
            match decode_message::<FromReader>(&text) {
                Ok(FromReader::Ready) => {
                    if let Err(err) = worker.post_message(&message) {
                        finish(Err(format!(
                            "the browser could not hand the file to the reading worker: {}",
                            js_text(&err)
                        )));
                    }
                }
                Ok(FromReader::Progress { read, total }) => progress(read, total),
                Ok(FromReader::Sessions { sessions }) => gathering.borrow_mut().add(sessions),
                Ok(FromReader::Read { summary, positions }) => {
                    let gathered = std::mem::take(&mut *gathering.borrow_mut());
                    finish(Ok(gathered.finish(summary, positions)));
                }
                Ok(FromReader::Refused { reason }) => finish(Err(reason)),
                // The bootstrap's own failure (its code could not load) says why in `reason`.
                Err(_) => finish(Err(bootstrap_reason(&text))),
            }
        })
    };
    let on_error = {
        let finish = finish.clone();
        Closure::<dyn FnMut(ErrorEvent)>::new(move |event: ErrorEvent| {
            finish(Err(format!(
                "the reading worker stopped: {}; reload the page and choose the file again",
                event.message()
            )));
        })
    };
    worker.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    worker.set_onerror(Some(on_error.as_ref().unchecked_ref()));
    code.hand_over(&worker).map_err(|error| error.to_string())?;
    if let Some(replaced) = CURRENT.with(|current| current.borrow_mut().replace(worker.clone())) {
        // Its reading is over: the state no longer listens to it.
        replaced.terminate();
    }
    let outcome = receiver
        .await
        .unwrap_or_else(|_| Err("the reading was replaced by another".to_owned()));
    worker.terminate();
    CURRENT.with(|current| {
        let mut current = current.borrow_mut();
        if current.as_ref() == Some(&worker) {
            *current = None;
        }
    });
    drop((on_message, on_error));
    outcome
}

/// The reason in a message of the worker's bootstrap (`{"kind": "failed", "reason": …}`),
/// or a plain account when there is none.
fn bootstrap_reason(text: &str) -> String {
    serde_json::from_str::<serde_json::Value>(text)
        .ok()
        .and_then(|value| value.get("reason")?.as_str().map(str::to_owned))
        .map(|reason| reason.replace("measurement worker", "reading worker"))
        .unwrap_or_else(|| {
            "the reading worker sent a message strobe does not understand".to_owned()
        })
}
