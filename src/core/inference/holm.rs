//! Holm's correction: a comparison tests several metrics at once, and at α = 0.05 one of four
//! unrelated metrics would look "significant" by chance one time in six. Holm's step-down
//! method keeps the chance of any false claim among them at α, without assuming the metrics
//! independent (TTFT and E2E are not).

use crate::core::inference::{check_finite, InferenceError};

/// Holm-adjusted p-values, in the order given: the `k`-th smallest p-value is multiplied by
/// `m − k + 1` (`m` the number of tests, `k` from 1), capped at 1, and made non-decreasing in
/// that order (as statsmodels' `multipletests(method="holm")`). A test is significant at α when
/// its adjusted p-value is at most α. Equal p-values keep their order.
///
/// # Errors
/// [`InferenceError::NotFinite`] for a NaN p-value, [`InferenceError::ProbabilityOutOfRange`]
/// for one outside `[0, 1]`.
pub fn holm_adjusted(p_values: &[f64]) -> Result<Vec<f64>, InferenceError> {
    check_finite("p-values", p_values)?;
    if let Some(&p) = p_values.iter().find(|p| !(0.0..=1.0).contains(*p)) {
        return Err(InferenceError::ProbabilityOutOfRange { p });
    }
    let m = p_values.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&left, &right| p_values[left].total_cmp(&p_values[right]));
    let mut adjusted = vec![0.0; m];
    let mut running = 0.0_f64;
    for (rank, &index) in order.iter().enumerate() {
        running = running.max(((m - rank) as f64 * p_values[index]).min(1.0));
        adjusted[index] = running;
    }
    Ok(adjusted)
}
