//! The arrival schedule of an open-loop run: when each request is to be sent, in milliseconds
//! from the run's start, drawn once, up front, from the arrival seed. The first request is due
//! at 0; each gap is drawn at the rate in force when the previous request was due, exactly as
//! this Python does with the same seed (docs/guide/load.md):
//!
//! ```text
//! rng, t, times = random.Random(seed), 0.0, [0.0]
//! while len(times) < requests:
//!     r = rate if not ramp_s else start + (rate - start) * min(t / ramp_s, 1.0)
//!     gap = rng.expovariate(r)                            # poisson
//!     gap = rng.gammavariate(burstiness, 1.0 / (r * burstiness))   # gamma
//!     gap = 1.0 / r                                       # constant
//!     t += gap
//!     if duration_s is not None and t >= duration_s: break
//!     times.append(t)
//! ```
//!
//! Times are kept in seconds while they are drawn and multiplied by 1000 at the end, like the
//! Python above, so the milliseconds agree with it to the bit where the platform's math does.

use crate::core::config::choices::Arrivals;
use crate::core::config::load::LoadOptions;
use crate::core::python::random::PyRandom;

/// When every request of an open-loop run is due, in ms from the run's start: nondecreasing,
/// the first at 0, at most `max_requests` of them, and (with `duration_s`) only those due
/// before the duration ends, so at least one.
pub fn arrival_times_ms(load: &LoadOptions, seed: i64, max_requests: u64) -> Vec<f64> {
    let mut random = PyRandom::new(seed);
    let capacity = usize::try_from(max_requests)
        .unwrap_or(usize::MAX)
        .min(1 << 20);
    let mut times_s: Vec<f64> = Vec::with_capacity(capacity);
    if max_requests == 0 {
        return Vec::new();
    }
    times_s.push(0.0);
    let mut t = 0.0_f64;
    while (times_s.len() as u64) < max_requests {
        let rate = rate_at(load, t);
        let gap = match load.arrivals {
            Arrivals::Poisson => random.expovariate(rate),
            Arrivals::Constant => 1.0 / rate,
            // The shape is checked before a plan is made; an unchecked one falls back to
            // Poisson (shape 1) rather than looping on a refused draw.
            Arrivals::Gamma => random
                .gammavariate(load.burstiness, 1.0 / (rate * load.burstiness))
                .unwrap_or_else(|| random.expovariate(rate)),
        };
        t += gap;
        if load.duration_s.is_some_and(|duration| t >= duration) {
            break;
        }
        times_s.push(t);
    }
    times_s
        .into_iter()
        .map(|seconds| seconds * 1000.0)
        .collect()
}

/// The rate in force at `t_s` seconds into the run: linear from `ramp_start_rate` to `rate` over
/// `ramp_s`, then `rate`.
pub fn rate_at(load: &LoadOptions, t_s: f64) -> f64 {
    match load.ramp_start_rate {
        Some(start) if load.ramp_s > 0.0 => {
            start + (load.rate - start) * (t_s / load.ramp_s).min(1.0)
        }
        _ => load.rate,
    }
}

/// The offered rate of a schedule, requests per second: its gaps' count over its span, or
/// `None` for fewer than two requests (a single request has no rate).
pub fn offered_rate(times_ms: &[f64]) -> Option<f64> {
    span_rate(
        times_ms.first().copied(),
        times_ms.last().copied(),
        times_ms.len(),
    )
}

