//! `strobe-artifact summary`: the key facts and latency metrics of one artifact as an aligned
//! text table, for any generation (legacy artifacts have only p50/p95).

use std::io::{self, Write};

use serde_json::{Map, Value};
use strobe::core::present::turns::{turns_table, TurnsTable};
use strobe::core::read::opened::foreign::read_aiperf_pair;
use strobe::core::read::opened::foreign::unavailable::{Headline, Unavailable};
use strobe::core::read::opened::metrics::{KeyMetrics, MetricKind, MetricStat};
use strobe::core::read::opened::{OpenRefusal, OpenedArtifact};
use strobe::core::read::validate::report::{Report, Verdict};
use strobe::core::read::validate::validate_artifact_text;

use super::{fail, Files, HelpFlag, Outcome};
use crate::input::{identify, FileKind};
use crate::PROGRAM;

/// The whole help's description of `summary`.
const LONG_ABOUT: &str = "\
Prints the model, engine, gpu, measurement protocol, request counts, concurrency, context and
max_tokens of FILE, throughput and the prefix-cache hit average, then p50/p95/mean of time to
first output, TTFT, E2E, TPOT, decode rate and effective prefill rate (legacy artifacts record
only p50/p95). A '-' marks a value the artifact does not record. The verdict line says whether
the artifact passes `strobe-artifact validate` (its spelling). A run of a workload file's
conversations (sessions of several turns) adds TTFT by turn: per turn index the requests,
failures, TTFT p50/p90 and the server's prompt tokens p50, history included.

FILE may also be another tool's results: `vllm bench serve` JSON, a GuideLLM JSON report (one
block per benchmark) or AIPerf's profile_export.jsonl or profile_export_aiperf.json (or the
AIPerf run's folder). The summary names the tool, gives strobe's metrics from the file's rows
(nearest rank) and lists where the tool's definitions differ from strobe's. Of a file
`strobe-artifact convert` wrote, a value marked '*' is the tool's own figure, by the tool's
definition, for a number the converted rows cannot give; the lines below the table say why.

One file at a time: `strobe-artifact validate` checks several, a folder or a zip archive at
once.";

/// `summary FILE`
#[derive(Debug, clap::Args)]
#[command(
    about = "Print an artifact's identity, plan and key metrics as a table",
    long_about = LONG_ABOUT,
    override_usage = "strobe-artifact summary FILE",
    after_help = "\
Exit codes:
  0  summarized a valid (or valid legacy) artifact, or another tool's file
  1  summarized what could be read of an invalid artifact, or the file is not a JSON object,
     or another tool's file is broken (the message names the field)
  2  the file could not be read (missing, a folder, a zip archive, not UTF-8), or bad usage"
)]
pub struct Args {
    #[command(flatten)]
    files: Files,
    #[command(flatten)]
    help: HelpFlag,
}

/// The statistics of each metric row, in column order.
const STATISTICS: [MetricStat; 3] = [MetricStat::P50, MetricStat::P95, MetricStat::Mean];

/// Marks a tool's own figure standing in for a number strobe cannot give.
const TOOL_FIGURE_MARK: &str = "*";

/// Runs `summary`.
pub fn run(args: &Args, out: &mut dyn Write, err: &mut dyn Write) -> io::Result<Outcome> {
    let read = match args.files.read_the_one(
        "summary",
        &format!("summarize one artifact at a time (`{PROGRAM} validate` checks several at once)"),
    ) {
        Ok(read) => read,
        Err(message) => return fail(err, "summary", message, Outcome::Unusable),
    };
    let text = read.text;
    let shown_name = read.name;
    let opened = match &read.aiperf_summary {
        Some(summary) => match read_aiperf_pair(&text, summary) {
            Ok(run) => vec![OpenedArtifact::from_foreign(&shown_name, text.len(), run)],
            Err(error) => {
                return fail(
                    err,
                    "summary",
                    format!("{shown_name}: {error}"),
                    Outcome::Invalid,
                )
            }
        },
        None => OpenedArtifact::all_from_text(&shown_name, &text),
    };
    if opened.iter().any(|run| run.foreign.is_some()) {
        write!(out, "{}", render_foreign_summary(&opened))?;
        return Ok(Outcome::Success);
    }
    if let Some(OpenRefusal::BrokenForeign(error)) =
        opened.first().and_then(|run| run.refusal.as_ref())
    {
        return fail(
            err,
            "summary",
            format!("{shown_name}: {error}"),
            Outcome::Invalid,
        );
    }
    let report = validate_artifact_text(&text);
    let artifact = match serde_json::from_str::<Value>(&text) {
        Ok(Value::Object(artifact)) => artifact,
        _ => {
            let reason = match identify(&text) {
                FileKind::LocustRecords => FileKind::LocustRecords.described(),
                _ => report
                    .violations
                    .first()
                    .map_or_else(|| "not a JSON object".to_string(), |v| v.message.clone()),
            };
            return fail(
                err,
                "summary",
                format!(
                    "{shown_name} cannot be summarized: {reason}. Run `{PROGRAM} validate \
                     {shown_name}` for every problem."
                ),
                Outcome::Invalid,
            );
        }
    };
    write!(out, "{}", render_summary(&shown_name, &artifact, &report))?;
    if let Some(table) = opened.first().and_then(turns_table) {
        write!(out, "{}", turns_text(&table))?;
    }
    Ok(if report.is_acceptable() {
        Outcome::Success
    } else {
        Outcome::Invalid
    })
}

