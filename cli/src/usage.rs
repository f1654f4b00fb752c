//! What a usage mistake prints: clap finds it, this module words it the way every
//! `strobe-artifact` message reads (`strobe-artifact COMMAND: what is wrong; what to do`),
//! naming the flag, the known options or commands, and the help to read. Help and version
//! requests are printed as they are.

use std::io::{self, Write};

use clap::error::{ContextKind, ContextValue, ErrorKind};

use crate::commands::{Outcome, COMMAND_NAMES};
use crate::PROGRAM;

/// Prints what `error` says and gives the outcome: help and version on `out` (exit 0), the
/// help of a bare command on `err` (exit 2), a usage mistake on `err` (exit 2). `command` is
/// the subcommand the arguments named, when they named one; `options` its long options.
pub fn report(
    error: &clap::Error,
    command: Option<&str>,
    options: &[String],
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> io::Result<Outcome> {
    match error.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
            write_lines(out, &error.render().to_string())?;
            Ok(Outcome::Success)
        }
        ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            write_lines(err, &error.render().to_string())?;
            Ok(Outcome::Unusable)
        }
        _ => {
            let prefix = match command {
                Some(command) => format!("{PROGRAM} {command}"),
                None => PROGRAM.to_owned(),
            };
            writeln!(
                err,
                "{prefix}: {}. Run `{prefix} --help`.",
                message(error, command, options)
            )?;
            Ok(Outcome::Unusable)
        }
    }
}

/// `text`, ending in exactly one line break (clap's version line has none).
fn write_lines(out: &mut dyn Write, text: &str) -> io::Result<()> {
    writeln!(out, "{}", text.trim_end_matches('\n'))
}

/// One context value of `error` as text.
fn context(error: &clap::Error, kind: ContextKind) -> Option<String> {
    match error.get(kind)? {
        ContextValue::String(text) => Some(text.clone()),
        ContextValue::Strings(texts) => Some(texts.join(", ")),
        _ => None,
    }
}

/// What is wrong, in words, without the help pointer.
fn message(error: &clap::Error, command: Option<&str>, options: &[String]) -> String {
    let invalid = context(error, ContextKind::InvalidArg);
    let suggested = context(error, ContextKind::SuggestedArg)
        .map(|suggestion| format!(" (did you mean {suggestion}?)"))
        .unwrap_or_default();
    match (error.kind(), invalid) {
        (ErrorKind::InvalidSubcommand, _) => {
            let name = context(error, ContextKind::InvalidSubcommand).unwrap_or_default();
            let suggested = context(error, ContextKind::SuggestedSubcommand)
                .map(|suggestion| format!(" (did you mean {suggestion}?)"))
                .unwrap_or_default();
            format!(
                "unknown command {name:?}{suggested}; the commands are {}",
                COMMAND_NAMES.join(", ")
            )
        }
        (ErrorKind::UnknownArgument, Some(argument)) if argument.starts_with('-') => {
            let known = if command.is_none() {
                format!(
                    "a command comes first ({}); its options follow it",
                    COMMAND_NAMES.join(", ")
                )
            } else if options.is_empty() {
                "it takes no options".to_owned()
            } else {
                format!("its options are {}", options.join(", "))
            };
            let dash = if command.is_some() {
                " (to pass a file whose name starts with '-', put it after `--`)"
            } else {
                ""
            };
            format!("unknown option {argument:?}{suggested}; {known}{dash}")
        }
        (ErrorKind::UnknownArgument, Some(argument)) => {
            format!("unexpected argument {argument:?} (it takes only its options)")
        }
        (ErrorKind::ArgumentConflict, Some(argument))
            if context(error, ContextKind::PriorArg).as_ref() == Some(&argument) =>
        {
            format!("{argument} is given more than once; give it once")
        }
        (ErrorKind::MissingRequiredArgument, Some(missing)) => {
            format!("{missing} is needed")
        }
        _ => first_line(error),
    }
}

/// clap's own message, its first line without the `error: ` heading.
fn first_line(error: &clap::Error) -> String {
    let rendered = error.render().to_string();
    let line = rendered.lines().next().unwrap_or_default();
    line.strip_prefix("error: ").unwrap_or(line).to_owned()
}
