//! Judging requests against a service-level objective (docs/guide/metrics.md, *Service-level
//! objectives*): which rows meet an [`Slo`], the run's attainment and goodput
//! ([`SloOutcome`]), why a file cannot be judged ([`Unjudgeable`]), and the highest load of a
//! sweep that keeps an attainment target ([`capacity_at_slo`]).
//!
//! The rules, stated once: a request meets an SLO when it succeeded and every bound holds
//! (value ≤ limit). A failed request never meets it. TPOT does not exist for an answer of one
//! token (or none); its TPOT bound is then skipped, as vLLM's goodput skips it. TTFO falls back
//! to TTFT for a row without it, as the producer does (§5). A succeeded row missing a bounded
//! value otherwise does not meet the SLO, and is counted as such. Attainment is the share of all
//! sent requests (succeeded and failed) that met it; goodput divides the met requests, and their
//! output tokens, by the run's wall time.

use std::collections::BTreeMap;

use crate::core::config::slo::{Slo, SloMetric, SloSpec};
use crate::core::read::opened::views::RowView;
use crate::core::read::opened::OpenedArtifact;
use crate::core::read::validate::report::Generation;
use crate::core::schema::slo::SloBlock;
use crate::core::schema::ArtifactV1;

/// How one bound fared for one request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BoundCheck {
    /// The value is at most the limit.
    Met,
    /// The value is above the limit.
    Missed,
    /// TPOT of an answer with at most one token: there is no TPOT to bound.
    Skipped,
    /// The row has no such value, so the bound cannot be shown to hold.
    NoValue,
}

impl BoundCheck {
    /// True unless the bound rejects the request.
    pub fn holds(self) -> bool {
        matches!(self, Self::Met | Self::Skipped)
    }
}

/// The value `metric` bounds in `row`, when the row has a finite one.
pub fn bounded_value(metric: SloMetric, row: &RowView) -> Option<f64> {
    let value = match metric {
        SloMetric::Ttfo => row.ttfo_or_ttft_ms(),
        SloMetric::Ttft => row.ttft_ms,
        SloMetric::Tpot => row.tpot_ms,
        SloMetric::E2el => row.e2e_ms,
    };
    value.filter(|value| value.is_finite())
}

/// How the bound on `metric` at `limit_ms` fares for a succeeded request's row.
pub fn check_bound(metric: SloMetric, limit_ms: f64, row: &RowView) -> BoundCheck {
    match bounded_value(metric, row) {
        Some(value) if value <= limit_ms => BoundCheck::Met,
        Some(_) => BoundCheck::Missed,
        None if metric == SloMetric::Tpot && row.output_tokens.is_some_and(|n| n <= 1) => {
            BoundCheck::Skipped
        }
        None => BoundCheck::NoValue,
    }
}

/// Whether a succeeded request's row meets every bound of `slo`.
pub fn row_meets(slo: &Slo, row: &RowView) -> bool {
    slo.bounds()
        .iter()
        .all(|bound| check_bound(bound.metric, bound.limit_ms, row).holds())
}

/// One bound's tally over a run.
#[derive(Clone, Debug, PartialEq)]
pub struct BoundTally {
    /// The metric bounded.
    pub metric: SloMetric,
    /// Its limit, ms.
    pub limit_ms: f64,
    /// Succeeded requests whose value was above the limit.
    pub missed: u64,
    /// Succeeded requests without the value (not one-token TPOTs, which are [`Self::skipped`]).
    pub no_value: u64,
    /// One-token answers whose TPOT bound was skipped.
    pub skipped: u64,
}

impl BoundTally {
    /// Requests this bound rejects (above the limit, or without the value).
    pub fn rejected(&self) -> u64 {
        self.missed + self.no_value
    }
}

/// What an SLO says about one run.
#[derive(Clone, Debug, PartialEq)]
pub struct SloOutcome {
    /// Requests sent: succeeded plus failed.
    pub sent: u64,
    /// Failed requests (they never meet the SLO).
    pub failed: u64,
    /// Succeeded requests that met every bound.
    pub met: u64,
    /// `met / sent`; `None` when nothing was sent.
    pub attainment: Option<f64>,
    /// Met requests per second of wall time; `None` without a positive wall time.
    pub goodput_req_s: Option<f64>,
    /// Output tokens of the met requests per second of wall time; `None` without a positive
    /// wall time.
    pub goodput_output_tok_s: Option<f64>,
    /// Met requests whose output tokens were not counted exactly (they add none to goodput).
    pub met_uncounted_tokens: u64,
    /// Each bound's tally, in the SLO's order.
    pub bounds: Vec<BoundTally>,
}

