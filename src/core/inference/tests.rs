//! The inference stage against scipy's values (`test_vectors.rs`, printed by
//! `scripts/inference-vectors.py`), and the refusals.

use super::distributions::{
    normal_cdf, normal_ppf, normal_sf, student_t_cdf, student_t_ppf, student_t_sf,
};
use super::holm::holm_adjusted;
use super::spread::AcrossRuns;
use super::test_vectors::{
    ACROSS_RUNS, HOLM, LARGE_CASES, NORMAL_CDF, NORMAL_PPF, SMALL_CASES, STUDENT_T_CDF,
    STUDENT_T_PPF,
};
use super::two_sample::{mann_whitney_u, welch_t_test};
use super::InferenceError;

/// True when `actual` is `expected` within `relative` (or both are zero or below 1e-300).
fn close(actual: f64, expected: f64, relative: f64) -> bool {
    if expected == actual {
        return true;
    }
    if expected.abs() < 1e-300 {
        return actual.abs() < 1e-300;
    }
    ((actual - expected) / expected).abs() <= relative
}

#[track_caller]
fn assert_close(actual: f64, expected: f64, relative: f64, what: &str) {
    assert!(
        close(actual, expected, relative),
        "{what}: {actual:e} against scipy's {expected:e} (relative {:e})",
        ((actual - expected) / expected).abs()
    );
}

/// The samples the script builds with its `generated`.
fn generated(
    (count, multiplier, modulus, scale, offset): (usize, usize, usize, f64, f64),
) -> Vec<f64> {
    (0..count)
        .map(|i| ((i * multiplier) % modulus) as f64 * scale + offset)
        .collect()
}

#[test]
fn the_normal_distribution_matches_scipy_in_both_tails() {
    for &(x, cdf, sf) in NORMAL_CDF {
        assert_close(normal_cdf(x), cdf, 1e-13, &format!("norm.cdf({x})"));
        assert_close(normal_sf(x), sf, 1e-13, &format!("norm.sf({x})"));
    }
}

#[test]
fn the_normal_quantile_matches_scipy() {
    for &(p, x) in NORMAL_PPF {
        let ours = normal_ppf(p).expect("a probability");
        assert_close(ours, x, 1e-13, &format!("norm.ppf({p})"));
    }
    assert_eq!(normal_ppf(0.0), Ok(f64::NEG_INFINITY));
    assert_eq!(normal_ppf(1.0), Ok(f64::INFINITY));
}

#[test]
fn the_student_t_distribution_matches_scipy_with_fractional_degrees_of_freedom() {
    for &(t, df, cdf, sf) in STUDENT_T_CDF {
        // ln Γ of large arguments rounds in its last digits; df = 1000 is far beyond Welch's.
        let tolerance = if df > 200.0 { 1e-11 } else { 1e-12 };
        let what = format!("t(df={df}) at {t}");
        assert_close(
            student_t_cdf(t, df).expect("cdf"),
            cdf,
            tolerance,
            &format!("cdf {what}"),
        );
        assert_close(
            student_t_sf(t, df).expect("sf"),
            sf,
            tolerance,
            &format!("sf {what}"),
        );
    }
}

#[test]
fn the_student_t_quantile_matches_scipy() {
    for &(p, df, t) in STUDENT_T_PPF {
        let ours = student_t_ppf(p, df).expect("a quantile");
        assert_close(ours, t, 1e-12, &format!("t.ppf({p}, {df})"));
    }
}

#[test]
fn mann_whitney_matches_scipy_on_ties_identical_and_tiny_samples() {
    for case in SMALL_CASES {
        let ours = mann_whitney_u(case.a, case.b).expect("finite samples");
        assert_eq!(ours.u, case.mann_whitney.0, "{}: U", case.name);
        assert_close(
            ours.p_value,
            case.mann_whitney.1,
            1e-12,
            &format!("{}: p", case.name),
        );
    }
}

#[test]
fn mann_whitney_matches_scipy_on_thousands_of_tied_samples() {
    for case in LARGE_CASES {
        let ours = mann_whitney_u(&generated(case.a), &generated(case.b)).expect("finite");
        assert_eq!(ours.u, case.mann_whitney.0, "{}: U", case.name);
        assert_close(
            ours.p_value,
            case.mann_whitney.1,
            1e-11,
            &format!("{}: p", case.name),
        );
    }
}

