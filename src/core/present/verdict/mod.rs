//! Is B really faster than A? The verdict of a comparison, per metric, in numbers and words.
//!
//! This module owns [`Verdict`]: between two runs ([`verdict_of_runs`]) each metric's rows are
//! put to the Mann–Whitney U test and the medians compared; between two groups of repeated runs
//! ([`verdict_of_groups`]) the runs' p50s are put to Welch's t-test and their means compared.
//! Holm's correction runs across the metrics tested, at α = [`ALPHA`]. The words
//! ([`MetricVerdict::sentence`]) never claim more than the test shows: "B's TTFT is 12 % lower
//! (p = 0.003)", "no significant difference in TPOT (p = 0.41)", "too few samples to tell".
//! [`across_runs_text`] and [`disagreement`] word a group's spread. The statistics are
//! [`crate::core::inference`]'s; the page and `strobe-artifact compare` show the same values.
//! Runs that sent different workloads are still tested, and the verdict says plainly that
//! they did ([`Verdict::workloads_differ`]).

use serde_json::{json, Map, Value};

pub mod shown;

use crate::core::format::{counted, format_number};
use crate::core::inference::holm::holm_adjusted;
use crate::core::inference::spread::{AcrossRuns, CV_FLAG};
use crate::core::inference::two_sample::{mann_whitney_u, welch_t_test};
use crate::core::inference::InferenceError;
use crate::core::present::compare::compare;
use crate::core::read::opened::metrics::MetricKind;
use crate::core::read::opened::OpenedArtifact;

/// The significance level a verdict is held to, after Holm's correction.
pub const ALPHA: f64 = 0.05;

/// Fewest rows per run for the Mann–Whitney test: below this its normal approximation is
/// too rough to trust, and the test could not reach a small p-value anyway.
pub const MIN_ROWS: usize = 8;

/// Fewest runs per group for Welch's test: one run has no spread to weigh.
pub const MIN_RUNS: usize = 2;

/// The metrics a verdict covers, in the order shown.
pub const VERDICT_METRICS: [MetricKind; 4] = [
    MetricKind::Ttft,
    MetricKind::Tpot,
    MetricKind::E2e,
    MetricKind::Ttfo,
];

/// The key of a metric in the verdict's JSON (the row field it reads).
pub fn json_key(metric: MetricKind) -> &'static str {
    match metric {
        MetricKind::Ttft => "ttft_ms",
        MetricKind::Tpot => "tpot_ms",
        MetricKind::E2e => "e2e_ms",
        MetricKind::Ttfo => "time_to_first_output_ms",
        MetricKind::Decode => "decode_tok_s",
        MetricKind::Prefill => "effective_prefill_tok_s",
    }
}

/// One side of a comparison of two runs.
#[derive(Debug, Clone, PartialEq)]
pub struct RunSide {
    /// Rows with a finite value of the metric.
    pub n: usize,
    /// The median of those rows; the file's p50 for a file without rows (G1, G2).
    pub median: Option<f64>,
    /// Whether the run has rows at all (legacy artifacts have none).
    pub has_rows: bool,
    /// The rows' values (what the test reads).
    values: Vec<f64>,
}

/// One side of a comparison of two groups of repeated runs.
#[derive(Debug, Clone, PartialEq)]
pub struct GroupSide {
    /// How many runs of the group state the metric's p50.
    pub runs: usize,
    /// The runs' p50s across the group; `None` when no run states one.
    pub p50: Option<AcrossRuns>,
    /// The runs' p95s across the group, when every run states one.
    pub p95: Option<AcrossRuns>,
    /// The runs' p50s (what the test reads).
    p50s: Vec<f64>,
}

/// What was compared, A then B.
#[derive(Debug, Clone, PartialEq)]
pub enum Sides {
    /// Two runs, by their rows.
    Runs(RunSide, RunSide),
    /// Two groups, by their runs' p50s.
    Groups(Box<GroupSide>, Box<GroupSide>),
}

