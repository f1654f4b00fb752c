//! The verdict under a comparison: for each pair the core's [`shown_verdicts`] gives (each run
//! against the baseline, or two groups of repeats), one sentence per metric saying whether B
//! differs from A by more than noise, and for groups each side's p50 across its runs with the
//! flag when its runs disagree. Renders only: the tests and words are
//! [`crate::core::present::verdict`]'s, the numbers `strobe-artifact compare` prints.

use std::sync::Arc;

use leptos::prelude::*;

use crate::core::present::verdict::shown::shown_verdicts;
use crate::core::present::verdict::{
    across_runs_text, disagreement, json_key, MetricVerdict, Sides, ALPHA,
};
use crate::core::read::opened::OpenedArtifact;

/// The verdicts of `runs` compared in this order (the first is the baseline).
#[component]
pub fn Verdicts(
    /// The artifacts compared.
    runs: Vec<Arc<OpenedArtifact>>,
) -> impl IntoView {
    let refs: Vec<&OpenedArtifact> = runs.iter().map(Arc::as_ref).collect();
    let shown = shown_verdicts(&refs);
    view! {
        <section class="verdicts" data-testid="verdicts">
            <h4>"Is B really different from A?"</h4>
            <p class="field-help">
                {format!(
                    "Two runs: the Mann–Whitney U test over their rows. Two groups of repeats: \
                     Welch's t-test over their runs' p50s. Holm-corrected across the metrics at \
                     α = {ALPHA}; \"significant\" says the difference is unlikely to be noise, \
                     not that it matters (docs/guide/metrics.md, Is B really faster than A?)."
                )}
            </p>
            {shown
                .into_iter()
                .map(|shown| {
                    view! {
                        <div class="verdict-pair" data-testid="verdict-pair">
                            <h5>{shown.heading()}</h5>
                            {shown
                                .verdict
                                .workloads_differ
                                .clone()
                                .map(|sentence| {
                                    view! {
                                        <p class="warning" data-testid="verdict-workloads">
                                            {sentence}
                                        </p>
                                    }
                                })}
                            <ul>
                                {shown
                                    .verdict
                                    .metrics
                                    .iter()
                                    .map(|metric| view! { <MetricLine metric=metric.clone() /> })
                                    .collect_view()}
                            </ul>
                        </div>
                    }
                })
                .collect_view()}
        </section>
    }
}

/// One metric's sentence, and for groups each side's p50 across its runs.
#[component]
fn MetricLine(metric: MetricVerdict) -> impl IntoView {
    let sentence = metric.sentence();
    let significant = metric.is_significant();
    let unit = metric.metric.unit();
    let groups = match &metric.sides {
        Sides::Groups(a, b) => {
            let side = |name: &'static str, p50: Option<&_>| {
                p50.map(|across| {
                    let flag = disagreement(across);
                    view! {
                        <span class="across" data-testid="verdict-across">
                            {format!("{name}: p50 {}", across_runs_text(across, unit))}
                            {flag.map(|flag| view! { <span class="warning">" — "{flag}</span> })}
                        </span>
                    }
                })
            };
            Some(view! {
                <div class="field-help">
                    {side("A", a.p50.as_ref())}
                    " · "
                    {side("B", b.p50.as_ref())}
                </div>
            })
        }
        Sides::Runs(..) => None,
    };
    view! {
        <li
            data-testid="verdict-metric"
            data-metric=json_key(metric.metric)
            data-significant=significant.to_string()
            class:significant=significant
        >
            {sentence}
            {groups}
        </li>
    }
}
