//! One Locust worker's records file, as `cli/locust/locustfile.py` writes it
//! (docs/operate/locust.md, *Records*): a header line naming the worker and its clocks, then one
//! line per request with its send time, every read's arrival time and bytes, and its end. Every
//! line is checked before anything is computed from it; a broken one names its file, line and
//! field.

use base64::Engine;
use serde::Deserialize;
use serde_json::Value;

use crate::core::read::opened::locust::LocustError;

/// The header's `kind`.
pub const WORKER_KIND: &str = "strobe-locust-worker";

/// The worker's clocks against the master's, from its best ping.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
pub struct ClockSync {
    /// The master's `time.time_ns()` minus the worker's, estimated at the ping's midpoint.
    pub offset_to_master_ns: i64,
    /// That ping's round trip.
    pub round_trip_ns: i64,
    /// Pings sent (the best one is kept).
    pub pings: u64,
}

/// The first line of a records file.
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct WorkerHeader {
    /// Always [`WORKER_KIND`].
    pub kind: String,
    /// The plan's `link`: the page settings the plan was made from.
    pub plan_link: String,
    /// The strobe version that wrote the plan.
    #[serde(default)]
    pub plan_strobe_version: Option<String>,
    /// Locust's worker index (0 when run without a master).
    pub worker: u64,
    /// How many worker processes shared the plan.
    pub workers: u64,
    /// `socket.gethostname()`.
    pub host: String,
    /// The worker's process id.
    pub pid: u64,
    /// `time.perf_counter_ns()` when the worker started its share.
    pub started_ns: i64,
    /// `time.time_ns()` read right after it.
    pub started_wall_ns: i64,
    /// Requests of the plan this worker took.
    pub requests: u64,
    /// `locust.__version__`.
    #[serde(default)]
    pub locust_version: Option<String>,
    /// `platform.python_version()`.
    #[serde(default)]
    pub python_version: Option<String>,
    /// The clock offset to the master; `None` for a process without a master.
    #[serde(default)]
    pub clock: Option<ClockSync>,
    /// `time.get_clock_info("perf_counter").resolution`, in ns.
    #[serde(default)]
    pub clock_resolution_ns: Option<u64>,
    /// The plan's `workload`, copied as it is: the shape of a workload file's requests, never
    /// their text (`WorkloadShape`); null or absent for synthetic prompts.
    #[serde(default)]
    pub plan_workload: Option<Value>,
}

/// One request line as written.
#[derive(Deserialize)]
struct RawRequest {
    index: u64,
    endpoint: String,
    start_ns: i64,
    #[serde(default)]
    status: Option<u16>,
    #[serde(default)]
    content_type: Option<String>,
    reads: Vec<(i64, String)>,
    end_ns: i64,
    #[serde(default)]
    error: Option<String>,
    #[serde(default)]
    slot: Option<u64>,
    #[serde(default)]
    scheduled_ms: Option<f64>,
    #[serde(default)]
    woke_ns: Option<i64>,
    #[serde(default)]
    retried: Option<String>,
}

/// One network read: when it returned (`time.perf_counter_ns()`) and the bytes it returned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StampedRead {
    /// The worker's monotonic clock when the read returned.
    pub at_ns: i64,
    /// The bytes it returned.
    pub bytes: Vec<u8>,
}

/// How a request ended on the worker's side.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RequestEnd {
    /// A response came (its status and content type), and its body was read to the end.
    Response {
        /// The HTTP status.
        status: u16,
        /// The `Content-Type` header, when there was one.
        content_type: Option<String>,
    },
    /// The request failed before or while reading: Python's exception, `"Name: message"`.
    Error {
        /// The exception class name.
        error_type: String,
        /// Its message.
        message: String,
    },
}

/// One request a worker sent.
#[derive(Clone, Debug, PartialEq)]
pub struct RequestRecord {
    /// The plan's request index.
    pub index: u64,
    /// The chat-completions URL it was sent to.
    pub endpoint: String,
    /// The worker's monotonic clock just before the request was written.
    pub start_ns: i64,
    /// Every read, in order.
    pub reads: Vec<StampedRead>,
    /// The worker's monotonic clock when the body ended or the request failed.
    pub end_ns: i64,
    /// How it ended.
    pub end: RequestEnd,
    /// The closed loop's slot that sent it.
    pub slot: Option<u64>,
    /// A rate load's arrival time of it, in ms after the worker's start.
    pub scheduled_ms: Option<f64>,
    /// When the worker woke up to send it (a rate load), before waiting for a free slot.
    pub woke_ns: Option<i64>,
    /// It was sent again on a fresh connection after the server had closed the kept-alive one
    /// (the first attempt's error); its times count from the first attempt.
    pub retried: Option<String>,
}

/// A whole records file.
#[derive(Clone, Debug, PartialEq)]
pub struct WorkerFile {
    /// The file's name, as data (for messages).
    pub name: String,
    /// Its header.
    pub header: WorkerHeader,
    /// Its requests, in file order.
    pub requests: Vec<RequestRecord>,
}

