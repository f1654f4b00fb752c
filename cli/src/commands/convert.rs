//! `strobe-artifact convert`: another tool's results with per-request rows (vLLM, GuideLLM,
//! AIPerf) as an `anvil-serving.benchmark/v1` artifact on standard output, with a `source` block
//! naming the tool and how each quantity maps (docs/results.md, *Other tools' files*).

use std::io::{self, Write};
use std::path::Path;

use strobe::core::python::json::dumps_artifact;
use strobe::core::read::foreign::convert::to_artifact;
use strobe::core::read::foreign::{read_aiperf_pair, read_text, ForeignRun, KNOWN_FORMATS};

use super::{parse_args, Command, Outcome};
use crate::input::read_results;

/// The `convert` entry in the registry.
pub const COMMAND: Command = Command {
    name: "convert",
    summary: "write a vLLM, GuideLLM or AIPerf run as a v1 artifact to standard output",
    help: "\
Usage: strobe-artifact convert [--benchmark N] FILE

Reads FILE, another tool's results with per-request rows -- `vllm bench serve --save-result
--save-detailed` JSON, a GuideLLM JSON report, AIPerf's profile_export.jsonl or the AIPerf
run's folder -- and writes an anvil-serving.benchmark/v1 artifact to standard output: its rows
under strobe's row rules, the metrics computed from them, every field the file cannot know
null, and a `source` block with the tool, its version, how each of TTFO, TTFT, E2E, TPOT and
the token counts maps to strobe's definition, and the tool's own summary numbers.
`strobe-artifact validate` accepts the result.

Options:
  --benchmark N  the benchmark of a GuideLLM report of several (1 = the first)
  -h, --help     print this help

Exit codes:
  0  wrote the artifact
  1  FILE is another tool's file but broken (the message names the field), or has no rows
  2  FILE could not be read, is not a results file strobe reads, or bad usage
",
    run,
};

fn run(args: &[String], out: &mut dyn Write, err: &mut dyn Write) -> io::Result<Outcome> {
    // `--benchmark N` takes a value, which the shared parser does not know: take it out first.
    let mut rest = Vec::new();
    let mut benchmark: Option<usize> = None;
    let mut words = args.iter();
    while let Some(word) = words.next() {
        if word == "--benchmark" {
            match words
                .next()
                .and_then(|value| value.parse::<usize>().ok())
                .filter(|&n| n >= 1)
            {
                Some(number) => benchmark = Some(number),
                None => {
                    writeln!(
                        err,
                        "strobe-artifact convert: --benchmark takes a number from 1, e.g. \
                         `--benchmark 2`. Run `strobe-artifact convert --help`."
                    )?;
                    return Ok(Outcome::Unusable);
                }
            }
        } else {
            rest.push(word.clone());
        }
    }
    let parsed = match parse_args("convert", &rest, &[]) {
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
    let [file] = parsed.files.as_slice() else {
        writeln!(
            err,
            "strobe-artifact convert: expected exactly one FILE, got {}; convert one run at a \
             time. Run `strobe-artifact convert --help`.",
            parsed.files.len()
        )?;
        return Ok(Outcome::Unusable);
    };
    let read = match read_results(Path::new(file)) {
        Ok(read) => read,
        Err(error) => {
            writeln!(err, "strobe-artifact convert: {error}")?;
            return Ok(Outcome::Unusable);
        }
    };
    let name = read.path.display().to_string();
    let runs: Vec<ForeignRun> = match (&read.aiperf_summary, read_text(&read.text)) {
        (Some(summary), _) => match read_aiperf_pair(&read.text, summary) {
            Ok(run) => vec![run],
            Err(error) => {
                writeln!(err, "strobe-artifact convert: {name}: {error}")?;
                return Ok(Outcome::Invalid);
            }
        },
        (None, Some(Ok(runs))) => runs,
        (None, Some(Err(error))) => {
            writeln!(err, "strobe-artifact convert: {name}: {error}")?;
            return Ok(Outcome::Invalid);
        }
        (None, None) => {
            writeln!(
                err,
                "strobe-artifact convert: {name}: not a results file of another tool; convert \
                 reads vLLM, GuideLLM and AIPerf files (strobe reads {KNOWN_FORMATS})"
            )?;
            return Ok(Outcome::Unusable);
        }
    };
    let run = match (benchmark, runs.len()) {
        (None, 1) => &runs[0],
        (None, count) => {
            writeln!(
                err,
                "strobe-artifact convert: {name} holds {count} benchmarks; pick one with \
                 `--benchmark N` (1 to {count})"
            )?;
            return Ok(Outcome::Unusable);
        }
        (Some(number), count) if number <= count => &runs[number - 1],
        (Some(number), count) => {
            writeln!(
                err,
                "strobe-artifact convert: --benchmark {number}, but {name} holds {count}"
            )?;
            return Ok(Outcome::Unusable);
        }
    };
    let artifact = match to_artifact(run) {
        Ok(artifact) => artifact,
        Err(error) => {
            writeln!(err, "strobe-artifact convert: {name}: {error}")?;
            return Ok(Outcome::Invalid);
        }
    };
    match dumps_artifact(&artifact) {
        Ok(text) => {
            write!(out, "{text}")?;
            Ok(Outcome::Success)
        }
        Err(error) => {
            writeln!(
                err,
                "strobe-artifact convert: {name}: cannot write the artifact: {error}"
            )?;
            Ok(Outcome::Invalid)
        }
    }
}
