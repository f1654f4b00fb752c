//! A sweep as the user asks for it ([`SweepSpec`]): what it varies and over which values
//! (`concurrency:1,2,4,8`, `rate:1,2,5,10` or `auto`), its stop rules and cool-down. How its
//! steps are planned is [`crate::core::load::sweep`]'s (docs/guide/load.md).

use std::fmt;
use std::str::FromStr;

use thiserror::Error;

use crate::core::config::bounds::{CONCURRENCY_BOUNDS, RATE_BOUNDS};
use crate::core::config::load::{DEFAULT_AUTO_STEPS, MAX_SWEEP_STEPS};

/// What a sweep varies, and over which values.
#[derive(Clone, Debug, PartialEq)]
pub enum SweepKind {
    /// Closed-loop runs at each concurrency.
    Concurrency(Vec<u64>),
    /// Open-loop runs at each rate (requests per second), the run's concurrency as the cap.
    Rate(Vec<f64>),
    /// A synchronous step, a throughput step, and `steps − 2` rates between them.
    Auto {
        /// All steps, the two measuring steps included.
        steps: u64,
    },
}

/// Why a `sweep` value cannot be read.
#[derive(Clone, Debug, PartialEq, Error)]
#[error("{0}")]
pub struct SweepParseError(pub String);

impl FromStr for SweepKind {
    type Err = SweepParseError;

    /// Reads `concurrency:1,2,4`, `rate:0.5,1,2` or `auto` (surrounding spaces forgiven).
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let text = text.trim();
        if text == "auto" {
            return Ok(Self::Auto {
                steps: DEFAULT_AUTO_STEPS,
            });
        }
        let hint = "write concurrency:1,2,4,8, rate:1,2,5,10 or auto";
        let (variable, values) = text
            .split_once(':')
            .ok_or_else(|| SweepParseError(format!("sweep {text:?} names no variable; {hint}")))?;
        let values: Vec<&str> = values
            .split(',')
            .map(str::trim)
            .filter(|value| !value.is_empty())
            .collect();
        if values.is_empty() || values.len() > MAX_SWEEP_STEPS {
            return Err(SweepParseError(format!(
                "sweep needs 1 to {MAX_SWEEP_STEPS} values (got {}); {hint}",
                values.len()
            )));
        }
        match variable.trim() {
            "concurrency" => values
                .iter()
                .map(|value| {
                    value
                        .parse::<u64>()
                        .ok()
                        .filter(|c| CONCURRENCY_BOUNDS.admits(*c))
                        .ok_or_else(|| {
                            SweepParseError(format!(
                                "sweep concurrency values must be whole numbers from {} to {} \
                                 (got {value:?})",
                                CONCURRENCY_BOUNDS.min, CONCURRENCY_BOUNDS.max
                            ))
                        })
                })
                .collect::<Result<Vec<_>, _>>()
                .map(Self::Concurrency),
            "rate" => values
                .iter()
                .map(|value| {
                    value
                        .parse::<f64>()
                        .ok()
                        .filter(|rate| RATE_BOUNDS.admits(*rate))
                        .ok_or_else(|| {
                            SweepParseError(format!(
                                "sweep rate values must be numbers from {} to {} requests per \
                                 second (got {value:?})",
                                RATE_BOUNDS.min, RATE_BOUNDS.max
                            ))
                        })
                })
                .collect::<Result<Vec<_>, _>>()
                .map(Self::Rate),
            other => Err(SweepParseError(format!(
                "sweep variable {other:?} is not concurrency or rate; {hint}"
            ))),
        }
    }
}

impl fmt::Display for SweepKind {
    /// The `sweep` link value that reads back as this sweep.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Concurrency(values) => {
                let values: Vec<String> = values.iter().map(u64::to_string).collect();
                write!(f, "concurrency:{}", values.join(","))
            }
            Self::Rate(values) => {
                let values: Vec<String> = values.iter().map(f64::to_string).collect();
                write!(f, "rate:{}", values.join(","))
            }
            Self::Auto { .. } => f.write_str("auto"),
        }
    }
}

/// A sweep as the user asked for it.
#[derive(Clone, Debug, PartialEq)]
pub struct SweepSpec {
    /// The variable and its values.
    pub kind: SweepKind,
    /// Stop after a step whose failed share of requests is above this (0–1); `None`: never.
    pub max_error: Option<f64>,
    /// Stop after a rate step that fell below 90 % of its offered rate.
    pub stop_when_saturated: bool,
    /// Seconds to wait between steps (the server settles); 0: none.
    pub cooldown_s: f64,
    /// Stop after a step in which a smaller share of requests (0–1) met the SLO; `None`:
    /// never. Taken from the SLO fields (`sweep_min_attainment` with an `slo`), since it needs
    /// an SLO to mean anything.
    pub min_attainment: Option<f64>,
}

impl SweepSpec {
    /// How many steps the sweep plans (stop rules may end it sooner).
    pub fn step_count(&self) -> usize {
        match &self.kind {
            SweepKind::Concurrency(values) => values.len(),
            SweepKind::Rate(values) => values.len(),
            SweepKind::Auto { steps } => *steps as usize,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sweeps_read_and_write_their_link_text() {
        assert_eq!(
            "concurrency:1, 2,4,8".parse(),
            Ok(SweepKind::Concurrency(vec![1, 2, 4, 8]))
        );
        assert_eq!(
            "rate:0.5,1,2.5".parse(),
            Ok(SweepKind::Rate(vec![0.5, 1.0, 2.5]))
        );
        assert_eq!(" auto ".parse(), Ok(SweepKind::Auto { steps: 8 }));
        for kind in [
            SweepKind::Concurrency(vec![1, 16]),
            SweepKind::Rate(vec![0.25, 3.0]),
        ] {
            assert_eq!(kind.to_string().parse(), Ok(kind.clone()));
        }
        for (text, says) in [
            ("concurrency", "names no variable"),
            ("load:1,2", "is not concurrency or rate"),
            ("concurrency:0,2", "whole numbers from 1 to 256"),
            ("concurrency:1.5", "whole numbers from 1 to 256"),
            ("rate:0", "from 0.01 to 10000"),
            ("rate:", "1 to 32 values"),
        ] {
            let error = text.parse::<SweepKind>().expect_err(text);
            assert!(error.0.contains(says), "{text}: {error}");
        }
        let many = format!("concurrency:{}", vec!["1"; 33].join(","));
        assert!(many.parse::<SweepKind>().is_err());
    }
}
