//! The bodies of a workload file's requests: the file's text or messages as given, a trace's
//! prompt made of one text block per hash id, and a session's history before each turn.
//!
//! With canaries off, what the file gives is what the server receives: the same strings, in
//! the same messages (JSON objects are re-serialised, so the order of a message's keys may
//! differ; no text does). With canaries on, one marker line goes before the first user text.

use serde::Serialize;
use serde_json::{json, Value};

use crate::core::config::choices::ApiEndpoint;
use crate::core::plan::tokens::CHARS_PER_TOKEN;
use crate::core::plan::workload::{PlannedInput, PlannedTurn};
use crate::core::plan::RunPlan;
use crate::core::prompt::{completion_body, fill, messages_body};

/// Tokens of one trace block (Mooncake's and AIPerf's block size).
pub const TRACE_BLOCK_TOKENS: u64 = 512;

/// Filler lines per block offset: block `h` starts its line numbers at `h × 1,000,000`, so no
/// two blocks share a line and equal hash ids give equal text.
const BLOCK_LINE_STRIDE: u64 = 1_000_000;

/// Why a workload request's body cannot be built; it becomes that request's failure.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum WorkloadBodyError {
    /// The plan has no such request.
    #[error("request {0} is not in the workload's plan")]
    NoSuchRequest(u64),
    /// A later turn was asked for without the replies of the turns before it.
    #[error("request {index} is turn {turn} of its session but only {replies} earlier replies are known")]
    MissingHistory {
        /// The request.
        index: u64,
        /// Its turn in the session (0-based).
        turn: usize,
        /// Replies given.
        replies: usize,
    },
    /// The plan knows the request's shape only (a Locust run read back): no text to send.
    #[error("request {0} is known by its shape only: its text is not in this plan")]
    Withheld(u64),
    /// Chat messages cannot go to the completions API.
    #[error(
        "request {0} is chat messages, which the completions API cannot take: set endpoint=chat"
    )]
    MessagesOnCompletions(u64),
}

/// The marker line a canary run puts before a request's first user text.
pub fn marker_line(marker: &str) -> String {
    format!("Begin your reply with the exact marker {marker}, followed by one space.\n")
}

/// A trace record's prompt: one block of [`TRACE_BLOCK_TOKENS`] tokens per hash id at
/// `chars_per_token` characters a token, the last block the remainder of `tokens`; without
/// hash ids, one text of `tokens` unique to `record`.
pub fn trace_prompt(tokens: u64, hash_ids: &[u64], record: u64, chars_per_token: u64) -> String {
    let chars = |tokens: u64| usize::try_from(tokens.saturating_mul(chars_per_token)).unwrap_or(0);
    if hash_ids.is_empty() {
        let mut text = fill(chars(tokens), record.saturating_mul(BLOCK_LINE_STRIDE));
        text.truncate(chars(tokens));
        return text;
    }
    let mut text = String::with_capacity(chars(tokens));
    let mut left = tokens;
    for (position, &hash) in hash_ids.iter().enumerate() {
        let last = position + 1 == hash_ids.len();
        let block_tokens = if last {
            left
        } else {
            left.min(TRACE_BLOCK_TOKENS)
        };
        left -= block_tokens;
        let mut block = fill(
            chars(block_tokens),
            hash.wrapping_mul(BLOCK_LINE_STRIDE) % (u64::MAX / 2),
        );
        block.truncate(chars(block_tokens));
        text.push_str(&block);
    }
    text
}

/// The text a turn sends as its user message (or completions prompt), with the marker line
/// when one is given. `None` for chat messages, which carry their own.
fn turn_text(
    input: &PlannedInput,
    record: u64,
    marker: Option<&str>,
    chars_per_token: u64,
) -> Option<String> {
    match input {
        PlannedInput::Text { text } => Some(match marker {
            Some(marker) => marker_line(marker) + text,
            None => text.clone(),
        }),
        PlannedInput::Synthetic { tokens, hash_ids } => {
            let blocks = trace_prompt(*tokens, hash_ids, record, chars_per_token);
            Some(match marker {
                // After the blocks, so records sharing blocks still share those bytes.
                Some(marker) => format!("{blocks}\n{}", marker_line(marker)),
                None => blocks,
            })
        }
        PlannedInput::Messages { .. } | PlannedInput::Withheld => None,
    }
}

