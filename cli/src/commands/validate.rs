//! `strobe-artifact validate`: the §9 reading rules over one or more files, as a human report
//! or a JSON array.

use std::io::{self, Write};
use std::path::Path;

use serde_json::{json, Value};
use strobe::core::read::validate::report::Report;
use strobe::core::read::validate::validate_artifact_text;

use super::{parse_args, Command, Outcome};
use crate::input::read_text;

/// The `validate` entry in the registry.
pub const COMMAND: Command = Command {
    name: "validate",
    summary: "check artifacts against every reading rule (ARTIFACT.md §9)",
    help: "\
Usage: strobe-artifact validate [--json] FILE...

Checks each FILE against every reading rule of ARTIFACT.md §9 and reports the verdict, the
detected generation (G1 legacy minimal, G2, G3 or modern) and every violation with its JSON
path and rule id. Older generations are checked with the legacy-tolerant rules and count as
valid.

Options:
  --json      print a JSON array with one report object per file instead of text
  -h, --help  print this help

Exit codes:
  0  every file is valid (or valid legacy)
  1  at least one file is invalid (including files that are not JSON)
  2  at least one file could not be read (missing, a directory, not UTF-8), or bad usage
",
    run,
};

/// What happened to one file.
enum FileResult {
    Read(Report),
    Unreadable(String),
}

fn run(args: &[String], out: &mut dyn Write, err: &mut dyn Write) -> io::Result<Outcome> {
    let parsed = match parse_args("validate", args, &["--json"]) {
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
    if parsed.files.is_empty() {
        writeln!(
            err,
            "strobe-artifact validate: no files given; pass one or more artifact paths, e.g. \
             `strobe-artifact validate run.json`. Run `strobe-artifact validate --help`."
        )?;
        return Ok(Outcome::Unusable);
    }
    let results: Vec<(String, FileResult)> = parsed
        .files
        .iter()
        .map(|file| {
            let result = match read_text(Path::new(file)) {
                Ok(text) => FileResult::Read(validate_artifact_text(&text)),
                Err(error) => FileResult::Unreadable(error.to_string()),
            };
            (file.clone(), result)
        })
        .collect();
    let outcome = results
        .iter()
        .map(|(_, result)| match result {
            FileResult::Read(report) if report.is_acceptable() => Outcome::Success,
            FileResult::Read(_) => Outcome::Invalid,
            FileResult::Unreadable(_) => Outcome::Unusable,
        })
        .fold(Outcome::Success, Outcome::worst);
    if parsed.flags.contains(&"--json") {
        write_json(&results, out)?;
    } else {
        write_human(&results, out)?;
    }
    Ok(outcome)
}

fn write_human(results: &[(String, FileResult)], out: &mut dyn Write) -> io::Result<()> {
    let (mut valid, mut invalid, mut unreadable) = (0, 0, 0);
    for (index, (file, result)) in results.iter().enumerate() {
        if index > 0 {
            writeln!(out)?;
        }
        writeln!(out, "{file}")?;
        match result {
            FileResult::Read(report) => {
                if report.is_acceptable() {
                    valid += 1;
                } else {
                    invalid += 1;
                }
                for line in report.to_string().lines() {
                    writeln!(out, "  {line}")?;
                }
            }
            FileResult::Unreadable(reason) => {
                unreadable += 1;
                writeln!(out, "  verdict:    unreadable")?;
                writeln!(out, "  error:      {reason}")?;
            }
        }
    }
    if results.len() > 1 {
        writeln!(
            out,
            "\n{} files: {valid} valid, {invalid} invalid, {unreadable} unreadable",
            results.len()
        )?;
    }
    Ok(())
}

fn write_json(results: &[(String, FileResult)], out: &mut dyn Write) -> io::Result<()> {
    let reports: Vec<Value> = results
        .iter()
        .map(|(file, result)| match result {
            FileResult::Read(report) => {
                let mut value = report.to_json();
                value["file"] = json!(file);
                value
            }
            FileResult::Unreadable(reason) => json!({
                "file": file,
                "verdict": "unreadable",
                "generation": null,
                "error": reason,
                "violations": [],
            }),
        })
        .collect();
    let text = serde_json::to_string_pretty(&Value::Array(reports)).map_err(io::Error::other)?;
    writeln!(out, "{text}")
}
