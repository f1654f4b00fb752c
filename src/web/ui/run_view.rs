//! The run view: the configuration form, preflight, Run and Cancel, and the live numbers.

use std::collections::BTreeMap;

use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::core::config::fields::{FieldGroup, FieldKey, FieldKind};
use crate::core::config::form::{list_entries, RunForm};
use crate::core::config::settings::BROWSER_HTTP1_CONNECTIONS_PER_HOST;
use crate::core::config::sweep::{SweepKind, SweepSpec};
use crate::core::format::{counted, format_tenths};

use crate::core::config::models::engine_warning;
use crate::core::config::pool::loopback_alias_pool;
use crate::core::live::{LiveSnapshot, OpenLoopProgress};
use crate::core::plan::context_window_note;
use crate::core::prompt::export::{holds_prompts, plan_document_with};
use crate::web::platform::files::download_text;
use crate::web::run::preflight::CORS_RECIPES;
use crate::web::run::start::{
    config_for_preflight, fetch_run_code, load_models, run_action, FILLED_BY_PREFLIGHT,
};
use crate::web::run::workload::choose_file;
use crate::web::state::library::Library;
use crate::web::state::workload::WorkloadState;
use crate::web::state::{AppState, RunPhase};
use crate::web::ui::echart::load_charts;
use crate::web::ui::live_charts::LiveCharts;
use crate::web::ui::workload::WorkloadPicker;

/// The file *Export plan* downloads: `strobe-artifact plan`'s `plan.json` under a name of its
/// own.
const PLAN_FILE_NAME: &str = "strobe-plan.json";

