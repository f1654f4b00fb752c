//! A workload plan without its text ([`WorkloadShape`]): the file's summary and, per session,
//! its record, arrival and each turn's size, `max_tokens` and wait. A plan document for Locust
//! carries it beside the requests' bodies, each worker copies it into its records' header, and
//! the import makes the workload's plan again from it ([`WorkloadRequests::from_shape`]), so
//! every row is placed in the file and the `workload` block written as the page writes them,
//! while the records hold no prompt (docs/operate/locust.md).
//!
//! A shape read back from records is hostile until checked: its spellings must be strobe's,
//! its counts must agree, and it may plan no more requests than a run may send.

use serde::{Deserialize, Serialize};

use crate::core::config::settings::MAX_REQUESTS;
use crate::core::plan::workload::{PlannedInput, PlannedSession, PlannedTurn, WorkloadRequests};
use crate::core::schema::workload::WorkloadFile;
use crate::core::workload::{SkipReason, WorkloadFormat};

/// The most characters of a file name a shape may carry (the validator's bound).
const MAX_NAME_CHARS: usize = 1_024;

/// A workload plan's shape: what the artifact needs of it, never a prompt.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkloadShape {
    /// The file as read (the artifact's `workload.file`).
    pub file: WorkloadFile,
    /// Whether the sessions are due at the file's times.
    pub timed: bool,
    /// The planned sessions, in the order they start.
    pub sessions: Vec<SessionShape>,
}

/// One planned session's shape.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SessionShape {
    /// Its position among the file's usable sessions.
    pub record: u64,
    /// When its first turn is due, ms from the run's start at trace speed 1.
    pub arrival_ms: Option<f64>,
    /// Its turns; never empty.
    pub turns: Vec<TurnShape>,
}

/// One planned turn's shape.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TurnShape {
    /// Its input's size in strobe's estimated tokens (the row's planned context).
    pub input_tokens: u64,
    /// `max_tokens` sent with it.
    pub max_tokens: u64,
    /// The file's wait after the previous reply, ms, if it gives one.
    pub delay_ms: Option<f64>,
}

impl WorkloadRequests {
    /// This plan's shape: no text, no session id, no recorded reply.
    pub fn shape(&self) -> WorkloadShape {
        WorkloadShape {
            file: self.file.clone(),
            timed: self.timed,
            sessions: self
                .sessions
                .iter()
                .map(|session| SessionShape {
                    record: session.record,
                    arrival_ms: session.arrival_ms,
                    turns: session
                        .turns
                        .iter()
                        .map(|turn| TurnShape {
                            input_tokens: turn.input_tokens,
                            max_tokens: turn.max_tokens,
                            delay_ms: turn.delay_ms,
                        })
                        .collect(),
                })
                .collect(),
        }
    }

    /// The plan `shape` describes, its turns [`PlannedInput::Withheld`]: enough to place every
    /// request in the file and write the artifact's `workload` block, not to send one. Refused,
    /// with the reason, when the shape is not one strobe writes.
    pub fn from_shape(shape: WorkloadShape) -> Result<Self, String> {
        check_file(&shape.file)?;
        let turns: u64 = shape
            .sessions
            .iter()
            .map(|session| session.turns.len() as u64)
            .sum();
        if shape.sessions.is_empty() || turns > MAX_REQUESTS {
            return Err(format!(
                "the workload plans {turns} requests in {} sessions; a run sends 1 to \
                 {MAX_REQUESTS}",
                shape.sessions.len()
            ));
        }
        if shape.sessions.len() as u64 > shape.file.usable_sessions
            || turns > shape.file.usable_turns
        {
            return Err(format!(
                "the workload plans {} sessions of {turns} turns from a file of {} usable \
                 sessions and {} turns",
                shape.sessions.len(),
                shape.file.usable_sessions,
                shape.file.usable_turns
            ));
        }
        let mut records = std::collections::BTreeSet::new();
        let mut sessions = Vec::with_capacity(shape.sessions.len());
        let mut starts = Vec::with_capacity(shape.sessions.len());
        let mut requests = 0_u64;
        for (position, session) in shape.sessions.into_iter().enumerate() {
            let at = format!("workload session {position}");
            if session.record >= shape.file.usable_sessions || !records.insert(session.record) {
                return Err(format!(
                    "{at}: record {} is not one of the file's {} usable sessions, or is planned \
                     twice",
                    session.record, shape.file.usable_sessions
                ));
            }
            if session.turns.is_empty() {
                return Err(format!("{at} has no turn"));
            }
            if session
                .arrival_ms
                .is_some_and(|ms| !ms.is_finite() || ms < 0.0)
            {
                return Err(format!("{at}: arrival_ms must be a time ≥ 0"));
            }
            let mut turns = Vec::with_capacity(session.turns.len());
            for (index, turn) in session.turns.into_iter().enumerate() {
                if turn.delay_ms.is_some_and(|ms| !ms.is_finite() || ms < 0.0) {
                    return Err(format!("{at}, turn {index}: delay_ms must be a time ≥ 0"));
                }
                turns.push(PlannedTurn {
                    input: PlannedInput::Withheld,
                    max_tokens: turn.max_tokens,
                    delay_ms: turn.delay_ms,
                    recorded_reply: None,
                    input_tokens: turn.input_tokens,
                });
            }
            starts.push(requests);
            requests += turns.len() as u64;
            sessions.push(PlannedSession {
                record: session.record,
                id: None,
                arrival_ms: session.arrival_ms,
                turns,
            });
        }
        Ok(Self {
            file: shape.file,
            sessions,
            starts,
            requests,
            timed: shape.timed,
        })
    }
}

/// The file's spellings are strobe's and its name is a name's length.
fn check_file(file: &WorkloadFile) -> Result<(), String> {
    if !WorkloadFormat::ALL
        .iter()
        .any(|format| format.as_str() == file.format)
    {
        return Err("the workload's format is not one strobe reads".to_owned());
    }
    if let Some(skipped) = file.skipped.iter().find(|skipped| {
        !SkipReason::ALL
            .iter()
            .any(|reason| reason.as_str() == skipped.reason)
    }) {
        return Err(format!(
            "the workload's skip reason at record {} is not one strobe writes",
            skipped.first
        ));
    }
    if file
        .name
        .as_ref()
        .is_some_and(|name| name.is_empty() || name.chars().count() > MAX_NAME_CHARS)
    {
        return Err(format!(
            "the workload's file name must be 1 to {MAX_NAME_CHARS} characters"
        ));
    }
    Ok(())
}