/// What the test of one metric found.
#[derive(Debug, Clone, PartialEq)]
pub enum TestOutcome {
    /// The test ran.
    Tested {
        /// The test's own two-sided p-value (what scipy returns).
        p_raw: f64,
        /// After Holm's correction across the metrics tested; compared with [`ALPHA`].
        p_adjusted: f64,
        /// `p_adjusted ≤ ALPHA`.
        significant: bool,
        /// The U statistic of A (Mann–Whitney) or the t statistic (Welch).
        statistic: f64,
        /// Welch's degrees of freedom; `None` for Mann–Whitney.
        df: Option<f64>,
        /// True when the test says B's values tend to be lower than A's.
        b_lower: bool,
    },
    /// The test could not run; why, in words.
    TooFew(String),
}

/// The verdict on one metric.
#[derive(Debug, Clone, PartialEq)]
pub struct MetricVerdict {
    /// Which metric.
    pub metric: MetricKind,
    /// What was compared.
    pub sides: Sides,
    /// B's median over A's (runs) or B's mean p50 over A's (groups).
    pub ratio: Option<f64>,
    /// What the test found.
    pub outcome: TestOutcome,
}

/// The verdict of a comparison: every metric of [`VERDICT_METRICS`], Holm-corrected together.
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    /// One per metric, in [`VERDICT_METRICS`]' order.
    pub metrics: Vec<MetricVerdict>,
    /// When the runs sent different workloads, the sentence that says so
    /// ([`Comparison::different_traffic`](crate::core::present::compare::Comparison::different_traffic)):
    /// the test still runs, but a difference is then the workloads' as much as the servers'.
    pub workloads_differ: Option<String>,
}

/// The verdict between two runs: per metric the Mann–Whitney U test over their rows and the
/// ratio of their medians.
pub fn verdict_of_runs(a: &OpenedArtifact, b: &OpenedArtifact) -> Verdict {
    let metrics = VERDICT_METRICS
        .iter()
        .map(|&metric| {
            let (side_a, side_b) = (run_side(a, metric), run_side(b, metric));
            let outcome = test_rows(&side_a, &side_b, metric);
            MetricVerdict {
                metric,
                ratio: ratio(side_a.median, side_b.median),
                sides: Sides::Runs(side_a, side_b),
                outcome,
            }
        })
        .collect();
    Verdict {
        workloads_differ: compare(&[a, b]).different_traffic(),
        ..corrected(metrics)
    }
}

/// The verdict between two groups of repeated runs: per metric Welch's t-test over the runs'
/// p50s and the ratio of their means.
pub fn verdict_of_groups(a: &[&OpenedArtifact], b: &[&OpenedArtifact]) -> Verdict {
    let metrics = VERDICT_METRICS
        .iter()
        .map(|&metric| {
            let (side_a, side_b) = (group_side(a, metric), group_side(b, metric));
            let outcome = test_groups(&side_a, &side_b, metric);
            let mean = |side: &GroupSide| side.p50.map(|p50| p50.mean);
            MetricVerdict {
                metric,
                ratio: ratio(mean(&side_a), mean(&side_b)),
                sides: Sides::Groups(Box::new(side_a), Box::new(side_b)),
                outcome,
            }
        })
        .collect();
    let runs: Vec<&OpenedArtifact> = a.iter().chain(b).copied().collect();
    Verdict {
        workloads_differ: compare(&runs).different_traffic(),
        ..corrected(metrics)
    }
}

fn run_side(run: &OpenedArtifact, metric: MetricKind) -> RunSide {
    let values = metric.values(&run.rows);
    let median = median(&values).or(run.metrics.get(metric).p50);
    RunSide {
        n: values.len(),
        median,
        has_rows: !run.rows.is_empty(),
        values,
    }
}

