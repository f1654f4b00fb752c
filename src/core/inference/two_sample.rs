//! The two-sample tests: Mann–Whitney U over two runs' rows ([`mann_whitney_u`]) and Welch's
//! t-test over two groups' run medians ([`welch_t_test`]), each as scipy computes it so the
//! numbers can be checked against scipy's.

use std::cmp::Ordering;

use crate::core::inference::distributions::{normal_sf, student_t_sf};
use crate::core::inference::{check_finite, InferenceError};

/// The result of [`mann_whitney_u`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MannWhitney {
    /// `U₁`, the U statistic of the first sample (scipy's `statistic`).
    pub u: f64,
    /// The standardised statistic, with continuity correction (`-∞` when every value ties).
    pub z: f64,
    /// The two-sided p-value, in `[0, 1]`.
    pub p_value: f64,
}

/// The Mann–Whitney U test, two-sided, by the normal approximation with the tie correction of
/// the variance and the continuity correction: what
/// `scipy.stats.mannwhitneyu(a, b, method="asymptotic")` returns.
///
/// It asks whether a value drawn from one sample tends to be larger than one drawn from the
/// other; it assumes independent observations, nothing about their distribution.
///
/// # Errors
/// [`InferenceError::TooFewValues`] for an empty sample, [`InferenceError::NotFinite`] for a
/// NaN or infinite value.
pub fn mann_whitney_u(a: &[f64], b: &[f64]) -> Result<MannWhitney, InferenceError> {
    check_finite("a", a)?;
    check_finite("b", b)?;
    for (sample, values) in [("a", a), ("b", b)] {
        if values.is_empty() {
            return Err(InferenceError::TooFewValues {
                sample,
                count: 0,
                needed: 1,
            });
        }
    }
    let (n1, n2) = (a.len() as f64, b.len() as f64);
    let mut pooled: Vec<(f64, bool)> = a
        .iter()
        .map(|&value| (value, true))
        .chain(b.iter().map(|&value| (value, false)))
        .collect();
    pooled.sort_by(|left, right| left.0.partial_cmp(&right.0).unwrap_or(Ordering::Equal));
    let mut rank_sum_a = 0.0;
    let mut tie_term = 0.0;
    let mut start = 0;
    while start < pooled.len() {
        let mut end = start + 1;
        while end < pooled.len() && pooled[end].0 == pooled[start].0 {
            end += 1;
        }
        // Ranks start + 1 ..= end share their average.
        let average_rank = (start + 1 + end) as f64 / 2.0;
        let in_a = pooled[start..end].iter().filter(|value| value.1).count();
        rank_sum_a += average_rank * in_a as f64;
        let tied = (end - start) as f64;
        tie_term += tied * tied * tied - tied;
        start = end;
    }
    let u1 = rank_sum_a - n1 * (n1 + 1.0) / 2.0;
    let u2 = n1 * n2 - u1;
    let u = u1.max(u2);
    let n = n1 + n2;
    let mean = n1 * n2 / 2.0;
    let variance = n1 * n2 / 12.0 * ((n + 1.0) - tie_term / (n * (n - 1.0)));
    let z = (u - mean - 0.5) / variance.max(0.0).sqrt();
    let p_value = if z.is_nan() {
        1.0
    } else {
        (2.0 * normal_sf(z)).clamp(0.0, 1.0)
    };
    Ok(MannWhitney { u: u1, z, p_value })
}

/// The result of [`welch_t_test`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Welch {
    /// `t = (mean(a) - mean(b)) / √(s²ₐ/nₐ + s²_b/n_b)`.
    pub t: f64,
    /// The Welch–Satterthwaite degrees of freedom (fractional).
    pub df: f64,
    /// The two-sided p-value.
    pub p_value: f64,
}

/// Welch's t-test (unequal variances), two-sided: what
/// `scipy.stats.ttest_ind(a, b, equal_var=False)` returns.
///
/// It asks whether the two samples' means differ; it assumes independent values, each sample
/// from a roughly normal distribution (run medians are, more than single requests are).
///
/// # Errors
/// [`InferenceError::TooFewValues`] for a sample of fewer than two values (no spread to
/// measure), [`InferenceError::NoSpread`] when neither sample varies, and
/// [`InferenceError::NotFinite`].
pub fn welch_t_test(a: &[f64], b: &[f64]) -> Result<Welch, InferenceError> {
    check_finite("a", a)?;
    check_finite("b", b)?;
    for (sample, values) in [("a", a), ("b", b)] {
        if values.len() < 2 {
            return Err(InferenceError::TooFewValues {
                sample,
                count: values.len(),
                needed: 2,
            });
        }
    }
    let (n1, n2) = (a.len() as f64, b.len() as f64);
    let (mean1, mean2) = (mean(a), mean(b));
    let share1 = sample_variance(a, mean1) / n1;
    let share2 = sample_variance(b, mean2) / n2;
    let spread = share1 + share2;
    if spread == 0.0 {
        return Err(InferenceError::NoSpread);
    }
    let df = spread * spread / (share1 * share1 / (n1 - 1.0) + share2 * share2 / (n2 - 1.0));
    let t = (mean1 - mean2) / spread.sqrt();
    let p_value = (2.0 * student_t_sf(t.abs(), df)?).clamp(0.0, 1.0);
    Ok(Welch { t, df, p_value })
}

/// The arithmetic mean of a non-empty slice.
pub(crate) fn mean(values: &[f64]) -> f64 {
    values.iter().sum::<f64>() / values.len() as f64
}

/// The sample variance (n − 1 in the denominator) around `mean`, by two passes.
pub(crate) fn sample_variance(values: &[f64], mean: f64) -> f64 {
    let squares: f64 = values.iter().map(|value| (value - mean).powi(2)).sum();
    squares / (values.len() as f64 - 1.0)
}
