//! `strobe-artifact workload`: what the page will make of a workload file before anything is
//! sent: its format (recognised by content), how many records are usable and why the others
//! are not (with the line of the first of each), its size and SHA-256. Never a prompt's text.

use std::io::{self, Write};
use std::path::PathBuf;

use serde_json::{json, Value};
use strobe::core::config::choices::WorkloadTurns;
use strobe::core::workload::read::{read, ReadOptions};
use strobe::core::workload::{WorkloadSummary, MAX_WORKLOAD_BYTES};

use super::{fail, HelpFlag, JsonOutput, Outcome};
use crate::input::read_bytes;

/// The whole help's description of `workload`.
const LONG_ABOUT: &str = "\
Reads FILE as the page reads a workload file and prints what it found, before anything is
sent: the format (recognised by the content, never the name), how many records are usable and
why the others are not, with the line where the first of each reason starts and the field at
fault, the file's size and its SHA-256 (as a run's artifact records it).

Formats: ShareGPT JSON, OpenAI chat messages (JSON or JSONL), prompt columns (vLLM custom
JSONL, GuideLLM's names), CSV with a header, plain text (one prompt a line), AIPerf
single_turn and multi_turn, Mooncake traces and BurstGPT CSV; docs/guide/workloads.md has each with
an example line. Prompts are never printed.";

/// `workload [--turns first|all] [--json] FILE`
#[derive(Debug, clap::Args)]
#[command(
    about = "Check a workload file (prompts, conversations, a trace) the page would send",
    long_about = LONG_ABOUT,
    override_usage = "strobe-artifact workload [--turns first|all] [--json] FILE",
    after_help = "\
Exit codes:
  0  the file is a workload with at least one usable request
  1  the file is not a workload strobe reads (unknown format, broken JSON, nothing usable)
  2  the file could not be read (missing, a folder, larger than 1 GiB), or bad usage"
)]
pub struct Args {
    /// The workload file.
    #[arg(value_name = "FILE")]
    file: PathBuf,
    /// Play only each conversation's first turn (`first`, as vLLM reads ShareGPT) or every
    /// user turn as a session (`all`).
    #[arg(long, value_name = "first|all", default_value = "first", value_parser = parse_turns)]
    turns: WorkloadTurns,
    #[command(flatten)]
    json: JsonOutput,
    #[command(flatten)]
    help: HelpFlag,
}

/// `--turns` as the link's `workload_turns` spells it.
fn parse_turns(text: &str) -> Result<WorkloadTurns, String> {
    text.parse().map_err(|error| format!("{error}"))
}

/// Runs `workload`.
pub fn run(args: &Args, out: &mut dyn Write, err: &mut dyn Write) -> io::Result<Outcome> {
    let shown = args.file.display().to_string();
    if args.file.is_dir() {
        return fail(
            err,
            "workload",
            format!("{shown}: is a folder; pass the workload file itself"),
            Outcome::Unusable,
        );
    }
    if let Ok(metadata) = std::fs::metadata(&args.file) {
        if metadata.len() > MAX_WORKLOAD_BYTES {
            return fail(
                err,
                "workload",
                format!(
                    "{shown}: {} bytes; strobe reads at most {MAX_WORKLOAD_BYTES} bytes: split it",
                    metadata.len()
                ),
                Outcome::Unusable,
            );
        }
    }
    let bytes = match read_bytes(&args.file) {
        Ok(bytes) => bytes,
        Err(error) => return fail(err, "workload", error, Outcome::Unusable),
    };
    let name = args
        .file
        .file_name()
        .map(|name| name.to_string_lossy().into_owned());
    let options = ReadOptions {
        turns: args.turns,
        ..ReadOptions::default()
    };
    let workload = match read(&bytes, name.as_deref(), &options) {
        Ok(workload) => workload,
        Err(error) => {
            return fail(
                err,
                "workload",
                format!("{shown}: {error}"),
                Outcome::Invalid,
            )
        }
    };
    if args.json.json {
        JsonOutput::write(&summary_json(&workload.summary), out)?;
    } else {
        write!(out, "{}", render(&shown, &workload.summary))?;
    }
    Ok(Outcome::Success)
}

/// The summary as the JSON report: the artifact's fields and the sentence.
fn summary_json(summary: &WorkloadSummary) -> Value {
    let mut value = serde_json::to_value(summary).unwrap_or(Value::Null);
    if let Value::Object(object) = &mut value {
        object.insert("sentence".to_owned(), json!(summary.sentence()));
    }
    value
}

/// The text report: the sentence, then the facts and each reason with where to look.
fn render(file: &str, summary: &WorkloadSummary) -> String {
    let mut text = format!("{}\n", summary.sentence());
    let mut facts: Vec<(&str, String)> = vec![
        ("file", without_controls(file)),
        ("format", summary.format.as_str().to_owned()),
        ("bytes", summary.bytes.to_string()),
        ("sha256", summary.sha256.clone()),
        ("records", summary.records.to_string()),
        ("sessions", summary.sessions.to_string()),
        ("turns", summary.turns.to_string()),
        (
            "timed",
            match summary.span_ms {
                Some(span) => format!("yes, over {span} ms"),
                None => "no".to_owned(),
            },
        ),
    ];
    for skipped in &summary.skipped {
        let field = skipped
            .field
            .as_deref()
            .map(|field| format!(", `{}`", without_controls(field)))
            .unwrap_or_default();
        facts.push((
            "skipped",
            format!(
                "{} {} (first at line {}{field})",
                skipped.count,
                skipped.reason.words_for(skipped.count),
                skipped.first
            ),
        ));
    }
    let width = facts
        .iter()
        .map(|(label, _)| label.len())
        .max()
        .unwrap_or(0);
    for (label, value) in facts {
        text.push_str(&format!("  {label:<width$}  {value}\n"));
    }
    text
}

/// A file's name or a field's as one line without control characters.
fn without_controls(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { '\u{fffd}' } else { c })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_report_names_every_reason_with_its_line_and_field() {
        let bytes = b"{\"prompt\": \"a\"}\n{\"prompt\": \"b\", \"output_tokens\": -1}\n";
        let workload = read(bytes, Some("p.jsonl"), &ReadOptions::default()).expect("usable");
        let text = render("p.jsonl", &workload.summary);
        assert!(
            text.starts_with(
                "prompts (JSON): 1 of 2 records usable, 1 has a field of the wrong type.\n"
            ),
            "{text}"
        );
        assert!(
            text.contains(
                "  skipped   1 has a field of the wrong type (first at line 2, `output_tokens`)\n"
            ),
            "{text}"
        );
        let value = summary_json(&workload.summary);
        assert_eq!(value["format"], "prompt_columns");
        assert_eq!(value["skipped"][0]["reason"], "bad_field");
        assert_eq!(value["skipped"][0]["first"], 2);
    }

    #[test]
    fn turns_are_spelled_as_the_link_spells_them() {
        assert_eq!(parse_turns("all"), Ok(WorkloadTurns::All));
        let error = parse_turns("every").expect_err("unknown");
        assert!(error.contains("first, all"), "{error}");
    }
}
