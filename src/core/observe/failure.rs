//! Failures (ARTIFACT.md §6.3) and browser-side request errors (§12): every way a request can
//! fail, with its class, type and a bounded, sanitized message that says what to do.

use thiserror::Error;

use crate::core::schema::rows::{FailureClass, FailureRecord};

use crate::core::stream::sse::{sanitize_excerpt, SseError};

/// Longest `error_message` in a failure record, in characters.
pub const ERROR_MESSAGE_MAX_CHARS: usize = 2048;

/// What an empty error message is replaced with.
pub const EMPTY_ERROR_MESSAGE: &str = "<empty exception message>";

/// Longest excerpt of an HTTP error body kept in a [`RequestError`] message, in characters.
pub const HTTP_BODY_EXCERPT_MAX_CHARS: usize = 512;

/// `error_type` of the validation failures, as the reference producer wrote them (its checks
/// raised Python `ValueError`s, and readers group failures by this name).
pub const VALIDATION_ERROR_TYPE: &str = "ValueError";

impl FailureRecord {
    /// A `request_error`: the request failed before a usable stream existed.
    pub fn request_error(
        request_index: u64,
        planned_context_tokens: u64,
        error: &RequestError,
        elapsed_ms: f64,
    ) -> Self {
        let (error_message, error_message_truncated) = bounded_error_message(&error.message);
        Self {
            request_index,
            planned_context_tokens: Some(planned_context_tokens),
            failure_class: FailureClass::RequestError,
            error_type: error.error_type.clone(),
            error_message,
            error_message_truncated,
            response_received: false,
            performance_eligible: false,
            elapsed_ms: Some(elapsed_ms),
            response_timing: None,
            response_metadata: None,
            request_canary: None,
            controlled_output: None,
            scheduled_ms: None,
            dispatch_lag_ms: None,
            cap_wait_ms: None,
            workload: None,
        }
    }

    /// The reduced `runner_error` shape, for an error that escaped the request worker itself.
    pub fn runner_error(request_index: u64, error_type: &str, message: &str) -> Self {
        let (error_message, error_message_truncated) = bounded_error_message(message);
        Self {
            request_index,
            planned_context_tokens: None,
            failure_class: FailureClass::RunnerError,
            error_type: error_type.to_owned(),
            error_message,
            error_message_truncated,
            response_received: false,
            performance_eligible: false,
            elapsed_ms: None,
            response_timing: None,
            response_metadata: None,
            request_canary: None,
            controlled_output: None,
            scheduled_ms: None,
            dispatch_lag_ms: None,
            cap_wait_ms: None,
            workload: None,
        }
    }
}

/// The §6.3 message rule: an empty message becomes [`EMPTY_ERROR_MESSAGE`]; the first
/// [`ERROR_MESSAGE_MAX_CHARS`] characters are kept; the flag says whether anything was cut.
pub fn bounded_error_message(message: &str) -> (String, bool) {
    if message.is_empty() {
        return (EMPTY_ERROR_MESSAGE.to_owned(), false);
    }
    match message.char_indices().nth(ERROR_MESSAGE_MAX_CHARS) {
        Some((cut, _)) => (message[..cut].to_owned(), true),
        None => (message.to_owned(), false),
    }
}

/// A request that failed in the browser or in the stream, as the web layer reports it: the
/// `error_type` that lands in the artifact and a message that says what went wrong and, where
/// it can, what to change.
#[derive(Clone, Debug, Error, PartialEq, Eq)]
#[error("{error_type}: {message}")]
pub struct RequestError {
    /// `TypeError`, `HttpError`, `AbortError`, `TimeoutError`, `StreamError`, `ValueError`, …
    pub error_type: String,
    /// Human-readable, sanitized; bounded to [`ERROR_MESSAGE_MAX_CHARS`] when recorded.
    pub message: String,
}

impl RequestError {
    /// This error, saying which endpoint of a pool it came from: with several base URLs the
    /// user must know which one to fix.
    pub fn at_endpoint(self, url: &str) -> Self {
        Self {
            message: format!("from {url}: {}", self.message),
            ..self
        }
    }

