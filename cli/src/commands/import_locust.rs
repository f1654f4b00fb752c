//! `strobe-artifact import-locust`: the records Locust's workers wrote running a strobe plan,
//! as one `anvil-serving.benchmark/v1` artifact on standard output, read by the same core path
//! as a run from the page (docs/operate/locust.md).

use std::io::{self, Write};
use std::path::PathBuf;

use strobe::core::read::opened::locust::import::import_records;

use super::{fail, HelpFlag, Outcome};
use crate::input::read_records;

/// The whole help's description of `import-locust`.
const LONG_ABOUT: &str = "\
RECORDS are the files the locustfile's workers wrote (worker-W-PID.jsonl, one per worker
process), or the folder holding them (STROBE_RECORDS). Every read's bytes go through strobe's
own stream reader, accumulator and checks, as a run from the page does, and the artifact goes
to standard output with a `client` block naming Locust (its version, the workers, their hosts,
which clock the timeline is on and how far the workers' clocks agree, in `client.distributed`).
Warnings go to standard error. The files must be one whole run: every worker's file once, every
request of the plan once.";

/// `import-locust RECORDS...`
#[derive(Debug, clap::Args)]
#[command(
    about = "Turn the records of a plan run on Locust's workers into one artifact",
    long_about = LONG_ABOUT,
    override_usage = "strobe-artifact import-locust RECORDS...",
    after_help = "\
Exit codes:
  0  wrote the artifact
  1  the records are broken or not one whole run (the file, line and field are named)
  2  a file could not be read or is no worker's records file (an artifact, another tool's
     results), no records were found, or bad usage"
)]
pub struct Args {
    /// The workers' records files, or the folder holding them.
    #[arg(value_name = "RECORDS")]
    records: Vec<PathBuf>,
    #[command(flatten)]
    help: HelpFlag,
}

/// Runs `import-locust`.
pub fn run(args: &Args, out: &mut dyn Write, err: &mut dyn Write) -> io::Result<Outcome> {
    let given = &args.records;
    if given.is_empty() {
        return fail(
            err,
            "import-locust",
            "name the records: the worker-*.jsonl files or their folder. Run \
             `strobe-artifact import-locust --help`.",
            Outcome::Unusable,
        );
    }
    let files = match read_records(given) {
        Ok(files) => files,
        Err(error) => return fail(err, "import-locust", error, Outcome::Unusable),
    };
    if files.is_empty() {
        let names: Vec<String> = given
            .iter()
            .map(|path| path.display().to_string())
            .collect();
        return fail(
            err,
            "import-locust",
            format!(
                "no records in {}: the workers write worker-*.jsonl into STROBE_RECORDS when \
                 they finish",
                names.join(", ")
            ),
            Outcome::Unusable,
        );
    }
    let artifact = match import_records(&files) {
        Ok(artifact) => artifact,
        Err(error) => return fail(err, "import-locust", error, Outcome::Invalid),
    };
    let text = match artifact.to_json_text() {
        Ok(text) => text,
        Err(error) => return fail(err, "import-locust", error, Outcome::Invalid),
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
