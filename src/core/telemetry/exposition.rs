//! A server's `/metrics` answer, Prometheus text (0.0.4; OpenMetrics tolerated), read into one
//! flat map: each metric name to its value summed over the label sets (docs/guide/telemetry.md,
//! *Reading the text*).
//!
//! Histogram buckets keep their bound in the name (`x_bucket{le="0.5"}`), so one number per
//! name still describes a histogram; a summary's quantiles likewise (`x{quantile="0.9"}`).
//! Counters keep the name they have on the wire (`vllm:prompt_tokens_total`): the engine
//! tables in [`engines`](super::engines) accept both spellings.
//!
//! The text comes from a server strobe does not control, so everything is bounded: bytes,
//! lines, line length, distinct names and notes. What cannot be read becomes a [`ReadNote`]
//! and the rest is still read; nothing here panics or loops on hostile input.

use std::collections::BTreeMap;

/// Bytes of a `/metrics` answer read; the rest is ignored with a note. vLLM's answer with
/// every histogram is tens of kilobytes.
pub const MAX_TEXT_BYTES: usize = 4 * 1024 * 1024;
/// Lines read; the rest is ignored with a note.
pub const MAX_LINES: usize = 100_000;
/// Longest line read; a longer one is skipped with a note.
pub const MAX_LINE_BYTES: usize = 16 * 1024;
/// Distinct names kept in one reading; more are dropped with a note.
pub const MAX_NAMES: usize = 4_000;
/// Notes kept about one text; the rest are counted in a last [`ReadNote::More`].
pub const MAX_NOTES: usize = 8;

/// A metric family's declared type (`# TYPE name kind`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MetricKind {
    /// Only goes up, except when the server restarts.
    Counter,
    /// Any value at the moment of the scrape.
    Gauge,
    /// Cumulative `_bucket`s with `_sum` and `_count`.
    Histogram,
    /// Quantiles with `_sum` and `_count`.
    Summary,
    /// `untyped`, `unknown`, or an OpenMetrics type strobe does not treat specially.
    Untyped,
}

impl MetricKind {
    fn parse(word: &str) -> MetricKind {
        match word {
            "counter" => MetricKind::Counter,
            "gauge" => MetricKind::Gauge,
            "histogram" | "gaugehistogram" => MetricKind::Histogram,
            "summary" => MetricKind::Summary,
            _ => MetricKind::Untyped,
        }
    }
}

/// Why one line was skipped.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LineProblem {
    /// Longer than [`MAX_LINE_BYTES`].
    #[error("a line of {bytes} bytes is longer than {MAX_LINE_BYTES}")]
    TooLong {
        /// The line's length.
        bytes: usize,
    },
    /// Not UTF-8.
    #[error("the line is not UTF-8 text")]
    NotUtf8,
    /// The name is empty or has a character a metric name cannot have.
    #[error("no valid metric name starts the line")]
    BadName,
    /// `{` without its `}`, or a label without `="value"`.
    #[error("the labels are not name=\"value\" pairs in braces")]
    BadLabels,
    /// Nothing after the name and labels.
    #[error("the sample has no value")]
    MissingValue,
    /// The value is not a number.
    #[error("the value `{text}` is not a number")]
    BadValue {
        /// The value as written, cut to 40 characters.
        text: String,
    },
    /// A bucket without a numeric `le` label.
    #[error("a histogram bucket without a numeric le label")]
    BadBucket,
}

