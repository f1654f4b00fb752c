//! The JSON formats, one record at a time: a JSON list's entries or a JSONL file's lines are
//! cut out of the text as raw slices (no tree is built), each read into [`Keys`] (the keys any
//! format uses, each still raw), and the keys of the first record that parses tell the format:
//!
//! | keys | format |
//! |---|---|
//! | `conversations` or `conversation` | ShareGPT |
//! | `messages` | OpenAI chat |
//! | `turns` | AIPerf `multi_turn` |
//! | `input_length` or `hash_ids` | Mooncake trace |
//! | `texts`, or `text` with `output_length`, `timestamp`, `delay` or `session_id` | AIPerf `single_turn` |
//! | `prompt`, `instruction`, `question`, `input`, `context`, `content` or `text` | prompt columns (vLLM custom, GuideLLM) |
//!
//! Every later record is read as that format; one that does not fit is skipped and counted.
//! Only a chat record's messages become `serde_json::Value`s (they are sent as given).

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;

use crate::core::config::choices::WorkloadTurns;

use super::fields::{
    first_present, json_count, json_id, json_ms, json_text, json_tokens, one_turn, plain_turn,
    reply_tokens, Skip,
};
use super::split::{Position, CUT_SHORT};
use super::tally::Tally;
use super::{Session, SkipReason, Turn, TurnInput, WorkloadError, WorkloadFormat};

/// Mooncake's block size: one hash id stands for 512 tokens.
pub(super) const MOONCAKE_BLOCK_TOKENS: u64 = 512;

/// Records read before giving up on recognising a JSONL file whose lines do not parse.
const RECOGNITION_WINDOW: usize = 10;

/// What the message says a JSON record should look like.
const EXPECTED_KEYS: &str = "expected `conversations` (ShareGPT), `messages` (OpenAI chat), \
    `prompt` or `text` (vLLM custom, GuideLLM, AIPerf single_turn), `turns` (AIPerf multi_turn) \
    or `input_length` (Mooncake trace); docs/guide/workloads.md lists every format";

/// The keys any JSON format reads, each as its raw JSON (`None` when absent or `null`).
#[derive(Debug, Default, Deserialize)]
struct Keys<'a> {
    #[serde(borrow)]
    id: Option<&'a RawValue>,
    #[serde(borrow)]
    conversations: Option<&'a RawValue>,
    #[serde(borrow)]
    conversation: Option<&'a RawValue>,
    #[serde(borrow)]
    messages: Option<&'a RawValue>,
    #[serde(borrow)]
    max_tokens: Option<&'a RawValue>,
    #[serde(borrow)]
    max_completion_tokens: Option<&'a RawValue>,
    #[serde(borrow)]
    prompt: Option<&'a RawValue>,
    #[serde(borrow)]
    instruction: Option<&'a RawValue>,
    #[serde(borrow)]
    question: Option<&'a RawValue>,
    #[serde(borrow)]
    input: Option<&'a RawValue>,
    #[serde(borrow)]
    context: Option<&'a RawValue>,
    #[serde(borrow)]
    content: Option<&'a RawValue>,
    #[serde(borrow)]
    text: Option<&'a RawValue>,
    #[serde(borrow)]
    texts: Option<&'a RawValue>,
    #[serde(borrow)]
    output_tokens: Option<&'a RawValue>,
    #[serde(borrow)]
    output_tokens_count: Option<&'a RawValue>,
    #[serde(borrow)]
    completion_tokens_count: Option<&'a RawValue>,
    #[serde(borrow)]
    prompt_tokens_count: Option<&'a RawValue>,
    #[serde(borrow)]
    input_tokens_count: Option<&'a RawValue>,
    #[serde(borrow)]
    output_length: Option<&'a RawValue>,
    #[serde(borrow)]
    timestamp: Option<&'a RawValue>,
    #[serde(borrow)]
    delay: Option<&'a RawValue>,
    #[serde(borrow)]
    session_id: Option<&'a RawValue>,
    #[serde(borrow)]
    turns: Option<&'a RawValue>,
    #[serde(borrow)]
    input_length: Option<&'a RawValue>,
    #[serde(borrow)]
    hash_ids: Option<&'a RawValue>,
}

