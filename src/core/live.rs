//! What a run in progress shows, and what crosses between the thread that measures and the page
//! that renders: each finished request as the live view needs it ([`FinishedRequest`]), the
//! run's counters ([`LiveProgress`]), the running numbers computed from both ([`LiveTally`],
//! [`LiveSnapshot`]), and the messages between the page and the measurement worker
//! ([`ToMeasurement`], [`FromMeasurement`]) and the reading worker ([`ToReader`],
//! [`FromReader`]), which travel as JSON text. The page's side of the handshake with the
//! measurement worker is a state machine of its own ([`protocol`]).
//!
//! Pure: times come in from the caller as Unix epoch milliseconds, so the page and a worker,
//! whose `performance.now()` start at different moments, agree on them.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::core::config::choices::WorkloadTurns;
use crate::core::config::settings::RunConfig;
use crate::core::observe::accumulate::ReadStats;
use crate::core::observe::conclude::{CompletedRequest, RequestOutcome};
use crate::core::plan::workload::WorkloadRequests;
use crate::core::python::stats::nearest_rank;
use crate::core::read::opened::views::{FailureView, RowView};
use crate::core::schema::calibration::ContextCalibration;
use crate::core::schema::rows::{FailureRecord, OutputTokenSource, RequestTiming};
use crate::core::workload::read::Keep;
use crate::core::workload::{Session, Workload, WorkloadSummary};

pub mod checkpoint;
pub mod protocol;

/// A finished request, reduced to what the live numbers and charts read.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum FinishedRequest {
    /// A result: its output tokens, and its row (`None` when the clock gave an impossible order
    /// and the result has no row, see [`CompletedRequest`]).
    Completed {
        /// Output tokens of the result.
        out_toks: u64,
        /// Its timing row (boxed: a failure record is much smaller).
        row: Option<Box<RequestTiming>>,
        /// The rest of what the artifact counts of a result, so that the page can save the
        /// run so far as a checkpoint ([`checkpoint`]). Absent in messages of older workers.
        #[serde(default)]
        facts: Box<ResultFacts>,
    },
    /// A failure record (boxed like the row).
    Failed(Box<FailureRecord>),
}

/// What the artifact counts of a result beyond its row ([`CompletedRequest`]'s other fields),
/// carried to the page with it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ResultFacts {
    /// Request index i.
    pub request_index: u64,
    /// Where its output tokens were counted from.
    pub output_token_source: Option<OutputTokenSource>,
    /// Content deltas.
    pub content_chunks: u64,
    /// Reasoning deltas.
    pub reasoning_chunks: u64,
    /// `usage.prompt_tokens` when exact.
    pub prompt_tokens: Option<u64>,
    /// `usage.prompt_tokens_details.cached_tokens` when exact.
    pub cached_tokens: Option<u64>,
    /// The reference's `cached_fraction(usage)`.
    pub cached_fraction: Option<f64>,
    /// Network reads, events, events sharing a read and payloads skipped, in that order.
    pub reads: [u64; 4],
}

impl FinishedRequest {
    /// The outcome this finished request stands for, as the artifact counts it.
    pub fn outcome(&self) -> RequestOutcome {
        match self {
            Self::Completed {
                out_toks,
                row,
                facts,
            } => RequestOutcome::Completed(CompletedRequest {
                request_index: facts.request_index,
                row: row.as_deref().cloned(),
                out_toks: *out_toks,
                output_token_source: facts
                    .output_token_source
                    .unwrap_or(OutputTokenSource::ContentChunks),
                content_chunks: facts.content_chunks,
                reasoning_chunks: facts.reasoning_chunks,
                prompt_tokens: facts.prompt_tokens,
                cached_tokens: facts.cached_tokens,
                cached_fraction: facts.cached_fraction,
                read_stats: ReadStats {
                    reads: facts.reads[0],
                    events: facts.reads[1],
                    events_sharing_a_read: facts.reads[2],
                    ignored_payloads: facts.reads[3],
                },
            }),
            Self::Failed(failure) => RequestOutcome::Failed(FailureRecord::clone(failure)),
        }
    }
}

