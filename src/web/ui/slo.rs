//! The SLO in the results (docs/guide/metrics.md, *Service-level objectives*): the box it is typed
//! in (the form's own `slo` and `slo_target` fields, so the link carries it), what it says of one
//! run, and restoring it from a dropped file's `slo` block.

use leptos::prelude::*;

use crate::core::config::fields::FieldKey;
use crate::core::read::opened::OpenedArtifact;
use crate::core::slo::SloOutcome;

use crate::web::state::AppState;

/// How an SLO judges requests, for the help text under its box.
pub const SLO_RULES: &str = "A request meets the SLO when it succeeded and every bound holds \
     (its value at most the limit, in ms). A failed request never meets it; an answer of one \
     token has no TPOT, so its TPOT bound is skipped; TTFO falls back to TTFT for a row without \
     it. Attainment is the share of all sent requests that met it; goodput counts them (and \
     their output tokens) per second of the run's wall time. Changing it re-judges every run \
     shown: nothing runs again.";

/// The SLO box: bounds and target, bound to the run form (and so to the page's link).
#[component]
pub fn SloPanel() -> impl IntoView {
    let state = AppState::expect();
    let field = move |key: FieldKey| state.form().with(|form| form.get(key).to_owned());
    let set = move |key: FieldKey, text: String| state.edit_field(key, text);
    view! {
        <div class="slo-panel" data-testid="slo-panel">
            <label class="field">
                <span class="field-label">"SLO (ms)"</span>
                <input
                    type="text"
                    placeholder="e.g. ttft:500,tpot:50"
                    spellcheck="false"
                    data-testid="slo-input"
                    prop:value=move || field(FieldKey::Slo)
                    on:input=move |ev| set(FieldKey::Slo, event_target_value(&ev))
                />
            </label>
            <label class="field slo-target">
                <span class="field-label">"target (%)"</span>
                <input
                    type="text"
                    inputmode="decimal"
                    data-testid="slo-target"
                    prop:value=move || field(FieldKey::SloTarget)
                    on:input=move |ev| set(FieldKey::SloTarget, event_target_value(&ev))
                />
            </label>
            {move || {
                state
                    .slo()
                    .get()
                    .err()
                    .map(|error| view! { <p class="field-error" data-testid="slo-error">{error}</p> })
            }}
            {move || state.slo_note().get().map(|note| view! { <p class="slo-note" data-testid="slo-note">{note}</p> })}
            <p class="field-help">{SLO_RULES}</p>
        </div>
    }
}

/// What the SLO says of one run, or why it cannot say (an `Err` is shown as the reason).
#[component]
pub fn SloOutcomeLine(
    /// The outcome, or why the run cannot be judged; `None` hides the line (no SLO set).
    #[prop(into)]
    outcome: Signal<Option<Result<SloOutcome, String>>>,
    /// The line's `data-testid`.
    #[prop(into)]
    test_id: String,
) -> impl IntoView {
    move || {
        outcome.get().map(|outcome| {
            let (class, text, attainment) = match outcome {
                Ok(outcome) => (
                    "slo-outcome",
                    format!("SLO: {}", outcome.summary()),
                    outcome
                        .attainment
                        .map(|a| a.to_string())
                        .unwrap_or_default(),
                ),
                Err(reason) => (
                    "slo-outcome unjudged",
                    format!("SLO: {reason}"),
                    String::new(),
                ),
            };
            view! {
                <p class=class data-testid=test_id.clone() data-attainment=attainment>
                    {text}
                </p>
            }
        })
    }
}

/// Restores the SLO of a dropped file that was held to one: its `slo` and `slo_target` go into
/// the form (and so into the link), and the panel says where they came from — or why a file's
/// block could not be read. The last such file dropped wins.
pub fn restore_slo(state: AppState, opened: &OpenedArtifact) {
    let Some(view) = &opened.slo else {
        return;
    };
    match &view.slo {
        Some(slo) => {
            let mut fields = vec![(FieldKey::Slo, slo.to_string())];
            if let Some(target) = view.target {
                // Rounded so 0.9 shows as 90, not 90.00000000000001.
                let percent = (target * 100.0 * 1e6).round() / 1e6;
                fields.push((FieldKey::SloTarget, percent.to_string()));
            }
            state.restore_slo(
                fields,
                format!("SLO {slo} restored from {}.", opened.file_name),
            );
        }
        None => {
            if let Some(problem) = &view.problem {
                state.restore_slo(Vec::new(), format!("{}: {problem}.", opened.file_name));
            }
        }
    }
}
