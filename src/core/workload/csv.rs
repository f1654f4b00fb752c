//! CSV workloads: RFC 4180 rows (quoted fields, doubled quotes, new lines inside quotes, CRLF)
//! under a header, read as prompts when the header names a prompt column (`prompt`, `text`…,
//! as GuideLLM reads CSV) or as a BurstGPT trace when it has BurstGPT's `Timestamp`,
//! `Request tokens` and `Response tokens`.
//!
//! BurstGPT: `Timestamp` is in seconds (kept as ms), each row is its own request of
//! `Request tokens` synthetic tokens asking for `Response tokens`; a row with 0 response tokens
//! is BurstGPT's record of a failed request and is skipped as [`SkipReason::Failed`]. Both log
//! types (`Conversation log`, `API log`) and every `Model` are kept: the trace is replayed as
//! recorded (vLLM keeps only GPT-4's rows; filter the file to do that).

use super::fields::PROMPT_COLUMNS;
use super::fields::{cell_count, cell_number, cell_tokens, one_turn, plain_turn, Skip};
use super::tally::Tally;
use super::{Session, SkipReason, TurnInput, WorkloadError, WorkloadFormat};

/// BurstGPT's columns strobe reads.
const BURSTGPT_COLUMNS: [&str; 3] = ["Timestamp", "Request tokens", "Response tokens"];

/// The CSV format `text`'s first row names, if it is a header strobe knows.
pub(super) fn header_format(text: &str) -> Option<WorkloadFormat> {
    let (_, header) = Rows::new(text).next()?;
    let header = header.ok()?;
    if BURSTGPT_COLUMNS
        .iter()
        .all(|column| header.iter().any(|cell| cell.trim() == *column))
    {
        return Some(WorkloadFormat::Burstgpt);
    }
    header
        .iter()
        .any(|cell| PROMPT_COLUMNS.contains(&cell.trim().to_ascii_lowercase().as_str()))
        .then_some(WorkloadFormat::Csv)
}

/// The rows of a CSV file as they come, after its header.
#[derive(Debug)]
pub(super) struct CsvRecords {
    format: WorkloadFormat,
    /// The header's number of cells: a row of another width does not parse.
    width: usize,
    columns: Columns,
    tally: Tally,
}

impl CsvRecords {
    /// Rows under the header `header_row` (the text of the file's first row), which
    /// [`header_format`] found to be `format`, counted in `tally`.
    pub fn new(
        header_row: &str,
        format: WorkloadFormat,
        tally: Tally,
    ) -> Result<Self, WorkloadError> {
        let header = match Rows::new(header_row).next() {
            Some((_, Ok(header))) => header,
            _ => return Err(WorkloadError::Empty),
        };
        let find = |names: &[&str]| -> Option<(usize, String)> {
            names.iter().find_map(|name| {
                header
                    .iter()
                    .position(|cell| cell.trim().eq_ignore_ascii_case(name))
                    .map(|index| (index, header[index].trim().to_owned()))
            })
        };
        let columns = if format == WorkloadFormat::Burstgpt {
            Columns {
                prompt: find(&["Request tokens"]),
                output: find(&["Response tokens"]),
                input: None,
                timestamp: find(&["Timestamp"]),
                id: None,
            }
        } else {
            Columns {
                prompt: find(&PROMPT_COLUMNS),
                output: find(&[
                    "output_tokens",
                    "output_tokens_count",
                    "completion_tokens_count",
                    "max_tokens",
                ]),
                input: find(&["prompt_tokens_count", "input_tokens_count"]),
                timestamp: None,
                id: find(&["id"]),
            }
        };
        Ok(Self {
            format,
            width: header.len(),
            columns,
            tally,
        })
    }

    /// One row's text (as `split::CsvRows` cuts it), starting at `line`; a blank line is no
    /// row.
    pub fn row(&mut self, line: u64, text: &str) {
        for (offset, row) in Rows::new(text) {
            let outcome = match row {
                Ok(cells) if cells.len() == self.width => {
                    if self.format == WorkloadFormat::Burstgpt {
                        burstgpt_row(&self.columns, &cells)
                    } else {
                        prompt_row(&self.columns, &cells)
                    }
                }
                _ => Err(Skip::because(SkipReason::Unparsable)),
            };
            self.tally.add(line + offset - 1, outcome);
        }
    }

    /// The format the header named.
    pub fn format(&self) -> WorkloadFormat {
        self.format
    }

    /// What was found, once every row is in.
    pub fn finish(self) -> Tally {
        self.tally
    }
}

/// Where the columns strobe reads are: index and the header's spelling.
#[derive(Debug)]
struct Columns {
    prompt: Option<(usize, String)>,
    output: Option<(usize, String)>,
    input: Option<(usize, String)>,
    timestamp: Option<(usize, String)>,
    id: Option<(usize, String)>,
}

/// The cell of `column` in `cells`, with the column's name.
fn cell<'a>(
    column: &'a Option<(usize, String)>,
    cells: &'a [String],
) -> Option<(&'a str, &'a str)> {
    column
        .as_ref()
        .map(|(index, name)| (cells[*index].as_str(), name.as_str()))
}