impl From<&RequestOutcome> for FinishedRequest {
    fn from(outcome: &RequestOutcome) -> Self {
        match outcome {
            RequestOutcome::Completed(done) => Self::Completed {
                out_toks: done.out_toks,
                row: done.row.clone().map(Box::new),
                facts: Box::new(ResultFacts {
                    request_index: done.request_index,
                    output_token_source: Some(done.output_token_source),
                    content_chunks: done.content_chunks,
                    reasoning_chunks: done.reasoning_chunks,
                    prompt_tokens: done.prompt_tokens,
                    cached_tokens: done.cached_tokens,
                    cached_fraction: done.cached_fraction,
                    reads: [
                        done.read_stats.reads,
                        done.read_stats.events,
                        done.read_stats.events_sharing_a_read,
                        done.read_stats.ignored_payloads,
                    ],
                }),
            },
            RequestOutcome::Failed(failure) => Self::Failed(Box::new(failure.clone())),
        }
    }
}

/// The run's counters at one moment, as the measuring thread knows them. Missing keys read as
/// the defaults, so a message written by hand (the worker's loader reports a failure to load
/// with `"progress": {}`) is understood.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct LiveProgress {
    /// Measured requests on the wire.
    pub in_flight: u64,
    /// The unmeasured warm-up is running.
    pub warming_up: bool,
    /// The user cancelled.
    pub cancelled: bool,
    /// When the measured run started (after the warm-up), Unix epoch ms; `None` before.
    pub run_started_unix_ms: Option<f64>,
    /// When the last request ended, Unix epoch ms; `None` while the run goes on.
    pub finished_unix_ms: Option<f64>,
    /// How an open-loop run is keeping its schedule; `None` in a closed loop.
    #[serde(default)]
    pub open_loop: Option<OpenLoopProgress>,
}

/// An open-loop run's sends so far: how many went out, how many late, how many the cap held.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct OpenLoopProgress {
    /// Requests on the schedule.
    pub scheduled: u64,
    /// Requests that went out.
    pub sent: u64,
    /// Sends more than [`LATE_SEND_MS`](crate::core::schema::load::LATE_SEND_MS) late.
    pub late: u64,
    /// Sends the cap on requests in flight held back.
    pub capped: u64,
}

impl LiveProgress {
    /// Milliseconds of measured run at `now_unix_ms` (frozen once the run ended; 0 during the
    /// warm-up and never negative, whatever two threads' clocks say).
    pub fn elapsed_ms(&self, now_unix_ms: f64) -> f64 {
        match self.run_started_unix_ms {
            Some(started) if !self.warming_up => {
                (self.finished_unix_ms.unwrap_or(now_unix_ms) - started).max(0.0)
            }
            _ => 0.0,
        }
    }
}

/// What the page shows while a run goes on.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LiveSnapshot {
    /// Requests planned.
    pub requests: u64,
    /// Requests that ended as results.
    pub completed: u64,
    /// Requests that ended as failures.
    pub failed: u64,
    /// Requests on the wire now.
    pub in_flight: u64,
    /// Milliseconds since the measured run started (frozen when it ends).
    pub elapsed_ms: f64,
    /// Running median time to first output, ms.
    pub p50_ttfo_ms: Option<f64>,
    /// Running median TTFT, ms.
    pub p50_ttft_ms: Option<f64>,
    /// Running median decode rate, tokens/s.
    pub p50_decode_tok_s: Option<f64>,
    /// Output tokens of results so far divided by elapsed time, tokens/s.
    pub throughput_tok_s: Option<f64>,
    /// The most recent failure's reason, if any.
    pub last_failure: Option<String>,
    /// Whether the user cancelled.
    pub cancelled: bool,
    /// The unmeasured warm-up is running (no measured request has started yet).
    pub warming_up: bool,
    /// How an open-loop run is keeping its schedule; `None` in a closed loop.
    pub open_loop: Option<OpenLoopProgress>,
}

/// The page's copy of a run in progress: every finished request so far, in the order they
/// ended, and the latest counters.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LiveTally {
    requests: u64,
    finished: Vec<FinishedRequest>,
    progress: LiveProgress,
}

impl LiveTally {
    /// An empty tally of a run of `requests` requests.
    pub fn new(requests: u64) -> Self {
        Self {
            requests,
            ..Self::default()
        }
    }

    /// Takes the requests that ended since the last update, and the counters now.
    pub fn update(&mut self, finished: Vec<FinishedRequest>, progress: LiveProgress) {
        self.finished.extend(finished);
        self.progress = progress;
    }

