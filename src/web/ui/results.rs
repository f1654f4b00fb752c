//! The results view: the finished run's key numbers, its failures with their reasons, and the
//! artifact download (a sweep's and a repeat group's too).

use leptos::prelude::*;

use crate::core::artifact::schema::ArtifactV1;
use crate::core::format::{counted, format_count};
use crate::core::present::headline::{headline_cards, HeadlineInputs};
use crate::core::read::loaded::basis::{
    has_wire_times, metrics_on_basis, rows_on_basis, TimeBasis,
};
use crate::core::read::loaded::load::LoadView;
use crate::core::read::loaded::metrics::{KeyMetrics, MetricKind, MetricSummary};
use crate::core::read::loaded::views::{row_notes, ClientView};

use crate::core::read::loaded::views::RowView;
use crate::core::slo::judge_rows;
use crate::web::platform::clock::measured;
use crate::web::platform::files::download_text;
use crate::web::state::AppState;
use crate::web::ui::analysis::SelectionView;
use crate::web::ui::controls::RedactToggle;
use crate::web::ui::library::{ArtifactDrop, ArtifactList};
use crate::web::ui::notes::LoadWarnings;
use crate::web::ui::repeats::RepeatGroupDownload;
use crate::web::ui::share::SharedBanner;
use crate::web::ui::slo::{SloOutcomeLine, SloPanel};
use crate::web::ui::sweep::SweepSummary;

/// The right column: what the last run measured, and the artifact library with its charts and
/// comparisons.
#[component]
pub fn ResultsView() -> impl IntoView {
    let state = AppState::expect();
    view! {
        <section class="panel results-view" data-testid="results-view">
            <h2>"Results"</h2>
            <SharedBanner />
            <TimeBasisSwitch />
            <SloPanel />
            <SweepSummary />
            <RepeatGroupDownload />
            {move || match state.finished().get() {
                None => view! {
                    <p class="empty-state" data-testid="results-empty">
                        "No run yet on this page. Finish a run, or load saved artifacts below."
                    </p>
                }
                .into_any(),
                Some(run) => {
                    view! { <RunSummary artifact=run.artifact.clone() basis=state.basis().get() /> }
                        .into_any()
                }
            }}
            <h2>"Artifacts"</h2>
            <ArtifactDrop />
            <ArtifactList />
            <SelectionView />
        </section>
    }
}

/// The *Times* switch: the basis every result on the page shows TTFO, TTFT and E2E on
/// (docs/develop/accuracy.md, *From the wire*).
#[component]
fn TimeBasisSwitch() -> impl IntoView {
    let state = AppState::expect();
    view! {
        <p class="time-basis">
            <label>
                "Times "
                <select
                    data-testid="time-basis"
                    on:change=move |event| {
                        if let Some(basis) = TimeBasis::named(&event_target_value(&event)) {
                            state.set_basis(basis);
                        }
                    }
                >
                    {TimeBasis::ALL
                        .into_iter()
                        .map(|basis| {
                            view! {
                                <option value=basis.id() selected=move || state.basis().get() == basis>
                                    {basis.label()}
                                </option>
                            }
                        })
                        .collect_view()}
                </select>
            </label>
            " — as measured: from just before each request is sent (the artifact's own fields); \
             from the wire: from when it left the browser."
        </p>
    }
}

/// What the summary says about its time basis: the one shown, or why a run asked to be shown
/// from the wire is shown as measured.
fn basis_caption(asked: TimeBasis, shown: TimeBasis, why_not: Option<String>) -> String {
    match (asked, shown) {
        (TimeBasis::FromWire, TimeBasis::Measured) => format!(
            "Times as measured: this run has no times from the wire ({}).",
            why_not.unwrap_or_else(|| "the browser reported no client_queue_ms".to_owned())
        ),
        (_, TimeBasis::FromWire) => "Times from the wire: each TTFO, TTFT and E2E minus the \
            time the request spent in the browser before it left (client_queue_ms)."
            .to_owned(),
        _ => "Times as measured, from just before each request was sent.".to_owned(),
    }
}

