//! A user's own traffic, read from a file: the requests to send, as the file gives them.
//!
//! A workload file is recognised by its content, never by its name (ShareGPT, OpenAI chat,
//! prompt columns as vLLM's custom JSONL and GuideLLM name them, CSV with a header, plain text,
//! AIPerf's `single_turn` and `multi_turn`, Mooncake and BurstGPT traces). Reading turns it into
//! [`Workload`]: sessions of turns, each turn the text or messages to send, how many tokens to
//! ask for, and when to send it. What could not be used is counted by reason, never dropped
//! silently, so the page can say what it found before anything is sent.
//!
//! The prompts stay the user's: a [`Workload`] crosses between the tab's own threads and is
//! never written anywhere. The artifact records only [`WorkloadSummary`] (format, counts, the
//! file's SHA-256), never a prompt.
//!
//! Submodules, in reading order: [`read`] (bytes, in pieces of any size → text → layout and
//! format), `split` (text → records: lines, a JSON list's entries, CSV rows), `tally` (what was
//! used, what kept, what skipped and why), `fields` (one field of a record, checked), `json`
//! (the JSON formats, one record at a time), `csv` (RFC 4180 rows: CSV prompts and BurstGPT),
//! [`sha256`], and [`summary`] (the sentence the page shows).

mod csv;
mod fields;
mod json;
pub mod read;
pub mod sha256;
pub(crate) mod split;
pub mod summary;
mod tally;
#[cfg(test)]
mod tests;

use std::fmt;

use serde::{Deserialize, Serialize};
use thiserror::Error;

/// One file's traffic: sessions in file order, with what reading it found. It crosses from
/// the reading worker to the page as JSON inside the tab ([`crate::core::live::FromReader`]);
/// it is never written anywhere.
#[derive(Clone, PartialEq, Serialize, Deserialize)]
pub struct Workload {
    /// What the file is and what of it is usable.
    pub summary: WorkloadSummary,
    /// The usable sessions kept in memory (all of them, unless reading was told to keep
    /// fewer), in the file's order. A single-turn file has one turn a session.
    pub sessions: Vec<Session>,
    /// Each kept session's position among the file's usable sessions (0-based), when reading
    /// kept fewer than all; empty when every usable session is kept (a session's position is
    /// then its index in `sessions`).
    pub positions: Vec<u64>,
}

impl Workload {
    /// The session at `position` among the file's usable sessions, if it was kept.
    pub fn session_at(&self, position: u64) -> Option<&Session> {
        if self.positions.is_empty() {
            return usize::try_from(position)
                .ok()
                .and_then(|index| self.sessions.get(index));
        }
        let index = self.positions.binary_search(&position).ok()?;
        self.sessions.get(index)
    }

    /// The positions of the kept sessions among the usable ones, in file order.
    pub fn kept_positions(&self) -> Vec<u64> {
        if self.positions.is_empty() {
            (0..self.sessions.len() as u64).collect()
        } else {
            self.positions.clone()
        }
    }
}

/// A workload's `Debug` names its shape only: its prompts are the user's and stay out of logs.
impl fmt::Debug for Workload {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Workload")
            .field("summary", &self.summary)
            .field("sessions", &self.sessions.len())
            .finish()
    }
}

/// What a workload file is, as the page shows it and the artifact records it. No prompt text.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkloadSummary {
    /// The format recognised from the content.
    pub format: WorkloadFormat,
    /// The file's name as the user gave it (a file input's name, a URL's last segment), if any.
    pub name: Option<String>,
    /// Bytes read.
    pub bytes: u64,
    /// `sha256:<64 lowercase hex>` of the bytes read: the same file gives the same hash.
    pub sha256: String,
    /// Records in the file (entries, lines, rows), usable or not.
    pub records: u64,
    /// Sessions usable (single-turn: requests).
    pub sessions: u64,
    /// Turns (requests) over all usable sessions.
    pub turns: u64,
    /// Records left out, by reason, in the order first met. Counts are never zero.
    pub skipped: Vec<Skipped>,
    /// Whether the sessions carry arrival times (a trace): then they are sent when the file
    /// says, scaled by the run's trace speed, rather than as fast as the load allows.
    pub timed: bool,
    /// A timed file's last arrival after its first, in whole ms (`None` when not timed).
    pub span_ms: Option<u64>,
}

