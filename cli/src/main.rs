//! `strobe-artifact`: validate, summarize and (later) recompute `anvil-serving.benchmark/v1`
//! artifacts on the command line with strobe's core.
//!
//! This file owns argument dispatch and the top-level help; each subcommand lives in
//! [`commands`] and is found through its registry, so adding one is one entry there.

mod commands;
mod input;

use std::io::{self, Write};
use std::process::ExitCode;

use commands::{Command, Outcome, COMMANDS};

const PROGRAM: &str = "strobe-artifact";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let stdout = io::stdout();
    let stderr = io::stderr();
    let outcome = run(&args, &mut stdout.lock(), &mut stderr.lock());
    ExitCode::from(outcome.code())
}

/// Dispatches `args` (without the program name) to a subcommand.
fn run(args: &[String], out: &mut dyn Write, err: &mut dyn Write) -> Outcome {
    let result = match args.first().map(String::as_str) {
        None => {
            let _ = write_usage(err);
            return Outcome::Unusable;
        }
        Some("-h" | "--help") => write_usage(out).map(|()| Outcome::Success),
        Some("-V" | "--version") => {
            writeln!(out, "{PROGRAM} {}", env!("CARGO_PKG_VERSION")).map(|()| Outcome::Success)
        }
        Some("help") => help_for(args.get(1).map(String::as_str), out, err),
        Some(name) => match find_command(name) {
            Some(command) => (command.run)(&args[1..], out, err),
            None => writeln!(
                err,
                "{PROGRAM}: unknown command {name:?}; the commands are {}. Run `{PROGRAM} --help`.",
                command_names()
            )
            .map(|()| Outcome::Unusable),
        },
    };
    // A closed pipe (e.g. `| head`) is not the artifact's fault; report nothing more.
    result.unwrap_or(Outcome::Unusable)
}

fn find_command(name: &str) -> Option<&'static Command> {
    COMMANDS.iter().find(|command| command.name == name)
}

fn command_names() -> String {
    COMMANDS
        .iter()
        .map(|command| command.name)
        .collect::<Vec<_>>()
        .join(", ")
}

fn help_for(name: Option<&str>, out: &mut dyn Write, err: &mut dyn Write) -> io::Result<Outcome> {
    match name {
        None => write_usage(out).map(|()| Outcome::Success),
        Some(name) => match find_command(name) {
            Some(command) => write!(out, "{}", command.help).map(|()| Outcome::Success),
            None => writeln!(
                err,
                "{PROGRAM}: no help for unknown command {name:?}; the commands are {}.",
                command_names()
            )
            .map(|()| Outcome::Unusable),
        },
    }
}

fn write_usage(out: &mut dyn Write) -> io::Result<()> {
    writeln!(
        out,
        "{PROGRAM} {}: read anvil-serving.benchmark/v1 capacity artifacts (all four generations)\n",
        env!("CARGO_PKG_VERSION")
    )?;
    writeln!(out, "Usage: {PROGRAM} <command> [options] FILE...\n")?;
    writeln!(out, "Commands:")?;
    for command in COMMANDS {
        writeln!(out, "  {:<10} {}", command.name, command.summary)?;
    }
    writeln!(
        out,
        "\nRun `{PROGRAM} <command> --help` for a command's options.\n\
         Exit codes: 0 success, 1 an artifact is invalid, 2 a file is unreadable or the usage is wrong."
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run_to_strings(args: &[&str]) -> (Outcome, String, String) {
        let args: Vec<String> = args.iter().map(|arg| arg.to_string()).collect();
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let outcome = run(&args, &mut out, &mut err);
        (
            outcome,
            String::from_utf8(out).expect("utf-8"),
            String::from_utf8(err).expect("utf-8"),
        )
    }

    #[test]
    fn no_arguments_is_a_usage_error_that_lists_the_commands() {
        let (outcome, out, err) = run_to_strings(&[]);
        assert_eq!(outcome, Outcome::Unusable);
        assert!(out.is_empty());
        for command in COMMANDS {
            assert!(err.contains(command.name), "{err}");
        }
    }

    #[test]
    fn unknown_commands_name_the_known_ones() {
        let (outcome, _, err) = run_to_strings(&["check", "x.json"]);
        assert_eq!(outcome, Outcome::Unusable);
        assert!(err.contains("validate, summary, recompute"), "{err}");
    }

    #[test]
    fn help_subcommand_and_flag_print_the_same_text() {
        let (outcome, via_help, _) = run_to_strings(&["help", "summary"]);
        assert_eq!(outcome, Outcome::Success);
        let (_, via_flag, _) = run_to_strings(&["summary", "--help"]);
        assert_eq!(via_help, via_flag);
    }
}