fn group_side(runs: &[&OpenedArtifact], metric: MetricKind) -> GroupSide {
    let p50s: Vec<f64> = runs
        .iter()
        .filter_map(|run| run.metrics.get(metric).p50)
        .collect();
    let p95s: Vec<f64> = runs
        .iter()
        .filter_map(|run| run.metrics.get(metric).p95)
        .collect();
    GroupSide {
        runs: p50s.len(),
        p50: AcrossRuns::of(&p50s).ok(),
        p95: (p95s.len() == runs.len())
            .then(|| AcrossRuns::of(&p95s).ok())
            .flatten(),
        p50s,
    }
}

fn test_rows(a: &RunSide, b: &RunSide, metric: MetricKind) -> TestOutcome {
    if a.n < MIN_ROWS || b.n < MIN_ROWS {
        let hint = if !a.has_rows || !b.has_rows {
            "; a legacy artifact (G1, G2) records no rows: compare groups of runs by their p50s \
             instead"
        } else if a.n == 0 || b.n == 0 {
            "; the rows do not record it"
        } else {
            ""
        };
        return TestOutcome::TooFew(format!(
            "A has {} and B {} that record {}, and the test needs {MIN_ROWS} each{hint}",
            counted(a.n as u64, "row", "rows"),
            counted(b.n as u64, "row", "rows"),
            metric.short_label(),
        ));
    }
    match mann_whitney_u(&a.values, &b.values) {
        Ok(test) => TestOutcome::Tested {
            p_raw: test.p_value,
            p_adjusted: test.p_value,
            significant: false,
            statistic: test.u,
            df: None,
            b_lower: test.u > a.n as f64 * b.n as f64 / 2.0,
        },
        Err(error) => TestOutcome::TooFew(error.to_string()),
    }
}

fn test_groups(a: &GroupSide, b: &GroupSide, metric: MetricKind) -> TestOutcome {
    if a.runs < MIN_RUNS || b.runs < MIN_RUNS {
        return TestOutcome::TooFew(format!(
            "A has {} and B {} that state the {} p50, and the test needs {MIN_RUNS} each: repeat the \
             runs",
            counted(a.runs as u64, "run", "runs"),
            counted(b.runs as u64, "run", "runs"),
            metric.short_label()
        ));
    }
    match welch_t_test(&a.p50s, &b.p50s) {
        Ok(test) => TestOutcome::Tested {
            p_raw: test.p_value,
            p_adjusted: test.p_value,
            significant: false,
            statistic: test.t,
            df: Some(test.df),
            b_lower: test.t > 0.0,
        },
        Err(InferenceError::NoSpread) => TestOutcome::TooFew(format!(
            "every run of each group has the same {} p50, so there is no spread to weigh the \
             difference against",
            metric.short_label()
        )),
        Err(error) => TestOutcome::TooFew(error.to_string()),
    }
}

/// Applies Holm's correction across the metrics that were tested.
fn corrected(mut metrics: Vec<MetricVerdict>) -> Verdict {
    let raw: Vec<f64> = metrics
        .iter()
        .filter_map(|verdict| match verdict.outcome {
            TestOutcome::Tested { p_raw, .. } => Some(p_raw),
            TestOutcome::TooFew(_) => None,
        })
        .collect();
    // The tests' p-values are finite and in [0, 1]; an error here would be a bug upstream, and
    // then nothing is called significant.
    let adjusted = holm_adjusted(&raw).unwrap_or_else(|_| vec![1.0; raw.len()]);
    let mut adjusted = adjusted.into_iter();
    for verdict in &mut metrics {
        if let TestOutcome::Tested {
            p_adjusted,
            significant,
            ..
        } = &mut verdict.outcome
        {
            *p_adjusted = adjusted.next().unwrap_or(1.0);
            *significant = *p_adjusted <= ALPHA;
        }
    }
    Verdict {
        metrics,
        workloads_differ: None,
    }
}

fn ratio(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(a), Some(b)) if a > 0.0 && b.is_finite() => Some(b / a),
        _ => None,
    }
}

