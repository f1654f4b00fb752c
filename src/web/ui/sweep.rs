//! The sweep in the results (docs/guide/load.md): one row per finished run (a step, or each repeat
//! of a step) — what it carried, its latencies and, when it scraped them, its server's figures
//! — how the sweep ended, and every run's artifact in one `.zip`.

use std::rc::Rc;

use leptos::prelude::*;

use crate::core::format::{format_tenths, or_missing};
use crate::core::present::capacity::CapacityPoint;
use crate::core::present::export::artifact_files_zip;
use crate::core::schema::ArtifactV1;

use crate::web::platform::files::download_bytes;
use crate::web::state::{AppState, SweepEnd};
use crate::web::ui::controls::RedactToggle;

/// The steps of the sweep in progress or last run, and its download.
#[component]
pub fn SweepSummary() -> impl IntoView {
    let state = AppState::expect();
    let redact = RwSignal::new(false);
    let download_error = RwSignal::new(None::<String>);
    let on_download = move |_| {
        let Some((id, steps)) = state.sweep().with_untracked(|sweep| {
            sweep.as_ref().map(|sweep| {
                let id = sweep
                    .steps
                    .first()
                    .and_then(|step| step.artifact.sweep.as_ref())
                    .map_or("sweep".to_owned(), |block| block.id.clone());
                let steps: Vec<Rc<ArtifactV1>> = sweep
                    .steps
                    .iter()
                    .map(|step| step.artifact.clone())
                    .collect();
                (id, steps)
            })
        }) else {
            return;
        };
        let outcome = artifact_files_zip(&steps, redact.get_untracked()).and_then(|bytes| {
            let stem = crate::core::format::file_stem(&id, "sweep");
            download_bytes(&format!("{stem}.zip"), "application/zip", &bytes)
        });
        download_error.set(outcome.err());
    };
    view! {
        {move || {
            state.sweep().with(|sweep| sweep.as_ref().map(|sweep| {
                let points: Vec<(String, Option<CapacityPoint>, Option<String>)> = sweep
                    .steps
                    .iter()
                    .enumerate()
                    .map(|(index, step)| {
                        let block = step.artifact.sweep.as_ref();
                        let stop = block
                            .and_then(|block| block.stop_reason)
                            .map(|reason| format!("stopped here: {}", reason.describe()));
                        let number = block.map_or(index as u64, |block| block.step_index) + 1;
                        let label = match &step.artifact.repeat {
                            Some(repeat) => format!("{number} · {} of {}", repeat.index + 1, repeat.count),
                            None => number.to_string(),
                        };
                        (label, step.point.clone(), stop)
                    })
                    .collect();
                let server_column = points
                    .iter()
                    .any(|(_, point, _)| point.as_ref().is_some_and(|point| point.server.is_some()));
                let ended = sweep.ended.clone();
                let finished = !sweep.steps.is_empty() && ended.is_some();
                let heading = if sweep.repeats > 1 {
                    format!(
                        "Sweep {} · {} of {} steps × {} repeats ({} runs)",
                        sweep.spec,
                        sweep.steps_reached(),
                        sweep.step_count,
                        sweep.repeats,
                        sweep.steps.len()
                    )
                } else {
                    format!("Sweep {} · {} of {} steps", sweep.spec, sweep.steps.len(), sweep.step_count)
                };
                let step_heading = if sweep.repeats > 1 { "step · repeat" } else { "step" };
                view! {
                    <div class="sweep-summary" data-testid="sweep-summary">
                        <h3>{heading}</h3>
                        {ended.map(|end| {
                            let text = match end {
                                SweepEnd::Complete => "Every step ran.".to_owned(),
                                SweepEnd::Stopped(_, reason) => format!("Stopped: {reason}."),
                            };
                            view! { <p data-testid="sweep-end">{text}</p> }
                        })}
                        <table class="metrics-table" data-testid="sweep-table">
                            <thead>
                                <tr>
                                    <th>{step_heading}</th><th>"load"</th><th>"req/s"</th><th>"tok/s"</th>
                                    <th>"TTFT p95 (ms)"</th><th>"TPOT p95 (ms)"</th><th>"E2E p95 (ms)"</th>
                                    {server_column.then(|| view! { <th>"server (peak)"</th> })}
                                    <th>"note"</th>
                                </tr>
                            </thead>
                            <tbody>
                                {points
                                    .into_iter()
                                    .map(|(label, point, stop)| step_row(label, point, stop, server_column))
                                    .collect_view()}
                            </tbody>
                        </table>
                        <div class="actions">
                            <RedactToggle redact=redact test_id="redact-sweep-base-url" />
                            <button
                                type="button"
                                data-testid="download-sweep"
                                disabled=!finished
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

fn step_row(
    label: String,
    point: Option<CapacityPoint>,
    stop: Option<String>,
    server_column: bool,
) -> impl IntoView {
    let Some(point) = point else {
        let span = if server_column { "7" } else { "6" };
        return view! {
            <tr data-testid="sweep-step">
                <td>{label}</td>
                <td colspan=span>"(no wall time in the artifact)"</td>
                <td>{stop}</td>
            </tr>
        }
        .into_any();
    };
    let note = [
        point
            .slo
            .as_ref()
            .and_then(|outcome| outcome.attainment)
            .map(|attainment| format!("SLO met by {:.1} %", attainment * 100.0)),
        point
            .saturated
            .then(|| "saturated: below 90 % of the offered rate".to_owned()),
        stop,
    ]
    .into_iter()
    .flatten()
    .collect::<Vec<_>>()
    .join("; ");
    view! {
        <tr data-testid="sweep-step">
            <td>{label}</td>
            <td>{point.label.clone()}</td>
            <td>{format_tenths(point.requests_per_s, "")}</td>
            <td>{format_tenths(point.output_tok_s, "")}</td>
            <td>{format_tenths(point.metrics.ttft.p95, "")}</td>
            <td>{format_tenths(point.metrics.tpot.p95, "")}</td>
            <td>{format_tenths(point.metrics.e2e.p95, "")}</td>
            {server_column
                .then(|| {
                    view! {
                        <td data-testid="sweep-step-server">
                            {or_missing(point.server.map(|server| server.brief()))}
                        </td>
                    }
                })}
            <td>{note}</td>
        </tr>
    }
    .into_any()
}
