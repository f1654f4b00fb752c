//! Request-level statistics that equal the reference producer's Python 3.11.7 results bit for bit.
//!
//! Owns `math.fsum`, `statistics.fmean`, `statistics.stdev`, `statistics.mean`, the
//! nearest-rank percentile, the 13-key [`Distribution`] summary, and the table of the 11
//! distribution families of `metrics` (ARTIFACT.md §7.1) that the artifact builder and the
//! validator share.
//!
//! Bit-exactness matters because a reader recomputes the metrics from `request_timings` and
//! compares them with `==` (ARTIFACT.md §11.3, §12). Python's `stdev` and `mean` work on exact
//! fractions; so do the functions here, using the fact that every finite `f64` is an integer
//! times a power of two.

use num_bigint::{BigInt, BigUint, Sign};
use num_integer::Integer;
use num_traits::{ToPrimitive, Zero};
use serde_json::{Map, Value};
use std::cmp::Ordering;

/// One distribution family of `metrics`: which row field feeds it and how its keys are spelled.
///
/// Keys are `{prefix}_samples` (never suffixed) and `{prefix}_{stat}{unit_suffix}` for every
/// stat in [`DISTRIBUTION_STATS`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DistributionFamily {
    /// Key prefix in `metrics`, e.g. `ttft` or `mean_inter_token_latency_ms`.
    pub prefix: &'static str,
    /// The `request_timings[]` field whose non-null values are summarized.
    pub row_field: &'static str,
    /// Appended after the stat name (`_ms` or empty), e.g. `ttft_p99_ms`.
    pub unit_suffix: &'static str,
}

impl DistributionFamily {
    /// The integer sample-count key, `{prefix}_samples`.
    pub fn samples_key(&self) -> String {
        format!("{}_samples", self.prefix)
    }

    /// The key of one statistic, `{prefix}_{stat}{unit_suffix}` (e.g. `e2e_mean_ci95_low_ms`).
    pub fn stat_key(&self, stat: &str) -> String {
        format!("{}_{}{}", self.prefix, stat, self.unit_suffix)
    }
}

/// The 11 distribution families of ARTIFACT.md §7.1, in the spec's order.
///
/// `tpot` and `mean_time_per_output_token` both read `mean_time_per_output_token_ms`, and
/// `completion_tokens` reads `output_tokens`; those pairings are the producer's, not typos.
pub const DISTRIBUTION_FAMILIES: [DistributionFamily; 11] = [
    DistributionFamily {
        prefix: "time_to_first_output",
        row_field: "time_to_first_output_ms",
        unit_suffix: "_ms",
    },
    DistributionFamily {
        prefix: "ttft",
        row_field: "ttft_ms",
        unit_suffix: "_ms",
    },
    DistributionFamily {
        prefix: "generation",
        row_field: "generation_ms",
        unit_suffix: "_ms",
    },
    DistributionFamily {
        prefix: "e2e",
        row_field: "e2e_ms",
        unit_suffix: "_ms",
    },
    DistributionFamily {
        prefix: "effective_prefill_tok_s",
        row_field: "effective_prefill_tok_s",
        unit_suffix: "",
    },
    DistributionFamily {
        prefix: "decode_tok_s",
        row_field: "decode_tok_s",
        unit_suffix: "",
    },
    DistributionFamily {
        prefix: "mean_inter_token_latency_ms",
        row_field: "mean_inter_token_latency_ms",
        unit_suffix: "",
    },
    DistributionFamily {
        prefix: "mean_time_per_output_token",
        row_field: "mean_time_per_output_token_ms",
        unit_suffix: "_ms",
    },
    DistributionFamily {
        prefix: "tpot",
        row_field: "mean_time_per_output_token_ms",
        unit_suffix: "_ms",
    },
    DistributionFamily {
        prefix: "prompt_tokens",
        row_field: "prompt_tokens",
        unit_suffix: "",
    },
    DistributionFamily {
        prefix: "completion_tokens",
        row_field: "output_tokens",
        unit_suffix: "",
    },
];

/// The 12 float statistics of a family, in the order [`Distribution::stat_values`] yields them.
pub const DISTRIBUTION_STATS: [&str; 12] = [
    "mean",
    "stddev",
    "mean_ci95_low",
    "mean_ci95_high",
    "min",
    "p25",
    "p50",
    "p75",
    "p90",
    "p95",
    "p99",
    "max",
];

