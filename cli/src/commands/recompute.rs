//! `strobe-artifact recompute`: recompute every field of one artifact that its rows determine
//! and compare each with the stored value bit for bit (ARTIFACT.md §7.3).

use std::collections::BTreeMap;
use std::io::{self, Write};

use serde_json::{json, Value};
use strobe::core::artifact::recompute::{recompute_from_rows, Recomputation};
use strobe::core::python::json::dumps_sorted;

use super::{fail, Files, HelpFlag, JsonOutput, Outcome};
use crate::input::{identify, listed, FileKind};
use crate::PROGRAM;

/// The whole help's description of `recompute`.
const LONG_ABOUT: &str = "\
Recomputes every field of FILE that its request_timings rows determine and compares each with
the stored value bit for bit (an int where a float belongs counts as a difference): the derived
fields of each row, the 11 distribution families and the scalar metrics (throughput from
wall_clock_ms), performance_eligible, responses_received, measurement_protocol,
metric_population, run_id and the ISO labels. prefix_cache_hit_avg is recomputed only when the
rows carry cached_tokens (strobe's rows do; the reference producer's do not). Works on modern
and G3 artifacts; G1 and G2 keep no rows, and a file `strobe-artifact convert` wrote holds
strobe's own metrics of another tool's rows, so there is nothing of a producer's to check.

--json prints one object: file, generation, exact, mismatch, skipped, diffs (path, stored,
recomputed) and skipped_fields (path, reason).";

/// `recompute [--json] FILE`
#[derive(Debug, clap::Args)]
#[command(
    about = "Recompute derived fields and metrics from the rows, bit for bit",
    long_about = LONG_ABOUT,
    override_usage = "strobe-artifact recompute [--json] FILE",
    after_help = "\
Exit codes:
  0  every recomputed field matches
  1  at least one field differs (each is listed with its JSON path)
  2  the file could not be read, is not JSON, cannot be recomputed (G1/G2, a converted file,
     another tool's results, malformed rows), or bad usage"
)]
pub struct Args {
    #[command(flatten)]
    files: Files,
    #[command(flatten)]
    json: JsonOutput,
    #[command(flatten)]
    help: HelpFlag,
}

/// Runs `recompute`.
pub fn run(args: &Args, out: &mut dyn Write, err: &mut dyn Write) -> io::Result<Outcome> {
    let read = match args
        .files
        .read_the_one("recompute", "recompute one artifact at a time")
    {
        Ok(read) => read,
        Err(message) => return fail(err, "recompute", message, Outcome::Unusable),
    };
    let name = read.name;
    let kind = identify(&read.text);
    let value: Value = match serde_json::from_str(&read.text) {
        Ok(value) => value,
        Err(error) => {
            let reason = match kind {
                FileKind::Empty => "the file is empty".to_owned(),
                FileKind::Foreign { what, .. } => format!("{what}, not an artifact"),
                kind @ FileKind::LocustRecords => kind.described(),
                _ => format!("not JSON ({error})"),
            };
            return fail(
                err,
                "recompute",
                format!("{name}: {reason}; run `{PROGRAM} validate {name}` for details"),
                Outcome::Unusable,
            );
        }
    };
    if let FileKind::Foreign { what, .. } = kind {
        return fail(
            err,
            "recompute",
            format!(
                "{name}: {what}, not an artifact: nothing of a producer's to recompute; \
                 `{PROGRAM} summary {name}` shows its numbers"
            ),
            Outcome::Unusable,
        );
    }
    let report = match recompute_from_rows(&value) {
        Ok(report) => report,
        Err(error) => {
            return fail(
                err,
                "recompute",
                format!("{name}: {error}"),
                Outcome::Unusable,
            )
        }
    };
    if args.json.json {
        let mut object = report.to_json();
        object["file"] = json!(name);
        JsonOutput::write(&object, out)?;
    } else {
        write_human(&name, &report, out)?;
    }
    Ok(if report.is_exact() {
        Outcome::Success
    } else {
        Outcome::Invalid
    })
}

/// A value as the artifact writes it (Python float reprs); containers on one line.
fn shown(value: &Value) -> String {
    match value {
        Value::Array(_) | Value::Object(_) => value.to_string(),
        _ => dumps_sorted(value).unwrap_or_else(|_| value.to_string()),
    }
}

fn write_human(file: &str, report: &Recomputation, out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, "{file}")?;
    writeln!(out, "  generation: {}", report.generation)?;
    writeln!(out, "  exact:      {}", report.exact)?;
    writeln!(out, "  mismatch:   {}", report.mismatch_count())?;
    writeln!(out, "  skipped:    {}", report.skipped_count())?;
    if !report.diffs.is_empty() {
        writeln!(out, "  differences:")?;
        for diff in &report.diffs {
            writeln!(
                out,
                "    {}: stored {}, recomputed {}",
                diff.path,
                shown(&diff.stored),
                shown(&diff.recomputed)
            )?;
        }
    }
    // One line per reason: G3 files skip dozens of fields for the same one.
    let mut by_reason: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for field in &report.skipped {
        by_reason
            .entry(field.reason.as_str())
            .or_default()
            .push(field.path.as_str());
    }
    if !by_reason.is_empty() {
        writeln!(out, "  not recomputed:")?;
        for (reason, paths) in by_reason {
            let listed = listed(&paths, 4);
            writeln!(out, "    {listed}: {reason}")?;
        }
    }
    Ok(())
}