/// The left column: configure, check, run, watch.
#[component]
pub fn RunView() -> impl IntoView {
    let state = AppState::expect();
    let library = expect_context::<Library>();
    let start = run_action(state, library);
    let errors = Memo::new(move |_| {
        state.form().with(|form| match form.to_config() {
            Ok(_) => BTreeMap::new(),
            Err(errors) => errors
                .into_iter()
                .map(|error| (error.field, error.message))
                .fold(
                    BTreeMap::<FieldKey, String>::new(),
                    |mut map, (field, message)| {
                        map.entry(field)
                            .and_modify(|existing| {
                                existing.push_str("; ");
                                existing.push_str(&message);
                            })
                            .or_insert(message);
                        map
                    },
                ),
        })
    });
    let busy = move || state.phase().with(RunPhase::is_busy);
    // Why the last *Export plan* made no file, if it did not.
    let plan_error = RwSignal::new(None::<String>);
    // After exporting a plan with a workload: that plan.json holds the file's prompts.
    let plan_notice = RwSignal::new(None::<String>);
    // A file is being dragged over the form.
    let dragging = RwSignal::new(false);

    view! {
        <section class="panel run-view" data-testid="run-view">
            <h2>"Run"</h2>
            <QueryNotices />
            <form
                class="run-form"
                class:dragging=move || dragging.get()
                data-testid="run-form"
                on:submit=move |ev| {
                    ev.prevent_default();
                    // The run's live charts need ECharts: its load starts now, beside the
                    // steps before the measured requests.
                    load_charts();
                    start.dispatch(());
                }
                // A file dropped on the form is the run's workload (the results' drop zone
                // takes saved artifacts).
                on:dragover=move |ev: web_sys::DragEvent| {
                    ev.prevent_default();
                    dragging.set(!busy());
                }
                on:dragleave=move |_| dragging.set(false)
                on:drop=move |ev: web_sys::DragEvent| {
                    ev.prevent_default();
                    dragging.set(false);
                    let file = ev
                        .data_transfer()
                        .and_then(|transfer| transfer.files())
                        .and_then(|files| files.get(0));
                    if let (Some(file), false) = (file, busy()) {
                        choose_file(state, file);
                    }
                }
            >
                <Essentials errors=errors />
                <fieldset class="field-group" disabled=busy>
                    <legend>"Secret"</legend>
                    <label class="field">
                        <span class="field-label">"API key"</span>
                        <input
                            type="password"
                            autocomplete="off"
                            data-testid="api-key"
                            prop:value=move || state.api_key().get()
                            on:input=move |ev| state.set_api_key(event_target_value(&ev))
                        />
                        <span class="field-help">
                            "Sent only to the endpoint, as a Bearer header. Never written to an artifact, a link or a log."
                        </span>
                    </label>
                    <label class="field checkbox">
                        <input
                            type="checkbox"
                            data-testid="remember-key"
                            prop:checked=move || state.remember_key().get()
                            on:change=move |ev| state.set_remember_key(event_target_checked(&ev))
                        />
                        <span>"Remember the key on this device (local storage)"</span>
                    </label>
                    {move || {
                        state
                            .key_storage_note()
                            .get()
                            .map(|note| view! { <p class="field-error" data-testid="key-storage-note">{note}</p> })
                    }}
                </fieldset>
                <p class="advanced-title">"Advanced"</p>
                {FieldGroup::ALL
                    .iter()
                    .map(|&group| view! { <FieldSet group=group errors=errors /> })
                    .collect_view()}
                <div class="action-bar" data-testid="action-bar">
                    <ConnectionLimitWarning />
                    <div class="actions">
                    <button
                        type="button"
                        data-testid="load-models"
                        disabled=busy
                        on:click=move |_| {
                            spawn_local(async move {
                                load_models(state).await;
                            })
                        }
                    >
                        "Check endpoint"
                    </button>
                    <button
                        type="submit"
                        class="primary"
                        data-testid="run"
                        on:pointerenter=move |_| fetch_run_code()
                        on:focus=move |_| fetch_run_code()
                        disabled=move || {
                            busy()
                                || errors
                                    .with(|errors| {
                                        errors.keys().any(|key| !FILLED_BY_PREFLIGHT.contains(key))
                                    })
                        }
                    >
                        "Run"
                    </button>
                    <button
                        type="button"
                        data-testid="cancel"
                        disabled=move || !state.phase().with(RunPhase::is_cancellable)
                        on:click=move |_| state.cancel_run()
                    >
                        "Cancel"
                    </button>
                    <button
                        type="button"
                        data-testid="export-plan"
                        title=move || {
                            let chosen = state
                                .workload()
                                .with(|workload| *workload != WorkloadState::None);
                            if chosen {
                                "The plan these settings make with the chosen workload file, for Locust's workers (docs/operate/locust.md): plan.json holds the file's prompts, every request's body as sent; the same bytes as `strobe-artifact plan --link … --workload FILE`"
                            } else {
                                "The plan these settings make, for Locust's workers or another load engine (docs/operate/locust.md); the same bytes as `strobe-artifact plan --link` with this page's link"
                            }
                        }
                        on:click=move |_| {
                            // A chosen file's requests go into the plan as the run would send
                            // them; a file still being read, or refused, says so.
                            let outcome = state.workload_for_run().and_then(|workload| {
                                let text = state
                                    .form()
                                    .with_untracked(|form| plan_document_with(form, workload.as_deref()))
                                    .map_err(|error| error.to_string())?;
                                download_text(PLAN_FILE_NAME, "application/json", &text)?;
                                Ok(workload.map(|workload| holds_prompts(workload.summary.name.as_deref())))
                            });
                            match outcome {
                                Ok(notice) => {
                                    plan_error.set(None);
                                    plan_notice.set(notice);
                                }
                                Err(reason) => {
                                    plan_error.set(Some(reason));
                                    plan_notice.set(None);
                                }
                            }
                        }
                    >
                        "Export plan"
                    </button>
                    </div>
                    {move || plan_error.get().map(|reason| view! { <p class="field-error" data-testid="export-plan-error">{reason}</p> })}
                    {move || plan_notice.get().map(|notice| view! { <p class="notices" data-testid="export-plan-notice">{notice}</p> })}
                </div>
            </form>
            <PreflightStatus />
            <LivePanel />
            <LiveCharts />
        </section>
    }
}

/// What reading the page's link changed or ignored.
#[component]
fn QueryNotices() -> impl IntoView {
    let state = AppState::expect();
    view! {
        <Show when=move || state.query_notices().with(|notices| !notices.is_empty())>
            <ul class="notices" data-testid="query-notices">
                {move || {
                    state
                        .query_notices()
                        .get()
                        .into_iter()
                        .map(|notice| view! { <li>{notice.message}</li> })
                        .collect_view()
                }}
            </ul>
        </Show>
    }
}

