//! The row types of the artifact (ARTIFACT.md §5, §6): a `request_timings[]` row with its
//! canary and controlled-output objects, and a `failures[]` record. Plain serde types; how they
//! are built from a stream is [`crate::core::observe`]'s.

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

use crate::core::config::choices::ControlledOutputPolicy;
use std::collections::BTreeMap;

/// Where `out_toks` came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OutputTokenSource {
    /// `usage.completion_tokens` was a non-negative integer.
    Usage,
    /// The server gave no exact count; the number of content chunks stands in.
    ContentChunks,
}

impl OutputTokenSource {
    /// The artifact spelling (`"usage"` / `"content_chunks"`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Usage => "usage",
            Self::ContentChunks => "content_chunks",
        }
    }
}

/// The `request_canary` object of a row.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RequestCanary {
    /// The marker the prompt asked for, e.g. `ANVIL_REQ_1717_00000`.
    pub marker: String,
    /// Visible content starts with the marker, followed by whitespace or nothing.
    pub marker_at_start: bool,
    /// Matches of `ANVIL_REQ_-?[0-9]+_[0-9]{5}\b` in the captured visible content.
    pub observed_marker_count: u64,
    /// Matches that are not this request's marker.
    pub foreign_marker_count: u64,
    /// The capture was not truncated.
    pub capture_complete: bool,
    /// `marker_at_start && foreign_marker_count == 0 && capture_complete`.
    pub passed: bool,
}

/// The `controlled_output` object of a row (present only when `--response-words` > 0).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ControlledOutput {
    /// The policy in force.
    pub policy: ControlledOutputPolicy,
    /// `--response-words`.
    pub requested_words: u64,
    /// Words exactly equal to `code`.
    pub observed_code_words: u64,
    /// All other words.
    pub observed_extra_words: u64,
    /// The capture was not truncated.
    pub capture_complete: bool,
    /// `code words == requested && extra == 0`, or `None` when the capture is incomplete.
    pub exact_adherence: Option<bool>,
    /// `exact_adherence == Some(true)` under strict; always true under observe.
    pub passed: bool,
}

