//! The repeat group in the results: after a repeated run (`repeats` above 1), how many of its
//! runs finished, and every repeat's artifact in one `.zip` that regroups when it is dropped
//! on the library (docs/guide/results.md).

use leptos::prelude::*;

use crate::core::artifact::file::repeat_group_zip_name;
use crate::core::present::export::artifact_files_zip;
use crate::core::present::repeats::group_status;

use crate::web::platform::files::download_bytes;
use crate::web::state::AppState;
use crate::web::ui::controls::RedactToggle;

/// The group's line and its download; nothing when the last run was not repeated.
#[component]
pub fn RepeatGroupDownload() -> impl IntoView {
    let state = AppState::expect();
    let redact = RwSignal::new(false);
    let download_error = RwSignal::new(None::<String>);
    let on_download = move |_| {
        let outcome = state.repeat_group().with_untracked(|group| {
            artifact_files_zip(group, redact.get_untracked()).and_then(|bytes| {
                download_bytes(&repeat_group_zip_name(group), "application/zip", &bytes)
            })
        });
        download_error.set(outcome.err());
    };
    let busy = move || state.phase().with(|phase| phase.is_busy());
    view! {
        {move || {
            state.repeat_group().with(|group| {
                let planned = group.first().and_then(|artifact| artifact.repeat.as_ref())?.count;
                Some(view! {
                    <div class="repeat-group" data-testid="repeat-group">
                        <h3 data-testid="repeat-status">
                            {group_status(
                                group.len(),
                                planned,
                                state.cooling_s().get(),
                                state.cancel_requested().get(),
                                busy(),
                            )}
                        </h3>
                        <div class="actions">
                            <RedactToggle redact=redact test_id="redact-group-base-url" />
                            <button
                                type="button"
                                data-testid="download-group"
                                disabled=busy
                                on:click=on_download
                            >
                                "Download group (.zip)"
                            </button>
                        </div>
                    </div>
                })
            })
        }}
        {move || download_error.get().map(|error| view! { <p class="error-box">{error}</p> })}
    }
}