/// The settings most runs change ([`FieldKey::ESSENTIALS`]), up front.
#[component]
fn Essentials(
    /// The current validation errors, by field key.
    errors: Memo<BTreeMap<FieldKey, String>>,
) -> impl IntoView {
    let state = AppState::expect();
    let busy = move || state.phase().with(RunPhase::is_busy);
    view! {
        <fieldset class="field-group essentials" disabled=busy data-testid="essentials">
            <legend>"Run"</legend>
            {FieldKey::ESSENTIALS
                .iter()
                .map(|&key| view! { <Field key=key errors=errors /> })
                .collect_view()}
            <WorkloadPicker />
        </fieldset>
    }
}

/// The rest of one group of form fields, in a section collapsed until opened. Its summary
/// counts the fields that differ from a first visit's (a link may have set them), and it opens
/// by itself while one of its fields is invalid, so a message always shows at its field.
#[component]
fn FieldSet(
    /// Which fields to show.
    group: FieldGroup,
    /// The current validation errors, by field key.
    errors: Memo<BTreeMap<FieldKey, String>>,
) -> impl IntoView {
    let state = AppState::expect();
    let busy = move || state.phase().with(RunPhase::is_busy);
    let keys: Vec<FieldKey> = FieldKey::ALL
        .iter()
        .copied()
        .filter(|key| key.spec().group == group && !key.is_essential())
        .collect();
    let defaults = RunForm::browser_defaults();
    let summary_keys = keys.clone();
    let changed = move || {
        state.form().with(|form| {
            summary_keys
                .iter()
                .filter(|&&key| form.get(key).trim() != defaults.get(key).trim())
                .count()
        })
    };
    let error_keys = keys.clone();
    let invalid = move || {
        errors.with(|errors| {
            error_keys
                .iter()
                .any(|key| errors.contains_key(key) && !FILLED_BY_PREFLIGHT.contains(key))
        })
    };
    let open = RwSignal::new(false);
    let id = group.label().to_ascii_lowercase().replace(' ', "-");
    view! {
        <details
            class="field-section"
            data-testid=format!("advanced-{id}")
            prop:open=move || open.get() || invalid()
            on:toggle=move |event| {
                let details: web_sys::Element = event_target(&event);
                open.set(details.has_attribute("open"));
            }
        >
            <summary>
                {group.label()}
                {move || match changed() {
                    0 => String::new(),
                    1 => " · 1 changed".to_owned(),
                    n => format!(" · {n} changed"),
                }}
            </summary>
            <fieldset class="field-group" disabled=busy>
                <legend class="visually-hidden">{group.label()}</legend>
                {keys
                    .into_iter()
                    .map(|key| view! { <Field key=key errors=errors /> })
                    .collect_view()}
            </fieldset>
        </details>
    }
}