/// Something about a text that the reader worked around.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ReadNote {
    /// The text was longer than [`MAX_TEXT_BYTES`].
    #[error("the answer is {bytes} bytes; only the first {MAX_TEXT_BYTES} were read")]
    Truncated {
        /// The text's full length.
        bytes: usize,
    },
    /// The text had more than [`MAX_LINES`] lines.
    #[error("the answer has more than {MAX_LINES} lines; the rest was not read")]
    TooManyLines,
    /// A NUL byte: this is no text exposition (compressed, or another format).
    #[error(
        "the answer holds binary bytes, not Prometheus text; point the metrics URL at the \
         server's /metrics and make sure it is not served compressed"
    )]
    Binary,
    /// A line that could not be read.
    #[error("line {line}: {problem}; the line was skipped")]
    Line {
        /// Its number, from 1.
        line: usize,
        /// What was wrong.
        problem: LineProblem,
    },
    /// A sample whose value (or sum over label sets) is NaN or infinite.
    #[error("{name} is {value}; only finite numbers are kept")]
    NonFinite {
        /// The key it would have had.
        name: String,
        /// `NaN`, `+Inf` or `-Inf`.
        value: String,
    },
    /// More distinct names than [`MAX_NAMES`].
    #[error("more than {MAX_NAMES} metric names; the others were dropped")]
    TooManyNames,
    /// Nothing was read.
    #[error("the answer holds no metric sample")]
    NoSamples,
    /// Notes beyond [`MAX_NOTES`], counted.
    #[error("and {count} more notes like these")]
    More {
        /// How many were left out.
        count: usize,
    },
}

/// One reading of a `/metrics` answer.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Exposition {
    /// Each name's value summed over its label sets; only finite numbers.
    pub values: BTreeMap<String, f64>,
    /// The types the text declared, by family name.
    pub kinds: BTreeMap<String, MetricKind>,
    /// What was worked around, at most [`MAX_NOTES`] plus one [`ReadNote::More`].
    pub notes: Vec<ReadNote>,
    /// Sample lines read.
    pub samples_read: usize,
}

impl Exposition {
    fn note(&mut self, note: ReadNote, dropped: &mut usize) {
        if self.notes.len() < MAX_NOTES {
            self.notes.push(note);
        } else {
            *dropped += 1;
        }
    }
}

/// Reads a `/metrics` answer. Never fails: what cannot be read is skipped with a note.
pub fn read_exposition(bytes: &[u8]) -> Exposition {
    let mut reading = Exposition::default();
    let mut dropped = 0usize;
    let text = if bytes.len() > MAX_TEXT_BYTES {
        reading.note(ReadNote::Truncated { bytes: bytes.len() }, &mut dropped);
        // The line the cut falls in is incomplete: leave it out whole.
        let cut = &bytes[..MAX_TEXT_BYTES];
        let last_newline = cut.iter().rposition(|&byte| byte == b'\n').unwrap_or(0);
        &cut[..last_newline]
    } else {
        bytes
    };
    if text.contains(&0) {
        reading.note(ReadNote::Binary, &mut dropped);
        return reading;
    }
    let mut sums: BTreeMap<String, f64> = BTreeMap::new();
    let mut too_many_names = false;
    for (index, raw) in text.split(|&byte| byte == b'\n').enumerate() {
        if index == MAX_LINES {
            reading.note(ReadNote::TooManyLines, &mut dropped);
            break;
        }
        let line_number = index + 1;
        if raw.len() > MAX_LINE_BYTES {
            let problem = LineProblem::TooLong { bytes: raw.len() };
            let note = ReadNote::Line {
                line: line_number,
                problem,
            };
            reading.note(note, &mut dropped);
            continue;
        }
        let Ok(line) = std::str::from_utf8(raw) else {
            let note = ReadNote::Line {
                line: line_number,
                problem: LineProblem::NotUtf8,
            };
            reading.note(note, &mut dropped);
            continue;
        };
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        if let Some(comment) = line.strip_prefix('#') {
            if comment.trim() == "EOF" {
                break;
            }
            read_comment(comment, &mut reading.kinds);
            continue;
        }
        let sample = match read_sample(line) {
            Ok(sample) => sample,
            Err(problem) => {
                let note = ReadNote::Line {
                    line: line_number,
                    problem,
                };
                reading.note(note, &mut dropped);
                continue;
            }
        };
        if is_creation_time(sample.name, &reading.kinds) {
            continue;
        }
        let key = match sample_key(&sample) {
            Ok(key) => key,
            Err(problem) => {
                let note = ReadNote::Line {
                    line: line_number,
                    problem,
                };
                reading.note(note, &mut dropped);
                continue;
            }
        };
        if !sample.value.is_finite() {
            let value = show_non_finite(sample.value);
            reading.note(ReadNote::NonFinite { name: key, value }, &mut dropped);
            continue;
        }
        reading.samples_read += 1;
        if let Some(sum) = sums.get_mut(&key) {
            *sum += sample.value;
        } else if sums.len() < MAX_NAMES {
            sums.insert(key, sample.value);
        } else if !too_many_names {
            too_many_names = true;
            reading.note(ReadNote::TooManyNames, &mut dropped);
        }
    }
    for (name, value) in sums {
        if value.is_finite() {
            reading.values.insert(name, value);
        } else {
            let value = show_non_finite(value);
            reading.note(ReadNote::NonFinite { name, value }, &mut dropped);
        }
    }
    if reading.samples_read == 0 && !reading.notes.contains(&ReadNote::Binary) {
        reading.note(ReadNote::NoSamples, &mut dropped);
    }
    if dropped > 0 {
        reading.notes.push(ReadNote::More { count: dropped });
    }
    reading
}

