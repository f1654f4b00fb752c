//! Reading a workload file: bytes, in pieces of any size → text → layout → records → format →
//! sessions, in one pass, holding only the record being cut and the sessions kept.
//!
//! The layout is told by the content alone: after a UTF-8 byte-order mark and blank space, `[`
//! opens a JSON list, `{` a JSON object a line (JSONL); otherwise a first row naming a known
//! column makes it CSV (BurstGPT by its own header), and anything else is plain text, one
//! prompt a non-empty line. Within JSON the keys of the first record that parses tell the
//! format (`json`). Line endings may be LF or CRLF.
//!
//! Each record becomes one session or is skipped for a reason and counted (`tally`); the
//! [`Keep`] choice says which usable sessions stay in memory.

use crate::core::config::choices::WorkloadTurns;

use super::csv::{header_format, CsvRecords};
use super::fields::{one_turn, plain_turn};
use super::json::{JsonRecords, Layout};
use super::sha256::FileHash;
use super::split::{CsvRows, Lines, ListEntries, MAX_RECORD_BYTES};
pub use super::tally::Keep;
use super::tally::Tally;
use super::{TurnInput, Workload, WorkloadError, WorkloadFormat, MAX_WORKLOAD_BYTES};

/// How to read a workload file: the choices that change which requests it gives, and which
/// of them stay in memory.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReadOptions {
    /// One request a conversation (`first`) or every user turn as a session (`all`).
    pub turns: WorkloadTurns,
    /// Which usable sessions to keep.
    pub keep: Keep,
}

/// The UTF-8 byte-order mark some editors write first.
const BOM: &str = "\u{feff}";

/// Reads a whole workload file's `bytes` (named `name` by the user, if known): what it is,
/// what of it is usable, and the sessions to send. The format is recognised from the content,
/// never from `name`.
pub fn read(
    bytes: &[u8],
    name: Option<&str>,
    options: &ReadOptions,
) -> Result<Workload, WorkloadError> {
    let size = bytes.len() as u64;
    if size > MAX_WORKLOAD_BYTES {
        return Err(WorkloadError::TooLarge {
            bytes: size,
            limit: MAX_WORKLOAD_BYTES,
        });
    }
    let mut reader = WorkloadReader::new(name, options.clone());
    reader.push(bytes)?;
    reader.finish()
}

/// Where reading is in the file's text.
#[derive(Debug)]
enum Stage {
    /// Before the first character that is not blank space: the line breaks met.
    Lead { lines: u64 },
    /// CSV or plain text, until the first row has arrived: the text so far, from its line,
    /// and the first row as it is cut.
    Head {
        first_line: u64,
        head: String,
        rows: CsvRows,
    },
    /// A JSON list.
    List {
        entries: ListEntries,
        records: JsonRecords,
    },
    /// JSONL.
    Jsonl { lines: Lines, records: JsonRecords },
    /// CSV under a known header.
    Csv { rows: CsvRows, records: CsvRecords },
    /// Plain text.
    Text { lines: Lines, tally: Tally },
    /// Reading has failed.
    Failed,
}

/// A workload file read as it arrives: [`push`](Self::push) each piece (cut anywhere), then
/// [`finish`](Self::finish). Memory holds the record being cut and the sessions kept, never
/// the file.
#[derive(Debug)]
pub struct WorkloadReader {
    name: Option<String>,
    options: ReadOptions,
    hash: FileHash,
    /// Bytes pushed.
    bytes: u64,
    /// Bytes decoded as text (the start of a character cut off at a piece's end waits in
    /// `carry`).
    decoded: u64,
    carry: Vec<u8>,
    /// Whether the text's start (and a byte-order mark there) has been seen.
    started: bool,
    stage: Stage,
}

impl WorkloadReader {
    /// A reader for a file named `name`, with `options`.
    pub fn new(name: Option<&str>, options: ReadOptions) -> Self {
        Self {
            name: name.map(str::to_owned),
            options,
            hash: FileHash::default(),
            bytes: 0,
            decoded: 0,
            carry: Vec::new(),
            started: false,
            stage: Stage::Lead { lines: 0 },
        }
    }

