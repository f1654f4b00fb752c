//! Exports of loaded runs: request rows as CSV and a run/comparison summary as Markdown.
//!
//! This module owns the two text exporters. Both are pure `serialize(&data) -> String`
//! functions (the web layer turns the text into a download), and both treat every string from
//! a file as hostile: CSV cells are RFC 4180 quoted and guarded against formula injection,
//! Markdown text is escaped so it cannot inject markup, links or HTML. (A chart's PNG export is
//! ECharts' own `saveAsImage`, configured in [`crate::core::present::charts`].)

use std::borrow::Cow;
use std::fmt::Write as _;

use crate::core::artifact::file::ArtifactFile;
use crate::core::config::slo::Slo;
use crate::core::format::file_stem;
use crate::core::present::compare::{format_delta, Comparison};
use crate::core::read::opened::basis::TimeBasis;
use crate::core::read::opened::text::CappedText;
use crate::core::read::opened::views::{FailureView, RowView};
use crate::core::read::opened::OpenedArtifact;
use crate::core::schema::ArtifactV1;
use crate::core::slo::{check_bound, judge_opened, row_meets, BoundCheck};

/// The CSV header, one column per [`RowView`] field plus the failure columns.
pub const CSV_COLUMNS: [&str; 17] = [
    "status",
    "request_index",
    "started_at_ms",
    "planned_context_tokens",
    "prompt_tokens",
    "cached_tokens",
    "output_tokens",
    "time_to_first_output_ms",
    "ttft_ms",
    "e2e_ms",
    "generation_ms",
    "tpot_ms",
    "decode_tok_s",
    "effective_prefill_tok_s",
    "failure_class",
    "error_type",
    "error_message",
];

/// A CSV column's name on `basis`: from the wire, the three times are the rows'
/// `*_from_wire_ms`, and their columns say so.
fn column_on_basis(column: &str, basis: TimeBasis) -> String {
    match (basis, column) {
        (TimeBasis::FromWire, "time_to_first_output_ms") => "ttfo_from_wire_ms".to_owned(),
        (TimeBasis::FromWire, "ttft_ms") => "ttft_from_wire_ms".to_owned(),
        (TimeBasis::FromWire, "e2e_ms") => "e2e_from_wire_ms".to_owned(),
        _ => column.to_owned(),
    }
}

/// At most this many violations per run are listed in the Markdown summary.
pub const MARKDOWN_VIOLATIONS_MAX: usize = 20;

/// The request rows (status `ok`) and failures (status `failed`) of one run as CSV, sorted by
/// request index, CRLF line endings (RFC 4180). Missing values are empty cells. Failure texts
/// are the display-capped [`CappedText`]s, with `…` when cut.
pub fn rows_csv(run: &OpenedArtifact) -> String {
    rows_csv_with_slo(run, None)
}