/// One labelled input, bound to the form's raw text for its key, with its error under it.
#[component]
fn Field(
    /// Which field.
    key: FieldKey,
    /// The current validation errors, by field key.
    errors: Memo<BTreeMap<FieldKey, String>>,
) -> impl IntoView {
    let state = AppState::expect();
    let spec = key.spec();
    let help = spec.help();
    let title = help.clone();
    let name = key.as_str();
    let value = move || state.form().with(|form| form.get(key).to_string());
    let set = move |text: String| state.edit_field(key, text);
    // Model and engine start empty and the endpoint check fills them: no red before that.
    let error = move || {
        let shown = !FILLED_BY_PREFLIGHT.contains(&key)
            || state.models().with(Option::is_some)
            || matches!(state.phase().get(), RunPhase::Failed(_));
        errors
            .with(|errors| errors.get(&key).cloned())
            .filter(|_| shown)
    };
    let input = match spec.kind {
        FieldKind::Toggle => view! {
            <input
                type="checkbox"
                name=name
                data-testid=format!("field-{name}")
                prop:checked=move || value() == "true"
                on:change=move |ev| set(event_target_checked(&ev).to_string())
            />
        }
        .into_any(),
        FieldKind::Choice(options) | FieldKind::OptionalChoice(options) => {
            let optional = matches!(spec.kind, FieldKind::OptionalChoice(_));
            view! {
                <select
                    name=name
                    data-testid=format!("field-{name}")
                    prop:value=value
                    on:change=move |ev| set(event_target_value(&ev))
                >
                    {optional.then(|| view! { <option value="">"(not sent)"</option> })}
                    {options
                        .iter()
                        .map(|option| view! { <option value=*option>{*option}</option> })
                        .collect_view()}
                </select>
            }
            .into_any()
        }
        FieldKind::Integer { .. }
        | FieldKind::OptionalInteger { .. }
        | FieldKind::Decimal { .. } => view! {
            <input
                type="text"
                inputmode="decimal"
                name=name
                data-testid=format!("field-{name}")
                prop:value=value
                on:input=move |ev| set(event_target_value(&ev))
            />
        }
        .into_any(),
        FieldKind::Text | FieldKind::Url => {
            let list = (key == FieldKey::Model).then_some("model-options");
            view! {
                <input
                    type="text"
                    name=name
                    list=list
                    spellcheck="false"
                    data-testid=format!("field-{name}")
                    prop:value=value
                    on:input=move |ev| set(event_target_value(&ev))
                />
                {(key == FieldKey::Model).then(|| view! { <ModelOptions /> })}
                {(key == FieldKey::Pool).then(|| view! { <LoopbackAliases /> })}
            }
            .into_any()
        }
    };
    // The help shows while the field has focus (style/main.css), and on hover as its title.
    view! {
        <label class="field" class:invalid=move || error().is_some() title=title>
            <span class="field-label">{spec.label}</span>
            {input}
            <span class="field-help">{help}</span>
            {move || {
                error()
                    .map(|message| {
                        view! {
                            <span class="field-error" data-testid=format!("error-{name}")>
                                {message}
                            </span>
                        }
                    })
            }}
        </label>
    }
}

/// Fills the pool with the loopback aliases of a server on this machine, as many as the
/// concurrency needs at six connections each (docs/operate/hosting.md).
#[component]
fn LoopbackAliases() -> impl IntoView {
    let state = AppState::expect();
    let said = RwSignal::new(None::<Result<String, String>>);
    let fill = move |_| {
        let (base_url, concurrency) = state.form().with_untracked(|form| {
            let concurrency = form
                .get(FieldKey::Concurrency)
                .trim()
                .parse::<u64>()
                .unwrap_or(0);
            (form.get(FieldKey::BaseUrl).to_owned(), concurrency)
        });
        said.set(Some(loopback_alias_pool(&base_url, concurrency).map(|pool| {
            let text = pool.join(" ");
            state.edit_field(FieldKey::Pool, text.clone());
            if pool.is_empty() {
                format!("Concurrency {concurrency} fits in one origin's six connections: no pool needed.")
            } else {
                format!(
                    "{} alias(es) of this machine: the server must listen on 0.0.0.0 (vLLM: --host 0.0.0.0).",
                    pool.len()
                )
            }
        })));
    };
    view! {
        <button type="button" class="small" data-testid="pool-aliases" on:click=fill>
            "Loopback aliases"
        </button>
        {move || {
            said.get()
                .map(|said| match said {
                    Ok(note) => view! { <span class="field-help" data-testid="pool-aliases-note">{note}</span> }.into_any(),
                    Err(error) => view! { <span class="field-error" data-testid="pool-aliases-error">{error}</span> }.into_any(),
                })
        }}
    }
}

/// The endpoint's models, offered as suggestions for the model field.
#[component]
fn ModelOptions() -> impl IntoView {
    let state = AppState::expect();
    view! {
        <datalist id="model-options">
            {move || {
                state
                    .models()
                    .get()
                    .map(|models| {
                        models
                            .ids
                            .into_iter()
                            .map(|id| view! { <option value=id></option> })
                            .collect_view()
                    })
            }}
        </datalist>
    }
}

