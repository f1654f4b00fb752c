//! `strobe-artifact compare`: is B really faster than A? Two runs are compared by their rows
//! (Mann–Whitney U per metric), two groups of repeated runs by their runs' p50s (Welch's
//! t-test), Holm-corrected across the metrics, as a table or as JSON. The numbers and words are
//! the core's ([`strobe::core::present::verdict`]), the same the page shows.

use std::io::{self, Write};
use std::path::PathBuf;

use strobe::core::format::counted;
use strobe::core::present::repeats::{group_repeats, sweep_loads};
use strobe::core::present::verdict::{
    across_runs_text, disagreement, format_p, format_with_separators, verdict_of_groups,
    verdict_of_runs, GroupSide, MetricVerdict, Sides, TestOutcome, Verdict, ALPHA,
};
use strobe::core::read::opened::OpenedArtifact;

use super::{fail, runs_in, HelpFlag, JsonOutput, Outcome};
use crate::input::{read_each, read_one, Results};
use crate::PROGRAM;

/// The whole help's description of `compare`.
const LONG_ABOUT: &str = "\
Says, per metric (TTFT, TPOT, E2E, time to first output), whether B differs from A by more
than noise, at α = 0.05 after Holm's correction across the metrics tested.

Two files A and B: each run's rows are put to the Mann–Whitney U test (two-sided, normal
approximation with tie and continuity correction), and the medians are compared. Each run
needs at least 8 rows with the metric; legacy artifacts (G1, G2) record no rows.

--a and --b: two groups of repeated runs (files, folders or a repeat group's zip). The runs'
p50s are put to Welch's t-test and their means compared; each group needs two runs or more.
Each group's p50 and p95 are shown as their mean ± the Student-t 95 % interval, and runs that
disagree (a spread above 10 % of the mean) are flagged. A sweep whose steps were repeated holds
one repeat group per step: a group spanning several steps' loads is refused; pass one step's
runs to each side.

Runs that sent different workloads (another file's SHA-256, a file against synthetic prompts,
chat against completions, other turns, order, output lengths or history) are still tested, and
a line under A and B says so: their numbers describe different traffic.

The p-value shown is Holm-adjusted; --json also gives the test's own (`p_value_unadjusted`).
'Significant' says the difference is unlikely to be noise between these runs, not that it is
large or that it holds on another day: see docs/guide/metrics.md, *Is B really faster than A?*.
Any generation of the artifact and another tool's results (vLLM, GuideLLM, AIPerf) compare.";

/// `compare [--json] A B` or `compare [--json] --a A1 A2 … --b B1 B2 …`
#[derive(Debug, clap::Args)]
#[command(
    about = "Say whether B differs from A by more than noise, per metric",
    long_about = LONG_ABOUT,
    override_usage = "strobe-artifact compare [--json] A.json B.json\n       \
                      strobe-artifact compare [--json] --a A1.json A2.json … --b B1.json B2.json …",
    after_help = "\
Exit codes:
  0  compared (whatever the verdict)
  1  a file is not a run strobe reads (not an artifact, broken, or several runs where one is
     expected)
  2  a file could not be read, or bad usage"
)]
pub struct Args {
    /// The two runs, A then B.
    #[arg(value_name = "FILE")]
    files: Vec<PathBuf>,
    /// Group A's runs (files, folders, zip archives).
    #[arg(long = "a", value_name = "FILE", num_args = 1.., conflicts_with = "files")]
    a: Vec<PathBuf>,
    /// Group B's runs.
    #[arg(long = "b", value_name = "FILE", num_args = 1.., conflicts_with = "files")]
    b: Vec<PathBuf>,
    #[command(flatten)]
    json: JsonOutput,
    #[command(flatten)]
    help: HelpFlag,
}