/// [`rows_csv`] with, for an SLO, a `meets_slo` column (`true`/`false`; a failure is `false`)
/// and one `slo_<metric>` column per bound: `met`, `missed`, `skipped` (TPOT of a one-token
/// answer) or `no_value`, empty for a failure.
pub fn rows_csv_with_slo(run: &OpenedArtifact, slo: Option<&Slo>) -> String {
    enum Entry<'a> {
        Row(&'a RowView),
        Failure(&'a FailureView),
    }
    let mut entries: Vec<(u64, Entry)> = run
        .rows
        .iter()
        .map(|row| (row.index_or_position(), Entry::Row(row)))
        .chain(
            run.failures
                .iter()
                .map(|failure| (failure.index_or_position(), Entry::Failure(failure))),
        )
        .collect();
    entries.sort_by_key(|(index, _)| *index);

    let mut csv = String::with_capacity(64 + entries.len() * 160);
    let bounds = slo.map(Slo::bounds).unwrap_or_default();
    let slo_columns = slo.map(|_| "meets_slo".to_owned()).into_iter().chain(
        bounds
            .iter()
            .map(|bound| format!("slo_{}", bound.metric.as_str())),
    );
    write_record(
        &mut csv,
        CSV_COLUMNS
            .iter()
            .map(|column| column_on_basis(column, run.basis))
            .chain(slo_columns),
    );
    for (_, entry) in entries {
        let cells: Vec<String> = match entry {
            Entry::Row(row) => {
                let mut cells = vec![
                    "ok".to_owned(),
                    integer_cell(row.request_index),
                    float_cell(row.started_at_ms),
                    integer_cell(row.planned_context_tokens),
                    integer_cell(row.prompt_tokens),
                    integer_cell(row.cached_tokens),
                    integer_cell(row.output_tokens),
                    float_cell(row.ttfo_ms),
                    float_cell(row.ttft_ms),
                    float_cell(row.e2e_ms),
                    float_cell(row.generation_ms),
                    float_cell(row.tpot_ms),
                    float_cell(row.decode_tok_s),
                    float_cell(row.prefill_tok_s),
                ];
                cells.extend([String::new(), String::new(), String::new()]);
                if let Some(slo) = slo {
                    cells.push(row_meets(slo, row).to_string());
                    cells.extend(bounds.iter().map(|bound| {
                        match check_bound(bound.metric, bound.limit_ms, row) {
                            BoundCheck::Met => "met",
                            BoundCheck::Missed => "missed",
                            BoundCheck::Skipped => "skipped",
                            BoundCheck::NoValue => "no_value",
                        }
                        .to_owned()
                    }));
                }
                cells
            }
            Entry::Failure(failure) => {
                let mut cells = vec![
                    "failed".to_owned(),
                    integer_cell(failure.request_index),
                    float_cell(failure.started_at_ms),
                ];
                cells.extend(std::iter::repeat_n(String::new(), 11));
                cells.extend([
                    text_cell(&failure.failure_class),
                    text_cell(&failure.error_type),
                    text_cell(&failure.error_message),
                ]);
                if slo.is_some() {
                    cells.push("false".to_owned());
                    cells.extend(std::iter::repeat_n(String::new(), bounds.len()));
                }
                cells
            }
        };
        write_record(&mut csv, cells.into_iter());
    }
    csv
}

fn write_record(csv: &mut String, cells: impl Iterator<Item = String>) {
    for (position, cell) in cells.enumerate() {
        if position > 0 {
            csv.push(',');
        }
        csv.push_str(&csv_cell(&cell));
    }
    csv.push_str("\r\n");
}

fn integer_cell(value: Option<u64>) -> String {
    value.map(|value| value.to_string()).unwrap_or_default()
}

fn float_cell(value: Option<f64>) -> String {
    value
        .filter(|value| value.is_finite())
        .map(|value| value.to_string())
        .unwrap_or_default()
}

fn text_cell(value: &Option<CappedText>) -> String {
    value.as_ref().map(ToString::to_string).unwrap_or_default()
}

/// One CSV cell: a leading `=`, `+`, `-`, `@`, tab or CR (which spreadsheets run as a
/// formula) gets a `'` in front unless the cell is a plain number; then the cell is quoted
/// when it holds a comma, quote, CR or LF, with quotes doubled (RFC 4180).
pub fn csv_cell(text: &str) -> Cow<'_, str> {
    let formula_like = text
        .chars()
        .next()
        .is_some_and(|first| matches!(first, '=' | '+' | '-' | '@' | '\t' | '\r'));
    let guarded: Cow<'_, str> = if formula_like && !is_plain_number(text) {
        Cow::Owned(format!("'{text}"))
    } else {
        Cow::Borrowed(text)
    };
    if guarded.contains([',', '"', '\r', '\n']) {
        Cow::Owned(format!("\"{}\"", guarded.replace('"', "\"\"")))
    } else {
        guarded
    }
}

/// `[+-]digits[.digits][e[+-]digits]` (or `.digits`): a number a spreadsheet reads as a
/// number, never as a formula. `inf`, `NaN` and hex are not plain numbers.
pub fn is_plain_number(text: &str) -> bool {
    let bytes = text.as_bytes();
    let mut position = 0;
    if matches!(bytes.first(), Some(b'+' | b'-')) {
        position += 1;
    }
    let digits_from = |start: usize| {
        bytes[start..]
            .iter()
            .take_while(|byte| byte.is_ascii_digit())
            .count()
    };
    let integer_digits = digits_from(position);
    position += integer_digits;
    let mut fraction_digits = 0;
    if bytes.get(position) == Some(&b'.') {
        position += 1;
        fraction_digits = digits_from(position);
        position += fraction_digits;
    }
    if integer_digits + fraction_digits == 0 {
        return false;
    }
    if matches!(bytes.get(position), Some(b'e' | b'E')) {
        position += 1;
        if matches!(bytes.get(position), Some(b'+' | b'-')) {
            position += 1;
        }
        let exponent_digits = digits_from(position);
        if exponent_digits == 0 {
            return false;
        }
        position += exponent_digits;
    }
    position == bytes.len()
}

