//! A sweep as the page runs it (docs/guide/load.md): the steps the core's [`SweepPlan`] decides,
//! one complete run each — or, with `repeats` above 1, that many runs of the same plan, one repeat
//! group a step — with an optional cool-down between every two runs. Every finished run carries
//! the sweep's `sweep` block (and its step's `repeat` block) and joins the results and the
//! library as it ends, so a cancel or a run that cannot run loses nothing measured before it.

use std::rc::Rc;

use leptos::prelude::*;

use crate::core::config::settings::RunConfig;
use crate::core::config::sweep::SweepSpec;
use crate::core::load::sweep::{StepResult, SweepNext, SweepPlan, SweepStep};
use crate::core::present::sweep_status::SweepPosition;
use crate::core::schema::sweep::StopReason;
use crate::core::schema::ArtifactV1;

use crate::web::run::context::{plan_run, RunContext};
use crate::web::run::keep;
use crate::web::state::error::RunError;
use crate::web::state::{SweepEnd, SweepStepRecord};

/// Runs the sweep `spec` over `base` (the form's configuration) to its end, each step
/// `repeats` times (the same plan, so the same requests), the cool-down between every two runs.
pub async fn run_sweep(context: &RunContext, mut spec: SweepSpec, base: RunConfig, repeats: u64) {
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
    state.begin_sweep(spec_text.clone(), step_count, repeats);
    let mut sweep = SweepRun {
        context,
        plan: &plan,
        spec_text,
        step_count,
        repeats,
        done: Vec::new(),
        first_run_id: None,
        cancelled_before_measuring: None,
    };
    let mut next = plan.next(&sweep.done);
    let end = loop {
        let step = match next {
            SweepNext::Step(step) => *step,
            SweepNext::Done(None) => break SweepEnd::Complete,
            SweepNext::Done(Some(reason)) => {
                break SweepEnd::Stopped(reason, reason.describe().to_string())
            }
        };
        next = match sweep.run_step(&step).await {
            Ok(after) => after,
            Err(end) => break end,
        };
        if matches!(next, SweepNext::Step(_)) && !context.cool_down(sweep.cooldown_ms()).await {
            mark_last_step(context, StopReason::Cancelled);
            next = SweepNext::Done(Some(StopReason::Cancelled));
        }
    };
    let failed_reason = match &end {
        SweepEnd::Stopped(_, reason) => Some(reason.clone()),
        SweepEnd::Complete => None,
    };
    let measured_any = state.end_sweep(end);
    match (failed_reason, sweep.cancelled_before_measuring.take()) {
        (Some(_), Some(note)) if !measured_any => state.cancelled_before_measuring(note),
        (Some(reason), _) if !measured_any => state.fail(RunError::Sweep(reason)),
        _ => state.finish_run(),
    }
}

/// A sweep being run: what its steps share, and the results of the steps so far.
struct SweepRun<'a> {
    context: &'a RunContext,
    plan: &'a SweepPlan,
    spec_text: String,
    step_count: usize,
    repeats: u64,
    /// Each finished step's result (its repeats pooled), in order.
    done: Vec<StepResult>,
    /// The run id of the sweep's first run: the sweep's id and its steps' repeat groups
    /// are named after it.
    first_run_id: Option<String>,
    /// Cancel came before a run sent anything (during its prefix-cache reset, or while its
    /// worker started): what the page says when nothing of the sweep was measured.
    cancelled_before_measuring: Option<String>,
}

impl SweepRun<'_> {
    fn cooldown_ms(&self) -> f64 {
        self.plan.spec().cooldown_s * 1000.0
    }

    /// Runs `step` `repeats` times, filing each run as it ends, and says what comes after it;
    /// how the sweep ends when it stops within the step (a cancel, a run that could not run or
    /// be filed, or a next step that cannot run).
    async fn run_step(&mut self, step: &SweepStep) -> Result<SweepNext, SweepEnd> {
        let context = self.context;
        let state = context.state;
        let cancelled = || {
            SweepEnd::Stopped(
                StopReason::Cancelled,
                StopReason::Cancelled.describe().to_string(),
            )
        };
        let run_name = |repeat: u64| step.run_name(repeat, self.repeats);
        let mut results: Vec<StepResult> = Vec::new();
        // What follows the step; the step's last run sets it (`repeats` is at least 1).
        let mut after = SweepNext::Done(None);
        for repeat in 0..self.repeats {
            if repeat > 0 && !context.cool_down(self.cooldown_ms()).await {
                mark_last_step(context, StopReason::Cancelled);
                return Err(cancelled());
            }
            state.sweep_step_started(SweepPosition {
                step_index: step.index,
                variable: step.variable,
                value: step.value,
                repeat,
            });
            let mut artifact = match context.measure(step.config.clone()).await {
                Ok(artifact) => artifact,
                Err(error) if state.cancel_requested().get_untracked() => {
                    if error.cancelled_before_measuring() {
                        self.cancelled_before_measuring = Some(error.to_string());
                    }
                    mark_last_step(context, StopReason::Cancelled);
                    return Err(cancelled());
                }
                Err(reason) => {
                    mark_last_step(context, StopReason::StepFailed);
                    return Err(SweepEnd::Stopped(
                        StopReason::StepFailed,
                        format!("{} could not run: {reason}", run_name(repeat)),
                    ));
                }
            };
            context.hold_to_slo(&mut artifact);
            results.push(StepResult::of_artifact(step.value, &artifact));
            let was_cancelled = state.cancel_requested().get_untracked();
            let last_of_step = was_cancelled || repeat + 1 == self.repeats;
            // The step's last run decides what follows it, from all its repeats.
            let mut failed_next = None;
            let next = if !last_of_step {
                None
            } else if was_cancelled {
                Some(SweepNext::Done(Some(StopReason::Cancelled)))
            } else {
                self.done.extend(StepResult::pooled(&results));
                Some(match self.plan.next(&self.done) {
                    // A step planned from this one's results (auto's rates) is checked now,
                    // so the reason it cannot run is recorded on the step that decided it.
                    SweepNext::Step(following) => match plan_of(context, &following) {
                        Ok(()) => SweepNext::Step(following),
                        Err(reason) => {
                            failed_next = Some(reason);
                            SweepNext::Done(Some(StopReason::StepFailed))
                        }
                    },
                    finished => finished,
                })
            };
            let first_run_id = self
                .first_run_id
                .get_or_insert_with(|| artifact.run_id.clone())
                .clone();
            let stop_reason = match next {
                Some(SweepNext::Done(reason)) => reason,
                Some(SweepNext::Step(_)) | None => None,
            };
            artifact.sweep = Some(step.sweep_block(
                &first_run_id,
                self.step_count,
                &self.spec_text,
                stop_reason,
            ));
            if let Some(block) = step.repeat_block(&first_run_id, repeat, self.repeats) {
                artifact.repeat = Some(block);
            }
            let (artifact, point) = context.file(artifact).await.map_err(|error| {
                SweepEnd::Stopped(
                    StopReason::StepFailed,
                    format!("{} could not be filed: {error}", run_name(repeat)),
                )
            })?;
            state.sweep_step_filed(SweepStepRecord { artifact, point });
            if let Some(reason) = failed_next {
                return Err(SweepEnd::Stopped(
                    StopReason::StepFailed,
                    format!("step {} could not run: {reason}", step.index + 2),
                ));
            }
            if let Some(next) = next {
                after = next;
                break;
            }
        }
        Ok(after)
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
