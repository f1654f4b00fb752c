//! The subcommand registry: each command is a name, help text and a run function. To add one,
//! write a module with a `COMMAND` constant and list it in [`COMMANDS`].

mod convert;
mod import_locust;
mod plan;
mod recompute;
mod summary;
mod validate;

use std::io::{self, Write};

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

/// A command's entry point: arguments after the command name, stdout, stderr.
pub type RunFn = fn(&[String], &mut dyn Write, &mut dyn Write) -> io::Result<Outcome>;

/// One subcommand.
pub struct Command {
    /// The word typed after `strobe-artifact`.
    pub name: &'static str,
    /// One line for the top-level help.
    pub summary: &'static str,
    /// The full `--help` text.
    pub help: &'static str,
    /// The entry point.
    pub run: RunFn,
}

/// Every subcommand, in help order.
pub const COMMANDS: &[Command] = &[
    validate::COMMAND,
    summary::COMMAND,
    recompute::COMMAND,
    convert::COMMAND,
    plan::COMMAND,
    import_locust::COMMAND,
];

/// Options shared by the file-taking commands: flags (all known to the caller) and files.
#[derive(Debug)]
pub struct ParsedArgs {
    /// Flags that were given, e.g. `--json`.
    pub flags: Vec<&'static str>,
    /// Everything that is not a flag; after `--`, everything.
    pub files: Vec<String>,
    /// `-h`/`--help` was given.
    pub help: bool,
}

/// Splits arguments into known flags and files. An unknown option is an error message naming
/// the command's help.
pub fn parse_args(
    command: &str,
    args: &[String],
    known_flags: &[&'static str],
) -> Result<ParsedArgs, String> {
    let mut parsed = ParsedArgs {
        flags: Vec::new(),
        files: Vec::new(),
        help: false,
    };
    let mut options_done = false;
    for arg in args {
        if options_done || arg == "-" || !arg.starts_with('-') {
            parsed.files.push(arg.clone());
        } else if arg == "--" {
            options_done = true;
        } else if arg == "-h" || arg == "--help" {
            parsed.help = true;
        } else if let Some(flag) = known_flags.iter().find(|flag| **flag == arg) {
            parsed.flags.push(flag);
        } else {
            let known = if known_flags.is_empty() {
                "it takes no options".to_string()
            } else {
                format!("its options are {}", known_flags.join(", "))
            };
            return Err(format!(
                "strobe-artifact {command}: unknown option {arg:?}; {known}. Run `strobe-artifact {command} --help`. \
                 (To pass a file whose name starts with '-', put it after `--`.)"
            ));
        }
    }
    Ok(parsed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(args: &[&str]) -> Vec<String> {
        args.iter().map(|arg| arg.to_string()).collect()
    }

    #[test]
    fn flags_files_and_the_double_dash() {
        let parsed = parse_args(
            "validate",
            &strings(&["a.json", "--json", "--", "--odd.json"]),
            &["--json"],
        )
        .expect("parses");
        assert_eq!(parsed.flags, vec!["--json"]);
        assert_eq!(parsed.files, strings(&["a.json", "--odd.json"]));
        assert!(!parsed.help);
    }

    #[test]
    fn unknown_options_name_the_known_ones() {
        let error =
            parse_args("validate", &strings(&["--jsno"]), &["--json"]).expect_err("unknown");
        assert!(
            error.contains("\"--jsno\"") && error.contains("--json"),
            "{error}"
        );
    }

    #[test]
    fn worst_outcome_wins() {
        assert_eq!(Outcome::Success.worst(Outcome::Invalid), Outcome::Invalid);
        assert_eq!(Outcome::Unusable.worst(Outcome::Invalid), Outcome::Unusable);
    }
}