impl<'a> Keys<'a> {
    /// The prompt columns in the order they are tried.
    fn prompt_columns(&self) -> [(&'static str, Option<&'a RawValue>); 7] {
        [
            ("prompt", self.prompt),
            ("instruction", self.instruction),
            ("question", self.question),
            ("input", self.input),
            ("context", self.context),
            ("content", self.content),
            ("text", self.text),
        ]
    }

    /// The format these keys are, if any.
    fn format(&self) -> Option<WorkloadFormat> {
        let aiperf_only = [
            self.output_length,
            self.timestamp,
            self.delay,
            self.session_id,
        ];
        if self.conversations.is_some() || self.conversation.is_some() {
            Some(WorkloadFormat::Sharegpt)
        } else if self.messages.is_some() {
            Some(WorkloadFormat::OpenaiChat)
        } else if self.turns.is_some() {
            Some(WorkloadFormat::AiperfMultiTurn)
        } else if self.input_length.is_some() || self.hash_ids.is_some() {
            Some(WorkloadFormat::MooncakeTrace)
        } else if self.texts.is_some()
            || (self.text.is_some() && aiperf_only.iter().any(Option::is_some))
        {
            Some(WorkloadFormat::AiperfSingleTurn)
        } else if self.prompt_columns().iter().any(|(_, raw)| raw.is_some()) {
            Some(WorkloadFormat::PromptColumns)
        } else {
            None
        }
    }
}

/// Whether records are a JSON list's entries or JSONL lines (for the messages).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Layout {
    /// `[{…}, {…}]`: the list's entries, cut out by `split::ListEntries`.
    List,
    /// One JSON object a non-blank line.
    Lines,
}

/// The records of a JSON file as they come: the first that parses tells the format, every
/// one after is read as that format.
#[derive(Debug)]
pub(super) struct JsonRecords {
    layout: Layout,
    turns: WorkloadTurns,
    tally: Tally,
    format: Option<WorkloadFormat>,
    /// The line of the first record that did not parse while the format was still unknown.
    unparsed_first: Option<u64>,
}

impl JsonRecords {
    /// Records in `layout`, read with `turns`, counted in `tally`.
    pub fn new(layout: Layout, turns: WorkloadTurns, tally: Tally) -> Self {
        Self {
            layout,
            turns,
            tally,
            format: None,
            unparsed_first: None,
        }
    }

    /// One JSONL line (blank ones are no records).
    pub fn line(&mut self, line: u64, text: &str) -> Result<(), WorkloadError> {
        if text.trim().is_empty() {
            return Ok(());
        }
        let keys = serde_json::from_str::<Keys>(text);
        self.record(line, text, keys)
    }

    /// One entry of a JSON list, starting `at`. An entry that is not JSON at all breaks the
    /// list (as a JSON parser reading the whole list would say); one that is JSON but no
    /// record is skipped.
    pub fn entry(&mut self, at: Position, text: &str) -> Result<(), WorkloadError> {
        let keys = serde_json::from_str::<Keys>(text);
        if keys.is_err() {
            // Checking without building anything (and without recursing into a nesting bomb).
            if let Err(error) = serde_json::from_str::<&RawValue>(text) {
                return Err(broken(text, at, &error));
            }
        }
        self.record(at.line, text, keys)
    }

