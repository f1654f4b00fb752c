//! The workload picker in the form's essentials: a file input, a drop on the form, the
//! samples, and `workload_url` from the link; how far reading has come (a progress bar), and
//! what reading found, said before anything is sent. Reading is `run::workload`'s, in a worker;
//! this renders and hands over the file.

use leptos::prelude::*;

use crate::core::config::fields::FieldKey;
use crate::core::format::format_bytes;

use crate::web::run::workload::{choose_file, choose_url, follow_settings};
use crate::web::state::workload::WorkloadState;
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
    let busy = move || state.phase().with(RunPhase::is_busy);
    // A link's workload_url is fetched once, when the page opens.
    let linked = state
        .form()
        .with_untracked(|form| form.get(FieldKey::WorkloadUrl).trim().to_owned());
    if !linked.is_empty() {
        choose_url(state, linked.clone(), name_of(&linked));
    }
    follow_settings(state);
    let summary = move || match state.workload().get() {
        WorkloadState::None => view! {
            <p class="field-help" data-testid="workload-summary" data-state="none">
                "No workload file: strobe's synthetic prompts. Choose (or drop on the form) a \
                 file of your own prompts, conversations or a trace (ShareGPT, OpenAI chat, \
                 JSONL, CSV, text, AIPerf, Mooncake, BurstGPT) to send them as given."
            </p>
        }
        .into_any(),
        WorkloadState::Loading { what, read, total } => {
            let done = match total {
                Some(total) => format!(
                    ": {} of {}",
                    format_bytes(read as usize),
                    format_bytes(total as usize)
                ),
                None if read > 0 => format!(": {}", format_bytes(read as usize)),
                None => String::new(),
            };
            view! {
                <p class="field-help" data-testid="workload-summary" data-state="loading">
                    {what}{done}"…"
                    <progress
                        data-testid="workload-progress"
                        max=total.unwrap_or(0).to_string()
                        value=total.map(|_| read.to_string())
                    ></progress>
                </p>
            }
            .into_any()
        }
        WorkloadState::Ready(workload, _) => view! {
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
                            choose_file(state, file);
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
                                choose_url(state, format!("public/samples/{file}"), file.to_owned())
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
