//! Charts and comparison of the artifacts selected in the library (with the capacity view when
//! they form a curve), and their exports
//! (rows as CSV, summary as Markdown, the one-file report; each chart exports itself as PNG).

use std::sync::Arc;

use leptos::prelude::*;

use crate::core::config::slo::SloSpec;
use crate::core::present::cache_reset::reset_note_of;
use crate::core::present::charts::overlay_slo;
use crate::core::present::charts::{artifact_charts, comparison_charts};
use crate::core::present::charts::{group_charts, ChartGroup, ChartTheme, NamedChart};
use crate::core::present::compare::compare;
use crate::core::present::compare::{format_delta, ComparedMetric, MetricComparison};
use crate::core::present::export::{rows_csv_with_slo, summary_markdown};
use crate::core::present::server::server_line;
use crate::core::present::turns::turns_table;
use crate::core::read::opened::basis::TimeBasis;
use crate::core::read::opened::load::LoadView;
use crate::core::read::opened::metrics::MetricStat;
use crate::core::read::opened::views::{row_notes, RowView};
use crate::core::read::opened::OpenedArtifact;
use crate::core::slo::judge_opened;
use crate::web::state::AppState;
use crate::web::ui::capacity::CapacityView;
use crate::web::ui::notes::LoadWarnings;
use crate::web::ui::report::SaveReport;
use crate::web::ui::share::ShareLink;
use crate::web::ui::slo::SloOutcomeLine;
use crate::web::ui::turns::TurnsTableView;
use crate::web::ui::verdict::Verdicts;
use serde_json::Value;

use crate::web::platform::clock::measured;
use crate::web::platform::files::download_text;
use crate::web::state::library::Library;
use crate::web::ui::echart::{prefers_dark, EChart};

fn theme() -> ChartTheme {
    ChartTheme {
        dark: prefers_dark(),
    }
}

/// The charts from the core's option builders, grouped in sections by the question they answer
/// (docs/guide/results.md, *Charts*); the latency section shows one metric at a time, picked by a
/// switch. The set of charts is fixed by the first value; later values (a changed SLO) update
/// each chart in place, and only the charts whose option changed are drawn again.
#[component]
pub fn ChartSections(
    /// The charts to draw.
    #[prop(into)]
    charts: Signal<Vec<NamedChart>>,
) -> impl IntoView {
    let state = AppState::expect();
    let first = charts.get_untracked();
    let groups = group_charts(&first);
    let titles: Vec<String> = first.iter().map(|chart| chart.title.clone()).collect();
    let ids: Vec<String> = first.iter().map(|chart| chart.id.clone()).collect();
    let chart_view = move |position: usize| {
        let option = Memo::new(move |_| {
            charts
                .with(|all| all.get(position).map(|chart| chart.option.clone()))
                .unwrap_or(Value::Null)
        });
        view! {
            <EChart
                option=option
                title=titles[position].clone()
                test_id=format!("chart-{}", ids[position])
                height="340px"
            />
        }
    };
    let nav = (groups.len() > 1).then(|| {
        view! {
            <nav class="chart-nav" aria-label="Chart sections">
                {groups
                    .iter()
                    .map(|group| {
                        view! {
                            <a href=format!("#charts-{}", group.section.id())>{group.section.title()}</a>
                        }
                    })
                    .collect_view()}
            </nav>
        }
    });
    let sections = groups
        .into_iter()
        .map(|group| {
            let section = group.section;
            let chart_view = chart_view.clone();
            let grid_class = if section.wide() {
                "chart-grid wide"
            } else {
                "chart-grid"
            };
            let switch = (group.metrics.len() > 1).then(|| {
                let shown = group.clone();
                view! { <MetricSwitch group=shown /> }
            });
            let body = move || {
                group
                    .positions_for(state.latency_metric().get())
                    .into_iter()
                    .map(chart_view.clone())
                    .collect_view()
            };
            view! {
                <section
                    class="chart-section"
                    id=format!("charts-{}", section.id())
                    data-testid=format!("charts-{}", section.id())
                >
                    <h4>{section.title()}</h4>
                    <p class="section-question">{section.question()}</p>
                    {switch}
                    <div class=grid_class>{body}</div>
                </section>
            }
        })
        .collect_view();
    view! {
        <div class="chart-sections">
            {nav}
            {sections}
        </div>
    }
}

