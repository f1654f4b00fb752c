//! A complete, non-streaming reply and how it is written: JSON bodies, the API-key check's 401,
//! and the CORS and timing headers every response carries. Shared by the router and the chat
//! handler.

use serde::Serialize;

use crate::config::SimConfig;
use crate::faults::FAULT_HEADER;
use crate::http::{response_head, Connection, HttpRequest};
use crate::wire::ErrorBody;

/// A complete, non-streaming reply.
pub(crate) struct Reply {
    pub(crate) status: u16,
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) body: String,
}

impl Reply {
    pub(crate) fn json(status: u16, body: String) -> Self {
        Self {
            status,
            headers: vec![("content-type".into(), "application/json".into())],
            body,
        }
    }

    pub(crate) fn error(status: u16, error: ErrorBody) -> Self {
        Self::json(status, error.to_json())
    }
}

pub(crate) fn to_json<T: Serialize>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_else(|error| {
        ErrorBody::new(
            format!("strobe-sim could not encode its reply: {error}"),
            "server_error",
            None,
            None,
        )
        .to_json()
    })
}

/// `None` when the request may pass; otherwise the 401 reply.
pub(crate) fn check_api_key(config: &SimConfig, request: &HttpRequest) -> Option<Reply> {
    let expected = config.api_key.as_deref()?;
    let given = request
        .header("authorization")
        .and_then(|value| {
            value
                .strip_prefix("Bearer ")
                .or_else(|| value.strip_prefix("bearer "))
        })
        .map(str::trim);
    if given == Some(expected) {
        return None;
    }
    let message = if given.is_some() {
        "Incorrect API key provided. Send the key strobe-sim was started with (--api-key) as `Authorization: Bearer <key>`."
    } else {
        "Missing API key. strobe-sim was started with --api-key; send `Authorization: Bearer <key>`."
    };
    let mut reply = Reply::error(
        401,
        ErrorBody::new(
            message,
            "invalid_request_error",
            None,
            Some("invalid_api_key"),
        ),
    );
    reply
        .headers
        .push(("www-authenticate".into(), "Bearer".into()));
    Some(reply)
}

/// Headers every response carries: CORS for a cross-origin page, and timing/resource policy so a
/// cross-origin-isolated page may read the response and its Resource Timing.
pub(crate) fn cors_headers(request: &HttpRequest) -> Vec<(String, String)> {
    let origin = request.header("origin").unwrap_or("*").to_string();
    vec![
        ("access-control-allow-origin".into(), origin),
        ("vary".into(), "Origin".into()),
        (
            "access-control-expose-headers".into(),
            format!("x-sim-request-id, {FAULT_HEADER}, retry-after"),
        ),
        ("timing-allow-origin".into(), "*".into()),
        ("cross-origin-resource-policy".into(), "cross-origin".into()),
    ]
}

/// Writes `reply` with CORS and framing headers; returns whether the connection stays open.
pub(crate) async fn send(
    connection: &mut Connection,
    request: &HttpRequest,
    reply: Reply,
    keep_alive: bool,
) -> bool {
    write_reply(connection, reply, cors_headers(request), keep_alive).await
}

/// Writes `reply` with its framing headers but no CORS headers: a page of another origin
/// cannot read it (`--metrics-cors off`).
pub(crate) async fn send_without_cors(
    connection: &mut Connection,
    reply: Reply,
    keep_alive: bool,
) -> bool {
    write_reply(connection, reply, Vec::new(), keep_alive).await
}

async fn write_reply(
    connection: &mut Connection,
    reply: Reply,
    cors: Vec<(String, String)>,
    keep_alive: bool,
) -> bool {
    let mut headers = reply.headers;
    headers.extend(cors);
    headers.push(("server".into(), "strobe-sim".into()));
    headers.push(("content-length".into(), reply.body.len().to_string()));
    headers.push((
        "connection".into(),
        if keep_alive { "keep-alive" } else { "close" }.into(),
    ));
    let mut bytes = response_head(reply.status, &headers);
    bytes.extend_from_slice(reply.body.as_bytes());
    connection.write(&bytes).await.is_ok() && keep_alive
}

/// A 400 in OpenAI's shape, naming the field at fault.
pub(crate) fn bad_request(message: impl Into<String>, param: Option<&str>) -> Reply {
    Reply::error(
        400,
        ErrorBody::new(message, "invalid_request_error", param, None),
    )
}