/// The normal-approximation 95% quantile the producer uses for the mean's interval (not a t value).
const CI95_Z: f64 = 1.96;

/// The 13-key summary of one family (ARTIFACT.md §7.1). Every statistic is an `f64`, token
/// counts included, because the producer multiplies each by `1.0`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Distribution {
    /// Number of values summarized (always ≥ 1; an empty family has no `Distribution`).
    pub samples: usize,
    /// `statistics.fmean`: `fsum(values) / n`.
    pub mean: f64,
    /// Sample (n − 1) standard deviation as `statistics.stdev` computes it; `0.0` when n = 1.
    pub stddev: f64,
    /// `mean − 1.96 × stddev / √n`; may be negative.
    pub mean_ci95_low: f64,
    /// `mean + 1.96 × stddev / √n`.
    pub mean_ci95_high: f64,
    /// Smallest value.
    pub min: f64,
    /// Nearest-rank 25th percentile.
    pub p25: f64,
    /// Nearest-rank median.
    pub p50: f64,
    /// Nearest-rank 75th percentile.
    pub p75: f64,
    /// Nearest-rank 90th percentile.
    pub p90: f64,
    /// Nearest-rank 95th percentile.
    pub p95: f64,
    /// Nearest-rank 99th percentile (descriptive only below 100 samples).
    pub p99: f64,
    /// Largest value.
    pub max: f64,
}

impl Distribution {
    /// Summarizes `values`, or `None` when there are none (the artifact then writes nulls).
    ///
    /// Values should be finite; a non-finite value (or an overflowing sum) yields non-finite
    /// statistics, which the JSON writer refuses, just as the Python producer would fail.
    pub fn of(values: &[f64]) -> Option<Self> {
        let samples = values.len();
        let mean = fmean(values)?;
        let stddev = sample_stdev(values)?;
        // Operation order matters for the last bit: the producer computes
        // `1.96 * stddev / math.sqrt(n)` left to right, which the reference artifact confirms.
        let half_width = CI95_Z * stddev / (samples as f64).sqrt();
        let sorted = sorted_like_python(values);
        let rank = |percent: u32| nearest_rank(&sorted, percent);
        Some(Self {
            samples,
            mean,
            stddev,
            mean_ci95_low: mean - half_width,
            mean_ci95_high: mean + half_width,
            min: *sorted.first()?,
            p25: rank(25)?,
            p50: rank(50)?,
            p75: rank(75)?,
            p90: rank(90)?,
            p95: rank(95)?,
            p99: rank(99)?,
            max: *sorted.last()?,
        })
    }

