//! The capacity view's data (docs/guide/load.md): each run as one point of a throughput–latency
//! curve, grouped into curves — the steps of one sweep (by its id), or, for runs without a sweep
//! block, the selected runs of one load mode and one setup — and ordered by the variable they step through
//! (concurrency or rate). Repeats of one group at one load are one point
//! ([`PointRepeats`], merged in `repeats`): the mean of their statistics, with the Student-t
//! 95 % interval across them for the chart's error bar and the table's
//! "1,057 ms ± 19.9 (95 %, 3 runs)" ([`capacity_rows`]). A run that scraped its server's
//! metrics brings the server's figures to its point ([`ServerFigures`]: peak queue, peak
//! running, KV cache at peak…), so the load at which the server's queue starts to grow reads
//! off the table and the chart.

mod repeats;

use std::collections::BTreeMap;

use crate::core::config::slo::Slo;
use crate::core::format::{format_number, or_missing};
use crate::core::inference::spread::AcrossRuns;
use crate::core::load::sweep::SATURATION_SHARE;
use crate::core::present::compare::setup_key;
use crate::core::present::server::ServerFigures;
use crate::core::present::verdict::{across_runs_text, disagreement};
use crate::core::read::opened::metrics::{KeyMetrics, MetricKind, MetricStat};
use crate::core::read::opened::OpenedArtifact;
use crate::core::slo::{
    capacity_at_slo, judge_opened, AttainmentAtLoad, CapacityAtSlo, SloOutcome,
};

use repeats::merge_repeats;

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
    /// What the server's own metrics said over the run (its `server_metrics` block), when it
    /// was scraped; for a group of repeats, each figure's mean over the runs that have it.
    pub server: Option<ServerFigures>,
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
pub fn capacity_series(runs: &[&OpenedArtifact]) -> Vec<CapacitySeries> {
    capacity_series_with_slo(runs, None)
}

/// [`capacity_series`] with each point judged by `slo` (docs/guide/metrics.md, *capacity at SLO*).
pub fn capacity_series_with_slo(
    runs: &[&OpenedArtifact],
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
        point.slo = slo.and_then(|slo| judge_opened(slo, run).ok());
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
    /// The server's figures at this point, when its runs scraped them.
    pub server: Option<ServerFigures>,
}

impl CapacityRow {
    /// The server's columns of the table: its queue at peak and its KV cache at peak ("9",
    /// "98 %"), [`MISSING`](crate::core::format::MISSING) for a figure the point lacks.
    pub fn server_cells(&self) -> [String; 2] {
        let text = |value: Option<f64>, unit: &str| {
            or_missing(value.map(|value| format!("{}{unit}", format_number(value))))
        };
        let server = self.server.unwrap_or_default();
        [
            text(server.waiting_peak, ""),
            text(server.kv_cache_peak_percent, " %"),
        ]
    }
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
                    server: point.server,
                }
            })
        })
        .collect()
}

/// How a curve of selected runs names what they share: the model, and the engine when known.
fn run_setup_label(run: &OpenedArtifact) -> String {
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
pub fn capacity_point(run: &OpenedArtifact) -> Option<CapacityPoint> {
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
        server: run.server_metrics.as_ref().and_then(ServerFigures::of),
    })
}

/// Whether any point of `series` has the server's figures: the table and the charts show the
/// server's columns only then.
pub fn has_server_figures(series: &[CapacitySeries]) -> bool {
    series
        .iter()
        .flat_map(|curve| &curve.points)
        .any(|point| point.server.is_some())
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
mod tests;
