//! The truth log: what really happened to every chat and completions request, on the server's
//! own clock, and (when asked) what the client sent.
//!
//! Each finished request (served, rejected or cut off) becomes one [`TruthRecord`] with a
//! sequence number that only grows, even across a reset. Records are kept in memory (bounded)
//! for `GET /sim/truth?since=<seq>` and optionally appended to a JSON-lines file by a writer
//! thread, so file IO never blocks the server.
//!
//! Each `GET /metrics` and `POST /reset_prefix_cache` becomes a [`ScrapeRecord`] of its own
//! (what the server answered, read at the moment it answered), numbered apart from the
//! requests' records and kept in memory only, listed in the same page under `scrapes`.
//!
//! Times are [`Stamp`]s read from one monotonic clock and expressed two ways: milliseconds since
//! server start, and Unix-epoch nanoseconds computed as the wall-clock reading taken once at
//! start plus the monotonic elapsed time (so they never jump with the system clock).

use std::collections::{BTreeMap, VecDeque};
use std::fs::OpenOptions;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::{mpsc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use crate::faults::FaultSet;
use crate::metrics::MetricsSnapshot;
use crate::wire::Usage;

/// The server's clock: a monotonic start instant and the wall-clock time at that instant.
#[derive(Debug, Clone, Copy)]
pub struct SimClock {
    start: Instant,
    start_unix_ns: u64,
}

impl SimClock {
    /// A clock starting now.
    pub fn start() -> Self {
        let start_unix_ns = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|elapsed| u64::try_from(elapsed.as_nanos()).unwrap_or(u64::MAX))
            .unwrap_or(0);
        Self {
            start: Instant::now(),
            start_unix_ns,
        }
    }

    /// The monotonic instant the clock started at.
    pub fn start_instant(&self) -> Instant {
        self.start
    }

    /// Unix-epoch nanoseconds at start.
    pub fn start_unix_ns(&self) -> u64 {
        self.start_unix_ns
    }

    /// The current time.
    pub fn now(&self) -> Stamp {
        self.stamp_at(Instant::now())
    }

    /// `instant` as a stamp on this clock (instants before start count as start).
    pub fn stamp_at(&self, instant: Instant) -> Stamp {
        let elapsed = instant.saturating_duration_since(self.start);
        let elapsed_ns = u64::try_from(elapsed.as_nanos()).unwrap_or(u64::MAX);
        Stamp {
            unix_ns: self.start_unix_ns.saturating_add(elapsed_ns),
            monotonic_ms: elapsed.as_secs_f64() * 1000.0,
        }
    }

    /// The instant `monotonic_ms` after start.
    pub fn instant_at(&self, monotonic_ms: f64) -> Instant {
        let offset = std::time::Duration::from_secs_f64(monotonic_ms.max(0.0) / 1000.0);
        self.start + offset
    }
}

/// One moment on the server's clock.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Stamp {
    /// Unix-epoch nanoseconds: start wall time plus monotonic elapsed time.
    pub unix_ns: u64,
    /// Milliseconds since the server started, on the monotonic clock.
    pub monotonic_ms: f64,
}

/// The moments of one request. A moment that did not happen is `null`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TruthTimes {
    /// The whole request (head and body) had been read.
    pub received: Option<Stamp>,
    /// The response head had been written (for streams, before admission).
    pub headers_sent: Option<Stamp>,
    /// The request left the admission queue and became an active sequence.
    pub admitted: Option<Stamp>,
    /// Its prefill began on the prefill lane (as scheduled).
    pub prefill_started: Option<Stamp>,
    /// Its prefill ended and the first token was ready (as scheduled).
    pub prefill_finished: Option<Stamp>,
    /// The write of the event carrying the first reasoning byte had returned.
    pub first_reasoning_byte_sent: Option<Stamp>,
    /// The write of the event carrying the first content byte had returned.
    pub first_content_byte_sent: Option<Stamp>,
    /// The last write of the response had returned (or the connection was cut).
    pub last_byte_sent: Option<Stamp>,
    /// The last write of a streamed response was about to begin: the earliest the client can
    /// have had the last byte. Unlike `last_byte_sent`, a server descheduled between its write
    /// and its clock reading cannot make it late, so it orders the end of one response against
    /// what the client did next. `null` when no body write was attempted (a response that was
    /// not streamed, a stream abandoned before its first event) or the server shut down
    /// mid-stream; set even when that write then failed.
    pub last_write_started: Option<Stamp>,
}