fn show_non_finite(value: f64) -> String {
    if value.is_nan() {
        "NaN".to_owned()
    } else if value > 0.0 {
        "+Inf".to_owned()
    } else {
        "-Inf".to_owned()
    }
}

/// `# TYPE name kind` is kept; `# HELP`, `# UNIT` and other comments are not needed.
fn read_comment(comment: &str, kinds: &mut BTreeMap<String, MetricKind>) {
    let mut words = comment.split_whitespace();
    if words.next() != Some("TYPE") {
        return;
    }
    if let (Some(name), Some(kind)) = (words.next(), words.next()) {
        if kinds.len() < MAX_NAMES && is_metric_name(name) {
            kinds.insert(name.to_owned(), MetricKind::parse(kind));
        }
    }
}

/// A sample's labels: each name with its value, escapes undone.
type Labels<'a> = Vec<(&'a str, String)>;

/// One sample line: a name, its labels, a value (a timestamp or an exemplar may follow).
#[derive(Debug, PartialEq)]
struct Sample<'a> {
    name: &'a str,
    labels: Labels<'a>,
    value: f64,
}

fn is_metric_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|first| first.is_ascii_alphabetic() || first == '_' || first == ':')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':')
}

fn read_sample(line: &str) -> Result<Sample<'_>, LineProblem> {
    let name_end = line
        .find(|c: char| c == '{' || c.is_whitespace())
        .unwrap_or(line.len());
    let name = &line[..name_end];
    if !is_metric_name(name) {
        return Err(LineProblem::BadName);
    }
    let mut rest = line[name_end..].trim_start();
    let mut labels = Vec::new();
    if let Some(inside) = rest.strip_prefix('{') {
        let (read, after) = read_labels(inside)?;
        labels = read;
        rest = after;
    }
    let value_text = rest
        .split_whitespace()
        .next()
        .ok_or(LineProblem::MissingValue)?;
    let value = parse_value(value_text).ok_or_else(|| LineProblem::BadValue {
        text: value_text.chars().take(40).collect(),
    })?;
    Ok(Sample {
        name,
        labels,
        value,
    })
}

/// Reads `name="value",…}` (the opening brace already taken); returns the labels and what
/// follows the closing brace. Escapes `\\`, `\"` and `\n` are undone; a trailing comma is
/// allowed.
fn read_labels(text: &str) -> Result<(Labels<'_>, &str), LineProblem> {
    let mut labels = Vec::new();
    let mut rest = text.trim_start();
    loop {
        if let Some(after) = rest.strip_prefix('}') {
            return Ok((labels, after));
        }
        let name_end = rest.find('=').ok_or(LineProblem::BadLabels)?;
        let name = rest[..name_end].trim();
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(LineProblem::BadLabels);
        }
        let quoted = rest[name_end + 1..].trim_start();
        let body = quoted.strip_prefix('"').ok_or(LineProblem::BadLabels)?;
        let mut value = String::new();
        let mut chars = body.char_indices();
        let mut closed_at = None;
        while let Some((at, c)) = chars.next() {
            match c {
                '"' => {
                    closed_at = Some(at);
                    break;
                }
                '\\' => match chars.next() {
                    Some((_, 'n')) => value.push('\n'),
                    Some((_, escaped)) => value.push(escaped),
                    None => return Err(LineProblem::BadLabels),
                },
                other => value.push(other),
            }
        }
        let closed_at = closed_at.ok_or(LineProblem::BadLabels)?;
        labels.push((name, value));
        rest = body[closed_at + 1..].trim_start();
        if let Some(after) = rest.strip_prefix(',') {
            rest = after.trim_start();
        } else if !rest.starts_with('}') {
            return Err(LineProblem::BadLabels);
        }
    }
}

