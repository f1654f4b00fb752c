//! A workload file's requests, fixed before the first is sent ([`WorkloadRequests`]): which
//! records, in which order, each turn's input and `max_tokens`, and when a trace's records are
//! due.
//!
//! Requests are numbered across sessions in order: session 0's turns, then session 1's, and so
//! on; `requests` takes the first N of them, so a cut can end a session early. A trace
//! (a workload whose sessions carry arrival times) keeps its own time order.
//!
//! Planned requests travel to the measuring thread as JSON; their `Debug` shows only their
//! shape, since the prompts are the user's.

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use thiserror::Error;

use crate::core::config::choices::{ApiEndpoint, HistoryMode, OutputLengths, WorkloadOrder};
use crate::core::config::settings::{RunConfig, MAX_OUTPUT_SETTING, MAX_REQUESTS};
use crate::core::config::workload::WorkloadOptions;
use crate::core::plan::tokens::CHARS_PER_TOKEN;
use crate::core::python::random::PyRandom;
use crate::core::schema::workload::{SkippedRecords, WorkloadFile};
use crate::core::workload::read::Keep;
use crate::core::workload::{Session, Skipped, Turn, TurnInput, Workload, WorkloadSummary};

/// What one planned turn sends beyond its session's history.
#[derive(Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum PlannedInput {
    /// A user message's text (chat) or the prompt (completions).
    Text {
        /// The text, as the file gives it.
        text: String,
    },
    /// Chat messages as the file gives them.
    Messages {
        /// Each a JSON object, sent as is.
        messages: Vec<Value>,
    },
    /// A prompt of `tokens` made of one text block per hash id.
    Synthetic {
        /// Input tokens.
        tokens: u64,
        /// Mooncake's block ids (512 tokens a block); empty for no block structure.
        hash_ids: Vec<u64>,
    },
    /// A turn known by its shape only ([`shape::WorkloadShape`]): the requests a Locust run
    /// sent, read back from records that never hold a prompt. Its body cannot be built.
    Withheld,
}

/// One request of a planned session.
#[derive(Clone, PartialEq, Serialize, Deserialize)]
pub struct PlannedTurn {
    /// What it sends beyond the history.
    pub input: PlannedInput,
    /// `max_tokens` sent with it.
    pub max_tokens: u64,
    /// Wait after the previous turn's reply before sending it (ms); `None` takes the run's
    /// think time.
    pub delay_ms: Option<f64>,
    /// The reply the file recorded, the history with `history=recorded`.
    pub recorded_reply: Option<String>,
    /// Its input's size in strobe's estimated tokens (3 characters a token, or the file's
    /// own count): the row's planned context, history not included.
    pub input_tokens: u64,
}

/// One planned session (single-turn: one request).
#[derive(Clone, PartialEq, Serialize, Deserialize)]
pub struct PlannedSession {
    /// The session's position among the file's usable sessions (0-based): rows record it as
    /// `workload_record`, so a row can be traced to its record without its text.
    pub record: u64,
    /// The file's id for it, sent as the session header's value when one is asked for.
    pub id: Option<String>,
    /// When its first turn is due, ms from the run's start at trace speed 1.
    pub arrival_ms: Option<f64>,
    /// Its turns in order; never empty.
    pub turns: Vec<PlannedTurn>,
}

