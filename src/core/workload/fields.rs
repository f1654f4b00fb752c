//! One field of a workload record, read and checked: counts, milliseconds and texts from JSON
//! (a record's raw value of that key) or from a CSV cell. A field that is there but wrong
//! gives a [`Skip`] naming the field, never its value; a field that is absent is `None`.
//!
//! Also the outcome of reading one record ([`Skip`]) and the small helpers every reader
//! shares (output tokens from a recorded reply, one-turn sessions).

use serde_json::value::RawValue;

use super::{Session, SkipReason, Turn, TurnInput};

/// Why one record is left out: the reason, and the field at fault when one is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Skip {
    /// Why.
    pub reason: SkipReason,
    /// The field's name (`output_tokens`, `turns[2].text`), never its value.
    pub field: Option<String>,
}

impl Skip {
    /// Left out for `reason`, no one field at fault.
    pub fn because(reason: SkipReason) -> Self {
        Self {
            reason,
            field: None,
        }
    }

    /// Left out for `reason`, `field` at fault.
    pub fn at(reason: SkipReason, field: impl Into<String>) -> Self {
        Self {
            reason,
            field: Some(field.into()),
        }
    }

    /// A field of the wrong type or with an impossible value.
    pub fn bad(field: impl Into<String>) -> Self {
        Self::at(SkipReason::BadField, field)
    }
}

/// The prompt columns vLLM's custom format and GuideLLM read, in the order they are tried.
pub(super) const PROMPT_COLUMNS: [&str; 7] = [
    "prompt",
    "instruction",
    "question",
    "input",
    "context",
    "content",
    "text",
];

/// The largest count a JSON number carries exactly (2^53): a larger count is a mistake.
const MAX_EXACT: f64 = 9_007_199_254_740_992.0;

/// A finite, non-negative number, else the field is bad.
pub(super) fn non_negative(value: f64, field: &str) -> Result<f64, Skip> {
    if value.is_finite() && value >= 0.0 {
        Ok(value)
    } else {
        Err(Skip::bad(field))
    }
}

/// A whole, non-negative number as a count, else the field is bad.
pub(super) fn whole(value: f64, field: &str) -> Result<u64, Skip> {
    let value = non_negative(value, field)?;
    if value.fract() != 0.0 || value > MAX_EXACT {
        return Err(Skip::bad(field));
    }
    // Whole and at most 2^53: exact as u64.
    Ok(value as u64)
}

/// A JSON field as a number of milliseconds (finite, at least 0).
pub(super) fn json_ms(raw: Option<&RawValue>, field: &str) -> Result<Option<f64>, Skip> {
    raw.map(|raw| json_number(raw, field).and_then(|value| non_negative(value, field)))
        .transpose()
}

/// A JSON field as a whole count (0 allowed).
pub(super) fn json_count(raw: Option<&RawValue>, field: &str) -> Result<Option<u64>, Skip> {
    raw.map(|raw| json_number(raw, field).and_then(|value| whole(value, field)))
        .transpose()
}

/// A JSON field as a number of tokens to ask for: a whole count of at least 1 (a server
/// refuses `max_tokens: 0`).
pub(super) fn json_tokens(raw: Option<&RawValue>, field: &str) -> Result<Option<u64>, Skip> {
    match json_count(raw, field)? {
        Some(0) => Err(Skip::bad(field)),
        tokens => Ok(tokens),
    }
}

/// A JSON field as text; an absent or `null` field is `None`.
pub(super) fn json_text(raw: Option<&RawValue>, field: &str) -> Result<Option<String>, Skip> {
    raw.map(|raw| serde_json::from_str::<String>(raw.get()).map_err(|_| Skip::bad(field)))
        .transpose()
}

/// A JSON field as an id: a string, or a number written as the file writes it.
pub(super) fn json_id(raw: Option<&RawValue>, field: &str) -> Result<Option<String>, Skip> {
    let Some(raw) = raw else { return Ok(None) };
    let text = raw.get();
    if text.starts_with('"') {
        return json_text(Some(raw), field);
    }
    match serde_json::from_str::<serde_json::Number>(text) {
        Ok(number) => Ok(Some(number.to_string())),
        Err(_) => Err(Skip::bad(field)),
    }
}

/// The number a JSON value is, else the field is bad (a string, a list, an object).
fn json_number(raw: &RawValue, field: &str) -> Result<f64, Skip> {
    serde_json::from_str::<f64>(raw.get()).map_err(|_| Skip::bad(field))
}

/// A CSV cell as a number (surrounding spaces allowed; `NaN`, `inf` and negatives are bad);
/// an empty cell is `None`.
pub(super) fn cell_number(cell: &str, field: &str) -> Result<Option<f64>, Skip> {
    let cell = cell.trim();
    if cell.is_empty() {
        return Ok(None);
    }
    let value: f64 = cell.parse().map_err(|_| Skip::bad(field))?;
    non_negative(value, field).map(Some)
}

/// A CSV cell as a whole count; an empty cell is `None`.
pub(super) fn cell_count(cell: &str, field: &str) -> Result<Option<u64>, Skip> {
    cell_number(cell, field)?
        .map(|value| whole(value, field))
        .transpose()
}

/// A CSV cell as tokens to ask for (at least 1); an empty cell is `None`.
pub(super) fn cell_tokens(cell: &str, field: &str) -> Result<Option<u64>, Skip> {
    match cell_count(cell, field)? {
        Some(0) => Err(Skip::bad(field)),
        tokens => Ok(tokens),
    }
}

/// The output tokens a recorded reply stands for: its length at 3 characters a token, rounded
/// up, at least 1 (as the plan sizes text without a tokenizer).
pub(super) fn reply_tokens(reply: &str) -> u64 {
    let chars = reply.chars().count() as u64;
    chars.div_ceil(3).max(1)
}

/// The first of several fields that is present, with its name.
pub(super) fn first_present<'a>(
    fields: &[(&'static str, Option<&'a RawValue>)],
) -> Option<(&'static str, &'a RawValue)> {
    fields
        .iter()
        .find_map(|(name, raw)| raw.map(|raw| (*name, raw)))
}

/// A one-turn session.
pub(super) fn one_turn(id: Option<String>, arrival_ms: Option<f64>, turn: Turn) -> Session {
    Session {
        id,
        arrival_ms,
        turns: vec![turn],
    }
}

/// A turn sending `input`, with no delay and no recorded reply.
pub(super) fn plain_turn(
    input: TurnInput,
    output_tokens: Option<u64>,
    input_tokens: Option<u64>,
) -> Turn {
    Turn {
        input,
        output_tokens,
        input_tokens,
        delay_ms: None,
        recorded_reply: None,
    }
}