/// The latency section's switch: one radio button per metric its charts are of.
#[component]
fn MetricSwitch(
    /// The section whose metrics it lists.
    group: ChartGroup,
) -> impl IntoView {
    let state = AppState::expect();
    let name = format!("metric-{}", group.section.id());
    let shown = {
        let group = group.clone();
        Memo::new(move |_| group.shown_metric(state.latency_metric().get()))
    };
    view! {
        <fieldset class="metric-switch" data-testid=format!("{}-metric", group.section.id())>
            <legend>"Metric"</legend>
            {group
                .metrics
                .iter()
                .copied()
                .map(|metric| {
                    let checked = move || shown.get() == Some(metric);
                    view! {
                        <label title=metric.label()>
                            <input
                                type="radio"
                                name=name.clone()
                                value=metric.id()
                                prop:checked=checked
                                on:change=move |_| state.set_latency_metric(metric)
                            />
                            {metric.short_label()}
                        </label>
                    }
                })
                .collect_view()}
        </fieldset>
    }
}

/// `charts` with the SLO in force drawn on them (timed as `strobe:slo-charts`).
fn with_slo(
    charts: &[NamedChart],
    slo: Option<&SloSpec>,
    rows: Option<&[RowView]>,
) -> Vec<NamedChart> {
    let mut charts = charts.to_vec();
    if let Some(spec) = slo {
        measured("strobe:slo-charts", || {
            overlay_slo(&mut charts, &spec.slo, rows, theme())
        });
    }
    charts
}

/// What a run's view says about its time basis when the page asks for times from the wire: that
/// they are, or why this run is shown as measured.
fn basis_note(asked: TimeBasis, run: &OpenedArtifact) -> Option<String> {
    match (asked, run.basis) {
        (TimeBasis::Measured, _) => None,
        (TimeBasis::FromWire, TimeBasis::FromWire) => Some(
            "Times from the wire: TTFO, TTFT and E2E minus each request's client_queue_ms."
                .to_owned(),
        ),
        (TimeBasis::FromWire, TimeBasis::Measured) => Some(format!(
            "Shown as measured: {}.",
            run.why_no_wire_times().unwrap_or_default()
        )),
    }
}

/// What the selected artifacts show: one run's charts, or a comparison of several.
#[component]
pub fn SelectionView() -> impl IntoView {
    let library = expect_context::<Library>();
    let state = AppState::expect();
    let selected = Memo::new(move |_| SelectedRuns(library.selected()));
    // The selected runs on the chosen time basis (docs/develop/accuracy.md, *From the wire*).
    let shown = Memo::new(move |_| {
        let basis = state.basis().get();
        let runs = selected.get().0;
        SelectedRuns(
            runs.into_iter()
                .map(|run| match basis {
                    TimeBasis::Measured => run,
                    TimeBasis::FromWire => Arc::new(run.on_basis(basis)),
                })
                .collect(),
        )
    });
    view! {
        {move || {
            let runs = shown.get().0;
            match runs.len() {
                0 => ().into_any(),
                1 => view! { <SingleRun run=runs[0].clone() /> }.into_any(),
                _ => view! { <CompareRuns runs=runs /> }.into_any(),
            }
        }}
    }
}

/// The selected artifacts; equal when they are the same files (by pointer).
#[derive(Clone)]
struct SelectedRuns(Vec<Arc<OpenedArtifact>>);

impl PartialEq for SelectedRuns {
    fn eq(&self, other: &Self) -> bool {
        self.0.len() == other.0.len() && self.0.iter().zip(&other.0).all(|(a, b)| Arc::ptr_eq(a, b))
    }
}

