//! Reading a workload file: bytes → text → layout → format → sessions, in one pass.
//!
//! The layout is told by the content alone: after a UTF-8 byte-order mark and blank space, `[`
//! opens a JSON list, `{` a JSON object a line (JSONL); otherwise a first line naming a known
//! column makes it CSV (BurstGPT by its own header), and anything else is plain text, one
//! prompt a non-empty line. Within JSON the keys of the first record that parses tell the
//! format (`json`). Line endings may be LF or CRLF.
//!
//! Each record becomes one session or is skipped for a reason and counted (`tally`).

use crate::core::config::choices::WorkloadTurns;

use super::fields::{one_turn, plain_turn};
use super::sha256::sha256_prefixed;
use super::tally::{line_breaks, Tally};
use super::{csv, json, TurnInput, Workload, WorkloadError, WorkloadFormat, MAX_WORKLOAD_BYTES};

/// How to read a workload file: the choices that change which requests it gives.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReadOptions {
    /// One request a conversation (`first`) or every user turn as a session (`all`).
    pub turns: WorkloadTurns,
}

/// The UTF-8 byte-order mark some editors write first.
const BOM: &str = "\u{feff}";

/// Reads a workload file's `bytes` (named `name` by the user, if known): what it is, what of
/// it is usable, and the sessions to send. The format is recognised from the content, never
/// from `name`.
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
    let text = std::str::from_utf8(bytes).map_err(|error| WorkloadError::NotText {
        offset: error.valid_up_to() as u64,
    })?;
    let text = text.strip_prefix(BOM).unwrap_or(text);
    let trimmed = text.trim_start();
    if trimmed.is_empty() {
        return Err(WorkloadError::Empty);
    }
    // Lines before the first character count for the lines named later.
    let lead_lines = line_breaks(&text[..text.len() - trimmed.len()]);
    let (format, tally) = match trimmed.as_bytes()[0] {
        b'[' => json::read_list(trimmed, lead_lines, options.turns)?,
        b'{' => json::read_lines(trimmed, lead_lines, options.turns)?,
        _ => match csv::header_format(trimmed) {
            Some(format) => (format, csv::read(trimmed, lead_lines, format)?),
            None => (WorkloadFormat::Text, read_text(trimmed, lead_lines)),
        },
    };
    tally.finish(format, name, size, sha256_prefixed(bytes))
}

/// Plain text: one prompt a non-empty line, sent as written (without its line ending).
fn read_text(text: &str, lead_lines: u64) -> Tally {
    let mut tally = Tally::default();
    for (index, line) in text.split('\n').enumerate() {
        let line = line.strip_suffix('\r').unwrap_or(line);
        if line.trim().is_empty() {
            continue;
        }
        let turn = plain_turn(TurnInput::Text(line.to_owned()), None, None);
        tally.add(
            lead_lines + index as u64 + 1,
            Ok(one_turn(None, None, turn)),
        );
    }
    tally
}
