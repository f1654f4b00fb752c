//! A conversation as it is played: one session of a workload's plan, turn after turn, each
//! sent with the history before it, after the wait the file or the run gives it
//! (docs/guide/workloads.md, *Conversations*).
//!
//! [`SessionPlay`] holds what a session has been answered so far and says, for its next turn,
//! which request it is, how long after the previous reply it is due, and its body. With live
//! history the server's own replies are the history, so a turn that fails, or whose reply
//! grew past what strobe keeps, leaves the turns after it unsendable: they end as failures
//! that say why ([`SessionPlay::abandon`]). With recorded history the file's replies are, and
//! the session goes on. Pure: the measuring thread sends, waits and reads; this decides.

use crate::core::config::choices::HistoryMode;
use crate::core::observe::accumulate::CapturedReply;
use crate::core::observe::failure::RequestError;
use crate::core::plan::RunPlan;
use crate::core::prompt::workload::{workload_request_body, WorkloadBodyError};

/// The most characters of one reply a session keeps as history (4 Mi characters, a few MB):
/// far above any `max_tokens` a server accepts, a bound only against a runaway stream.
pub const HISTORY_REPLY_LIMIT_CHARS: usize = 4 * 1024 * 1024;

/// `error_type` of a turn that was not sent because its session's history is unknown.
pub const SESSION_ERROR_TYPE: &str = "SessionError";

/// The next turn of a session: which request it is and when it is due.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DueTurn {
    /// The request's index in the run.
    pub index: u64,
    /// Its turn in the session (0-based).
    pub turn: usize,
    /// How long after the previous turn's reply ended it goes out, ms (0 for the first turn).
    pub wait_ms: f64,
}

/// How one turn ended, as far as its session's history is concerned.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum TurnEnd<'a> {
    /// The server replied; the reply as read (the whole visible content, up to the bound).
    Replied(&'a CapturedReply),
    /// The request failed (or was answered by no usable stream).
    Failed,
}

/// One session of the plan, as far as it has been played.
#[derive(Clone, Debug)]
pub struct SessionPlay {
    session: usize,
    first_index: u64,
    turns: usize,
    history: HistoryMode,
    think_time_ms: f64,
    delays_ms: Vec<Option<f64>>,
    /// The replies of the turns played so far, in order (live history).
    replies: Vec<String>,
    next: usize,
    /// Why the turns from `next` on cannot be sent, once that is so.
    broken: Option<String>,
}

impl SessionPlay {
    /// Session `session` of `plan`'s workload, before its first turn; `None` when the plan has
    /// no workload or no such session.
    pub fn new(plan: &RunPlan, session: usize) -> Option<Self> {
        let workload = plan.workload()?;
        let planned = workload.sessions().get(session)?;
        let options = &plan.config().workload;
        Some(Self {
            session,
            first_index: workload.index_of(session, 0)?,
            turns: planned.turns.len(),
            history: options.history,
            think_time_ms: options.think_time_ms as f64,
            delays_ms: planned.turns.iter().map(|turn| turn.delay_ms).collect(),
            replies: Vec::new(),
            next: 0,
            broken: None,
        })
    }

    /// The session's position in the plan.
    pub fn session(&self) -> usize {
        self.session
    }

    /// The turn to send next, or `None` when every turn was played (or cannot be: see
    /// [`abandon`](Self::abandon)).
    pub fn next_turn(&self) -> Option<DueTurn> {
        if self.next >= self.turns || self.broken.is_some() {
            return None;
        }
        let wait_ms = match self.next {
            0 => 0.0,
            turn => self.delays_ms[turn].unwrap_or(self.think_time_ms).max(0.0),
        };
        Some(DueTurn {
            index: self.first_index + self.next as u64,
            turn: self.next,
            wait_ms,
        })
    }

    /// The body of the next turn: its input after the session's history (the replies so far,
    /// or the file's with recorded history).
    pub fn body(&self, plan: &RunPlan) -> Result<String, WorkloadBodyError> {
        let index = self.first_index + self.next as u64;
        match self.history {
            HistoryMode::Live => {
                let replies: Vec<&str> = self.replies.iter().map(String::as_str).collect();
                workload_request_body(plan, index, &replies)
            }
            HistoryMode::Recorded => {
                let recorded = recorded_replies(plan, self.session, self.next);
                workload_request_body(plan, index, &recorded)
            }
        }
    }

