//! Repeats on a capacity curve: the runs of one repeat group at one load merged into one
//! point ([`PointRepeats`]), its statistics and throughputs the means over the runs, its SLO
//! outcome their requests pooled, its server's figures the means over the runs that have them.

use crate::core::load::sweep::SATURATION_SHARE;
use crate::core::present::server::ServerFigures;
use crate::core::read::opened::metrics::{KeyMetrics, MetricSummary};
use crate::core::slo::SloOutcome;

use super::{CapacityPoint, PointRepeats};

/// The points of one curve with the runs of each repeat group at one value merged into one
/// point ([`PointRepeats`]); runs outside a group stay as they are.
pub(super) fn merge_repeats(points: Vec<(Option<String>, CapacityPoint)>) -> Vec<CapacityPoint> {
    let mut buckets: Vec<(Option<String>, Vec<CapacityPoint>)> = Vec::new();
    for (group, point) in points {
        let same = buckets.iter_mut().find(|(id, members)| {
            group.is_some() && *id == group && members[0].value == point.value
        });
        match same {
            Some((_, members)) => members.push(point),
            None => buckets.push((group, vec![point])),
        }
    }
    buckets
        .into_iter()
        .map(|(group, members)| match group {
            Some(group_id) if members.len() >= 2 => merged_point(group_id, members),
            _ => members.into_iter().next().expect("a bucket has a point"),
        })
        .collect()
}

/// The mean of `values` when every run has one.
fn mean_of(values: impl IntoIterator<Item = Option<f64>>) -> Option<f64> {
    let values: Vec<f64> = values.into_iter().collect::<Option<_>>()?;
    (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
}

/// One point for the repeats `members` (two or more) of group `group_id` at one value.
fn merged_point(group_id: String, members: Vec<CapacityPoint>) -> CapacityPoint {
    let runs: Vec<KeyMetrics> = members.iter().map(|point| point.metrics.clone()).collect();
    let summary = |get: fn(&KeyMetrics) -> &MetricSummary| {
        let of = |stat: fn(&MetricSummary) -> Option<f64>| {
            mean_of(runs.iter().map(|run| stat(get(run))))
        };
        MetricSummary {
            p50: of(|s| s.p50),
            p95: of(|s| s.p95),
            p99: of(|s| s.p99),
            mean: of(|s| s.mean),
            samples: runs.iter().map(|run| get(run).samples).sum(),
            source_prefix: get(&runs[0]).source_prefix,
        }
    };
    let metrics = KeyMetrics {
        ttfo: summary(|m| &m.ttfo),
        ttft: summary(|m| &m.ttft),
        e2e: summary(|m| &m.e2e),
        tpot: summary(|m| &m.tpot),
        decode: summary(|m| &m.decode),
        prefill: summary(|m| &m.prefill),
        throughput_tok_s: mean_of(runs.iter().map(|run| run.throughput_tok_s)),
        prefix_cache_hit_avg: mean_of(runs.iter().map(|run| run.prefix_cache_hit_avg)),
        output_tokens: mean_of(runs.iter().map(|run| run.output_tokens.map(|t| t as f64)))
            .map(|tokens| tokens.round() as u64),
    };
    let output_tok_s = mean_of(members.iter().map(|point| point.output_tok_s));
    let requests_per_s = mean_of(members.iter().map(|point| point.requests_per_s));
    let offered_rate = mean_of(members.iter().map(|point| point.offered_rate));
    let saturated = match (offered_rate, requests_per_s) {
        (Some(offered), Some(achieved)) => achieved < SATURATION_SHARE * offered,
        _ => false,
    };
    let slo = pooled_slo(&members);
    let server =
        ServerFigures::mean_of(&members.iter().map(|point| point.server).collect::<Vec<_>>());
    let first = members.into_iter().next().expect("two or more runs");
    CapacityPoint {
        value: first.value,
        label: first.label,
        output_tok_s,
        requests_per_s,
        metrics,
        offered_rate,
        saturated,
        slo,
        repeats: Some(PointRepeats { group_id, runs }),
        server,
    }
}

/// What the SLO says of the runs together: their requests counted as one run's, goodput the
/// mean of theirs; `None` unless every run was judged against the same bounds.
fn pooled_slo(members: &[CapacityPoint]) -> Option<SloOutcome> {
    let outcomes: Vec<&SloOutcome> = members
        .iter()
        .map(|point| point.slo.as_ref())
        .collect::<Option<_>>()?;
    let first = outcomes.first()?;
    let same_bounds = outcomes.iter().all(|outcome| {
        outcome.bounds.len() == first.bounds.len()
            && outcome
                .bounds
                .iter()
                .zip(&first.bounds)
                .all(|(a, b)| a.metric == b.metric && a.limit_ms == b.limit_ms)
    });
    if !same_bounds {
        return None;
    }
    let sent = outcomes.iter().map(|o| o.sent).sum::<u64>();
    let met = outcomes.iter().map(|o| o.met).sum::<u64>();
    let mut bounds = first.bounds.clone();
    for outcome in &outcomes[1..] {
        for (pooled, bound) in bounds.iter_mut().zip(&outcome.bounds) {
            pooled.missed += bound.missed;
            pooled.no_value += bound.no_value;
            pooled.skipped += bound.skipped;
        }
    }
    Some(SloOutcome {
        sent,
        failed: outcomes.iter().map(|o| o.failed).sum(),
        met,
        attainment: (sent > 0).then(|| met as f64 / sent as f64),
        goodput_req_s: mean_of(outcomes.iter().map(|o| o.goodput_req_s)),
        goodput_output_tok_s: mean_of(outcomes.iter().map(|o| o.goodput_output_tok_s)),
        met_uncounted_tokens: outcomes.iter().map(|o| o.met_uncounted_tokens).sum(),
        bounds,
    })
}