    /// Any error type and message.
    pub fn new(error_type: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            error_type: error_type.into(),
            message: message.into(),
        }
    }

    /// `fetch()` rejected (`TypeError`): the network failed or CORS blocked the response. The
    /// browser's own text says nothing useful, so the remedy is added.
    pub fn fetch_failed(browser_message: &str) -> Self {
        let detail = sanitize_excerpt(browser_message, HTTP_BODY_EXCERPT_MAX_CHARS);
        Self::new(
            "TypeError",
            format!(
                "{detail} (the server is unreachable, or it does not allow this page's origin: \
                 enable CORS on the server, e.g. vLLM --allowed-origins, and check the base URL)"
            ),
        )
    }

    /// A 2xx response that is a JSON document, not an event stream (`StreamError`), with a
    /// sanitized excerpt of what it said.
    pub fn json_instead_of_stream(body: &str) -> Self {
        Self::stream(format!(
            "the server answered with a JSON document, not an event stream; it may not support \
             \"stream\": true on this route. It said: {}",
            sanitize_excerpt(body, 512)
        ))
    }

    /// A non-2xx response (`HttpError`) with the status and a sanitized, bounded excerpt of the
    /// body. Every non-empty string in `secrets` (the API key) is replaced with `[redacted]`
    /// first, in case the server echoes it.
    pub fn http_status(status: u16, status_text: &str, body: &str, secrets: &[&str]) -> Self {
        let mut redacted = body.to_owned();
        for secret in secrets.iter().filter(|secret| !secret.is_empty()) {
            redacted = redacted.replace(secret, "[redacted]");
        }
        let excerpt = sanitize_excerpt(&redacted, HTTP_BODY_EXCERPT_MAX_CHARS);
        let status_text = sanitize_excerpt(status_text, 64);
        let mut message = format!("HTTP {status}");
        if !status_text.is_empty() {
            message.push(' ');
            message.push_str(&status_text);
        }
        if excerpt.is_empty() {
            message.push_str(" (empty body)");
        } else {
            message.push_str(": ");
            message.push_str(&excerpt);
        }
        if let Some(hint) = http_status_hint(status) {
            message.push_str("; ");
            message.push_str(hint);
        }
        Self::new("HttpError", message)
    }

    /// The user cancelled the run (`AbortError`).
    pub fn cancelled() -> Self {
        Self::new(
            "AbortError",
            "request cancelled before the response completed",
        )
    }

    /// No data arrived within the timeout (`TimeoutError`), the analogue of the reference's
    /// per-read socket timeout.
    pub fn timed_out(timeout_s: f64) -> Self {
        Self::new(
            "TimeoutError",
            format!(
                "no response data for {timeout_s} s; raise the timeout field if the server is \
                 just slow (long prompts can take minutes to prefill)"
            ),
        )
    }

    /// A stream-level failure (`StreamError`).
    pub fn stream(message: impl Into<String>) -> Self {
        Self::new("StreamError", message)
    }

    /// A chunk the reference client could not process (§11.12: a `request_error`).
    pub fn malformed_chunk(reason: &str) -> Self {
        Self::stream(format!(
            "malformed chat-completions chunk: {reason}; the server is not OpenAI-compatible \
             for streaming"
        ))
    }

    /// The server reported an error inside the stream.
    pub fn server_error_event(message: &str) -> Self {
        Self::stream(format!("the server sent an error event: {message}"))
    }
}

impl From<SseError> for RequestError {
    fn from(error: SseError) -> Self {
        Self::stream(error.to_string())
    }
}