/// Says, before a run, when concurrency exceeds what the endpoints' HTTP/1.1 origins can
/// carry (six connections each).
#[component]
fn ConnectionLimitWarning() -> impl IntoView {
    let state = AppState::expect();
    let per_origin = move || {
        state.form().with(|form| {
            let concurrency = form
                .get(FieldKey::Concurrency)
                .trim()
                .parse::<u64>()
                .unwrap_or(0);
            // A concurrency sweep's steps set their own; its largest is the one that matters.
            let concurrency = match form.to_sweep() {
                Ok(Some(SweepSpec {
                    kind: SweepKind::Concurrency(values),
                    ..
                })) => values.into_iter().max().unwrap_or(concurrency),
                _ => concurrency,
            };
            let endpoints = 1 + list_entries(form.get(FieldKey::Pool)).count() as u64;
            (concurrency, endpoints, concurrency.div_ceil(endpoints))
        })
    };
    view! {
        <Show when=move || { per_origin().2 > BROWSER_HTTP1_CONNECTIONS_PER_HOST }>
            <p class="warning" data-testid="connection-limit-warning">
                {move || {
                    let (concurrency, endpoints, most) = per_origin();
                    format!(
                        "Concurrency {concurrency} over {} puts up to {most} requests \
                         on one origin, more than the {} connections a browser opens to one HTTP/1.1 \
                         origin: the extra requests wait inside the browser and that wait is counted \
                         in their TTFO. The artifact records this (client.transport). Add base URLs \
                         on other ports of the same server to the endpoint pool (Advanced › \
                         Endpoint; Loopback aliases fills it for a server on this machine), or use \
                         an HTTPS (HTTP/2) endpoint.",
                        counted(endpoints, "endpoint", "endpoints"),
                        BROWSER_HTTP1_CONNECTIONS_PER_HOST,
                    )
                }}
            </p>
        </Show>
    }
}

/// The result of the last endpoint check, with CORS recipes when they apply.
#[component]
fn PreflightStatus() -> impl IntoView {
    let state = AppState::expect();
    view! {
        {move || {
            state
                .preflight_error()
                .get()
                .map(|(message, cors)| {
                    view! {
                        <div class="error-box" data-testid="preflight-error">
                            <p>{message}</p>
                            {cors
                                .then(|| {
                                    view! {
                                        <p>"To let this page read an endpoint's answers:"</p>
                                        <ul class="cors-recipes">
                                            {CORS_RECIPES
                                                .iter()
                                                .map(|(engine, recipe)| {
                                                    view! {
                                                        <li>
                                                            <strong>{*engine}</strong>
                                                            ": "
                                                            {*recipe}
                                                        </li>
                                                    }
                                                })
                                                .collect_view()}
                                        </ul>
                                    }
                                })}
                        </div>
                    }
                })
        }}
        {move || {
            state
                .models()
                .get()
                .map(|models| {
                    view! {
                        <p class="ok" data-testid="preflight-ok">
                            {format!("Endpoint reachable: {}: {}", counted(models.ids.len() as u64, "model", "models"), models.ids.join(", "))}
                        </p>
                    }
                })
        }}
        {move || {
            // What the window does to this form's prompts, recomputed as the form changes.
            let models = state.models().get()?;
            let config = state.form().with(config_for_preflight).ok()?;
            let window = models.context_window(&config.model)?;
            Some(view! {
                <p class="context-window" data-testid="context-window">
                    {context_window_note(&config, window)}
                </p>
            })
        }}
        {move || {
            state.metrics_check().get().map(|check| view! {
                <p
                    class=if check.found { "metrics-check" } else { "metrics-check warning" }
                    data-testid="metrics-check"
                    data-found=check.found.to_string()
                >
                    {check.text}
                </p>
            })
        }}
        {move || {
            let models = state.models().get()?;
            let engine = state.form().with(|form| form.get(FieldKey::Engine).to_owned());
            let notes: Vec<String> = models
                .probe_note
                .clone()
                .into_iter()
                .chain(engine_warning(&engine).map(str::to_owned))
                .collect();
            (!notes.is_empty()).then(|| view! {
                <ul class="notices" data-testid="engine-notes">
                    {notes.into_iter().map(|note| view! { <li>{note}</li> }).collect_view()}
                </ul>
            })
        }}
    }
}

