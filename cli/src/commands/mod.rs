//! The subcommands and what they share: the [`Command`] list clap parses, the exit codes
//! ([`Outcome`]), and the argument groups every command takes alike ([`Files`], [`JsonOutput`],
//! [`HelpFlag`]). A new command is a module with an `Args` type and a `run` function, listed
//! in [`Command`] and [`run`]; it reads files through [`crate::input`].

pub mod compare;
pub mod convert;
pub mod import_locust;
pub mod plan;
pub mod recompute;
pub mod report;
pub mod summary;
pub mod validate;
pub mod workload;

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use clap::{ArgAction, Subcommand};
use serde_json::Value;
use strobe::core::read::bundle::open_report;
use strobe::core::read::carried::looks_like_html;
use strobe::core::read::opened::foreign::read_aiperf_pair;
use strobe::core::read::opened::OpenedArtifact;

use crate::input::{read_one, Results};
use crate::PROGRAM;

/// How every command's help reads: usage first, then what it does, its options and its exit
/// codes (each command's `after_help`).
pub const HELP_TEMPLATE: &str =
    "{usage-heading} {usage}\n\n{about-with-newline}\n{all-args}{after-help}";

/// Every subcommand, in help order.
#[derive(Debug, Subcommand)]
pub enum Command {
    // Each command's help (its `about`, the line listed here, included) is on its `Args`.
    Validate(validate::Args),
    Summary(summary::Args),
    Compare(compare::Args),
    Report(report::Args),
    Recompute(recompute::Args),
    Convert(convert::Args),
    Plan(plan::Args),
    #[command(name = "import-locust")]
    ImportLocust(import_locust::Args),
    Workload(workload::Args),
}

/// The names typed after `strobe-artifact`, in help order.
pub const COMMAND_NAMES: [&str; 9] = [
    "validate",
    "summary",
    "compare",
    "report",
    "recompute",
    "convert",
    "plan",
    "import-locust",
    "workload",
];

/// Runs `command`, writing its output to `out` and its messages to `err`.
pub fn run(command: &Command, out: &mut dyn Write, err: &mut dyn Write) -> io::Result<Outcome> {
    match command {
        Command::Validate(args) => validate::run(args, out, err),
        Command::Summary(args) => summary::run(args, out, err),
        Command::Compare(args) => compare::run(args, out, err),
        Command::Report(args) => report::run(args, out, err),
        Command::Recompute(args) => recompute::run(args, out, err),
        Command::Convert(args) => convert::run(args, out, err),
        Command::Plan(args) => plan::run(args, out, err),
        Command::ImportLocust(args) => import_locust::run(args, out, err),
        Command::Workload(args) => workload::run(args, out, err),
    }
}

/// How a command ended; the process exit code follows from it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Everything read was valid (legacy counts as valid).
    Success,
    /// At least one artifact is invalid.
    Invalid,
    /// A file could not be read, the usage was wrong, or the command is unavailable.
    Unusable,
}

impl Outcome {
    /// The process exit code: 0, 1 or 2.
    pub fn code(self) -> u8 {
        match self {
            Outcome::Success => 0,
            Outcome::Invalid => 1,
            Outcome::Unusable => 2,
        }
    }

    /// The worse of two outcomes (unusable > invalid > success).
    pub fn worst(self, other: Outcome) -> Outcome {
        if self.code() >= other.code() {
            self
        } else {
            other
        }
    }
}

/// Writes `strobe-artifact COMMAND: MESSAGE` to `err` and gives `outcome`: every command's
/// messages start so, for scripts and for the reader of a CI log.
pub fn fail(
    err: &mut dyn Write,
    command: &str,
    message: impl std::fmt::Display,
    outcome: Outcome,
) -> io::Result<Outcome> {
    writeln!(err, "{PROGRAM} {command}: {message}")?;
    Ok(outcome)
}

/// `-h`/`--help`, both printing the whole help (clap's `-h` would print a shorter one).
#[derive(Debug, clap::Args)]
pub struct HelpFlag {
    /// Print this help.
    #[arg(short = 'h', long = "help", action = ArgAction::HelpLong)]
    help: Option<bool>,
}

