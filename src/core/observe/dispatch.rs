//! When an open-loop request went out against when it was due (a strobe addition,
//! docs/guide/load.md): the facts the measuring thread records per request, written into the row
//! and the failure record it ends in.

use crate::core::observe::conclude::RequestOutcome;
use crate::core::schema::rows::{FailureRecord, RequestTiming};

/// How one open-loop request was dispatched, in ms on the run's clock.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DispatchFacts {
    /// When it was due, from the run's start.
    pub scheduled_ms: f64,
    /// The clock reading that started it (just before `fetch()`), from the run's start.
    pub sent_ms: f64,
    /// How long it waited for a free slot after it was due.
    pub cap_wait_ms: f64,
}

impl DispatchFacts {
    /// How late it went out: `sent_ms − scheduled_ms`.
    pub fn lag_ms(&self) -> f64 {
        self.sent_ms - self.scheduled_ms
    }
}

impl RequestTiming {
    /// Writes the dispatch keys of an open-loop request.
    pub fn set_dispatch(&mut self, facts: &DispatchFacts) {
        self.scheduled_ms = Some(facts.scheduled_ms);
        self.dispatch_lag_ms = Some(facts.lag_ms());
        self.cap_wait_ms = Some(facts.cap_wait_ms);
    }
}

impl FailureRecord {
    /// Writes the dispatch keys of an open-loop request that failed after it was sent.
    pub fn set_dispatch(&mut self, facts: &DispatchFacts) {
        self.scheduled_ms = Some(facts.scheduled_ms);
        self.dispatch_lag_ms = Some(facts.lag_ms());
        self.cap_wait_ms = Some(facts.cap_wait_ms);
    }
}

impl RequestOutcome {
    /// Writes `facts` into the outcome: the row of a result, the record of a failure and its
    /// `response_timing` row.
    pub fn set_dispatch(&mut self, facts: &DispatchFacts) {
        match self {
            Self::Completed(completed) => {
                if let Some(row) = completed.row.as_mut() {
                    row.set_dispatch(facts);
                }
            }
            Self::Failed(failure) => {
                failure.set_dispatch(facts);
                if let Some(Some(row)) = failure.response_timing.as_mut() {
                    row.set_dispatch(facts);
                }
            }
        }
    }

    /// The dispatch facts written into this outcome, if it was an open-loop request that went
    /// out.
    pub fn dispatch(&self) -> Option<DispatchFacts> {
        let (scheduled, lag, cap_wait) = match self {
            Self::Completed(completed) => {
                let row = completed.row.as_ref()?;
                (row.scheduled_ms?, row.dispatch_lag_ms?, row.cap_wait_ms?)
            }
            Self::Failed(failure) => (
                failure.scheduled_ms?,
                failure.dispatch_lag_ms?,
                failure.cap_wait_ms?,
            ),
        };
        Some(DispatchFacts {
            scheduled_ms: scheduled,
            sent_ms: scheduled + lag,
            cap_wait_ms: cap_wait,
        })
    }
}