    /// Counts one record, its keys parsed (or not).
    fn record(
        &mut self,
        line: u64,
        record: &str,
        keys: Result<Keys, serde_json::Error>,
    ) -> Result<(), WorkloadError> {
        let keys = match keys {
            Ok(keys) => keys,
            Err(error) => {
                if self.format.is_none() {
                    let first = *self.unparsed_first.get_or_insert(line);
                    if self.tally.records() + 1 >= RECOGNITION_WINDOW as u64 {
                        return Err(not_records(first, self.layout));
                    }
                }
                self.tally.add(line, Err(unparsable(record, &error)));
                return Ok(());
            }
        };
        let known = match self.format {
            Some(known) => known,
            None => {
                let found = keys.format().ok_or_else(|| {
                    WorkloadError::Unrecognised(format!(
                        "line {line}: a JSON record with none of the keys strobe reads; \
                         {EXPECTED_KEYS}"
                    ))
                })?;
                *self.format.insert(found)
            }
        };
        let outcome = session(known, &keys, self.turns);
        if known == WorkloadFormat::AiperfSingleTurn {
            // AIPerf groups single_turn records by session_id into conversations.
            self.tally.add_turn(line, outcome);
        } else {
            self.tally.add(line, outcome);
        }
        Ok(())
    }

    /// The format and what was found, once every record is in.
    pub fn finish(self) -> Result<(WorkloadFormat, Tally), WorkloadError> {
        match self.format {
            Some(format) => Ok((format, self.tally)),
            None => Err(not_records(self.unparsed_first.unwrap_or(1), self.layout)),
        }
    }
}

/// The file's first records are not JSON objects.
fn not_records(line: u64, layout: Layout) -> WorkloadError {
    WorkloadError::Unrecognised(match layout {
        Layout::Lines => format!(
            "line {line} is not a JSON object, nor are the lines after it: a JSONL workload has \
             one JSON object a line ({EXPECTED_KEYS})"
        ),
        Layout::List => format!(
            "line {line}: the list's entries are not JSON objects: a JSON workload is a list of \
             objects, one a record ({EXPECTED_KEYS})"
        ),
    })
}

/// Why a record does not parse: a `NaN` or `Infinity` (which Python writes, JSON has not) is
/// a bad field; anything else an unparsable record.
fn unparsable(record: &str, error: &serde_json::Error) -> Skip {
    if error.is_syntax() && non_finite_at(record, error.line(), error.column()) {
        Skip::because(SkipReason::BadField)
    } else {
        Skip::because(SkipReason::Unparsable)
    }
}

/// Whether the text around 1-based `line`, `column` holds `NaN` or `Infinity`.
fn non_finite_at(text: &str, line: usize, column: usize) -> bool {
    let Some(line_text) = text.split('\n').nth(line.saturating_sub(1)) else {
        return false;
    };
    let start = column.saturating_sub(2);
    let window: String = line_text.chars().skip(start).take(10).collect();
    window.contains("NaN") || window.contains("Infinity")
}

/// A list entry (starting `at`) that is not JSON, at the line and column of the file where
/// serde_json finds the fault, in words.
fn broken(text: &str, at: Position, error: &serde_json::Error) -> WorkloadError {
    let (line, column) = (error.line(), error.column());
    let reason = if error.is_eof() {
        CUT_SHORT
    } else if non_finite_at(text, line, column) {
        "NaN and Infinity are not JSON numbers (write null, or leave the field out)"
    } else {
        "this is not valid JSON"
    };
    let column = if line <= 1 {
        at.column + column.saturating_sub(1) as u64
    } else {
        column as u64
    };
    WorkloadError::Broken {
        line: at.line + (line.max(1) - 1) as u64,
        column,
        reason,
    }
}

/// One record of `format` as a session, or why not.
fn session(format: WorkloadFormat, keys: &Keys, turns: WorkloadTurns) -> Result<Session, Skip> {
    match format {
        WorkloadFormat::Sharegpt => sharegpt(keys, turns),
        WorkloadFormat::OpenaiChat => chat(keys, turns),
        WorkloadFormat::AiperfMultiTurn => aiperf_multi_turn(keys),
        WorkloadFormat::MooncakeTrace => mooncake(keys),
        WorkloadFormat::AiperfSingleTurn => aiperf_single_turn(keys),
        // The CSV formats and plain text are read elsewhere; a JSON record is prompt columns.
        WorkloadFormat::PromptColumns
        | WorkloadFormat::Csv
        | WorkloadFormat::Text
        | WorkloadFormat::Burstgpt => prompt_columns(keys),
    }
}

