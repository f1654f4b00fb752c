//! Cutting a workload file's text into records as it arrives, piece by piece, so that a file
//! of hundreds of megabytes is read without ever being whole in memory: lines (JSONL, plain
//! text), the entries of a JSON list, and CSV rows (a quoted cell may hold line breaks).
//!
//! Each splitter takes the text in pieces of any size (cut anywhere, even inside a record) and
//! hands each complete record to a callback with the 1-based line it starts on; only the
//! record being cut is buffered, at most [`MAX_RECORD_BYTES`]. A JSON list's own punctuation
//! (brackets, commas) is checked here, its entries by the JSON reader.

use super::WorkloadError;

/// The longest record strobe buffers (64 MiB): no prompt a server takes is longer, and a file
/// that never closes a quote or a bracket must not fill the tab's memory.
pub const MAX_RECORD_BYTES: usize = 64 << 20;

/// The error for a record past [`MAX_RECORD_BYTES`] that starts at `line`.
fn too_long(line: u64) -> WorkloadError {
    WorkloadError::RecordTooLong {
        line,
        limit: MAX_RECORD_BYTES as u64,
    }
}

/// Lines: each without its `\n` (and a `\r` before it), blank ones included.
#[derive(Debug)]
pub(super) struct Lines {
    /// The start of a line whose end has not arrived yet.
    pending: String,
    /// The line `pending` (or the next piece) starts.
    line: u64,
}

impl Lines {
    /// Lines numbered from `first_line`.
    pub fn new(first_line: u64) -> Self {
        Self {
            pending: String::new(),
            line: first_line,
        }
    }

    /// Cuts `text` into lines, handing each complete one to `record`.
    pub fn push(
        &mut self,
        text: &str,
        record: &mut impl FnMut(u64, &str) -> Result<(), WorkloadError>,
    ) -> Result<(), WorkloadError> {
        let mut rest = text;
        while let Some(end) = rest.find('\n') {
            let part = &rest[..end];
            rest = &rest[end + 1..];
            if self.pending.is_empty() {
                record(self.line, part.strip_suffix('\r').unwrap_or(part))?;
            } else {
                self.keep(part)?;
                let line = std::mem::take(&mut self.pending);
                record(self.line, line.strip_suffix('\r').unwrap_or(&line))?;
            }
            self.line += 1;
        }
        self.keep(rest)
    }

    /// Buffers the start of a line, within [`MAX_RECORD_BYTES`].
    fn keep(&mut self, part: &str) -> Result<(), WorkloadError> {
        if self.pending.len() + part.len() > MAX_RECORD_BYTES {
            return Err(too_long(self.line));
        }
        self.pending.push_str(part);
        Ok(())
    }

    /// The last line, when the text does not end with a line break.
    pub fn finish(
        &mut self,
        record: &mut impl FnMut(u64, &str) -> Result<(), WorkloadError>,
    ) -> Result<(), WorkloadError> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let line = std::mem::take(&mut self.pending);
        record(self.line, line.strip_suffix('\r').unwrap_or(&line))
    }
}

/// Where a position in the text is, 1-based, as serde_json counts (columns in bytes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Position {
    /// Line.
    pub line: u64,
    /// Column, in bytes from the line's start.
    pub column: u64,
}

/// Where the JSON list's cutter is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ListState {
    /// Before the list's `[`.
    Open,
    /// After `[`: an entry or `]`.
    First,
    /// After `,`: an entry.
    Next,
    /// Inside an object or list entry: its depth, whether inside a string, after a backslash.
    Nested {
        depth: u64,
        string: bool,
        escape: bool,
    },
    /// Inside a string entry.
    Text { escape: bool },
    /// Inside a bare entry (a number, `true`, `null`…), which ends at punctuation or space.
    Bare,
    /// After an entry: `,` or `]`.
    After,
    /// After the list's `]`: only blank space may follow.
    Closed,
}

/// Why the list's punctuation is wrong, in the words of [`WorkloadError::Broken`].
const NOT_JSON: &str = "this is not valid JSON";

/// The entries of a JSON list, each the JSON text of one entry with where it starts.
#[derive(Debug)]
pub(super) struct ListEntries {
    state: ListState,
    /// The entry being cut.
    entry: String,
    /// Where `entry` starts.
    entry_at: Position,
    /// Where the next byte is.
    at: Position,
}

impl ListEntries {
    /// A list whose `[` is the next byte, at `first_line`, column 1.
    pub fn new(first_line: u64) -> Self {
        let at = Position {
            line: first_line,
            column: 1,
        };
        Self {
            state: ListState::Open,
            entry: String::new(),
            entry_at: at,
            at,
        }
    }

