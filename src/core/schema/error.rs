//! Why an artifact cannot be built, written or recomputed: one error type for the file's text
//! (a value JSON cannot hold), the builders above (outcomes that do not match the plan) and the
//! recomputation (a generation or a field it cannot read).

use thiserror::Error;

use crate::core::python::json::PyJsonError;
use crate::core::schema::generation::Generation;

/// Why an artifact cannot be built, written or recomputed.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum ArtifactError {
    /// A time or statistic is NaN or infinite; JSON cannot hold it and readers reject it.
    #[error(
        "{field} is {value}, which JSON cannot hold; the caller's clock produced a non-finite \
         time, so check the timestamps the browser passed in"
    )]
    NonFiniteValue {
        /// Where the value sits, e.g. `request_timings[3].ttft_ms`.
        field: String,
        /// The offending value.
        value: f64,
    },
    /// A statistic overflowed to infinity although its inputs were finite.
    #[error(
        "metrics.{key} overflowed (the row values are too large to average); check the rows \
         for absurd values"
    )]
    NonFiniteStatistic {
        /// The metrics key.
        key: String,
    },
    /// The run's wall time is negative.
    #[error(
        "the run's wall time is {wall_seconds} s; it must be ≥ 0, so pass the monotonic time \
         elapsed between the run's start and its end"
    )]
    NegativeWallTime {
        /// The offending wall time.
        wall_seconds: f64,
    },
    /// `finished_at_unix_ns` lies before `started_at_unix_ns`.
    #[error(
        "the run finished ({finished_at_unix_ns} ns) before it started ({started_at_unix_ns} \
         ns); read the wall clock at the start and again at the end of the run"
    )]
    FinishedBeforeStarted {
        /// Start, epoch ns.
        started_at_unix_ns: i64,
        /// End, epoch ns.
        finished_at_unix_ns: i64,
    },
    /// The config passed in is not the one the plan was made from.
    #[error(
        "the run settings differ from the settings the plan was made from; pass \
         `plan.config()` (or the config given to `RunPlan::new`)"
    )]
    ConfigDoesNotMatchPlan,
    /// An outcome names a request the plan does not have.
    #[error(
        "an outcome is for request {request_index}, but the plan has only {requests} requests \
         (indexes 0..{requests}); the scheduler mixed up runs"
    )]
    OutcomeOutsidePlan {
        /// The outcome's index.
        request_index: u64,
        /// Planned requests.
        requests: u64,
    },
    /// Two outcomes name the same request.
    #[error(
        "request {request_index} has more than one outcome; record exactly one result or \
         failure per request"
    )]
    DuplicateOutcome {
        /// The repeated index.
        request_index: u64,
    },
    /// Some planned requests have no outcome.
    #[error(
        "{missing} planned request(s) have no outcome (first: {first:?}); a cancelled run must \
         record each request it never started as a failure (e.g. a request_error with \
         RequestError::cancelled()) before the artifact is built"
    )]
    MissingOutcomes {
        /// How many indexes lack an outcome.
        missing: usize,
        /// The first few of them.
        first: Vec<u64>,
    },
    /// A completed request's row carries another request's index.
    #[error(
        "the result of request {request_index} carries a timing row for request {row_index}; \
         build the row from the same request's facts"
    )]
    RowIndexMismatch {
        /// The outcome's index.
        request_index: u64,
        /// The row's index.
        row_index: u64,
    },
    /// An outcome records a planned context other than the plan's.
    #[error(
        "request {request_index} records planned_context_tokens {recorded}, but the plan says \
         {planned}; take it from the plan"
    )]
    PlannedContextMismatch {
        /// The request.
        request_index: u64,
        /// The plan's value.
        planned: u64,
        /// The outcome's value.
        recorded: u64,
    },
    /// A count overflowed 64 bits (only possible with absurd input files).
    #[error("{field} overflows a 64-bit count; the file's token counts are not plausible")]
    CountOverflow {
        /// The sum that overflowed.
        field: String,
    },
    /// The JSON writer refused a value.
    #[error(transparent)]
    Serialization(#[from] PyJsonError),
    /// The artifact could not be turned into a JSON value.
    #[error("the artifact could not be encoded as JSON: {reason}")]
    Encoding {
        /// serde_json's reason.
        reason: String,
    },
    /// The file is of a generation whose metrics cannot be recomputed.
    #[error("cannot recompute {}: {reason}", recomputed_subject(*.generation))]
    NotRecomputable {
        /// The generation read (§10).
        generation: Generation,
        /// Why, and what to do instead.
        reason: String,
    },
    /// A field the recomputation needs is missing or of the wrong type.
    #[error(
        "cannot recompute: {path} {reason}; run `strobe-artifact validate` on the file to see \
         every problem"
    )]
    MalformedField {
        /// JSON path, e.g. `$.request_timings[2]`.
        path: String,
        /// What is wrong with it.
        reason: String,
    },
}

/// What a recomputation refused: "a G2 (…) artifact", or "this file" when no generation could be
/// read (it is not a JSON object).
fn recomputed_subject(generation: Generation) -> String {
    match generation {
        Generation::Unknown => "this file".to_owned(),
        known => format!("a {known} artifact"),
    }
}