    /// Bytes read so far.
    pub fn bytes_read(&self) -> u64 {
        self.bytes
    }

    /// Reads the next piece of the file. After an error, reading is over.
    pub fn push(&mut self, bytes: &[u8]) -> Result<(), WorkloadError> {
        let outcome = self.take(bytes);
        if outcome.is_err() {
            self.stage = Stage::Failed;
        }
        outcome
    }

    fn take(&mut self, bytes: &[u8]) -> Result<(), WorkloadError> {
        if matches!(self.stage, Stage::Failed) {
            return Ok(());
        }
        self.bytes += bytes.len() as u64;
        if self.bytes > MAX_WORKLOAD_BYTES {
            return Err(WorkloadError::TooLarge {
                bytes: self.bytes,
                limit: MAX_WORKLOAD_BYTES,
            });
        }
        self.hash.update(bytes);
        let joined;
        let data: &[u8] = if self.carry.is_empty() {
            bytes
        } else {
            let mut carried = std::mem::take(&mut self.carry);
            carried.extend_from_slice(bytes);
            joined = carried;
            &joined
        };
        let text = match std::str::from_utf8(data) {
            Ok(text) => text,
            Err(error) if error.error_len().is_none() => {
                // A character cut off at the piece's end: its start waits for the rest.
                let valid = error.valid_up_to();
                self.carry = data[valid..].to_vec();
                // The prefix was just checked.
                std::str::from_utf8(&data[..valid]).unwrap_or_default()
            }
            Err(error) => {
                return Err(WorkloadError::NotText {
                    offset: self.decoded + error.valid_up_to() as u64,
                })
            }
        };
        self.decoded += text.len() as u64;
        let text = if self.started {
            text
        } else if text.is_empty() {
            return Ok(());
        } else {
            self.started = true;
            text.strip_prefix(BOM).unwrap_or(text)
        };
        self.feed(text)
    }

    /// Reads the next piece of text.
    fn feed(&mut self, text: &str) -> Result<(), WorkloadError> {
        let turns = self.options.turns;
        match &mut self.stage {
            Stage::Lead { lines } => {
                let Some(start) = text.find(|c: char| !c.is_whitespace()) else {
                    *lines += line_breaks(text);
                    return Ok(());
                };
                let first_line = *lines + line_breaks(&text[..start]) + 1;
                let tally = Tally::keeping(self.options.keep.clone());
                self.stage = match text.as_bytes()[start] {
                    b'[' => Stage::List {
                        entries: ListEntries::new(first_line),
                        records: JsonRecords::new(Layout::List, turns, tally),
                    },
                    b'{' => Stage::Jsonl {
                        lines: Lines::new(first_line),
                        records: JsonRecords::new(Layout::Lines, turns, tally),
                    },
                    _ => Stage::Head {
                        first_line,
                        head: String::new(),
                        rows: CsvRows::new(first_line),
                    },
                };
                self.feed(&text[start..])
            }
            Stage::Head {
                first_line,
                head,
                rows,
            } => {
                head.push_str(text);
                let first_line = *first_line;
                let mut first_row: Option<usize> = None;
                let cut = rows.push(text, &mut |_, row| {
                    first_row.get_or_insert(row.len());
                    Ok(())
                });
                let head_bytes = head.len();
                match (cut, first_row) {
                    (Ok(()), Some(length)) => self.choose_rows(first_line, length, false),
                    // A first row longer than any header: not CSV.
                    (Err(WorkloadError::RecordTooLong { .. }), _) => {
                        self.choose_rows(first_line, 0, true)
                    }
                    (Ok(()), None) if head_bytes > MAX_RECORD_BYTES => {
                        self.choose_rows(first_line, 0, true)
                    }
                    (Ok(()), None) => Ok(()),
                    (Err(error), _) => Err(error),
                }
            }
            Stage::List { entries, records } => {
                entries.push(text, &mut |at, entry| records.entry(at, entry))
            }
            Stage::Jsonl { lines, records } => {
                lines.push(text, &mut |line, record| records.line(line, record))
            }
            Stage::Csv { rows, records } => rows.push(text, &mut |line, row| {
                records.row(line, row);
                Ok(())
            }),
            Stage::Text { lines, tally } => lines.push(text, &mut |line, text| {
                text_line(tally, line, text);
                Ok(())
            }),
            Stage::Failed => Ok(()),
        }
    }

