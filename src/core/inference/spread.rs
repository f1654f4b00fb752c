//! Across runs: how much repeats of the same plan agree. [`AcrossRuns`] holds the mean of a
//! statistic (a run's p50 or p95) over the runs, its standard deviation, the Student-t 95 %
//! interval of the mean and the coefficient of variation.

use crate::core::inference::distributions::student_t_ppf;
use crate::core::inference::two_sample::{mean, sample_variance};
use crate::core::inference::{check_finite, InferenceError};

/// Runs disagree when their standard deviation exceeds this share of their mean.
pub const CV_FLAG: f64 = 0.10;

/// A statistic over repeated runs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AcrossRuns {
    /// How many runs.
    pub runs: usize,
    /// The mean over the runs.
    pub mean: f64,
    /// The sample standard deviation (n − 1); `None` for one run.
    pub sd: Option<f64>,
    /// Half the width of the Student-t 95 % interval of the mean,
    /// `t(0.975, n − 1) · sd / √n`; `None` for one run.
    pub half_width_95: Option<f64>,
    /// `sd / mean`; `None` for one run or a mean that is not positive.
    pub cv: Option<f64>,
}

impl AcrossRuns {
    /// The statistic over `values`, one per run.
    ///
    /// # Errors
    /// [`InferenceError::TooFewValues`] for no runs, [`InferenceError::NotFinite`].
    pub fn of(values: &[f64]) -> Result<Self, InferenceError> {
        check_finite("runs", values)?;
        if values.is_empty() {
            return Err(InferenceError::TooFewValues {
                sample: "runs",
                count: 0,
                needed: 1,
            });
        }
        let runs = values.len();
        let mean = mean(values);
        if runs == 1 {
            return Ok(Self {
                runs,
                mean,
                sd: None,
                half_width_95: None,
                cv: None,
            });
        }
        let sd = sample_variance(values, mean).sqrt();
        let t = student_t_ppf(0.975, (runs - 1) as f64)?;
        Ok(Self {
            runs,
            mean,
            sd: Some(sd),
            half_width_95: Some(t * sd / (runs as f64).sqrt()),
            cv: (mean > 0.0).then(|| sd / mean),
        })
    }

    /// The 95 % interval `[low, high]` of the mean; `None` for one run.
    pub fn interval_95(&self) -> Option<(f64, f64)> {
        self.half_width_95
            .map(|half| (self.mean - half, self.mean + half))
    }

    /// True when the runs disagree: the coefficient of variation exceeds [`CV_FLAG`].
    pub fn disagree(&self) -> bool {
        self.cv.is_some_and(|cv| cv > CV_FLAG)
    }
}
