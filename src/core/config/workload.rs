//! How a workload file's records are sent ([`WorkloadOptions`]): which turns, in which order,
//! with which output lengths and history, how fast a trace replays, and the per-session header.
//!
//! The file itself is not a setting (it is chosen on the page or named by `workload_url`); these
//! are, so a link carries them and the artifact's `workload` block records them.

use serde::{Deserialize, Serialize};

use crate::core::config::bounds::{THINK_TIME_MS_BOUNDS, TRACE_SPEED_BOUNDS};
use crate::core::config::choices::{HistoryMode, OutputLengths, WorkloadOrder, WorkloadTurns};
use crate::core::config::error::ConfigError;
use crate::core::config::fields::FieldKey;

// Written with every other bound, in `bounds`; these paths stay for the code that reads them here.
pub use crate::core::config::bounds::{MAX_THINK_TIME_MS, MAX_TRACE_SPEED, MIN_TRACE_SPEED};
use crate::core::format::quoted_preview;

/// The longest per-session header name.
pub const MAX_HEADER_NAME: usize = 64;

/// Headers a page may not set, or that strobe sets itself: a session header cannot be one.
const RESERVED_HEADERS: &[&str] = &[
    "accept",
    "accept-charset",
    "accept-encoding",
    "access-control-request-headers",
    "access-control-request-method",
    "authorization",
    "connection",
    "content-length",
    "content-type",
    "cookie",
    "date",
    "host",
    "keep-alive",
    "origin",
    "referer",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
    "user-agent",
    "via",
];

/// How a workload's records are sent. Without a workload file they change nothing.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct WorkloadOptions {
    /// Where the page fetches the workload file from (`workload_url=` in a link), if anywhere.
    /// Not recorded in an artifact: the file's name and SHA-256 are.
    pub url: Option<String>,
    /// One request a record, or whole conversations as sessions.
    pub turns: WorkloadTurns,
    /// File order or shuffled.
    pub order: WorkloadOrder,
    /// The shuffle's seed.
    pub seed: i64,
    /// `max_tokens` from the record or from the form.
    pub output_lengths: OutputLengths,
    /// A session's history: the server's live replies or the file's recorded ones.
    pub history: HistoryMode,
    /// Wait after a reply before a session's next turn when the record gives no delay (ms).
    pub think_time_ms: u64,
    /// A header sent with every request of a session, its value the session's id (for
    /// routers with session affinity), e.g. `X-Session-ID`.
    pub session_header: Option<String>,
    /// A trace replays at its timestamps divided by this (2 = twice as fast).
    pub trace_speed: f64,
}

impl Default for WorkloadOptions {
    fn default() -> Self {
        Self {
            url: None,
            turns: WorkloadTurns::First,
            order: WorkloadOrder::File,
            seed: 0,
            output_lengths: OutputLengths::File,
            history: HistoryMode::Live,
            think_time_ms: 0,
            session_header: None,
            trace_speed: 1.0,
        }
    }
}

impl WorkloadOptions {
    /// Every rule these options break, each naming its field.
    pub fn check(&self, errors: &mut Vec<ConfigError>) {
        if let Some(url) = &self.url {
            let lower = url.trim().to_ascii_lowercase();
            let rest = lower
                .strip_prefix("https://")
                .or_else(|| lower.strip_prefix("http://"));
            if rest.is_none_or(|rest| rest.is_empty() || rest.starts_with('/')) {
                errors.push(ConfigError::new(
                    FieldKey::WorkloadUrl,
                    format!(
                        "workload_url must be an http:// or https:// address of the file, \
                         served with CORS (got {})",
                        quoted_preview(url)
                    ),
                ));
            }
        }
        if !THINK_TIME_MS_BOUNDS.admits(self.think_time_ms) {
            let most = THINK_TIME_MS_BOUNDS.max;
            errors.push(ConfigError::new(
                FieldKey::ThinkTimeMs,
                format!(
                    "think_time_ms must be at most {most} ({} minutes; got {})",
                    most / 60_000,
                    self.think_time_ms
                ),
            ));
        }
        if !TRACE_SPEED_BOUNDS.admits(self.trace_speed) {
            errors.push(ConfigError::new(
                FieldKey::TraceSpeed,
                format!(
                    "trace_speed must be from {} to {} (1 replays the trace in real time; got {})",
                    TRACE_SPEED_BOUNDS.min, TRACE_SPEED_BOUNDS.max, self.trace_speed
                ),
            ));
        }
        if let Some(name) = &self.session_header {
            if let Err(why) = check_header_name(name) {
                errors.push(ConfigError::new(
                    FieldKey::SessionHeader,
                    format!(
                        "session_header {why} (got {}); e.g. X-Session-ID",
                        quoted_preview(name)
                    ),
                ));
            }
        }
    }
}

/// Whether `name` can be a session header: an HTTP token that a page may set and strobe does
/// not set itself.
pub fn check_header_name(name: &str) -> Result<(), &'static str> {
    if name.is_empty() || name.len() > MAX_HEADER_NAME {
        return Err("must be 1 to 64 characters");
    }
    if !name
        .bytes()
        .all(|byte| byte.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&byte))
    {
        return Err("must be a header name: letters, digits and - only");
    }
    let lower = name.to_ascii_lowercase();
    if RESERVED_HEADERS.contains(&lower.as_str())
        || lower.starts_with("proxy-")
        || lower.starts_with("sec-")
    {
        return Err("is a header the browser or strobe sets itself: choose another name");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn errors_of(options: &WorkloadOptions) -> Vec<&'static str> {
        let mut errors = Vec::new();
        options.check(&mut errors);
        errors.iter().map(|error| error.field.as_str()).collect()
    }

    #[test]
    fn the_defaults_pass_and_each_bound_names_its_field() {
        assert!(errors_of(&WorkloadOptions::default()).is_empty());
        let bad = |change: fn(&mut WorkloadOptions)| {
            let mut options = WorkloadOptions::default();
            change(&mut options);
            errors_of(&options)
        };
        assert_eq!(bad(|o| o.think_time_ms = 600_001), ["think_time_ms"]);
        assert_eq!(bad(|o| o.trace_speed = 0.0), ["trace_speed"]);
        assert_eq!(bad(|o| o.trace_speed = f64::NAN), ["trace_speed"]);
        assert_eq!(bad(|o| o.trace_speed = 1001.0), ["trace_speed"]);
        assert_eq!(
            bad(|o| o.url = Some("file:///etc/passwd".into())),
            ["workload_url"]
        );
        assert_eq!(bad(|o| o.url = Some("https://".into())), ["workload_url"]);
        assert!(bad(|o| o.url = Some("https://team.example/w.jsonl".into())).is_empty());
    }

    #[test]
    fn a_session_header_is_a_token_the_page_may_set() {
        for good in ["X-Session-ID", "x-correlation-id", "Session"] {
            assert!(check_header_name(good).is_ok(), "{good}");
        }
        for bad in [
            "",
            "X Session",
            "X-Séance",
            "Authorization",
            "cookie",
            "Sec-Fetch-Mode",
            "Proxy-Authorization",
            "Content-Type",
            &"x".repeat(65),
        ] {
            assert!(check_header_name(bad).is_err(), "{bad}");
        }
    }
}