/// Records left out for one reason.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Skipped {
    /// Why.
    pub reason: SkipReason,
    /// How many records.
    pub count: u64,
    /// The 1-based line of the file where the first one starts (a JSON list's entry, a JSONL
    /// line, a CSV row, a text line), to find it in the file.
    pub first: u64,
    /// The field at fault in the first one (`output_tokens`, `conversations[1].value`), when
    /// one field is. A field's name, never its value.
    pub field: Option<String>,
}

/// Why a record of a workload file is not used.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SkipReason {
    /// A conversation with fewer than two turns where a prompt and a reply are needed.
    NoReply,
    /// No prompt text (empty, or no recognised prompt field).
    NoPrompt,
    /// The record does not parse (bad JSON line, CSV row of the wrong width).
    Unparsable,
    /// A field has the wrong type or an impossible value (negative length, bad timestamp).
    BadField,
    /// A trace's record of a failed request (BurstGPT: 0 response tokens): nothing to replay.
    Failed,
    /// A Mooncake record whose `hash_ids` do not cover `input_length` in 512-token blocks
    /// (`len(hash_ids) != ceil(input_length / 512)`): its prefix cannot be rebuilt.
    BlockMismatch,
    /// A timed record whose timestamp is earlier than the record before it: a replay keeps the
    /// file's order, so time cannot run backwards.
    OutOfOrder,
}

impl SkipReason {
    /// Every reason, in the order above.
    pub const ALL: [SkipReason; 7] = [
        Self::NoReply,
        Self::NoPrompt,
        Self::Unparsable,
        Self::BadField,
        Self::Failed,
        Self::BlockMismatch,
        Self::OutOfOrder,
    ];

    /// The spelling the artifact records (`skipped[].reason`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::NoReply => "no_reply",
            Self::NoPrompt => "no_prompt",
            Self::Unparsable => "unparsable",
            Self::BadField => "bad_field",
            Self::Failed => "failed",
            Self::BlockMismatch => "block_mismatch",
            Self::OutOfOrder => "out_of_order",
        }
    }

    /// The words the page and the CLI use, e.g. "have no reply".
    pub fn words(self) -> &'static str {
        match self {
            Self::NoReply => "have no reply",
            Self::NoPrompt => "have no prompt",
            Self::Unparsable => "do not parse",
            Self::BadField => "have a field of the wrong type",
            Self::Failed => "are failed requests",
            Self::BlockMismatch => "have hash_ids that do not match input_length",
            Self::OutOfOrder => "go back in time",
        }
    }

    /// [`SkipReason::words`] agreeing with `count`: "1 has no reply", "3 have no reply".
    pub fn words_for(self, count: u64) -> &'static str {
        if count != 1 {
            return self.words();
        }
        match self {
            Self::NoReply => "has no reply",
            Self::NoPrompt => "has no prompt",
            Self::Unparsable => "does not parse",
            Self::BadField => "has a field of the wrong type",
            Self::Failed => "is a failed request",
            Self::BlockMismatch => "has hash_ids that do not match input_length",
            Self::OutOfOrder => "goes back in time",
        }
    }
}