fn http_status_hint(status: u16) -> Option<&'static str> {
    match status {
        401 | 403 => Some("check the API key"),
        404 => Some("check the base URL (it usually ends in /v1) and the model name"),
        413 => Some("the request is too large for the server; lower the context size"),
        429 => Some("the server is rate limiting; lower the concurrency"),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::config::choices::ControlledOutputPolicy;
    use crate::core::observe::conclude::conclude_request;
    use crate::core::observe::test_support::*;
    use serde_json::json;

    #[test]
    fn failure_class_spelling_is_the_serde_name() {
        for class in [
            FailureClass::RequestError,
            FailureClass::StreamValidationFailed,
            FailureClass::RequestCanaryFailed,
            FailureClass::ControlledOutputFailed,
            FailureClass::RunnerError,
        ] {
            assert_eq!(serde_json::to_value(class).unwrap(), class.as_str());
        }
    }

    #[test]
    fn error_messages_are_bounded_and_never_empty() {
        assert_eq!(
            bounded_error_message(""),
            (EMPTY_ERROR_MESSAGE.to_owned(), false)
        );
        let exact = "é".repeat(ERROR_MESSAGE_MAX_CHARS);
        assert_eq!(bounded_error_message(&exact), (exact.clone(), false));
        let long = format!("{exact}🎉");
        assert_eq!(bounded_error_message(&long), (exact, true));
    }

    #[test]
    fn http_errors_carry_status_and_a_clean_bounded_excerpt() {
        let error = RequestError::http_status(
            401,
            "Unauthorized",
            "{\"error\": \"invalid key sk-secret\"}\r\n\u{7}",
            &["sk-secret", ""],
        );
        assert_eq!(error.error_type, "HttpError");
        assert_eq!(
            error.message,
            "HTTP 401 Unauthorized: {\"error\": \"invalid key [redacted]\"}; check the API key"
        );
        let huge = RequestError::http_status(500, "", &"x".repeat(100_000), &[]);
        assert!(huge.message.starts_with("HTTP 500: xxx"));
        assert!(huge.message.chars().count() < HTTP_BODY_EXCERPT_MAX_CHARS + 20);
        let empty = RequestError::http_status(502, "Bad Gateway", " \n", &[]);
        assert_eq!(empty.message, "HTTP 502 Bad Gateway (empty body)");
    }

    #[test]
    fn browser_errors_have_their_types() {
        assert_eq!(
            RequestError::fetch_failed("Failed to fetch").error_type,
            "TypeError"
        );
        assert!(RequestError::fetch_failed("Failed to fetch")
            .message
            .contains("CORS"));
        assert_eq!(RequestError::cancelled().error_type, "AbortError");
        assert_eq!(RequestError::timed_out(900.0).error_type, "TimeoutError");
        let sse = RequestError::from(SseError::LineTooLong { limit_bytes: 8 });
        assert_eq!(sse.error_type, "StreamError");
        assert!(sse.message.contains("8 bytes"));
    }

    #[test]
    fn request_error_shape() {
        let record = failed(conclude_request(
            &plan(None, 0, ControlledOutputPolicy::Observe),
            1000.0,
            Err(RequestError::fetch_failed("Failed to fetch")),
            1250.0,
        ));
        assert_eq!(record.failure_class, FailureClass::RequestError);
        assert_eq!(record.error_type, "TypeError");
        assert_eq!(
            record.elapsed_ms,
            Some(((1250.0 - 1000.0) / 1000.0) * 1000.0)
        );
        let value = serde_json::to_value(&record).expect("serializable");
        assert_eq!(
            keys(&value),
            [
                "elapsed_ms",
                "error_message",
                "error_message_truncated",
                "error_type",
                "failure_class",
                "performance_eligible",
                "planned_context_tokens",
                "request_index",
                "response_received"
            ]
        );
        assert_eq!(value["failure_class"], "request_error");
        assert_eq!(value["response_received"], false);
    }

    #[test]
    fn runner_error_shape() {
        let value = serde_json::to_value(FailureRecord::runner_error(4, "RuntimeError", ""))
            .expect("serializable");
        assert_eq!(
            value,
            json!({"request_index": 4, "error_type": "RuntimeError",
                   "error_message": "<empty exception message>",
                   "error_message_truncated": false, "response_received": false,
                   "performance_eligible": false, "failure_class": "runner_error"})
        );
    }

    #[test]
    fn an_error_can_say_which_endpoint_it_came_from() {
        let error = RequestError::fetch_failed("Failed to fetch")
            .at_endpoint("http://127.0.0.1:8012/v1/chat/completions");
        assert_eq!(error.error_type, "TypeError");
        assert!(
            error
                .message
                .starts_with("from http://127.0.0.1:8012/v1/chat/completions: Failed to fetch"),
            "{error}"
        );
    }
}
