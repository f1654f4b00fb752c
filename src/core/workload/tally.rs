//! What reading a workload file found: records met, sessions kept, and the records left out
//! by reason with the line where the first of each starts, so the page can say where to look.
//!
//! Timed records (traces, AIPerf timestamps) keep the file's order: a timestamp earlier than
//! the record kept before it is skipped as [`SkipReason::OutOfOrder`] (a replay cannot send
//! into the past, and sorting would change the traffic the file describes), and arrivals count
//! from the first usable record.
//!
//! AIPerf `single_turn` records that share a `session_id` are one conversation
//! ([`Tally::add_turn`]): each such record is a turn of the session its id first opened, in
//! file order, as AIPerf groups them.

use std::collections::HashMap;

use super::fields::Skip;
use super::{
    Session, SkipReason, Skipped, Workload, WorkloadError, WorkloadFormat, WorkloadSummary,
};

/// The number of line breaks in `text`.
pub(super) fn line_breaks(text: &str) -> u64 {
    text.bytes().filter(|&byte| byte == b'\n').count() as u64
}

/// What reading found so far: records met, sessions kept, and the skips by reason.
#[derive(Debug, Default)]
pub(super) struct Tally {
    records: u64,
    sessions: Vec<Session>,
    skipped: Vec<Skipped>,
    /// The first usable record's timestamp (ms), arrivals count from it.
    first_arrival: Option<f64>,
    /// The latest usable record's timestamp (ms): the next may not be earlier.
    last_arrival: Option<f64>,
    /// Each grouping id met so far and its session's position ([`Tally::add_turn`]).
    by_id: HashMap<String, usize>,
}

impl Tally {
    /// Counts one record starting at `line`: its session, or why it is left out. A session's
    /// `arrival_ms` comes in as the file's timestamp and is kept relative to the first.
    pub fn add(&mut self, line: u64, outcome: Result<Session, Skip>) {
        self.records += 1;
        let outcome = outcome.and_then(|session| self.timed(session));
        match outcome {
            Ok(session) => self.sessions.push(session),
            Err(skip) => self.skip(line, skip),
        }
    }

    /// Counts one record starting at `line` that is a turn of the session its id names (AIPerf
    /// `single_turn` with `session_id`): the first record of an id opens a session, each later
    /// one adds its turn to it, in file order. A record without an id is a session of its own.
    /// A later record's `timestamp` is checked for order like any record's, but its turn is
    /// sent after the previous turn's reply and its `delay`, as a `multi_turn` turn is.
    pub fn add_turn(&mut self, line: u64, outcome: Result<Session, Skip>) {
        let opened = match &outcome {
            Ok(Session { id: Some(id), .. }) => self.by_id.get(id).copied(),
            _ => None,
        };
        match (opened, outcome) {
            (Some(position), Ok(session)) => {
                self.records += 1;
                match self.in_order(session.arrival_ms) {
                    Ok(_) => self.sessions[position].turns.extend(session.turns),
                    Err(skip) => self.skip(line, skip),
                }
            }
            (_, outcome) => {
                let id = outcome.as_ref().ok().and_then(|session| session.id.clone());
                let before = self.sessions.len();
                self.add(line, outcome);
                if let Some(id) = id.filter(|_| self.sessions.len() > before) {
                    self.by_id.insert(id, before);
                }
            }
        }
    }

    /// `session` with its arrival relative to the first, or skipped when it goes backwards.
    fn timed(&mut self, mut session: Session) -> Result<Session, Skip> {
        session.arrival_ms = self.in_order(session.arrival_ms)?;
        Ok(session)
    }

    /// A record's timestamp `at` relative to the first usable record's, or skipped when it is
    /// earlier than the record kept before it.
    fn in_order(&mut self, at: Option<f64>) -> Result<Option<f64>, Skip> {
        let Some(at) = at else {
            return Ok(None);
        };
        if self.last_arrival.is_some_and(|last| at < last) {
            return Err(Skip::at(SkipReason::OutOfOrder, "timestamp"));
        }
        let first = *self.first_arrival.get_or_insert(at);
        self.last_arrival = Some(at);
        Ok(Some(at - first))
    }

    /// Counts a record left out, keeping the first line (and field) of each reason.
    fn skip(&mut self, line: u64, skip: Skip) {
        match self
            .skipped
            .iter_mut()
            .find(|skipped| skipped.reason == skip.reason)
        {
            Some(skipped) => skipped.count += 1,
            None => self.skipped.push(Skipped {
                reason: skip.reason,
                count: 1,
                first: line,
                field: skip.field,
            }),
        }
    }

    /// Records met so far.
    pub fn records(&self) -> u64 {
        self.records
    }

    /// The workload, or [`WorkloadError::NothingUsable`] when no record is.
    pub fn finish(
        self,
        format: WorkloadFormat,
        name: Option<&str>,
        bytes: u64,
        sha256: String,
    ) -> Result<Workload, WorkloadError> {
        if self.sessions.is_empty() {
            return Err(WorkloadError::NothingUsable {
                format: format.label(),
                reasons: reasons_text(&self.skipped),
            });
        }
        let timed = self
            .sessions
            .iter()
            .all(|session| session.arrival_ms.is_some());
        let span_ms = timed.then(|| {
            let last = self
                .sessions
                .iter()
                .filter_map(|session| session.arrival_ms)
                .fold(0.0_f64, f64::max);
            last.round() as u64
        });
        let summary = WorkloadSummary {
            format,
            name: name.map(str::to_owned),
            bytes,
            sha256,
            records: self.records,
            sessions: self.sessions.len() as u64,
            turns: self
                .sessions
                .iter()
                .map(|session| session.turns.len() as u64)
                .sum(),
            skipped: self.skipped,
            timed,
            span_ms,
        };
        Ok(Workload {
            summary,
            sessions: self.sessions,
        })
    }
}

/// The skips in words with where the first of each is: "3 have no reply (first at line 4)",
/// "1 has a field of the wrong type (first at line 2, `output_tokens`)".
pub(super) fn reasons_text(skipped: &[Skipped]) -> String {
    if skipped.is_empty() {
        return "the file has no records".to_owned();
    }
    let parts: Vec<String> = skipped
        .iter()
        .map(|skipped| {
            let field = skipped
                .field
                .as_deref()
                .map(|field| format!(", `{field}`"))
                .unwrap_or_default();
            format!(
                "{} {} (first at line {}{field})",
                skipped.count,
                skipped.reason.words_for(skipped.count),
                skipped.first
            )
        })
        .collect();
    parts.join(", ")
}
