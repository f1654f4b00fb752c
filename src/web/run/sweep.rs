//! A sweep as the page runs it (docs/load.md): the steps the core's [`SweepPlan`] decides, one
//! complete run each, with an optional cool-down between them. Every finished step carries the
//! sweep's `sweep` block and joins the results and the library as it ends, so a cancel or a
//! step that cannot run loses nothing measured before it.

use std::rc::Rc;

use leptos::prelude::*;

use crate::core::artifact::schema::sweep::{StopReason, SweepBlock};
use crate::core::artifact::schema::ArtifactV1;
use crate::core::config::settings::RunConfig;
use crate::core::config::sweep::SweepSpec;
use crate::core::load::sweep::{StepResult, SweepNext, SweepPlan, SweepStep};

use crate::web::platform::timers::sleep_ms;
use crate::web::run::context::{plan_run, RunContext};
use crate::web::run::keep;
use crate::web::state::error::RunError;
use crate::web::state::{SweepEnd, SweepStepRecord};

/// How often a cool-down looks for a cancel and updates its countdown.
const COOLDOWN_TICK_MS: f64 = 100.0;

/// Runs the sweep `spec` over `base` (the form's configuration) to its end.
pub async fn run_sweep(context: &RunContext, mut spec: SweepSpec, base: RunConfig) {
    let state = context.state;
    // The attainment floor is one of the SLO's fields: it holds only with an SLO.
    spec.min_attainment = context
        .slo
        .as_ref()
        .and_then(|slo| slo.sweep_min_attainment);
    let plan = SweepPlan::new(spec, base);
    let spec_text = plan.spec().kind.to_string();
    let step_count = plan.spec().step_count();
    for step in plan.known_steps() {
        if let Err(reason) = plan_of(context, &step) {
            state.fail(RunError::Plan(reason));
            return;
        }
    }
    state.begin_sweep(spec_text.clone(), step_count);
    let mut done: Vec<StepResult> = Vec::new();
    let mut sweep_id: Option<String> = None;
    let mut next = plan.next(&done);
    // Cancel during a step's prefix-cache reset: that step sent nothing.
    let mut cancelled_during_reset = None::<String>;
    let end = loop {
        let step = match next {
            SweepNext::Step(step) => *step,
            SweepNext::Done(None) => break SweepEnd::Complete,
            SweepNext::Done(Some(reason)) => {
                break SweepEnd::Stopped(reason, reason.describe().to_string())
            }
        };
        state.sweep_step_started(step.index, step.variable, step.value);
        let mut artifact = match context.measure(step.config.clone()).await {
            Ok(artifact) => artifact,
            Err(error) if state.sweep_cancelled().get_untracked() => {
                if let RunError::CancelledDuringReset(_) = error {
                    cancelled_during_reset = Some(error.to_string());
                }
                mark_last_step(context, StopReason::Cancelled);
                break SweepEnd::Stopped(
                    StopReason::Cancelled,
                    StopReason::Cancelled.describe().to_string(),
                );
            }
            Err(reason) => {
                mark_last_step(context, StopReason::StepFailed);
                break SweepEnd::Stopped(
                    StopReason::StepFailed,
                    format!("step {} could not run: {reason}", step.index + 1),
                );
            }
        };
        context.hold_to_slo(&mut artifact);
        done.push(StepResult::of_artifact(step.value, &artifact));
        let mut failed_next = None;
        next = if state.sweep_cancelled().get_untracked() {
            SweepNext::Done(Some(StopReason::Cancelled))
        } else {
            match plan.next(&done) {
                // A step planned from this one's results (auto's rates) is checked now, so
                // the reason it cannot run is recorded on the step that decided it.
                SweepNext::Step(following) => match plan_of(context, &following) {
                    Ok(()) => SweepNext::Step(following),
                    Err(reason) => {
                        failed_next = Some(reason);
                        SweepNext::Done(Some(StopReason::StepFailed))
                    }
                },
                finished => finished,
            }
        };
        let id = sweep_id
            .get_or_insert_with(|| format!("sweep-{}", artifact.run_id))
            .clone();
        artifact.sweep = Some(SweepBlock {
            id,
            step_index: step.index as u64,
            step_count: step_count as u64,
            variable: step.variable,
            value: step.value,
            spec: spec_text.clone(),
            stop_reason: match next {
                SweepNext::Done(reason) => reason,
                SweepNext::Step(_) => None,
            },
        });
        let (artifact, point) = match context.file(artifact) {
            Ok(filed) => filed,
            Err(error) => {
                break SweepEnd::Stopped(
                    StopReason::StepFailed,
                    format!("step {} could not be filed: {error}", step.index + 1),
                );
            }
        };
        state.sweep_step_filed(SweepStepRecord { artifact, point });
        if let Some(reason) = failed_next {
            break SweepEnd::Stopped(
                StopReason::StepFailed,
                format!("step {} could not run: {reason}", step.index + 2),
            );
        }
        if matches!(next, SweepNext::Step(_))
            && !cool_down(context, plan.spec().cooldown_s * 1000.0).await
        {
            mark_last_step(context, StopReason::Cancelled);
            next = SweepNext::Done(Some(StopReason::Cancelled));
        }
    };
    let failed_reason = match &end {
        SweepEnd::Stopped(_, reason) => Some(reason.clone()),
        SweepEnd::Complete => None,
    };
    let measured_any = state.end_sweep(end);
    match (failed_reason, cancelled_during_reset) {
        (Some(_), Some(note)) if !measured_any => state.cancelled_before_measuring(note),
        (Some(reason), _) if !measured_any => state.fail(RunError::Sweep(reason)),
        _ => state.finish_run(),
    }
}

/// Whether `step` plans for this endpoint; why not otherwise.
fn plan_of(context: &RunContext, step: &SweepStep) -> Result<(), String> {
    plan_run(
        &step.config,
        context.discovered_max_model_len,
        context.state,
    )
    .map(drop)
    .map_err(|error| {
        format!(
            "step {} ({} {}) cannot run: {error}",
            step.index + 1,
            step.variable,
            step.value
        )
    })
}

/// Waits `ms` between two steps, counting down on the page; false when Cancel was pressed.
async fn cool_down(context: &RunContext, ms: f64) -> bool {
    let state = context.state;
    let until = context.clock.now_ms() + ms;
    loop {
        if state.sweep_cancelled().get_untracked() {
            state.cooling(None);
            return false;
        }
        let left = until - context.clock.now_ms();
        if left <= 0.0 {
            state.cooling(None);
            return true;
        }
        state.cooling(Some(left / 1000.0));
        sleep_ms(left.min(COOLDOWN_TICK_MS)).await;
    }
}

/// Records on the last finished step that the sweep stopped after it, in its artifact, the
/// results and the library alike: a sweep cancelled in a cool-down, or whose next step could
/// not run, still says why in its files.
fn mark_last_step(context: &RunContext, reason: StopReason) {
    let state = context.state;
    let Some(last) = state.last_sweep_step() else {
        return;
    };
    let old_name = last.file_name();
    let mut artifact: ArtifactV1 = (*last).clone();
    if let Some(sweep) = artifact.sweep.as_mut() {
        sweep.stop_reason = Some(reason);
    }
    match artifact.to_json_text() {
        Ok(text) => keep::replace_named(context.library, &old_name, &text),
        // The step stays in the library as it was filed; its file just lacks the stop reason.
        Err(error) => leptos::logging::warn!(
            "strobe: the sweep's last step could not be rewritten with its stop reason: {error}"
        ),
    }
    state.replace_last_sweep_step(&last, Rc::new(artifact));
}