/// Why a workload cannot be planned with these settings. Each message says what to change.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum WorkloadPlanError {
    /// The workload has no request.
    #[error("the workload has no usable request: choose another file")]
    Empty,
    /// Conversations and chat messages need the chat API.
    #[error("this workload has {what}, which the completions API cannot take: set endpoint=chat")]
    ChatOnly {
        /// "conversations" or "chat messages".
        what: &'static str,
    },
    /// Conversations wait for their replies: they are not sent on a rate schedule.
    #[error(
        "this workload plays as conversations, each turn waiting for the reply before it, \
         which a request-rate schedule cannot keep: set load=concurrency (concurrency counts \
         sessions in flight), or Turns: first to send each record's first turn on the schedule"
    )]
    SessionsAtRate,
    /// Recorded history needs the file's replies, and some turns lack them.
    #[error(
        "history=recorded sends the file's own replies as history, and {turns} turns followed \
         by another have none in the file (the first: turn {first_turn} of usable session \
         {first_session}): \
         set history=live to send the server's replies"
    )]
    NoRecordedReplies {
        /// Turns that need a recorded reply and have none.
        turns: u64,
        /// The first such turn's session, as its 1-based position among the usable sessions.
        first_session: u64,
        /// Its turn, 1-based.
        first_turn: usize,
    },
    /// A trace cannot be shuffled: its times are its order.
    #[error(
        "this workload is a trace, sent at its own timestamps: set workload_order=file \
         (a shuffled trace would not be the trace)"
    )]
    ShuffledTrace,
    /// The order asks for a session that reading did not keep (the file was read for
    /// another order or seed).
    #[error(
        "the workload file was read for another order: usable session {position} is not in \
         memory; wait for the file to be read again, or choose it again"
    )]
    NotKept {
        /// The session's 0-based position among the usable ones.
        position: u64,
    },
}

/// Which usable sessions reading a workload file must keep for a run with `options`: the
/// first [`MAX_REQUESTS`] in file order, or, shuffled, the first [`MAX_REQUESTS`] the shuffle
/// draws of `usable` sessions (all of them when there are no more). A run sends at most
/// [`MAX_REQUESTS`] requests, each session at least one, so no run needs another session.
pub fn sessions_to_keep(usable: u64, options: &WorkloadOptions) -> Keep {
    if usable <= MAX_REQUESTS {
        return Keep::All;
    }
    match options.order {
        WorkloadOrder::File => Keep::First(MAX_REQUESTS),
        WorkloadOrder::Shuffle => {
            let mut drawn = shuffled(usable, options.seed);
            drawn.truncate(MAX_REQUESTS as usize);
            drawn.sort_unstable();
            Keep::These(drawn)
        }
    }
}

/// The positions `0..usable` in the order Python's `random.Random(seed).shuffle` puts them.
fn shuffled(usable: u64, seed: i64) -> Vec<u64> {
    let mut order: Vec<u64> = (0..usable).collect();
    PyRandom::new(seed).shuffle(&mut order);
    order
}

impl WorkloadFile {
    /// The record of `summary`.
    pub fn of(summary: &WorkloadSummary) -> Self {
        let reason = |skipped: &Skipped| skipped.reason.as_str().to_owned();
        Self {
            format: summary.format.as_str().to_owned(),
            name: summary.name.clone(),
            bytes: summary.bytes,
            sha256: summary.sha256.clone(),
            records: summary.records,
            usable_sessions: summary.sessions,
            usable_turns: summary.turns,
            skipped: summary
                .skipped
                .iter()
                .map(|skipped| SkippedRecords {
                    reason: reason(skipped),
                    count: skipped.count,
                    first: skipped.first,
                })
                .collect(),
            timed: summary.timed,
        }
    }
}

/// A workload's requests as a run sends them.
#[derive(Clone, PartialEq, Serialize, Deserialize)]
pub struct WorkloadRequests {
    file: WorkloadFile,
    sessions: Vec<PlannedSession>,
    /// Request index of each session's first turn.
    starts: Vec<u64>,
    requests: u64,
    timed: bool,
}

impl fmt::Debug for WorkloadRequests {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WorkloadRequests")
            .field("sessions", &self.sessions.len())
            .field("requests", &self.requests)
            .field("timed", &self.timed)
            .finish()
    }
}

