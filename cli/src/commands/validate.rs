//! `strobe-artifact validate`: the §9 reading rules over files, folders and zip archives, as a
//! human report or a JSON array. Another tool's results or Locust's records are named as what
//! they are, with the command that reads them, rather than checked as broken artifacts.

use std::io::{self, Write};
use std::path::Path;

use serde_json::{json, Value};
use strobe::core::read::validate::report::Report;
use strobe::core::read::validate::validate_artifact_text;

use super::{fail, Files, HelpFlag, JsonOutput, Outcome};
use crate::input::{identify, read_each, FileKind, Results};
use crate::PROGRAM;

/// The whole help's description of `validate`.
const LONG_ABOUT: &str = "\
Checks each FILE against every reading rule of ARTIFACT.md §9 and reports the verdict, the
detected generation (G1 legacy minimal, G2, G3 or modern) and every violation with its JSON
path and rule id. Older generations are checked with the legacy-tolerant rules and count as
valid.

A folder stands for the .json and .zip files in it, and a zip archive (a sweep's download) for
its .json members, each checked as a file of its own. Another tool's results (vLLM, GuideLLM,
AIPerf, or an AIPerf run's folder) and Locust workers' records are not artifacts: each is named
as what it is, with the command that reads it.";

/// `validate [--json] FILE...`
#[derive(Debug, clap::Args)]
#[command(
    about = "Check artifacts against every reading rule (ARTIFACT.md §9)",
    long_about = LONG_ABOUT,
    override_usage = "strobe-artifact validate [--json] FILE...",
    after_help = "\
Exit codes:
  0  every file is valid (or valid legacy)
  1  at least one file is invalid (including files that are not JSON), or is not an artifact
     (another tool's results, Locust's records)
  2  at least one file could not be read (missing, not UTF-8, an empty folder or archive),
     or bad usage"
)]
pub struct Args {
    #[command(flatten)]
    files: Files,
    #[command(flatten)]
    json: JsonOutput,
    #[command(flatten)]
    help: HelpFlag,
}

/// What became of one file.
enum FileResult {
    /// An artifact (or what may be one), with the validator's report.
    Read(Report),
    /// Not an artifact: what it is, and the command that reads it.
    NotAnArtifact {
        tool: Option<&'static str>,
        what: String,
    },
    /// Not read at all.
    Unreadable(String),
}

impl FileResult {
    fn outcome(&self) -> Outcome {
        match self {
            FileResult::Read(report) if report.is_acceptable() => Outcome::Success,
            FileResult::Read(_) | FileResult::NotAnArtifact { .. } => Outcome::Invalid,
            FileResult::Unreadable(_) => Outcome::Unusable,
        }
    }
}

/// Validates `results`, unless its content is another tool's or Locust's.
fn check(results: &Results) -> FileResult {
    let name = &results.name;
    match identify(&results.text) {
        FileKind::Foreign { tool, what } => {
            // Of an AIPerf run's folder, the folder is what the other commands read best.
            let shown = match (&results.aiperf_summary, Path::new(name).parent()) {
                (Some(_), Some(folder)) => folder.display().to_string(),
                _ => name.clone(),
            };
            FileResult::NotAnArtifact {
                tool: Some(tool),
                what: format!(
                    "{what}, not an artifact; `{PROGRAM} summary {shown}` shows it and \
                     `{PROGRAM} convert {shown} > run.json` writes it as one"
                ),
            }
        }
        FileKind::BrokenForeign { tool, error } => FileResult::NotAnArtifact {
            tool: Some(tool),
            what: error,
        },
        FileKind::LocustRecords => FileResult::NotAnArtifact {
            tool: None,
            what: format!(
                "a Locust worker's records file, not an artifact; `{PROGRAM} import-locust` \
                 turns a run's records into one"
            ),
        },
        FileKind::Empty | FileKind::Artifact | FileKind::Other => {
            FileResult::Read(validate_artifact_text(&results.text))
        }
    }
}

/// Runs `validate`.
pub fn run(args: &Args, out: &mut dyn Write, err: &mut dyn Write) -> io::Result<Outcome> {
    if args.files.files.is_empty() {
        return fail(
            err,
            "validate",
            format!(
                "no files given; pass one or more artifact paths, e.g. `{PROGRAM} validate \
                 run.json`, or a folder of them. Run `{PROGRAM} validate --help`."
            ),
            Outcome::Unusable,
        );
    }
    let mut notes = Vec::new();
    let results: Vec<(String, FileResult)> = read_each(&args.files.files, &mut notes)
        .into_iter()
        .map(|read| match read {
            Ok(results) => (results.name.clone(), check(&results)),
            Err(error) => (
                error.name().to_owned(),
                FileResult::Unreadable(error.to_string()),
            ),
        })
        .collect();
    for note in notes {
        writeln!(err, "{PROGRAM} validate: note: {note}")?;
    }
    let outcome = results
        .iter()
        .map(|(_, result)| result.outcome())
        .fold(Outcome::Success, Outcome::worst);
    if args.json.json {
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
            FileResult::NotAnArtifact { what, .. } => {
                invalid += 1;
                writeln!(out, "  verdict:    not an artifact")?;
                writeln!(out, "  read as:    {what}")?;
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
            FileResult::NotAnArtifact { tool, what } => json!({
                "file": file,
                "verdict": "foreign",
                "generation": null,
                "tool": tool,
                "error": what,
                "violations": [],
            }),
            FileResult::Unreadable(reason) => json!({
                "file": file,
                "verdict": "unreadable",
                "generation": null,
                "error": reason,
                "violations": [],
            }),
        })
        .collect();
    JsonOutput::write(&Value::Array(reports), out)
}