/// Escapes text from a file for Markdown: backslash-escapes `\ | ` * _ [ ] ~`, writes `< > &`
/// as entities, and turns newlines, tabs and other control characters into spaces, so the
/// text stays inside its table cell and renders as the literal characters.
pub fn escape_markdown(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len() + 8);
    let mut previous_was_cr = false;
    for character in text.chars() {
        match character {
            '\\' | '|' | '`' | '*' | '_' | '[' | ']' | '~' => {
                escaped.push('\\');
                escaped.push(character);
            }
            '<' => escaped.push_str("&lt;"),
            '>' => escaped.push_str("&gt;"),
            '&' => escaped.push_str("&amp;"),
            // CRLF becomes one space, not two.
            '\n' if previous_was_cr => {}
            character if character.is_control() => escaped.push(' '),
            character => escaped.push(character),
        }
        previous_was_cr = character == '\r';
    }
    escaped
}

/// The SLO the runs were judged by, and what it said of each (or why it could not judge).
fn write_slo_section(
    markdown: &mut String,
    runs: &[&OpenedArtifact],
    labels: &[String],
    slo: &Slo,
) {
    let _ = writeln!(
        markdown,
        "\n## Service-level objective\n\nSLO `{slo}`: a request meets it when it succeeded and \
         every bound holds (ms, inclusive); failed requests never do; an answer of one token has \
         no TPOT, so its TPOT bound is skipped.\n"
    );
    for (run, label) in runs.iter().zip(labels) {
        let said = match judge_opened(slo, run) {
            Ok(outcome) => outcome.summary(),
            Err(reason) => reason.to_string(),
        };
        let _ = writeln!(
            markdown,
            "- {}: {}",
            escape_markdown(label),
            escape_markdown(&said)
        );
    }
}

fn escaped_or_dash(text: &Option<CappedText>) -> String {
    match text {
        Some(text) => escape_markdown(&text.to_string()),
        None => "—".to_owned(),
    }
}

fn count_or_dash(value: Option<u64>) -> String {
    value.map_or_else(|| "—".to_owned(), |value| value.to_string())
}