/// One artifact's charts and exports.
#[component]
fn SingleRun(
    /// The artifact.
    run: Arc<OpenedArtifact>,
) -> impl IntoView {
    let state = AppState::expect();
    let base_charts = measured("strobe:chart-options", || artifact_charts(&run, theme()));
    let chart_run = run.clone();
    let charts = Memo::new(move |_| {
        with_slo(
            &base_charts,
            state.current_slo().as_ref(),
            Some(&chart_run.rows),
        )
    });
    let judged_run = run.clone();
    let slo_outcome = Signal::derive(move || {
        let spec = state.current_slo()?;
        Some(
            measured("strobe:slo-judge", || judge_opened(&spec.slo, &judged_run))
                .map_err(|reason| reason.to_string()),
        )
    });
    let export_error = RwSignal::new(None::<String>);
    let run_id = run.identity.run_id.clone();
    let is_finished_run = move || {
        state.finished().with(|finished| {
            finished.as_ref().is_some_and(|finished| {
                run_id
                    .as_ref()
                    .is_some_and(|run_id| run_id.as_str() == finished.artifact.run_id)
            })
        })
    };
    let notes_run = run.clone();
    let csv_run = run.clone();
    let md_run = run.clone();
    let report_run = run.clone();
    let share_run = run.clone();
    let stem = file_stem(&run);
    let csv_stem = stem.clone();
    view! {
        <section class="analysis" data-testid="single-run">
            <h3>{run.label()}</h3>
            {run.sweep.as_ref().map(|sweep| view! { <p class="sweep-note" data-testid="sweep-note">{sweep.note()}</p> })}
            {basis_note(state.basis().get_untracked(), &run)
                .map(|note| view! { <p class="basis-note" data-testid="basis-note">{note}</p> })}
            <SloOutcomeLine outcome=slo_outcome test_id="slo-outcome" />
            <LoadWarnings warnings=run.load.as_ref().map(LoadView::warnings).unwrap_or_default() />
            {run
                .load
                .as_ref()
                .map(|load| {
                    view! {
                        <ul class="load-notes" data-testid="load-notes">
                            {load.notes().into_iter().map(|note| view! { <li>{note}</li> }).collect_view()}
                        </ul>
                    }
                })}
            {move || {
                // The finished run above already says how it was measured: once is enough.
                // A run sent by Locust's workers says how it was measured in its own notes.
                notes_run
                    .client
                    .as_ref()
                    .filter(|_| !is_finished_run() && notes_run.distributed.is_none())
                    .map(|client| {
                        view! {
                            <ul class="client-notes" data-testid="client-notes">
                                {client
                                    .notes()
                                    .into_iter()
                                    .chain(row_notes(&notes_run.rows))
                                    .map(|note| view! { <li>{note}</li> })
                                    .collect_view()}
                            </ul>
                        }
                    })
            }}
            {run
                .distributed
                .as_ref()
                .map(|distributed| {
                    view! {
                        <ul class="client-notes" data-testid="distributed-notes">
                            {distributed
                                .notes()
                                .into_iter()
                                .chain(row_notes(&run.rows))
                                .map(|note| view! { <li>{note}</li> })
                                .collect_view()}
                        </ul>
                    }
                })}
            {run
                .foreign
                .as_ref()
                .map(|source| {
                    view! {
                        <ul class="client-notes" data-testid="foreign-notes">
                            {source.notes().into_iter().map(|note| view! { <li>{note}</li> }).collect_view()}
                        </ul>
                    }
                })}
            {run
                .server_metrics
                .as_ref()
                .map(|block| {
                    let line = server_line(block);
                    view! {
                        <div class="server-view" data-testid="server-line">
                            <p>{line.text}</p>
                            {(!line.notes.is_empty())
                                .then(|| {
                                    view! {
                                        <ul class="client-notes" data-testid="server-notes">
                                            {line
                                                .notes
                                                .into_iter()
                                                .map(|note| view! { <li>{note}</li> })
                                                .collect_view()}
                                        </ul>
                                    }
                                })}
                        </div>
                    }
                })}
            {reset_note_of(&run)
                .map(|note| {
                    // A cache that was not emptied changes what the run's TTFT means: said as a
                    // warning, the other verdicts as a note.
                    let class = if note.verdict == "not_emptied" { "warning" } else { "client-notes" };
                    view! {
                        <p class=class data-testid="cache-reset-note" data-verdict=note.verdict>
                            {note.text}
                        </p>
                    }
                })}
            <TurnsTableView table=turns_table(&run) />
            <div class="actions">
                <button
                    type="button"
                    data-testid="export-csv"
                    disabled=!run.has_rows()
                    on:click=move |_| {
                        let slo = state.current_slo();
                        let csv = rows_csv_with_slo(&csv_run, slo.as_ref().map(|spec| &spec.slo));
                        export_error
                            .set(download_text(&format!("{csv_stem}-rows.csv"), "text/csv", &csv).err())
                    }
                >
                    "Rows as CSV"
                </button>
                <button
                    type="button"
                    data-testid="export-markdown"
                    on:click=move |_| {
                        let runs = [md_run.as_ref()];
                        let mut comparison = compare(&runs);
                        if let Some(spec) = state.current_slo() {
                            comparison.add_slo(&runs, &spec.slo);
                        }
                        let text = summary_markdown(&runs, &comparison);
                        export_error
                            .set(download_text(&format!("{stem}-summary.md"), "text/markdown", &text).err())
                    }
                >
                    "Summary as Markdown"
                </button>
                <SaveReport runs=vec![report_run] />
                <ShareLink run=share_run />
            </div>
            {move || export_error.get().map(|reason| view! { <p class="error-box">{reason}</p> })}
            <ChartSections charts=charts />
        </section>
    }
}

