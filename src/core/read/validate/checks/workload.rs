//! strobe's `workload` block (docs/guide/workloads.md, *What the artifact records*) and each row's
//! and failure's `workload` origin, checked like the other additions ([`super::additions`]):
//! a reader that compares runs by the file's SHA-256 or charts TTFT by turn must be able to
//! trust them.
//!
//! Two rules. `workload-block`: the block has only the keys strobe writes (counts, names of
//! settings, the file's name and hash: never a prompt, so an unknown key is refused rather
//! than passed over), its values are the spellings and ranges strobe writes, and its counts
//! agree (usable ≤ records, usable plus skipped = records, requests within the usable turns).
//! `workload-origin`: a file run's every row and failure says where it came from, within the
//! block's counts, one record per session, and each session's turns are 0, 1, 2… each once.
//!
//! Messages name keys and counts, never a string's text: the block is about private files.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::Checker;
use crate::core::config::choices::{
    ApiEndpoint, HistoryMode, OutputLengths, WorkloadOrder, WorkloadTurns,
};
use crate::core::config::workload::{
    check_header_name, MAX_THINK_TIME_MS, MAX_TRACE_SPEED, MIN_TRACE_SPEED,
};
use crate::core::read::validate::report::RuleId;
use crate::core::read::validate::values::{
    as_int, as_number, child_path, index_path, is_configuration_fingerprint,
};
use crate::core::workload::{SkipReason, WorkloadFormat};

/// Longest file name the block may record: a file's name (file systems allow 255 bytes) or a
/// `workload_url`'s last path segment, which can be longer.
const MAX_FILE_NAME_CHARS: usize = 1024;

const BLOCK_KEYS: [&str; 4] = ["source", "endpoint", "file", "sending"];
const FILE_KEYS: [&str; 9] = [
    "format",
    "name",
    "bytes",
    "sha256",
    "records",
    "usable_sessions",
    "usable_turns",
    "skipped",
    "timed",
];
const SKIPPED_KEYS: [&str; 3] = ["reason", "count", "first"];
const SENDING_KEYS: [&str; 11] = [
    "turns",
    "order",
    "seed",
    "output_lengths",
    "history",
    "think_time_ms",
    "session_header",
    "trace_speed",
    "sessions",
    "requests",
    "marker_lines",
];
const ORIGIN_KEYS: [&str; 3] = ["record", "session", "turn"];

/// Every spelling of a choice setting, e.g. `["file", "shuffle"]`.
macro_rules! spellings {
    ($choice:ty) => {
        <$choice>::ALL
            .iter()
            .map(|choice| choice.as_str())
            .collect::<Vec<_>>()
    };
}

/// What a value is, without its text: strings are described by their length only.
fn kind_of(value: Option<&Value>) -> String {
    match value {
        None => "nothing".to_owned(),
        Some(Value::Null) => "null".to_owned(),
        Some(Value::Bool(flag)) => format!("the boolean {flag}"),
        Some(Value::Number(number)) => format!("the number {number}"),
        Some(Value::String(text)) => {
            format!("a string of {} characters", text.chars().count())
        }
        Some(Value::Array(items)) => format!("an array of {} items", items.len()),
        Some(Value::Object(map)) => format!("an object with {} keys", map.len()),
    }
}

/// The counts a file run's origins are held to, read from a well-formed block.
#[derive(Default)]
struct Bounds {
    usable_sessions: Option<i128>,
    sessions: Option<i128>,
    requests: Option<i128>,
}

impl Checker {
    fn workload_violation(&mut self, path: impl Into<String>, message: String) {
        self.push(path, RuleId::WorkloadBlock, message);
    }

    /// Refuses every key of `map` (at `path`) that is not in `allowed`.
    fn only_keys(&mut self, map: &Map<String, Value>, path: &str, allowed: &[&str]) {
        for key in map.keys().filter(|key| !allowed.contains(&key.as_str())) {
            self.workload_violation(
                child_path(path, key),
                format!(
                    "{} has no such key; it records counts and settings only ({}), never a \
                     prompt: remove it",
                    path.trim_start_matches("$."),
                    allowed.join(", ")
                ),
            );
        }
    }

    /// A string field whose value must be one of `allowed`.
    fn choice(&mut self, map: &Map<String, Value>, path: &str, key: &str, allowed: &[&str]) {
        let value = map.get(key);
        if value
            .and_then(Value::as_str)
            .is_some_and(|text| allowed.contains(&text))
        {
            return;
        }
        self.workload_violation(
            child_path(path, key),
            format!(
                "{key} must be one of {}, found {}",
                allowed.join(", "),
                kind_of(value)
            ),
        );
    }