/// A Go-style float: decimals, exponents, `+Inf`, `-Inf`, `NaN`.
fn parse_value(text: &str) -> Option<f64> {
    match text {
        "+Inf" | "Inf" | "+inf" | "inf" => Some(f64::INFINITY),
        "-Inf" | "-inf" => Some(f64::NEG_INFINITY),
        "NaN" | "nan" => Some(f64::NAN),
        _ => {
            let digits_only = text
                .chars()
                .all(|c| c.is_ascii_digit() || matches!(c, '.' | 'e' | 'E' | '+' | '-'));
            if digits_only {
                text.parse().ok()
            } else {
                None
            }
        }
    }
}

/// `x_created` of a counter, histogram or summary family `x` is a creation timestamp, which
/// no sum over label sets or delta over time would make sense of.
fn is_creation_time(name: &str, kinds: &BTreeMap<String, MetricKind>) -> bool {
    let Some(family) = name.strip_suffix("_created") else {
        return false;
    };
    let typed = |family: &str| {
        matches!(
            kinds.get(family),
            Some(MetricKind::Counter | MetricKind::Histogram | MetricKind::Summary)
        )
    };
    // prometheus_client writes a counter `x_total`'s creation time as `x_created`.
    typed(family) || typed(&format!("{family}_total"))
}

/// The key a sample adds into: its name, with `le` for a bucket and `quantile` for a summary.
fn sample_key(sample: &Sample<'_>) -> Result<String, LineProblem> {
    let label = |wanted: &str| {
        sample
            .labels
            .iter()
            .find(|(name, _)| *name == wanted)
            .map(|(_, value)| value.as_str())
    };
    if sample.name.ends_with("_bucket") {
        let bound = label("le")
            .and_then(|le| parse_value(le.trim()))
            .filter(|bound| !bound.is_nan())
            .ok_or(LineProblem::BadBucket)?;
        return Ok(bucket_key(sample.name, bound));
    }
    if let Some(quantile) = label("quantile").and_then(|q| parse_value(q.trim())) {
        return Ok(format!(
            "{}{{quantile=\"{}\"}}",
            sample.name,
            show_bound(quantile)
        ));
    }
    Ok(sample.name.to_owned())
}

/// `name{le="bound"}` with the bound in its shortest form (`1`, `0.005`, `+Inf`), so the same
/// bucket of two label sets, written `1.0` by one and `1` by another, adds into one key.
pub fn bucket_key(bucket_name: &str, bound: f64) -> String {
    format!("{bucket_name}{{le=\"{}\"}}", show_bound(bound))
}

fn show_bound(bound: f64) -> String {
    if bound == f64::INFINITY {
        "+Inf".to_owned()
    } else if bound == f64::NEG_INFINITY {
        "-Inf".to_owned()
    } else {
        format!("{bound}")
    }
}

/// The bound in a bucket key written by [`bucket_key`]: `x_bucket{le="0.5"}` gives
/// `("x_bucket", 0.5)`.
pub fn parse_bucket_key(key: &str) -> Option<(&str, f64)> {
    let (name, rest) = key.split_once("{le=\"")?;
    let bound = rest.strip_suffix("\"}")?;
    Some((name, parse_value(bound).filter(|bound| !bound.is_nan())?))
}

#[cfg(test)]
mod tests;
