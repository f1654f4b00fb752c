//! `strobe-artifact convert`: another tool's results with per-request rows (vLLM, GuideLLM,
//! AIPerf) as an `anvil-serving.benchmark/v1` artifact on standard output, with a `source` block
//! naming the tool and how each quantity maps (docs/guide/results.md, *Other tools' files*).

use std::io::{self, Write};

use strobe::core::python::json::dumps_artifact;
use strobe::core::read::opened::foreign::convert::to_artifact;
use strobe::core::read::opened::foreign::{read_aiperf_pair, read_text, ForeignRun};
use strobe::core::read::validate::validate_artifact_text;

use super::{fail, Files, HelpFlag, Outcome};
use crate::input::{identify, FileKind};
use crate::PROGRAM;

/// The whole help's description of `convert`.
const LONG_ABOUT: &str = "\
Reads FILE, another tool's results with per-request rows -- `vllm bench serve --save-result
--save-detailed` JSON, a GuideLLM JSON report, AIPerf's profile_export.jsonl or the AIPerf
run's folder -- and writes an anvil-serving.benchmark/v1 artifact to standard output: its rows
under strobe's row rules, the metrics computed from them, every field the file cannot know
null, and a `source` block with the tool, its version, how each of TTFO, TTFT, E2E, TPOT and
the token counts maps to strobe's definition, the tool's own summary numbers, and the numbers
the converted rows cannot give (TPOT, decode and prefill rates and throughput when the tool's
token counts are not the server's), each with why and the tool's own figure for it.
`strobe-artifact validate` accepts the result, and `strobe-artifact summary` shows it.";

/// `convert [--benchmark N] FILE`
#[derive(Debug, clap::Args)]
#[command(
    about = "Write a vLLM, GuideLLM or AIPerf run as a v1 artifact to standard output",
    long_about = LONG_ABOUT,
    override_usage = "strobe-artifact convert [--benchmark N] FILE",
    after_help = "\
Exit codes:
  0  wrote the artifact
  1  FILE is another tool's file but broken (the message names the field), or has no rows
  2  FILE could not be read, is not a results file of another tool (an artifact already, an
     empty or cut-off file), or bad usage"
)]
pub struct Args {
    #[command(flatten)]
    files: Files,
    /// The benchmark of a GuideLLM report of several (1 = the first).
    #[arg(long, value_name = "N", value_parser = benchmark_number)]
    benchmark: Option<usize>,
    #[command(flatten)]
    help: HelpFlag,
}

/// `--benchmark`'s value: a number from 1.
fn benchmark_number(text: &str) -> Result<usize, String> {
    text.parse::<usize>()
        .ok()
        .filter(|&number| number >= 1)
        .ok_or_else(|| {
            "it takes a number from 1 (1 = the first benchmark), e.g. `--benchmark 2`".to_owned()
        })
}

/// Runs `convert`.
pub fn run(args: &Args, out: &mut dyn Write, err: &mut dyn Write) -> io::Result<Outcome> {
    let read = match args
        .files
        .read_the_one("convert", "convert one run at a time")
    {
        Ok(read) => read,
        Err(message) => return fail(err, "convert", message, Outcome::Unusable),
    };
    let name = read.name;
    let runs: Vec<ForeignRun> = match (&read.aiperf_summary, read_text(&read.text)) {
        (Some(summary), _) => match read_aiperf_pair(&read.text, summary) {
            Ok(run) => vec![run],
            Err(error) => {
                return fail(err, "convert", format!("{name}: {error}"), Outcome::Invalid)
            }
        },
        (None, Some(Ok(runs))) => runs,
        (None, Some(Err(error))) => {
            return fail(err, "convert", format!("{name}: {error}"), Outcome::Invalid)
        }
        (None, None) => {
            return fail(
                err,
                "convert",
                format!(
                    "{name}: not a results file of another tool: {}; convert reads vLLM \
                     (`bench serve --save-result --save-detailed`), GuideLLM and AIPerf files",
                    what_it_is(&read.text)
                ),
                Outcome::Unusable,
            )
        }
    };
    let run = match (args.benchmark, runs.len()) {
        (None, 1) => &runs[0],
        (None, count) => {
            return fail(
                err,
                "convert",
                format!(
                    "{name} holds {count} benchmarks; pick one with `--benchmark N` (1 to {count})"
                ),
                Outcome::Unusable,
            )
        }
        (Some(number), count) if number <= count => &runs[number - 1],
        (Some(number), count) => {
            return fail(
                err,
                "convert",
                format!(
                    "--benchmark {number}, but {name} holds {}; pick one from 1 to {count}",
                    if count == 1 {
                        "1 benchmark".to_owned()
                    } else {
                        format!("{count} benchmarks")
                    }
                ),
                Outcome::Unusable,
            )
        }
    };
    let artifact = match to_artifact(run) {
        Ok(artifact) => artifact,
        Err(error) => return fail(err, "convert", format!("{name}: {error}"), Outcome::Invalid),
    };
    match dumps_artifact(&artifact) {
        Ok(text) => {
            write!(out, "{text}")?;
            Ok(Outcome::Success)
        }
        Err(error) => fail(
            err,
            "convert",
            format!("{name}: cannot write the artifact: {error}"),
            Outcome::Invalid,
        ),
    }
}

/// What a file convert does not read is: an artifact already, empty, a cut-off or broken
/// JSON text (the validator's own words), Locust's records, or other JSON.
fn what_it_is(text: &str) -> String {
    match identify(text) {
        FileKind::Artifact => format!(
            "it is already an anvil-serving.benchmark/v1 artifact, which `{PROGRAM} summary` and \
             `{PROGRAM} validate` read as it is"
        ),
        kind @ (FileKind::Empty | FileKind::LocustRecords) => kind.described(),
        FileKind::Other => match serde_json::from_str::<serde_json::Value>(text) {
            Ok(_) => "it is JSON of no tool's results shape strobe knows".to_owned(),
            Err(_) => validate_artifact_text(text).violations.first().map_or_else(
                || "it is not JSON".to_owned(),
                |violation| violation.message.clone(),
            ),
        },
        // read_text took it for none of the tools' files, so these do not occur here.
        kind @ (FileKind::Foreign { .. } | FileKind::BrokenForeign { .. }) => kind.described(),
    }
}