/// `(count − 1) / (last − first)` in requests per second, or `None` without a span.
pub fn span_rate(first_ms: Option<f64>, last_ms: Option<f64>, count: usize) -> Option<f64> {
    let span_ms = last_ms? - first_ms?;
    (count >= 2 && span_ms > 0.0).then(|| (count - 1) as f64 / (span_ms / 1000.0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::config::choices::LoadMode;

    fn rate_load(rate: f64, arrivals: Arrivals) -> LoadOptions {
        LoadOptions {
            mode: LoadMode::Rate,
            rate,
            arrivals,
            ..LoadOptions::default()
        }
    }

    fn gaps_s(times_ms: &[f64]) -> Vec<f64> {
        times_ms
            .windows(2)
            .map(|pair| (pair[1] - pair[0]) / 1000.0)
            .collect()
    }

    fn mean(values: &[f64]) -> f64 {
        values.iter().sum::<f64>() / values.len() as f64
    }

    /// CPython 3.11.7 running the module's Python on the same settings: the SHA-256 of the
    /// schedule's millisecond values as little-endian IEEE bits, and its last value's bits.
    #[test]
    fn schedules_match_the_python_reference() {
        use sha2::{Digest, Sha256};
        let ramped = LoadOptions {
            ramp_s: 2.0,
            ramp_start_rate: Some(1.0),
            ..rate_load(20.0, Arrivals::Poisson)
        };
        let gamma = LoadOptions {
            burstiness: 0.5,
            ..rate_load(20.0, Arrivals::Gamma)
        };
        let cases: [(&str, LoadOptions, i64, &str, u64); 4] = [
            (
                "poisson 20/s",
                rate_load(20.0, Arrivals::Poisson),
                7,
                "af43cc90ed9de314b72c5dd37c98bfd8c98403c1900d9b78213c9b6a23f2364b",
                0x40e7_9f89_a83c_9a67,
            ),
            (
                "gamma 0.5",
                gamma,
                1717,
                "55ce815fcdc34b3c80101ea6836e761062a412382fffb9a1a01aed6ee4f1a77c",
                0x40e9_fe4d_d3a6_7398,
            ),
            (
                "ramped",
                ramped,
                0,
                "eb05f2c081c2cb651ad6afbbe29147f194daff2657344df2ef04693f2b05eebd",
                0x40e8_e41a_b6c3_ebae,
            ),
            (
                "constant",
                rate_load(3.0, Arrivals::Constant),
                0,
                "3a9c0f03891667f2616931a54c2b5e391f00caaea7016b6e51a29145e6430826",
                0x4114_531f_ffff_ffe7,
            ),
        ];
        for (name, load, seed, digest, last_bits) in cases {
            let times = arrival_times_ms(&load, seed, 1000);
            let mut hasher = Sha256::new();
            for time in &times {
                hasher.update(time.to_le_bytes());
            }
            let hex: String = hasher
                .finalize()
                .iter()
                .map(|byte| format!("{byte:02x}"))
                .collect();
            assert_eq!(hex, digest, "{name}");
            assert_eq!(times.last().map(|t| t.to_bits()), Some(last_bits), "{name}");
        }
    }

    #[test]
    fn poisson_gaps_average_one_over_the_rate() {
        for (rate, seed) in [(20.0, 0), (0.5, 7), (1000.0, 1717)] {
            let times = arrival_times_ms(&rate_load(rate, Arrivals::Poisson), seed, 10_001);
            let gaps = gaps_s(&times);
            assert_eq!(gaps.len(), 10_000);
            let relative = (mean(&gaps) * rate - 1.0).abs();
            assert!(
                relative < 0.02,
                "rate {rate}: mean gap off by {relative:.4}"
            );
        }
    }

    #[test]
    fn gamma_gaps_have_the_shape_s_spread() {
        for shape in [0.25, 0.5, 1.0, 4.0] {
            let load = LoadOptions {
                burstiness: shape,
                ..rate_load(50.0, Arrivals::Gamma)
            };
            let gaps = gaps_s(&arrival_times_ms(&load, 3, 10_001));
            let mean_gap = mean(&gaps);
            let sd = (gaps.iter().map(|gap| (gap - mean_gap).powi(2)).sum::<f64>()
                / (gaps.len() - 1) as f64)
                .sqrt();
            let cv = sd / mean_gap;
            let expected = 1.0 / f64::sqrt(shape);
            assert!(
                (mean_gap * 50.0 - 1.0).abs() < 0.05,
                "shape {shape}: mean {mean_gap}"
            );
            assert!(
                (cv / expected - 1.0).abs() < 0.06,
                "shape {shape}: coefficient of variation {cv:.3}, expected {expected:.3}"
            );
        }
    }

    #[test]
    fn constant_gaps_are_exact() {
        let times = arrival_times_ms(&rate_load(4.0, Arrivals::Constant), 0, 9);
        let expected: Vec<f64> = (0..9).map(|i| f64::from(i) * 0.25 * 1000.0).collect();
        assert_eq!(times, expected);
    }

    #[test]
    fn a_ramp_raises_the_rate_monotonically_then_holds_it() {
        let load = LoadOptions {
            ramp_s: 10.0,
            ramp_start_rate: Some(1.0),
            ..rate_load(21.0, Arrivals::Constant)
        };
        let times = arrival_times_ms(&load, 0, 400);
        let gaps = gaps_s(&times);
        assert!(
            // Equal gaps after the ramp differ by the rounding of their milliseconds.
            gaps.windows(2).all(|pair| pair[1] <= pair[0] + 1e-12),
            "gaps never grow"
        );
        assert_eq!(gaps[0], 1.0, "the first gap is at the start rate");
        let after_ramp: Vec<f64> = times
            .windows(2)
            .filter(|pair| pair[0] >= 10_000.0)
            .map(|pair| (pair[1] - pair[0]) / 1000.0)
            .collect();
        assert!(!after_ramp.is_empty());
        assert!(after_ramp
            .iter()
            .all(|gap| (gap - 1.0 / 21.0).abs() < 1e-12));
        assert_eq!(rate_at(&load, 5.0), 11.0);
        assert_eq!(rate_at(&load, 50.0), 21.0);
    }

    #[test]
    fn a_duration_keeps_only_what_is_due_before_it() {
        let load = LoadOptions {
            duration_s: Some(2.0),
            ..rate_load(10.0, Arrivals::Constant)
        };
        let times = arrival_times_ms(&load, 0, 1000);
        assert_eq!(times.len(), 20, "0 s, 0.1 s, … 1.9 s");
        assert!(times.iter().all(|&time| time < 2_000.0));
        let capped = arrival_times_ms(&load, 0, 5);
        assert_eq!(capped.len(), 5, "requests still bound the schedule");
        let short = LoadOptions {
            duration_s: Some(0.001),
            ..rate_load(1.0, Arrivals::Poisson)
        };
        assert_eq!(
            arrival_times_ms(&short, 0, 100),
            [0.0],
            "the first is due at once"
        );
    }

    #[test]
    fn the_same_seed_gives_the_same_schedule_and_another_seed_another() {
        let load = rate_load(20.0, Arrivals::Poisson);
        assert_eq!(
            arrival_times_ms(&load, 5, 50),
            arrival_times_ms(&load, 5, 50)
        );
        assert_ne!(
            arrival_times_ms(&load, 5, 50),
            arrival_times_ms(&load, 6, 50)
        );
    }

    #[test]
    fn offered_rate_is_gaps_over_span() {
        assert_eq!(offered_rate(&[0.0, 500.0, 1000.0]), Some(2.0));
        assert_eq!(offered_rate(&[0.0]), None);
        assert_eq!(offered_rate(&[]), None);
        assert_eq!(offered_rate(&[5.0, 5.0]), None, "no span, no rate");
    }
}