    /// Every request that has ended so far, in the order they ended.
    pub fn finished(&self) -> &[FinishedRequest] {
        &self.finished
    }

    /// How many requests have ended (what the measuring side has already sent).
    pub fn finished_count(&self) -> usize {
        self.finished.len()
    }

    /// The latest counters.
    pub fn progress(&self) -> LiveProgress {
        self.progress
    }

    /// The running numbers at `now_unix_ms`.
    pub fn snapshot(&self, now_unix_ms: f64) -> LiveSnapshot {
        let mut ttfo = Vec::new();
        let mut ttft = Vec::new();
        let mut decode = Vec::new();
        let mut output_tokens = 0u64;
        let mut completed = 0;
        let mut failed = 0;
        let mut last_failure = None;
        for finished in &self.finished {
            match finished {
                FinishedRequest::Completed { out_toks, row, .. } => {
                    completed += 1;
                    output_tokens = output_tokens.saturating_add(*out_toks);
                    if let Some(row) = row {
                        ttfo.push(row.time_to_first_output_ms);
                        ttft.push(row.ttft_ms);
                        decode.extend(row.decode_tok_s);
                    }
                }
                FinishedRequest::Failed(failure) => {
                    failed += 1;
                    last_failure = Some(format!(
                        "request {}: {}: {}",
                        failure.request_index, failure.error_type, failure.error_message
                    ));
                }
            }
        }
        let elapsed_ms = self.progress.elapsed_ms(now_unix_ms);
        let median = |values: &mut Vec<f64>| {
            values.sort_by(f64::total_cmp);
            nearest_rank(values, 50)
        };
        LiveSnapshot {
            requests: self.requests,
            completed,
            failed,
            in_flight: self.progress.in_flight,
            elapsed_ms,
            p50_ttfo_ms: median(&mut ttfo),
            p50_ttft_ms: median(&mut ttft),
            p50_decode_tok_s: median(&mut decode),
            throughput_tok_s: (elapsed_ms > 0.0 && completed > 0)
                .then(|| output_tokens as f64 / (elapsed_ms / 1000.0)),
            last_failure,
            cancelled: self.progress.cancelled,
            warming_up: self.progress.warming_up,
            open_loop: self.progress.open_loop,
        }
    }

    /// The finished requests as the charts read them: rows of results, and failures.
    pub fn views(&self) -> (Vec<RowView>, Vec<FailureView>) {
        let mut rows = Vec::new();
        let mut failures = Vec::new();
        for finished in &self.finished {
            match finished {
                FinishedRequest::Completed { row: Some(row), .. } => {
                    rows.push(RowView::from_timing(rows.len(), row));
                }
                FinishedRequest::Completed { row: None, .. } => {}
                FinishedRequest::Failed(failure) => {
                    failures.push(FailureView::from_record(failures.len(), failure));
                }
            }
        }
        (rows, failures)
    }
}

/// A message from the page to the measurement worker.
#[derive(Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ToMeasurement {
    /// Plan and run this configuration. The worker plans it again from the same inputs, so
    /// both sides hold the same plan.
    Start {
        /// The validated configuration.
        config: Box<RunConfig>,
        /// The context length the endpoint check discovered, if any.
        discovered_max_model_len: Option<u64>,
        /// The API key, sent as a header by the worker; never logged (see the `Debug` impl).
        api_key: Option<String>,
        /// What the page's context calibration measured, when the run calibrates.
        calibration: Option<ContextCalibration>,
        /// A workload file's planned requests, when the run sends one (its `Debug` shows
        /// only its size: the prompts are the user's).
        workload: Option<Box<WorkloadRequests>>,
    },
    /// Cancel the run: abort what is in flight, keep what finished.
    Cancel,
}

impl fmt::Debug for ToMeasurement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Start {
                config,
                discovered_max_model_len,
                api_key,
                calibration,
                workload,
            } => f
                .debug_struct("Start")
                .field("config", config)
                .field("discovered_max_model_len", discovered_max_model_len)
                .field("api_key", &api_key.as_ref().map(|_| "[redacted]"))
                .field("calibration", calibration)
                .field("workload", workload)
                .finish(),
            Self::Cancel => f.write_str("Cancel"),
        }
    }
}