/// One `request_timings[]` row. Field names are the artifact's, including the three identical
/// TPOT keys; a row read from a reference artifact serializes back to the same keys.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RequestTiming {
    /// Request index i.
    pub request_index: u64,
    /// The clamped planned context of request i.
    pub planned_context_tokens: u64,
    /// `usage.prompt_tokens` when a non-negative integer.
    pub prompt_tokens: Option<u64>,
    /// Exact output tokens, or null when the source is not usage.
    pub output_tokens: Option<u64>,
    /// `usage`, `content_chunks`, or `unknown` (older producers).
    pub output_token_source: String,
    /// TTFO × 1000 (falls back to TTFT when no reasoning came first).
    pub time_to_first_output_ms: f64,
    /// TTFT × 1000.
    pub ttft_ms: f64,
    /// (E2E − TTFO) × 1000.
    pub generation_ms: f64,
    /// (E2E − TTFT) × 1000.
    pub visible_generation_ms: f64,
    /// E2E × 1000.
    pub e2e_ms: f64,
    /// prompt_tokens / TTFO (seconds), when both are known and TTFO > 0.
    pub effective_prefill_tok_s: Option<f64>,
    /// (output_tokens − 1) / generation (seconds), when both are positive.
    pub decode_tok_s: Option<f64>,
    /// generation × 1000 / (output_tokens − 1): the legacy name of TPOT.
    pub mean_inter_token_latency_ms: Option<f64>,
    /// Same value as `mean_inter_token_latency_ms`.
    pub mean_time_per_output_token_ms: Option<f64>,
    /// Same value as `mean_inter_token_latency_ms`.
    pub tpot_ms: Option<f64>,
    /// Reasoning deltas seen.
    pub reasoning_chunks: u64,
    /// Content deltas seen.
    pub content_chunks: u64,
    /// The canary observation, or null when canaries are off.
    pub request_canary: Option<RequestCanary>,
    /// The controlled-output observation, or null when `--response-words` is 0.
    pub controlled_output: Option<ControlledOutput>,
    /// The visible capture was cut at the limit.
    pub visible_content_truncated: bool,
    /// strobe addition (§12): `Some(n)` / `Some(None)` write `usage.prompt_tokens_details.
    /// cached_tokens` or null; `None` omits the key, as in rows of the reference producer.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "deserialize_present"
    )]
    pub cached_tokens: Option<Option<u64>>,
    /// strobe addition (§12): request start relative to the run start, in ms; omitted when `None`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at_ms: Option<f64>,
    /// strobe addition (§12, traces): when each read that carried an event arrived, in ms after
    /// the request start (`now − start` in ms, so the first may differ from `ttfo_ms` in the
    /// last bit); omitted unless the user asked for traces. See [`CHUNK_ARRIVALS_KEPT`](crate::core::observe::accumulate::CHUNK_ARRIVALS_KEPT).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chunk_arrivals_ms: Option<Vec<f64>>,
    /// strobe addition (transport accounting): the browser opened a new connection for this
    /// request itself (see [`TransportFacts::new_connection`](crate::core::observe::transport::TransportFacts::new_connection)). `None` omits the key (rows of
    /// the reference producer); `Some(None)` writes null (the browser did not say).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "deserialize_present"
    )]
    pub new_connection: Option<Option<bool>>,
    /// strobe addition (transport accounting): a CORS preflight preceded this request. Null
    /// in every browser today: see [`TransportFacts::preflight`](crate::core::observe::transport::TransportFacts::preflight).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "deserialize_present"
    )]
    pub preflight: Option<Option<bool>>,
    /// strobe addition (transport accounting): ms from the row's start (just before `fetch()`)
    /// to the request leaving the browser (`requestStart`), time inside TTFO that the server
    /// never saw; see [`RequestTiming::browser_wait_ms`].
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "deserialize_present"
    )]
    pub client_queue_ms: Option<Option<f64>>,
    /// strobe addition (from the wire): `time_to_first_output_ms − client_queue_ms`, the TTFO
    /// counted from the request leaving the browser (docs/develop/accuracy.md, *From the wire*).
    /// Omitted with the transport keys; null when the browser did not report `client_queue_ms`.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "deserialize_present"
    )]
    pub ttfo_from_wire_ms: Option<Option<f64>>,
    /// strobe addition (from the wire): `ttft_ms − client_queue_ms`; see `ttfo_from_wire_ms`.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "deserialize_present"
    )]
    pub ttft_from_wire_ms: Option<Option<f64>>,
    /// strobe addition (from the wire): `e2e_ms − client_queue_ms`; see `ttfo_from_wire_ms`.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "deserialize_present"
    )]
    pub e2e_from_wire_ms: Option<Option<f64>>,
    /// strobe addition (transport accounting): the protocol the request went over
    /// (`nextHopProtocol`: `http/1.1`, `h2`, `h3`).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "deserialize_present"
    )]
    pub http_protocol: Option<Option<String>>,
    /// strobe addition (open-loop load): when this request was due, ms from the run's start.
    /// Omitted in closed-loop runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scheduled_ms: Option<f64>,
    /// strobe addition (open-loop load): how late the request was sent, ms: the clock reading
    /// that started it minus `scheduled_ms`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dispatch_lag_ms: Option<f64>,
    /// strobe addition (open-loop load): how much of that lag was spent waiting for a free slot
    /// because the cap on requests in flight was reached (0 when a slot was free).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cap_wait_ms: Option<f64>,
    /// strobe addition (validity): `true` when many events arrived in one or two reads, so the
    /// stream was buffered on its way ([`ReadStats::looks_buffered`](crate::core::observe::accumulate::ReadStats::looks_buffered)); omitted otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub buffered_stream: Option<bool>,
    /// strobe addition (workloads, docs/guide/workloads.md): where in the workload file the request
    /// came from; omitted for synthetic prompts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workload: Option<Box<RequestOrigin>>,
}

/// Where a workload request came from: never its text, only its place in the file and run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RequestOrigin {
    /// The record's position among the file's usable sessions (0-based).
    pub record: u64,
    /// The session's position in the run (0-based, the order sessions started in).
    pub session: u64,
    /// The turn within the session (0-based).
    pub turn: u64,
}