/// The median of finite values (the mean of the middle two for an even count).
fn median(values: &[f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let middle = sorted.len() / 2;
    Some(if sorted.len() % 2 == 1 {
        sorted[middle]
    } else {
        (sorted[middle - 1] + sorted[middle]) / 2.0
    })
}

/// A p-value for people: two significant digits, `p < 0.001` below that.
pub fn format_p(p: f64) -> String {
    if p < 0.001 {
        return "p < 0.001".to_owned();
    }
    let decimals = (1 - p.log10().floor() as i32).max(0) as usize;
    let text = format!("{p:.decimals$}");
    let text = if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_owned()
    } else {
        text
    };
    format!("p = {text}")
}

/// A share as a percentage for sentences: "12 %", "0.4 %".
fn percent(share: f64) -> String {
    let value = share * 100.0;
    if value < 1.0 {
        format!("{value:.1} %")
    } else {
        format!("{value:.0} %")
    }
}

impl MetricVerdict {
    /// What the page says, e.g. "B's TTFT is 12 % lower (p = 0.003)". The p-value shown is
    /// Holm-adjusted, the one held to α.
    pub fn sentence(&self) -> String {
        let label = self.metric.short_label();
        match &self.outcome {
            TestOutcome::TooFew(reason) => format!("too few samples to tell: {reason}"),
            TestOutcome::Tested {
                significant: false,
                p_adjusted,
                ..
            } => format!(
                "no significant difference in {label} ({})",
                format_p(*p_adjusted)
            ),
            TestOutcome::Tested {
                p_adjusted,
                b_lower,
                ..
            } => {
                let p = format_p(*p_adjusted);
                match self.ratio {
                    Some(ratio) if ratio < 1.0 && *b_lower => {
                        format!("B's {label} is {} lower ({p})", percent(1.0 - ratio))
                    }
                    Some(ratio) if ratio > 1.0 && !*b_lower => {
                        format!("B's {label} is {} higher ({p})", percent(ratio - 1.0))
                    }
                    // The test sees a shift that the medians do not show (or show the other
                    // way): say only what the test says.
                    _ => format!(
                        "B's {label} tends {} than A's ({p}), though the {} do not show it",
                        if *b_lower { "lower" } else { "higher" },
                        match self.sides {
                            Sides::Runs(..) => "medians",
                            Sides::Groups(..) => "mean p50s",
                        }
                    ),
                }
            }
        }
    }

    /// This metric's entry in the verdict's JSON.
    pub fn to_json(&self) -> Value {
        let mut entry = Map::new();
        match &self.sides {
            Sides::Runs(a, b) => {
                entry.insert("a".into(), json!({"n": a.n, "median": a.median}));
                entry.insert("b".into(), json!({"n": b.n, "median": b.median}));
                entry.insert("ratio_of_medians".into(), json!(self.ratio));
                entry.insert("test".into(), json!("mann-whitney-u"));
            }
            Sides::Groups(a, b) => {
                entry.insert("a".into(), group_json(a));
                entry.insert("b".into(), group_json(b));
                entry.insert("ratio_of_p50_means".into(), json!(self.ratio));
                entry.insert("test".into(), json!("welch-t"));
            }
        }
        match &self.outcome {
            TestOutcome::Tested {
                p_raw,
                p_adjusted,
                significant,
                statistic,
                df,
                ..
            } => {
                entry.insert("p_value".into(), json!(p_adjusted));
                entry.insert("p_value_unadjusted".into(), json!(p_raw));
                entry.insert("significant".into(), json!(significant));
                entry.insert("statistic".into(), json!(statistic));
                if let Some(df) = df {
                    entry.insert("df".into(), json!(df));
                }
                entry.insert("reason".into(), Value::Null);
            }
            TestOutcome::TooFew(reason) => {
                entry.insert("p_value".into(), Value::Null);
                entry.insert("p_value_unadjusted".into(), Value::Null);
                entry.insert("significant".into(), json!(false));
                entry.insert("reason".into(), json!(reason));
            }
        }
        entry.insert("sentence".into(), json!(self.sentence()));
        Value::Object(entry)
    }
}