    /// Leaves [`Stage::Head`]: the first row (its first `length` bytes of the head) names a
    /// known header, making the file CSV, or else (or when `text`) the file is plain text.
    /// The head is then read in the stage chosen.
    fn choose_rows(
        &mut self,
        first_line: u64,
        length: usize,
        text: bool,
    ) -> Result<(), WorkloadError> {
        let Stage::Head { head, .. } = std::mem::replace(&mut self.stage, Stage::Failed) else {
            return Ok(());
        };
        let header = &head[..length.min(head.len())];
        let format = if text { None } else { header_format(header) };
        let tally = Tally::keeping(self.options.keep.clone());
        match format {
            Some(format) => {
                let records = CsvRecords::new(header, format, tally)?;
                let mut rows = CsvRows::new(first_line + line_breaks(header));
                let rest = &head[header.len()..];
                let mut records = records;
                rows.push(rest, &mut |line, row| {
                    records.row(line, row);
                    Ok(())
                })?;
                self.stage = Stage::Csv { rows, records };
            }
            None => {
                let mut lines = Lines::new(first_line);
                let mut tally = tally;
                lines.push(&head, &mut |line, text| {
                    text_line(&mut tally, line, text);
                    Ok(())
                })?;
                self.stage = Stage::Text { lines, tally };
            }
        }
        Ok(())
    }

    /// The workload, once every piece has been pushed.
    pub fn finish(mut self) -> Result<Workload, WorkloadError> {
        if !self.carry.is_empty() {
            return Err(WorkloadError::NotText {
                offset: self.decoded,
            });
        }
        if let Stage::Head {
            first_line, head, ..
        } = &self.stage
        {
            // The text ends inside the first row: it is the whole head.
            let (first_line, length) = (*first_line, head.len());
            self.choose_rows(first_line, length, false)?;
        }
        let (format, tally) = match self.stage {
            Stage::Lead { .. } => return Err(WorkloadError::Empty),
            Stage::Head { .. } | Stage::Failed => return Err(WorkloadError::Empty),
            Stage::List {
                mut entries,
                mut records,
            } => {
                entries.finish(&mut |at, entry| records.entry(at, entry))?;
                records.finish()?
            }
            Stage::Jsonl {
                mut lines,
                mut records,
            } => {
                lines.finish(&mut |line, record| records.line(line, record))?;
                records.finish()?
            }
            Stage::Csv {
                mut rows,
                mut records,
            } => {
                rows.finish(&mut |line, row| {
                    records.row(line, row);
                    Ok(())
                })?;
                (records.format(), records.finish())
            }
            Stage::Text {
                mut lines,
                mut tally,
            } => {
                lines.finish(&mut |line, text| {
                    text_line(&mut tally, line, text);
                    Ok(())
                })?;
                (WorkloadFormat::Text, tally)
            }
        };
        tally.finish(format, self.name.as_deref(), self.bytes, self.hash.finish())
    }
}

/// The number of line breaks in `text`.
fn line_breaks(text: &str) -> u64 {
    text.bytes().filter(|&byte| byte == b'\n').count() as u64
}

/// Plain text: one prompt a non-empty line, sent as written (without its line ending).
fn text_line(tally: &mut Tally, line: u64, text: &str) {
    if text.trim().is_empty() {
        return;
    }
    let turn = plain_turn(TurnInput::Text(text.to_owned()), None, None);
    tally.add(line, Ok(one_turn(None, None, turn)));
}
