//! A service-level objective as the user writes it ([`Slo`]): bounds in milliseconds on
//! per-request metrics, with vLLM's spellings (`ttft:500,tpot:50`), and the attainment target
//! the capacity view and the sweep's stop rule read ([`SloSpec`]). Judging requests against it is
//! [`crate::core::slo`]'s (docs/guide/metrics.md, *Service-level objectives*).

use std::fmt;
use std::str::FromStr;

use thiserror::Error;

/// The largest bound accepted, ms (one day): anything longer is a typo, not an objective.
pub const MAX_SLO_BOUND_MS: f64 = 86_400_000.0;

/// The attainment target of the capacity view when none is given, percent.
pub const DEFAULT_SLO_TARGET_PERCENT: f64 = 95.0;

/// A per-request metric an SLO can bound, in the order an SLO is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SloMetric {
    /// Time to first output (reasoning or content), ms; TTFT when the answer had no reasoning.
    Ttfo,
    /// Time to first content token, ms.
    Ttft,
    /// Mean time per output token after the first, ms.
    Tpot,
    /// End-to-end latency, ms (vLLM's `e2el`).
    E2el,
}

impl SloMetric {
    /// Every metric, in the order an SLO is written.
    pub const ALL: [SloMetric; 4] = [Self::Ttfo, Self::Ttft, Self::Tpot, Self::E2el];

    /// The spelling in an SLO: `ttfo`, `ttft`, `tpot`, `e2el`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Ttfo => "ttfo",
            Self::Ttft => "ttft",
            Self::Tpot => "tpot",
            Self::E2el => "e2el",
        }
    }

    /// The label the page shows, e.g. `TTFT`.
    pub fn label(self) -> &'static str {
        match self {
            Self::Ttfo => "TTFO",
            Self::Ttft => "TTFT",
            Self::Tpot => "TPOT",
            Self::E2el => "E2E",
        }
    }

    /// The metric named `name` (`e2e` is accepted for `e2el`; case is ignored).
    pub fn named(name: &str) -> Option<Self> {
        match name.trim().to_ascii_lowercase().as_str() {
            "ttfo" => Some(Self::Ttfo),
            "ttft" => Some(Self::Ttft),
            "tpot" => Some(Self::Tpot),
            "e2el" | "e2e" => Some(Self::E2el),
            _ => None,
        }
    }
}

impl fmt::Display for SloMetric {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One bound: the metric must be at most `limit_ms` (inclusive, as vLLM's goodput counts it).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SloBound {
    /// The metric bounded.
    pub metric: SloMetric,
    /// The largest value that meets the bound, ms.
    pub limit_ms: f64,
}

/// An SLO: one to four bounds, at most one per metric, kept in [`SloMetric::ALL`] order.
#[derive(Clone, Debug, PartialEq)]
pub struct Slo {
    bounds: Vec<SloBound>,
}

impl Slo {
    /// The bounds, in [`SloMetric::ALL`] order.
    pub fn bounds(&self) -> &[SloBound] {
        &self.bounds
    }

    /// The limit on `metric`, when the SLO bounds it.
    pub fn limit_ms(&self, metric: SloMetric) -> Option<f64> {
        self.bounds
            .iter()
            .find(|bound| bound.metric == metric)
            .map(|bound| bound.limit_ms)
    }

    /// An SLO of these bounds; the same rules as the text form (positive, at most
    /// [`MAX_SLO_BOUND_MS`], one per metric, at least one).
    pub fn new(bounds: impl IntoIterator<Item = SloBound>) -> Result<Self, SloParseError> {
        let mut kept: Vec<SloBound> = Vec::new();
        for bound in bounds {
            if !(bound.limit_ms.is_finite()
                && bound.limit_ms > 0.0
                && bound.limit_ms <= MAX_SLO_BOUND_MS)
            {
                return Err(SloParseError::BadLimit {
                    metric: bound.metric,
                    text: bound.limit_ms.to_string(),
                });
            }
            if kept.iter().any(|other| other.metric == bound.metric) {
                return Err(SloParseError::Repeated {
                    metric: bound.metric,
                });
            }
            kept.push(bound);
        }
        if kept.is_empty() {
            return Err(SloParseError::Empty);
        }
        kept.sort_by_key(|bound| bound.metric);
        Ok(Self { bounds: kept })
    }

