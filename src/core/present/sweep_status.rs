//! Where a sweep is, in words (docs/guide/load.md): the line the page shows above a running sweep's
//! live numbers and after it ends — which step (and, with repeats, which repeat of it) runs,
//! the cool-down before the next run, and how the sweep ended. Pure: the page hands in where
//! its sweep is ([`SweepStatus`]) and renders the text.

use crate::core::format::counted;
use crate::core::schema::sweep::SweepVariable;

/// The run of a sweep that is running, or that ran last.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SweepPosition {
    /// The step, from 0.
    pub step_index: usize,
    /// What the step varies.
    pub variable: SweepVariable,
    /// The step's value.
    pub value: f64,
    /// The repeat of the step, from 0 (0 without repeats).
    pub repeat: u64,
}

/// How a sweep ended.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SweepEnding<'a> {
    /// Every planned step ran, each as often as asked.
    Complete,
    /// A stop rule, a cancel or a run that could not run ended it; why.
    Stopped(&'a str),
}

/// Where a sweep is.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SweepStatus<'a> {
    /// The `sweep` setting it runs.
    pub spec: &'a str,
    /// The steps it plans.
    pub step_count: usize,
    /// The runs of each step (the `repeats` setting; 1 runs each step once).
    pub repeats: u64,
    /// The runs filed so far (steps × repeats when it completes).
    pub runs_filed: usize,
    /// The steps at least one of whose runs is filed.
    pub steps_reached: usize,
    /// The run started last: the one running, or, in a cool-down, the one before it.
    pub current: Option<SweepPosition>,
    /// How it ended, once it has.
    pub ended: Option<SweepEnding<'a>>,
    /// Seconds of cool-down left before the next run, while it cools down.
    pub cooling_s: Option<f64>,
    /// Cancel was pressed and the sweep has not ended yet.
    pub cancelled: bool,
}