/// Side by side: key metrics with deltas and ratios against the first run, workload
/// mismatches, the verdict of each difference, overlaid CDFs.
#[component]
fn CompareRuns(
    /// The artifacts, the first is the baseline.
    runs: Vec<Arc<OpenedArtifact>>,
) -> impl IntoView {
    let state = AppState::expect();
    let refs: Vec<&OpenedArtifact> = runs.iter().map(Arc::as_ref).collect();
    let base = compare(&refs);
    let base_charts = measured("strobe:chart-options", || comparison_charts(&refs, theme()));
    let charts = Memo::new(move |_| with_slo(&base_charts, state.current_slo().as_ref(), None));
    let judged_runs = runs.clone();
    // The comparison with the SLO's rows when one is set (judging every run again when it
    // changes).
    let comparison = Memo::new(move |_| {
        let mut comparison = base.clone();
        if let Some(spec) = state.current_slo() {
            let refs: Vec<&OpenedArtifact> = judged_runs.iter().map(Arc::as_ref).collect();
            measured("strobe:slo-judge", || comparison.add_slo(&refs, &spec.slo));
        }
        comparison
    });
    let markdown_runs = runs.clone();
    let verdict_runs = runs.clone();
    let report_runs = runs.clone();
    let export_error = RwSignal::new(None::<String>);
    let shown_stats = [MetricStat::P50, MetricStat::P95];
    let rows = move || -> Vec<MetricComparison> {
        comparison.with(|comparison| {
            comparison
                .metrics
                .iter()
                .filter(|metric| match metric.metric {
                    ComparedMetric::Distribution(_, stat) => shown_stats.contains(&stat),
                    _ => true,
                })
                .cloned()
                .collect()
        })
    };
    let (labels, mismatches, different_traffic) = comparison.with_untracked(|c| {
        (
            c.labels.clone(),
            c.mismatches.clone(),
            c.different_traffic(),
        )
    });
    view! {
        <CapacityView runs=runs.clone() />
        <section class="analysis" data-testid="compare-runs">
            <h3>{format!("Comparing {} runs (baseline: {})", labels.len(), labels[0])}</h3>
            {if mismatches.is_empty() {
                view! {
                    <p class="ok" data-testid="like-for-like">
                        "Same workload as far as the files tell."
                    </p>
                }
                    .into_any()
            } else {
                view! {
                    <div class="mismatches" data-testid="mismatches">
                        <p>
                            <strong>"These runs did not measure the same workload:"</strong>
                            " read the differences below with that in mind."
                        </p>
                        {different_traffic
                            .map(|sentence| {
                                view! {
                                    <p data-testid="different-traffic">
                                        <strong>{sentence}</strong>
                                    </p>
                                }
                            })}
                        <ul>
                            {mismatches
                                .into_iter()
                                .map(|mismatch| {
                                    view! {
                                        <li data-testid="mismatch" data-field=mismatch.field>
                                            <code>{mismatch.field}</code>
                                            ": "
                                            {mismatch.values.join(" vs ")}
                                            " — "
                                            {mismatch.explanation}
                                        </li>
                                    }
                                })
                                .collect_view()}
                        </ul>
                    </div>
                }
                    .into_any()
            }}
            <table class="metrics-table" data-testid="compare-table">
                <thead>
                    <tr>
                        <th>"metric"</th>
                        {labels.iter().map(|label| view! { <th>{label.clone()}</th> }).collect_view()}
                    </tr>
                </thead>
                <tbody>
                    {move || rows()
                        .into_iter()
                        .map(|metric| {
                            let unit = metric.metric.unit();
                            view! {
                                <tr data-metric=metric.metric.label()>
                                    <td>{metric.metric.label()}</td>
                                    {metric
                                        .runs
                                        .iter()
                                        .enumerate()
                                        .map(|(position, delta)| {
                                            view! { <td>{format_delta(delta, unit, position == 0)}</td> }
                                        })
                                        .collect_view()}
                                </tr>
                            }
                        })
                        .collect_view()}
                </tbody>
            </table>
            <Verdicts runs=verdict_runs />
            <div class="actions">
                <button
                    type="button"
                    data-testid="export-markdown"
                    on:click=move |_| {
                        let refs: Vec<&OpenedArtifact> = markdown_runs.iter().map(Arc::as_ref).collect();
                        let markdown = comparison.with_untracked(|comparison| summary_markdown(&refs, comparison));
                        export_error
                            .set(download_text("strobe-comparison.md", "text/markdown", &markdown).err())
                    }
                >
                    "Summary as Markdown"
                </button>
                <SaveReport runs=report_runs />
            </div>
            {move || export_error.get().map(|reason| view! { <p class="error-box">{reason}</p> })}
            <ChartSections charts=charts />
        </section>
    }
}

fn file_stem(run: &OpenedArtifact) -> String {
    let label = run.label();
    let stem = label.strip_suffix(".json").unwrap_or(&label);
    crate::core::format::file_stem(stem, "strobe-run")
}