/// One ShareGPT turn, its fields still raw.
#[derive(Deserialize)]
struct ShareTurn<'a> {
    #[serde(borrow)]
    from: Option<&'a RawValue>,
    #[serde(borrow)]
    value: Option<&'a RawValue>,
}

/// A ShareGPT conversation. `first`: the first turn's value is the prompt, the second's length
/// the output length (as vLLM, SGLang and AIPerf read it; `from` is not read). `all`: each
/// human turn a turn, the replies after it its recorded reply.
fn sharegpt(keys: &Keys, turns: WorkloadTurns) -> Result<Session, Skip> {
    let (name, raw) = first_present(&[
        ("conversations", keys.conversations),
        ("conversation", keys.conversation),
    ])
    .ok_or_else(|| Skip::at(SkipReason::NoPrompt, "conversations"))?;
    let entries: Vec<ShareTurn> = serde_json::from_str(raw.get()).map_err(|_| Skip::bad(name))?;
    if entries.len() < 2 {
        return Err(Skip::at(SkipReason::NoReply, name));
    }
    let id = json_id(keys.id, "id")?;
    let value = |index: usize| {
        let field = format!("{name}[{index}].value");
        json_text(entries[index].value, &field).map(|text| (text, field))
    };
    if turns == WorkloadTurns::First {
        let (prompt, field) = value(0)?;
        let prompt = prompt_text(prompt, field)?;
        let (reply, field) = value(1)?;
        let reply = reply.ok_or_else(|| Skip::at(SkipReason::NoReply, field))?;
        let turn = plain_turn(TurnInput::Text(prompt), Some(reply_tokens(&reply)), None);
        return Ok(one_turn(id, None, turn));
    }
    let mut played: Vec<Turn> = Vec::new();
    for (index, entry) in entries.iter().enumerate() {
        let from = json_text(entry.from, &format!("{name}[{index}].from"))?;
        let asks = match from.as_deref() {
            Some("human" | "user") => true,
            Some("system") => continue,
            Some(_) => false,
            // No `from`: turns alternate, the human first.
            None => index % 2 == 0,
        };
        let (text, field) = value(index)?;
        if asks {
            let prompt = prompt_text(text, field)?;
            played.push(plain_turn(TurnInput::Text(prompt), None, None));
        } else if let (Some(turn), Some(reply)) = (played.last_mut(), text) {
            add_reply(turn, &reply);
        }
    }
    if played.is_empty() {
        return Err(Skip::at(SkipReason::NoPrompt, name));
    }
    Ok(Session {
        id,
        arrival_ms: None,
        turns: played,
    })
}

/// Adds `reply` to `turn`'s recorded reply (a second reply in a row follows on a new line);
/// the turn asks for the reply's length.
fn add_reply(turn: &mut Turn, reply: &str) {
    let recorded = match turn.recorded_reply.take() {
        Some(earlier) => format!("{earlier}\n{reply}"),
        None => reply.to_owned(),
    };
    turn.output_tokens = Some(reply_tokens(&recorded));
    turn.recorded_reply = Some(recorded);
}

/// A prompt that is there and not blank, else the record has no prompt.
fn prompt_text(text: Option<String>, field: String) -> Result<String, Skip> {
    match text {
        Some(text) if !text.trim().is_empty() => Ok(text),
        _ => Err(Skip::at(SkipReason::NoPrompt, field)),
    }
}

