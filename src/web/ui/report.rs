//! *Save report*: the selected run, comparison or sweep as one HTML file (docs/guide/results.md,
//! *The report*). The document is the core's ([`report_html`]); this button only hands it the
//! runs shown, the SLO in force and the time, and downloads what it returns. A report large
//! enough to be awkward to send says its size before it is saved and again once it is
//! ([`report_size_note`]).

use std::sync::Arc;

use leptos::prelude::*;

use crate::core::present::report::size::{estimated_report_bytes, report_size_note};
use crate::core::present::report::{report_file_name, report_html, ReportInput};
use crate::core::read::opened::OpenedArtifact;
use crate::web::platform::clock::measured;
use crate::web::platform::files::download_text;
use crate::web::state::AppState;

/// The *Save report* button for `runs` (on the basis the page shows them).
#[component]
pub fn SaveReport(
    /// The runs shown, the first is a comparison's baseline.
    runs: Vec<Arc<OpenedArtifact>>,
) -> impl IntoView {
    let state = AppState::expect();
    let outcome = RwSignal::new(None::<Result<String, String>>);
    let before = {
        let refs: Vec<&OpenedArtifact> = runs.iter().map(Arc::as_ref).collect();
        report_size_note(estimated_report_bytes(&refs), true)
    };
    let on_click = move |_| outcome.set(Some(save_report(state, &runs)));
    view! {
        <button type="button" data-testid="save-report" on:click=on_click>
            "Save report"
        </button>
        {move || {
            match outcome.get() {
                Some(Ok(note)) => view! { <p class="export-note" data-testid="report-note">{note}</p> }.into_any(),
                Some(Err(reason)) => view! { <p class="error-box">{reason}</p> }.into_any(),
                None => before
                    .clone()
                    .map(|note| view! { <p class="warning" data-testid="report-size-note">{note}</p> })
                    .into_any(),
            }
        }}
    }
}

/// Makes the report of `runs` and downloads it: what to say of it (where it went, what it
/// cannot load again, its size when it is large), or why it could not be saved.
pub fn save_report(state: AppState, runs: &[Arc<OpenedArtifact>]) -> Result<String, String> {
    let refs: Vec<&OpenedArtifact> = runs.iter().map(Arc::as_ref).collect();
    let slo = state.current_slo();
    let saved_at = saved_at();
    let report = measured("strobe:report", || {
        report_html(&ReportInput {
            runs: &refs,
            slo: slo.as_ref(),
            saved_at: Some(&saved_at),
        })
    });
    let name = report_file_name(&refs);
    download_text(&name, "text/html", &report.html)?;
    let mut note = if report.not_carried.is_empty() {
        format!("Saved {name}: drop it on this page to load its runs again.")
    } else {
        format!(
            "Saved {name}. It shows, but cannot load again, {} (read from several files): \
             keep those files too.",
            report.not_carried.join(", ")
        )
    };
    if let Some(size) = report_size_note(report.html.len(), false) {
        note.push(' ');
        note.push_str(&size);
    }
    Ok(note)
}

/// The time now in UTC, as the report's header says it ("2026-12-03 14:05 UTC").
fn saved_at() -> String {
    let iso = String::from(js_sys::Date::new_0().to_iso_string());
    let minutes = iso.get(..16).unwrap_or(&iso).replacen('T', " ", 1);
    format!("{minutes} UTC")
}