impl SloOutcome {
    /// The bound that rejects the most requests (the first in SLO order on a tie); `None` when
    /// no bound rejects any.
    pub fn most_rejecting(&self) -> Option<&BoundTally> {
        self.bounds
            .iter()
            .filter(|tally| tally.rejected() > 0)
            .fold(None, |best: Option<&BoundTally>, tally| match best {
                Some(best) if best.rejected() >= tally.rejected() => Some(best),
                _ => Some(tally),
            })
    }

    /// One line for the page: `83.3 % met (20 of 24) · goodput 4.1 req/s, 520 tok/s · TTFT
    /// rejects most (3)`.
    pub fn summary(&self) -> String {
        let Some(attainment) = self.attainment else {
            return "no requests were sent, so there is nothing to judge".to_owned();
        };
        let mut line = format!(
            "{:.1} % met ({} of {})",
            attainment * 100.0,
            self.met,
            self.sent
        );
        if let (Some(requests), Some(tokens)) = (self.goodput_req_s, self.goodput_output_tok_s) {
            line.push_str(&format!(
                " · goodput {requests:.2} req/s, {tokens:.1} tok/s"
            ));
        }
        if let Some(tally) = self.most_rejecting() {
            line.push_str(&format!(
                " · {} rejects most ({})",
                tally.metric.label(),
                tally.rejected()
            ));
        }
        if self.failed > 0 {
            line.push_str(&format!(" · {} failed", self.failed));
        }
        line
    }
}

/// Judges the succeeded requests' `rows` and `failed` failed requests of a run that lasted
/// `wall_clock_ms` (a run in progress passes the time so far).
pub fn judge_rows(
    slo: &Slo,
    rows: &[RowView],
    failed: u64,
    wall_clock_ms: Option<f64>,
) -> SloOutcome {
    let mut bounds: Vec<BoundTally> = slo
        .bounds()
        .iter()
        .map(|bound| BoundTally {
            metric: bound.metric,
            limit_ms: bound.limit_ms,
            missed: 0,
            no_value: 0,
            skipped: 0,
        })
        .collect();
    let (mut met, mut met_tokens, mut met_uncounted_tokens) = (0u64, 0u64, 0u64);
    for row in rows {
        let mut meets = true;
        for tally in &mut bounds {
            match check_bound(tally.metric, tally.limit_ms, row) {
                BoundCheck::Met => {}
                BoundCheck::Skipped => tally.skipped += 1,
                BoundCheck::Missed => {
                    tally.missed += 1;
                    meets = false;
                }
                BoundCheck::NoValue => {
                    tally.no_value += 1;
                    meets = false;
                }
            }
        }
        if meets {
            met += 1;
            match row.output_tokens {
                Some(tokens) => met_tokens += tokens,
                None => met_uncounted_tokens += 1,
            }
        }
    }
    let sent = rows.len() as u64 + failed;
    let wall_s = wall_clock_ms
        .filter(|ms| ms.is_finite() && *ms > 0.0)
        .map(|ms| ms / 1000.0);
    SloOutcome {
        sent,
        failed,
        met,
        attainment: (sent > 0).then(|| met as f64 / sent as f64),
        goodput_req_s: wall_s.map(|s| met as f64 / s),
        goodput_output_tok_s: wall_s.map(|s| met_tokens as f64 / s),
        met_uncounted_tokens,
        bounds,
    }
}

/// The artifact's `slo` block for a run held to `spec` with this outcome.
pub fn slo_block(spec: &SloSpec, outcome: &SloOutcome) -> SloBlock {
    SloBlock {
        spec: spec.slo.to_string(),
        bounds_ms: spec
            .slo
            .bounds()
            .iter()
            .map(|bound| (bound.metric.as_str().to_owned(), bound.limit_ms))
            .collect(),
        target: spec.target,
        sent: outcome.sent,
        met: outcome.met,
        attainment: outcome.attainment,
        goodput_req_s: outcome.goodput_req_s,
        goodput_output_tok_s: outcome.goodput_output_tok_s,
        rejected_by: outcome
            .bounds
            .iter()
            .map(|tally| (tally.metric.as_str().to_owned(), tally.rejected()))
            .collect::<BTreeMap<_, _>>(),
    }
}

/// Judges an artifact strobe just built: its rows, its failures and its wall time.
pub fn judge_artifact(slo: &Slo, artifact: &ArtifactV1) -> SloOutcome {
    let failed = artifact.failed.max(artifact.failures.len() as u64);
    judge_rows(
        slo,
        &RowView::of_timings(&artifact.request_timings),
        failed,
        Some(artifact.wall_clock_ms),
    )
}

/// Why a file cannot be held to an SLO.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Unjudgeable {
    /// G1 and G2 files keep summary statistics only.
    #[error(
        "this {generation} file keeps only summary statistics, not each request's timings, so \
         no SLO can be judged on it; a run by strobe or the current producer keeps them"
    )]
    SummaryOnly {
        /// The file's generation.
        generation: Generation,
    },
    /// The file was not read, or holds no request rows or counts.
    #[error("the file holds no requests to judge ({reason})")]
    NoRequests {
        /// Why: refused, invalid, or empty.
        reason: String,
    },
}

