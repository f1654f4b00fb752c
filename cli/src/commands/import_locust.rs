//! `strobe-artifact import-locust`: the records Locust's workers wrote running a strobe plan,
//! as one `anvil-serving.benchmark/v1` artifact on standard output, read by the same core path
//! as a run from the page (docs/locust.md).

use std::io::{self, Write};
use std::path::PathBuf;

use strobe::core::read::locust::import::import_records;

use super::{parse_args, Command, Outcome};
use crate::input::read_records;

/// The `import-locust` entry in the registry.
pub const COMMAND: Command = Command {
    name: "import-locust",
    summary: "turn the records of a plan run on Locust's workers into one artifact",
    help: "\
Usage: strobe-artifact import-locust RECORDS...

RECORDS are the files the locustfile's workers wrote (worker-W-PID.jsonl, one per worker
process), or the folder holding them (STROBE_RECORDS). Every read's bytes go through strobe's
own stream reader, accumulator and checks, as a run from the page does, and the artifact goes
to standard output with a `client` block naming Locust (its version, the workers, their hosts,
which clock the timeline is on and how far the workers' clocks agree, in `client.distributed`). Warnings go to standard
error. The files must be one whole run: every worker's file once, every request of the plan
once.

Options:
  -h, --help  print this help

Exit codes:
  0  wrote the artifact
  1  the records are broken or not one whole run (the file, line and field are named)
  2  a file could not be read, no records were found, or bad usage
",
    run,
};

fn run(args: &[String], out: &mut dyn Write, err: &mut dyn Write) -> io::Result<Outcome> {
    let parsed = match parse_args("import-locust", args, &[]) {
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
            "strobe-artifact import-locust: name the records: the worker-*.jsonl files or their \
             folder. Run `strobe-artifact import-locust --help`."
        )?;
        return Ok(Outcome::Unusable);
    }
    let paths: Vec<PathBuf> = parsed.files.iter().map(PathBuf::from).collect();
    let files = match read_records(&paths) {
        Ok(files) => files,
        Err(error) => {
            writeln!(err, "strobe-artifact import-locust: {error}")?;
            return Ok(Outcome::Unusable);
        }
    };
    if files.is_empty() {
        writeln!(
            err,
            "strobe-artifact import-locust: no records in {}: the workers write worker-*.jsonl \
             into STROBE_RECORDS when they finish",
            parsed.files.join(", ")
        )?;
        return Ok(Outcome::Unusable);
    }
    let artifact = match import_records(&files) {
        Ok(artifact) => artifact,
        Err(error) => {
            writeln!(err, "strobe-artifact import-locust: {error}")?;
            return Ok(Outcome::Invalid);
        }
    };
    let text = match artifact.to_json_text() {
        Ok(text) => text,
        Err(error) => {
            writeln!(err, "strobe-artifact import-locust: {error}")?;
            return Ok(Outcome::Invalid);
        }
    };
    let block = artifact
        .client
        .as_ref()
        .and_then(|client| client.distributed.as_ref());
    if let Some(block) = block {
        for warning in &block.warnings {
            writeln!(err, "strobe-artifact import-locust: warning: {warning}")?;
        }
    }
    out.write_all(text.as_bytes())?;
    Ok(Outcome::Success)
}
