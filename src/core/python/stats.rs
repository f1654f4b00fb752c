//! Request-level statistics that equal the reference producer's Python 3.11.7 results bit for bit.
//!
//! Owns `math.fsum`, `statistics.fmean`, `statistics.stdev`, `statistics.mean`, the
//! nearest-rank percentile and the 13-key [`Distribution`] summary (ARTIFACT.md §7.1).
//!
//! Bit-exactness matters because a reader recomputes the metrics from `request_timings` and
//! compares them with `==` (ARTIFACT.md §11.3, §12). Python's `stdev` and `mean` work on exact
//! fractions; so do the functions here, using the fact that every finite `f64` is an integer
//! times a power of two.

use num_bigint::{BigInt, BigUint, Sign};
use num_integer::Integer;
use num_traits::{ToPrimitive, Zero};
use std::cmp::Ordering;

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
pub(crate) mod test_vectors;

#[cfg(test)]
mod tests;