/// One message of a workload request: strobe's own (`role` then `content`, as the synthetic
/// prompt's message), or one of the file's, as given.
#[derive(Serialize)]
#[serde(untagged)]
enum SentMessage {
    /// A message strobe writes around the file's text.
    Own { role: &'static str, content: String },
    /// A message of the file.
    Given(Value),
}

/// The messages a turn adds: one user message of its text, or the file's messages as given
/// (the marker line, if any, before the first user message's text).
fn turn_messages(
    input: &PlannedInput,
    record: u64,
    marker: Option<&str>,
    chars_per_token: u64,
) -> Vec<SentMessage> {
    if let Some(text) = turn_text(input, record, marker, chars_per_token) {
        return vec![SentMessage::Own {
            role: "user",
            content: text,
        }];
    }
    let PlannedInput::Messages { messages } = input else {
        return Vec::new();
    };
    let mut messages = messages.clone();
    if let Some(marker) = marker {
        if let Some(first_user) = messages
            .iter_mut()
            .find(|message| message.get("role").and_then(Value::as_str) == Some("user"))
        {
            match first_user.get_mut("content") {
                Some(Value::String(text)) => text.insert_str(0, &marker_line(marker)),
                Some(Value::Array(parts)) => {
                    parts.insert(0, json!({"type": "text", "text": marker_line(marker)}));
                }
                _ => {}
            }
        }
    }
    messages.into_iter().map(SentMessage::Given).collect()
}

/// The body of workload request `index`. `replies` are the assistant replies of the session's
/// earlier turns, in order (the server's own, or the file's with `history=recorded`): turn k
/// is sent with the messages of turns 0..k and their replies before its own.
pub fn workload_request_body(
    plan: &RunPlan,
    index: u64,
    replies: &[&str],
) -> Result<String, WorkloadBodyError> {
    let workload = plan
        .workload()
        .ok_or(WorkloadBodyError::NoSuchRequest(index))?;
    let (session, turn) = workload
        .position(index)
        .ok_or(WorkloadBodyError::NoSuchRequest(index))?;
    let planned = &workload.sessions()[session];
    let config = plan.config();
    let marker = config.request_canaries.then(|| plan.marker(index as usize));
    let this: &PlannedTurn = &planned.turns[turn];
    if this.input == PlannedInput::Withheld {
        return Err(WorkloadBodyError::Withheld(index));
    }
    if replies.len() < turn {
        return Err(WorkloadBodyError::MissingHistory {
            index,
            turn,
            replies: replies.len(),
        });
    }
    match config.endpoint {
        ApiEndpoint::Completions => {
            // Sessions need chat; the plan refuses them on completions, so this is one turn.
            let text = turn_text(
                &this.input,
                planned.record,
                marker.as_deref(),
                CHARS_PER_TOKEN,
            )
            .ok_or(WorkloadBodyError::MessagesOnCompletions(index))?;
            Ok(completion_body(config, &text, this.max_tokens))
        }
        ApiEndpoint::Chat => {
            let mut messages = Vec::new();
            for (earlier, reply) in planned.turns[..turn].iter().zip(replies) {
                // Earlier turns are resent as they were sent, each with its own marker.
                let earlier_index = index - (turn as u64) + messages_turn(&messages);
                let earlier_marker = config
                    .request_canaries
                    .then(|| plan.marker(earlier_index as usize));
                messages.extend(turn_messages(
                    &earlier.input,
                    planned.record,
                    earlier_marker.as_deref(),
                    CHARS_PER_TOKEN,
                ));
                messages.push(SentMessage::Own {
                    role: "assistant",
                    content: (*reply).to_owned(),
                });
            }
            messages.extend(turn_messages(
                &this.input,
                planned.record,
                marker.as_deref(),
                CHARS_PER_TOKEN,
            ));
            Ok(messages_body(config, messages, this.max_tokens))
        }
    }
}

/// How many turns `messages` holds so far: one assistant message closes each.
fn messages_turn(messages: &[SentMessage]) -> u64 {
    messages
        .iter()
        .filter(|message| {
            matches!(
                message,
                SentMessage::Own {
                    role: "assistant",
                    ..
                }
            )
        })
        .count() as u64
}

#[cfg(test)]
mod tests;
