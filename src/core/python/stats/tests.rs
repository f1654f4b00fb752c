//! Tests of the Python-exact statistics against CPython 3.11 results.

use super::*;
use crate::core::artifact::metrics::write_distribution_family;
use crate::core::artifact::metrics::DISTRIBUTION_FAMILIES;
use serde_json::Map;
use serde_json::Value;

fn bits(values: &[f64]) -> Vec<u64> {
    values.iter().map(|value| value.to_bits()).collect()
}

#[test]
fn empty_input_has_no_statistics() {
    assert_eq!(fmean(&[]), None);
    assert_eq!(sample_stdev(&[]), None);
    assert_eq!(exact_mean(&[]), None);
    assert_eq!(nearest_rank(&[], 50), None);
    assert_eq!(Distribution::of(&[]), None);
    assert_eq!(fsum(&[]).to_bits(), 0.0_f64.to_bits());
}

#[test]
fn one_sample_has_zero_deviation_and_a_point_interval() {
    let summary = Distribution::of(&[1418.298299999151]).expect("one sample");
    assert_eq!(summary.samples, 1);
    assert_eq!(summary.stddev.to_bits(), 0.0_f64.to_bits());
    for (stat, value) in summary.stat_values() {
        if stat != "stddev" {
            assert_eq!(value, 1418.298299999151, "{stat}");
        }
    }
}

#[test]
fn zero_spread_has_zero_deviation() {
    let values = [0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1];
    let summary = Distribution::of(&values).expect("samples");
    assert_eq!(summary.stddev.to_bits(), 0.0_f64.to_bits());
    // fsum is exact, so the mean of identical values is that value.
    assert_eq!(summary.mean, 0.1);
    assert_eq!(summary.mean_ci95_low, 0.1);
    assert_eq!(summary.mean_ci95_high, 0.1);
    assert_eq!(summary.min, 0.1);
    assert_eq!(summary.max, 0.1);
}

#[test]
fn nearest_rank_matches_the_spec_table_for_six_samples() {
    let sorted = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
    let ranks: Vec<f64> = [0, 25, 50, 75, 90, 95, 99, 100, 150]
        .iter()
        .map(|&percent| nearest_rank(&sorted, percent).expect("non-empty"))
        .collect();
    assert_eq!(ranks, [1.0, 2.0, 3.0, 5.0, 6.0, 6.0, 6.0, 6.0, 6.0]);
}

#[test]
fn nearest_rank_uses_integer_ceiling() {
    // 0.07 × 100 would be 7.000000000000001 in floats and pick the 8th element.
    let sorted: Vec<f64> = (1..=100).map(f64::from).collect();
    assert_eq!(nearest_rank(&sorted, 7), Some(7.0));
    assert_eq!(nearest_rank(&sorted[..1], 1), Some(1.0));
}

#[test]
fn empty_family_writes_zero_samples_and_nulls() {
    let mut metrics = Map::new();
    write_distribution_family(&mut metrics, "decode_tok_s", "", &[]);
    assert_eq!(metrics.len(), 13);
    assert_eq!(metrics["decode_tok_s_samples"], Value::from(0));
    for stat in DISTRIBUTION_STATS {
        assert_eq!(metrics[&format!("decode_tok_s_{stat}")], Value::Null);
    }
}

#[test]
fn family_keys_follow_the_spec_quirks() {
    let mut metrics = Map::new();
    write_distribution_family(&mut metrics, "e2e", "_ms", &[2.0, 1.0]);
    assert_eq!(metrics["e2e_samples"], Value::from(2));
    assert_eq!(metrics["e2e_min_ms"], Value::from(1.0));
    assert_eq!(metrics["e2e_max_ms"], Value::from(2.0));
    assert!(metrics.contains_key("e2e_mean_ci95_low_ms"));
    let tpot = DISTRIBUTION_FAMILIES
        .iter()
        .find(|family| family.prefix == "mean_time_per_output_token")
        .expect("family");
    assert_eq!(tpot.stat_key("mean"), "mean_time_per_output_token_mean_ms");
    assert_eq!(tpot.samples_key(), "mean_time_per_output_token_samples");
    let itl = DISTRIBUTION_FAMILIES
        .iter()
        .find(|family| family.prefix == "mean_inter_token_latency_ms")
        .expect("family");
    assert_eq!(itl.stat_key("p50"), "mean_inter_token_latency_ms_p50");
}

#[test]
fn tied_zeros_keep_input_order_like_python_sorted() {
    let summary = Distribution::of(&[0.0, -0.0]).expect("samples");
    assert_eq!(summary.min.to_bits(), 0.0_f64.to_bits());
    assert_eq!(summary.max.to_bits(), (-0.0_f64).to_bits());
}