/// The formats strobe recognises, named as their tools name them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WorkloadFormat {
    /// `[{"id", "conversations": [{"from", "value"}…]}]` (`conversation` too).
    Sharegpt,
    /// `{"messages": [{"role", "content"}…], "max_tokens"?}` as JSON list or JSONL.
    OpenaiChat,
    /// One prompt a record under a known column name (vLLM custom JSONL, GuideLLM), JSON or JSONL.
    PromptColumns,
    /// CSV with a header naming a prompt column.
    Csv,
    /// Plain text, one prompt a line.
    Text,
    /// AIPerf `single_turn`: `{"text"|"texts", "output_length"?, "timestamp"|"delay"?}`.
    AiperfSingleTurn,
    /// AIPerf `multi_turn`: `{"session_id", "turns": [{"text", "delay"?}…]}`.
    AiperfMultiTurn,
    /// Mooncake trace: `{"timestamp", "input_length", "output_length", "hash_ids"}` a line.
    MooncakeTrace,
    /// BurstGPT CSV: `Timestamp,Model,Request tokens,Response tokens,…`.
    Burstgpt,
}

impl WorkloadFormat {
    /// Every format, in the order above.
    pub const ALL: [WorkloadFormat; 9] = [
        Self::Sharegpt,
        Self::OpenaiChat,
        Self::PromptColumns,
        Self::Csv,
        Self::Text,
        Self::AiperfSingleTurn,
        Self::AiperfMultiTurn,
        Self::MooncakeTrace,
        Self::Burstgpt,
    ];

    /// The spelling the artifact records (`workload.format`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Sharegpt => "sharegpt",
            Self::OpenaiChat => "openai_chat",
            Self::PromptColumns => "prompt_columns",
            Self::Csv => "csv",
            Self::Text => "text",
            Self::AiperfSingleTurn => "aiperf_single_turn",
            Self::AiperfMultiTurn => "aiperf_multi_turn",
            Self::MooncakeTrace => "mooncake_trace",
            Self::Burstgpt => "burstgpt",
        }
    }

    /// The name the page shows, e.g. "ShareGPT".
    pub fn label(self) -> &'static str {
        match self {
            Self::Sharegpt => "ShareGPT",
            Self::OpenaiChat => "OpenAI chat messages",
            Self::PromptColumns => "prompts (JSON)",
            Self::Csv => "CSV",
            Self::Text => "plain text",
            Self::AiperfSingleTurn => "AIPerf single_turn",
            Self::AiperfMultiTurn => "AIPerf multi_turn",
            Self::MooncakeTrace => "Mooncake trace",
            Self::Burstgpt => "BurstGPT trace",
        }
    }
}

/// One conversation (or, single-turn, one request).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Session {
    /// The file's id for it (`id`, `session_id`), if it has one.
    pub id: Option<String>,
    /// When the session's first turn is due, in ms from the start of the run (traces), if given.
    pub arrival_ms: Option<f64>,
    /// The turns in order; never empty.
    pub turns: Vec<Turn>,
}

/// One request of a session. Its `Debug` gives sizes, never the text.
#[derive(Clone, PartialEq, Serialize, Deserialize)]
pub struct Turn {
    /// What this turn sends, beyond the history of earlier turns.
    pub input: TurnInput,
    /// Output tokens the file asks for (`max_tokens`, `output_tokens`, `output_length`, the
    /// recorded reply's length at 3 characters a token), if it says.
    pub output_tokens: Option<u64>,
    /// Input tokens the file states (`prompt_tokens_count`, `input_length`), if it says.
    pub input_tokens: Option<u64>,
    /// Wait after the previous turn's answer before sending this one (ms), if the file says.
    pub delay_ms: Option<f64>,
    /// The reply the file recorded for this turn (ShareGPT's gpt turn), used as the history
    /// when replies are not kept live.
    pub recorded_reply: Option<String>,
}

