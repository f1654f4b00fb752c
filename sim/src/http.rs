//! A small HTTP/1.1 server connection over a tokio `TcpStream`.
//!
//! The simulator writes HTTP itself instead of going through hyper or axum because its purpose
//! is control over the wire: each SSE event must be its own socket write whose completion is
//! timed, events must be cut into 3-byte or mid-character writes on demand, and a connection must
//! be reset with a real RST or left hanging. Request heads are parsed by `httparse`; bodies with
//! `Content-Length` or chunked encoding, `Expect: 100-continue` and keep-alive are handled here.

use std::io;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::time::Instant;

/// A parsed request with its whole body.
#[derive(Debug, Clone)]
pub struct HttpRequest {
    /// The method, e.g. `POST`.
    pub method: String,
    /// The path without the query, e.g. `/v1/chat/completions`.
    pub path: String,
    /// The query string after `?`, if any.
    pub query: Option<String>,
    /// 0 for HTTP/1.0, 1 for HTTP/1.1.
    pub minor_version: u8,
    /// Headers with lower-cased names, in arrival order.
    pub headers: Vec<(String, String)>,
    /// The body, de-chunked.
    pub body: Vec<u8>,
}

impl HttpRequest {
    /// The first value of header `name` (lower-case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
    }

    /// Whether the connection may carry another request after this one.
    pub fn keeps_alive(&self) -> bool {
        let connection = self
            .header("connection")
            .map(str::to_ascii_lowercase)
            .unwrap_or_default();
        if self.minor_version == 0 {
            connection.contains("keep-alive")
        } else {
            !connection.contains("close")
        }
    }
}

/// Size limits for reading requests.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Largest request head in bytes.
    pub max_head_bytes: usize,
    /// Largest request body in bytes.
    pub max_body_bytes: usize,
}

/// Why a request could not be read.
#[derive(Debug, thiserror::Error)]
pub enum HttpError {
    /// The socket failed.
    #[error("reading the request failed: {0}")]
    Io(#[from] io::Error),
    /// The head was too large or had too many headers.
    #[error("the request head is larger than {0} bytes or has more than 64 headers")]
    HeadTooLarge(usize),
    /// The body was too large.
    #[error("the request body is larger than {0} bytes; raise --max-body-bytes to accept it")]
    BodyTooLarge(usize),
    /// The bytes were not HTTP/1.x.
    #[error("malformed HTTP request: {0}")]
    Malformed(String),
    /// The peer closed the connection in the middle of a request.
    #[error("the connection closed in the middle of a request")]
    Truncated,
}

impl HttpError {
    /// The status to answer with before closing, or `None` when nothing can be sent.
    pub fn status(&self) -> Option<u16> {
        match self {
            HttpError::Io(_) | HttpError::Truncated => None,
            HttpError::HeadTooLarge(_) => Some(431),
            HttpError::BodyTooLarge(_) => Some(413),
            HttpError::Malformed(_) => Some(400),
        }
    }
}

/// One accepted connection.
pub struct Connection {
    stream: TcpStream,
    buffer: Vec<u8>,
    port: u16,
}

impl Connection {
    /// Wraps `stream`, turning Nagle's algorithm off so every write leaves at once.
    pub fn new(stream: TcpStream) -> Self {
        // Without NODELAY small events would wait for ACKs; failure only costs latency.
        let _ = stream.set_nodelay(true);
        let port = stream.local_addr().map(|addr| addr.port()).unwrap_or(0);
        Self {
            stream,
            buffer: Vec::with_capacity(8 * 1024),
            port,
        }
    }

    /// The local port this connection came in on.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Reads the next request; `Ok(None)` when the peer closed cleanly between requests.
    pub async fn read_request(&mut self, limits: Limits) -> Result<Option<HttpRequest>, HttpError> {
        let head_end = loop {
            // Tolerate blank lines between pipelined requests (RFC 9112 §2.2).
            let leading_blank = self
                .buffer
                .iter()
                .take_while(|byte| **byte == b'\r' || **byte == b'\n')
                .count();
            self.buffer.drain(..leading_blank);
            if let Some(end) = find(&self.buffer, b"\r\n\r\n") {
                break end + 4;
            }
            if self.buffer.len() > limits.max_head_bytes {
                return Err(HttpError::HeadTooLarge(limits.max_head_bytes));
            }
            if self.fill().await? == 0 {
                return if self.buffer.is_empty() {
                    Ok(None)
                } else {
                    Err(HttpError::Truncated)
                };
            }
        };
        if head_end > limits.max_head_bytes {
            return Err(HttpError::HeadTooLarge(limits.max_head_bytes));
        }
        let mut request = parse_head(&self.buffer[..head_end], limits)?;
        self.buffer.drain(..head_end);

        let chunked = request
            .header("transfer-encoding")
            .is_some_and(|value| value.to_ascii_lowercase().contains("chunked"));
        let content_length = match request.header("content-length") {
            Some(value) => Some(value.trim().parse::<usize>().map_err(|_| {
                HttpError::Malformed(format!("Content-Length `{value}` is not a number"))
            })?),
            None => None,
        };
        let expects_continue = request
            .header("expect")
            .is_some_and(|value| value.eq_ignore_ascii_case("100-continue"));
        let needs_body = chunked || content_length.is_some_and(|length| length > 0);
        if expects_continue && needs_body {
            // Refuse before the client sends a body we would not accept.
            if content_length.is_some_and(|length| length > limits.max_body_bytes) {
                return Err(HttpError::BodyTooLarge(limits.max_body_bytes));
            }
            self.write(b"HTTP/1.1 100 Continue\r\n\r\n").await?;
        }

        request.body = if chunked {
            self.read_chunked_body(limits).await?
        } else if let Some(length) = content_length {
            if length > limits.max_body_bytes {
                return Err(HttpError::BodyTooLarge(limits.max_body_bytes));
            }
            while self.buffer.len() < length {
                if self.fill().await? == 0 {
                    return Err(HttpError::Truncated);
                }
            }
            self.buffer.drain(..length).collect()
        } else {
            Vec::new()
        };
        Ok(Some(request))
    }