#[test]
fn fsum_special_values_follow_cpython() {
    assert_eq!(fsum(&[1.0, f64::INFINITY, 2.0]), f64::INFINITY);
    assert_eq!(fsum(&[f64::NEG_INFINITY, 1e308]), f64::NEG_INFINITY);
    assert!(fsum(&[f64::INFINITY, f64::NEG_INFINITY]).is_nan());
    assert!(fsum(&[1.0, f64::NAN]).is_nan());
    // CPython raises OverflowError although the exact sum is finite.
    assert!(fsum(&[1e308, 1e308, -1e308]).is_nan());
    assert!(sample_stdev(&[1.0, f64::INFINITY]).expect("two").is_nan());
    assert_eq!(exact_mean(&[1.0, f64::INFINITY]), Some(f64::INFINITY));
}

#[test]
fn ratio_rounding_handles_ties_and_subnormals() {
    let one = BigUint::from(1_u8);
    // 2^53 + 1 is a tie between 2^53 and 2^53 + 2: even wins.
    let tie = BigUint::from((1_u64 << 53) + 1);
    assert_eq!(ratio_to_f64(false, &tie, &one, 0), 9007199254740992.0);
    let above = BigUint::from((1_u64 << 53) + 3);
    assert_eq!(ratio_to_f64(false, &above, &one, 0), 9007199254740996.0);
    // Smallest subnormal, half of it (tie to even: zero), and three halves (tie: up to 2).
    assert_eq!(ratio_to_f64(false, &one, &one, -1074), 5e-324);
    assert_eq!(ratio_to_f64(false, &one, &one, -1075), 0.0);
    assert_eq!(
        ratio_to_f64(false, &BigUint::from(3_u8), &one, -1075).to_bits(),
        2
    );
    assert_eq!(
        ratio_to_f64(true, &one, &BigUint::from(3_u8), 0),
        -1.0 / 3.0
    );
    assert_eq!(ratio_to_f64(false, &one, &one, 1024), f64::INFINITY);
}

/// `math.fsum` on hard cases, each expected value printed by Python 3.11.7 as
/// `'0x%016x' % struct.unpack('<Q', struct.pack('<d', math.fsum(case)))[0]`.
#[test]
fn fsum_hard_cases_match_cpython() {
    let cases: [(&[f64], u64); 16] = [
        (
            &[1e+100, 1.0, -1e+100, 1e-100, 1e+50, -1.0, -1e+50],
            0x2b2bff2ee48e0530,
        ),
        (&[1e-16, 1.0, 1e+16], 0x4341c37937e08001),
        (&[1.0, 1e+100, 1.0, -1e+100], 0x4000000000000000),
        (
            &[0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1],
            0x3ff0000000000000,
        ),
        (
            &[9007199254740992.0, 1.0, 8.673617379884035e-19],
            0x4340000000000001,
        ),
        (
            &[9007199254740992.0, -0.5, -5.551115123125783e-17],
            0x433fffffffffffff,
        ),
        (
            &[9007199254740992.0, 1.0, -7.888609052210118e-31],
            0x4340000000000000,
        ),
        (
            &[-9007199254740992.0, -1.0, -7.888609052210118e-31],
            0xc340000000000001,
        ),
        (
            &[1.7976931348623157e+308, -1.7976931348623157e+308, 5e-324],
            0x0000000000000001,
        ),
        (&[5e-324, 5e-324, -5e-324], 0x0000000000000001),
        (&[-0.0, -0.0], 0x0000000000000000),
        (&[-0.0, 0.0], 0x0000000000000000),
        (&[0.1, 0.2, 0.3, -0.6], 0x3c80000000000000),
        (&[1e+16, 1.0, 1e-16], 0x4341c37937e08001),
        (
            &[
                8.98846567431158e+307,
                9.9792015476736e+291,
                -8.98846567431158e+307,
            ],
            0x7c90000000000000,
        ),
        (
            &[1.7976931348623157e+308, 9.979201547673598e+291],
            0x7fefffffffffffff,
        ),
    ];
    for (values, expected) in cases {
        assert_eq!(fsum(values).to_bits(), expected, "fsum({values:?})");
    }
}