/// Runs `compare`.
pub fn run(args: &Args, out: &mut dyn Write, err: &mut dyn Write) -> io::Result<Outcome> {
    let grouped = !args.a.is_empty() || !args.b.is_empty();
    if grouped {
        if args.a.is_empty() || args.b.is_empty() {
            return fail(
                err,
                "compare",
                format!(
                    "groups need both --a and --b, e.g. `{PROGRAM} compare --a a1.json a2.json \
                     --b b1.json b2.json`. Run `{PROGRAM} compare --help`."
                ),
                Outcome::Unusable,
            );
        }
        let a = match read_group(&args.a, "A") {
            Ok(runs) => runs,
            Err((message, outcome)) => return fail(err, "compare", message, outcome),
        };
        let b = match read_group(&args.b, "B") {
            Ok(runs) => runs,
            Err((message, outcome)) => return fail(err, "compare", message, outcome),
        };
        for (label, runs) in [("A", &a), ("B", &b)] {
            if let Some(message) = several_loads(label, runs) {
                return fail(err, "compare", message, Outcome::Unusable);
            }
        }
        for (label, runs) in [("A", &a), ("B", &b)] {
            for note in group_notes(label, runs) {
                writeln!(err, "{PROGRAM} compare: note: {note}")?;
            }
        }
        let verdict =
            verdict_of_groups(&a.iter().collect::<Vec<_>>(), &b.iter().collect::<Vec<_>>());
        return write_verdict(
            args,
            &verdict,
            &describe_group(&a),
            &describe_group(&b),
            out,
        );
    }
    let [a_path, b_path] = args.files.as_slice() else {
        return fail(
            err,
            "compare",
            format!(
                "expected two FILEs (A then B), got {}; e.g. `{PROGRAM} compare a.json b.json`, \
                 or groups of repeated runs with --a … --b …. Run `{PROGRAM} compare --help`.",
                args.files.len()
            ),
            Outcome::Unusable,
        );
    };
    let mut runs = Vec::new();
    for (label, path) in [("A", a_path), ("B", b_path)] {
        let read = match read_one(path, "compare") {
            Ok(read) => read,
            Err(error) => return fail(err, "compare", error, Outcome::Unusable),
        };
        match one_run(read, label) {
            Ok(run) => runs.push(run),
            Err(message) => return fail(err, "compare", message, Outcome::Invalid),
        }
    }
    let verdict = verdict_of_runs(&runs[0], &runs[1]);
    let describe = |run: &OpenedArtifact| {
        format!(
            "{} ({})",
            run.file_name,
            counted(run.rows.len() as u64, "row", "rows")
        )
    };
    write_verdict(
        args,
        &verdict,
        &describe(&runs[0]),
        &describe(&runs[1]),
        out,
    )
}

/// The runs one read holds, or why it holds none strobe can compare.
fn runs_of(read: Results) -> Result<Vec<OpenedArtifact>, String> {
    runs_in(&read, &read.name, false)
}

/// The one run of side `label`'s file.
fn one_run(read: Results, label: &str) -> Result<OpenedArtifact, String> {
    let name = read.name.clone();
    let mut runs = runs_of(read)?;
    if runs.len() != 1 {
        return Err(format!(
            "{name} (run {label}) holds {}; compare two runs one file each, or pass a report's \
             runs as a group with --{}",
            counted(runs.len() as u64, "run", "runs"),
            label.to_lowercase()
        ));
    }
    Ok(runs.remove(0))
}

/// Every run of group `label`'s paths (folders and zip archives opened up).
fn read_group(paths: &[PathBuf], label: &str) -> Result<Vec<OpenedArtifact>, (String, Outcome)> {
    let mut notes = Vec::new();
    let mut runs = Vec::new();
    for entry in read_each(paths, &mut notes) {
        let read = entry.map_err(|error| (error.to_string(), Outcome::Unusable))?;
        runs.extend(runs_of(read).map_err(|message| (message, Outcome::Invalid))?);
    }
    if runs.is_empty() {
        return Err((
            format!("group {label} holds no run; pass its artifacts"),
            Outcome::Unusable,
        ));
    }
    Ok(runs)
}

/// Why group `label` cannot be one group: its runs are steps of a sweep at different loads
/// (a sweep whose steps were repeated holds one repeat group per step), which are not repeats
/// of one plan; `None` when they span one load or none.
fn several_loads(label: &str, runs: &[OpenedArtifact]) -> Option<String> {
    let loads = sweep_loads(runs);
    if loads.len() < 2 {
        return None;
    }
    let side = label.to_lowercase();
    Some(format!(
        "group {label} holds sweep steps at {} different loads: {}. Runs at different loads \
         are not repeats of one plan, so they are not pooled: pass one step's runs to --{side} \
         (its files end in -stepNN-…-repeatNN.json, e.g. `--{side} sweep/*-step02-*.json`), \
         and compare a step with a step",
        loads.len(),
        loads
            .iter()
            .map(|load| load.describe())
            .collect::<Vec<_>>()
            .join("; ")
    ))
}