/// A prompt row: the prompt column's text as written, its token counts.
fn prompt_row(columns: &Columns, cells: &[String]) -> Result<Session, Skip> {
    let (prompt, name) =
        cell(&columns.prompt, cells).ok_or_else(|| Skip::because(SkipReason::NoPrompt))?;
    if prompt.trim().is_empty() {
        return Err(Skip::at(SkipReason::NoPrompt, name));
    }
    let output = match cell(&columns.output, cells) {
        Some((value, name)) => cell_tokens(value, name)?,
        None => None,
    };
    let input = match cell(&columns.input, cells) {
        Some((value, name)) => cell_count(value, name)?,
        None => None,
    };
    let id = cell(&columns.id, cells)
        .map(|(value, _)| value.to_owned())
        .filter(|value| !value.is_empty());
    let turn = plain_turn(TurnInput::Text(prompt.to_owned()), output, input);
    Ok(one_turn(id, None, turn))
}

/// A BurstGPT row: a request of `Request tokens` synthetic tokens at `Timestamp` seconds.
fn burstgpt_row(columns: &Columns, cells: &[String]) -> Result<Session, Skip> {
    let (request, name) =
        cell(&columns.prompt, cells).ok_or_else(|| Skip::because(SkipReason::NoPrompt))?;
    let tokens = match cell_count(request, name)? {
        Some(tokens) if tokens > 0 => tokens,
        _ => return Err(Skip::at(SkipReason::NoPrompt, name)),
    };
    let output = match cell(&columns.output, cells) {
        Some((value, name)) => match cell_count(value, name)? {
            Some(0) => return Err(Skip::at(SkipReason::Failed, name)),
            output => output,
        },
        None => None,
    };
    let arrival = match cell(&columns.timestamp, cells) {
        Some((value, name)) => cell_number(value, name)?.map(|seconds| seconds * 1000.0),
        None => None,
    };
    let input = TurnInput::Synthetic {
        tokens,
        hash_ids: Vec::new(),
    };
    Ok(one_turn(
        None,
        arrival,
        plain_turn(input, output, Some(tokens)),
    ))
}

/// RFC 4180 rows of a text: each the 1-based line it starts on and its cells, or `Err` when
/// it breaks the quoting rules (the rest of that line is passed over). Blank lines are no rows.
pub(super) struct Rows<'a> {
    text: &'a str,
    pos: usize,
    line: u64,
}

impl<'a> Rows<'a> {
    /// The rows of `text`, its first line numbered 1.
    pub fn new(text: &'a str) -> Self {
        Self {
            text,
            pos: 0,
            line: 1,
        }
    }

    /// Passes over the rest of the current line (after a quoting error).
    fn skip_line(&mut self) {
        match self.text[self.pos..].find('\n') {
            Some(end) => {
                self.pos += end + 1;
                self.line += 1;
            }
            None => self.pos = self.text.len(),
        }
    }

    /// One quoted cell, `pos` at its opening quote; `None` when the closing quote is missing.
    fn quoted(&mut self) -> Option<String> {
        let bytes = self.text.as_bytes();
        let mut cell = String::new();
        self.pos += 1;
        loop {
            let close = self.text[self.pos..].find('"')?;
            let part = &self.text[self.pos..self.pos + close];
            self.line += part.bytes().filter(|&byte| byte == b'\n').count() as u64;
            cell.push_str(part);
            self.pos += close + 1;
            if bytes.get(self.pos) == Some(&b'"') {
                cell.push('"');
                self.pos += 1;
            } else {
                return Some(cell);
            }
        }
    }
}

impl Iterator for Rows<'_> {
    type Item = (u64, Result<Vec<String>, ()>);

    fn next(&mut self) -> Option<Self::Item> {
        let bytes = self.text.as_bytes();
        // Blank lines hold no row.
        loop {
            let rest = &self.text[self.pos..];
            let end = rest.find('\n');
            let line = &rest[..end.unwrap_or(rest.len())];
            if !line.trim().is_empty() {
                break;
            }
            match end {
                Some(end) => {
                    self.pos += end + 1;
                    self.line += 1;
                }
                None => return None,
            }
        }
        let start_line = self.line;
        let mut cells = Vec::new();
        loop {
            if bytes.get(self.pos) == Some(&b'"') {
                let Some(cell) = self.quoted() else {
                    self.pos = self.text.len();
                    return Some((start_line, Err(())));
                };
                cells.push(cell);
                // After a closing quote: a comma, the line's end or the text's end.
                match (bytes.get(self.pos), bytes.get(self.pos + 1)) {
                    (Some(b','), _) => self.pos += 1,
                    (Some(b'\n'), _) | (Some(b'\r'), Some(b'\n')) => {
                        self.skip_line();
                        return Some((start_line, Ok(cells)));
                    }
                    (None, _) => return Some((start_line, Ok(cells))),
                    _ => {
                        self.skip_line();
                        return Some((start_line, Err(())));
                    }
                }
            } else {
                let rest = &self.text[self.pos..];
                let end = rest.find([',', '\n']).unwrap_or(rest.len());
                let cell = &rest[..end];
                match bytes.get(self.pos + end) {
                    Some(b',') => {
                        cells.push(cell.to_owned());
                        self.pos += end + 1;
                    }
                    Some(_) => {
                        cells.push(cell.strip_suffix('\r').unwrap_or(cell).to_owned());
                        self.pos += end + 1;
                        self.line += 1;
                        return Some((start_line, Ok(cells)));
                    }
                    None => {
                        cells.push(cell.strip_suffix('\r').unwrap_or(cell).to_owned());
                        self.pos = self.text.len();
                        return Some((start_line, Ok(cells)));
                    }
                }
            }
        }
    }
}