/// The whole summary text (pure, so it is tested without files).
fn render_summary(file: &str, artifact: &Map<String, Value>, report: &Report) -> String {
    // `validate`'s own spelling of the verdict, so the two commands read alike.
    let verdict = match report.verdict {
        Verdict::Valid => format!("{} (modern)", report.verdict),
        Verdict::Invalid => format!(
            "invalid ({} {}; run `{PROGRAM} validate {file}` for details)",
            report.violations.len(),
            if report.violations.len() == 1 {
                "violation"
            } else {
                "violations"
            }
        ),
        // A legacy verdict; and the artifact validator never gives `Foreign` (other tools'
        // files are read elsewhere).
        Verdict::ValidLegacy(_) | Verdict::Foreign => report.verdict.to_string(),
    };
    let context = match (artifact.get("context_tokens"), artifact.get("context_seed")) {
        (Some(Value::Number(tokens)), _) => format!("{tokens} tokens"),
        (_, Some(Value::Number(seed))) => format!("sampled (seed {seed})"),
        _ => "sampled".to_string(),
    };
    let context = match artifact.get("max_context_tokens") {
        Some(Value::Number(max)) => format!("{context} (max {max})"),
        _ => format!("{context} (max unknown)"),
    };
    // The same families and fallbacks (TPOT's legacy keys) as the page's summary and charts.
    let key_metrics = artifact
        .get("metrics")
        .and_then(Value::as_object)
        .map(KeyMetrics::from_metrics)
        .unwrap_or_default();
    let throughput = key_metrics
        .throughput_tok_s
        .map_or_else(|| "-".to_string(), |rate| format!("{rate:.2} tok/s"));
    let cache = key_metrics
        .prefix_cache_hit_avg
        .map_or_else(|| "-".to_string(), |hit| format!("{hit:.4}"));
    let facts: Vec<(&str, String)> = vec![
        ("file", file.to_string()),
        ("verdict", verdict),
        ("model", field_text(artifact.get("model"))),
        ("engine", field_text(artifact.get("engine"))),
        ("gpu", field_text(artifact.get("gpu"))),
        ("protocol", field_text(artifact.get("measurement_protocol"))),
        ("requests", field_text(artifact.get("requests"))),
        ("completed", field_text(artifact.get("completed"))),
        ("failed", field_text(artifact.get("failed"))),
        ("concurrency", field_text(artifact.get("concurrency"))),
        ("context", context),
        ("max_tokens", field_text(artifact.get("max_tokens"))),
        ("throughput", throughput),
        ("cache hit avg", cache),
    ];
    let mut text = facts_text(&facts);
    text.push('\n');
    text.push_str(&metrics_table(&key_metrics, &[]));
    text
}

