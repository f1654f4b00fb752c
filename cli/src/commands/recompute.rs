//! `strobe-artifact recompute`: placeholder until the artifact builder exists.

use std::io::{self, Write};

use super::{parse_args, Command, Outcome};

/// The `recompute` entry in the registry.
pub const COMMAND: Command = Command {
    name: "recompute",
    summary: "recompute derived fields and metrics from the rows (not yet available)",
    help: "\
Usage: strobe-artifact recompute FILE

Recomputes every derivable field of FILE (row-derived timings, the 11 distribution families,
scalar metrics, metric_population) from its raw measurements and compares them bit for bit.
Not yet available: it needs strobe's artifact builder.

Options:
  -h, --help  print this help

Exit codes:
  2  always, until the command is implemented
",
    run,
};

fn run(args: &[String], out: &mut dyn Write, err: &mut dyn Write) -> io::Result<Outcome> {
    let parsed = match parse_args("recompute", args, &[]) {
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
    // TODO(artifact builder): read the file, rebuild rows and metrics with
    // `strobe::core::artifact`, and report EXACT/CLOSE/MISMATCH per field as ARTIFACT.md §7.3 does.
    writeln!(
        err,
        "strobe-artifact recompute: not yet available; it will arrive with strobe's artifact \
         builder. Use `strobe-artifact validate FILE` to check an artifact meanwhile."
    )?;
    Ok(Outcome::Unusable)
}