/// What one turn sends. Its `Debug` gives sizes, never the text.
#[derive(Clone, PartialEq, Serialize, Deserialize)]
pub enum TurnInput {
    /// A user message's text (chat) or the prompt (completions).
    Text(String),
    /// Chat messages as the file gives them (OpenAI chat), each a JSON object sent as is.
    Messages(Vec<serde_json::Value>),
    /// A prompt the file describes by size only (traces): `tokens` long, made of one block per
    /// hash id so that equal ids give equal text (a shared prefix block); `hash_ids` empty
    /// means no block structure is given.
    Synthetic {
        /// Input tokens.
        tokens: u64,
        /// Mooncake's block ids, 512 tokens a block.
        hash_ids: Vec<u64>,
    },
}

impl fmt::Debug for Turn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Turn")
            .field("input", &self.input)
            .field("output_tokens", &self.output_tokens)
            .field("input_tokens", &self.input_tokens)
            .field("delay_ms", &self.delay_ms)
            .field(
                "recorded_reply_chars",
                &self
                    .recorded_reply
                    .as_ref()
                    .map(|reply| reply.chars().count()),
            )
            .finish()
    }
}

impl fmt::Debug for TurnInput {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Text(text) => f
                .debug_struct("Text")
                .field("chars", &text.chars().count())
                .finish(),
            Self::Messages(messages) => f
                .debug_struct("Messages")
                .field("count", &messages.len())
                .finish(),
            Self::Synthetic { tokens, hash_ids } => f
                .debug_struct("Synthetic")
                .field("tokens", tokens)
                .field("hash_ids", &hash_ids.len())
                .finish(),
        }
    }
}

/// The most bytes strobe reads as one workload file (1 GiB: ShareGPT V3 is about 670 MB).
pub const MAX_WORKLOAD_BYTES: u64 = 1 << 30;

/// What the page says of a workload file named `name` of `bytes` bytes before reading it:
/// nothing, or that it is larger than strobe reads.
pub fn too_large(name: &str, bytes: u64) -> Option<String> {
    (bytes > MAX_WORKLOAD_BYTES).then(|| {
        format!(
            "{name} is {} bytes; strobe reads workload files of at most {} bytes: split it",
            crate::core::format::format_count(bytes as usize),
            crate::core::format::format_count(MAX_WORKLOAD_BYTES as usize)
        )
    })
}

/// Why a workload file cannot be used at all. Each message says what to do.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum WorkloadError {
    /// Nothing in the file.
    #[error("the workload file is empty: choose a file with one prompt a line, JSONL or JSON")]
    Empty,
    /// Not UTF-8 text.
    #[error("the workload file is not UTF-8 text (byte {offset} is not): save it as UTF-8")]
    NotText {
        /// Offset of the first invalid byte.
        offset: u64,
    },
    /// The content matches no known format.
    #[error("{0}")]
    Unrecognised(String),
    /// A JSON list that breaks off: no record after the break can be found.
    #[error(
        "the workload file's JSON breaks at line {line}, column {column}: {reason}; fix it there \
         or export the file again"
    )]
    Broken {
        /// 1-based line of the break.
        line: u64,
        /// 1-based column of the break.
        column: u64,
        /// What is wrong there, in words (never the file's text).
        reason: &'static str,
    },
    /// Recognised, but no record is usable.
    #[error("no usable request in this {format} file: {reasons}")]
    NothingUsable {
        /// The format's label.
        format: &'static str,
        /// The skip counts in words, e.g. "3 have no reply".
        reasons: String,
    },
    /// One record longer than strobe buffers: a quote or bracket never closed, or a line far
    /// longer than any prompt.
    #[error(
        "the workload file's record at line {line} runs past {limit} bytes (a quote or bracket \
         never closed?): fix it there, or split the record"
    )]
    RecordTooLong {
        /// 1-based line where the record starts.
        line: u64,
        /// The most bytes one record may hold.
        limit: u64,
    },
    /// Larger than strobe reads.
    #[error("the workload file is {bytes} bytes; strobe reads at most {limit} bytes: split it")]
    TooLarge {
        /// The file's size.
        bytes: u64,
        /// The limit.
        limit: u64,
    },
}
