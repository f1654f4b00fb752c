//! The workload picker in the form's essentials: a file input, a drop on the form, the
//! samples, and `workload_url` from the link; what reading found, said before anything is
//! sent. Reading is the state's ([`AppState::choose_workload`]); this renders and hands over
//! bytes.

use std::sync::Arc;

use js_sys::Uint8Array;
use leptos::prelude::*;
use leptos::task::spawn_local;
use wasm_bindgen_futures::JsFuture;

use crate::core::config::fields::FieldKey;
use crate::core::format::format_count;
use crate::core::workload::MAX_WORKLOAD_BYTES;

use crate::web::platform::js_error::js_text;
use crate::web::state::workload::{WorkloadSource, WorkloadState};
use crate::web::state::{AppState, RunPhase};

/// The samples shipped in `public/samples/` (written for strobe), with their buttons' labels.
const SAMPLES: [(&str, &str, &str); 3] = [
    ("prompts.jsonl", "Sample prompts", "workload-sample-prompts"),
    ("trace.jsonl", "Sample trace", "workload-sample-trace"),
    (
        "conversations.jsonl",
        "Sample conversations",
        "workload-sample-conversations",
    ),
];

/// Reads a picked or dropped file into the state, refusing one too large before reading it.
pub async fn load_workload_file(state: AppState, file: web_sys::File) {
    let name = file.name();
    let size = file.size();
    if size > MAX_WORKLOAD_BYTES as f64 {
        state.workload_failed(format!(
            "{name} is {} bytes; strobe reads workload files of at most {} bytes: split it",
            format_count(size as usize),
            format_count(MAX_WORKLOAD_BYTES as usize)
        ));
        return;
    }
    state.workload_loading(format!("reading {name}"));
    match JsFuture::from(file.array_buffer()).await {
        Ok(buffer) => state.choose_workload(WorkloadSource {
            name,
            bytes: Arc::from(Uint8Array::new(&buffer).to_vec()),
        }),
        Err(err) => state.workload_failed(format!(
            "the browser could not read {name}: {}",
            js_text(&err)
        )),
    }
}

/// Fetches a workload file (a sample, or `workload_url`), with CORS: the answer's bytes, or
/// what went wrong and what to do.
async fn fetch_workload(state: AppState, url: String, name: String) {
    state.workload_loading(format!("fetching {name}"));
    let response = match gloo_net::http::Request::get(&url).send().await {
        Ok(response) => response,
        Err(err) => {
            return state.workload_failed(format!(
                "could not fetch the workload {url}: {err}. The server must allow this page's \
                 origin (CORS); or download the file and choose it here"
            ))
        }
    };
    if !response.ok() {
        return state.workload_failed(format!(
            "the workload {url} answered HTTP {}: check the address",
            response.status()
        ));
    }
    match response.binary().await {
        Ok(bytes) if bytes.len() as u64 > MAX_WORKLOAD_BYTES => state.workload_failed(format!(
            "the workload {url} is larger than {} bytes: split it",
            format_count(MAX_WORKLOAD_BYTES as usize)
        )),
        Ok(bytes) => state.choose_workload(WorkloadSource {
            name,
            bytes: Arc::from(bytes),
        }),
        Err(err) => state.workload_failed(format!("could not read the workload {url}: {err}")),
    }
}

/// The last path segment of `url`, for a name to show.
fn name_of(url: &str) -> String {
    let path = url.split(['?', '#']).next().unwrap_or_default();
    path.rsplit('/')
        .find(|segment| !segment.is_empty())
        .unwrap_or("workload")
        .to_owned()
}

/// The workload picker.
#[component]
pub fn WorkloadPicker() -> impl IntoView {
    let state = AppState::expect();
    let busy = move || matches!(state.phase().get(), RunPhase::Preflight | RunPhase::Running);
    // A link's workload_url is fetched once, when the page opens.
    let linked = state
        .form()
        .with_untracked(|form| form.get(FieldKey::WorkloadUrl).trim().to_owned());
    if !linked.is_empty() {
        spawn_local(fetch_workload(state, linked.clone(), name_of(&linked)));
    }
    let summary = move || match state.workload().get() {
        WorkloadState::None => view! {
            <p class="field-help" data-testid="workload-summary" data-state="none">
                "No workload file: strobe's synthetic prompts. Choose (or drop on the form) a \
                 file of your own prompts, conversations or a trace (ShareGPT, OpenAI chat, \
                 JSONL, CSV, text, AIPerf, Mooncake, BurstGPT) to send them as given."
            </p>
        }
        .into_any(),
        WorkloadState::Loading(what) => view! {
            <p class="field-help" data-testid="workload-summary" data-state="loading">{what}"…"</p>
        }
        .into_any(),
        WorkloadState::Ready(workload) => view! {
            <p class="ok" data-testid="workload-summary" data-state="ready">
                {workload.summary.sentence()}
            </p>
        }
        .into_any(),
        WorkloadState::Refused(why) => view! {
            <p class="field-error" data-testid="workload-summary" data-state="refused">{why}</p>
        }
        .into_any(),
    };
    view! {
        <div class="workload-picker" data-testid="workload">
            <label class="field-label">
                "Workload "
                <input
                    type="file"
                    data-testid="workload-file"
                    aria-label="Workload file: your prompts, conversations or trace"
                    prop:disabled=busy
                    on:change=move |ev| {
                        let input: web_sys::HtmlInputElement = event_target(&ev);
                        if let Some(file) = input.files().and_then(|files| files.get(0)) {
                            spawn_local(load_workload_file(state, file));
                        }
                        input.set_value("");
                    }
                />
            </label>
            {SAMPLES
                .iter()
                .map(|&(file, label, id)| {
                    view! {
                        <button
                            type="button"
                            class="small"
                            data-testid=id
                            prop:disabled=busy
                            on:click=move |_| {
                                spawn_local(fetch_workload(state, format!("public/samples/{file}"), file.to_owned()))
                            }
                        >
                            {label}
                        </button>
                    }
                })
                .collect_view()}
            <button
                type="button"
                class="small"
                data-testid="workload-clear"
                prop:disabled=busy
                on:click=move |_| state.clear_workload()
            >
                "No workload"
            </button>
            {summary}
        </div>
    }
}