/// A message from the measurement worker to the page.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum FromMeasurement {
    /// The worker's wasm is up and it listens for [`ToMeasurement::Start`].
    Ready,
    /// Requests that ended since the last message, and the counters now.
    Progress {
        /// The counters.
        progress: LiveProgress,
        /// Requests that ended since the last message.
        finished: Vec<FinishedRequest>,
    },
    /// The run ended and its artifact was built: the file's exact text.
    Finished {
        /// The counters at the end.
        progress: LiveProgress,
        /// Requests that ended since the last message.
        finished: Vec<FinishedRequest>,
        /// [`ArtifactV1::to_json_text`](crate::core::schema::ArtifactV1::to_json_text).
        artifact_text: String,
    },
    /// The run could not start, its warm-up failed, or its artifact could not be built.
    Failed {
        /// The counters at the end.
        progress: LiveProgress,
        /// Requests that ended since the last message.
        finished: Vec<FinishedRequest>,
        /// What went wrong and what to do.
        reason: String,
    },
}

/// What the page asks the reading worker: read the workload file posted beside this message
/// (or fetch `url`, with CORS) with `options`. The worker reads one file and is then ended.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToReader {
    /// The name to record and show.
    pub name: String,
    /// The address to fetch, when no file is posted beside the message.
    pub url: Option<String>,
    /// How many requests a session gives (`workload_turns`).
    pub turns: WorkloadTurns,
    /// Which usable sessions to keep.
    pub keep: Keep,
}

/// About how many bytes of sessions one [`FromReader::Sessions`] message carries.
pub const SESSIONS_MESSAGE_BYTES: usize = 256 * 1024;

/// The messages that hand `workload` from the reading worker to the page: its sessions in
/// messages of about [`SESSIONS_MESSAGE_BYTES`] (one session larger than that goes alone),
/// then [`FromReader::Read`]. Each is JSON text.
pub fn workload_messages(workload: Workload) -> Result<Vec<String>, String> {
    let mut messages = Vec::new();
    let mut batch: Vec<String> = Vec::new();
    let mut batch_bytes = 0;
    let flush = |batch: &mut Vec<String>, messages: &mut Vec<String>| {
        if !batch.is_empty() {
            messages.push(format!(
                "{{\"kind\":\"sessions\",\"sessions\":[{}]}}",
                batch.join(",")
            ));
            batch.clear();
        }
    };
    for session in &workload.sessions {
        let text = encode_message(session)?;
        if batch_bytes + text.len() > SESSIONS_MESSAGE_BYTES {
            flush(&mut batch, &mut messages);
            batch_bytes = 0;
        }
        batch_bytes += text.len();
        batch.push(text);
    }
    flush(&mut batch, &mut messages);
    messages.push(encode_message(&FromReader::Read {
        summary: workload.summary,
        positions: workload.positions,
    })?);
    Ok(messages)
}

/// Gathers the messages of [`workload_messages`] back into the workload, on the page.
#[derive(Debug, Default)]
pub struct WorkloadGathering {
    sessions: Vec<Session>,
}

impl WorkloadGathering {
    /// Adds the sessions of one `Sessions` message.
    pub fn add(&mut self, sessions: Vec<Session>) {
        self.sessions.extend(sessions);
    }

    /// The workload, once `Read` has come with its summary and positions.
    pub fn finish(self, summary: WorkloadSummary, positions: Vec<u64>) -> Workload {
        Workload {
            summary,
            sessions: self.sessions,
            positions,
        }
    }
}

/// What the reading worker tells the page.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum FromReader {
    /// It has loaded strobe's code and waits for the file.
    Ready,
    /// Bytes read so far, of `total` when known.
    Progress {
        /// Bytes read.
        read: u64,
        /// The file's size, when the browser says it.
        total: Option<u64>,
    },
    /// Some of the sessions kept, in file order: the page gathers them (in messages of about
    /// [`SESSIONS_MESSAGE_BYTES`], so that none takes the page's thread long to decode).
    Sessions {
        /// The sessions.
        sessions: Vec<Session>,
    },
    /// The file is read: what it is, and the kept sessions' positions (empty when all are
    /// kept); the sessions came before, in `Sessions` messages.
    Read {
        /// What reading found.
        summary: WorkloadSummary,
        /// See [`Workload::positions`].
        positions: Vec<u64>,
    },
    /// The file cannot be used: why, and what to do.
    Refused {
        /// The reason in words.
        reason: String,
    },
}

/// Encodes a message for `postMessage`.
pub fn encode_message<T: Serialize>(message: &T) -> Result<String, String> {
    serde_json::to_string(message).map_err(|error| format!("could not encode a message: {error}"))
}

