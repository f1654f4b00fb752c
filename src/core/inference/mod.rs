//! Inference: whether a difference between two runs, or two groups of repeated runs, is more
//! than noise. A stage of its own, below [`crate::core::present`] (which words its answers)
//! and importing nothing of the pipeline, so the numbers are checked alone against scipy.
//!
//! - [`distributions`]: the normal and Student-t distribution functions and quantiles;
//! - [`two_sample`]: the Mann–Whitney U test over rows and Welch's t-test over runs;
//! - [`holm`]: Holm's correction across the metrics a comparison tests;
//! - [`spread`]: mean, standard deviation, Student-t 95 % interval and coefficient of
//!   variation across runs.
//!
//! Every function refuses NaN (and infinities) with an [`InferenceError`] instead of passing
//! it on: a NaN p-value would read as "no difference".

use thiserror::Error;

pub mod distributions;
pub mod holm;
pub mod spread;
pub mod two_sample;

/// Why a statistic could not be computed.
#[derive(Debug, Clone, Copy, PartialEq, Error)]
pub enum InferenceError {
    /// A value is NaN or infinite.
    #[error(
        "value {position} of {sample} is not a finite number ({value}); drop it, or re-read \
         the run that produced it"
    )]
    NotFinite {
        /// Which sample (`a`, `b`, `p-values`).
        sample: &'static str,
        /// Its position, from 0.
        position: usize,
        /// The value.
        value: f64,
    },
    /// A computed argument is NaN.
    #[error("{what} is not a number")]
    NotANumber {
        /// What it is.
        what: &'static str,
    },
    /// A sample has fewer values than the statistic needs.
    #[error("{sample} has {count} values; this needs at least {needed}")]
    TooFewValues {
        /// Which sample.
        sample: &'static str,
        /// How many it has.
        count: usize,
        /// How many it needs.
        needed: usize,
    },
    /// Both samples have no spread at all, so the t statistic is undefined.
    #[error(
        "both samples have no spread (every value equal within each), so a t-test cannot \
         weigh the difference; repeat the runs more times"
    )]
    NoSpread,
    /// A probability outside `[0, 1]`.
    #[error("probability {p} is outside [0, 1]")]
    ProbabilityOutOfRange {
        /// The probability given.
        p: f64,
    },
    /// Degrees of freedom that are not a finite positive number.
    #[error("degrees of freedom {df} are not a finite positive number")]
    BadDegreesOfFreedom {
        /// The degrees of freedom given.
        df: f64,
    },
    /// An iteration that did not settle.
    #[error("{what} did not converge")]
    NoConvergence {
        /// What was being computed.
        what: &'static str,
    },
}

/// `Ok` when every value is finite; else the first NaN or infinity, with its place in `sample`.
pub fn check_finite(sample: &'static str, values: &[f64]) -> Result<(), InferenceError> {
    match values.iter().position(|value| !value.is_finite()) {
        None => Ok(()),
        Some(position) => Err(InferenceError::NotFinite {
            sample,
            position,
            value: values[position],
        }),
    }
}

#[cfg(test)]
mod test_vectors;
#[cfg(test)]
mod tests;
