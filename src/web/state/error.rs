//! Why a run ended without an artifact, or could not start ([`RunError`]), each reason with what
//! to do next, in one place: the page shows its text in the status line, and a worker sends its
//! reasons to the page as text inside [`FromMeasurement::Failed`](crate::core::live::FromMeasurement).

use leptos::wasm_split::SplitLoaderError;
use thiserror::Error;

use crate::core::config::fields::FieldKey;

use crate::web::platform::parts::PartNotLoaded;

/// What the page suggests when the measurement worker cannot do its job.
pub const USE_MAIN_THREAD: &str =
    "Choose \"Measure in: main\" to measure on the page's own thread.";

/// Why a run has no artifact.
#[derive(Clone, Debug, PartialEq, Error)]
pub enum RunError {
    /// The endpoint check failed; the page shows why above the form.
    #[error("the endpoint check failed; see the message above")]
    EndpointCheck,
    /// Fields of the form do not parse or break a rule; each is marked in the form.
    #[error("fix these fields first: {}", field_list(.0))]
    InvalidFields(Vec<FieldKey>),
    /// The settings make no plan (the plan's own words say what to change).
    #[error("{0}")]
    Plan(String),
    /// Context calibration could not size the prompts (its words say what to do).
    #[error("{0}")]
    Calibration(String),
    /// The prefix-cache reset before the run failed, so nothing was measured (its words say
    /// what to do).
    #[error("{0}")]
    CacheReset(String),
    /// The run finished but its artifact could not be built or written.
    #[error("the run finished but its artifact could not be built: {0}")]
    Artifact(String),
    /// A sweep stopped before any of its steps was measured.
    #[error("{0}")]
    Sweep(String),
    /// The measuring thread said why: the warm-up failed, the plan was refused, the artifact
    /// could not be built (its own words, which say what to do).
    #[error("{0}")]
    Measurement(String),
    /// `performance.now()` is missing on the thread that would measure.
    #[error("this browser has no performance clock on the thread that would measure")]
    NoClock,
    /// The page has no preload links to the app's JavaScript glue and wasm.
    #[error(
        "the measurement worker cannot find this app's wasm files on the page (the build's \
         preload links are missing). {use_main}",
        use_main = USE_MAIN_THREAD
    )]
    AppFilesNotFound,
    /// `new Worker(…)` threw.
    #[error("this browser could not start the measurement worker ({0}). {use_main}", use_main = USE_MAIN_THREAD)]
    WorkerNotStarted(String),
    /// Posting the app's module to the worker threw.
    #[error(
        "could not hand the app's code to the measurement worker ({0}). {use_main}",
        use_main = USE_MAIN_THREAD
    )]
    CodeNotHandedOver(String),
    /// The worker's script failed (an error event).
    #[error("the measurement worker failed: {0}. {use_main}", use_main = USE_MAIN_THREAD)]
    WorkerFailed(String),
    /// The worker never said it was ready.
    #[error("the measurement worker did not start within {0} s. {use_main}", use_main = USE_MAIN_THREAD)]
    WorkerStartTimedOut(f64),
    /// The worker fell silent mid-run (it reports four times a second while it runs).
    #[error(
        "the measurement worker stopped answering ({silence_s} s without a message) and its run \
         is lost: the {reported} request(s) it had reported are counted above, but no artifact \
         can be built without the rest. Run again; if it happens again, {use_main}",
        use_main = USE_MAIN_THREAD
    )]
    WorkerSilent {
        /// How long it had been silent, in seconds.
        silence_s: f64,
        /// How many finished requests it had reported.
        reported: usize,
    },
    /// The worker's result channel closed without a result.
    #[error("the measurement worker stopped without a result. {use_main}", use_main = USE_MAIN_THREAD)]
    WorkerGone,
    /// A message from the worker could not be read.
    #[error("the measurement worker sent a message strobe cannot read: {0}")]
    UnreadableMessage(String),
    /// The artifact text the worker sent could not be read.
    #[error("the measurement worker's artifact could not be read: {0}")]
    UnreadableArtifact(String),
    /// Cancel was pressed while the measurement worker was still starting: it was never told
    /// to start, so no request of the run was sent.
    #[error("the run was cancelled before its first request")]
    CancelledBeforeStart,
    /// Cancel was pressed while the server's prefix cache was being emptied before the run.
    #[error(
        "cancelled while the server's prefix cache was being emptied ({0}): no request of \
         the run was sent and nothing was measured; the server may still have done the reset"
    )]
    CancelledDuringReset(String),
    /// The part of the app's code a run needs could not be fetched.
    #[error("{0}")]
    PartNotLoaded(PartNotLoaded),
}

impl From<SplitLoaderError> for RunError {
    fn from(error: SplitLoaderError) -> Self {
        Self::PartNotLoaded(error.into())
    }
}

impl RunError {
    /// Whether Cancel ended the run before any request of it was sent (during the prefix-cache
    /// reset, or while the measurement worker was starting): nothing was measured and nothing
    /// failed, so the page shows the run as cancelled, not as an error.
    pub fn cancelled_before_measuring(&self) -> bool {
        matches!(
            self,
            Self::CancelledDuringReset(_) | Self::CancelledBeforeStart
        )
    }
}

/// The fields' keys as the status line names them: `requests, max_tokens`.
fn field_list(fields: &[FieldKey]) -> String {
    fields
        .iter()
        .map(|field| field.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}
