//! The steps of a sweep: a series of complete runs over one variable, to find how much load a
//! server carries (docs/guide/load.md). `concurrency:1,2,4,8` and `rate:1,2,5,10` run the listed
//! values ([`SweepSpec`] is what the user asked for); `auto`
//! follows GuideLLM's method: a synchronous step (one request at a time), a throughput step
//! (closed loop at the run's concurrency), then rates evenly spaced strictly between the two
//! steps' completion rates. Optional stop rules end a sweep after a step whose failure share
//! exceeds a bound, whose achieved rate fell below 90 % of the offered one (saturated), or
//! whose SLO attainment fell below a floor.
//!
//! [`SweepPlan`] decides each step's settings from the base configuration and the steps before
//! it; the page runs them. Pure: no clock, no network.

use crate::core::config::choices::LoadMode;
use crate::core::config::load::{MAX_RATE, MIN_RATE};
use crate::core::config::settings::RunConfig;
use crate::core::config::sweep::{SweepKind, SweepSpec};
use crate::core::schema::repeat::RepeatBlock;
use crate::core::schema::sweep::{StopReason, SweepBlock, SweepVariable};
use crate::core::schema::ArtifactV1;

/// A rate step whose achieved rate is below this share of its offered rate is saturated.
pub const SATURATION_SHARE: f64 = 0.9;

/// What a finished step tells the steps after it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StepResult {
    /// The step's value (its concurrency, or its rate).
    pub value: f64,
    /// Requests the step planned.
    pub requests: u64,
    /// Requests that failed.
    pub failed: u64,
    /// Completions per second of the step's wall time.
    pub completed_per_s: Option<f64>,
    /// The step's offered rate (rate steps).
    pub offered_rate: Option<f64>,
    /// The rate its requests went out at (rate steps).
    pub achieved_rate: Option<f64>,
    /// The share of its requests that met the sweep's SLO, when it has one.
    pub slo_attainment: Option<f64>,
}

impl StepResult {
    /// Whether a rate step fell below [`SATURATION_SHARE`] of its offered rate.
    pub fn saturated(&self) -> bool {
        match (self.offered_rate, self.achieved_completion_rate()) {
            (Some(offered), Some(achieved)) => achieved < SATURATION_SHARE * offered,
            _ => false,
        }
    }

    /// The step's achieved rate: completions per second (what the server got through).
    fn achieved_completion_rate(&self) -> Option<f64> {
        self.completed_per_s.or(self.achieved_rate)
    }
}

impl StepResult {
    /// What a finished step's artifact tells the steps after it.
    pub fn of_artifact(value: f64, artifact: &ArtifactV1) -> Self {
        let wall_s = artifact.wall_clock_ms / 1000.0;
        Self {
            value,
            requests: artifact.requests,
            failed: artifact.failed,
            completed_per_s: (wall_s > 0.0).then(|| artifact.completed as f64 / wall_s),
            offered_rate: artifact.load.as_ref().and_then(|load| load.offered_rate),
            achieved_rate: artifact.load.as_ref().and_then(|load| load.achieved_rate),
            slo_attainment: artifact.slo.as_ref().and_then(|slo| slo.attainment),
        }
    }
}