    /// The 12 float statistics paired with their names, in [`DISTRIBUTION_STATS`] order.
    pub fn stat_values(&self) -> [(&'static str, f64); 12] {
        let values = [
            self.mean,
            self.stddev,
            self.mean_ci95_low,
            self.mean_ci95_high,
            self.min,
            self.p25,
            self.p50,
            self.p75,
            self.p90,
            self.p95,
            self.p99,
            self.max,
        ];
        std::array::from_fn(|index| (DISTRIBUTION_STATS[index], values[index]))
    }
}

/// Writes the 13 keys of one family into `metrics`: `{prefix}_samples` and
/// `{prefix}_{stat}{unit_suffix}` for each stat. With no values, samples is `0` and every
/// other key is `null` (ARTIFACT.md §7.1).
///
/// A non-finite statistic cannot be held by `serde_json` and would be written as `null`; it only
/// arises from non-finite input or sums beyond `f64::MAX`, which timing rows never contain.
pub fn write_distribution_family(
    metrics: &mut Map<String, Value>,
    prefix: &str,
    unit_suffix: &str,
    values: &[f64],
) {
    let family_key = |stat: &str| format!("{prefix}_{stat}{unit_suffix}");
    let distribution = Distribution::of(values);
    let samples = distribution.map_or(0, |summary| summary.samples);
    metrics.insert(format!("{prefix}_samples"), Value::from(samples));
    match distribution {
        Some(summary) => {
            for (stat, value) in summary.stat_values() {
                metrics.insert(family_key(stat), Value::from(value));
            }
        }
        None => {
            for stat in DISTRIBUTION_STATS {
                metrics.insert(family_key(stat), Value::Null);
            }
        }
    }
}

/// CPython's `math.fsum`: the correctly rounded sum, via Shewchuk's exact partials and CPython's
/// final half-even correction across partials.
///
/// Where CPython raises (`-inf + inf in fsum`, `intermediate overflow in fsum`) this returns
/// NaN so that the error surfaces when the result is serialized. Otherwise infinities and NaN
/// propagate as in CPython. The empty sum is `0.0`.
pub fn fsum(values: &[f64]) -> f64 {
    let mut partials: Vec<f64> = Vec::new();
    let mut special_sum = 0.0_f64;
    let mut inf_sum = 0.0_f64;
    for &value in values {
        let mut x = value;
        let mut kept = 0;
        for j in 0..partials.len() {
            let mut y = partials[j];
            if x.abs() < y.abs() {
                std::mem::swap(&mut x, &mut y);
            }
            let hi = x + y;
            let lo = y - (hi - x);
            if lo != 0.0 {
                partials[kept] = lo;
                kept += 1;
            }
            x = hi;
        }
        partials.truncate(kept);
        if x != 0.0 {
            if !x.is_finite() {
                if value.is_finite() {
                    // CPython: OverflowError("intermediate overflow in fsum").
                    return f64::NAN;
                }
                if value.is_infinite() {
                    inf_sum += value;
                }
                special_sum += value;
                partials.clear();
            } else {
                partials.push(x);
            }
        }
    }
    if special_sum != 0.0 {
        // A NaN inf_sum means +inf and -inf met: CPython's ValueError. NaN either way.
        return if inf_sum.is_nan() {
            f64::NAN
        } else {
            special_sum
        };
    }
    let mut remaining = partials.len();
    if remaining == 0 {
        return 0.0;
    }
    remaining -= 1;
    let mut hi = partials[remaining];
    let mut lo = 0.0_f64;
    // Add from the top while the additions stay exact.
    while remaining > 0 {
        let x = hi;
        remaining -= 1;
        let y = partials[remaining];
        hi = x + y;
        lo = y - (hi - x);
        if lo != 0.0 {
            break;
        }
    }
    // Half-even rounding must see the partials below the break: if they push the same way as
    // `lo`, the tie is not a tie, so round away (CPython's `sum([1e-16, 1, 1e16])` fix).
    if remaining > 0
        && ((lo < 0.0 && partials[remaining - 1] < 0.0)
            || (lo > 0.0 && partials[remaining - 1] > 0.0))
    {
        let y = lo * 2.0;
        let x = hi + y;
        if y == x - hi {
            hi = x;
        }
    }
    hi
}

/// Python's `statistics.fmean`: `fsum(values) / n`, or `None` for no values.
pub fn fmean(values: &[f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    Some(fsum(values) / values.len() as f64)
}

/// Python 3.11.7's `statistics.stdev` (sample, n − 1), with the producer's rule that one
/// sample has deviation `0.0`. `None` for no values.
///
/// Like Python, the variance is an exact fraction (`(n·Σx² − (Σx)²) / (n(n−1))`, reduced) and
/// its square root is correctly rounded through `_float_sqrt_of_frac`'s round-to-odd integer
/// square root. Non-finite input gives NaN (Python raises).
pub fn sample_stdev(values: &[f64]) -> Option<f64> {
    match values.len() {
        0 => return None,
        1 => return Some(0.0),
        _ => {}
    }
    if values.iter().any(|value| !value.is_finite()) {
        return Some(f64::NAN);
    }
    let scaled = ScaledValues::of(values);
    let count = BigInt::from(values.len());
    let sum: BigInt = scaled.integers.iter().sum();
    let sum_of_squares: BigInt = scaled.integers.iter().map(|x| x * x).sum();
    // Never negative: n·Σx² − (Σx)² = n·Σ(x − mean)², exactly.
    let spread = (&count * sum_of_squares - &sum * &sum).magnitude().clone();
    let pairs = BigUint::from(values.len()) * BigUint::from(values.len() - 1);
    // The variance is spread × 2^(2·exponent) / pairs; Python's Fraction keeps it reduced,
    // and `_float_sqrt_of_frac` depends on the bit lengths of the reduced pair.
    let twice_exponent = 2 * i64::from(scaled.exponent);
    let (numerator, denominator) = if twice_exponent >= 0 {
        (spread << twice_exponent as u64, pairs)
    } else {
        (spread, pairs << twice_exponent.unsigned_abs())
    };
    let divisor = numerator.gcd(&denominator);
    if divisor.is_zero() {
        return Some(0.0);
    }
    Some(float_sqrt_of_frac(
        &(numerator / &divisor),
        &(denominator / &divisor),
    ))
}

/// Python's `statistics.mean` on floats: the exact fraction sum divided by n, correctly rounded
/// back to a float. `None` for no values. Non-finite values are summed in float arithmetic and
/// divided by n, as Python does.
pub fn exact_mean(values: &[f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    if values.iter().any(|value| !value.is_finite()) {
        // Python's `_sum` keeps non-finite values in one float partial, starting from int 0.
        let special: f64 = values.iter().filter(|value| !value.is_finite()).sum();
        return Some(special / values.len() as f64);
    }
    let scaled = ScaledValues::of(values);
    let total: BigInt = scaled.integers.iter().sum();
    Some(ratio_to_f64(
        total.sign() == Sign::Minus,
        total.magnitude(),
        &BigUint::from(values.len()),
        i64::from(scaled.exponent),
    ))
}

/// The nearest-rank percentile of already sorted values: element
/// `max(0, ceil(percent·n/100) − 1)`, computed in integers. `None` for no values; percents above
/// 100 give the largest value.
pub fn nearest_rank(sorted: &[f64], percent: u32) -> Option<f64> {
    let count = sorted.len() as u128;
    let rank = (u128::from(percent) * count)
        .div_ceil(100)
        .saturating_sub(1);
    let index = usize::try_from(rank).unwrap_or(usize::MAX);
    sorted.get(index.min(sorted.len().checked_sub(1)?)).copied()
}

/// Sorts a copy the way Python's `sorted` does for comparable floats: stably, with `-0.0` and
/// `0.0` equal, so the bit pattern of tied zeros follows the input order.
fn sorted_like_python(values: &[f64]) -> Vec<f64> {
    let mut sorted = values.to_vec();
    sorted.sort_by(|a, b| a.partial_cmp(b).unwrap_or(Ordering::Equal));
    sorted
}

/// Finite floats as integers sharing one binary exponent: `value[i] = integers[i] × 2^exponent`.
struct ScaledValues {
    integers: Vec<BigInt>,
    exponent: i32,
}

impl ScaledValues {
    /// Scales finite values exactly; the exponent is the smallest one among them.
    fn of(values: &[f64]) -> Self {
        let parts: Vec<(bool, u64, i32)> = values.iter().map(|&value| decompose(value)).collect();
        let exponent = parts
            .iter()
            .filter(|(_, mantissa, _)| *mantissa != 0)
            .map(|&(_, _, exponent)| exponent)
            .min()
            .unwrap_or(0);
        let integers = parts
            .into_iter()
            .map(|(negative, mantissa, own_exponent)| {
                let shift = if mantissa == 0 {
                    0
                } else {
                    (own_exponent - exponent) as u32
                };
                let magnitude = BigInt::from(mantissa) << shift;
                if negative {
                    -magnitude
                } else {
                    magnitude
                }
            })
            .collect();
        Self { integers, exponent }
    }
}

/// Splits a finite float into (negative, mantissa, exponent) with `|x| = mantissa × 2^exponent`.
fn decompose(value: f64) -> (bool, u64, i32) {
    let bits = value.to_bits();
    let negative = bits >> 63 == 1;
    let biased_exponent = ((bits >> 52) & 0x7ff) as i32;
    let fraction = bits & ((1_u64 << 52) - 1);
    if biased_exponent == 0 {
        (negative, fraction, -1074)
    } else {
        (negative, fraction | (1_u64 << 52), biased_exponent - 1075)
    }
}

/// Python 3.11's `statistics._float_sqrt_of_frac(n, m)`: √(n/m) correctly rounded, from an
/// integer square root with at least 109 significant bits rounded to odd.
fn float_sqrt_of_frac(numerator: &BigUint, denominator: &BigUint) -> f64 {
    const SQRT_BIT_WIDTH: i64 = 2 * 53 + 3;
    let bit_gap = numerator.bits() as i64 - denominator.bits() as i64 - SQRT_BIT_WIDTH;
    let half_gap = bit_gap.div_euclid(2);
    let root_to_odd = if half_gap >= 0 {
        integer_sqrt_of_frac_rto(numerator, &(denominator << (2 * half_gap) as u64))
    } else {
        integer_sqrt_of_frac_rto(&(numerator << (2 * half_gap).unsigned_abs()), denominator)
    };
    ratio_to_f64(false, &root_to_odd, &BigUint::from(1_u8), half_gap)
}

/// Python's `_integer_sqrt_of_frac_rto`: `isqrt(n // m)` with its low bit set when inexact.
fn integer_sqrt_of_frac_rto(numerator: &BigUint, denominator: &BigUint) -> BigUint {
    let root = (numerator / denominator).sqrt();
    let exact = &root * &root * denominator == *numerator;
    if exact {
        root
    } else {
        root | BigUint::from(1_u8)
    }
}

/// `±numerator / denominator × 2^exponent`, correctly rounded to the nearest float, ties to
/// even, with gradual underflow: what Python's `int / int` true division returns. Results too
/// large for a float become infinite (Python raises OverflowError). `denominator` must be
/// non-zero.
fn ratio_to_f64(negative: bool, numerator: &BigUint, denominator: &BigUint, exponent: i64) -> f64 {
    if numerator.is_zero() || denominator.is_zero() {
        return 0.0;
    }
    // The quotient lies in [2^(top − 1), 2^(top + 1)); take at least 56 bits of it at
    // `lowest_bit`, keep the remainder as a sticky bit, then round once.
    let top = numerator.bits() as i64 - denominator.bits() as i64 + exponent;
    let lowest_bit = top - 56;
    let shift = exponent - lowest_bit;
    let (quotient, remainder) = if shift >= 0 {
        (numerator << shift as u64).div_rem(denominator)
    } else {
        numerator.div_rem(&(denominator << shift.unsigned_abs()))
    };
    let sticky = !remainder.is_zero();
    let Some(quotient) = quotient.to_u64() else {
        return f64::NAN; // unreachable: the quotient has at most 57 bits
    };
    let quotient_bits = i64::from(64 - quotient.leading_zeros());
    let result_lowest_bit = (quotient_bits + lowest_bit - 53).max(-1074);
    let drop = result_lowest_bit - lowest_bit; // ≥ 3, see above
    let mantissa = if drop >= 64 {
        // Far below the smallest subnormal: less than half of it, so zero.
        0
    } else {
        let kept = quotient >> drop;
        let dropped = quotient & ((1_u64 << drop) - 1);
        let half = 1_u64 << (drop - 1);
        let round_up = dropped > half || (dropped == half && (sticky || kept & 1 == 1));
        kept + u64::from(round_up)
    };
    let magnitude = scale_by_power_of_two(mantissa as f64, result_lowest_bit);
    if negative {
        -magnitude
    } else {
        magnitude
    }
}

/// `value × 2^exponent` for an integer `value` ≤ 2^53 whose product is representable (or
/// overflows to infinity); multiplying in steps keeps every step exact.
fn scale_by_power_of_two(mut value: f64, mut exponent: i64) -> f64 {
    const STEP: i64 = 1000;
    while exponent > STEP {
        value *= power_of_two(STEP);
        exponent -= STEP;
    }
    while exponent < -STEP {
        value *= power_of_two(-STEP);
        exponent += STEP;
    }
    value * power_of_two(exponent)
}

/// 2^exponent for an exponent in the normal range [-1022, 1023].
fn power_of_two(exponent: i64) -> f64 {
    f64::from_bits(((exponent + 1023) as u64) << 52)
}

#[cfg(test)]
mod tests {
    use super::*;

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
}

/// Deterministic inputs shared by the stats and pyjson tests. A Python 3.11.7 script draws the
/// same inputs from the same SplitMix64 stream and digests its results, so the tests compare one
/// SHA-256 each and never need Python at run time.
#[cfg(test)]
pub(crate) mod test_vectors {
    // The Python side, verbatim (run as `python3 gen.py stats 3000`, `gen.py repr 200000`,
    // `gen.py strings 20000`; each prints the digest a test pins):
    //
    // import math, statistics, struct, hashlib, sys, json
    // M = (1 << 64) - 1
    // class SplitMix64:
    //     def __init__(self, seed): self.state = seed & M
    //     def next(self):
    //         self.state = (self.state + 0x9E3779B97F4A7C15) & M
    //         z = self.state
    //         z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M
    //         z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M
    //         return z ^ (z >> 31)
    // def fb(b): return struct.unpack('<d', struct.pack('<Q', b))[0]
    // def bits(x): return struct.unpack('<Q', struct.pack('<d', x))[0]
    // def compose(sign, biased, mant): return fb((sign << 63) | (biased << 52) | (mant & ((1 << 52) - 1)))
    //
    // def dataset(r):
    //     kind = r.next() % 5
    //     n = 200 + r.next() % 1800 if r.next() % 10 == 0 else 1 + r.next() % 40
    //     out = []
    //     if kind == 0:
    //         for _ in range(n): out.append(compose(r.next() & 1, 1 + r.next() % 1999, r.next()))
    //     elif kind == 1:
    //         c = 1023 + r.next() % 81 - 40
    //         for _ in range(n): out.append(compose(1 if r.next() % 8 == 0 else 0, c + r.next() % 3 - 1, r.next()))
    //     elif kind == 2:
    //         base = (1023 + r.next() % 61 - 30) << 52 | (r.next() & ((1 << 52) - 1))
    //         for _ in range(n): out.append(fb(base + r.next() % 4))
    //     elif kind == 3:
    //         for _ in range(n):
    //             if r.next() % 2 == 0: out.append(float(r.next() % 1000000000) / 1000000.0)
    //             else: out.append(float(r.next() % 100000))
    //     else:
    //         for _ in range(n): out.append(compose(r.next() & 1, r.next() % 3, r.next()))
    //     return out
    //
    // def stats_line(v):
    //     n = len(v)
    //     fs = math.fsum(v); fm = statistics.fmean(v)
    //     sd = statistics.stdev(v) if n > 1 else 0.0
    //     mn = statistics.mean(v)
    //     half = 1.96 * sd / math.sqrt(n)
    //     return ' '.join('%016x' % bits(x) for x in (fs, fm, sd, mn, fm - half, fm + half))
    //
    // def repr_double(r):
    //     kind = r.next() % 5
    //     if kind == 0:
    //         while True:
    //             x = fb(r.next())
    //             if math.isfinite(x): return x
    //     if kind == 1: return compose(r.next() & 1, 1023 - 100 + r.next() % 300, r.next())
    //     if kind == 2: return float(r.next() % 10**15) / float(10 ** (r.next() % 23))
    //     if kind == 3: return float(r.next() % (1 << 53)) * float(10 ** (r.next() % 23))
    //     return compose(r.next() & 1, r.next() % 2, r.next())
    //
    // def random_string(r):
    //     out = []
    //     for _ in range(r.next() % 21):
    //         cls = r.next() % 4
    //         if cls == 0: cp = r.next() % 0x80
    //         elif cls == 1: cp = 0x80 + r.next() % (0x800 - 0x80)
    //         elif cls == 2:
    //             cp = 0x800 + r.next() % (0x10000 - 0x800 - 0x800)
    //             if cp >= 0xD800: cp += 0x800
    //         else: cp = 0x10000 + r.next() % (0x110000 - 0x10000)
    //         out.append(chr(cp))
    //     return ''.join(out)
    //
    // if __name__ == '__main__':
    //     what = sys.argv[1]
    //     if what == 'stats':
    //         r = SplitMix64(20261005); h = hashlib.sha256()
    //         for i in range(int(sys.argv[2])):
    //             h.update((stats_line(dataset(r)) + '\n').encode())
    //         print(h.hexdigest())
    //     elif what == 'repr':
    //         r = SplitMix64(1717); h = hashlib.sha256()
    //         for i in range(int(sys.argv[2])):
    //             h.update((repr(repr_double(r)) + '\n').encode())
    //         print(h.hexdigest())
    //     elif what == 'strings':
    //         r = SplitMix64(65536); h = hashlib.sha256()
    //         for i in range(int(sys.argv[2])):
    //             h.update((json.dumps(random_string(r), ensure_ascii=True) + '\n').encode())
    //         print(h.hexdigest())

    /// SplitMix64, the generator both sides share.
    pub(crate) struct SplitMix64 {
        state: u64,
    }

    impl SplitMix64 {
        pub(crate) fn new(seed: u64) -> Self {
            Self { state: seed }
        }

        pub(crate) fn next(&mut self) -> u64 {
            self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = self.state;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        }
    }

    /// Python's `compose(sign, biased, mant)`.
    fn compose(sign: u64, biased_exponent: u64, mantissa: u64) -> f64 {
        f64::from_bits((sign << 63) | (biased_exponent << 52) | (mantissa & ((1 << 52) - 1)))
    }

    /// Python's `dataset(r)`; every draw happens in the same order as there.
    pub(crate) fn random_data_set(rng: &mut SplitMix64) -> Vec<f64> {
        let kind = rng.next() % 5;
        let count = if rng.next() % 10 == 0 {
            200 + rng.next() % 1800
        } else {
            1 + rng.next() % 40
        };
        let mut values = Vec::new();
        match kind {
            0 => {
                for _ in 0..count {
                    let sign = rng.next() & 1;
                    let exponent = 1 + rng.next() % 1999;
                    values.push(compose(sign, exponent, rng.next()));
                }
            }
            1 => {
                let center = 1023 + rng.next() % 81 - 40;
                for _ in 0..count {
                    let sign = u64::from(rng.next() % 8 == 0);
                    let exponent = center + rng.next() % 3 - 1;
                    values.push(compose(sign, exponent, rng.next()));
                }
            }
            2 => {
                let exponent = 1023 + rng.next() % 61 - 30;
                let base = (exponent << 52) | (rng.next() & ((1 << 52) - 1));
                for _ in 0..count {
                    values.push(f64::from_bits(base + rng.next() % 4));
                }
            }
            3 => {
                for _ in 0..count {
                    if rng.next() % 2 == 0 {
                        values.push((rng.next() % 1_000_000_000) as f64 / 1_000_000.0);
                    } else {
                        values.push((rng.next() % 100_000) as f64);
                    }
                }
            }
            _ => {
                for _ in 0..count {
                    let sign = rng.next() & 1;
                    let exponent = rng.next() % 3;
                    values.push(compose(sign, exponent, rng.next()));
                }
            }
        }
        values
    }

    /// 10^0 ..= 10^22, every one exact in an f64 (as Python's `float(10 ** k)`).
    const POWERS_OF_TEN: [f64; 23] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
        1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
    ];

    /// Python's `repr_double(r)`: raw bit patterns, decimal exponents around the fixed/exponent
    /// switch, decimal fractions, large integers scaled by powers of ten, and subnormals.
    pub(crate) fn random_double(rng: &mut SplitMix64) -> f64 {
        match rng.next() % 5 {
            0 => loop {
                let value = f64::from_bits(rng.next());
                if value.is_finite() {
                    return value;
                }
            },
            1 => {
                let sign = rng.next() & 1;
                let exponent = 1023 - 100 + rng.next() % 300;
                compose(sign, exponent, rng.next())
            }
            2 => {
                let numerator = (rng.next() % 1_000_000_000_000_000) as f64;
                numerator / POWERS_OF_TEN[(rng.next() % 23) as usize]
            }
            3 => {
                let integer = (rng.next() % (1 << 53)) as f64;
                integer * POWERS_OF_TEN[(rng.next() % 23) as usize]
            }
            _ => {
                let sign = rng.next() & 1;
                let exponent = rng.next() % 2;
                compose(sign, exponent, rng.next())
            }
        }
    }

    /// Python's `random_string(r)`: up to 20 code points from ASCII (controls included), two-
    /// and three-byte UTF-8 (surrogates skipped) and astral planes.
    pub(crate) fn random_string(rng: &mut SplitMix64) -> String {
        let length = rng.next() % 21;
        let mut text = String::new();
        for _ in 0..length {
            let code_point = match rng.next() % 4 {
                0 => rng.next() % 0x80,
                1 => 0x80 + rng.next() % (0x800 - 0x80),
                2 => {
                    let low = 0x800 + rng.next() % (0x10000 - 0x800 - 0x800);
                    if low >= 0xD800 {
                        low + 0x800
                    } else {
                        low
                    }
                }
                _ => 0x10000 + rng.next() % (0x110000 - 0x10000),
            };
            let character = u32::try_from(code_point)
                .ok()
                .and_then(char::from_u32)
                .expect("generator yields scalar values only");
            text.push(character);
        }
        text
    }

    /// Lowercase hex of a digest.
    pub(crate) fn hex(bytes: &[u8]) -> String {
        bytes.iter().map(|byte| format!("{byte:02x}")).collect()
    }
}
