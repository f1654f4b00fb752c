//! The `sweep` block strobe adds to each step's artifact of a sweep (docs/guide/load.md): which
//! sweep, which step, the variable and its value, and why the sweep stopped when this step ended
//! it.

use std::fmt;

use serde::{Deserialize, Serialize};

/// The variable of a sweep's steps, as the `sweep` block records it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SweepVariable {
    /// Requests in flight.
    Concurrency,
    /// Requests per second.
    Rate,
}

impl fmt::Display for SweepVariable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Concurrency => "concurrency",
            Self::Rate => "rate",
        })
    }
}

/// Why a sweep stopped before its last step.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// A step's failure share exceeded `sweep_max_error`.
    Errors,
    /// A rate step fell below 90 % of its offered rate.
    Saturated,
    /// A step's SLO attainment fell below `sweep_min_attainment`.
    BelowSlo,
    /// The user cancelled.
    Cancelled,
    /// A step could not be planned or did not finish (its reason is the run's).
    StepFailed,
}

impl StopReason {
    /// What the page says.
    pub fn describe(self) -> &'static str {
        match self {
            Self::Errors => "a step's failure share exceeded sweep_max_error",
            Self::Saturated => "a rate step fell below 90 % of its offered rate (saturated)",
            Self::BelowSlo => "a step's SLO attainment fell below sweep_min_attainment",
            Self::Cancelled => "the sweep was cancelled",
            Self::StepFailed => "a step could not run",
        }
    }
}

/// The `sweep` block each step's artifact carries (a strobe addition, docs/guide/load.md), so a set
/// of files regroups by itself.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SweepBlock {
    /// Shared by every step of one sweep, e.g. `sweep-20261201T120000Z`.
    pub id: String,
    /// From 0.
    pub step_index: u64,
    /// The steps the sweep planned.
    pub step_count: u64,
    /// What the steps vary.
    pub variable: SweepVariable,
    /// This step's value.
    pub value: f64,
    /// The `sweep` link value the sweep was started with (`concurrency:1,2,4`, `auto`, …).
    pub spec: String,
    /// Set on the step that ended the sweep early, with why; null otherwise.
    pub stop_reason: Option<StopReason>,
}