impl StepResult {
    /// The repeats of one step as one result for the steps after it (docs/guide/load.md, *Repeats
    /// in a sweep*): their requests and failures summed, so the failure share is the step's
    /// over every repeat; their completion and achieved rates the means (what `auto` spaces
    /// its rates by, and what saturation is judged on); their SLO attainment weighted by the
    /// requests each sent, so it is the share of all their requests that met the SLO. `None`
    /// for no repeats.
    pub fn pooled(repeats: &[StepResult]) -> Option<Self> {
        let first = repeats.first()?;
        let mean = |values: Vec<f64>| {
            (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
        };
        let judged: Vec<&StepResult> = repeats
            .iter()
            .filter(|repeat| repeat.slo_attainment.is_some())
            .collect();
        let judged_requests: u64 = judged.iter().map(|repeat| repeat.requests).sum();
        let slo_attainment = if judged.is_empty() {
            None
        } else if judged_requests == 0 {
            mean(judged.iter().filter_map(|r| r.slo_attainment).collect())
        } else {
            Some(
                judged
                    .iter()
                    .map(|r| r.slo_attainment.unwrap_or(0.0) * r.requests as f64)
                    .sum::<f64>()
                    / judged_requests as f64,
            )
        };
        Some(Self {
            value: first.value,
            requests: repeats.iter().map(|repeat| repeat.requests).sum(),
            failed: repeats.iter().map(|repeat| repeat.failed).sum(),
            completed_per_s: mean(repeats.iter().filter_map(|r| r.completed_per_s).collect()),
            offered_rate: first.offered_rate,
            achieved_rate: mean(repeats.iter().filter_map(|r| r.achieved_rate).collect()),
            slo_attainment,
        })
    }
}

/// The `repeat` group id of step `step_index` (from 0) of a sweep whose first run has id
/// `first_run_id`: one group per step, so each step's repeats regroup by themselves and two
/// steps that start within the same second never share a group.
pub fn step_repeat_group_id(first_run_id: &str, step_index: usize) -> String {
    format!("repeat-{first_run_id}-step{:02}", step_index + 1)
}

/// The `sweep` block's id of a sweep whose first run has id `first_run_id`: every run of the
/// sweep carries it, so its files regroup as one sweep.
pub fn sweep_id(first_run_id: &str) -> String {
    format!("sweep-{first_run_id}")
}

/// One step to run: its position and settings.
#[derive(Clone, Debug, PartialEq)]
pub struct SweepStep {
    /// From 0.
    pub index: usize,
    /// The variable the step sets.
    pub variable: SweepVariable,
    /// The value it sets.
    pub value: f64,
    /// The base configuration with the value applied.
    pub config: RunConfig,
}

impl SweepStep {
    /// How the page's messages name the step's run `repeat` (from 0) of `repeats`: `step 3`, or
    /// `step 3 (repeat 2 of 4)` when the step runs more than once.
    pub fn run_name(&self, repeat: u64, repeats: u64) -> String {
        if repeats > 1 {
            format!(
                "step {} (repeat {} of {repeats})",
                self.index + 1,
                repeat + 1
            )
        } else {
            format!("step {}", self.index + 1)
        }
    }

    /// The `sweep` block a run of this step carries: the sweep's id (after its first run, see
    /// [`sweep_id`]), the step's place, variable and value, the sweep's `spec` and, on the run
    /// the sweep stopped after, why.
    pub fn sweep_block(
        &self,
        first_run_id: &str,
        step_count: usize,
        spec: &str,
        stop_reason: Option<StopReason>,
    ) -> SweepBlock {
        SweepBlock {
            id: sweep_id(first_run_id),
            step_index: self.index as u64,
            step_count: step_count as u64,
            variable: self.variable,
            value: self.value,
            spec: spec.to_owned(),
            stop_reason,
        }
    }

    /// The `repeat` block of the step's run `repeat` (from 0) of `repeats`, one group a step
    /// ([`step_repeat_group_id`]); `None` when the step runs once.
    pub fn repeat_block(
        &self,
        first_run_id: &str,
        repeat: u64,
        repeats: u64,
    ) -> Option<RepeatBlock> {
        (repeats > 1).then(|| RepeatBlock {
            group_id: step_repeat_group_id(first_run_id, self.index),
            index: repeat,
            count: repeats,
        })
    }
}

/// What comes after the steps finished so far.
#[derive(Clone, Debug, PartialEq)]
pub enum SweepNext {
    /// Run this step.
    Step(Box<SweepStep>),
    /// The sweep is over: every step ran (`None`), or a stop rule ended it.
    Done(Option<StopReason>),
}

/// Decides a sweep's steps from its base configuration and the results so far.
#[derive(Clone, Debug, PartialEq)]
pub struct SweepPlan {
    spec: SweepSpec,
    base: RunConfig,
}

impl SweepPlan {
    /// A plan for `spec` over `base` (the run form's configuration).
    pub fn new(spec: SweepSpec, base: RunConfig) -> Self {
        Self { spec, base }
    }

    /// The sweep as asked for.
    pub fn spec(&self) -> &SweepSpec {
        &self.spec
    }

