//! *Copy link* and the banner of a run opened from one (docs/guide/results.md, *A link to a run*).
//! The link is the core's ([`encode_link`]): the run's file deflated into the fragment of a link
//! to this page, which no server ever receives. The button copies it to the clipboard and shows
//! it in a field to copy by hand when the browser will not; a run too big for a link says so
//! and offers the report instead.

use std::sync::Arc;

use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::core::format::format_count;
use crate::core::read::link::{encode_link, redacted};
use crate::core::read::opened::OpenedArtifact;

use crate::web::platform::clipboard::copy;
use crate::web::state::library::{Library, SharedRun};
use crate::web::state::AppState;
use crate::web::ui::report::save_report;

/// What *Copy link* did.
#[derive(Clone, Debug, PartialEq)]
enum Shared {
    /// The link is on the clipboard (and in the field).
    Copied(String),
    /// The browser refused the clipboard: the link is in the field, with why.
    InField(String, String),
    /// The run is too big for a link (or cannot be redacted): why.
    NoLink(String),
}

/// The *Copy link* button of one run, with its redaction box.
#[component]
pub fn ShareLink(
    /// The run shown.
    run: Arc<OpenedArtifact>,
) -> impl IntoView {
    let state = AppState::expect();
    let redact = RwSignal::new(false);
    let shared = RwSignal::new(None::<Shared>);
    let report_note = RwSignal::new(None::<Result<String, String>>);
    let source = run.source.clone();
    let report_run = run.clone();
    let on_click = move |_| {
        let Some(source) = source.clone() else {
            shared.set(Some(Shared::NoLink(
                "this run was read from several files, which a link cannot carry; save the \
                 report instead"
                    .to_owned(),
            )));
            return;
        };
        let file = if redact.get_untracked() {
            redacted(&source)
        } else {
            Ok(source)
        };
        let link = file.and_then(|file| encode_link(&page_address(), &file));
        match link {
            Ok(link) => spawn_local(async move {
                shared.set(Some(match copy(&link).await {
                    Ok(()) => Shared::Copied(link),
                    Err(refused) => Shared::InField(link, refused.to_string()),
                }));
            }),
            Err(error) => shared.set(Some(Shared::NoLink(error.to_string()))),
        }
    };
    view! {
        <span class="share-link">
            <button type="button" data-testid="share-link" on:click=on_click>
                "Copy link"
            </button>
            <label class="checkbox">
                <input
                    type="checkbox"
                    data-testid="redact-link-base-url"
                    prop:checked=move || redact.get()
                    on:change=move |ev| redact.set(event_target_checked(&ev))
                />
                " Redact the endpoint URL in the link"
            </label>
        </span>
        {move || {
            shared
                .get()
                .map(|outcome| match outcome {
                    Shared::Copied(ref link) | Shared::InField(ref link, _) => {
                        let link = link.clone();
                        let said = match &outcome {
                            Shared::InField(_, why) => format!(
                                "Not copied: {why}. Copy the link from the field below ({} \
                                 characters).",
                                format_count(link.len())
                            ),
                            _ => format!(
                                "Link copied ({} characters): whoever opens it sees this run, \
                                 read-only. The run travels in the link itself, after the #, \
                                 which browsers never send to a server.",
                                format_count(link.len())
                            ),
                        };
                        let state_name = if matches!(outcome, Shared::Copied(_)) {
                            "copied"
                        } else {
                            "in-field"
                        };
                        view! {
                            <div class="share-outcome" data-testid="share-outcome" data-state=state_name>
                                <p class="export-note">{said}</p>
                                <input
                                    type="text"
                                    readonly
                                    class="share-link-text"
                                    aria-label="The link to this run"
                                    data-testid="share-link-text"
                                    prop:value=link
                                    on:focus=move |ev| {
                                        let input: web_sys::HtmlInputElement = event_target(&ev);
                                        input.select();
                                    }
                                />
                            </div>
                        }
                            .into_any()
                    }
                    Shared::NoLink(why) => {
                        let runs = vec![report_run.clone()];
                        view! {
                            <div class="share-outcome" data-testid="share-outcome" data-state="no-link">
                                <p class="warning" data-testid="share-too-big">{why}</p>
                                <button
                                    type="button"
                                    data-testid="share-save-report"
                                    on:click=move |_| report_note.set(Some(save_report(state, &runs)))
                                >
                                    "Save report instead"
                                </button>
                                {move || report_note.get().map(|note| match note {
                                    Ok(note) => view! { <p class="export-note" data-testid="report-note">{note}</p> }.into_any(),
                                    Err(reason) => view! { <p class="error-box">{reason}</p> }.into_any(),
                                })}
                            </div>
                        }
                            .into_any()
                    }
                })
        }}
    }
}

/// This page's address without its query (the form's settings) or fragment.
fn page_address() -> String {
    let location = window().location();
    format!(
        "{}{}",
        location.origin().unwrap_or_default(),
        location.pathname().unwrap_or_default()
    )
}

/// The banner of a run opened from a link, or of a link that could not be read.
#[component]
pub fn SharedBanner() -> impl IntoView {
    let library = expect_context::<Library>();
    move || {
        library.shared().get().map(|shared| {
            let (outcome, text) = match shared {
                SharedRun::Opened(name) => (
                    "opened",
                    format!(
                        "This run came from a link: {name}. It is shown read-only, as it was \
                         shared; nothing was measured on this page. It joins your library like \
                         a dropped file."
                    ),
                ),
                SharedRun::Refused(why) => (
                    "refused",
                    format!("This page was opened with a link to a run, but {why}."),
                ),
            };
            view! {
                <div
                    class=if outcome == "opened" { "shared-banner" } else { "shared-banner error-box" }
                    role="status"
                    data-testid="shared-banner"
                    data-outcome=outcome
                >
                    <p>{text}</p>
                    <button
                        type="button"
                        class="small"
                        data-testid="shared-banner-close"
                        on:click=move |_| library.set_shared(None)
                    >
                        "Close"
                    </button>
                </div>
            }
        })
    }
}