/// A Markdown summary of the runs and their comparison: the runs (identity, verdict,
/// workload), the key metrics with deltas and ratios to the baseline, the workload
/// mismatches with why they matter, and each run's validation findings.
pub fn summary_markdown(runs: &[&OpenedArtifact], comparison: &Comparison) -> String {
    let mut markdown = String::new();
    markdown.push_str("# strobe run summary\n\n");
    if runs.is_empty() {
        markdown.push_str("No runs loaded.\n");
        return markdown;
    }

    markdown.push_str("## Runs\n\n");
    markdown.push_str(
        "| # | Run | Verdict | Model | Engine | GPU | Protocol | Requests | Completed | Failed \
         | Concurrency | Context tokens |\n",
    );
    markdown.push_str("|---|---|---|---|---|---|---|---:|---:|---:|---:|---:|\n");
    for (position, run) in runs.iter().enumerate() {
        let number = if position == 0 {
            "1 (baseline)".to_owned()
        } else {
            (position + 1).to_string()
        };
        let _ = writeln!(
            markdown,
            "| {number} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            escape_markdown(&run.label()),
            escape_markdown(&run.verdict().to_string()),
            escaped_or_dash(&run.identity.model),
            escaped_or_dash(&run.identity.engine),
            escaped_or_dash(&run.identity.gpu),
            escaped_or_dash(&run.identity.measurement_protocol),
            count_or_dash(run.workload.requests),
            count_or_dash(run.workload.completed),
            count_or_dash(run.workload.failed),
            count_or_dash(run.workload.concurrency),
            count_or_dash(run.workload.context_tokens),
        );
    }

    markdown.push_str("\n## Key metrics\n\n");
    if runs.iter().any(|run| run.basis == TimeBasis::FromWire) {
        let bases: Vec<&str> = runs.iter().map(|run| run.basis.label()).collect();
        let _ = writeln!(
            markdown,
            "Times (TTFO, TTFT, E2E): {} (from the wire: measured minus client_queue_ms).\n",
            bases.join(", ")
        );
    }
    if comparison.metrics.is_empty() {
        markdown.push_str("No run states any key metric.\n");
    } else {
        markdown.push_str("| Metric |");
        for (position, label) in comparison.labels.iter().enumerate() {
            let baseline = if position == 0 { " (baseline)" } else { "" };
            let _ = write!(markdown, " {}{baseline} |", escape_markdown(label));
        }
        markdown.push_str("\n|---|");
        markdown.push_str(&"---:|".repeat(comparison.labels.len()));
        markdown.push('\n');
        for row in &comparison.metrics {
            let _ = write!(markdown, "| {} |", escape_markdown(&row.metric.label()));
            for (position, delta) in row.runs.iter().enumerate() {
                let _ = write!(
                    markdown,
                    " {} |",
                    escape_markdown(&format_delta(delta, row.metric.unit(), position == 0))
                );
            }
            markdown.push('\n');
        }
        if comparison.labels.len() > 1 {
            markdown.push_str(
                "\nIn parentheses: difference from the baseline and ratio to it. Lower is \
                 better for latencies and failures, higher for rates and cache hits.\n",
            );
        }
    }

    if let Some(slo) = &comparison.slo {
        write_slo_section(&mut markdown, runs, &comparison.labels, slo);
    }

    if runs.len() > 1 {
        markdown.push_str("\n## Workload mismatches\n\n");
        if comparison.mismatches.is_empty() {
            markdown.push_str("None: the files describe the same workload.\n");
        } else {
            markdown.push_str(
                "These runs did not measure the same workload; do not read their differences \
                 as the server's alone.\n\n",
            );
            if let Some(sentence) = comparison.different_traffic() {
                let _ = writeln!(markdown, "**{}**\n", escape_markdown(&sentence));
            }
            for mismatch in &comparison.mismatches {
                let values: Vec<String> = comparison
                    .labels
                    .iter()
                    .zip(&mismatch.values)
                    .map(|(label, value)| {
                        format!("{}: {}", escape_markdown(label), escape_markdown(value))
                    })
                    .collect();
                let _ = writeln!(
                    markdown,
                    "- **{}** ({}): {}.",
                    escape_markdown(mismatch.field),
                    values.join("; "),
                    escape_markdown(&mismatch.explanation)
                );
            }
        }
    }

    markdown.push_str("\n## Validation\n\n");
    for run in runs {
        let _ = writeln!(
            markdown,
            "- {}: {}",
            escape_markdown(&run.label()),
            escape_markdown(&run.status_line())
        );
        // The status line already states a refusal; list the violations and notices.
        let problems: Vec<String> = run
            .report
            .violations
            .iter()
            .map(ToString::to_string)
            .chain(run.notices.iter().map(ToString::to_string))
            .collect();
        for problem in problems.iter().take(MARKDOWN_VIOLATIONS_MAX) {
            let _ = writeln!(markdown, "  - {}", escape_markdown(problem));
        }
        if problems.len() > MARKDOWN_VIOLATIONS_MAX {
            let _ = writeln!(
                markdown,
                "  - … and {} more",
                problems.len() - MARKDOWN_VIOLATIONS_MAX
            );
        }
    }
    markdown
}

/// Artifacts as one `.zip` (a sweep's steps, a group of repeats), each as downloaded one by
/// one ([`ArtifactFile::of`]: its own file name; `base_url` replaced by the redaction marker
/// when `redact`), through [`artifacts_zip`].
pub fn artifact_files_zip<A: std::borrow::Borrow<ArtifactV1>>(
    artifacts: &[A],
    redact: bool,
) -> Result<Vec<u8>, String> {
    let files = artifacts
        .iter()
        .map(|artifact| {
            ArtifactFile::of(artifact.borrow(), redact)
                .map(|file| (file.name, file.text))
                .map_err(|error| error.to_string())
        })
        .collect::<Result<Vec<_>, _>>()?;
    artifacts_zip(&files)
}

