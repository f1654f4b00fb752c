//! `strobe-artifact report`: the one-file HTML report of one run, or of several compared (a
//! sweep's steps draw its capacity curves), the same document the page's *Save report* saves:
//! the core's [`report_html`] makes both. It carries the files it was made from, so the page
//! loads the runs again from it.

use std::io::{self, Write};
use std::path::PathBuf;

use strobe::core::config::slo::{Slo, SloSpec, DEFAULT_SLO_TARGET_PERCENT};
use strobe::core::format::{counted, format_bytes};
use strobe::core::present::report::{report_html, ReportInput};
use strobe::core::read::opened::OpenedArtifact;

use super::{fail, runs_in, HelpFlag, Outcome};
use crate::input::{read_each, Results};
use crate::PROGRAM;

/// The whole help's description of `report`.
const LONG_ABOUT: &str = "\
Writes one HTML file that opens from disk, offline, in any current browser: each run's headline
numbers, key metrics, measurement notes and failures, every chart of strobe's page (drawn as
SVG, with values on hover), the SLO's verdict with --slo, and with several runs the comparison
against the first (its table, workload mismatches and the verdict of each difference) and the
capacity curves when they form one (a sweep's steps).

FILE may be an artifact, another tool's results, a zip archive or folder of them, or a report
saved earlier (its runs are read again). The report carries each file a run was read from,
byte for byte, so dropping it on strobe's page loads the same runs. It fetches nothing: a
Content-Security-Policy forbids every load, and text from the files is shown as text.";

/// `report FILE... --out FILE [--slo SPEC]`
#[derive(Debug, clap::Args)]
#[command(
    about = "Write the one-file HTML report of a run or a comparison",
    long_about = LONG_ABOUT,
    override_usage = "strobe-artifact report FILE... --out report.html [--slo ttft:500,tpot:50]",
    after_help = "\
Exit codes:
  0  the report is written
  1  a file is not a run strobe reads (not an artifact, or broken)
  2  a file could not be read, the report could not be written, or bad usage"
)]
pub struct Args {
    /// The runs, the first is the comparison's baseline (files, folders, zip archives).
    #[arg(value_name = "FILE")]
    files: Vec<PathBuf>,
    /// Where to write the report.
    #[arg(long, short = 'o', value_name = "FILE")]
    out: Option<PathBuf>,
    /// An SLO to judge the runs by, as the page's SLO field takes it (`ttft:500,tpot:50`).
    #[arg(long, value_name = "SPEC")]
    slo: Option<String>,
    #[command(flatten)]
    help: HelpFlag,
}

/// Runs `report`.
pub fn run(args: &Args, out: &mut dyn Write, err: &mut dyn Write) -> io::Result<Outcome> {
    let Some(target) = &args.out else {
        return fail(
            err,
            "report",
            format!(
                "say where to write the report with --out, e.g. `{PROGRAM} report run.json --out \
                 report.html`. Run `{PROGRAM} report --help`."
            ),
            Outcome::Unusable,
        );
    };
    if args.files.is_empty() {
        return fail(
            err,
            "report",
            format!(
                "expected one FILE or more, got 0; e.g. `{PROGRAM} report run.json --out \
                 report.html`. Run `{PROGRAM} report --help`."
            ),
            Outcome::Unusable,
        );
    }
    let slo = match args.slo.as_deref().map(Slo::parse_optional).transpose() {
        Ok(slo) => slo.flatten().map(|slo| SloSpec {
            slo,
            target: DEFAULT_SLO_TARGET_PERCENT / 100.0,
            sweep_min_attainment: None,
        }),
        Err(error) => return fail(err, "report", format!("--slo: {error}"), Outcome::Unusable),
    };
    let mut notes = Vec::new();
    let mut runs = Vec::new();
    for entry in read_each(&args.files, &mut notes) {
        let read = match entry {
            Ok(read) => read,
            Err(error) => return fail(err, "report", error, Outcome::Unusable),
        };
        match runs_of(read) {
            Ok(read_runs) => runs.extend(read_runs),
            Err(message) => return fail(err, "report", message, Outcome::Invalid),
        }
    }
    for note in notes {
        writeln!(err, "{PROGRAM} report: note: {note}")?;
    }
    let refs: Vec<&OpenedArtifact> = runs.iter().collect();
    let report = report_html(&ReportInput {
        runs: &refs,
        slo: slo.as_ref(),
        saved_at: None,
    });
    if let Err(error) = std::fs::write(target, &report.html) {
        return fail(
            err,
            "report",
            format!("cannot write {}: {error}", target.display()),
            Outcome::Unusable,
        );
    }
    for label in &report.not_carried {
        writeln!(
            err,
            "{PROGRAM} report: note: {label} is shown but not carried (read from several files)"
        )?;
    }
    writeln!(
        out,
        "wrote {} ({}): {}, carrying {}",
        target.display(),
        format_bytes(report.html.len()),
        counted(runs.len() as u64, "run", "runs"),
        counted(report.carried.len() as u64, "file", "files")
    )?;
    Ok(Outcome::Success)
}

/// The name a run is carried under: its file's name without folders, as the page names a
/// dropped file (`archive.zip › member.json` for an archive's member).
fn carried_name(shown: &str) -> &str {
    shown.rsplit(['/', '\\']).next().unwrap_or(shown)
}

/// The runs one read holds, carried under their file's name, or why it holds none.
fn runs_of(read: Results) -> Result<Vec<OpenedArtifact>, String> {
    runs_in(&read, carried_name(&read.name), true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_are_carried_under_their_file_names() {
        assert_eq!(carried_name("runs/a.json"), "a.json");
        assert_eq!(
            carried_name("dir/sweep.zip › step-1.json"),
            "sweep.zip › step-1.json"
        );
        assert_eq!(carried_name("a.json"), "a.json");
    }
}