/// What a reader of a group should know: repeats missing or given twice, several groups mixed.
fn group_notes(label: &str, runs: &[OpenedArtifact]) -> Vec<String> {
    let groups = group_repeats(runs);
    let mut notes = Vec::new();
    if groups.len() > 1 {
        notes.push(format!(
            "group {label} mixes {} repeat groups ({}); they are pooled as one",
            groups.len(),
            groups
                .iter()
                .map(|group| group.group_id.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    for group in &groups {
        if !group.missing.is_empty() {
            notes.push(format!(
                "group {label}: repeat group {} lacks repeat {} of {}",
                group.group_id,
                group
                    .missing
                    .iter()
                    .map(|index| (index + 1).to_string())
                    .collect::<Vec<_>>()
                    .join(", "),
                group.planned.unwrap_or(0)
            ));
        }
        if !group.duplicated.is_empty() {
            notes.push(format!(
                "group {label}: repeat group {} has repeat {} more than once (the same file \
                 twice?); each copy counts",
                group.group_id,
                group
                    .duplicated
                    .iter()
                    .map(|index| (index + 1).to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
    }
    notes
}

fn describe_group(runs: &[OpenedArtifact]) -> String {
    let first = runs
        .first()
        .map_or(String::new(), |run| run.file_name.to_string());
    match runs.len() {
        1 => format!("{first} (1 run)"),
        n => format!("{first} and {} more ({n} runs)", n - 1),
    }
}

fn write_verdict(
    args: &Args,
    verdict: &Verdict,
    a: &str,
    b: &str,
    out: &mut dyn Write,
) -> io::Result<Outcome> {
    if args.json.json {
        JsonOutput::write(&verdict.to_json(), out)?;
    } else {
        write!(out, "{}", render_table(verdict, a, b))?;
    }
    Ok(Outcome::Success)
}

/// The verdict as a table a person reads, then each metric's sentence.
fn render_table(verdict: &Verdict, a: &str, b: &str) -> String {
    let groups = matches!(
        verdict.metrics.first().map(|metric| &metric.sides),
        Some(Sides::Groups(..))
    );
    let mut rows: Vec<[String; 5]> = vec![[
        "Metric".to_owned(),
        if groups { "A p50" } else { "A median" }.to_owned(),
        if groups { "B p50" } else { "B median" }.to_owned(),
        "B/A".to_owned(),
        "p (Holm)".to_owned(),
    ]];
    for metric in &verdict.metrics {
        let unit = metric.metric.unit();
        let (a_text, b_text) = match &metric.sides {
            Sides::Runs(a, b) => (
                median_text(a.median, a.n, unit),
                median_text(b.median, b.n, unit),
            ),
            Sides::Groups(a, b) => (group_text(a, unit), group_text(b, unit)),
        };
        rows.push([
            metric.metric.short_label().to_owned(),
            a_text,
            b_text,
            metric
                .ratio
                .map_or("-".to_owned(), |ratio| format!("{ratio:.3}")),
            p_text(metric),
        ]);
    }
    let widths: Vec<usize> = (0..5)
        .map(|column| {
            rows.iter()
                .map(|row| row[column].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut text = format!("A: {a}\nB: {b}\n\n");
    if let Some(sentence) = &verdict.workloads_differ {
        text.push_str(&format!("Different workloads: {sentence}\n\n"));
    }
    for row in &rows {
        let cells: Vec<String> = row
            .iter()
            .zip(&widths)
            .map(|(cell, width)| format!("{cell:<width$}"))
            .collect();
        text.push_str(cells.join("  ").trim_end());
        text.push('\n');
    }
    text.push('\n');
    for metric in &verdict.metrics {
        text.push_str(&format!(
            "{}: {}\n",
            metric.metric.short_label(),
            metric.sentence()
        ));
        if let Sides::Groups(a, b) = &metric.sides {
            for (label, side) in [("A", a), ("B", b)] {
                if let Some(flag) = side.p50.as_ref().and_then(disagreement) {
                    text.push_str(&format!("  {label}'s p50: {flag}\n"));
                }
            }
        }
    }
    text.push_str(&format!(
        "\nα = {ALPHA}, Holm's correction across the metrics tested; {}.\n",
        if groups {
            "Welch's t-test over the runs' p50s, two-sided"
        } else {
            "Mann–Whitney U over the rows, two-sided"
        }
    ));
    text
}

fn median_text(median: Option<f64>, n: usize, unit: &str) -> String {
    match median {
        Some(median) => format!(
            "{} {unit} (n={})",
            format_with_separators(median),
            format_with_separators(n as f64)
        ),
        None => "-".to_owned(),
    }
}

fn group_text(side: &GroupSide, unit: &str) -> String {
    side.p50
        .as_ref()
        .map_or("-".to_owned(), |across| across_runs_text(across, unit))
}

fn p_text(metric: &MetricVerdict) -> String {
    match metric.outcome {
        TestOutcome::Tested {
            p_adjusted,
            significant,
            ..
        } => {
            let p = format_p(p_adjusted);
            let p = p
                .trim_start_matches("p = ")
                .trim_start_matches("p ")
                .to_owned();
            if significant {
                format!("{p} *")
            } else {
                p
            }
        }
        TestOutcome::TooFew(_) => "-".to_owned(),
    }
}