/// One finished run: headline numbers, failures and the download.
#[component]
fn RunSummary(
    /// The run's artifact.
    artifact: std::rc::Rc<ArtifactV1>,
    /// The basis the page shows times on.
    basis: TimeBasis,
) -> impl IntoView {
    let state = AppState::expect();
    let redact = RwSignal::new(false);
    let download_error = RwSignal::new(None::<String>);
    let client_view = artifact.client.as_ref().map(ClientView::of_block);
    let from_wire = artifact
        .client
        .as_ref()
        .and_then(|client| client.from_wire.as_ref())
        .and_then(|block| KeyMetrics::of_from_wire(&block.statistics));
    let measured_rows = RowView::of_timings(&artifact.request_timings);
    let shown_basis = if has_wire_times(&measured_rows, from_wire.as_ref()) {
        basis
    } else {
        TimeBasis::Measured
    };
    let caption = basis_caption(
        basis,
        shown_basis,
        client_view
            .as_ref()
            .and_then(|client| client.from_wire_unavailable.as_ref())
            .map(ToString::to_string),
    );
    let slo_rows = rows_on_basis(&measured_rows, shown_basis);
    let notes_from_rows = row_notes(&slo_rows);
    let (slo_failed, slo_wall_ms) = (
        artifact.failed.max(artifact.failures.len() as u64),
        artifact.wall_clock_ms,
    );
    // A memo: the headline cards and the SLO line both read it, and each change judges once.
    let slo_outcome = Memo::new(move |_| {
        let spec = state.current_slo()?;
        Some(Ok(measured("strobe:slo-judge", || {
            judge_rows(&spec.slo, &slo_rows, slo_failed, Some(slo_wall_ms))
        })))
    });
    // The same families, fallbacks and labels as the charts and `strobe-artifact summary`.
    let key_metrics = metrics_on_basis(
        &KeyMetrics::from_metrics(&artifact.metrics),
        from_wire.as_ref(),
        shown_basis,
    );
    let rows: Vec<(MetricKind, MetricSummary)> = MetricKind::ALL
        .into_iter()
        .map(|kind| (kind, *key_metrics.get(kind)))
        .collect();
    let headline_metrics = key_metrics.clone();
    let (headline_requests, headline_completed, headline_failed) =
        (artifact.requests, artifact.completed, slo_failed);
    let throughput = key_metrics.throughput_tok_s;
    let cache = key_metrics.prefix_cache_hit_avg;
    let failures = artifact.failures.clone();
    let client_note = client_view.as_ref().map(|client| {
        let mut notes = client.notes();
        let waited = artifact
            .request_timings
            .iter()
            .filter(|row| row.ttfo_includes_browser_wait() == Some(true))
            .count();
        notes.extend(notes_from_rows);
        if waited > 0 {
            notes.push(format!(
                "{} waited inside the browser before leaving it (client_queue_ms \
                 in their rows): their TTFO includes that wait.",
                counted(waited as u64, "request", "requests")
            ));
        }
        notes
    });
    let load = artifact.load.as_ref().map(LoadView::of_block);
    let load_warnings = load.as_ref().map(LoadView::warnings).unwrap_or_default();
    let load_notes = load.as_ref().map(LoadView::notes);
    // Two decimals, and thousands separators from 1,000 up (13,418 tok/s, not 13417.65).
    let fmt = |value: Option<f64>| {
        value.map_or("–".to_string(), |v| {
            if v.abs() >= 1_000.0 && v.is_finite() {
                format_count(v.round() as usize)
            } else {
                format!("{v:.2}")
            }
        })
    };
    let artifact_for_download = artifact.clone();
    let on_download = move |_| {
        let mut artifact = (*artifact_for_download).clone();
        if redact.get_untracked() {
            artifact.redact_base_url();
        }
        let outcome = artifact
            .to_json_text()
            .map_err(|err| err.to_string())
            .and_then(|text| download_text(&artifact.file_name(), "application/json", &text));
        download_error.set(outcome.err());
    };
    view! {
        <div class="run-summary" data-testid="run-summary">
            <p class="run-title">
                <strong>{artifact.run_id.clone()}</strong>
                " · "
                {artifact.model.clone()}
                " · "
                {format!("{} of {} completed", artifact.completed, artifact.requests)}
                " · "
                {artifact.measurement_protocol.to_string()}
            </p>
            <LoadWarnings warnings=load_warnings />
            <div class="headline-cards" data-testid="headline-cards">
                {move || {
                    let outcome = slo_outcome.get().and_then(Result::ok);
                    headline_cards(HeadlineInputs {
                        requests: headline_requests,
                        completed: headline_completed,
                        failed: headline_failed,
                        metrics: &headline_metrics,
                        slo: outcome.as_ref(),
                    })
                    .into_iter()
                    .map(|card| {
                        view! {
                            <div class="headline-card" data-testid=format!("card-{}", card.id)>
                                <span class="card-label">{card.label}</span>
                                <span class="card-value">{card.value}</span>
                                {card.detail.map(|detail| view! { <span class="card-detail">{detail}</span> })}
                            </div>
                        }
                    })
                    .collect_view()
                }}
            </div>
            <p class="basis-note" data-testid="summary-basis" data-basis=shown_basis.id()>
                {caption}
            </p>
            <table class="metrics-table" data-testid="summary-table">
                <thead>
                    <tr><th>"metric"</th><th>"p50"</th><th>"p95"</th><th>"mean"</th><th>"unit"</th></tr>
                </thead>
                <tbody>
                    {rows
                        .into_iter()
                        .map(|(kind, summary)| {
                                view! {
                                <tr>
                                    <td>{kind.short_label()}</td>
                                    <td>{fmt(summary.p50)}</td>
                                    <td>{fmt(summary.p95)}</td>
                                    <td>{fmt(summary.mean)}</td>
                                    <td>{kind.unit()}</td>
                                </tr>
                            }
                        })
                        .collect_view()}
                </tbody>
            </table>
            <SloOutcomeLine outcome=slo_outcome test_id="run-slo" />
            <p>
                "Throughput: "
                {throughput.map_or("withheld (a request failed, or the server did not count its tokens)".to_string(), |v| format!("{v:.1} tok/s"))}
                " · prefix cache hit: "
                {cache.map_or("not reported".to_string(), |v| format!("{:.1} %", v * 100.0))}
            </p>
            {load_notes
                .map(|notes| {
                    view! {
                        <ul class="load-notes" data-testid="load-notes">
                            {notes.into_iter().map(|note| view! { <li>{note}</li> }).collect_view()}
                        </ul>
                    }
                })}
            {client_note
                .map(|notes| {
                    view! {
                        <ul class="client-notes" data-testid="client-notes">
                            {notes.into_iter().map(|note| view! { <li>{note}</li> }).collect_view()}
                        </ul>
                    }
                })}
            {(!failures.is_empty())
                .then(|| {
                    view! {
                        <h3>{format!("Failures ({})", failures.len())}</h3>
                        <table class="failures-table" data-testid="failures-table">
                            <thead>
                                <tr><th>"request"</th><th>"class"</th><th>"type"</th><th>"reason"</th></tr>
                            </thead>
                            <tbody>
                                {failures
                                    .into_iter()
                                    .map(|failure| {
                                        view! {
                                            <tr>
                                                <td>{failure.request_index}</td>
                                                <td>{failure.failure_class.as_str()}</td>
                                                <td>{failure.error_type}</td>
                                                <td>{failure.error_message}</td>
                                            </tr>
                                        }
                                    })
                                    .collect_view()}
                            </tbody>
                        </table>
                    }
                })}
            <div class="actions">
                <RedactToggle redact=redact test_id="redact-base-url" />
                <button type="button" class="primary" data-testid="download" on:click=on_download>
                    "Download artifact"
                </button>
            </div>
            {move || download_error.get().map(|error| view! { <p class="error-box">{error}</p> })}
        </div>
    }
}