/// How a request ended, from the server's side.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The full response was written.
    Completed,
    /// An error response was sent (4xx, or a 5xx/429 fault).
    Rejected,
    /// A write failed: the client went away.
    ClientDisconnected,
    /// The `reset` fault cut the connection.
    Reset,
    /// The `hang` fault stopped the stream; the connection closed later.
    Hung,
    /// The server shut down before the response finished.
    ServerShutdown,
}

/// The endpoint a request came in on.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Api {
    /// `POST /v1/chat/completions`.
    #[default]
    Chat,
    /// `POST /v1/completions`.
    Completions,
}

/// A JSON value exactly as the client sent it: its bytes are kept, not re-encoded, so a test
/// can compare them with what it meant to send.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ReceivedJson(Box<RawValue>);

impl ReceivedJson {
    /// Keeps `raw` as it is.
    pub fn new(raw: Box<RawValue>) -> Self {
        Self(raw)
    }

    /// The JSON text, byte for byte as received.
    pub fn get(&self) -> &str {
        self.0.get()
    }
}

impl PartialEq for ReceivedJson {
    fn eq(&self, other: &Self) -> bool {
        self.get() == other.get()
    }
}

/// Everything the server knows about one chat or completions request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TruthRecord {
    /// Position in the log; increases by one per record and never repeats, even after a reset.
    pub seq: u64,
    /// The id sent in the `x-sim-request-id` header.
    pub request_id: String,
    /// The local port the request came in on.
    pub port: u16,
    /// The endpoint it came in on.
    #[serde(default)]
    pub api: Api,
    /// The values of the client's `x-session-id`, `x-correlation-id` and `x-request-id` headers
    /// and of those named by `--truth-headers`, by lowercase name, when present.
    #[serde(default)]
    pub client_headers: BTreeMap<String, String>,
    /// With `--truth-prompts` only: the request's `messages` (chat) or `prompt` (completions)
    /// exactly as received, even when it was rejected. Absent without the flag, or when the body
    /// was no JSON object or lacked the member.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub received: Option<ReceivedJson>,
    /// The model id the client asked for.
    pub model: Option<String>,
    /// Whether it was a streaming request.
    pub stream: bool,
    /// HTTP status sent (0 if nothing was sent).
    pub status: u16,
    /// How it ended.
    pub outcome: Outcome,
    /// The error message sent, or why the stream ended early.
    pub error: Option<String>,
    /// Faults applied.
    pub faults: FaultSet,
    /// The canary marker the prompt asked for.
    pub marker: Option<String>,
    /// The marker the answer actually began with.
    pub emitted_marker: Option<String>,
    /// Word repetitions the prompt asked for.
    pub requested_words: Option<u32>,
    /// The request's `max_tokens` (or `max_completion_tokens`).
    pub max_tokens: Option<u32>,
    /// Whether the model was thinking (reasoning tokens planned).
    pub thinking: bool,
    /// Characters of the prompt text: all message contents joined by `\n` (chat), or the
    /// `prompt` string (completions).
    pub prompt_chars: usize,
    /// Estimated prompt tokens.
    pub prompt_tokens: u32,
    /// Prompt tokens served from the prefix cache (the prefix-cache hit, in tokens).
    pub cached_tokens: u32,
    /// Requests waiting ahead of this one when it arrived (0 if admitted at once).
    pub queued_behind: usize,
    /// Active sequences just after it was admitted, itself included.
    pub active_at_admission: usize,
    /// Reasoning tokens actually sent.
    pub reasoning_tokens_sent: u32,
    /// Content tokens actually sent.
    pub content_tokens_sent: u32,
    /// The finish reason sent, if the finish chunk went out.
    pub finish_reason: Option<String>,
    /// The usage reported (in a usage chunk or the completion body), if it went out.
    pub usage: Option<Usage>,
    /// Whether `data: [DONE]` went out.
    pub done_sent: bool,
    /// The content text sent, up to 8192 characters (the benchmark's capture limit).
    pub content: String,
    /// Characters of content sent in total.
    pub content_chars: usize,
    /// Socket writes of the response body (after the head).
    pub writes: u32,
    /// Writes that ended inside a multibyte UTF-8 character.
    pub utf8_split_writes: u32,
    /// Events sent with deliberately broken JSON.
    pub malformed_events: u32,
    /// `: keep-alive` comments sent.
    pub keep_alive_comments: u32,
    /// When things happened.
    pub times: TruthTimes,
}

