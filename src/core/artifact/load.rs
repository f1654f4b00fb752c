//! The `load` block of an open-loop run from its outcomes' dispatch facts: what was offered,
//! what went out and when, what the cap held back (docs/guide/load.md).

use crate::core::config::choices::Arrivals;
use crate::core::config::settings::RunConfig;
use crate::core::load::schedule::{offered_rate, span_rate};
use crate::core::observe::conclude::RequestOutcome;
use crate::core::plan::RunPlan;
use crate::core::python::stats::nearest_rank;
use crate::core::schema::load::{LagSummary, LoadBlock, LATE_SEND_MS};

/// The `load` block, or `None` for a closed-loop run. `wall_seconds` is the measured run's.
pub fn load_block(
    config: &RunConfig,
    plan: &RunPlan,
    outcomes: &[RequestOutcome],
    wall_seconds: f64,
) -> Option<LoadBlock> {
    let times = plan.arrival_times_ms()?;
    let load = &config.load;
    let mut sends: Vec<(f64, f64, f64)> = outcomes
        .iter()
        .filter_map(|outcome| {
            let facts = outcome.dispatch()?;
            let ended = match outcome {
                RequestOutcome::Completed(completed) => {
                    completed.row.as_ref().map(|row| facts.sent_ms + row.e2e_ms)
                }
                RequestOutcome::Failed(failure) => failure.elapsed_ms.map(|ms| facts.sent_ms + ms),
            };
            Some((
                facts.sent_ms,
                ended.unwrap_or(facts.sent_ms),
                facts.cap_wait_ms,
            ))
        })
        .collect();
    sends.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut lags: Vec<f64> = outcomes
        .iter()
        .filter_map(|outcome| outcome.dispatch().map(|facts| facts.lag_ms()))
        .collect();
    lags.sort_by(f64::total_cmp);
    let completed = outcomes
        .iter()
        .filter(|outcome| matches!(outcome, RequestOutcome::Completed(_)))
        .count();
    let dispatch_lag_ms = LagSummary {
        p50: nearest_rank(&lags, 50),
        p95: nearest_rank(&lags, 95),
        max: lags.last().copied(),
    };
    let capped_sends = sends.iter().filter(|send| send.2 > 0.0).count() as u64;
    Some(LoadBlock {
        mode: load.mode,
        rate: load.rate,
        arrivals: load.arrivals,
        burstiness: (load.arrivals == Arrivals::Gamma).then_some(load.burstiness),
        seed: load.seed(config.context_seed),
        cap: plan.concurrency(),
        ramp_s: load.ramp_s,
        ramp_start_rate: load.ramp_start_rate.filter(|_| load.ramp_s > 0.0),
        duration_s: load.duration_s,
        scheduled_requests: times.len() as u64,
        sent_requests: sends.len() as u64,
        offered_rate: offered_rate(times),
        achieved_rate: span_rate(
            sends.first().map(|send| send.0),
            sends.last().map(|send| send.0),
            sends.len(),
        ),
        completed_per_s: (wall_seconds > 0.0).then(|| completed as f64 / wall_seconds),
        max_in_flight: most_overlapping(&sends),
        late_sends: lags.iter().filter(|&&lag| lag > LATE_SEND_MS).count() as u64,
        capped_sends,
        schedule_kept: dispatch_lag_ms.p95.is_some_and(|p95| p95 <= LATE_SEND_MS),
        throttled: capped_sends > 0,
        dispatch_lag_ms,
    })
}

/// The most `(start, end)` intervals that overlap at one moment (an end before a start at the
/// same instant frees its slot first, as the dispatcher sees it).
fn most_overlapping(intervals: &[(f64, f64, f64)]) -> u64 {
    let mut events: Vec<(f64, i64)> = intervals
        .iter()
        .flat_map(|&(start, end, _)| [(start, 1), (end, -1)])
        .collect();
    events.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    let mut current = 0_i64;
    let mut most = 0_i64;
    for (_, change) in events {
        current += change;
        most = most.max(current);
    }
    most as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlap_counts_what_is_in_flight_together() {
        assert_eq!(most_overlapping(&[]), 0);
        assert_eq!(most_overlapping(&[(0.0, 10.0, 0.0), (5.0, 15.0, 0.0)]), 2);
        assert_eq!(
            most_overlapping(&[(0.0, 10.0, 0.0), (10.0, 20.0, 0.0)]),
            1,
            "one ends as the next starts"
        );
    }
}