    /// Records how the next turn ended and moves on to the turn after it. With live history,
    /// a failed turn or a reply cut at [`HISTORY_REPLY_LIMIT_CHARS`] ends the session: the
    /// turns after it are then [`abandon`](Self::abandon)ed.
    pub fn ended(&mut self, end: TurnEnd<'_>) {
        if self.next >= self.turns || self.broken.is_some() {
            return;
        }
        let turn = self.next + 1;
        self.next += 1;
        if self.history == HistoryMode::Recorded || self.next == self.turns {
            return;
        }
        match end {
            TurnEnd::Replied(reply) if !reply.cut => self.replies.push(reply.text.clone()),
            TurnEnd::Replied(reply) => {
                self.broken = Some(long_reply_reason(&turn.to_string(), reply.limit));
            }
            TurnEnd::Failed => self.broken = Some(failed_turn_reason(&turn.to_string())),
        }
    }

    /// The turns of this session that will not be sent, each with its reason: after a break
    /// of the live history, the rest of the session (with the break's reason, cancelled or
    /// not); after a cancel (`cancelled`), every turn not yet sent. Leaves the session played
    /// out.
    pub fn abandon(&mut self, cancelled: bool) -> Vec<(u64, RequestError)> {
        let error = match (&self.broken, cancelled) {
            (Some(reason), _) => RequestError::new(SESSION_ERROR_TYPE, reason.clone()),
            (None, true) => RequestError::new(
                "AbortError",
                "the run was cancelled before this request was sent",
            ),
            (None, false) => return Vec::new(),
        };
        let rest = (self.next..self.turns)
            .map(|turn| (self.first_index + turn as u64, error.clone()))
            .collect();
        self.next = self.turns;
        rest
    }
}

impl SessionPlay {
    /// The session header its requests carry, as `(name, value)`, when the run sets one
    /// (`session_header`): the value is the file's id for the session, else `session-<n>`,
    /// `n` its 1-based position among the usable sessions.
    pub fn header(&self, plan: &RunPlan) -> Option<(String, String)> {
        session_header(plan, self.session)
    }
}

/// Why the turns after turn `turn` (1-based, as written) of a live-history session are not
/// sent: that turn failed. A plan for Locust carries it with `{turn}` for the locustfile.
pub fn failed_turn_reason(turn: &str) -> String {
    format!(
        "not sent: turn {turn} of this session failed, and the turns after it carry its reply \
         as history (history=live); its own failure says why"
    )
}

/// Why the turns after turn `turn` (1-based, as written) of a live-history session are not
/// sent: its reply grew past `limit` characters.
pub fn long_reply_reason(turn: &str, limit: usize) -> String {
    format!(
        "not sent: the reply to turn {turn} of this session was longer than {limit} \
         characters, more than strobe keeps as history, so the turns after it cannot carry it \
         (lower max_tokens, or set history=recorded)"
    )
}

/// The session header of session `session`'s requests, as `(name, value)`, when the run sets
/// one ([`SessionPlay::header`]).
pub fn session_header(plan: &RunPlan, session: usize) -> Option<(String, String)> {
    let name = plan.config().workload.session_header.clone()?;
    let planned = plan.workload()?.sessions().get(session)?;
    let value = planned
        .id
        .clone()
        .unwrap_or_else(|| format!("session-{}", planned.record + 1));
    Some((name, value))
}

/// The file's replies to session `session`'s turns before `turn`.
fn recorded_replies(plan: &RunPlan, session: usize, turn: usize) -> Vec<&str> {
    plan.workload()
        .and_then(|workload| workload.sessions().get(session))
        .map(|planned| {
            planned.turns[..turn.min(planned.turns.len())]
                .iter()
                .map(|turn| turn.recorded_reply.as_deref().unwrap_or_default())
                .collect()
        })
        .unwrap_or_default()
}

/// The history request `index` can be built with before anything is sent: none for a
/// session's first turn, the file's replies with recorded history; `None` when it needs the
/// server's live replies.
pub fn replies_known_ahead(plan: &RunPlan, index: u64) -> Option<Vec<&str>> {
    let workload = plan.workload()?;
    let (session, turn) = workload.position(index)?;
    match (turn, plan.config().workload.history) {
        (0, _) => Some(Vec::new()),
        (_, HistoryMode::Recorded) => Some(recorded_replies(plan, session, turn)),
        (_, HistoryMode::Live) => None,
    }
}

#[cfg(test)]
mod tests;
