//! *Save report*: the selected run, comparison or sweep as one HTML file (docs/results.md,
//! *The report*). The document is the core's ([`report_html`]); this button only hands it the
//! runs shown, the SLO in force and the time, and downloads what it returns.

use std::sync::Arc;

use leptos::prelude::*;

use crate::core::present::report::{report_file_name, report_html, ReportInput};
use crate::core::read::loaded::LoadedArtifact;
use crate::web::platform::clock::measured;
use crate::web::platform::files::download_text;
use crate::web::state::AppState;

/// The *Save report* button for `runs` (on the basis the page shows them).
#[component]
pub fn SaveReport(
    /// The runs shown, the first is a comparison's baseline.
    runs: Vec<Arc<LoadedArtifact>>,
) -> impl IntoView {
    let state = AppState::expect();
    let outcome = RwSignal::new(None::<Result<String, String>>);
    let on_click = move |_| {
        let refs: Vec<&LoadedArtifact> = runs.iter().map(Arc::as_ref).collect();
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
        let result = download_text(&name, "text/html", &report.html).map(|()| {
            if report.not_carried.is_empty() {
                format!("Saved {name}: drop it on this page to load its runs again.")
            } else {
                format!(
                    "Saved {name}. It shows, but cannot load again, {} (read from several \
                     files): keep those files too.",
                    report.not_carried.join(", ")
                )
            }
        });
        outcome.set(Some(result));
    };
    view! {
        <button type="button" data-testid="save-report" on:click=on_click>
            "Save report"
        </button>
        {move || {
            outcome
                .get()
                .map(|outcome| match outcome {
                    Ok(note) => view! { <p class="field-help" data-testid="report-note">{note}</p> }.into_any(),
                    Err(reason) => view! { <p class="error-box">{reason}</p> }.into_any(),
                })
        }}
    }
}

/// The time now in UTC, as the report's header says it ("2026-12-03 14:05 UTC").
fn saved_at() -> String {
    let iso = String::from(js_sys::Date::new_0().to_iso_string());
    let minutes = iso.get(..16).unwrap_or(&iso).replacen('T', " ", 1);
    format!("{minutes} UTC")
}