/// Each row: the data, then the bits of `math.fsum`, `statistics.fmean`, `statistics.stdev`
/// and `statistics.mean` as Python 3.11.7 printed them (same formatting as above).
#[test]
fn small_vectors_match_python() {
    let cases: [(&[f64], [u64; 4]); 13] = [
        (
            &[1.5, 2.5, 2.5, 2.75, 3.25, 4.75],
            [
                0x4031400000000000,
                0x4007000000000000,
                0x3ff14c22515c8b96,
                0x4007000000000000,
            ],
        ),
        (
            &[1.0, 1.0000000000000002],
            [
                0x4000000000000000,
                0x3ff0000000000000,
                0x3ca6a09e667f3bcd,
                0x3ff0000000000000,
            ],
        ),
        (
            &[
                1.0,
                1.0000000000000002,
                1.0000000000000004,
                0.9999999999999999,
            ],
            [
                0x4010000000000001,
                0x3ff0000000000001,
                0x3cb1bd25074f31d3,
                0x3ff0000000000001,
            ],
        ),
        (
            &[1e-300, 2e-300, 3e-300],
            [
                0x01d01297d23ab683,
                0x01b56e1fc2f8f359,
                0x01a56e1fc2f8f35a,
                0x01b56e1fc2f8f359,
            ],
        ),
        (
            &[5e-324, 1e-323, 0.0],
            [
                0x0000000000000003,
                0x0000000000000001,
                0x0000000000000001,
                0x0000000000000001,
            ],
        ),
        (
            &[1e+300, -1e+300, 1e-300, 3.0],
            [
                0x4008000000000000,
                0x3fe8000000000000,
                0x7e3381e2dab5cdc2,
                0x3fe8000000000000,
            ],
        ),
        (
            &[62327.0, 62335.0, 62340.0, 62328.0, 62320.0, 62331.0],
            [
                0x4116d37400000000,
                0x40ee6f4555555555,
                0x401ba5372fcabaa0,
                0x40ee6f4555555555,
            ],
        ),
        (
            &[0.1, 0.2, 0.3],
            [
                0x3fe3333333333333,
                0x3fc9999999999999,
                0x3fb9999999999999,
                0x3fc999999999999a,
            ],
        ),
        (
            &[-1.0, -2.0, -4.0, 8.5],
            [
                0x3ff8000000000000,
                0x3fd8000000000000,
                0x40163bcdbf222e04,
                0x3fd8000000000000,
            ],
        ),
        (
            &[123456789.123, 123456789.124, 123456789.125],
            [
                0x41b613673f5f3b64,
                0x419d6f34547ef9db,
                0x3f50625000000000,
                0x419d6f34547ef9db,
            ],
        ),
        (
            &[9.332636185032189e-302, 1.0715086071862673e+301],
            [
                0x7e70000000000000,
                0x7e60000000000000,
                0x7e66a09e667f3bcd,
                0x7e60000000000000,
            ],
        ),
        (
            &[0.0, 0.0],
            [
                0x0000000000000000,
                0x0000000000000000,
                0x0000000000000000,
                0x0000000000000000,
            ],
        ),
        (
            &[4.0, -0.0],
            [
                0x4010000000000000,
                0x4000000000000000,
                0x4006a09e667f3bcd,
                0x4000000000000000,
            ],
        ),
    ];
    for (values, expected) in cases {
        let actual = [
            fsum(values),
            fmean(values).expect("non-empty"),
            sample_stdev(values).expect("non-empty"),
            exact_mean(values).expect("non-empty"),
        ];
        assert_eq!(bits(&actual), expected, "{values:?}");
    }
}

/// 3,000 pseudo-random data sets (wide exponents, clustered exponents, values a few ulps
/// apart, millisecond-like decimals and integers, subnormals; 10% have 200-2,000 values),
/// drawn from SplitMix64 seeded 20261005. Each yields one line of hex bits: fsum, fmean,
/// stdev (0.0 for one value), mean, and mean ∓ 1.96·stdev/√n. The digest is the SHA-256 of
/// all lines as Python 3.11.7 computed them with the same generator (`gen.py stats 3000`;
/// the script is quoted in `test_vectors`).
#[test]
fn random_data_sets_match_python_digest() {
    use sha2::{Digest, Sha256};
    let mut rng = test_vectors::SplitMix64::new(20261005);
    let mut digest = Sha256::new();
    for _ in 0..3000 {
        let values = test_vectors::random_data_set(&mut rng);
        let summary = Distribution::of(&values).expect("non-empty");
        let line = [
            fsum(&values),
            summary.mean,
            summary.stddev,
            exact_mean(&values).expect("non-empty"),
            summary.mean_ci95_low,
            summary.mean_ci95_high,
        ]
        .iter()
        .map(|value| format!("{:016x}", value.to_bits()))
        .collect::<Vec<_>>()
        .join(" ");
        digest.update(line.as_bytes());
        digest.update(b"\n");
    }
    assert_eq!(
        test_vectors::hex(&digest.finalize()),
        "91c2d382385378a61400aefe4b33975e1f0ad6f70196d2f9bd503e2d78294e63"
    );
}