/// An OpenAI chat record. `first`: one request of all its messages as given. `all`: turn k
/// sends the messages after turn k−1's up to and including the k-th user message, the
/// assistant messages after it being its recorded reply.
fn chat(keys: &Keys, turns: WorkloadTurns) -> Result<Session, Skip> {
    let raw = keys
        .messages
        .ok_or_else(|| Skip::at(SkipReason::NoPrompt, "messages"))?;
    let messages: Vec<Value> =
        serde_json::from_str(raw.get()).map_err(|_| Skip::bad("messages"))?;
    let mut roles = Vec::with_capacity(messages.len());
    for (index, message) in messages.iter().enumerate() {
        match message.get("role").and_then(Value::as_str) {
            Some(role) => roles.push(role == "user"),
            None => return Err(Skip::bad(format!("messages[{index}].role"))),
        }
    }
    if !roles.iter().any(|&user| user) {
        return Err(Skip::at(SkipReason::NoPrompt, "messages"));
    }
    let max_tokens = match json_tokens(keys.max_tokens, "max_tokens")? {
        Some(tokens) => Some(tokens),
        None => json_tokens(keys.max_completion_tokens, "max_completion_tokens")?,
    };
    let id = json_id(keys.id, "id")?;
    if turns == WorkloadTurns::First {
        let turn = plain_turn(TurnInput::Messages(messages), max_tokens, None);
        return Ok(one_turn(id, None, turn));
    }
    let mut played: Vec<Turn> = Vec::new();
    let mut pending: Vec<Value> = Vec::new();
    for message in messages {
        let role = message.get("role").and_then(Value::as_str);
        let (user, assistant) = (role == Some("user"), role == Some("assistant"));
        if user {
            pending.push(message);
            let input = TurnInput::Messages(std::mem::take(&mut pending));
            played.push(plain_turn(input, max_tokens, None));
            continue;
        }
        match played.last_mut() {
            Some(turn) if assistant && pending.is_empty() => {
                add_reply(turn, &content_text(&message));
                if max_tokens.is_some() {
                    turn.output_tokens = max_tokens;
                }
            }
            _ => pending.push(message),
        }
    }
    Ok(Session {
        id,
        arrival_ms: None,
        turns: played,
    })
}

/// A message's text: its `content` string, or its text parts joined.
fn content_text(message: &Value) -> String {
    match message.get("content") {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|part| part.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join(""),
        _ => String::new(),
    }
}

/// vLLM custom / GuideLLM: the first prompt column present, the output and input token counts.
fn prompt_columns(keys: &Keys) -> Result<Session, Skip> {
    let (name, raw) = first_present(&keys.prompt_columns())
        .ok_or_else(|| Skip::at(SkipReason::NoPrompt, "prompt"))?;
    let prompt = prompt_text(json_text(Some(raw), name)?, name.to_owned())?;
    let output = first_present(&[
        ("output_tokens", keys.output_tokens),
        ("output_tokens_count", keys.output_tokens_count),
        ("completion_tokens_count", keys.completion_tokens_count),
        ("max_tokens", keys.max_tokens),
    ]);
    let output_tokens = match output {
        Some((field, raw)) => json_tokens(Some(raw), field)?,
        None => None,
    };
    let input = first_present(&[
        ("prompt_tokens_count", keys.prompt_tokens_count),
        ("input_tokens_count", keys.input_tokens_count),
    ]);
    let input_tokens = match input {
        Some((field, raw)) => json_count(Some(raw), field)?,
        None => None,
    };
    let turn = plain_turn(TurnInput::Text(prompt), output_tokens, input_tokens);
    Ok(one_turn(json_id(keys.id, "id")?, None, turn))
}

/// AIPerf's text of a turn: `text`, or `texts` (a list of strings) joined by new lines.
fn aiperf_text(
    text: Option<&RawValue>,
    texts: Option<&RawValue>,
    prefix: &str,
) -> Result<String, Skip> {
    if let Some(raw) = texts {
        let field = format!("{prefix}texts");
        let parts: Vec<String> =
            serde_json::from_str(raw.get()).map_err(|_| Skip::bad(field.clone()))?;
        return prompt_text(Some(parts.join("\n")), field);
    }
    let field = format!("{prefix}text");
    prompt_text(json_text(text, &field)?, field)
}