/// The files a command reads, as given (a command that reads one says so when given more).
#[derive(Debug, clap::Args)]
pub struct Files {
    /// What to read (a file whose name starts with `-` goes after `--`).
    #[arg(value_name = "FILE")]
    pub files: Vec<PathBuf>,
}

impl Files {
    /// The one file of a command that reads exactly one; else why not: with none, an example
    /// of `command`'s use; with several, `instead` (what works).
    pub fn one(&self, command: &str, instead: &str) -> Result<&Path, String> {
        match self.files.as_slice() {
            [file] => Ok(file),
            [] => Err(format!(
                "expected exactly one FILE, got 0; pass one, e.g. `{PROGRAM} {command} run.json`. \
                 Run `{PROGRAM} {command} --help`."
            )),
            files => Err(format!(
                "expected exactly one FILE, got {}; {instead}. Run `{PROGRAM} {command} --help`.",
                files.len()
            )),
        }
    }
}

impl Files {
    /// The text of the one file a one-file command reads ([`Files::one`], [`read_one`]), or the
    /// message that says why not (each is bad usage or an unreadable file: exit 2).
    pub fn read_the_one(&self, command: &'static str, instead: &str) -> Result<Results, String> {
        let file = self.one(command, instead)?;
        read_one(file, command).map_err(|error| error.to_string())
    }
}

/// `--json`: a machine-readable report on standard output instead of text.
#[derive(Debug, clap::Args)]
pub struct JsonOutput {
    /// Print JSON instead of text (keys sorted, two-space indent).
    #[arg(long)]
    pub json: bool,
}

impl JsonOutput {
    /// Writes `value` as the command's JSON report.
    pub fn write(value: &Value, out: &mut dyn Write) -> io::Result<()> {
        let text = serde_json::to_string_pretty(value).map_err(io::Error::other)?;
        writeln!(out, "{text}")
    }
}

/// The runs one read holds, named `name`, or why it holds none strobe can show: an AIPerf
/// folder's pair, strobe's own report when `reports` (the runs it carries), or the artifacts
/// and other tools' results the text holds. Shared by `compare` and `report`.
pub(crate) fn runs_in(
    read: &Results,
    name: &str,
    reports: bool,
) -> Result<Vec<OpenedArtifact>, String> {
    let runs = match &read.aiperf_summary {
        Some(summary) => match read_aiperf_pair(&read.text, summary) {
            Ok(run) => vec![OpenedArtifact::from_foreign(name, read.text.len(), run)],
            Err(error) => return Err(format!("{}: {error}", read.name)),
        },
        None if reports && looks_like_html(&read.text) => open_report(name, &read.text),
        None => OpenedArtifact::all_from_text(name, &read.text),
    };
    for run in &runs {
        if let Some(refusal) = &run.refusal {
            return Err(format!("{}: {refusal}", read.name));
        }
        if run.unrecognized {
            return Err(format!(
                "{}: not an artifact nor another tool's results strobe reads; run `{PROGRAM} \
                 validate {}` to see what it is",
                read.name, read.name
            ));
        }
    }
    Ok(runs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn worst_outcome_wins() {
        assert_eq!(Outcome::Success.worst(Outcome::Invalid), Outcome::Invalid);
        assert_eq!(Outcome::Unusable.worst(Outcome::Invalid), Outcome::Unusable);
        assert_eq!(Outcome::Success.worst(Outcome::Success), Outcome::Success);
    }

    #[test]
    fn one_file_commands_say_how_many_they_got_and_what_works() {
        let files = Files {
            files: vec!["a.json".into(), "b.json".into()],
        };
        let error = files
            .one("summary", "summarize one at a time")
            .expect_err("two files");
        assert!(
            error.starts_with("expected exactly one FILE, got 2; summarize one at a time."),
            "{error}"
        );
        assert!(error.contains("strobe-artifact summary --help"), "{error}");
        let one = Files {
            files: vec!["a.json".into()],
        };
        assert_eq!(one.one("summary", "-"), Ok(Path::new("a.json")));
    }
}