    /// Cuts `text` into entries, handing each complete one to `entry` with its start.
    pub fn push(
        &mut self,
        text: &str,
        entry: &mut impl FnMut(Position, &str) -> Result<(), WorkloadError>,
    ) -> Result<(), WorkloadError> {
        let bytes = text.as_bytes();
        // Where the entry being cut starts in this piece.
        let mut from = match self.state {
            ListState::Nested { .. } | ListState::Text { .. } | ListState::Bare => Some(0),
            _ => None,
        };
        let mut index = 0;
        while index < bytes.len() {
            let byte = bytes[index];
            match self.state {
                ListState::Open | ListState::First | ListState::Next | ListState::After => {
                    if !byte.is_ascii_whitespace() {
                        let start = self.punctuation(byte)?;
                        if start {
                            self.entry_at = self.at;
                            from = Some(index);
                        }
                    }
                }
                ListState::Closed => {
                    if !byte.is_ascii_whitespace() {
                        return Err(self.broken(NOT_JSON));
                    }
                }
                ListState::Nested {
                    depth,
                    string,
                    escape,
                } => {
                    self.state = nested(depth, string, escape, byte);
                    if self.state == ListState::After {
                        self.emit(text, from.take(), index + 1, entry)?;
                    }
                }
                ListState::Text { escape } => {
                    self.state = match (escape, byte) {
                        (true, _) => ListState::Text { escape: false },
                        (false, b'\\') => ListState::Text { escape: true },
                        (false, b'"') => ListState::After,
                        _ => ListState::Text { escape: false },
                    };
                    if self.state == ListState::After {
                        self.emit(text, from.take(), index + 1, entry)?;
                    }
                }
                ListState::Bare => {
                    if byte.is_ascii_whitespace() || byte == b',' || byte == b']' {
                        self.state = ListState::After;
                        self.emit(text, from.take(), index, entry)?;
                        // The byte that ended it is the list's punctuation: read it again.
                        continue;
                    }
                }
            }
            self.advance(byte);
            index += 1;
        }
        if let Some(from) = from {
            self.keep(&text[from..])?;
        }
        Ok(())
    }

    /// Reads one byte of the list's own punctuation (not blank space); whether it starts an
    /// entry.
    fn punctuation(&mut self, byte: u8) -> Result<bool, WorkloadError> {
        let (next, starts) = match (self.state, byte) {
            (ListState::Open, b'[') => (ListState::First, false),
            (ListState::First, b']') | (ListState::After, b']') => (ListState::Closed, false),
            (ListState::After, b',') => (ListState::Next, false),
            (ListState::First | ListState::Next, b'{' | b'[') => (
                ListState::Nested {
                    depth: 1,
                    string: false,
                    escape: false,
                },
                true,
            ),
            (ListState::First | ListState::Next, b'"') => (ListState::Text { escape: false }, true),
            (ListState::First | ListState::Next, b) if b != b',' && b != b']' => {
                (ListState::Bare, true)
            }
            _ => return Err(self.broken(NOT_JSON)),
        };
        self.state = next;
        Ok(starts)
    }

    /// Hands the entry that ends at `end` of `text` (begun at `from`, or in earlier pieces).
    fn emit(
        &mut self,
        text: &str,
        from: Option<usize>,
        end: usize,
        entry: &mut impl FnMut(Position, &str) -> Result<(), WorkloadError>,
    ) -> Result<(), WorkloadError> {
        let part = &text[from.unwrap_or(0)..end];
        if self.entry.is_empty() {
            return entry(self.entry_at, part);
        }
        self.keep(part)?;
        let whole = std::mem::take(&mut self.entry);
        entry(self.entry_at, &whole)
    }

    /// Buffers the start of an entry, within [`MAX_RECORD_BYTES`].
    fn keep(&mut self, part: &str) -> Result<(), WorkloadError> {
        if self.entry.len() + part.len() > MAX_RECORD_BYTES {
            return Err(too_long(self.entry_at.line));
        }
        self.entry.push_str(part);
        Ok(())
    }

    /// Moves the position past `byte`.
    fn advance(&mut self, byte: u8) {
        if byte == b'\n' {
            self.at.line += 1;
            self.at.column = 1;
        } else {
            self.at.column += 1;
        }
    }

    /// The list breaks here, for `reason`.
    fn broken(&self, reason: &'static str) -> WorkloadError {
        WorkloadError::Broken {
            line: self.at.line,
            column: self.at.column,
            reason,
        }
    }

    /// The end of the text: the list must have closed.
    pub fn finish(
        &mut self,
        entry: &mut impl FnMut(Position, &str) -> Result<(), WorkloadError>,
    ) -> Result<(), WorkloadError> {
        match self.state {
            ListState::Closed => Ok(()),
            ListState::Bare => {
                // A bare entry that the text's end cuts short: read it, then say the list
                // never closed.
                let whole = std::mem::take(&mut self.entry);
                entry(self.entry_at, &whole)?;
                Err(self.broken(CUT_SHORT))
            }
            _ => Err(self.broken(CUT_SHORT)),
        }
    }
}