/// Deserializes a present key (even when null) as `Some(value)`, so that `Option<Option<T>>`
/// tells "absent" (`None`, via `#[serde(default)]`) from "null" (`Some(None)`).
fn deserialize_present<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    T::deserialize(deserializer).map(Some)
}

/// `failure_class` of a failure record.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FailureClass {
    /// Building the prompt or streaming failed; no usable response.
    RequestError,
    /// A response arrived but §4.3 rejected it.
    StreamValidationFailed,
    /// The canary did not pass.
    RequestCanaryFailed,
    /// Strict policy and the controlled output did not pass.
    ControlledOutputFailed,
    /// The worker itself failed (reduced record shape).
    RunnerError,
}

impl FailureClass {
    /// The artifact's spelling (the serde name).
    pub fn as_str(self) -> &'static str {
        match self {
            FailureClass::RequestError => "request_error",
            FailureClass::StreamValidationFailed => "stream_validation_failed",
            FailureClass::RequestCanaryFailed => "request_canary_failed",
            FailureClass::ControlledOutputFailed => "controlled_output_failed",
            FailureClass::RunnerError => "runner_error",
        }
    }
}

/// `response_metadata` of a failure whose response arrived.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ResponseMetadata {
    /// `usage` or `content_chunks`.
    pub output_token_source: String,
    /// Content deltas seen.
    pub content_chunks: u64,
    /// Reasoning deltas seen.
    pub reasoning_chunks: u64,
    /// Finish reasons seen.
    pub finish_reasons: Vec<String>,
    /// `[DONE]` or a finish reason was seen.
    pub stream_terminal_observed: bool,
    /// The visible capture was cut.
    pub visible_content_truncated: bool,
    /// The non-null members among `prompt_tokens`, `completion_tokens`, `total_tokens` of usage.
    pub usage: BTreeMap<String, Value>,
}

/// One `failures[]` object. Optional keys are omitted exactly as §6.3 says; `Some(None)` in the
/// double options writes an explicit null.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FailureRecord {
    /// Request index i.
    pub request_index: u64,
    /// The clamped planned context (absent from `runner_error` records).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub planned_context_tokens: Option<u64>,
    /// The failure class.
    pub failure_class: FailureClass,
    /// Exception class name (`ValueError`, `HttpError`, `TypeError`, …).
    pub error_type: String,
    /// At most [`ERROR_MESSAGE_MAX_CHARS`](crate::core::observe::failure::ERROR_MESSAGE_MAX_CHARS) characters, never empty.
    pub error_message: String,
    /// The original message was longer than the limit.
    pub error_message_truncated: bool,
    /// A stream result existed (every class except `request_error` and `runner_error`).
    pub response_received: bool,
    /// Always false.
    pub performance_eligible: bool,
    /// Request start to failure, ms (absent from `runner_error` records).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elapsed_ms: Option<f64>,
    /// Present when a response arrived: the row, or null when no row is possible.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "deserialize_present"
    )]
    pub response_timing: Option<Option<RequestTiming>>,
    /// Present when a response arrived.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_metadata: Option<ResponseMetadata>,
    /// Present for canary and controlled-output failures (null when canaries were off).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "deserialize_present"
    )]
    pub request_canary: Option<Option<RequestCanary>>,
    /// Present for canary and controlled-output failures (null when `--response-words` was 0).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "deserialize_present"
    )]
    pub controlled_output: Option<Option<ControlledOutput>>,
    /// strobe addition (open-loop load): when this request was due, ms from the run's start.
    /// Omitted in closed-loop runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scheduled_ms: Option<f64>,
    /// strobe addition (open-loop load): how late the request was sent, ms: the clock reading
    /// that started it minus `scheduled_ms`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dispatch_lag_ms: Option<f64>,
    /// strobe addition (open-loop load): how much of that lag was spent waiting for a free slot
    /// because the cap on requests in flight was reached (0 when a slot was free).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cap_wait_ms: Option<f64>,
    /// strobe addition (workloads): where in the workload file the request came from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workload: Option<Box<RequestOrigin>>,
}
