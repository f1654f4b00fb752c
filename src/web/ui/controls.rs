//! Small controls more than one view shows the same way.

use leptos::prelude::*;

/// The "Redact the endpoint URL in the download" box beside a download button.
#[component]
pub fn RedactToggle(
    /// Ticked: the download replaces `base_url` with the redaction marker.
    redact: RwSignal<bool>,
    /// The box's `data-testid`.
    test_id: &'static str,
) -> impl IntoView {
    view! {
        <label class="checkbox">
            <input
                type="checkbox"
                data-testid=test_id
                prop:checked=move || redact.get()
                on:change=move |ev| redact.set(event_target_checked(&ev))
            />
            " Redact the endpoint URL in the download"
        </label>
    }
}
