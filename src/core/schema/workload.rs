//! The `workload` block strobe adds to the artifact of a run that sent a workload file's
//! requests, or used the completions API (docs/guide/workloads.md): the file as read (format, name,
//! size, SHA-256, what was usable and what was skipped), how its records were sent, and the
//! API. Never a prompt: rows carry only where each request came from (`workload` in a row).
//! Runs of synthetic prompts on the chat API have no block, so their files are the reference
//! producer's.

use serde::{Deserialize, Serialize};

use crate::core::config::choices::{
    ApiEndpoint, HistoryMode, OutputLengths, WorkloadOrder, WorkloadTurns,
};

/// The `workload` block.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WorkloadBlock {
    /// `file` (a workload file's requests) or `synthetic` (strobe's prompts).
    pub source: String,
    /// The API the requests went to.
    pub endpoint: ApiEndpoint,
    /// The file, when the requests came from one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<WorkloadFile>,
    /// How the file's records were sent; absent for synthetic prompts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sending: Option<WorkloadSending>,
}

/// How a workload file's records were sent.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WorkloadSending {
    /// First turns only, or whole conversations.
    pub turns: WorkloadTurns,
    /// File order or shuffled.
    pub order: WorkloadOrder,
    /// The shuffle's seed.
    pub seed: i64,
    /// Where `max_tokens` came from.
    pub output_lengths: OutputLengths,
    /// What later turns carried as history.
    pub history: HistoryMode,
    /// The wait before a next turn where the record gives none, ms.
    pub think_time_ms: u64,
    /// The per-session header's name, or null.
    pub session_header: Option<String>,
    /// The trace's replay speed (1 = real time); null for an untimed workload.
    pub trace_speed: Option<f64>,
    /// Sessions the run started from.
    pub sessions: u64,
    /// Requests (turns) planned.
    pub requests: u64,
    /// Whether each request's first user text was preceded by a canary marker line (the
    /// file's text was otherwise sent as given).
    pub marker_lines: bool,
}

/// What the artifact records of the file a run's requests came from: what reading it found,
/// never a prompt.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkloadFile {
    /// The format recognised (`sharegpt`, `mooncake_trace`, …).
    pub format: String,
    /// The file's name as given, if any.
    pub name: Option<String>,
    /// Bytes read.
    pub bytes: u64,
    /// `sha256:<hex>` of the bytes: the same file gives the same hash.
    pub sha256: String,
    /// Records in the file, usable or not.
    pub records: u64,
    /// Usable sessions (single-turn: requests).
    pub usable_sessions: u64,
    /// Turns over the usable sessions.
    pub usable_turns: u64,
    /// Records left out, by reason.
    pub skipped: Vec<SkippedRecords>,
    /// Whether the records carry arrival times (a trace).
    pub timed: bool,
}

/// Records left out for one reason (`no_reply`, `no_prompt`, `unparsable`, `bad_field`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SkippedRecords {
    /// Why.
    pub reason: String,
    /// How many.
    pub count: u64,
    /// The 1-based record number of the first.
    pub first: u64,
}