/// Several artifacts as one `.zip` (a sweep's steps, a group of repeats): each text under its name, deflated, in
/// the given order, with no timestamps from a clock (every entry is dated 1980-01-01, the zip
/// format's first day). Names are made safe with [`file_stem`] and given `.json`; a name given
/// twice gets its position appended.
pub fn artifacts_zip(files: &[(String, String)]) -> Result<Vec<u8>, String> {
    use std::io::Write as _;
    let mut writer = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    let mut used = std::collections::BTreeSet::new();
    for (position, (name, text)) in files.iter().enumerate() {
        let stem = file_stem(name.trim_end_matches(".json"), "artifact");
        let mut entry = format!("{stem}.json");
        if !used.insert(entry.clone()) {
            entry = format!("{stem}-{position}.json");
            used.insert(entry.clone());
        }
        writer
            .start_file(entry, options)
            .and_then(|()| writer.write_all(text.as_bytes()).map_err(Into::into))
            .map_err(|error| format!("the artifacts could not be zipped: {error}"))?;
    }
    writer
        .finish()
        .map(std::io::Cursor::into_inner)
        .map_err(|error| format!("the artifacts could not be zipped: {error}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_slo_adds_its_columns_rows_and_section_to_the_exports() {
        use crate::core::present::compare::{compare, ComparedMetric};
        let reference = OpenedArtifact::from_text(
            "reference.json",
            include_str!("../../../tests/fixtures/reference-artifact.json"),
        );
        let g3 = OpenedArtifact::from_text(
            "g3.json",
            include_str!("../../../tests/fixtures/generations/g3.json"),
        );
        let g1 = OpenedArtifact::from_text(
            "g1.json",
            include_str!("../../../tests/fixtures/generations/g1-legacy-minimal.json"),
        );
        let slo: Slo = "ttft:2000,tpot:4.2".parse().expect("valid");
        let csv = rows_csv_with_slo(&reference, Some(&slo));
        let lines: Vec<&str> = csv.lines().collect();
        assert!(
            lines[0].ends_with(",error_message,meets_slo,slo_ttft,slo_tpot"),
            "{}",
            lines[0]
        );
        // Request 0: TTFT 1418 ms meets, TPOT 4.31 ms misses; request 4 meets both.
        assert!(lines[1].ends_with(",false,met,missed"), "{}", lines[1]);
        assert!(lines[5].ends_with(",true,met,met"), "{}", lines[5]);
        assert_eq!(
            rows_csv(&reference).lines().next(),
            Some(CSV_COLUMNS.join(",").as_str())
        );
        // A failure never meets it; its bound cells stay empty.
        let failed = rows_csv_with_slo(&g3, Some(&slo));
        assert!(failed
            .lines()
            .any(|line| line.starts_with("failed,") && line.ends_with(",false,,")));

        let runs = [&reference, &g3, &g1];
        let mut comparison = compare(&runs);
        comparison.add_slo(&runs, &slo);
        let attainment = comparison
            .metrics
            .iter()
            .find(|row| row.metric == ComparedMetric::SloAttainment)
            .expect("an attainment row");
        // Reference: 1 of 6 (request 4); G3: no row under 2000 ms TTFT, 0 of 12; G1: unjudged.
        assert_eq!(attainment.runs[0].value, Some(1.0 / 6.0 * 100.0));
        assert_eq!(attainment.runs[1].value, Some(0.0));
        assert_eq!(attainment.runs[2].value, None);
        let markdown = summary_markdown(&runs, &comparison);
        assert!(
            markdown.contains("## Service-level objective"),
            "{markdown}"
        );
        assert!(markdown.contains("SLO `ttft:2000,tpot:4.2`"), "{markdown}");
        assert!(
            markdown.contains("- reference.json: 16.7 % met (1 of 6)"),
            "{markdown}"
        );
        assert!(markdown.contains("only summary statistics"), "{markdown}");
        assert!(markdown.contains("| SLO attainment |"), "{markdown}");
    }

    #[test]
    fn csv_cells_are_quoted_per_rfc_4180() {
        assert_eq!(csv_cell("plain"), "plain");
        assert_eq!(csv_cell(""), "");
        assert_eq!(csv_cell("a,b"), "\"a,b\"");
        assert_eq!(csv_cell("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(csv_cell("two\nlines"), "\"two\nlines\"");
    }

    #[test]
    fn formula_like_cells_are_guarded_but_numbers_are_not() {
        for (cell, expected) in [
            ("=1+2", "'=1+2"),
            ("+cmd", "'+cmd"),
            ("@SUM(A1)", "'@SUM(A1)"),
            ("\tindent", "'\tindent"),
            ("\rx", "\"'\rx\""),
            ("-inf", "'-inf"),
            ("=a,b", "\"'=a,b\""),
            ("-", "'-"),
            ("-5", "-5"),
            ("+1.25", "+1.25"),
            ("-2.5e-3", "-2.5e-3"),
            ("a=b", "a=b"),
        ] {
            assert_eq!(csv_cell(cell), expected, "{cell:?}");
        }
    }

    #[test]
    fn plain_numbers_are_decimal_literals_only() {
        for number in ["0", "1", "+1.5", "-.5", "1.", "1e-3", "6.02E+23"] {
            assert!(is_plain_number(number), "{number}");
        }
        for text in [
            "", "+", "-", ".", "e5", "1e", "1e+", "0x10", "NaN", "inf", "1 2", "1,5",
        ] {
            assert!(!is_plain_number(text), "{text}");
        }
    }

    #[test]
    fn markdown_escaping_leaves_no_markup() {
        assert_eq!(escape_markdown("a|b"), "a\\|b");
        assert_eq!(
            escape_markdown("<b>&amp;</b>"),
            "&lt;b&gt;&amp;amp;&lt;/b&gt;"
        );
        assert_eq!(
            escape_markdown("**bold** _i_ [link](u) `code` ~s~ \\"),
            "\\*\\*bold\\*\\* \\_i\\_ \\[link\\](u) \\`code\\` \\~s\\~ \\\\"
        );
        assert_eq!(
            escape_markdown("one\r\ntwo\nthree\rfour\tfive"),
            "one two three four five"
        );
        assert_eq!(escape_markdown("größe 🚀"), "größe 🚀");
    }

    #[test]
    fn an_empty_summary_says_so() {
        let comparison = crate::core::present::compare::compare(&[]);
        assert_eq!(
            summary_markdown(&[], &comparison),
            "# strobe run summary\n\nNo runs loaded.\n"
        );
    }

    #[test]
    fn a_sweep_zips_and_reads_back_file_for_file() {
        use crate::core::read::bundle::read_bundle;
        let files = vec![
            ("benchmark-1.json".to_owned(), "{\"step\": 0}".to_owned()),
            ("benchmark-1.json".to_owned(), "{\"step\": 1}".to_owned()),
            ("../evil name".to_owned(), "{}".to_owned()),
        ];
        let bytes = artifacts_zip(&files).expect("zips");
        let bundle = read_bundle(&bytes).expect("reads");
        assert_eq!(
            bundle.names(),
            [
                "benchmark-1.json",
                "benchmark-1-1.json",
                "artifact.._evil_name.json"
            ]
        );
        let texts: Vec<&[u8]> = bundle
            .entries
            .iter()
            .map(|entry| entry.bytes.as_slice())
            .collect();
        assert_eq!(texts, [&b"{\"step\": 0}"[..], b"{\"step\": 1}", b"{}"]);
        assert!(bundle.skipped.is_empty());
        assert_eq!(
            artifacts_zip(&files),
            Ok(bytes),
            "the same files give the same bytes"
        );
    }

    #[test]
    fn a_repeat_group_zips_and_regroups_when_dropped() {
        use crate::core::present::repeats::group_repeats;
        use crate::core::read::bundle::open_dropped;
        use crate::core::schema::repeat::RepeatBlock;
        let reference: ArtifactV1 = serde_json::from_str(include_str!(
            "../../../tests/fixtures/reference-artifact.json"
        ))
        .expect("the reference artifact");
        let group: Vec<std::rc::Rc<ArtifactV1>> = [2_u64, 0, 1]
            .into_iter()
            .map(|index| {
                let mut artifact = reference.clone();
                artifact.run_id = format!("{}-{index}", artifact.run_id);
                artifact.base_url = "http://10.0.0.7:8000/v1".to_owned();
                artifact.repeat = Some(RepeatBlock {
                    group_id: "repeat-x".to_owned(),
                    index,
                    count: 3,
                });
                std::rc::Rc::new(artifact)
            })
            .collect();
        let bytes = artifact_files_zip(&group, true).expect("zips");
        let runs = open_dropped("repeat-x.zip", &bytes);
        assert_eq!(runs.len(), 3);
        let groups = group_repeats(&runs);
        assert_eq!(groups.len(), 1);
        assert_eq!(groups[0].group_id, "repeat-x");
        assert_eq!(groups[0].members, [1, 2, 0], "by repeat index");
        assert!(groups[0].missing.is_empty());
        let bundle = crate::core::read::bundle::read_bundle(&bytes).expect("reads");
        let first: serde_json::Value =
            serde_json::from_slice(&bundle.entries[0].bytes).expect("JSON");
        assert_ne!(first["base_url"], "http://10.0.0.7:8000/v1", "redacted");
        assert_eq!(first["repeat"]["index"], 2, "in the order given");
    }

    #[test]
    fn a_sweep_of_repeated_steps_zips_and_regroups_as_one_curve_of_repeated_points() {
        use crate::core::load::sweep::step_repeat_group_id;
        use crate::core::present::capacity::capacity_series;
        use crate::core::present::repeats::group_repeats;
        use crate::core::read::bundle::open_dropped;
        use crate::core::schema::repeat::RepeatBlock;
        use crate::core::schema::sweep::{SweepBlock, SweepVariable};
        let reference: ArtifactV1 = serde_json::from_str(include_str!(
            "../../../tests/fixtures/reference-artifact.json"
        ))
        .expect("the reference artifact");
        // Two steps × two repeats, all started within one second (one run id), zipped in an
        // order that is not the sweep's.
        let runs: Vec<ArtifactV1> = [(1_u64, 1_u64), (0, 0), (1, 0), (0, 1)]
            .into_iter()
            .map(|(step, repeat)| {
                let mut artifact = reference.clone();
                artifact.concurrency = step + 1;
                artifact.sweep = Some(SweepBlock {
                    id: format!("sweep-{}", reference.run_id),
                    step_index: step,
                    step_count: 2,
                    variable: SweepVariable::Concurrency,
                    value: (step + 1) as f64,
                    spec: "concurrency:1,2".to_owned(),
                    stop_reason: None,
                });
                artifact.repeat = Some(RepeatBlock {
                    group_id: step_repeat_group_id(&reference.run_id, step as usize),
                    index: repeat,
                    count: 2,
                });
                artifact
            })
            .collect();
        let names: std::collections::BTreeSet<String> =
            runs.iter().map(ArtifactV1::file_name).collect();
        assert_eq!(names.len(), 4, "every run its own name: {names:?}");
        let bytes = artifact_files_zip(&runs, false).expect("zips");
        let opened = open_dropped("sweep.zip", &bytes);
        assert_eq!(opened.len(), 4);
        let groups = group_repeats(&opened);
        assert_eq!(groups.len(), 2, "one repeat group per step");
        assert!(groups.iter().all(|group| group.members.len() == 2
            && group.missing.is_empty()
            && group.duplicated.is_empty()));
        let refs: Vec<&OpenedArtifact> = opened.iter().collect();
        let series = capacity_series(&refs);
        assert_eq!(series.len(), 1, "one sweep, one curve");
        assert_eq!(series[0].name, format!("sweep-{}", reference.run_id));
        let points: Vec<(f64, usize)> = series[0]
            .points
            .iter()
            .map(|point| {
                (
                    point.value,
                    point
                        .repeats
                        .as_ref()
                        .map_or(1, |repeats| repeats.runs.len()),
                )
            })
            .collect();
        assert_eq!(
            points,
            [(1.0, 2), (2.0, 2)],
            "each step one point of two runs"
        );
    }
}