impl TruthRecord {
    /// The record of a request just received on `port`, with nothing sent yet. Its outcome says
    /// `server_shutdown` until the handler records how it really ended.
    pub fn received(request_id: String, port: u16, received: Stamp) -> Self {
        Self {
            seq: 0,
            request_id,
            port,
            api: Api::Chat,
            client_headers: BTreeMap::new(),
            received: None,
            model: None,
            stream: false,
            status: 0,
            outcome: Outcome::ServerShutdown,
            error: None,
            faults: FaultSet::default(),
            marker: None,
            emitted_marker: None,
            requested_words: None,
            max_tokens: None,
            thinking: false,
            prompt_chars: 0,
            prompt_tokens: 0,
            cached_tokens: 0,
            queued_behind: 0,
            active_at_admission: 0,
            reasoning_tokens_sent: 0,
            content_tokens_sent: 0,
            finish_reason: None,
            usage: None,
            done_sent: false,
            content: String::new(),
            content_chars: 0,
            writes: 0,
            utf8_split_writes: 0,
            malformed_events: 0,
            keep_alive_comments: 0,
            times: TruthTimes {
                received: Some(received),
                ..TruthTimes::default()
            },
        }
    }
}

/// The server-side endpoint a [`ScrapeRecord`] is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ScrapeEndpoint {
    /// `GET /metrics`.
    Metrics,
    /// `POST /reset_prefix_cache`.
    ResetPrefixCache,
    /// `GET` or `POST /flush_cache` (SGLang's route).
    FlushCache,
}

/// One `GET /metrics` or `POST /reset_prefix_cache`, and what the server answered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScrapeRecord {
    /// Position among the scrape records; grows by one, never repeats, even after a reset.
    pub seq: u64,
    /// The local port it came in on.
    pub port: u16,
    /// Which endpoint.
    pub endpoint: ScrapeEndpoint,
    /// When the request had been read, on the server's clock.
    pub received: Stamp,
    /// The HTTP status answered.
    pub status: u16,
    /// For `/metrics`: the state the answer reported, read once for the whole answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metrics: Option<MetricsSnapshot>,
    /// For `/reset_prefix_cache` and an accepted `/flush_cache`: the prefix-cache blocks it
    /// dropped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cleared_blocks: Option<usize>,
}

/// How many characters of content a record keeps.
pub const CONTENT_CAPTURE_CHARS: usize = 8192;

/// The body of `GET /sim/truth`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TruthPage {
    /// What the two numbers in every stamp mean.
    pub clocks: ClockDescription,
    /// Unix-epoch nanoseconds at server start.
    pub server_started_unix_ns: u64,
    /// The `since` asked for.
    pub since: u64,
    /// The highest seq issued so far (pass it as `since` next time).
    pub last_seq: u64,
    /// Records with seq greater than `since`, oldest first.
    pub records: Vec<TruthRecord>,
    /// The `scrapes_since` asked for.
    #[serde(default)]
    pub scrapes_since: u64,
    /// The highest scrape seq issued so far.
    #[serde(default)]
    pub last_scrape_seq: u64,
    /// Scrape records with seq greater than `scrapes_since`, oldest first.
    #[serde(default)]
    pub scrapes: Vec<ScrapeRecord>,
}

/// Text describing the clocks behind [`Stamp`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClockDescription {
    /// Meaning of `unix_ns`.
    pub unix_ns: String,
    /// Meaning of `monotonic_ms`.
    pub monotonic_ms: String,
}

impl ClockDescription {
    fn current() -> Self {
        Self {
            unix_ns: "Unix-epoch nanoseconds: the wall clock read once at server start plus the monotonic time elapsed since".into(),
            monotonic_ms: "milliseconds since server start on the server's monotonic clock".into(),
        }
    }
}

struct LogState {
    records: VecDeque<TruthRecord>,
    last_seq: u64,
    scrapes: VecDeque<ScrapeRecord>,
    last_scrape_seq: u64,
}

/// The in-memory truth log, with an optional JSON-lines file.
pub struct TruthLog {
    clock: SimClock,
    capacity: usize,
    state: Mutex<LogState>,
    jsonl: Mutex<Option<JsonlWriter>>,
}

struct JsonlWriter {
    lines: mpsc::Sender<String>,
    thread: JoinHandle<()>,
}

/// The truth file could not be opened.
#[derive(Debug, thiserror::Error)]
#[error(
    "cannot open the truth file {path} for appending ({source}); pass a writable path to --jsonl"
)]
pub struct JsonlOpenError {
    /// The path given.
    pub path: PathBuf,
    /// The IO error.
    #[source]
    pub source: std::io::Error,
}