/// Decodes a message received by `postMessage`; a message of another shape is an error value.
pub fn decode_message<T: for<'de> Deserialize<'de>>(text: &str) -> Result<T, String> {
    serde_json::from_str(text).map_err(|error| {
        format!("a message between the page and the measurement worker was not understood: {error}")
    })
}

/// The finished requests of the run in progress, as the page's live charts read them.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LiveRows {
    /// Successful requests.
    pub rows: Vec<RowView>,
    /// Failed requests.
    pub failures: Vec<FailureView>,
}

impl From<(Vec<RowView>, Vec<FailureView>)> for LiveRows {
    fn from((rows, failures): (Vec<RowView>, Vec<FailureView>)) -> Self {
        Self { rows, failures }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::observe::failure::RequestError;

    fn row(index: u64, ttfo_ms: f64, ttft_ms: f64, decode: Option<f64>) -> Box<RequestTiming> {
        let text = format!(
            r#"{{"request_index": {index}, "planned_context_tokens": 1024, "prompt_tokens": 1000,
            "output_tokens": 10, "output_token_source": "usage", "time_to_first_output_ms": {ttfo_ms},
            "ttft_ms": {ttft_ms}, "generation_ms": 60.0, "visible_generation_ms": 60.0, "e2e_ms": 100.0,
            "effective_prefill_tok_s": 25000.0, "decode_tok_s": {decode},
            "mean_inter_token_latency_ms": 6.0, "mean_time_per_output_token_ms": 6.0, "tpot_ms": 6.0,
            "reasoning_chunks": 0, "content_chunks": 10, "visible_content_truncated": false}}"#,
            decode = decode.map_or("null".to_owned(), |rate| format!("{rate:?}")),
        );
        Box::new(serde_json::from_str(&text).expect("a valid row"))
    }

    fn failure(index: u64) -> Box<FailureRecord> {
        Box::new(FailureRecord::request_error(
            index,
            1024,
            &RequestError::new("HttpError", "HTTP 500: overloaded"),
            12.5,
        ))
    }

    #[test]
    fn the_snapshot_counts_and_takes_medians_of_what_finished() {
        let mut tally = LiveTally::new(10);
        let started = 1_700_000_000_000.0;
        tally.update(
            vec![
                FinishedRequest::Completed {
                    out_toks: 10,
                    row: Some(row(0, 30.0, 40.0, Some(100.0))),
                    facts: Box::default(),
                },
                FinishedRequest::Failed(failure(1)),
                FinishedRequest::Completed {
                    out_toks: 20,
                    row: Some(row(2, 10.0, 20.0, None)),
                    facts: Box::default(),
                },
                FinishedRequest::Completed {
                    out_toks: 30,
                    row: Some(row(3, 20.0, 50.0, Some(300.0))),
                    facts: Box::default(),
                },
            ],
            LiveProgress {
                in_flight: 4,
                run_started_unix_ms: Some(started),
                ..LiveProgress::default()
            },
        );
        let snapshot = tally.snapshot(started + 2_000.0);
        assert_eq!(
            (
                snapshot.requests,
                snapshot.completed,
                snapshot.failed,
                snapshot.in_flight
            ),
            (10, 3, 1, 4)
        );
        assert_eq!(snapshot.elapsed_ms, 2_000.0);
        assert_eq!(snapshot.p50_ttfo_ms, Some(20.0));
        assert_eq!(snapshot.p50_ttft_ms, Some(40.0));
        // Nearest rank of two values: the lower one.
        assert_eq!(snapshot.p50_decode_tok_s, Some(100.0));
        assert_eq!(snapshot.throughput_tok_s, Some(30.0));
        assert_eq!(
            snapshot.last_failure.as_deref(),
            Some("request 1: HttpError: HTTP 500: overloaded")
        );
        let (rows, failures) = tally.views();
        assert_eq!(rows.len(), 3);
        assert_eq!(rows[2].request_index, Some(3));
        assert_eq!(failures.len(), 1);
        assert_eq!(tally.finished_count(), 4);
    }

    #[test]
    fn elapsed_time_is_zero_in_the_warmup_frozen_at_the_end_and_never_negative() {
        let during_warmup = LiveProgress {
            warming_up: true,
            run_started_unix_ms: Some(1_000.0),
            ..LiveProgress::default()
        };
        assert_eq!(during_warmup.elapsed_ms(5_000.0), 0.0);
        let ended = LiveProgress {
            run_started_unix_ms: Some(1_000.0),
            finished_unix_ms: Some(3_500.0),
            ..LiveProgress::default()
        };
        assert_eq!(ended.elapsed_ms(9_000.0), 2_500.0);
        let running = LiveProgress {
            run_started_unix_ms: Some(1_000.0),
            ..LiveProgress::default()
        };
        // Another thread's clock may read a hair earlier than the start it was told.
        assert_eq!(running.elapsed_ms(999.9), 0.0);
        assert_eq!(LiveProgress::default().elapsed_ms(5_000.0), 0.0);
    }

    #[test]
    fn messages_survive_the_trip_as_text_and_strangers_are_errors() {
        let start = ToMeasurement::Start {
            config: Box::new(RunConfig {
                base_url: "http://127.0.0.1:8011/v1".into(),
                model: "m".into(),
                ..RunConfig::default()
            }),
            discovered_max_model_len: Some(32_768),
            api_key: Some("sk-secret".into()),
            calibration: Some(ContextCalibration {
                estimated_chars_per_token: 3,
                chars_per_token: 1.5,
                overhead_tokens: 10.0,
                probes: Vec::new(),
            }),
            workload: None,
        };
        let text = encode_message(&start).expect("encodes");
        assert_eq!(decode_message::<ToMeasurement>(&text), Ok(start.clone()));
        assert!(!format!("{start:?}").contains("sk-secret"));

        let progress = FromMeasurement::Progress {
            progress: LiveProgress {
                in_flight: 2,
                run_started_unix_ms: Some(1.5),
                ..LiveProgress::default()
            },
            finished: vec![
                FinishedRequest::Completed {
                    out_toks: 10,
                    row: Some(row(0, 30.0, 40.0, Some(100.0))),
                    facts: Box::default(),
                },
                FinishedRequest::Failed(failure(1)),
            ],
        };
        let text = encode_message(&progress).expect("encodes");
        assert_eq!(decode_message::<FromMeasurement>(&text), Ok(progress));
        assert_eq!(
            decode_message::<FromMeasurement>(r#"{"kind":"ready"}"#),
            Ok(FromMeasurement::Ready)
        );
        // What the worker's loader posts when strobe's code cannot load.
        assert_eq!(
            decode_message::<FromMeasurement>(
                r#"{"kind":"failed","progress":{},"finished":[],"reason":"no wasm"}"#
            ),
            Ok(FromMeasurement::Failed {
                progress: LiveProgress::default(),
                finished: Vec::new(),
                reason: "no wasm".to_owned()
            })
        );
        let stranger = decode_message::<FromMeasurement>(r#"{"kind":"<img src=x>"}"#);
        assert!(stranger.is_err_and(|error| error.contains("not understood")));
    }

    #[test]
    fn a_workload_crosses_in_small_messages_and_is_whole_again() {
        use crate::core::workload::read::{read, Keep, ReadOptions};
        // 3,000 prompts of 300 characters: several messages, none much over the size.
        let text: String = (0..3_000)
            .map(|i| format!("prompt {i} {}\n", "x".repeat(300)))
            .collect();
        let options = ReadOptions {
            keep: Keep::These(vec![1, 5, 2_999]),
            ..ReadOptions::default()
        };
        for options in [ReadOptions::default(), options] {
            let workload = read(text.as_bytes(), Some("w.txt"), &options).unwrap();
            let messages = workload_messages(workload.clone()).unwrap();
            let mut gathering = WorkloadGathering::default();
            let mut whole = None;
            for text in &messages {
                assert!(
                    text.len() < SESSIONS_MESSAGE_BYTES + 1_024,
                    "{}",
                    text.len()
                );
                match decode_message::<FromReader>(text).unwrap() {
                    FromReader::Sessions { sessions } => gathering.add(sessions),
                    FromReader::Read { summary, positions } => {
                        whole = Some(std::mem::take(&mut gathering).finish(summary, positions));
                    }
                    other => panic!("{other:?}"),
                }
            }
            assert_eq!(whole, Some(workload.clone()));
            let expected = if workload.sessions.len() == 3 { 2 } else { 5 };
            assert!(messages.len() >= expected, "{}", messages.len());
        }
    }
}
