//! What reading a workload file found: records met, sessions kept, and the records left out
//! by reason with the line where the first of each starts, so the page can say where to look.
//!
//! Timed records (traces, AIPerf timestamps) keep the file's order: a timestamp earlier than
//! the record kept before it is skipped as [`SkipReason::OutOfOrder`] (a replay cannot send
//! into the past, and sorting would change the traffic the file describes), and arrivals count
//! from the first usable record.

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

    /// `session` with its arrival relative to the first, or skipped when it goes backwards.
    fn timed(&mut self, mut session: Session) -> Result<Session, Skip> {
        let Some(at) = session.arrival_ms else {
            return Ok(session);
        };
        if self.last_arrival.is_some_and(|last| at < last) {
            return Err(Skip::at(SkipReason::OutOfOrder, "timestamp"));
        }
        let first = *self.first_arrival.get_or_insert(at);
        self.last_arrival = Some(at);
        session.arrival_ms = Some(at - first);
        Ok(session)
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