impl SweepStatus<'_> {
    /// The line the page shows.
    pub fn text(&self) -> String {
        let head = format!("Sweep {}", self.spec);
        let count = self.step_count;
        let repeats = self.repeats.max(1);
        if repeats == 1 {
            let done = self.runs_filed;
            return match (self.ended, self.cooling_s, self.current) {
                (Some(SweepEnding::Complete), _, _) => format!("{head}: all {done} steps done."),
                (Some(SweepEnding::Stopped(reason)), _, _) => {
                    format!("{head}: stopped after {done} of {count} steps: {reason}.")
                }
                _ if self.cancelled => {
                    format!("{head}: cancelling; the {done} finished step(s) are kept.")
                }
                (None, Some(left), _) => format!(
                    "{head}: step {done} of {count} done; cooling down {left:.1} s before step {}.",
                    done + 1
                ),
                (None, None, Some(position)) => format!(
                    "{head}: step {} of {count} ({} {}).",
                    position.step_index + 1,
                    position.variable,
                    position.value
                ),
                (None, None, None) => format!("{head}: starting."),
            };
        }
        let runs = self.runs_filed;
        match (self.ended, self.cooling_s, self.current) {
            (Some(SweepEnding::Complete), _, _) => {
                format!("{head}: all {count} steps done, {repeats} runs each ({runs} runs).")
            }
            (Some(SweepEnding::Stopped(reason)), _, _) => format!(
                "{head}: stopped in step {} of {count} after {} ({repeats} a step): {reason}.",
                self.steps_reached,
                counted(runs as u64, "run", "runs")
            ),
            _ if self.cancelled => {
                format!("{head}: cancelling; the {runs} finished run(s) are kept.")
            }
            (None, Some(left), Some(position)) => {
                let step = position.step_index + 1;
                if position.repeat + 1 < repeats {
                    format!(
                        "{head}: step {step} of {count}, repeat {} of {repeats} done; cooling \
                         down {left:.1} s before repeat {}.",
                        position.repeat + 1,
                        position.repeat + 2
                    )
                } else {
                    format!(
                        "{head}: step {step} of {count} done ({repeats} runs); cooling down \
                         {left:.1} s before step {}.",
                        step + 1
                    )
                }
            }
            (None, _, Some(position)) => format!(
                "{head}: step {} of {count} ({} {}), repeat {} of {repeats}.",
                position.step_index + 1,
                position.variable,
                position.value,
                position.repeat + 1
            ),
            (None, _, None) => format!("{head}: starting."),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(repeats: u64) -> SweepStatus<'static> {
        SweepStatus {
            spec: "concurrency:1,2",
            step_count: 2,
            repeats,
            runs_filed: 0,
            steps_reached: 0,
            current: None,
            ended: None,
            cooling_s: None,
            cancelled: false,
        }
    }

    fn at(step_index: usize, repeat: u64) -> Option<SweepPosition> {
        Some(SweepPosition {
            step_index,
            variable: SweepVariable::Concurrency,
            value: (step_index + 1) as f64,
            repeat,
        })
    }

    #[test]
    fn a_sweep_without_repeats_speaks_of_steps() {
        assert_eq!(status(1).text(), "Sweep concurrency:1,2: starting.");
        let running = SweepStatus {
            current: at(0, 0),
            ..status(1)
        };
        assert_eq!(
            running.text(),
            "Sweep concurrency:1,2: step 1 of 2 (concurrency 1)."
        );
        let cooling = SweepStatus {
            runs_filed: 1,
            steps_reached: 1,
            cooling_s: Some(2.04),
            ..running
        };
        assert_eq!(
            cooling.text(),
            "Sweep concurrency:1,2: step 1 of 2 done; cooling down 2.0 s before step 2."
        );
        let cancelling = SweepStatus {
            cancelled: true,
            ..cooling
        };
        assert_eq!(
            cancelling.text(),
            "Sweep concurrency:1,2: cancelling; the 1 finished step(s) are kept."
        );
        let stopped = SweepStatus {
            ended: Some(SweepEnding::Stopped("the sweep was cancelled")),
            ..cancelling
        };
        assert_eq!(
            stopped.text(),
            "Sweep concurrency:1,2: stopped after 1 of 2 steps: the sweep was cancelled."
        );
        let complete = SweepStatus {
            runs_filed: 2,
            steps_reached: 2,
            ended: Some(SweepEnding::Complete),
            ..status(1)
        };
        assert_eq!(complete.text(), "Sweep concurrency:1,2: all 2 steps done.");
    }

    #[test]
    fn a_sweep_with_repeats_says_which_repeat_of_which_step() {
        let running = SweepStatus {
            current: at(1, 0),
            runs_filed: 2,
            steps_reached: 1,
            ..status(3)
        };
        assert_eq!(
            running.text(),
            "Sweep concurrency:1,2: step 2 of 2 (concurrency 2), repeat 1 of 3."
        );
        let between_repeats = SweepStatus {
            runs_filed: 3,
            steps_reached: 2,
            cooling_s: Some(5.0),
            ..running
        };
        assert_eq!(
            between_repeats.text(),
            "Sweep concurrency:1,2: step 2 of 2, repeat 1 of 3 done; cooling down 5.0 s before \
             repeat 2."
        );
        let between_steps = SweepStatus {
            current: at(0, 2),
            runs_filed: 3,
            steps_reached: 1,
            cooling_s: Some(1.0),
            ..status(3)
        };
        assert_eq!(
            between_steps.text(),
            "Sweep concurrency:1,2: step 1 of 2 done (3 runs); cooling down 1.0 s before step 2."
        );
        let cancelling = SweepStatus {
            cancelled: true,
            ..between_repeats
        };
        assert_eq!(
            cancelling.text(),
            "Sweep concurrency:1,2: cancelling; the 3 finished run(s) are kept."
        );
        let stopped = SweepStatus {
            ended: Some(SweepEnding::Stopped("the sweep was cancelled")),
            ..cancelling
        };
        assert_eq!(
            stopped.text(),
            "Sweep concurrency:1,2: stopped in step 2 of 2 after 3 runs (3 a step): the sweep \
             was cancelled."
        );
        let complete = SweepStatus {
            runs_filed: 6,
            steps_reached: 2,
            ended: Some(SweepEnding::Complete),
            ..status(3)
        };
        assert_eq!(
            complete.text(),
            "Sweep concurrency:1,2: all 2 steps done, 3 runs each (6 runs)."
        );
        let first_run_only = SweepStatus {
            runs_filed: 1,
            steps_reached: 1,
            current: at(0, 0),
            ended: Some(SweepEnding::Stopped("the sweep was cancelled")),
            ..status(3)
        };
        assert_eq!(
            first_run_only.text(),
            "Sweep concurrency:1,2: stopped in step 1 of 2 after 1 run (3 a step): the sweep \
             was cancelled."
        );
    }
}
