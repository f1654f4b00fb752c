//! The capacity view's data (docs/load.md): each run as one point of a throughput–latency curve,
//! grouped into curves — the steps of one sweep (by its id), or, for runs without a sweep
//! block, the selected runs of one load mode and one setup — and ordered by the variable they step through
//! (concurrency or rate). Repeats of one group at one load are one point
//! ([`PointRepeats`]): the mean of their statistics, with the Student-t 95 % interval across
//! them for the chart's error bar and the table's "1,057 ms ± 8 (95 %, 3 runs)"
//! ([`capacity_rows`]).

use std::collections::BTreeMap;

use crate::core::config::slo::Slo;
use crate::core::inference::spread::AcrossRuns;
use crate::core::load::sweep::SATURATION_SHARE;
use crate::core::present::compare::setup_key;
use crate::core::present::verdict::{across_runs_text, disagreement};
use crate::core::read::loaded::metrics::{KeyMetrics, MetricKind, MetricStat, MetricSummary};
use crate::core::read::loaded::LoadedArtifact;
use crate::core::slo::{
    capacity_at_slo, judge_loaded, AttainmentAtLoad, CapacityAtSlo, SloOutcome,
};

/// One run as a point of the capacity curve.
#[derive(Debug, Clone, PartialEq)]
pub struct CapacityPoint {
    /// The step's value: its concurrency (closed loop) or its rate (open loop).
    pub value: f64,
    /// How the point is labelled: `c=8` or `20 req/s`.
    pub label: String,
    /// Output tokens of the completed requests per second of wall time.
    pub output_tok_s: Option<f64>,
    /// Completed requests per second of wall time.
    pub requests_per_s: Option<f64>,
    /// The run's summary statistics (p50, p95 … of TTFO, TTFT, TPOT, E2E, decode); for a
    /// group of repeats, each statistic's mean over the runs that have it in every run.
    pub metrics: KeyMetrics,
    /// The rate offered (open loop), requests per second.
    pub offered_rate: Option<f64>,
    /// Completions per second against the offered rate fell below 90 %.
    pub saturated: bool,
    /// What the SLO said of this step, when one is applied and the step can be judged; for a
    /// group of repeats, the runs' requests pooled.
    pub slo: Option<SloOutcome>,
    /// The repeats this point stands for, when it is a group of two or more runs.
    pub repeats: Option<PointRepeats>,
}

/// The runs of one repeat group at one load, drawn as one point.
#[derive(Debug, Clone, PartialEq)]
pub struct PointRepeats {
    /// The group's id, as the files' `repeat` blocks state it.
    pub group_id: String,
    /// Each run's summary statistics, in the order the runs were given.
    pub runs: Vec<KeyMetrics>,
}

impl CapacityPoint {
    /// `metric`'s `stat` across the point's runs (one run when it has no repeats); `None` when
    /// a run lacks it.
    pub fn across(&self, metric: MetricKind, stat: MetricStat) -> Option<AcrossRuns> {
        let values: Option<Vec<f64>> = match &self.repeats {
            Some(repeats) => repeats
                .runs
                .iter()
                .map(|run| run.get(metric).stat(stat))
                .collect(),
            None => self.metrics.get(metric).stat(stat).map(|value| vec![value]),
        };
        AcrossRuns::of(&values?).ok()
    }
}

/// One curve: the points of one sweep, or of the selected runs of one load mode and setup.
#[derive(Debug, Clone, PartialEq)]
pub struct CapacitySeries {
    /// The legend: the sweep's id, or what the runs have in common.
    pub name: String,
    /// `concurrency`, `rate`, or [`MIXED`] for `auto`: what the points step through.
    pub variable: &'static str,
    /// The points, by value.
    pub points: Vec<CapacityPoint>,
}

impl CapacitySeries {
    /// The load a point stands for on this curve: its value (concurrency or rate), or, on an
    /// `auto` curve whose steps mix both, the requests per second it carried.
    pub fn load(&self, point: &CapacityPoint) -> f64 {
        if self.variable == MIXED {
            load_of(point)
        } else {
            point.value
        }
    }