    /// An integer field from `minimum` (to `maximum`); its value when it is one.
    fn count(
        &mut self,
        map: &Map<String, Value>,
        path: &str,
        key: &str,
        minimum: i128,
        maximum: Option<i128>,
    ) -> Option<i128> {
        let value = map.get(key);
        let number = value.and_then(as_int);
        if let Some(number) = number
            .filter(|number| *number >= minimum && maximum.is_none_or(|maximum| *number <= maximum))
        {
            return Some(number);
        }
        let range = match maximum {
            Some(maximum) => format!("from {minimum} to {maximum}"),
            None => format!("≥ {minimum}"),
        };
        self.workload_violation(
            child_path(path, key),
            format!("{key} must be an integer {range}, found {}", kind_of(value)),
        );
        None
    }

    fn flag(&mut self, map: &Map<String, Value>, path: &str, key: &str) -> Option<bool> {
        let value = map.get(key);
        if let Some(flag) = value.and_then(Value::as_bool) {
            return Some(flag);
        }
        self.workload_violation(
            child_path(path, key),
            format!("{key} must be true or false, found {}", kind_of(value)),
        );
        None
    }

    /// An object field; `None` (with a violation) when it is something else.
    fn object<'a>(
        &mut self,
        map: &'a Map<String, Value>,
        path: &str,
        key: &str,
        what: &str,
    ) -> Option<&'a Map<String, Value>> {
        let value = map.get(key);
        if let Some(object) = value.and_then(Value::as_object) {
            return Some(object);
        }
        self.workload_violation(
            child_path(path, key),
            format!("{key} must be an object ({what}), found {}", kind_of(value)),
        );
        None
    }

    /// The `workload` block and the rows' and failures' origins.
    pub(super) fn check_workload(&mut self, artifact: &Map<String, Value>) {
        let bounds = match artifact.get("workload") {
            None => None,
            Some(Value::Object(block)) => Some(self.check_workload_block(artifact, block)),
            Some(other) => {
                self.workload_violation(
                    "$.workload",
                    format!(
                        "workload must be an object {{source, endpoint, file, sending}}, found \
                         {}; remove the key if the run sent strobe's own prompts on the chat API",
                        kind_of(Some(other))
                    ),
                );
                return;
            }
        };
        self.check_origins(artifact, bounds.flatten());
    }

    /// The block's shape and counts; the bounds of a file run's origins (`None` for a run of
    /// synthetic prompts, whose rows carry none).
    fn check_workload_block(
        &mut self,
        artifact: &Map<String, Value>,
        block: &Map<String, Value>,
    ) -> Option<Bounds> {
        const PATH: &str = "$.workload";
        self.only_keys(block, PATH, &BLOCK_KEYS);
        self.choice(block, PATH, "endpoint", &spellings!(ApiEndpoint));
        self.choice(block, PATH, "source", &["file", "synthetic"]);
        match block.get("source").and_then(Value::as_str) {
            Some("synthetic") => {
                for key in ["file", "sending"] {
                    if block.get(key).is_some_and(|value| !value.is_null()) {
                        self.workload_violation(
                            child_path(PATH, key),
                            format!(
                                "a run of synthetic prompts (source \"synthetic\") has no \
                                 workload {key}: remove it, or set source to \"file\""
                            ),
                        );
                    }
                }
                None
            }
            Some("file") => {
                let file = self.object(block, PATH, "file", "the workload file as read");
                let sending = self.object(block, PATH, "sending", "how its records were sent");
                let file_counts = file.map(|file| self.check_workload_file(file));
                let (usable_sessions, usable_turns, timed) = file_counts.unwrap_or_default();
                let (sessions, requests) = match sending {
                    Some(sending) => {
                        self.check_sending(artifact, sending, usable_sessions, usable_turns, timed)
                    }
                    None => (None, None),
                };
                Some(Bounds {
                    usable_sessions,
                    sessions,
                    requests,
                })
            }
            // An unknown source has its own violation; its rows' origins are read unbounded.
            _ => Some(Bounds::default()),
        }
    }

    /// The `file` object: its usable sessions and turns and whether it is timed.
    fn check_workload_file(
        &mut self,
        file: &Map<String, Value>,
    ) -> (Option<i128>, Option<i128>, Option<bool>) {
        const PATH: &str = "$.workload.file";
        self.only_keys(file, PATH, &FILE_KEYS);
        let formats: Vec<&str> = WorkloadFormat::ALL.iter().map(|f| f.as_str()).collect();
        self.choice(file, PATH, "format", &formats);
        match file.get("name") {
            Some(Value::Null) => {}
            Some(Value::String(name))
                if !name.is_empty() && name.chars().count() <= MAX_FILE_NAME_CHARS => {}
            other => self.workload_violation(
                child_path(PATH, "name"),
                format!(
                    "name must be null or the file's name, 1 to {MAX_FILE_NAME_CHARS} \
                     characters, found {}",
                    kind_of(other)
                ),
            ),
        }
        self.count(file, PATH, "bytes", 0, None);
        if !file
            .get("sha256")
            .and_then(Value::as_str)
            .is_some_and(is_configuration_fingerprint)
        {
            self.workload_violation(
                child_path(PATH, "sha256"),
                format!(
                    "sha256 must be \"sha256:\" and 64 lowercase hex digits (the hash of the \
                     file's bytes), found {}",
                    kind_of(file.get("sha256"))
                ),
            );
        }
        let records = self.count(file, PATH, "records", 1, None);
        let usable_sessions = self.count(file, PATH, "usable_sessions", 1, None);
        let usable_turns = self.count(file, PATH, "usable_turns", 1, None);
        let skipped = self.check_skipped(file);
        let timed = self.flag(file, PATH, "timed");
        // An AIPerf single_turn record is one turn (records sharing a session_id are one
        // session); every other format's record is one session.
        let by_turn = file.get("format").and_then(Value::as_str)
            == Some(WorkloadFormat::AiperfSingleTurn.as_str());
        let (unit, usable_records) = if by_turn {
            ("turns", usable_turns)
        } else {
            ("sessions", usable_sessions)
        };
        if let (Some(records), Some(usable)) = (records, usable_sessions) {
            if usable > records {
                self.workload_violation(
                    child_path(PATH, "usable_sessions"),
                    format!(
                        "usable_sessions ({usable}) cannot exceed the file's records ({records})"
                    ),
                );
            }
        }
        if let (Some(records), Some(usable)) = (records, usable_records) {
            if usable > records {
                // Said above for sessions; turns beyond records only when each record is a turn.
                if by_turn {
                    self.workload_violation(
                        child_path(PATH, "usable_turns"),
                        format!(
                            "usable_turns ({usable}) cannot exceed the file's records \
                             ({records}): each aiperf_single_turn record is one turn"
                        ),
                    );
                }
            } else if let Some(skipped) = skipped.filter(|skipped| usable + skipped != records) {
                self.workload_violation(
                    child_path(PATH, "skipped"),
                    format!(
                        "the usable {unit} ({usable}) and the skipped records ({skipped}) \
                         must add up to the file's records ({records})"
                    ),
                );
            }
        }
        if let (Some(sessions), Some(turns)) = (usable_sessions, usable_turns) {
            if turns < sessions {
                self.workload_violation(
                    child_path(PATH, "usable_turns"),
                    format!(
                        "usable_turns ({turns}) cannot be fewer than usable_sessions \
                         ({sessions}): every session has a turn"
                    ),
                );
            }
        }
        (usable_sessions, usable_turns, timed)
    }

    /// `file.skipped`: the records skipped in all, when every entry is well formed.
    fn check_skipped(&mut self, file: &Map<String, Value>) -> Option<i128> {
        const PATH: &str = "$.workload.file.skipped";
        let Some(entries) = file.get("skipped").and_then(Value::as_array) else {
            self.workload_violation(
                PATH,
                format!(
                    "skipped must be an array of {{reason, count, first}} (empty when nothing \
                     was skipped), found {}",
                    kind_of(file.get("skipped"))
                ),
            );
            return None;
        };
        let reasons: Vec<&str> = SkipReason::ALL.iter().map(|r| r.as_str()).collect();
        let mut seen: Vec<&str> = Vec::new();
        let mut total = Some(0_i128);
        for (position, entry) in entries.iter().enumerate() {
            let path = index_path(PATH, position);
            let Some(entry) = entry.as_object() else {
                self.workload_violation(
                    path,
                    format!(
                        "each skipped entry must be an object {{reason, count, first}}, found {}",
                        kind_of(Some(entry))
                    ),
                );
                total = None;
                continue;
            };
            self.only_keys(entry, &path, &SKIPPED_KEYS);
            self.choice(entry, &path, "reason", &reasons);
            if let Some(reason) = entry.get("reason").and_then(Value::as_str) {
                if let Some(known) = reasons.iter().find(|known| **known == reason) {
                    if seen.contains(known) {
                        self.workload_violation(
                            child_path(&path, "reason"),
                            format!("reason {known} is counted twice: one entry per reason"),
                        );
                    }
                    seen.push(known);
                }
            }
            let count = self.count(entry, &path, "count", 1, None);
            self.count(entry, &path, "first", 1, None);
            total = total.zip(count).map(|(total, count)| total + count);
        }
        total
    }

    /// The `sending` object: the sessions and requests the run planned.
    fn check_sending(
        &mut self,
        artifact: &Map<String, Value>,
        sending: &Map<String, Value>,
        usable_sessions: Option<i128>,
        usable_turns: Option<i128>,
        timed: Option<bool>,
    ) -> (Option<i128>, Option<i128>) {
        const PATH: &str = "$.workload.sending";
        self.only_keys(sending, PATH, &SENDING_KEYS);
        self.choice(sending, PATH, "turns", &spellings!(WorkloadTurns));
        self.choice(sending, PATH, "order", &spellings!(WorkloadOrder));
        self.choice(sending, PATH, "output_lengths", &spellings!(OutputLengths));
        self.choice(sending, PATH, "history", &spellings!(HistoryMode));
        self.count(sending, PATH, "seed", i128::from(i64::MIN), None);
        self.count(
            sending,
            PATH,
            "think_time_ms",
            0,
            Some(i128::from(MAX_THINK_TIME_MS)),
        );
        match sending.get("session_header") {
            Some(Value::Null) => {}
            Some(Value::String(name)) if check_header_name(name).is_ok() => {}
            other => self.workload_violation(
                child_path(PATH, "session_header"),
                format!(
                    "session_header must be null or a header name a page may set (e.g. \
                     X-Session-ID), found {}",
                    kind_of(other)
                ),
            ),
        }
        let speed = sending.get("trace_speed");
        let speed_ok = match (speed, timed) {
            (Some(Value::Null), Some(false)) => true,
            (Some(value), Some(true)) => as_number(value)
                .is_some_and(|speed| (MIN_TRACE_SPEED..=MAX_TRACE_SPEED).contains(&speed)),
            (Some(value), None) => {
                value.is_null()
                    || as_number(value)
                        .is_some_and(|speed| (MIN_TRACE_SPEED..=MAX_TRACE_SPEED).contains(&speed))
            }
            _ => false,
        };
        if !speed_ok {
            self.workload_violation(
                child_path(PATH, "trace_speed"),
                format!(
                    "trace_speed must be a number from {MIN_TRACE_SPEED} to {MAX_TRACE_SPEED} \
                     for a timed file (a trace) and null otherwise; the file is {}, found {}",
                    match timed {
                        Some(true) => "timed",
                        Some(false) => "not timed",
                        None => "of unknown timing",
                    },
                    kind_of(speed)
                ),
            );
        }
        let sessions = self.count(sending, PATH, "sessions", 1, usable_sessions);
        let requests = self.count(
            sending,
            PATH,
            "requests",
            sessions.unwrap_or(1),
            usable_turns,
        );
        if let Some(planned) = artifact.get("requests").and_then(as_int) {
            if requests.is_some_and(|requests| planned > requests) {
                self.workload_violation(
                    child_path(PATH, "requests"),
                    format!(
                        "the run's requests ({planned}) cannot exceed the workload's planned \
                         requests ({})",
                        requests.unwrap_or_default()
                    ),
                );
            }
        }
        let marker_lines = self.flag(sending, PATH, "marker_lines");
        let canaries = artifact.get("request_canaries").and_then(Value::as_bool);
        if let (Some(marker_lines), Some(canaries)) = (marker_lines, canaries) {
            if marker_lines != canaries {
                self.workload_violation(
                    child_path(PATH, "marker_lines"),
                    format!(
                        "marker_lines ({marker_lines}) must equal request_canaries \
                         ({canaries}): a canary's marker line is the only text strobe adds"
                    ),
                );
            }
        }
        (sessions, requests)
    }

    /// Every row's and failure's `workload`: present exactly in a file run, within `bounds`,
    /// one record per session, each session's turns 0, 1, 2… each once (every planned request
    /// has a row or a failure).
    fn check_origins(&mut self, artifact: &Map<String, Value>, bounds: Option<Bounds>) {
        /// What the entries of one session said: its record, where it was first met, and the
        /// path of each turn.
        struct Seen {
            record: i128,
            first_path: String,
            turns: BTreeMap<i128, String>,
        }
        let mut sessions: BTreeMap<i128, Seen> = BTreeMap::new();
        // An origin already found wrong leaves its session's turns unknown: no gap is claimed.
        let mut all_read = true;
        for list in ["request_timings", "failures"] {
            let Some(entries) = artifact.get(list).and_then(Value::as_array) else {
                continue;
            };
            for (position, entry) in entries.iter().enumerate() {
                let Some(entry) = entry.as_object() else {
                    continue;
                };
                let path = index_path(&format!("$.{list}"), position);
                let origin_path = child_path(&path, "workload");
                let origin = entry.get("workload");
                let Some(bounds) = &bounds else {
                    if origin.is_some() {
                        self.push(
                            origin_path,
                            RuleId::WorkloadOrigin,
                            "only a run of a workload file (a workload block with source \
                             \"file\") records where a request came from: remove it"
                                .to_owned(),
                        );
                    }
                    continue;
                };
                let Some(origin) = origin.and_then(Value::as_object) else {
                    all_read = false;
                    self.push(
                        origin_path,
                        RuleId::WorkloadOrigin,
                        format!(
                            "every row and failure of a workload file's run records its \
                             {{record, session, turn}}, found {}",
                            kind_of(origin)
                        ),
                    );
                    continue;
                };
                let Some((session, record, turn)) = self.check_origin(origin, &origin_path, bounds)
                else {
                    all_read = false;
                    continue;
                };
                let seen = sessions.entry(session).or_insert_with(|| Seen {
                    record,
                    first_path: origin_path.clone(),
                    turns: BTreeMap::new(),
                });
                if seen.record != record {
                    let message = format!(
                        "session {session} comes from record {} at {}, so it cannot come from \
                         record {record} here: a session is one record",
                        seen.record, seen.first_path
                    );
                    self.push(
                        child_path(&origin_path, "record"),
                        RuleId::WorkloadOrigin,
                        message,
                    );
                }
                if let Some(earlier) = seen.turns.get(&turn) {
                    let message = format!(
                        "session {session}'s turn {turn} is also at {earlier}: each turn is one \
                         request"
                    );
                    self.push(
                        child_path(&origin_path, "turn"),
                        RuleId::WorkloadOrigin,
                        message,
                    );
                } else {
                    seen.turns.insert(turn, origin_path);
                }
            }
        }
        for (session, seen) in sessions.into_iter().filter(|_| all_read) {
            // Turns are 0, 1, 2…: the first gap is the first turn missing.
            let Some(missing) = (0..).zip(seen.turns.keys()).find(|(n, t)| n != *t) else {
                continue;
            };
            let (missing, next) = (missing.0, missing.1);
            self.push(
                child_path(&seen.first_path, "turn"),
                RuleId::WorkloadOrigin,
                format!(
                    "session {session} has turn {next} but no turn {missing}: turns count from 0 \
                     and every planned request has a row or a failure"
                ),
            );
        }
    }

    /// One origin; its session, record and turn when all three are within bounds.
    fn check_origin(
        &mut self,
        origin: &Map<String, Value>,
        path: &str,
        bounds: &Bounds,
    ) -> Option<(i128, i128, i128)> {
        for key in origin
            .keys()
            .filter(|key| !ORIGIN_KEYS.contains(&key.as_str()))
        {
            self.push(
                child_path(path, key),
                RuleId::WorkloadOrigin,
                "a request's workload holds only record, session and turn (never its text): \
                 remove this key"
                    .to_owned(),
            );
        }
        let mut read = |key: &str, below: Option<i128>, what: &str| {
            let value = origin.get(key);
            let number = value.and_then(as_int);
            if let Some(number) =
                number.filter(|number| *number >= 0 && below.is_none_or(|below| *number < below))
            {
                return Some(number);
            }
            let range = match below {
                Some(below) => format!("from 0 to {} ({what})", below - 1),
                None => "≥ 0".to_owned(),
            };
            self.push(
                child_path(path, key),
                RuleId::WorkloadOrigin,
                format!("{key} must be an integer {range}, found {}", kind_of(value)),
            );
            None
        };
        let record = read(
            "record",
            bounds.usable_sessions,
            "the file's usable sessions",
        );
        let session = read("session", bounds.sessions, "the run's sessions");
        let turn = read("turn", bounds.requests, "the run's requests");
        Some((session?, record?, turn?))
    }
}

#[cfg(test)]
mod tests;
