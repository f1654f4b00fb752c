//! The load shape of a run ([`LoadOptions`]): closed loop at a fixed concurrency (the reference
//! tool's, the default) or open loop at a request rate, with its arrivals, seed, ramp and
//! duration, and the bounds they are checked against. The schedule itself is
//! [`crate::core::load`]'s.

use serde::{Deserialize, Serialize};

use crate::core::config::bounds::{
    BURSTINESS_BOUNDS, DURATION_S_BOUNDS, RAMP_S_BOUNDS, RATE_BOUNDS,
};
use crate::core::config::choices::{Arrivals, LoadMode};
use crate::core::config::error::ConfigError;
use crate::core::config::fields::FieldKey;

// Written with every other bound, in `bounds`; these paths stay for the code that reads them here.
pub use crate::core::config::bounds::{
    AUTO_STEPS, MAX_BURSTINESS, MAX_COOLDOWN_S, MAX_DURATION_S, MAX_RAMP_S, MAX_RATE, MIN_RATE,
    REPEATS,
};

/// Most steps a sweep may have.
pub const MAX_SWEEP_STEPS: usize = 32;

/// An `auto` sweep's steps when `sweep_steps` is not given.
pub const DEFAULT_AUTO_STEPS: u64 = 8;

/// How requests are sent. In `concurrency` mode every other field is ignored; in `rate` mode
/// the run's `concurrency` is the cap on requests in flight.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct LoadOptions {
    /// Closed or open loop (`load`).
    pub mode: LoadMode,
    /// Requests per second once any ramp is over (`rate`), `MIN_RATE..=MAX_RATE`.
    pub rate: f64,
    /// How the gaps are drawn (`arrivals`).
    pub arrivals: Arrivals,
    /// The gamma shape for `gamma` arrivals (`burstiness`), above 0, at most `MAX_BURSTINESS`.
    pub burstiness: f64,
    /// Seed of the gaps (`arrival_seed`); `None` takes the run's `context_seed`.
    pub arrival_seed: Option<i64>,
    /// Seconds over which the rate rises (or falls) linearly from `ramp_start_rate` to `rate`
    /// (`ramp_s`); 0 is no ramp.
    pub ramp_s: f64,
    /// The rate at the start of the ramp (`ramp_start_rate`); needed when `ramp_s` is above 0.
    pub ramp_start_rate: Option<f64>,
    /// Stop scheduling requests after this many seconds (`duration_s`); the run then has the
    /// requests scheduled before it, at most `requests`.
    pub duration_s: Option<f64>,
}

impl Default for LoadOptions {
    fn default() -> Self {
        Self {
            mode: LoadMode::Concurrency,
            rate: 10.0,
            arrivals: Arrivals::Poisson,
            burstiness: 1.0,
            arrival_seed: None,
            ramp_s: 0.0,
            ramp_start_rate: None,
            duration_s: None,
        }
    }
}

impl LoadOptions {
    /// Whether requests are sent on a schedule.
    pub fn is_open_loop(&self) -> bool {
        self.mode == LoadMode::Rate
    }

    /// The seed of the gaps: `arrival_seed`, else the run's `context_seed`.
    pub fn seed(&self, context_seed: i64) -> i64 {
        self.arrival_seed.unwrap_or(context_seed)
    }