    /// A load of this curve as text: `c=5.3`, `5.3 req/s`.
    pub fn describe_load(&self, load: f64) -> String {
        let rounded = (load * 10.0).round() / 10.0;
        match self.variable {
            "concurrency" => format!("c={}", trim_number(rounded)),
            _ => format!("{} req/s", trim_number(rounded)),
        }
    }

    /// The highest load of this curve whose attainment stays at or above `target` (0–1), from
    /// the points an SLO judged; `None` when none was.
    pub fn capacity_at_slo(&self, target: f64) -> Option<CapacityAtSlo> {
        let steps: Vec<AttainmentAtLoad> = self
            .points
            .iter()
            .filter_map(|point| {
                Some(AttainmentAtLoad {
                    load: self.load(point),
                    attainment: point.slo.as_ref()?.attainment?,
                })
            })
            .collect();
        (!steps.is_empty()).then(|| capacity_at_slo(&steps, target))
    }
}

/// The curves of `runs`: one per sweep id, and for runs outside a sweep one per load mode and
/// setup ([`setup_key`]: the same model, engine, GPU, prompts and workload), each with at least
/// two points (one run is no curve); runs of different servers or workloads are never joined.
/// Curves keep the order their first run had.
pub fn capacity_series(runs: &[&LoadedArtifact]) -> Vec<CapacitySeries> {
    capacity_series_with_slo(runs, None)
}

/// [`capacity_series`] with each point judged by `slo` (docs/metrics.md, *capacity at SLO*).
pub fn capacity_series_with_slo(
    runs: &[&LoadedArtifact],
    slo: Option<&Slo>,
) -> Vec<CapacitySeries> {
    // Key → (name, first run's position, points with their repeat group).
    type Points = Vec<(Option<String>, CapacityPoint)>;
    let mut groups: BTreeMap<String, (String, usize, Points)> = BTreeMap::new();
    for (position, run) in runs.iter().enumerate() {
        let rate = run.load.as_ref().and_then(|load| load.rate);
        let variable = if rate.is_some() {
            "rate"
        } else {
            "concurrency"
        };
        let (key, name) = match run.sweep.as_ref().and_then(|sweep| sweep.id.as_ref()) {
            Some(id) => (format!("sweep {}", id.text), id.to_string()),
            None => (
                format!("{variable}\u{1e}{}", setup_key(run)),
                format!("selected runs of {} ({variable})", run_setup_label(run)),
            ),
        };
        let Some(mut point) = capacity_point(run) else {
            continue;
        };
        point.slo = slo.and_then(|slo| judge_loaded(slo, run).ok());
        let repeat_group = run
            .repeat
            .as_ref()
            .and_then(|repeat| repeat.group_id.as_ref())
            .map(ToString::to_string);
        let group = groups.entry(key).or_insert((name, position, Vec::new()));
        group.2.push((repeat_group, point));
    }
    let mut series: Vec<(usize, CapacitySeries)> = groups
        .into_values()
        .map(|(name, first, points)| (name, first, merge_repeats(points)))
        // One run is no curve; one group of repeats is a point with an interval worth drawing.
        .filter(|(_, _, points)| {
            points.len() >= 2 || points.iter().any(|point| point.repeats.is_some())
        })
        .map(|(name, first, mut points)| {
            let rates = points.iter().filter(|p| p.offered_rate.is_some()).count();
            let variable = match rates {
                0 => "concurrency",
                n if n == points.len() => "rate",
                _ => MIXED,
            };
            if variable == MIXED {
                // `auto`: the synchronous step, the rates, then the throughput step, in the
                // order of the load each carried.
                points.sort_by(|a, b| load_of(a).total_cmp(&load_of(b)));
            } else {
                points.sort_by(|a, b| a.value.total_cmp(&b.value));
            }
            (
                first,
                CapacitySeries {
                    name,
                    variable,
                    points,
                },
            )
        })
        .collect();
    series.sort_by_key(|(first, _)| *first);
    series.into_iter().map(|(_, series)| series).collect()
}