/// AIPerf `single_turn`: `text`/`texts`, `output_length`, `timestamp` (ms, the arrival) or
/// `delay` (ms), `session_id` (records sharing it are one session: `Tally::add_turn`).
fn aiperf_single_turn(keys: &Keys) -> Result<Session, Skip> {
    let prompt = aiperf_text(keys.text, keys.texts, "")?;
    let mut turn = plain_turn(
        TurnInput::Text(prompt),
        json_tokens(keys.output_length, "output_length")?,
        None,
    );
    turn.delay_ms = json_ms(keys.delay, "delay")?;
    let arrival = json_ms(keys.timestamp, "timestamp")?;
    Ok(one_turn(
        json_id(keys.session_id, "session_id")?,
        arrival,
        turn,
    ))
}

/// One AIPerf `multi_turn` turn, its fields still raw.
#[derive(Deserialize)]
struct AiperfTurn<'a> {
    #[serde(borrow)]
    text: Option<&'a RawValue>,
    #[serde(borrow)]
    texts: Option<&'a RawValue>,
    #[serde(borrow)]
    delay: Option<&'a RawValue>,
    #[serde(borrow)]
    output_length: Option<&'a RawValue>,
    #[serde(borrow)]
    timestamp: Option<&'a RawValue>,
}

/// AIPerf `multi_turn`: a session of `turns`, each waiting its `delay` (ms) after the previous
/// reply; the first turn waits for nothing (its `timestamp`, if any, is the arrival).
fn aiperf_multi_turn(keys: &Keys) -> Result<Session, Skip> {
    let raw = keys
        .turns
        .ok_or_else(|| Skip::at(SkipReason::NoPrompt, "turns"))?;
    let entries: Vec<AiperfTurn> =
        serde_json::from_str(raw.get()).map_err(|_| Skip::bad("turns"))?;
    if entries.is_empty() {
        return Err(Skip::at(SkipReason::NoPrompt, "turns"));
    }
    let mut played = Vec::with_capacity(entries.len());
    let mut arrival = None;
    for (index, entry) in entries.iter().enumerate() {
        let prefix = format!("turns[{index}].");
        let prompt = aiperf_text(entry.text, entry.texts, &prefix)?;
        let output = json_tokens(entry.output_length, &format!("{prefix}output_length"))?;
        let delay = json_ms(entry.delay, &format!("{prefix}delay"))?;
        let timestamp = json_ms(entry.timestamp, &format!("{prefix}timestamp"))?;
        if index == 0 {
            arrival = timestamp;
        }
        let mut turn = plain_turn(TurnInput::Text(prompt), output, None);
        turn.delay_ms = if index == 0 { None } else { delay };
        played.push(turn);
    }
    Ok(Session {
        id: json_id(keys.session_id, "session_id")?,
        arrival_ms: arrival,
        turns: played,
    })
}

/// A Mooncake trace record: `timestamp` (ms), `input_length`, `output_length`, `hash_ids`
/// (one a 512-token block, so `len(hash_ids) == ceil(input_length / 512)` when given).
fn mooncake(keys: &Keys) -> Result<Session, Skip> {
    let tokens = json_count(keys.input_length, "input_length")?
        .ok_or_else(|| Skip::at(SkipReason::NoPrompt, "input_length"))?;
    if tokens == 0 {
        return Err(Skip::at(SkipReason::NoPrompt, "input_length"));
    }
    let hash_ids: Vec<u64> = match keys.hash_ids {
        Some(raw) => serde_json::from_str(raw.get()).map_err(|_| Skip::bad("hash_ids"))?,
        None => Vec::new(),
    };
    if keys.hash_ids.is_some() && hash_ids.len() as u64 != tokens.div_ceil(MOONCAKE_BLOCK_TOKENS) {
        return Err(Skip::at(SkipReason::BlockMismatch, "hash_ids"));
    }
    let output = json_tokens(keys.output_length, "output_length")?;
    let arrival = json_ms(keys.timestamp, "timestamp")?;
    let turn = plain_turn(
        TurnInput::Synthetic { tokens, hash_ids },
        output,
        Some(tokens),
    );
    Ok(one_turn(None, arrival, turn))
}