impl WorkloadRequests {
    /// The requests `config` sends of `workload`: its sessions in file order or shuffled by
    /// `workload_seed`, cut to the first `requests` turns; each turn's `max_tokens` the
    /// record's (or the form's, with `output_lengths=fixed` or where the record has none).
    pub fn plan(workload: &Workload, config: &RunConfig) -> Result<Self, WorkloadPlanError> {
        let options = &config.workload;
        let timed = workload.summary.timed;
        // Positions among the file's usable sessions; reading kept those this order needs.
        let mut order: Vec<u64> = match options.order {
            WorkloadOrder::File => workload.kept_positions(),
            WorkloadOrder::Shuffle if timed => return Err(WorkloadPlanError::ShuffledTrace),
            WorkloadOrder::Shuffle => shuffled(workload.summary.sessions, options.seed),
        };
        if timed {
            // A trace is sent in time order; a stable sort keeps the file's order of ties.
            let at = |position: u64| {
                workload
                    .session_at(position)
                    .and_then(|session| session.arrival_ms)
                    .unwrap_or(0.0)
            };
            order.sort_by(|&a, &b| at(a).total_cmp(&at(b)));
        }
        let mut sessions = Vec::new();
        let mut starts = Vec::new();
        let mut requests = 0_u64;
        for record in order {
            if requests >= config.requests {
                break;
            }
            let session = workload
                .session_at(record)
                .ok_or(WorkloadPlanError::NotKept { position: record })?;
            let room = usize::try_from(config.requests - requests).unwrap_or(usize::MAX);
            let turns: Vec<PlannedTurn> = session
                .turns
                .iter()
                .take(room)
                .map(|turn| planned_turn(turn, config))
                .collect();
            if turns.is_empty() {
                continue;
            }
            starts.push(requests);
            requests += turns.len() as u64;
            sessions.push(planned_session(record, session, turns));
        }
        if requests == 0 {
            return Err(WorkloadPlanError::Empty);
        }
        let plan = Self {
            file: WorkloadFile::of(&workload.summary),
            sessions,
            starts,
            requests,
            timed,
        };
        if plan.has_conversations() && config.load.is_open_loop() {
            return Err(WorkloadPlanError::SessionsAtRate);
        }
        if plan.has_conversations() && options.history == HistoryMode::Recorded {
            plan.check_recorded_replies()?;
        }
        if config.endpoint == ApiEndpoint::Completions {
            if plan.has_conversations() {
                return Err(WorkloadPlanError::ChatOnly {
                    what: "conversations",
                });
            }
            let messages = plan
                .sessions
                .iter()
                .flat_map(|session| &session.turns)
                .any(|turn| matches!(turn.input, PlannedInput::Messages { .. }));
            if messages {
                return Err(WorkloadPlanError::ChatOnly {
                    what: "chat messages",
                });
            }
        }
        Ok(plan)
    }

    /// What the file was.
    pub fn file(&self) -> &WorkloadFile {
        &self.file
    }

    /// How many requests (turns) the run sends.
    pub fn requests(&self) -> u64 {
        self.requests
    }

    /// The planned sessions, in the order they start.
    pub fn sessions(&self) -> &[PlannedSession] {
        &self.sessions
    }

    /// Whether any session has more than one turn (then turns wait for their history).
    pub fn has_conversations(&self) -> bool {
        self.sessions.iter().any(|session| session.turns.len() > 1)
    }

    /// Whether the requests are due at the file's times (a trace).
    pub fn is_timed(&self) -> bool {
        self.timed
    }

    /// The session and turn of request `index`, if the plan has it.
    pub fn position(&self, index: u64) -> Option<(usize, usize)> {
        if index >= self.requests {
            return None;
        }
        let session = self.starts.partition_point(|&start| start <= index) - 1;
        Some((session, (index - self.starts[session]) as usize))
    }

    /// Request index of session `session`'s turn `turn`.
    pub fn index_of(&self, session: usize, turn: usize) -> Option<u64> {
        let planned = self.sessions.get(session)?;
        (turn < planned.turns.len()).then(|| self.starts[session] + turn as u64)
    }

    /// Request `index`'s turn.
    pub fn turn(&self, index: u64) -> Option<&PlannedTurn> {
        let (session, turn) = self.position(index)?;
        self.sessions[session].turns.get(turn)
    }

    /// When each request is due in a trace, ms from the run's start: each session's arrival
    /// divided by `speed` (relative to the first), for single-turn traces; `None` otherwise.
    pub fn arrival_times_ms(&self, speed: f64) -> Option<Vec<f64>> {
        if self.has_conversations() {
            return None;
        }
        self.session_times_ms(speed)
    }