fn group_json(side: &GroupSide) -> Value {
    let mut entry = Map::new();
    entry.insert("runs".into(), json!(side.runs));
    for (name, across) in [("p50", side.p50), ("p95", side.p95)] {
        entry.insert(format!("{name}_mean"), json!(across.map(|a| a.mean)));
        entry.insert(format!("{name}_sd"), json!(across.and_then(|a| a.sd)));
        entry.insert(
            format!("{name}_ci95"),
            json!(across
                .and_then(|a| a.interval_95())
                .map(|(low, high)| [low, high])),
        );
        entry.insert(format!("{name}_cv"), json!(across.and_then(|a| a.cv)));
    }
    Value::Object(entry)
}

impl Verdict {
    /// The verdict's JSON: `{"alpha", "correction", "compared", "workloads_differ",
    /// "metrics": {key: …}}`.
    pub fn to_json(&self) -> Value {
        let metrics: Map<String, Value> = self
            .metrics
            .iter()
            .map(|verdict| (json_key(verdict.metric).to_owned(), verdict.to_json()))
            .collect();
        let compared = match self.metrics.first().map(|verdict| &verdict.sides) {
            Some(Sides::Groups(..)) => "groups",
            _ => "runs",
        };
        json!({
            "alpha": ALPHA,
            "correction": "holm",
            "compared": compared,
            "workloads_differ": self.workloads_differ,
            "metrics": metrics,
        })
    }

    /// The verdict of one metric.
    pub fn of(&self, metric: MetricKind) -> Option<&MetricVerdict> {
        self.metrics.iter().find(|verdict| verdict.metric == metric)
    }
}

/// A number with thousands separators and [`format_number`]'s decimals: 1057.3 → "1,057".
pub fn format_with_separators(value: f64) -> String {
    let text = format_number(value);
    let (sign, digits) = match text.strip_prefix('-') {
        Some(rest) => ("-", rest),
        None => ("", text.as_str()),
    };
    let (whole, fraction) = match digits.split_once('.') {
        Some((whole, fraction)) => (whole, Some(fraction)),
        None => (digits, None),
    };
    if !whole.bytes().all(|b| b.is_ascii_digit()) {
        return text;
    }
    let mut grouped = String::new();
    for (position, digit) in whole.chars().enumerate() {
        if position > 0 && (whole.len() - position) % 3 == 0 {
            grouped.push(',');
        }
        grouped.push(digit);
    }
    match fraction {
        Some(fraction) => format!("{sign}{grouped}.{fraction}"),
        None => format!("{sign}{grouped}"),
    }
}

/// A statistic across runs as the page writes it: "1,057 ms ± 8 (95 %, 3 runs)", or
/// "1,057 ms (1 run)" without a spread to show.
pub fn across_runs_text(across: &AcrossRuns, unit: &str) -> String {
    let mean = format_with_separators(across.mean);
    let unit = if unit.is_empty() {
        String::new()
    } else {
        format!(" {unit}")
    };
    match across.half_width_95 {
        Some(half) => format!(
            "{mean}{unit} ± {} (95 %, {} runs)",
            format_with_separators(half),
            across.runs
        ),
        None => format!("{mean}{unit} (1 run)"),
    }
}

/// What the page says when a group's runs disagree (coefficient of variation above
/// [`CV_FLAG`]), with what to do; `None` when they agree or there is one run.
pub fn disagreement(across: &AcrossRuns) -> Option<String> {
    let cv = across.cv.filter(|_| across.disagree())?;
    Some(format!(
        "the {} runs disagree (their spread is {} of the mean, above {}): run more repeats, \
         or longer runs, before trusting this number",
        across.runs,
        percent(cv),
        percent(CV_FLAG)
    ))
}

#[cfg(test)]
mod tests;