/// Whether `text` opens like a records file (its first non-blank line, as
/// [`read_worker_file`] reads it, is a worker header), without reading the rest.
pub fn looks_like_records(text: &str) -> bool {
    let first = text
        .lines()
        .find(|line| !line.trim().is_empty())
        .unwrap_or_default();
    first.contains(WORKER_KIND)
        && serde_json::from_str::<Value>(first)
            .ok()
            .and_then(|value| value.get("kind").and_then(Value::as_str).map(str::to_owned))
            .is_some_and(|kind| kind == WORKER_KIND)
}

/// Reads and checks one records file.
pub fn read_worker_file(name: &str, text: &str) -> Result<WorkerFile, LocustError> {
    let mut lines = text
        .lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty());
    let (_, first) = lines.next().ok_or_else(|| {
        LocustError::in_file(
            name,
            None,
            "the file is empty: a worker writes its header first",
        )
    })?;
    let header: WorkerHeader = serde_json::from_str(first)
        .map_err(|error| LocustError::in_file(name, Some(1), format!("header: {error}")))?;
    if header.kind != WORKER_KIND {
        return Err(LocustError::in_file(
            name,
            Some(1),
            format!("kind is {:?}, not {WORKER_KIND:?}", header.kind),
        ));
    }
    if header.workers == 0 || header.worker >= header.workers {
        return Err(LocustError::in_file(
            name,
            Some(1),
            format!(
                "worker {} of {} is impossible: the index must be below the count",
                header.worker, header.workers
            ),
        ));
    }
    if let Some(clock) = header.clock {
        if clock.round_trip_ns < 0 {
            return Err(LocustError::in_file(
                name,
                Some(1),
                "clock.round_trip_ns is negative",
            ));
        }
    }
    let mut requests = Vec::new();
    for (position, line) in lines {
        let line_number = position + 1;
        let raw: RawRequest = serde_json::from_str(line)
            .map_err(|error| LocustError::in_file(name, Some(line_number), error.to_string()))?;
        requests.push(
            checked_request(raw)
                .map_err(|reason| LocustError::in_file(name, Some(line_number), reason))?,
        );
    }
    if requests.len() as u64 != header.requests {
        return Err(LocustError::in_file(
            name,
            None,
            format!(
                "the header says the worker took {} requests but the file holds {}: it was cut \
                 short or edited; use the file the worker wrote",
                header.requests,
                requests.len()
            ),
        ));
    }
    Ok(WorkerFile {
        name: name.to_owned(),
        header,
        requests,
    })
}

/// One request line's own consistency: its times in order, its reads' bytes decodable, an end.
fn checked_request(raw: RawRequest) -> Result<RequestRecord, String> {
    let index = raw.index;
    let mut last = raw.start_ns;
    let mut reads = Vec::with_capacity(raw.reads.len());
    for (position, (at_ns, data)) in raw.reads.into_iter().enumerate() {
        if at_ns < last {
            return Err(format!(
                "request {index}: read {position} is stamped before the one before it (or \
                 before the request started): the times must only grow"
            ));
        }
        last = at_ns;
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(data.as_bytes())
            .map_err(|error| format!("request {index}: read {position} is not base64: {error}"))?;
        reads.push(StampedRead { at_ns, bytes });
    }
    if raw.end_ns < last {
        return Err(format!(
            "request {index}: end_ns is before its last read or its start"
        ));
    }
    if let Some(scheduled) = raw.scheduled_ms.filter(|ms| !ms.is_finite() || *ms < 0.0) {
        return Err(format!(
            "request {index}: scheduled_ms is {scheduled}, not a time after the start"
        ));
    }
    if raw.woke_ns.is_some_and(|woke| woke > raw.start_ns) {
        return Err(format!(
            "request {index}: woke_ns is after start_ns: a request is sent after its worker woke for it"
        ));
    }
    let end = match (raw.error, raw.status) {
        (Some(error), _) => {
            let (error_type, message) = match error.split_once(": ") {
                Some((name, message)) if is_exception_name(name) => {
                    (name.to_owned(), message.to_owned())
                }
                _ => ("OSError".to_owned(), error),
            };
            RequestEnd::Error {
                error_type,
                message,
            }
        }
        (None, Some(status)) if (100..=599).contains(&status) => RequestEnd::Response {
            status,
            content_type: raw.content_type,
        },
        (None, Some(status)) => {
            return Err(format!(
                "request {index}: status {status} is no HTTP status"
            ))
        }
        (None, None) => {
            return Err(format!(
                "request {index}: it has neither a status nor an error"
            ))
        }
    };
    Ok(RequestRecord {
        index,
        endpoint: raw.endpoint,
        start_ns: raw.start_ns,
        reads,
        end_ns: raw.end_ns,
        end,
        slot: raw.slot,
        scheduled_ms: raw.scheduled_ms,
        woke_ns: raw.woke_ns,
        retried: raw.retried,
    })
}

/// A Python exception class name: an identifier, possibly dotted.
fn is_exception_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 128
        && name.split('.').all(|part| {
            part.chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && part.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        })
}