    /// The steps whose settings do not depend on the steps before them: every step of a list,
    /// the two measuring steps of `auto`. Planning them before the first runs means a value
    /// the endpoint cannot take stops the sweep before anything was measured.
    pub fn known_steps(&self) -> Vec<SweepStep> {
        let known = match self.spec.kind {
            SweepKind::Auto { .. } => 2,
            _ => self.spec.step_count(),
        };
        let unbroken = Self {
            spec: SweepSpec {
                max_error: None,
                stop_when_saturated: false,
                min_attainment: None,
                ..self.spec.clone()
            },
            base: self.base.clone(),
        };
        let mut done = Vec::new();
        let mut steps = Vec::new();
        while steps.len() < known {
            let SweepNext::Step(step) = unbroken.next(&done) else {
                break;
            };
            done.push(StepResult {
                value: step.value,
                requests: 0,
                failed: 0,
                completed_per_s: None,
                offered_rate: None,
                achieved_rate: None,
                slo_attainment: None,
            });
            steps.push(*step);
        }
        steps
    }

    /// The step after `done` (the finished steps, in order), or why there is none.
    pub fn next(&self, done: &[StepResult]) -> SweepNext {
        if let Some(last) = done.last() {
            if let Some(max) = self.spec.max_error {
                let share = last.failed as f64 / last.requests.max(1) as f64;
                if share > max {
                    return SweepNext::Done(Some(StopReason::Errors));
                }
            }
            if self.spec.stop_when_saturated && last.saturated() {
                return SweepNext::Done(Some(StopReason::Saturated));
            }
            if let (Some(floor), Some(attainment)) = (self.spec.min_attainment, last.slo_attainment)
            {
                if attainment < floor {
                    return SweepNext::Done(Some(StopReason::BelowSlo));
                }
            }
        }
        let index = done.len();
        if index >= self.spec.step_count() {
            return SweepNext::Done(None);
        }
        let (variable, value) = match &self.spec.kind {
            SweepKind::Concurrency(values) => (SweepVariable::Concurrency, values[index] as f64),
            SweepKind::Rate(values) => (SweepVariable::Rate, values[index]),
            SweepKind::Auto { steps } => match index {
                0 => (SweepVariable::Concurrency, 1.0),
                1 => (SweepVariable::Concurrency, self.base.concurrency as f64),
                _ => {
                    let rate_of = |step: &StepResult| step.completed_per_s.unwrap_or(0.0);
                    let (low, high) = (rate_of(&done[0]), rate_of(&done[1]));
                    let fraction = (index - 1) as f64 / (*steps - 1) as f64;
                    let rate = (low + (high - low) * fraction).clamp(MIN_RATE, MAX_RATE);
                    (SweepVariable::Rate, rate)
                }
            },
        };
        let mut config = self.base.clone();
        match variable {
            SweepVariable::Concurrency => {
                config.load.mode = LoadMode::Concurrency;
                config.concurrency = value as u64;
            }
            SweepVariable::Rate => {
                config.load.mode = LoadMode::Rate;
                config.load.rate = value;
            }
        }
        SweepNext::Step(Box::new(SweepStep {
            index,
            variable,
            value,
            config,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn third_step() -> SweepStep {
        SweepStep {
            index: 2,
            variable: SweepVariable::Concurrency,
            value: 4.0,
            config: RunConfig::default(),
        }
    }

    #[test]
    fn a_step_names_its_runs_and_writes_their_blocks() {
        let third = third_step();
        assert_eq!(third.run_name(0, 1), "step 3");
        assert_eq!(third.run_name(1, 4), "step 3 (repeat 2 of 4)");
        let block = third.sweep_block("run-a", 5, "concurrency:1,2,4", Some(StopReason::Cancelled));
        assert_eq!(block.id, "sweep-run-a");
        assert_eq!(block.id, sweep_id("run-a"));
        assert_eq!((block.step_index, block.step_count), (2, 5));
        assert_eq!(block.variable, SweepVariable::Concurrency);
        assert_eq!(block.value, 4.0);
        assert_eq!(block.spec, "concurrency:1,2,4");
        assert_eq!(block.stop_reason, Some(StopReason::Cancelled));
        assert_eq!(third.repeat_block("run-a", 0, 1), None);
        let repeat = third.repeat_block("run-a", 1, 3).expect("repeated");
        assert_eq!(repeat.group_id, "repeat-run-a-step03");
        assert_eq!((repeat.index, repeat.count), (1, 3));
    }

    fn spec(kind: SweepKind) -> SweepSpec {
        SweepSpec {
            kind,
            max_error: None,
            stop_when_saturated: false,
            cooldown_s: 0.0,
            min_attainment: None,
        }
    }

    fn result(value: f64, failed: u64, completed_per_s: f64, offered: Option<f64>) -> StepResult {
        StepResult {
            value,
            requests: 10,
            failed,
            completed_per_s: Some(completed_per_s),
            offered_rate: offered,
            achieved_rate: offered,
            slo_attainment: None,
        }
    }

    fn step(next: SweepNext) -> SweepStep {
        match next {
            SweepNext::Step(step) => *step,
            SweepNext::Done(reason) => panic!("expected a step, the sweep is done: {reason:?}"),
        }
    }

    #[test]
    fn a_steps_repeats_pool_into_one_result() {
        assert_eq!(StepResult::pooled(&[]), None);
        let one = result(4.0, 1, 3.0, None);
        assert_eq!(
            StepResult::pooled(&[one]),
            Some(one),
            "one repeat is itself"
        );
        let repeats = [
            StepResult {
                slo_attainment: Some(1.0),
                ..result(2.0, 0, 2.0, Some(2.0))
            },
            StepResult {
                requests: 30,
                slo_attainment: Some(0.5),
                ..result(2.0, 3, 1.0, Some(2.0))
            },
            StepResult {
                slo_attainment: None,
                ..result(2.0, 0, 1.5, Some(2.0))
            },
        ];
        let pooled = StepResult::pooled(&repeats).expect("three repeats");
        assert_eq!((pooled.value, pooled.requests, pooled.failed), (2.0, 50, 3));
        assert_eq!(pooled.completed_per_s, Some(1.5), "the mean rate");
        assert_eq!(pooled.offered_rate, Some(2.0));
        assert_eq!(pooled.achieved_rate, Some(2.0));
        assert_eq!(
            pooled.slo_attainment,
            Some((10.0 + 15.0) / 40.0),
            "the share of the judged repeats' requests that met the SLO"
        );
        assert!(pooled.saturated(), "1.5 of 2 offered is 75 %");
    }

    #[test]
    fn stop_rules_judge_a_repeated_step_by_all_its_repeats() {
        let plan = SweepPlan::new(
            SweepSpec {
                max_error: Some(0.2),
                stop_when_saturated: true,
                ..spec(SweepKind::Rate(vec![1.0, 2.0]))
            },
            RunConfig::default(),
        );
        // One repeat with 3 failures of 10 alone would stop the sweep; over two it is 15 %.
        let step = [
            result(1.0, 3, 1.0, Some(1.0)),
            result(1.0, 0, 1.0, Some(1.0)),
        ];
        let pooled = StepResult::pooled(&step).expect("two repeats");
        assert!(matches!(plan.next(&[pooled]), SweepNext::Step(_)));
        // Saturation is judged on the repeats' mean completion rate.
        let slow = [
            result(1.0, 0, 0.8, Some(1.0)),
            result(1.0, 0, 0.9, Some(1.0)),
        ];
        assert_eq!(
            plan.next(&[StepResult::pooled(&slow).expect("two")]),
            SweepNext::Done(Some(StopReason::Saturated))
        );
        assert_eq!(
            step_repeat_group_id("benchmark-20261202T120000Z", 1),
            "repeat-benchmark-20261202T120000Z-step02"
        );
    }

    #[test]
    fn known_steps_are_the_whole_list_or_the_two_ends_of_auto() {
        let listed = SweepPlan::new(
            SweepSpec {
                max_error: Some(0.0),
                ..spec(SweepKind::Rate(vec![1.0, 2.0, 4.0]))
            },
            RunConfig::default(),
        );
        let rates: Vec<f64> = listed
            .known_steps()
            .iter()
            .map(|step| step.config.load.rate)
            .collect();
        assert_eq!(rates, [1.0, 2.0, 4.0], "stop rules do not shorten the plan");
        let auto = SweepPlan::new(
            spec(SweepKind::Auto { steps: 6 }),
            RunConfig {
                concurrency: 8,
                ..RunConfig::default()
            },
        );
        let ends: Vec<u64> = auto
            .known_steps()
            .iter()
            .map(|step| step.config.concurrency)
            .collect();
        assert_eq!(ends, [1, 8]);
    }

    #[test]
    fn a_list_sweep_runs_each_value_in_order() {
        let base = RunConfig {
            concurrency: 3,
            ..RunConfig::default()
        };
        let plan = SweepPlan::new(spec(SweepKind::Concurrency(vec![1, 4])), base.clone());
        let first = step(plan.next(&[]));
        assert_eq!((first.index, first.value), (0, 1.0));
        assert_eq!(first.config.concurrency, 1);
        assert_eq!(first.config.load.mode, LoadMode::Concurrency);
        let second = step(plan.next(&[result(1.0, 0, 1.0, None)]));
        assert_eq!(second.config.concurrency, 4);
        let done = [result(1.0, 0, 1.0, None), result(4.0, 0, 3.0, None)];
        assert_eq!(plan.next(&done), SweepNext::Done(None));

        let rates = SweepPlan::new(spec(SweepKind::Rate(vec![2.0, 8.0])), base);
        let first = step(rates.next(&[]));
        assert_eq!(first.config.load.mode, LoadMode::Rate);
        assert_eq!(first.config.load.rate, 2.0);
        assert_eq!(
            first.config.concurrency, 3,
            "the run's concurrency is the cap"
        );
    }

    #[test]
    fn auto_measures_the_two_ends_then_spaces_rates_between_them() {
        let base = RunConfig {
            concurrency: 16,
            ..RunConfig::default()
        };
        let plan = SweepPlan::new(spec(SweepKind::Auto { steps: 5 }), base);
        let sync = step(plan.next(&[]));
        assert_eq!(
            (sync.variable, sync.config.concurrency),
            (SweepVariable::Concurrency, 1)
        );
        let throughput = step(plan.next(&[result(1.0, 0, 2.0, None)]));
        assert_eq!(throughput.config.concurrency, 16);
        let measured = [result(1.0, 0, 2.0, None), result(16.0, 0, 14.0, None)];
        let rates: Vec<f64> = (0..3)
            .map(|k| {
                let mut done = measured.to_vec();
                done.extend((0..k).map(|_| result(0.0, 0, 1.0, Some(1.0))));
                step(plan.next(&done)).config.load.rate
            })
            .collect();
        assert_eq!(rates, [5.0, 8.0, 11.0], "strictly between 2 and 14, evenly");
        let mut all = measured.to_vec();
        all.extend([result(5.0, 0, 5.0, Some(5.0)); 3]);
        assert_eq!(plan.next(&all), SweepNext::Done(None));
    }

    #[test]
    fn stop_rules_end_the_sweep_after_the_step_that_broke_them() {
        let errors = SweepPlan::new(
            SweepSpec {
                max_error: Some(0.2),
                ..spec(SweepKind::Concurrency(vec![1, 2, 4]))
            },
            RunConfig::default(),
        );
        assert!(
            matches!(
                errors.next(&[result(1.0, 2, 1.0, None)]),
                SweepNext::Step(_)
            ),
            "20 % is allowed"
        );
        assert_eq!(
            errors.next(&[result(1.0, 3, 1.0, None)]),
            SweepNext::Done(Some(StopReason::Errors))
        );
        let saturation = SweepPlan::new(
            SweepSpec {
                stop_when_saturated: true,
                ..spec(SweepKind::Rate(vec![1.0, 2.0, 4.0]))
            },
            RunConfig::default(),
        );
        assert!(matches!(
            saturation.next(&[result(1.0, 0, 0.95, Some(1.0))]),
            SweepNext::Step(_)
        ));
        assert_eq!(
            saturation.next(&[result(1.0, 0, 0.85, Some(1.0))]),
            SweepNext::Done(Some(StopReason::Saturated))
        );
        assert!(
            !result(4.0, 0, 1.0, None).saturated(),
            "a closed loop is never saturated"
        );
        let slo = SweepPlan::new(
            SweepSpec {
                min_attainment: Some(0.5),
                ..spec(SweepKind::Concurrency(vec![1, 2, 4]))
            },
            RunConfig::default(),
        );
        let judged = |attainment: Option<f64>| StepResult {
            slo_attainment: attainment,
            ..result(1.0, 0, 1.0, None)
        };
        assert!(
            matches!(slo.next(&[judged(Some(0.5))]), SweepNext::Step(_)),
            "at the floor"
        );
        assert!(
            matches!(slo.next(&[judged(None)]), SweepNext::Step(_)),
            "not judged"
        );
        assert_eq!(
            slo.next(&[judged(Some(0.49))]),
            SweepNext::Done(Some(StopReason::BelowSlo))
        );
    }
}
