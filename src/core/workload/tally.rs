//! What reading a workload file found: records met, sessions usable, and the records left out
//! by reason with the line where the first of each starts, so the page can say where to look.
//! Every usable session is counted; only those the [`Keep`] choice names stay in memory, so a
//! file far larger than a run is read without holding its prompts.
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

use serde::{Deserialize, Serialize};

use super::fields::Skip;
use super::{
    Session, SkipReason, Skipped, Workload, WorkloadError, WorkloadFormat, WorkloadSummary,
};

/// Which usable sessions reading keeps in memory; every one is counted all the same.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Keep {
    /// Every one.
    #[default]
    All,
    /// The first n, in file order.
    First(u64),
    /// Those at these positions among the usable sessions (0-based, ascending).
    These(Vec<u64>),
}

impl Keep {
    /// Whether the usable session at `position` is kept.
    pub fn keeps(&self, position: u64) -> bool {
        match self {
            Self::All => true,
            Self::First(count) => position < *count,
            Self::These(positions) => positions.binary_search(&position).is_ok(),
        }
    }
}

/// What reading found so far: records met, sessions usable (and those kept), and the skips by
/// reason.
#[derive(Debug, Default)]
pub(super) struct Tally {
    records: u64,
    /// Which usable sessions stay in memory.
    keep: Keep,
    /// Usable sessions met, kept or not.
    usable: u64,
    /// Their turns.
    turns: u64,
    /// How many of them carry an arrival time.
    timed: u64,
    /// The latest arrival among them, from the first (ms).
    span_ms: f64,
    /// The kept sessions, in file order.
    sessions: Vec<Session>,
    /// Each kept session's position among the usable ones.
    positions: Vec<u64>,
    skipped: Vec<Skipped>,
    /// The first usable record's timestamp (ms), arrivals count from it.
    first_arrival: Option<f64>,
    /// The latest usable record's timestamp (ms): the next may not be earlier.
    last_arrival: Option<f64>,
    /// Each grouping id met so far and its session's position ([`Tally::add_turn`]).
    by_id: HashMap<String, u64>,
}

impl Tally {
    /// A tally keeping the sessions `keep` names.
    pub fn keeping(keep: Keep) -> Self {
        Self {
            keep,
            ..Self::default()
        }
    }

    /// Counts one record starting at `line`: its session, or why it is left out. A session's
    /// `arrival_ms` comes in as the file's timestamp and is kept relative to the first.
    pub fn add(&mut self, line: u64, outcome: Result<Session, Skip>) {
        self.records += 1;
        let outcome = outcome.and_then(|session| self.timed(session));
        match outcome {
            Ok(session) => {
                let position = self.usable;
                self.usable += 1;
                self.turns += session.turns.len() as u64;
                if let Some(at) = session.arrival_ms {
                    self.timed += 1;
                    self.span_ms = self.span_ms.max(at);
                }
                if self.keep.keeps(position) {
                    self.sessions.push(session);
                    self.positions.push(position);
                }
            }
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
                    Ok(_) => {
                        self.turns += session.turns.len() as u64;
                        // Kept or only counted, as its first turn was.
                        if let Ok(index) = self.kept_index(position) {
                            self.sessions[index].turns.extend(session.turns);
                        }
                    }
                    Err(skip) => self.skip(line, skip),
                }
            }
            (_, outcome) => {
                let id = outcome.as_ref().ok().and_then(|session| session.id.clone());
                let before = self.usable;
                self.add(line, outcome);
                if let Some(id) = id.filter(|_| self.usable > before) {
                    self.by_id.insert(id, before);
                }
            }
        }
    }

    /// Where the usable session at `position` is among the kept ones, if it is kept.
    fn kept_index(&self, position: u64) -> Result<usize, usize> {
        self.positions.binary_search(&position)
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
        if self.usable == 0 {
            return Err(WorkloadError::NothingUsable {
                format: format.label(),
                reasons: reasons_text(&self.skipped),
            });
        }
        let timed = self.timed == self.usable;
        let summary = WorkloadSummary {
            format,
            name: name.map(str::to_owned),
            bytes,
            sha256,
            records: self.records,
            sessions: self.usable,
            turns: self.turns,
            skipped: self.skipped,
            timed,
            span_ms: timed.then(|| self.span_ms.round() as u64),
        };
        // Every usable session kept: positions are the indices, and go unsaid.
        let positions = if self.positions.len() as u64 == self.usable {
            Vec::new()
        } else {
            self.positions
        };
        Ok(Workload {
            summary,
            sessions: self.sessions,
            positions,
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