#[test]
fn welch_matches_scipy_including_unequal_sizes() {
    let mut checked = 0;
    for case in SMALL_CASES {
        let (t, p, df) = case.welch;
        match welch_t_test(case.a, case.b) {
            Ok(ours) => {
                assert_close(ours.t, t, 1e-12, &format!("{}: t", case.name));
                assert_close(ours.df, df, 1e-12, &format!("{}: df", case.name));
                assert_close(ours.p_value, p, 1e-12, &format!("{}: p", case.name));
                checked += 1;
            }
            // scipy gives NaN where a sample has one value or neither has spread.
            Err(InferenceError::TooFewValues { .. } | InferenceError::NoSpread) => {
                assert!(p.is_nan(), "{}: we refused where scipy gave {p}", case.name);
            }
            Err(error) => panic!("{}: {error}", case.name),
        }
    }
    assert!(checked >= 6, "only {checked} cases compared");
    for case in LARGE_CASES {
        let (t, p, df) = case.welch;
        let ours = welch_t_test(&generated(case.a), &generated(case.b)).expect("finite");
        assert_close(ours.t, t, 1e-11, &format!("{}: t", case.name));
        assert_close(ours.df, df, 1e-11, &format!("{}: df", case.name));
        assert_close(ours.p_value, p, 1e-10, &format!("{}: p", case.name));
    }
}

#[test]
fn nan_and_infinities_are_refused_with_their_place() {
    let error = mann_whitney_u(&[1.0, f64::NAN], &[2.0]).expect_err("NaN");
    assert!(matches!(
        error,
        InferenceError::NotFinite {
            sample: "a",
            position: 1,
            ..
        }
    ));
    assert!(error.to_string().contains("value 1 of a"), "{error}");
    assert!(matches!(
        welch_t_test(&[1.0, 2.0], &[3.0, f64::INFINITY]),
        Err(InferenceError::NotFinite { sample: "b", .. })
    ));
    assert!(AcrossRuns::of(&[1.0, f64::NAN]).is_err());
    assert!(holm_adjusted(&[0.1, f64::NAN]).is_err());
    assert!(normal_ppf(f64::NAN).is_err());
    assert!(student_t_sf(f64::NAN, 3.0).is_err());
    assert!(student_t_sf(1.0, f64::NAN).is_err());
    assert!(mann_whitney_u(&[], &[1.0]).is_err());
}

#[test]
fn across_runs_matches_scipy_and_flags_disagreement() {
    for &(sample, mean, sd, half) in ACROSS_RUNS {
        let ours = AcrossRuns::of(sample).expect("finite runs");
        assert_eq!(ours.runs, sample.len());
        assert_close(ours.mean, mean, 1e-15, "mean");
        assert_close(ours.sd.expect("two or more"), sd, 1e-13, "sd");
        assert_close(ours.half_width_95.expect("two or more"), half, 1e-12, "ci");
    }
    // The campaign of issue #36: the default agrees with itself, the tuned one does not.
    let default = AcrossRuns::of(&[1049.0, 1065.0, 1057.0]).expect("runs");
    let tuned = AcrossRuns::of(&[929.0, 1462.0, 1336.0]).expect("runs");
    assert!(!default.disagree());
    assert!(tuned.disagree(), "{tuned:?}");
    let one = AcrossRuns::of(&[1057.0]).expect("one run");
    assert_eq!((one.sd, one.half_width_95, one.cv), (None, None, None));
    assert!(!one.disagree());
    let flat = AcrossRuns::of(&[5.0, 5.0]).expect("no spread");
    assert_eq!(flat.interval_95(), Some((5.0, 5.0)));
}

#[test]
fn holm_matches_the_step_down_values_and_keeps_the_order_given() {
    for &(p_values, adjusted) in HOLM {
        let ours = holm_adjusted(p_values).expect("probabilities");
        assert_eq!(ours.len(), adjusted.len());
        for (ours, theirs) in ours.iter().zip(adjusted) {
            assert_close(*ours, *theirs, 1e-15, "adjusted p");
        }
    }
    // The smallest is multiplied by m, the next by m − 1, never below the one before.
    assert_eq!(
        holm_adjusted(&[0.04, 0.01, 0.03]).expect("p"),
        [0.06, 0.03, 0.06]
    );
    assert_eq!(holm_adjusted(&[]).expect("none"), Vec::<f64>::new());
    assert!(holm_adjusted(&[1.5]).is_err());
}