    /// Appends every violated bound of an open-loop shape to `errors` (nothing in `concurrency`
    /// mode, where the other settings are not used). `burst` is the run's burst setting, which
    /// a schedule cannot be combined with.
    pub fn check(&self, burst: u64, errors: &mut Vec<ConfigError>) {
        if !self.is_open_loop() {
            return;
        }
        let rate_range = |field: FieldKey, value: f64, errors: &mut Vec<ConfigError>| {
            if !RATE_BOUNDS.admits(value) {
                errors.push(ConfigError::new(
                    field,
                    format!(
                        "{field} must be from {} to {} requests per second (got {value})",
                        RATE_BOUNDS.min, RATE_BOUNDS.max
                    ),
                ));
            }
        };
        rate_range(FieldKey::Rate, self.rate, errors);
        if self.arrivals == Arrivals::Gamma && !BURSTINESS_BOUNDS.admits(self.burstiness) {
            errors.push(ConfigError::new(
                FieldKey::Burstiness,
                format!(
                    "burstiness must be above {} and at most {} (got {}); 1 is Poisson, below 1 \
                     burstier, above 1 smoother",
                    BURSTINESS_BOUNDS.min, BURSTINESS_BOUNDS.max, self.burstiness
                ),
            ));
        }
        if !RAMP_S_BOUNDS.admits(self.ramp_s) {
            errors.push(ConfigError::new(
                FieldKey::RampS,
                format!(
                    "ramp_s must be from {} to {} seconds (got {}); 0 is no ramp",
                    RAMP_S_BOUNDS.min, RAMP_S_BOUNDS.max, self.ramp_s
                ),
            ));
        } else if self.ramp_s > 0.0 {
            match self.ramp_start_rate {
                Some(start) => rate_range(FieldKey::RampStartRate, start, errors),
                None => errors.push(ConfigError::new(
                    FieldKey::RampStartRate,
                    format!(
                        "ramp_start_rate must be set when ramp_s is above 0 (got ramp_s {}); \
                         give the rate the ramp starts from, or set ramp_s to 0",
                        self.ramp_s
                    ),
                )),
            }
        }
        if let Some(duration) = self.duration_s {
            if !DURATION_S_BOUNDS.admits(duration) {
                errors.push(ConfigError::new(
                    FieldKey::DurationS,
                    format!(
                        "duration_s must be above {} and at most {} seconds (got {duration}); \
                         leave it empty to send every request",
                        DURATION_S_BOUNDS.min, DURATION_S_BOUNDS.max
                    ),
                ));
            }
        }
        if burst > 0 {
            errors.push(ConfigError::new(
                FieldKey::Load,
                format!(
                    "load rate sends requests on a schedule and cannot be combined with burst \
                     (got burst {burst}); set burst to 0 or load to concurrency"
                ),
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn open(rate: f64) -> LoadOptions {
        LoadOptions {
            mode: LoadMode::Rate,
            rate,
            ..LoadOptions::default()
        }
    }

    fn fields(load: &LoadOptions, burst: u64) -> Vec<&'static str> {
        let mut errors = Vec::new();
        load.check(burst, &mut errors);
        errors.iter().map(|error| error.field.as_str()).collect()
    }

    #[test]
    fn every_bound_is_checked_in_rate_mode_only() {
        assert!(fields(&open(MIN_RATE), 0).is_empty());
        assert!(fields(&open(MAX_RATE), 0).is_empty());
        assert_eq!(fields(&open(0.0), 0), ["rate"]);
        assert_eq!(fields(&open(MAX_RATE * 2.0), 0), ["rate"]);
        assert_eq!(fields(&open(f64::NAN), 0), ["rate"]);
        let closed = LoadOptions {
            rate: -1.0,
            burstiness: -1.0,
            ramp_s: -1.0,
            ..LoadOptions::default()
        };
        assert!(
            fields(&closed, 5).is_empty(),
            "concurrency mode ignores them"
        );
        let gamma = |burstiness| LoadOptions {
            arrivals: Arrivals::Gamma,
            burstiness,
            ..open(1.0)
        };
        assert!(fields(&gamma(MAX_BURSTINESS), 0).is_empty());
        assert_eq!(fields(&gamma(0.0), 0), ["burstiness"]);
        assert_eq!(fields(&gamma(MAX_BURSTINESS + 1.0), 0), ["burstiness"]);
        let poisson_with_odd_shape = LoadOptions {
            burstiness: 0.0,
            ..open(1.0)
        };
        assert!(
            fields(&poisson_with_odd_shape, 0).is_empty(),
            "only gamma reads it"
        );
        let ramp = |ramp_s, start| LoadOptions {
            ramp_s,
            ramp_start_rate: start,
            ..open(5.0)
        };
        assert!(fields(&ramp(MAX_RAMP_S, Some(1.0)), 0).is_empty());
        assert_eq!(fields(&ramp(MAX_RAMP_S + 1.0, Some(1.0)), 0), ["ramp_s"]);
        assert_eq!(fields(&ramp(3.0, None), 0), ["ramp_start_rate"]);
        assert_eq!(fields(&ramp(3.0, Some(0.0)), 0), ["ramp_start_rate"]);
        let duration = |seconds| LoadOptions {
            duration_s: Some(seconds),
            ..open(5.0)
        };
        assert!(fields(&duration(MAX_DURATION_S), 0).is_empty());
        assert_eq!(fields(&duration(0.0), 0), ["duration_s"]);
        assert_eq!(fields(&duration(MAX_DURATION_S + 1.0), 0), ["duration_s"]);
        assert_eq!(fields(&open(5.0), 3), ["load"], "a schedule is no burst");
    }

    #[test]
    fn the_seed_defaults_to_the_context_seed() {
        assert_eq!(open(1.0).seed(1717), 1717);
        let seeded = LoadOptions {
            arrival_seed: Some(-4),
            ..open(1.0)
        };
        assert_eq!(seeded.seed(1717), -4);
    }
}