    /// Reads an SLO field: `Ok(None)` when it is empty (no SLO), else [`Slo::from_str`].
    pub fn parse_optional(text: &str) -> Result<Option<Self>, SloParseError> {
        if text.trim().is_empty() {
            Ok(None)
        } else {
            text.parse().map(Some)
        }
    }
}

/// Why an SLO's text cannot be read; each message says how to write it.
#[derive(Clone, Debug, PartialEq, Error)]
pub enum SloParseError {
    /// Nothing to read.
    #[error("the SLO names no bound; write metric:ms pairs such as ttft:500,tpot:50")]
    Empty,
    /// A part without `:`.
    #[error("SLO part {part:?} has no limit; write metric:ms, e.g. ttft:500")]
    NoLimit {
        /// The part as typed.
        part: String,
    },
    /// A name that is not one of the four metrics.
    #[error("{name:?} is not a metric an SLO can bound; use ttfo, ttft, tpot or e2el")]
    UnknownMetric {
        /// The name as typed.
        name: String,
    },
    /// A limit that is not a positive number of milliseconds.
    #[error(
        "the {metric} limit {text:?} must be a number of milliseconds above 0 and at most \
         86400000 (one day), e.g. {metric}:500"
    )]
    BadLimit {
        /// The metric the limit was for.
        metric: SloMetric,
        /// The limit as typed.
        text: String,
    },
    /// A metric named twice.
    #[error("the SLO bounds {metric} twice; keep one limit per metric")]
    Repeated {
        /// The metric named twice.
        metric: SloMetric,
    },
}

impl FromStr for Slo {
    type Err = SloParseError;

    /// Reads `ttft:500,tpot:50`: comma-separated `metric:ms` pairs, spaces forgiven, a trailing
    /// `ms` on a limit allowed, `e2e` accepted for `e2el`.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let mut bounds = Vec::new();
        for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (name, limit) = part.split_once(':').ok_or_else(|| SloParseError::NoLimit {
                part: part.to_owned(),
            })?;
            let metric = SloMetric::named(name).ok_or_else(|| SloParseError::UnknownMetric {
                name: name.trim().to_owned(),
            })?;
            let limit = limit.trim();
            let number = limit.strip_suffix("ms").unwrap_or(limit).trim();
            let limit_ms = number
                .parse::<f64>()
                .ok()
                .filter(|ms| ms.is_finite() && *ms > 0.0 && *ms <= MAX_SLO_BOUND_MS)
                .ok_or_else(|| SloParseError::BadLimit {
                    metric,
                    text: limit.to_owned(),
                })?;
            bounds.push(SloBound { metric, limit_ms });
        }
        Self::new(bounds)
    }
}

impl fmt::Display for Slo {
    /// The canonical text (`ttft:500,tpot:50`), which reads back as the same SLO.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<String> = self
            .bounds
            .iter()
            .map(|bound| format!("{}:{}", bound.metric, bound.limit_ms))
            .collect();
        f.write_str(&parts.join(","))
    }
}

/// An SLO with what it is held to: the attainment target of the capacity view and, for a sweep,
/// the attainment below which it stops.
#[derive(Clone, Debug, PartialEq)]
pub struct SloSpec {
    /// The bounds.
    pub slo: Slo,
    /// The share of requests that must meet the SLO for a load to count as carried, 0–1
    /// (`slo_target`, given in percent; default 95 %).
    pub target: f64,
    /// A sweep stops after a step whose attainment is below this share, 0–1
    /// (`sweep_min_attainment`, in percent); `None`: never.
    pub sweep_min_attainment: Option<f64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_slo_reads_in_any_order_and_writes_canonically() {
        let slo: Slo = " TPOT:50 , ttft:500ms,e2e:2000.5".parse().expect("valid");
        assert_eq!(slo.to_string(), "ttft:500,tpot:50,e2el:2000.5");
        assert_eq!(slo.limit_ms(SloMetric::Tpot), Some(50.0));
        assert_eq!(slo.limit_ms(SloMetric::Ttfo), None);
        assert_eq!(slo.to_string().parse::<Slo>(), Ok(slo));
        assert_eq!(Slo::parse_optional("  "), Ok(None));
    }

    #[test]
    fn bad_slos_say_what_to_write() {
        let error = |text: &str| text.parse::<Slo>().expect_err(text).to_string();
        assert!(error(",").contains("names no bound"));
        assert!(error("ttft").contains("has no limit"));
        assert!(error("itl:20").contains("use ttfo, ttft, tpot or e2el"));
        assert!(error("ttft:0").contains("above 0"));
        assert!(error("ttft:-5").contains("above 0"));
        assert!(error("ttft:NaN").contains("must be a number"));
        assert!(error("ttft:inf").contains("must be a number"));
        assert!(error("ttft:1e9").contains("one day"));
        assert!(error("ttft:5,ttft:6").contains("twice"));
        assert!(error("e2e:5,e2el:6").contains("twice"));
    }
}