/// Why a list that ends before its `]` is broken.
pub(super) const CUT_SHORT: &str = "the file ends inside a value (was it cut short?)";

/// The next state inside an object or list entry after `byte`.
fn nested(depth: u64, string: bool, escape: bool, byte: u8) -> ListState {
    let (depth, string, escape) = if string {
        match (escape, byte) {
            (true, _) => (depth, true, false),
            (false, b'\\') => (depth, true, true),
            (false, b'"') => (depth, false, false),
            _ => (depth, true, false),
        }
    } else {
        match byte {
            b'"' => (depth, true, false),
            b'{' | b'[' => (depth + 1, false, false),
            b'}' | b']' => (depth - 1, false, false),
            _ => (depth, false, false),
        }
    };
    if depth == 0 {
        ListState::After
    } else {
        ListState::Nested {
            depth,
            string,
            escape,
        }
    }
}

/// Where the CSV cutter is within a row, as `csv::Rows` reads one: a quote opens a quoted cell
/// only at a cell's start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum CsvState {
    /// At a cell's start.
    CellStart,
    /// Inside an unquoted cell.
    Unquoted,
    /// Inside a quoted cell.
    Quoted,
    /// After a quote inside a quoted cell: a second quote, a comma or the row's end.
    QuoteInQuoted,
    /// After a quoting error: the row ends with its line.
    Broken,
}

/// CSV rows: each the text of one row (several lines when a quoted cell holds line breaks),
/// with its line break, and the line it starts on. Blank lines come as rows of their own.
#[derive(Debug)]
pub(super) struct CsvRows {
    state: CsvState,
    /// The row being cut.
    row: String,
    /// The line `row` starts on.
    row_line: u64,
    /// The line of the next byte.
    line: u64,
}

impl CsvRows {
    /// Rows numbered from `first_line`.
    pub fn new(first_line: u64) -> Self {
        Self {
            state: CsvState::CellStart,
            row: String::new(),
            row_line: first_line,
            line: first_line,
        }
    }

    /// Cuts `text` into rows, handing each complete one to `row`.
    pub fn push(
        &mut self,
        text: &str,
        row: &mut impl FnMut(u64, &str) -> Result<(), WorkloadError>,
    ) -> Result<(), WorkloadError> {
        let mut from = 0;
        for (index, byte) in text.bytes().enumerate() {
            self.state = match (self.state, byte) {
                (CsvState::Quoted, b'"') => CsvState::QuoteInQuoted,
                (CsvState::Quoted, _) => CsvState::Quoted,
                (CsvState::QuoteInQuoted, b'"') => CsvState::Quoted,
                (CsvState::QuoteInQuoted, b',') => CsvState::CellStart,
                (_, b'\n') => CsvState::CellStart,
                (CsvState::CellStart, b'"') => CsvState::Quoted,
                (CsvState::CellStart | CsvState::Unquoted, b',') => CsvState::CellStart,
                (CsvState::CellStart | CsvState::Unquoted, _) => CsvState::Unquoted,
                // `"a"\r\n` ends the row at the `\n`; anything else after the closing quote is
                // a quoting error, and the row still ends with its line.
                (CsvState::QuoteInQuoted | CsvState::Broken, _) => CsvState::Broken,
            };
            if byte == b'\n' {
                self.line += 1;
                if self.state == CsvState::CellStart {
                    self.emit(&text[from..=index], row)?;
                    from = index + 1;
                }
            }
        }
        self.keep(&text[from..])
    }

    /// Hands the row that ends with `part`.
    fn emit(
        &mut self,
        part: &str,
        row: &mut impl FnMut(u64, &str) -> Result<(), WorkloadError>,
    ) -> Result<(), WorkloadError> {
        let line = self.row_line;
        self.row_line = self.line;
        if self.row.is_empty() {
            return row(line, part);
        }
        self.keep(part)?;
        let whole = std::mem::take(&mut self.row);
        row(line, &whole)
    }

    /// Buffers the start of a row, within [`MAX_RECORD_BYTES`].
    fn keep(&mut self, part: &str) -> Result<(), WorkloadError> {
        if self.row.len() + part.len() > MAX_RECORD_BYTES {
            return Err(too_long(self.row_line));
        }
        self.row.push_str(part);
        Ok(())
    }

    /// The last row, when the text does not end with a line break (or a quote never closed).
    pub fn finish(
        &mut self,
        row: &mut impl FnMut(u64, &str) -> Result<(), WorkloadError>,
    ) -> Result<(), WorkloadError> {
        if self.row.is_empty() {
            return Ok(());
        }
        let whole = std::mem::take(&mut self.row);
        row(self.row_line, &whole)
    }
}