/// Progress and running medians, refreshed a few times a second (or, for a quiet run, when it
/// ends).
#[component]
fn LivePanel() -> impl IntoView {
    let state = AppState::expect();
    let snapshot = state.snapshot();
    view! {
        <div class="live" data-testid="status" data-state=move || state.phase().get().as_str()>
            {move || {
                state
                    .sweep()
                    .with(|sweep| sweep.as_ref().map(|sweep| sweep.status(state.cooling_s().get(), state.cancel_requested().get()).text()))
                    .map(|text| view! { <p class="sweep-line" data-testid="sweep-status">{text}</p> })
            }}
            <p class="status-line">
                {move || status_text(&state.phase().get(), &snapshot.get(), state.quiet_run().get())}
            </p>
            <Show when=move || {
                snapshot.with(|s| s.requests > 0)
                    && !(state.quiet_run().get() && state.phase().get() == RunPhase::Running)
            }>
                <progress
                    max=move || snapshot.with(|s| s.requests as f64)
                    value=move || snapshot.with(|s| (s.completed + s.failed) as f64)
                ></progress>
                <dl class="live-metrics">
                    <dt>"done / failed / in flight"</dt>
                    <dd data-testid="live-counts">
                        {move || snapshot.with(|s| format!("{} / {} / {}", s.completed, s.failed, s.in_flight))}
                    </dd>
                    <dt>"elapsed"</dt>
                    <dd>{move || snapshot.with(|s| format!("{:.1} s", s.elapsed_ms / 1000.0))}</dd>
                    <dt>"p50 time to first output"</dt>
                    <dd>{move || snapshot.with(|s| format_tenths(s.p50_ttfo_ms, "ms"))}</dd>
                    <dt>"p50 TTFT"</dt>
                    <dd>{move || snapshot.with(|s| format_tenths(s.p50_ttft_ms, "ms"))}</dd>
                    <dt>"p50 decode"</dt>
                    <dd>{move || snapshot.with(|s| format_tenths(s.p50_decode_tok_s, "tok/s"))}</dd>
                    <dt>"throughput"</dt>
                    <dd>{move || snapshot.with(|s| format_tenths(s.throughput_tok_s, "tok/s"))}</dd>
                </dl>
                {move || {
                    snapshot
                        .with(|s| s.open_loop)
                        .map(|open| view! {
                            <p class="open-loop" data-testid="live-schedule">{schedule_text(&open)}</p>
                        })
                }}
                {move || {
                    state
                        .live_slo()
                        .get()
                        .filter(|_| state.phase().get() == RunPhase::Running)
                        .map(|outcome| view! {
                            <p class="slo-outcome" data-testid="live-slo">
                                {format!("SLO so far: {}", outcome.summary())}
                            </p>
                        })
                }}
                {move || {
                    snapshot
                        .with(|s| s.last_failure.clone())
                        .map(|reason| view! { <p class="failure-reason">"Last failure: " {reason}</p> })
                }}
            </Show>
        </div>
    }
}

/// How an open-loop run is keeping its schedule, in words.
fn schedule_text(open: &OpenLoopProgress) -> String {
    format!(
        "On schedule: {} of {} sent; {} more than 5 ms late; {} held back by the concurrency cap.",
        open.sent, open.scheduled, open.late, open.capped
    )
}

fn status_text(phase: &RunPhase, snapshot: &LiveSnapshot, quiet: bool) -> String {
    match phase {
        RunPhase::Idle => "Ready. Check the endpoint, then press Run.".to_string(),
        RunPhase::Preflight => "Checking the endpoint…".to_string(),
        RunPhase::Resetting => "Emptying the server's prefix cache before the run \
                                (reset_prefix_cache); Cancel stops it, and nothing is sent."
            .to_string(),
        RunPhase::Running if snapshot.cancelled => "Cancelling…".to_string(),
        RunPhase::Running if quiet => format!(
            "Running {} requests. Live view: end, so the page shows nothing new until the run \
             ends (nothing drawn can delay a timestamp).",
            snapshot.requests
        ),
        RunPhase::Running => format!(
            "Running: {} of {} done.",
            snapshot.completed + snapshot.failed,
            snapshot.requests
        ),
        RunPhase::Finished => format!(
            "Finished{}: {} completed, {} failed.",
            if snapshot.cancelled {
                " (cancelled)"
            } else {
                ""
            },
            snapshot.completed,
            snapshot.failed
        ),
        RunPhase::Failed(reason) => format!("Could not run: {reason}"),
        RunPhase::Cancelled(note) => {
            // The note is a clause ("cancelled while …"): said as a sentence.
            let mut chars = note.chars();
            let first: String = chars
                .next()
                .into_iter()
                .flat_map(char::to_uppercase)
                .collect();
            format!("{first}{}.", chars.as_str())
        }
    }
}