    async fn read_chunked_body(&mut self, limits: Limits) -> Result<Vec<u8>, HttpError> {
        loop {
            match decode_chunked(&self.buffer, limits.max_body_bytes)? {
                Some((body, consumed)) => {
                    self.buffer.drain(..consumed);
                    return Ok(body);
                }
                None => {
                    if self.fill().await? == 0 {
                        return Err(HttpError::Truncated);
                    }
                }
            }
        }
    }

    async fn fill(&mut self) -> io::Result<usize> {
        let mut scratch = [0u8; 16 * 1024];
        let read = self.stream.read(&mut scratch).await?;
        self.buffer.extend_from_slice(&scratch[..read]);
        Ok(read)
    }

    /// Writes `bytes` completely; when this returns they are in the kernel's send buffer.
    pub async fn write(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.stream.write_all(bytes).await
    }

    /// Resolves once the peer has closed the connection (or it failed). If the peer sends more
    /// data instead (a pipelined request), it never resolves, leaving that data unread.
    pub async fn peer_closed(&self) {
        let mut probe = [0u8; 1];
        match self.stream.peek(&mut probe).await {
            Ok(0) | Err(_) => {}
            Ok(_) => std::future::pending::<()>().await,
        }
    }

    /// Sleeps until `deadline`; returns `false` early if the peer closed meanwhile.
    pub async fn sleep_unless_closed(&self, deadline: Instant) -> bool {
        if deadline <= Instant::now() {
            return true;
        }
        tokio::select! {
            () = tokio::time::sleep_until(deadline) => true,
            () = self.peer_closed() => false,
        }
    }

    /// Reads and discards until the peer closes or `limit` passes; returns whether it closed.
    pub async fn drain_until_closed(&mut self, limit: Duration) -> bool {
        let mut scratch = [0u8; 4 * 1024];
        let wait = async {
            loop {
                match self.stream.read(&mut scratch).await {
                    Ok(0) | Err(_) => return,
                    Ok(_) => {}
                }
            }
        };
        tokio::time::timeout(limit, wait).await.is_ok()
    }

