//! What a reader must know about how a run was measured before reading its numbers, shown
//! above them.

use leptos::prelude::*;

/// What a reader must know before reading a latency: the client did not deliver the load it
/// was asked for (it fell behind its schedule, or the cap held requests back). Nothing when it
/// did.
#[component]
pub fn LoadWarnings(
    /// The warnings, one sentence each (`LoadView::warnings`).
    warnings: Vec<String>,
) -> impl IntoView {
    (!warnings.is_empty()).then(|| {
        view! {
            <div class="warning" role="alert" data-testid="load-warning">
                {warnings.into_iter().map(|warning| view! { <p>{warning}</p> }).collect_view()}
            </div>
        }
    })
}