impl TruthLog {
    /// A log keeping at most `capacity` records in memory (oldest dropped first), appending every
    /// record to `jsonl` when given.
    pub fn new(
        clock: SimClock,
        capacity: usize,
        jsonl: Option<&Path>,
    ) -> Result<Self, JsonlOpenError> {
        let writer = jsonl.map(open_jsonl).transpose()?;
        Ok(Self {
            clock,
            capacity: capacity.max(1),
            state: Mutex::new(LogState {
                records: VecDeque::new(),
                last_seq: 0,
                scrapes: VecDeque::new(),
                last_scrape_seq: 0,
            }),
            jsonl: Mutex::new(writer),
        })
    }

    /// The clock all records are stamped with.
    pub fn clock(&self) -> &SimClock {
        &self.clock
    }

    fn state(&self) -> MutexGuard<'_, LogState> {
        // A panic while holding the lock cannot leave the log half-updated, so keep using it.
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Appends `record`, giving it the next seq, and returns that seq.
    pub fn push(&self, mut record: TruthRecord) -> u64 {
        let seq = {
            let mut state = self.state();
            state.last_seq += 1;
            record.seq = state.last_seq;
            if state.records.len() == self.capacity {
                state.records.pop_front();
            }
            state.records.push_back(record.clone());
            state.last_seq
        };
        let jsonl = self
            .jsonl
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if let (Some(writer), Ok(line)) = (jsonl.as_ref(), serde_json::to_string(&record)) {
            // If the writer thread died its error was already reported; the memory log goes on.
            let _ = writer.lines.send(line);
        }
        seq
    }

    /// Appends a scrape's record, giving it the next scrape seq, and returns that seq. Kept in
    /// memory only (as many as requests' records), so the truth file stays one record type.
    pub fn push_scrape(&self, mut record: ScrapeRecord) -> u64 {
        let mut state = self.state();
        state.last_scrape_seq += 1;
        record.seq = state.last_scrape_seq;
        if state.scrapes.len() == self.capacity {
            state.scrapes.pop_front();
        }
        state.scrapes.push_back(record);
        state.last_scrape_seq
    }

    /// Scrape records with seq greater than `since`, oldest first.
    pub fn scrapes_since(&self, since: u64) -> Vec<ScrapeRecord> {
        self.state()
            .scrapes
            .iter()
            .filter(|record| record.seq > since)
            .cloned()
            .collect()
    }

    /// Records with seq greater than `since`, oldest first.
    pub fn since(&self, since: u64) -> Vec<TruthRecord> {
        self.state()
            .records
            .iter()
            .filter(|record| record.seq > since)
            .cloned()
            .collect()
    }

    /// The page `GET /sim/truth?since=<since>&scrapes_since=<scrapes_since>` returns.
    pub fn page(&self, since: u64, scrapes_since: u64) -> TruthPage {
        let state = self.state();
        TruthPage {
            clocks: ClockDescription::current(),
            server_started_unix_ns: self.clock.start_unix_ns(),
            since,
            last_seq: state.last_seq,
            records: state
                .records
                .iter()
                .filter(|record| record.seq > since)
                .cloned()
                .collect(),
            scrapes_since,
            last_scrape_seq: state.last_scrape_seq,
            scrapes: state
                .scrapes
                .iter()
                .filter(|record| record.seq > scrapes_since)
                .cloned()
                .collect(),
        }
    }

    /// The highest seq issued so far.
    pub fn last_seq(&self) -> u64 {
        self.state().last_seq
    }

    /// Forgets all records in memory, scrapes included (the file keeps the requests'); returns
    /// how many requests' records were dropped.
    pub fn reset(&self) -> usize {
        let mut state = self.state();
        let dropped = state.records.len();
        state.records.clear();
        state.scrapes.clear();
        dropped
    }

    /// Flushes and closes the JSON-lines file, waiting for every record sent so far.
    pub fn close_file(&self) {
        let writer = self
            .jsonl
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .take();
        if let Some(JsonlWriter { lines, thread }) = writer {
            drop(lines);
            // The thread only ends by draining the channel; a panic there has nothing to return.
            let _ = thread.join();
        }
    }
}

impl Drop for TruthLog {
    fn drop(&mut self) {
        self.close_file();
    }
}

