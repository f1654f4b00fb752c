//! The sweep in the results (docs/guide/load.md): the table [`SweepTable`] words — one row per
//! finished run (a step, or each repeat of a step), how the sweep ended — and every run's
//! artifact in one `.zip`.

use std::rc::Rc;

use leptos::prelude::*;

use crate::core::artifact::file::sweep_zip_name;
use crate::core::present::export::artifact_files_zip;
use crate::core::present::sweep_table::{SweepRow, SweepTable, NO_WALL_TIME};
use crate::core::schema::ArtifactV1;

use crate::web::platform::files::download_bytes;
use crate::web::state::AppState;
use crate::web::ui::controls::RedactToggle;

/// The steps of the sweep in progress or last run, and its download.
#[component]
pub fn SweepSummary() -> impl IntoView {
    let state = AppState::expect();
    let redact = RwSignal::new(false);
    let download_error = RwSignal::new(None::<String>);
    let on_download = move |_| {
        let Some(runs) = state.sweep().with_untracked(|sweep| {
            sweep.as_ref().map(|sweep| {
                sweep
                    .steps
                    .iter()
                    .map(|step| step.artifact.clone())
                    .collect::<Vec<Rc<ArtifactV1>>>()
            })
        }) else {
            return;
        };
        let outcome = artifact_files_zip(&runs, redact.get_untracked())
            .and_then(|bytes| download_bytes(&sweep_zip_name(&runs), "application/zip", &bytes));
        download_error.set(outcome.err());
    };
    view! {
        {move || {
            state.sweep().with(|sweep| sweep.as_ref().map(|sweep| {
                let table = SweepTable::new(
                    &sweep.status(None, false),
                    sweep
                        .steps
                        .iter()
                        .map(|step| (step.artifact.as_ref(), step.point.as_ref())),
                );
                let server_column = table.server_column;
                let span = table.figure_columns().to_string();
                view! {
                    <div class="sweep-summary" data-testid="sweep-summary">
                        <h3>{table.heading}</h3>
                        {table.ended.map(|text| view! { <p data-testid="sweep-end">{text}</p> })}
                        <table class="metrics-table" data-testid="sweep-table">
                            <thead>
                                <tr>
                                    <th>{table.step_heading}</th><th>"load"</th><th>"req/s"</th><th>"tok/s"</th>
                                    <th>"TTFT p95 (ms)"</th><th>"TPOT p95 (ms)"</th><th>"E2E p95 (ms)"</th>
                                    {server_column.then(|| view! { <th>"server (peak)"</th> })}
                                    <th>"note"</th>
                                </tr>
                            </thead>
                            <tbody>
                                {table
                                    .rows
                                    .into_iter()
                                    .map(|row| step_row(row, server_column, span.clone()))
                                    .collect_view()}
                            </tbody>
                        </table>
                        <div class="actions">
                            <RedactToggle redact=redact test_id="redact-sweep-base-url" />
                            <button
                                type="button"
                                data-testid="download-sweep"
                                disabled=!table.downloadable
                                on:click=on_download
                            >
                                "Download sweep (.zip)"
                            </button>
                        </div>
                    </div>
                }
            }))
        }}
        {move || download_error.get().map(|error| view! { <p class="error-box">{error}</p> })}
    }
}

/// One run's row; `span` is the columns its missing figures take.
fn step_row(row: SweepRow, server_column: bool, span: String) -> impl IntoView {
    let Some(figures) = row.figures else {
        return view! {
            <tr data-testid="sweep-step">
                <td>{row.label}</td>
                <td colspan=span>{NO_WALL_TIME}</td>
                <td>{row.note}</td>
            </tr>
        }
        .into_any();
    };
    view! {
        <tr data-testid="sweep-step">
            <td>{row.label}</td>
            <td>{figures.load}</td>
            <td>{figures.requests_per_s}</td>
            <td>{figures.output_tok_s}</td>
            <td>{figures.ttft_p95_ms}</td>
            <td>{figures.tpot_p95_ms}</td>
            <td>{figures.e2e_p95_ms}</td>
            {server_column
                .then(|| view! { <td data-testid="sweep-step-server">{figures.server}</td> })}
            <td>{row.note}</td>
        </tr>
    }
    .into_any()
}