/// A conversation run's TTFT by turn (the core's [`turns_table`]): a heading, the aligned
/// table and its note.
fn turns_text(table: &TurnsTable) -> String {
    let header: Vec<String> = table.header().into_iter().map(str::to_owned).collect();
    let mut rows = vec![header];
    rows.extend(table.cells());
    let columns = rows[0].len();
    let widths: Vec<usize> = (0..columns)
        .map(|column| {
            rows.iter()
                .map(|row| row.get(column).map_or(0, |cell| cell.chars().count()))
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut text = String::from("\nTTFT by turn\n");
    for row in &rows {
        let cells: Vec<String> = row
            .iter()
            .zip(&widths)
            .map(|(cell, width)| format!("{cell:>width$}"))
            .collect();
        text.push_str(cells.join("  ").trim_end());
        text.push('\n');
    }
    text.push_str(&table.note());
    text.push('\n');
    text
}

/// Facts as aligned `label  value` lines.
fn facts_text(facts: &[(&str, String)]) -> String {
    let label_width = facts
        .iter()
        .map(|(label, _)| label.len())
        .max()
        .unwrap_or(0);
    let mut text = String::new();
    for (label, value) in facts {
        text.push_str(&format!("{label:<label_width$}  {value}\n"));
    }
    text
}

/// The p50/p95/mean table of every metric; a cell the metrics lack shows the tool's own figure
/// from `stand_ins`, marked, when there is one.
fn metrics_table(key_metrics: &KeyMetrics, stand_ins: &[Unavailable]) -> String {
    let mut table: Vec<[String; 4]> = vec![[
        "metric".to_string(),
        STATISTICS[0].id().to_string(),
        STATISTICS[1].id().to_string(),
        STATISTICS[2].id().to_string(),
    ]];
    for kind in MetricKind::ALL {
        let summary = key_metrics.get(kind);
        let stand_in = stand_ins
            .iter()
            .find(|unavailable| unavailable.headline == Headline::Metric(kind));
        let cell = |stat: MetricStat| match summary.stat(stat) {
            Some(value) => format!("{value:.2}"),
            None => stand_in
                .and_then(|unavailable| unavailable.figure(Some(stat)))
                .map_or_else(
                    || "-".to_string(),
                    |figure| format!("{:.2}{TOOL_FIGURE_MARK}", figure.value),
                ),
        };
        table.push([
            format!("{} ({})", kind.id(), kind.unit()),
            cell(STATISTICS[0]),
            cell(STATISTICS[1]),
            cell(STATISTICS[2]),
        ]);
    }
    let widths: Vec<usize> = (0..4)
        .map(|column| {
            table
                .iter()
                .map(|row| row[column].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut text = String::new();
    for row in &table {
        let mut line = format!("{:<width$}", row[0], width = widths[0]);
        for column in 1..4 {
            line.push_str(&format!(
                "  {:>width$}",
                row[column],
                width = widths[column]
            ));
        }
        text.push_str(line.trim_end());
        text.push('\n');
    }
    text
}

/// The summary of each run read from another tool's file: the tool, what the run was, strobe's
/// metrics from its rows (or the tool's summary), and where the tool's definitions differ.
fn render_foreign_summary(runs: &[OpenedArtifact]) -> String {
    let mut text = String::new();
    for (index, run) in runs.iter().enumerate() {
        if index > 0 {
            text.push('\n');
        }
        let Some(source) = &run.foreign else {
            continue;
        };
        let shown = |value: Option<String>| safe_field(value.as_deref().unwrap_or("-"));
        let count = |value: Option<u64>| value.map_or_else(|| "-".to_string(), |v| v.to_string());
        let rate = run
            .load
            .as_ref()
            .and_then(|load| load.rate)
            .map_or_else(|| "-".to_string(), |rate| format!("{rate} req/s"));
        let throughput_stand_in = source
            .unavailable
            .iter()
            .find(|unavailable| unavailable.headline == Headline::Throughput)
            .and_then(|unavailable| unavailable.figure(None));
        let throughput = match (run.metrics.throughput_tok_s, throughput_stand_in) {
            (Some(rate), _) => format!("{rate:.2} tok/s"),
            (None, Some(figure)) => format!(
                "{:.2} tok/s{TOOL_FIGURE_MARK} ({}'s {})",
                figure.value,
                source.tool.name(),
                safe_field(&figure.name)
            ),
            (None, None) => "-".to_string(),
        };
        let facts: Vec<(&str, String)> = vec![
            ("file", without_controls(&run.label())),
            (
                "read as",
                format!(
                    "{} ({})",
                    safe_field(&source.tool_and_version()),
                    source.file_kind
                ),
            ),
            (
                "model",
                shown(run.identity.model.as_ref().map(ToString::to_string)),
            ),
            (
                "endpoint",
                shown(run.identity.base_url.as_ref().map(ToString::to_string)),
            ),
            (
                "started",
                shown(run.identity.started_at.as_ref().map(ToString::to_string)),
            ),
            ("requests", count(run.workload.requests)),
            ("completed", count(run.workload.completed)),
            ("failed", count(run.workload.failed)),
            ("concurrency", count(run.workload.concurrency)),
            ("rate", rate),
            ("rows", run.rows.len().to_string()),
            ("throughput", throughput),
        ];
        text.push_str(&facts_text(&facts));
        text.push('\n');
        text.push_str(&metrics_table(&run.metrics, &source.unavailable));
        text.push('\n');
        for note in source.notes().into_iter().chain(
            source
                .unavailable
                .iter()
                .map(|unavailable| unavailable_note(source.tool.name(), unavailable)),
        ) {
            text.push_str(&format!("- {}\n", without_controls(&note)));
        }
    }
    text
}

/// Why a converted file lacks a number, and which of the tool's own figures stand in for it.
fn unavailable_note(tool: &str, unavailable: &Unavailable) -> String {
    let name = unavailable.headline.name();
    let figures = if unavailable.tool_figures.is_empty() {
        format!("{tool} records no figure of its own for it")
    } else {
        let names: Vec<String> = unavailable
            .tool_figures
            .iter()
            .map(|figure| format!("`{}`", safe_field(&figure.name)))
            .collect();
        format!(
            "{TOOL_FIGURE_MARK} marks {tool}'s own figure ({}), by {tool}'s definition",
            names.join(", ")
        )
    };
    format!(
        "{} is not in the converted file: {}. {figures}.",
        capitalized(name),
        capped_line(&unavailable.reason, 600)
    )
}

/// `text` with its first letter upper-case.
fn capitalized(text: &str) -> String {
    let mut chars = text.chars();
    chars.next().map_or_else(String::new, |first| {
        first.to_uppercase().chain(chars).collect()
    })
}

/// Text as one line without control characters (a hostile name must not drive the terminal).
fn without_controls(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { '\u{fffd}' } else { c })
        .collect()
}

/// A string from the file as one safe line: no control characters, at most 80 characters.
fn safe_field(text: &str) -> String {
    capped_line(text, 80)
}

/// A text from the file as one line: no control characters, at most `max_chars` characters.
fn capped_line(text: &str, max_chars: usize) -> String {
    let clean = without_controls(text);
    if clean.chars().count() > max_chars {
        format!("{}…", clean.chars().take(max_chars).collect::<String>())
    } else {
        clean
    }
}

/// A top-level value as one safe line: strings without control characters (a hostile model
/// name must not drive the terminal), at most 80 characters; '-' when absent or null.
fn field_text(value: Option<&Value>) -> String {
    match value {
        None | Some(Value::Null) => "-".to_string(),
        Some(Value::String(text)) => safe_field(text),
        Some(Value::Number(number)) => number.to_string(),
        Some(Value::Bool(flag)) => flag.to_string(),
        Some(Value::Array(_) | Value::Object(_)) => "(not a scalar)".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use strobe::core::read::validate::validate_artifact;

    #[test]
    fn one_violation_is_one_violation() {
        let artifact = json!({"schema": "anvil-serving.benchmark/v1", "metrics": {}, "serve_flags": {}, "requests": 1, "completed": 1, "concurrency": 0});
        let report = validate_artifact(&artifact);
        assert_eq!(report.violations.len(), 1, "{:?}", report.violations);
        let text = render_summary("x.json", artifact.as_object().expect("object"), &report);
        assert!(text.contains("invalid (1 violation; run"), "{text}");
    }

    #[test]
    fn legacy_tpot_falls_back_to_the_mean_inter_token_latency_key() {
        let artifact = json!({
            "model": "m",
            "metrics": {"mean_inter_token_latency_ms_p50": 83.7673, "mean_inter_token_latency_ms_p95": 89.055},
        });
        let report = validate_artifact(&artifact);
        let text = render_summary("x.json", artifact.as_object().expect("object"), &report);
        let tpot = text
            .lines()
            .find(|line| line.starts_with("tpot (ms)"))
            .expect("tpot row");
        assert_eq!(
            tpot.split_whitespace().collect::<Vec<_>>(),
            ["tpot", "(ms)", "83.77", "89.06", "-"]
        );
    }

    #[test]
    fn control_characters_in_names_are_neutralised() {
        assert_eq!(field_text(Some(&json!("a\u{1b}[31mb"))), "a\u{fffd}[31mb");
        assert_eq!(field_text(Some(&json!(null))), "-");
        assert!(field_text(Some(&json!("x".repeat(500)))).chars().count() <= 81);
    }
}