fn open_jsonl(path: &Path) -> Result<JsonlWriter, JsonlOpenError> {
    let file = OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(|source| JsonlOpenError {
            path: path.to_path_buf(),
            source,
        })?;
    let (lines, receiver) = mpsc::channel::<String>();
    let shown_path = path.display().to_string();
    let thread = std::thread::spawn(move || {
        let mut output = BufWriter::new(file);
        for line in receiver {
            let written = writeln!(output, "{line}").and_then(|()| output.flush());
            if let Err(error) = written {
                eprintln!("strobe-sim: writing the truth file {shown_path} failed ({error}); later records stay in memory only");
                return;
            }
        }
    });
    Ok(JsonlWriter { lines, thread })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(request_id: &str) -> TruthRecord {
        let stamp = Stamp {
            unix_ns: 0,
            monotonic_ms: 0.0,
        };
        TruthRecord::received(request_id.into(), 1, stamp)
    }

    #[test]
    fn seqs_grow_across_resets_and_since_filters() {
        let log = TruthLog::new(SimClock::start(), 10, None).expect("no file to open");
        assert_eq!(log.push(record("a")), 1);
        assert_eq!(log.push(record("b")), 2);
        let after_first: Vec<String> = log.since(1).into_iter().map(|r| r.request_id).collect();
        assert_eq!(after_first, vec!["b".to_string()]);
        assert_eq!(log.reset(), 2);
        assert!(log.since(0).is_empty());
        assert_eq!(log.push(record("c")), 3);
        let page = log.page(0, 0);
        assert_eq!((page.last_seq, page.records.len()), (3, 1));
    }

    #[test]
    fn scrapes_have_their_own_seqs_bound_and_reset() {
        let log = TruthLog::new(SimClock::start(), 2, None).expect("no file to open");
        let scrape = |endpoint| ScrapeRecord {
            seq: 0,
            port: 1,
            endpoint,
            received: Stamp {
                unix_ns: 0,
                monotonic_ms: 0.0,
            },
            status: 200,
            metrics: None,
            cleared_blocks: None,
        };
        log.push(record("a"));
        assert_eq!(log.push_scrape(scrape(ScrapeEndpoint::Metrics)), 1);
        assert_eq!(log.push_scrape(scrape(ScrapeEndpoint::ResetPrefixCache)), 2);
        assert_eq!(log.push_scrape(scrape(ScrapeEndpoint::Metrics)), 3);
        let kept: Vec<u64> = log.scrapes_since(0).into_iter().map(|r| r.seq).collect();
        assert_eq!(kept, vec![2, 3], "bounded like the records");
        let page = log.page(0, 2);
        assert_eq!((page.last_seq, page.last_scrape_seq), (1, 3));
        assert_eq!(page.scrapes.len(), 1);
        log.reset();
        assert!(log.scrapes_since(0).is_empty());
        assert_eq!(log.push_scrape(scrape(ScrapeEndpoint::Metrics)), 4);
    }

    #[test]
    fn memory_is_bounded_by_dropping_the_oldest() {
        let log = TruthLog::new(SimClock::start(), 2, None).expect("no file to open");
        for id in ["a", "b", "c"] {
            log.push(record(id));
        }
        let kept: Vec<u64> = log.since(0).into_iter().map(|r| r.seq).collect();
        assert_eq!(kept, vec![2, 3]);
    }

    #[test]
    fn the_jsonl_file_gets_one_record_per_line() {
        let path =
            std::env::temp_dir().join(format!("strobe-sim-truth-{}.jsonl", std::process::id()));
        let _ = std::fs::remove_file(&path);
        let log = TruthLog::new(SimClock::start(), 10, Some(&path)).expect("temp dir is writable");
        log.push(record("a"));
        log.push(record("b"));
        log.close_file();
        let text = std::fs::read_to_string(&path).expect("the file was written");
        let parsed: Vec<TruthRecord> = text
            .lines()
            .map(|line| serde_json::from_str(line).expect("each line is a record"))
            .collect();
        assert_eq!(parsed, log.since(0));
        let _ = std::fs::remove_file(&path);
    }

    #[test]
    fn stamps_agree_between_the_two_clocks() {
        let clock = SimClock::start();
        let later = clock.start_instant() + std::time::Duration::from_millis(1500);
        let stamp = clock.stamp_at(later);
        assert_eq!(stamp.monotonic_ms, 1500.0);
        assert_eq!(stamp.unix_ns - clock.start_unix_ns(), 1_500_000_000);
        assert_eq!(clock.instant_at(1500.0), later);
    }
}