    /// When each session's first turn is due in a timed workload of conversations, ms from the
    /// run's start: its arrival divided by `speed` (relative to the first); `None` when the
    /// workload is not timed or has no conversations (a single-turn trace is scheduled request
    /// by request, [`arrival_times_ms`](Self::arrival_times_ms)).
    pub fn session_arrivals_ms(&self, speed: f64) -> Option<Vec<f64>> {
        if !self.has_conversations() {
            return None;
        }
        self.session_times_ms(speed)
    }

    /// Each session's arrival over `speed`, relative to the first, when the workload is timed.
    fn session_times_ms(&self, speed: f64) -> Option<Vec<f64>> {
        if !self.timed {
            return None;
        }
        let first = self.sessions.first()?.arrival_ms.unwrap_or(0.0);
        Some(
            self.sessions
                .iter()
                .map(|session| (session.arrival_ms.unwrap_or(first) - first).max(0.0) / speed)
                .collect(),
        )
    }

    /// Request index of each session's first turn, in session order.
    pub fn session_starts(&self) -> &[u64] {
        &self.starts
    }

    /// Every turn followed by another in its session has a recorded reply (what
    /// `history=recorded` sends as history).
    fn check_recorded_replies(&self) -> Result<(), WorkloadPlanError> {
        let mut missing = self.sessions.iter().flat_map(|session| {
            let followed = session.turns.len().saturating_sub(1);
            session.turns[..followed]
                .iter()
                .enumerate()
                .filter(|(_, turn)| turn.recorded_reply.is_none())
                .map(move |(turn, _)| (session.record, turn))
        });
        let Some((record, turn)) = missing.next() else {
            return Ok(());
        };
        Err(WorkloadPlanError::NoRecordedReplies {
            turns: 1 + missing.count() as u64,
            first_session: record + 1,
            first_turn: turn + 1,
        })
    }

    /// The largest `max_tokens` of any request.
    pub fn largest_max_tokens(&self) -> u64 {
        self.sessions
            .iter()
            .flat_map(|session| &session.turns)
            .map(|turn| turn.max_tokens)
            .max()
            .unwrap_or_default()
    }
}

fn planned_session(record: u64, session: &Session, turns: Vec<PlannedTurn>) -> PlannedSession {
    PlannedSession {
        record,
        id: session.id.clone(),
        arrival_ms: session.arrival_ms,
        turns,
    }
}

fn planned_turn(turn: &Turn, config: &RunConfig) -> PlannedTurn {
    let max_tokens = match config.workload.output_lengths {
        OutputLengths::Fixed => config.max_tokens,
        OutputLengths::File => turn
            .output_tokens
            .unwrap_or(config.max_tokens)
            .clamp(1, MAX_OUTPUT_SETTING),
    };
    let (input, estimate) = match &turn.input {
        TurnInput::Text(text) => (
            PlannedInput::Text { text: text.clone() },
            estimated_tokens(text.chars().count()),
        ),
        TurnInput::Messages(messages) => (
            PlannedInput::Messages {
                messages: messages.clone(),
            },
            estimated_tokens(messages.iter().map(content_chars).sum()),
        ),
        TurnInput::Synthetic { tokens, hash_ids } => (
            PlannedInput::Synthetic {
                tokens: *tokens,
                hash_ids: hash_ids.clone(),
            },
            *tokens,
        ),
    };
    PlannedTurn {
        input,
        max_tokens,
        delay_ms: turn.delay_ms,
        recorded_reply: turn.recorded_reply.clone(),
        input_tokens: turn.input_tokens.unwrap_or(estimate),
    }
}

/// `ceil(chars / 3)`: strobe's estimate of a text's tokens.
fn estimated_tokens(chars: usize) -> u64 {
    (chars as u64).div_ceil(CHARS_PER_TOKEN)
}

/// Characters of a chat message's text: its string content, or its text parts.
fn content_chars(message: &Value) -> usize {
    match message.get("content") {
        Some(Value::String(text)) => text.chars().count(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|part| part.get("text").and_then(Value::as_str))
            .map(|text| text.chars().count())
            .sum(),
        _ => 0,
    }
}

pub mod shape;

#[cfg(test)]
mod tests;
