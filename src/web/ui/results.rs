//! The results view: the finished run's key numbers, its failures with their reasons, and the
//! artifact download (a sweep's and a repeat group's too).

use leptos::prelude::*;
use leptos::wasm_split::wasm_split;

use crate::core::artifact::file::ArtifactFile;
use crate::core::present::summary::RunSummaryView;
use crate::core::read::opened::basis::TimeBasis;
use crate::core::schema::ArtifactV1;
use crate::web::platform::clock::measured;
use crate::web::platform::files::download_text;
use crate::web::platform::parts::PartNotLoaded;
use crate::web::state::library::Library;
use crate::web::state::AppState;
use crate::web::ui::analysis::SelectionView;
use crate::web::ui::controls::RedactToggle;
use crate::web::ui::library::{ArtifactDrop, ArtifactList, LibraryNote};
use crate::web::ui::notes::LoadWarnings;
use crate::web::ui::part::part_view;
use crate::web::ui::repeats::RepeatGroupDownload;
use crate::web::ui::share::SharedBanner;
use crate::web::ui::slo::{SloOutcomeLine, SloPanel};
use crate::web::ui::sweep::SweepSummary;

/// The right column: what the last run measured, and the artifact library with its charts and
/// comparisons.
#[component]
pub fn ResultsView() -> impl IntoView {
    let state = AppState::expect();
    let library = expect_context::<Library>();
    view! {
        <section class="panel results-view" data-testid="results-view">
            <h2>"Results"</h2>
            <SharedBanner />
            <TimeBasisSwitch />
            <SloPanel />
            <Show when=move || state.sweep().with(Option::is_some)>
                {part_view(sweep_summary)}
            </Show>
            <Show when=move || state.repeat_group().with(|group| !group.is_empty())>
                {part_view(repeat_group_download)}
            </Show>
            <Show
                when=move || state.finished().with(Option::is_some)
                fallback=|| view! {
                    <p class="empty-state" data-testid="results-empty">
                        "No run yet on this page. Finish a run, or load saved artifacts below."
                    </p>
                }
            >
                {part_view(move || finished_run(state))}
            </Show>
            <h2>"Artifacts"</h2>
            <ArtifactDrop />
            <Show when=move || library.entries().with(|entries| !entries.is_empty())>
                {part_view(library_views)}
            </Show>
            <LibraryNote />
        </section>
    }
}

/// The finished run's summary (a split point: the results part of the wasm).
#[wasm_split(results, wasm_split_path = ::leptos::wasm_split, fallible)]
fn finished_run(state: AppState) -> Result<AnyView, PartNotLoaded> {
    Ok(view! {
        {move || state.finished().get().map(|run| {
            view! { <RunSummary artifact=run.artifact.clone() basis=state.basis().get() /> }
        })}
    }
    .into_any())
}

/// The library's table and what its selected runs show (a split point: the results part).
#[wasm_split(results, wasm_split_path = ::leptos::wasm_split, fallible)]
fn library_views() -> Result<AnyView, PartNotLoaded> {
    Ok(view! {
        <ArtifactList />
        <SelectionView />
    }
    .into_any())
}

/// A sweep's table and its download (a split point: the results part).
#[wasm_split(results, wasm_split_path = ::leptos::wasm_split, fallible)]
fn sweep_summary() -> Result<AnyView, PartNotLoaded> {
    Ok(view! { <SweepSummary /> }.into_any())
}

/// A repeat group's download (a split point: the results part).
#[wasm_split(results, wasm_split_path = ::leptos::wasm_split, fallible)]
fn repeat_group_download() -> Result<AnyView, PartNotLoaded> {
    Ok(view! { <RepeatGroupDownload /> }.into_any())
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

/// One finished run: headline numbers, failures and the download ([`RunSummaryView`] says
/// what; this only renders it and judges the SLO in force).
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
    let summary = RunSummaryView::of(&artifact, basis);
    let failures_heading = summary.failures_heading();
    let RunSummaryView {
        run_id,
        model,
        completion,
        protocol,
        shown_basis,
        basis_caption,
        metric_rows,
        throughput,
        prefix_cache,
        load_warnings,
        load_notes,
        client_notes,
        failures,
        headline,
        slo,
    } = summary;
    // A memo: the headline cards and the SLO line both read it, and each change judges once.
    let slo_outcome = Memo::new(move |_| {
        let spec = state.current_slo()?;
        Some(Ok(measured("strobe:slo-judge", || slo.judge(&spec.slo))))
    });
    let on_download = move |_| {
        let outcome = ArtifactFile::of(&artifact, redact.get_untracked())
            .map_err(|err| err.to_string())
            .and_then(|file| download_text(&file.name, "application/json", &file.text));
        download_error.set(outcome.err());
    };
    view! {
        <div class="run-summary" data-testid="run-summary">
            <p class="run-title">
                <strong>{run_id}</strong>
                " · "
                {model}
                " · "
                {completion}
                " · "
                {protocol}
            </p>
            <LoadWarnings warnings=load_warnings />
            <div class="headline-cards" data-testid="headline-cards">
                {move || {
                    let outcome = slo_outcome.get().and_then(Result::ok);
                    headline
                        .cards(outcome.as_ref())
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
                {basis_caption}
            </p>
            <table class="metrics-table" data-testid="summary-table">
                <thead>
                    <tr><th>"metric"</th><th>"p50"</th><th>"p95"</th><th>"mean"</th><th>"unit"</th></tr>
                </thead>
                <tbody>
                    {metric_rows
                        .into_iter()
                        .map(|row| {
                            view! {
                                <tr>
                                    <td>{row.label}</td>
                                    <td>{row.p50}</td>
                                    <td>{row.p95}</td>
                                    <td>{row.mean}</td>
                                    <td>{row.unit}</td>
                                </tr>
                            }
                        })
                        .collect_view()}
                </tbody>
            </table>
            <SloOutcomeLine outcome=slo_outcome test_id="run-slo" />
            <p>
                "Throughput: "
                {throughput}
                " · prefix cache hit: "
                {prefix_cache}
            </p>
            {load_notes
                .map(|notes| {
                    view! {
                        <ul class="load-notes" data-testid="load-notes">
                            {notes.into_iter().map(|note| view! { <li>{note}</li> }).collect_view()}
                        </ul>
                    }
                })}
            {client_notes
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
                        <h3>{failures_heading}</h3>
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
                                                <td>{failure.class}</td>
                                                <td>{failure.error_type}</td>
                                                <td>{failure.message}</td>
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