/// Judges a loaded artifact: its rows, its failed requests (`failed`, or the `failures` listed
/// when more) and its `wall_clock_ms`.
pub fn judge_opened(slo: &Slo, opened: &OpenedArtifact) -> Result<SloOutcome, Unjudgeable> {
    let generation = opened.generation();
    if matches!(generation, Generation::G1LegacyMinimal | Generation::G2) {
        return Err(Unjudgeable::SummaryOnly { generation });
    }
    let failed = opened
        .workload
        .failed
        .unwrap_or(0)
        .max(opened.failures.len() as u64);
    if opened.rows.is_empty() && failed == 0 {
        let reason = match &opened.refusal {
            Some(refusal) => refusal.to_string(),
            None if generation == Generation::Unknown => "it is not an artifact".to_owned(),
            None => "no request succeeded or failed".to_owned(),
        };
        return Err(Unjudgeable::NoRequests { reason });
    }
    Ok(judge_rows(
        slo,
        &opened.rows,
        failed,
        opened.workload.wall_clock_ms,
    ))
}

/// One step of a sweep as capacity at SLO reads it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AttainmentAtLoad {
    /// The step's load: its concurrency or rate.
    pub load: f64,
    /// Its attainment, 0–1.
    pub attainment: f64,
}

/// The highest load of a sweep whose attainment stays at or above a target.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum CapacityAtSlo {
    /// Attainment falls below the target between two steps (or exactly at one).
    Reached {
        /// The load where attainment crosses the target.
        load: f64,
        /// False when a step's attainment equals the target exactly (then `load` is that
        /// step's); true when `load` lies between `lower` and `upper` by linear interpolation.
        interpolated: bool,
        /// The last step at or above the target.
        lower: f64,
        /// The first step below it.
        upper: f64,
    },
    /// Even the lowest step fell below the target.
    NoStepMet {
        /// The lowest step's load.
        lowest: f64,
    },
    /// Every step met the target: the limit lies beyond the sweep.
    EveryStepMet {
        /// The highest step's load.
        highest: f64,
    },
    /// No steps to read.
    NoSteps,
}

impl CapacityAtSlo {
    /// What the capacity view says, with `unit` formatting a load (`c=8`, `20 req/s`).
    pub fn describe(&self, target: f64, unit: impl Fn(f64) -> String) -> String {
        let target = format!("{:.0} %", target * 100.0);
        match *self {
            Self::Reached {
                load,
                interpolated: true,
                lower,
                upper,
            } => format!(
                "{target} of requests meet the SLO up to about {} (interpolated between {} and {})",
                unit(load),
                unit(lower),
                unit(upper)
            ),
            Self::Reached { load, .. } => {
                format!(
                    "{target} of requests meet the SLO up to {} (a measured step)",
                    unit(load)
                )
            }
            Self::NoStepMet { lowest } => format!(
                "not reached in this sweep: fewer than {target} met the SLO even at {}",
                unit(lowest)
            ),
            Self::EveryStepMet { highest } => format!(
                "not reached in this sweep: at least {target} met the SLO at every step, up to {}",
                unit(highest)
            ),
            Self::NoSteps => "no steps to judge".to_owned(),
        }
    }
}

/// The load at which attainment first falls below `target` (0–1), reading `steps` in order of
/// load: linear between the last step at or above the target and the first below it. A curve
/// that recovers after falling is read at its first fall — the load it *stays* within target.
pub fn capacity_at_slo(steps: &[AttainmentAtLoad], target: f64) -> CapacityAtSlo {
    let mut steps: Vec<AttainmentAtLoad> = steps
        .iter()
        .copied()
        .filter(|step| step.load.is_finite() && step.attainment.is_finite())
        .collect();
    steps.sort_by(|a, b| a.load.total_cmp(&b.load));
    let (Some(first), Some(last)) = (steps.first(), steps.last()) else {
        return CapacityAtSlo::NoSteps;
    };
    if first.attainment < target {
        return CapacityAtSlo::NoStepMet { lowest: first.load };
    }
    let Some(fall) = steps.iter().position(|step| step.attainment < target) else {
        return CapacityAtSlo::EveryStepMet { highest: last.load };
    };
    let (lower, upper) = (steps[fall - 1], steps[fall]);
    if lower.attainment == target {
        return CapacityAtSlo::Reached {
            load: lower.load,
            interpolated: false,
            lower: lower.load,
            upper: upper.load,
        };
    }
    let share = (lower.attainment - target) / (lower.attainment - upper.attainment);
    CapacityAtSlo::Reached {
        load: lower.load + share * (upper.load - lower.load),
        interpolated: true,
        lower: lower.load,
        upper: upper.load,
    }
}

#[cfg(test)]
mod tests;