    /// Makes closing this connection send a TCP RST instead of a FIN.
    pub fn arm_reset(&self) {
        let socket = socket2::SockRef::from(&self.stream);
        // If this fails the close is an ordinary FIN, which still cuts the stream short.
        let _ = socket.set_linger(Some(Duration::ZERO));
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack
        .windows(needle.len())
        .position(|window| window == needle)
}

fn parse_head(head: &[u8], limits: Limits) -> Result<HttpRequest, HttpError> {
    let mut slots = [httparse::EMPTY_HEADER; 64];
    let mut parsed = httparse::Request::new(&mut slots);
    match parsed.parse(head) {
        Ok(httparse::Status::Complete(_)) => {}
        Ok(httparse::Status::Partial) => {
            return Err(HttpError::Malformed("incomplete request head".into()))
        }
        Err(httparse::Error::TooManyHeaders) => {
            return Err(HttpError::HeadTooLarge(limits.max_head_bytes))
        }
        Err(error) => return Err(HttpError::Malformed(error.to_string())),
    }
    let target = parsed.path.unwrap_or("/");
    let (path, query) = match target.split_once('?') {
        Some((path, query)) => (path.to_string(), Some(query.to_string())),
        None => (target.to_string(), None),
    };
    let headers = parsed
        .headers
        .iter()
        .map(|header| {
            (
                header.name.to_ascii_lowercase(),
                String::from_utf8_lossy(header.value).into_owned(),
            )
        })
        .collect();
    Ok(HttpRequest {
        method: parsed.method.unwrap_or("GET").to_string(),
        path,
        query,
        minor_version: parsed.version.unwrap_or(1),
        headers,
        body: Vec::new(),
    })
}

/// Decodes a complete chunked body at the start of `buffer`: `Ok(None)` if more bytes are
/// needed, else the body and how many bytes it took (trailers included).
fn decode_chunked(
    buffer: &[u8],
    max_body_bytes: usize,
) -> Result<Option<(Vec<u8>, usize)>, HttpError> {
    let mut body = Vec::new();
    let mut at = 0;
    loop {
        let Some(line_length) = find(&buffer[at..], b"\r\n") else {
            return Ok(None);
        };
        let line = String::from_utf8_lossy(&buffer[at..at + line_length]);
        let size_text = line.split(';').next().unwrap_or("").trim();
        let size = usize::from_str_radix(size_text, 16).map_err(|_| {
            HttpError::Malformed(format!("chunk size `{size_text}` is not hexadecimal"))
        })?;
        at += line_length + 2;
        if size == 0 {
            // Trailers end with an empty line; the simplest case is the CRLF right here.
            loop {
                let Some(trailer_length) = find(&buffer[at..], b"\r\n") else {
                    return Ok(None);
                };
                at += trailer_length + 2;
                if trailer_length == 0 {
                    return Ok(Some((body, at)));
                }
            }
        }
        if body.len() + size > max_body_bytes {
            return Err(HttpError::BodyTooLarge(max_body_bytes));
        }
        if buffer.len() < at + size + 2 {
            return Ok(None);
        }
        body.extend_from_slice(&buffer[at..at + size]);
        if &buffer[at + size..at + size + 2] != b"\r\n" {
            return Err(HttpError::Malformed(
                "chunk data is not followed by CRLF".into(),
            ));
        }
        at += size + 2;
    }
}

/// The reason phrase for the statuses the simulator sends.
pub fn reason_phrase(status: u16) -> &'static str {
    match status {
        100 => "Continue",
        200 => "OK",
        204 => "No Content",
        400 => "Bad Request",
        401 => "Unauthorized",
        404 => "Not Found",
        405 => "Method Not Allowed",
        413 => "Content Too Large",
        429 => "Too Many Requests",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        _ => "Unknown",
    }
}

/// A response head: status line, headers and the blank line.
pub fn response_head(status: u16, headers: &[(String, String)]) -> Vec<u8> {
    let mut head = format!("HTTP/1.1 {status} {}\r\n", reason_phrase(status));
    for (name, value) in headers {
        head.push_str(name);
        head.push_str(": ");
        head.push_str(value);
        head.push_str("\r\n");
    }
    head.push_str("\r\n");
    head.into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMITS: Limits = Limits {
        max_head_bytes: 1024,
        max_body_bytes: 64,
    };

    #[test]
    fn parses_a_head_with_query_and_lowercased_headers() {
        let request = parse_head(
            b"GET /sim/truth?since=4 HTTP/1.1\r\nHost: x\r\nConnection: Close\r\n\r\n",
            LIMITS,
        )
        .expect("a valid head");
        assert_eq!(request.method, "GET");
        assert_eq!(request.path, "/sim/truth");
        assert_eq!(request.query.as_deref(), Some("since=4"));
        assert_eq!(request.header("host"), Some("x"));
        assert!(!request.keeps_alive());
        let old = parse_head(b"GET / HTTP/1.0\r\n\r\n", LIMITS).expect("a valid head");
        assert!(!old.keeps_alive(), "HTTP/1.0 closes unless asked not to");
        assert!(matches!(
            parse_head(b"\x01\x02 nonsense\r\n\r\n", LIMITS),
            Err(HttpError::Malformed(_))
        ));
    }

    #[test]
    fn decodes_chunked_bodies_incrementally() {
        let whole = b"4\r\nWiki\r\n5;ext=1\r\npedia\r\n0\r\n\r\nNEXT";
        for cut in 0..whole.len() - 4 {
            assert_eq!(
                decode_chunked(&whole[..cut], 64).expect("valid so far"),
                None,
                "cut at {cut}"
            );
        }
        let (body, used) = decode_chunked(whole, 64).expect("valid").expect("complete");
        assert_eq!(body, b"Wikipedia");
        assert_eq!(&whole[used..], b"NEXT");
        assert!(matches!(
            decode_chunked(whole, 5),
            Err(HttpError::BodyTooLarge(5))
        ));
        assert!(matches!(
            decode_chunked(b"zz\r\n", 64),
            Err(HttpError::Malformed(_))
        ));
    }

    #[test]
    fn response_heads_end_with_a_blank_line() {
        let head = response_head(204, &[("content-length".into(), "0".into())]);
        assert_eq!(
            head,
            b"HTTP/1.1 204 No Content\r\ncontent-length: 0\r\n\r\n"
        );
    }
}