/// The points of one curve with the runs of each repeat group at one value merged into one
/// point ([`PointRepeats`]); runs outside a group stay as they are.
fn merge_repeats(points: Vec<(Option<String>, CapacityPoint)>) -> Vec<CapacityPoint> {
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

/// One line of the capacity table: a point of a curve with its latency in words.
#[derive(Debug, Clone, PartialEq)]
pub struct CapacityRow {
    /// The curve's name.
    pub curve: String,
    /// The point's label: `c=8`, `20 req/s`.
    pub load: String,
    /// Completed requests per second (the mean over repeats).
    pub requests_per_s: Option<f64>,
    /// Output tokens per second (the mean over repeats).
    pub output_tok_s: Option<f64>,
    /// The latency statistic: "1,057 ms (1 run)", or across repeats
    /// "1,057 ms ± 8 (95 %, 3 runs)"; `None` when a run lacks it.
    pub latency: Option<String>,
    /// What to do when the repeats disagree (their CV above 10 %).
    pub disagreement: Option<String>,
    /// How many runs the point stands for.
    pub runs: usize,
}

/// The capacity table of `series` for `metric`'s `stat`: one row per point, curve by curve.
pub fn capacity_rows(
    series: &[CapacitySeries],
    metric: MetricKind,
    stat: MetricStat,
) -> Vec<CapacityRow> {
    series
        .iter()
        .flat_map(|curve| {
            curve.points.iter().map(move |point| {
                let across = point.across(metric, stat);
                CapacityRow {
                    curve: curve.name.clone(),
                    load: point.label.clone(),
                    requests_per_s: point.requests_per_s,
                    output_tok_s: point.output_tok_s,
                    latency: across
                        .as_ref()
                        .map(|across| across_runs_text(across, metric.unit())),
                    disagreement: across.as_ref().and_then(disagreement),
                    runs: point
                        .repeats
                        .as_ref()
                        .map_or(1, |repeats| repeats.runs.len()),
                }
            })
        })
        .collect()
}

/// How a curve of selected runs names what they share: the model, and the engine when known.
fn run_setup_label(run: &LoadedArtifact) -> String {
    let model = run
        .identity
        .model
        .as_ref()
        .map_or("an unnamed model", |model| model.text.as_str());
    match run.identity.engine.as_ref() {
        Some(engine) => format!("{model} on {}", engine.text),
        None => model.to_owned(),
    }
}

/// The `variable` of a curve whose steps are both closed-loop and open-loop (`auto`).
pub const MIXED: &str = "concurrency and rate";

/// The load a point carried, in requests per second: offered (open loop) or completed.
fn load_of(point: &CapacityPoint) -> f64 {
    point
        .offered_rate
        .or(point.requests_per_s)
        .unwrap_or(point.value)
}

/// `run` as a point of a capacity curve: its rate (open loop) or its concurrency, and what it
/// got through; `None` when the file lacks its wall time or concurrency.
pub fn capacity_point(run: &LoadedArtifact) -> Option<CapacityPoint> {
    let rate = run.load.as_ref().and_then(|load| load.rate);
    let (value, label) = match rate {
        Some(rate) => (rate, format!("{} req/s", trim_number(rate))),
        None => {
            let concurrency = run.workload.concurrency? as f64;
            (concurrency, format!("c={}", trim_number(concurrency)))
        }
    };
    let wall_s = run.workload.wall_clock_ms.filter(|ms| *ms > 0.0)? / 1000.0;
    let completed = run.workload.completed.unwrap_or(run.rows.len() as u64);
    // `throughput_tok_s` is withheld when a request failed; a capacity point still has a rate.
    let output_tok_s = run
        .metrics
        .output_tokens
        .map(|tokens| tokens as f64 / wall_s)
        .or(run.metrics.throughput_tok_s);
    let requests_per_s = Some(completed as f64 / wall_s);
    let offered_rate = run.load.as_ref().and_then(|load| load.offered_rate);
    let saturated = match (offered_rate, requests_per_s) {
        (Some(offered), Some(achieved)) => achieved < SATURATION_SHARE * offered,
        _ => false,
    };
    Some(CapacityPoint {
        value,
        label,
        output_tok_s,
        requests_per_s,
        metrics: run.metrics.clone(),
        offered_rate,
        saturated,
        slo: None,
        repeats: None,
    })
}

/// The latency metrics the curve can show on its y axis.
pub const CAPACITY_LATENCIES: [MetricKind; 4] = [
    MetricKind::Ttfo,
    MetricKind::Ttft,
    MetricKind::Tpot,
    MetricKind::E2e,
];

fn trim_number(value: f64) -> String {
    if value.fract() == 0.0 && value.abs() < 1e15 {
        format!("{value:.0}")
    } else {
        format!("{value}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(text: &str) -> LoadedArtifact {
        LoadedArtifact::from_text("run.json", text)
    }

    fn closed(concurrency: u64, id: Option<&str>) -> LoadedArtifact {
        let sweep = id.map_or(String::new(), |id| {
            format!(
                r#", "sweep": {{"id": "{id}", "variable": "concurrency", "value": {concurrency}}}"#
            )
        });
        run(&format!(
            r#"{{"concurrency": {concurrency}, "completed": 10, "wall_clock_ms": 2000,
                "metrics": {{"output_tokens": 1000, "ttft_p95_ms": {}}}{sweep}}}"#,
            concurrency * 10
        ))
    }

    #[test]
    fn a_sweep_is_one_curve_ordered_by_its_value() {
        let runs = [
            closed(8, Some("s1")),
            closed(1, Some("s1")),
            closed(4, Some("s1")),
        ];
        let refs: Vec<&LoadedArtifact> = runs.iter().collect();
        let series = capacity_series(&refs);
        assert_eq!(series.len(), 1);
        assert_eq!(series[0].name, "s1");
        assert_eq!(series[0].variable, "concurrency");
        let labels: Vec<&str> = series[0].points.iter().map(|p| p.label.as_str()).collect();
        assert_eq!(labels, ["c=1", "c=4", "c=8"]);
        assert_eq!(series[0].points[0].output_tok_s, Some(500.0));
        assert_eq!(series[0].points[0].requests_per_s, Some(5.0));
        assert_eq!(series[0].points[2].metrics.ttft.p95, Some(80.0));
    }

    #[test]
    fn an_auto_sweep_orders_its_steps_by_the_load_they_carried() {
        let rate_step = |rate: f64, index: u64| {
            run(&format!(
                r#"{{"concurrency": 16, "completed": 10, "wall_clock_ms": 1000,
                    "metrics": {{"output_tokens": 100}},
                    "load": {{"mode": "rate", "rate": {rate}, "offered_rate": {rate}}},
                    "sweep": {{"id": "auto-1", "step_index": {index}, "variable": "rate", "value": {rate}}}}}"#
            ))
        };
        // c=1 completes 5 req/s, c=16 30 req/s: the rates fall between them.
        let sync = closed(1, Some("auto-1"));
        let throughput = run(
            r#"{"concurrency": 16, "completed": 60, "wall_clock_ms": 2000,
                "metrics": {"output_tokens": 6000},
                "sweep": {"id": "auto-1", "step_index": 1, "variable": "concurrency", "value": 16}}"#,
        );
        let runs = [sync, throughput, rate_step(20.0, 2), rate_step(10.0, 3)];
        let refs: Vec<&LoadedArtifact> = runs.iter().collect();
        let series = capacity_series(&refs);
        assert_eq!(series.len(), 1);
        assert_eq!(series[0].variable, MIXED);
        let labels: Vec<&str> = series[0].points.iter().map(|p| p.label.as_str()).collect();
        assert_eq!(labels, ["c=1", "10 req/s", "20 req/s", "c=16"]);
    }

    #[test]
    fn runs_outside_a_sweep_group_by_load_mode_and_one_run_is_no_curve() {
        let rate = |rate: f64, completed: u64| {
            run(&format!(
                r#"{{"concurrency": 16, "completed": {completed}, "wall_clock_ms": 1000,
                    "metrics": {{"output_tokens": 100}},
                    "load": {{"mode": "rate", "rate": {rate}, "offered_rate": {rate}}}}}"#
            ))
        };
        let runs = [
            rate(10.0, 10),
            rate(20.0, 12),
            closed(2, None),
            closed(1, Some("other")),
        ];
        let refs: Vec<&LoadedArtifact> = runs.iter().collect();
        let series = capacity_series(&refs);
        assert_eq!(
            series.len(),
            1,
            "the lone closed run and the one-step sweep are no curves"
        );
        assert_eq!(series[0].variable, "rate");
        assert_eq!(series[0].points[1].label, "20 req/s");
        assert!(!series[0].points[0].saturated);
        assert!(
            series[0].points[1].saturated,
            "12 completed a second of 20 offered"
        );
    }

    #[test]
    fn runs_of_other_servers_or_workloads_are_never_one_curve() {
        let closed_of = |concurrency: u64, model: &str, context: u64| {
            run(&format!(
                r#"{{"concurrency": {concurrency}, "completed": 10, "wall_clock_ms": 2000,
                    "model": "{model}", "engine": "vllm", "context_tokens": {context},
                    "metrics": {{"output_tokens": 1000}}}}"#
            ))
        };
        // A c=1 run of one model beside a c=4 run of another: two lone runs, no curve.
        let unrelated = [closed_of(1, "m-a", 1024), closed_of(4, "m-b", 1024)];
        let refs: Vec<&LoadedArtifact> = unrelated.iter().collect();
        assert!(capacity_series(&refs).is_empty());
        // Another prompt length is another workload too.
        let contexts = [closed_of(1, "m-a", 1024), closed_of(4, "m-a", 8192)];
        let refs: Vec<&LoadedArtifact> = contexts.iter().collect();
        assert!(capacity_series(&refs).is_empty());
        // Runs of one setup at two loads are one curve, named by what they share; runs above six
        // in flight (a suspected connection limit) still belong to it.
        let same = [
            closed_of(1, "m-a", 1024),
            closed_of(8, "m-a", 1024),
            closed_of(4, "m-b", 1024),
            closed_of(2, "m-b", 1024),
        ];
        let refs: Vec<&LoadedArtifact> = same.iter().collect();
        let series = capacity_series(&refs);
        let names: Vec<&str> = series.iter().map(|series| series.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "selected runs of m-a on vllm (concurrency)",
                "selected runs of m-b on vllm (concurrency)"
            ]
        );
        let labels: Vec<&str> = series[1].points.iter().map(|p| p.label.as_str()).collect();
        assert_eq!(labels, ["c=2", "c=4"]);
    }

    #[test]
    fn capacity_at_slo_reads_the_judged_steps_of_a_curve() {
        // Four rows per step with TTFT 10, 20, 30, 40 ms × the concurrency: at TTFT ≤ 45 ms c=1
        // meets 4 of 4, c=2 2 of 4 (20, 40), c=4 1 of 4 (40).
        let step = |concurrency: u64| {
            let rows: Vec<String> = (1..=4)
                .map(|i| {
                    format!(
                        r#"{{"request_index": {i}, "ttft_ms": {}, "e2e_ms": 500, "output_tokens": 10}}"#,
                        i * 10 * concurrency
                    )
                })
                .collect();
            run(&format!(
                r#"{{"measurement_protocol": "capacity-v3", "concurrency": {concurrency},
                    "completed": 4, "failed": 0, "failures": [], "wall_clock_ms": 1000,
                    "request_timings": [{}],
                    "sweep": {{"id": "s", "variable": "concurrency", "value": {concurrency}}}}}"#,
                rows.join(",")
            ))
        };
        let runs = [step(1), step(2), step(4)];
        let refs: Vec<&LoadedArtifact> = runs.iter().collect();
        let slo: Slo = "ttft:45".parse().expect("valid");
        let series = capacity_series_with_slo(&refs, Some(&slo));
        let attainments: Vec<Option<f64>> = series[0]
            .points
            .iter()
            .map(|point| point.slo.as_ref().and_then(|o| o.attainment))
            .collect();
        assert_eq!(attainments, [Some(1.0), Some(0.5), Some(0.25)]);
        // 75 % falls halfway between c=1 and c=2.
        assert_eq!(
            series[0].capacity_at_slo(0.75),
            Some(CapacityAtSlo::Reached {
                load: 1.5,
                interpolated: true,
                lower: 1.0,
                upper: 2.0
            })
        );
        assert_eq!(series[0].describe_load(1.5), "c=1.5");
        assert_eq!(capacity_series(&refs)[0].capacity_at_slo(0.75), None);
    }

    /// A closed-loop run at `concurrency` with TTFT p50 `ttft_p50`, in repeat `index` of
    /// `group` when given.
    fn repeat(concurrency: u64, ttft_p50: f64, group: Option<(&str, u64)>) -> LoadedArtifact {
        let repeat = group.map_or(String::new(), |(id, index)| {
            format!(r#", "repeat": {{"group_id": "{id}", "index": {index}, "count": 3}}"#)
        });
        run(&format!(
            r#"{{"concurrency": {concurrency}, "completed": 10, "wall_clock_ms": 2000,
                "metrics": {{"output_tokens": 1000, "ttft_p50_ms": {ttft_p50},
                             "ttft_p95_ms": {}}}{repeat}}}"#,
            ttft_p50 * 2.0
        ))
    }

    #[test]
    fn repeats_of_one_group_at_one_load_are_one_point_with_their_interval() {
        let runs = [
            repeat(1, 500.0, None),
            repeat(2, 1049.0, Some(("g", 0))),
            repeat(2, 1065.0, Some(("g", 1))),
            repeat(2, 1057.0, Some(("g", 2))),
        ];
        let refs: Vec<&LoadedArtifact> = runs.iter().collect();
        let series = capacity_series(&refs);
        assert_eq!(series.len(), 1);
        let points = &series[0].points;
        assert_eq!(points.len(), 2, "the lone run and the group");
        assert_eq!(points[0].repeats, None);
        let group = points[1].repeats.as_ref().expect("the group's point");
        assert_eq!(group.group_id, "g");
        assert_eq!(group.runs.len(), 3);
        assert_eq!(
            points[1].metrics.ttft.p50,
            Some(1057.0),
            "the mean of the p50s"
        );
        assert_eq!(points[1].metrics.ttft.p95, Some(2114.0));
        assert_eq!(points[1].output_tok_s, Some(500.0));
        let across = points[1]
            .across(MetricKind::Ttft, MetricStat::P50)
            .expect("three runs");
        let (low, high) = across.interval_95().expect("an interval");
        assert!((high - low - 2.0 * 19.873).abs() < 0.01, "{low}..{high}");
        let rows = capacity_rows(&series, MetricKind::Ttft, MetricStat::P50);
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].latency.as_deref(), Some("500 ms (1 run)"));
        assert_eq!(
            rows[1].latency.as_deref(),
            Some("1,057 ms ± 19.9 (95 %, 3 runs)")
        );
        assert_eq!((rows[1].runs, rows[1].disagreement.clone()), (3, None));
        assert_eq!(rows[1].load, "c=2");
    }

    #[test]
    fn one_group_alone_is_drawn_and_disagreeing_repeats_are_flagged() {
        let runs = [
            repeat(4, 929.0, Some(("tuned", 0))),
            repeat(4, 1462.0, Some(("tuned", 1))),
            repeat(4, 1336.0, Some(("tuned", 2))),
        ];
        let refs: Vec<&LoadedArtifact> = runs.iter().collect();
        let series = capacity_series(&refs);
        assert_eq!(series.len(), 1, "a repeated point is worth drawing alone");
        assert_eq!(series[0].points.len(), 1);
        let rows = capacity_rows(&series, MetricKind::Ttft, MetricStat::P50);
        let flag = rows[0].disagreement.as_deref().expect("a CV above 10 %");
        assert!(flag.starts_with("the 3 runs disagree"), "{flag}");
        // Runs of two groups, or of one group at two loads (a sweep's steps repeated), stay
        // apart; a run without a group never joins one.
        let runs = [
            repeat(4, 100.0, Some(("a", 0))),
            repeat(4, 110.0, Some(("a", 1))),
            repeat(8, 200.0, Some(("a", 0))),
            repeat(8, 210.0, Some(("a", 1))),
            repeat(4, 300.0, Some(("b", 0))),
            repeat(4, 120.0, None),
        ];
        let refs: Vec<&LoadedArtifact> = runs.iter().collect();
        let points = &capacity_series(&refs)[0].points;
        let shown: Vec<(f64, usize)> = points
            .iter()
            .map(|p| (p.value, p.repeats.as_ref().map_or(1, |r| r.runs.len())))
            .collect();
        assert_eq!(shown, [(4.0, 2), (4.0, 1), (4.0, 1), (8.0, 2)]);
    }

    #[test]
    fn the_slo_of_a_group_pools_its_runs_requests() {
        let step = |ttfts: [u64; 2], index: u64| {
            let rows: Vec<String> = ttfts
                .iter()
                .enumerate()
                .map(|(i, ttft)| {
                    format!(
                        r#"{{"request_index": {i}, "ttft_ms": {ttft}, "e2e_ms": 500, "output_tokens": 10}}"#
                    )
                })
                .collect();
            run(&format!(
                r#"{{"measurement_protocol": "capacity-v3", "concurrency": 2,
                    "completed": 2, "failed": 0, "failures": [], "wall_clock_ms": 1000,
                    "request_timings": [{}],
                    "repeat": {{"group_id": "g", "index": {index}, "count": 2}}}}"#,
                rows.join(",")
            ))
        };
        let runs = [step([10, 20], 0), step([10, 90], 1)];
        let refs: Vec<&LoadedArtifact> = runs.iter().collect();
        let slo: Slo = "ttft:45".parse().expect("valid");
        let series = capacity_series_with_slo(&refs, Some(&slo));
        let outcome = series[0].points[0].slo.as_ref().expect("judged");
        assert_eq!((outcome.sent, outcome.met), (4, 3));
        assert_eq!(outcome.attainment, Some(0.75));
        assert_eq!(outcome.bounds[0].missed, 1);
    }

    #[test]
    fn a_guidellm_report_of_several_benchmarks_is_one_curve() {
        let path = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/peers/guidellm/guidellm-0.8.1-c4.json");
        let mut report: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(path).expect("fixture")).expect("JSON");
        let mut second = report["benchmarks"][0].clone();
        second["config"]["strategy"]["streams"] = serde_json::json!(8);
        report["benchmarks"]
            .as_array_mut()
            .expect("array")
            .push(second);
        let runs = LoadedArtifact::all_from_text("report.json", &report.to_string());
        let refs: Vec<&LoadedArtifact> = runs.iter().collect();
        let curves = capacity_series(&refs);
        assert_eq!(curves.len(), 1);
        assert_eq!(curves[0].variable, "concurrency");
        let values: Vec<f64> = curves[0].points.iter().map(|point| point.value).collect();
        assert_eq!(values, [4.0, 8.0]);
        assert!(
            curves[0].name.starts_with("guidellm "),
            "{}",
            curves[0].name
        );
    }
}
