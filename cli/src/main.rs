//! `strobe-artifact`: validate, summarize, compare, recompute and convert `anvil-serving.benchmark/v1`
//! artifacts, and plan and import runs on Locust's workers, on the command line with strobe's
//! core.
//!
//! This file owns the entry point: clap parses the arguments ([`Cli`]), [`usage`] words a
//! mistake, and [`commands`] runs the command; its [`commands::Outcome`] is the exit code.

mod commands;
mod input;
mod usage;

use std::ffi::OsString;
use std::io::{self, Write};
use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches, Parser};

use commands::{Command, HelpFlag, Outcome, COMMAND_NAMES, HELP_TEMPLATE};

/// The program's name, at the start of every message.
pub const PROGRAM: &str = "strobe-artifact";

/// The top-level help's closing lines.
const EXIT_CODES: &str = "\
Run `strobe-artifact <command> --help` (or `strobe-artifact help <command>`) for a command's
options and exit codes.

Exit codes: 0 success, 1 an artifact is invalid (or a file is not what the command reads),
2 a file is unreadable or the usage is wrong.";

/// `strobe-artifact`: read anvil-serving.benchmark/v1 capacity artifacts (all four
/// generations), and plan and import runs on Locust's workers.
#[derive(Debug, Parser)]
#[command(
    name = PROGRAM,
    version,
    about = "Read anvil-serving.benchmark/v1 capacity artifacts (all four generations), and plan\n\
             and import runs on Locust's workers",
    subcommand_value_name = "command",
    subcommand_help_heading = "Commands",
    arg_required_else_help = true,
    disable_help_flag = true,
    help_template = HELP_TEMPLATE,
    after_help = EXIT_CODES
)]
struct Cli {
    #[command(flatten)]
    help: HelpFlag,
    #[command(subcommand)]
    command: Command,
}

fn main() -> ExitCode {
    let stdout = io::stdout();
    let stderr = io::stderr();
    let outcome = run(std::env::args_os(), &mut stdout.lock(), &mut stderr.lock());
    ExitCode::from(outcome.code())
}

/// Parses `args` (the program's name first) and runs the command they name.
fn run(
    args: impl IntoIterator<Item = impl Into<OsString>>,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Outcome {
    let args: Vec<OsString> = args.into_iter().map(Into::into).collect();
    let parsed = command_line()
        .try_get_matches_from(&args)
        .and_then(|matches| Cli::from_arg_matches(&matches));
    let result = match parsed {
        Ok(cli) => commands::run(&cli.command, out, err),
        Err(error) => {
            let command = args
                .get(1)
                .and_then(|word| word.to_str())
                .filter(|word| COMMAND_NAMES.contains(word));
            usage::report(&error, command, &long_options(command), out, err)
        }
    };
    // A closed pipe (e.g. `| head`) is not the artifact's fault; report nothing more.
    result.unwrap_or(Outcome::Unusable)
}

/// The command line clap parses: [`Cli`], every command's help laid out alike (usage first,
/// exit codes last) and printed whole by `-h` as by `--help` ([`HelpFlag`]).
fn command_line() -> clap::Command {
    Cli::command()
        .mut_subcommands(|command| command.help_template(HELP_TEMPLATE).disable_help_flag(true))
}

/// The long options of `command` (of the program itself for `None`), e.g. `--json`, without
/// the help flag every one has.
fn long_options(command: Option<&str>) -> Vec<String> {
    let root = command_line();
    let command = match command {
        Some(name) => root.find_subcommand(name).cloned(),
        None => Some(root),
    };
    command
        .iter()
        .flat_map(|command| command.get_arguments())
        .filter_map(|argument| argument.get_long())
        .filter(|long| *long != "help")
        .map(|long| format!("--{long}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run_to_strings(args: &[&str]) -> (Outcome, String, String) {
        let args = std::iter::once(PROGRAM).chain(args.iter().copied());
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let outcome = run(args, &mut out, &mut err);
        (
            outcome,
            String::from_utf8(out).expect("utf-8"),
            String::from_utf8(err).expect("utf-8"),
        )
    }

    #[test]
    fn clap_accepts_the_command_definitions() {
        command_line().debug_assert();
    }

    #[test]
    fn no_arguments_is_a_usage_error_that_lists_the_commands() {
        let (outcome, out, err) = run_to_strings(&[]);
        assert_eq!(outcome, Outcome::Unusable);
        assert!(out.is_empty());
        for command in COMMAND_NAMES {
            assert!(err.contains(&format!("  {command} ")), "{err}");
        }
    }

    #[test]
    fn unknown_commands_name_the_known_ones() {
        let (outcome, _, err) = run_to_strings(&["check", "x.json"]);
        assert_eq!(outcome, Outcome::Unusable);
        assert!(
            err.contains(
                "validate, summary, compare, report, recompute, convert, plan, import-locust, workload"
            ),
            "{err}"
        );
    }

    #[test]
    fn help_subcommand_and_flags_print_the_same_text() {
        let (outcome, via_help, _) = run_to_strings(&["help", "summary"]);
        assert_eq!(outcome, Outcome::Success);
        let (_, via_long, _) = run_to_strings(&["summary", "--help"]);
        let (_, via_short, _) = run_to_strings(&["summary", "-h"]);
        assert_eq!(via_help, via_long);
        assert_eq!(via_short, via_long);
    }

    #[test]
    fn every_command_lists_its_own_options() {
        assert_eq!(long_options(Some("validate")), ["--json"]);
        assert_eq!(
            long_options(Some("plan")),
            ["--link", "--out", "--workload"]
        );
        assert!(long_options(Some("summary")).is_empty());
    }
}
