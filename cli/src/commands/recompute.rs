//! `strobe-artifact recompute`: recompute every field of one artifact that its rows determine
//! and compare each with the stored value bit for bit (ARTIFACT.md §7.3).

use std::collections::BTreeMap;
use std::io::{self, Write};
use std::path::Path;

use serde_json::{json, Value};
use strobe::core::artifact::recompute::{recompute_from_rows, Recomputation};
use strobe::core::python::json::dumps_sorted;

use super::{parse_args, Command, Outcome};
use crate::input::read_text;

/// The `recompute` entry in the registry.
pub const COMMAND: Command = Command {
    name: "recompute",
    summary: "recompute derived fields and metrics from the rows, bit for bit",
    help: "\
Usage: strobe-artifact recompute [--json] FILE

Recomputes every field of FILE that its request_timings rows determine and compares each with
the stored value bit for bit (an int where a float belongs counts as a difference): the derived
fields of each row, the 11 distribution families and the scalar metrics (throughput from
wall_clock_ms), performance_eligible, responses_received, measurement_protocol,
metric_population, run_id and the ISO labels. prefix_cache_hit_avg is recomputed only when the
rows carry cached_tokens (strobe's rows do; the reference producer's do not). Works on modern
and G3 artifacts; G1 and G2 keep no rows.

Options:
  --json      print one JSON object {file, generation, exact, mismatch, skipped, diffs,
              skipped_fields} instead of text
  -h, --help  print this help

Exit codes:
  0  every recomputed field matches
  1  at least one field differs (each is listed with its JSON path)
  2  the file could not be read, is not JSON, cannot be recomputed (G1/G2, malformed rows),
     or bad usage
",
    run,
};

fn run(args: &[String], out: &mut dyn Write, err: &mut dyn Write) -> io::Result<Outcome> {
    let parsed = match parse_args("recompute", args, &["--json"]) {
        Ok(parsed) => parsed,
        Err(message) => {
            writeln!(err, "{message}")?;
            return Ok(Outcome::Unusable);
        }
    };
    if parsed.help {
        write!(out, "{}", COMMAND.help)?;
        return Ok(Outcome::Success);
    }
    let [file] = parsed.files.as_slice() else {
        writeln!(
            err,
            "strobe-artifact recompute: expected exactly one FILE, got {}; e.g. \
             `strobe-artifact recompute run.json`. Run `strobe-artifact recompute --help`.",
            parsed.files.len()
        )?;
        return Ok(Outcome::Unusable);
    };
    let text = match read_text(Path::new(file)) {
        Ok(text) => text,
        Err(error) => {
            writeln!(err, "strobe-artifact recompute: {error}")?;
            return Ok(Outcome::Unusable);
        }
    };
    let value: Value = match serde_json::from_str(&text) {
        Ok(value) => value,
        Err(error) => {
            writeln!(
                err,
                "strobe-artifact recompute: {file}: not JSON ({error}); run \
                 `strobe-artifact validate {file}` for details"
            )?;
            return Ok(Outcome::Unusable);
        }
    };
    let report = match recompute_from_rows(&value) {
        Ok(report) => report,
        Err(error) => {
            writeln!(err, "strobe-artifact recompute: {file}: {error}")?;
            return Ok(Outcome::Unusable);
        }
    };
    if parsed.flags.contains(&"--json") {
        let mut object = report.to_json();
        object["file"] = json!(file);
        let text = serde_json::to_string_pretty(&object).map_err(io::Error::other)?;
        writeln!(out, "{text}")?;
    } else {
        write_human(file, &report, out)?;
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
            const SHOWN_PATHS: usize = 4;
            let mut listed = paths
                .iter()
                .take(SHOWN_PATHS)
                .copied()
                .collect::<Vec<_>>()
                .join(", ");
            if paths.len() > SHOWN_PATHS {
                listed.push_str(&format!(" and {} more", paths.len() - SHOWN_PATHS));
            }
            writeln!(out, "    {listed}: {reason}")?;
        }
    }
    Ok(())
}
