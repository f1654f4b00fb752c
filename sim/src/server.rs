//! Listeners, connections and routing: everything between an accepted socket and the chat and
//! completions handler, plus the small endpoints (`/health`, `/v1/models`, `/sim/truth`, and
//! vLLM's `/metrics` and `/reset_prefix_cache`) and CORS.

use std::io;
use std::net::SocketAddr;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::Serialize;
use tokio::net::{TcpListener, TcpSocket, TcpStream};
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::config::SimConfig;
use crate::engine::Engine;
use crate::faults::FAULT_HEADER;
use crate::http::{response_head, Connection, HttpError, HttpRequest, Limits};
use crate::metrics::render_vllm;
use crate::prefix_cache::PrefixCache;
use crate::reply::{check_api_key, send, send_without_cors, to_json, Reply};
use crate::request;
use crate::shared::Shared;
use crate::truth::{Api, JsonlOpenError, ScrapeEndpoint, ScrapeRecord, SimClock, Stamp, TruthLog};
use crate::wire::ErrorBody;

/// How long an idle keep-alive connection may wait for its next request.
const IDLE_TIMEOUT: Duration = Duration::from_secs(120);
/// Largest request head accepted.
const MAX_HEAD_BYTES: usize = 64 * 1024;
/// Pending connections the kernel may hold per listener, so bursts of connects are not dropped.
const LISTEN_BACKLOG: u32 = 4096;

/// Why the server could not start.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    /// The configuration is invalid.
    #[error(transparent)]
    Config(#[from] crate::config::ConfigError),
    /// A port could not be bound.
    #[error("cannot listen on {addr} ({source}); pick a free port with --port (or 0 for any)")]
    Bind {
        /// The address tried.
        addr: SocketAddr,
        /// The socket error.
        #[source]
        source: io::Error,
    },
    /// The truth file could not be opened.
    #[error(transparent)]
    Jsonl(#[from] JsonlOpenError),
}

/// A running simulator. Dropping it leaves the server running until the runtime ends; call
/// [`Running::shutdown`] to stop it.
pub struct Running {
    /// The bound addresses, one per `--port`, in order.
    pub addrs: Vec<SocketAddr>,
    /// The truth log.
    pub truth: Arc<TruthLog>,
    shared: Arc<Shared>,
    stop: watch::Sender<bool>,
    listeners: Vec<JoinHandle<()>>,
}

impl Running {
    /// `http://<first address>/v1`, the base URL a client should use.
    pub fn base_url(&self) -> String {
        self.addrs
            .first()
            .map(|addr| format!("http://{addr}/v1"))
            .unwrap_or_default()
    }

    /// The server's clock, to put a client's readings on the truth log's time axis.
    pub fn clock(&self) -> SimClock {
        self.shared.clock
    }

    /// Sequences admitted right now.
    pub fn active_sequences(&self) -> usize {
        self.shared.engine.active()
    }

    /// The most sequences that were ever admitted at once.
    pub fn peak_active_sequences(&self) -> usize {
        self.shared.engine.peak_active()
    }

    /// Stops accepting, cuts open connections, and flushes the truth file.
    pub async fn shutdown(self) {
        // Receivers may all be gone already; then there is nothing left to stop.
        let _ = self.stop.send(true);
        for listener in self.listeners {
            let _ = listener.await;
        }
        // Give cancelled connection tasks a moment to record their last truth.
        tokio::task::yield_now().await;
        self.truth.close_file();
    }
}

/// Starts a simulator on the current tokio runtime and returns once every port is bound.
pub async fn spawn(config: SimConfig) -> Result<Running, SimError> {
    config.validate()?;
    let clock = SimClock::start();
    let truth = Arc::new(TruthLog::new(
        clock,
        config.truth_capacity,
        config.truth_jsonl.as_deref(),
    )?);
    let engine = Arc::new(Engine::new(
        config.latency.clone(),
        PrefixCache::new(config.prefix_block_bytes, config.prefix_cache_blocks),
    ));
    let mut bound = Vec::with_capacity(config.ports.len());
    for port in &config.ports {
        let addr = SocketAddr::new(config.host, *port);
        let listener = bind(addr).map_err(|source| SimError::Bind { addr, source })?;
        let local = listener
            .local_addr()
            .map_err(|source| SimError::Bind { addr, source })?;
        bound.push((listener, local));
    }
    let started_unix_s = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|elapsed| elapsed.as_secs())
        .unwrap_or(0);
    let shared = Arc::new(Shared {
        config,
        clock,
        truth: Arc::clone(&truth),
        engine,
        next_request: AtomicU64::new(0),
        started_unix_s,
    });
    let (stop, stopped) = watch::channel(false);
    let addrs = bound.iter().map(|(_, addr)| *addr).collect();
    let listeners = bound
        .into_iter()
        .map(|(listener, _)| {
            tokio::spawn(accept_loop(Arc::clone(&shared), listener, stopped.clone()))
        })
        .collect();
    Ok(Running {
        addrs,
        truth,
        shared,
        stop,
        listeners,
    })
}

fn bind(addr: SocketAddr) -> io::Result<TcpListener> {
    let socket = if addr.is_ipv4() {
        TcpSocket::new_v4()?
    } else {
        TcpSocket::new_v6()?
    };
    socket.set_reuseaddr(true)?;
    socket.bind(addr)?;
    socket.listen(LISTEN_BACKLOG)
}

async fn accept_loop(
    shared: Arc<Shared>,
    listener: TcpListener,
    mut stopped: watch::Receiver<bool>,
) {
    loop {
        tokio::select! {
            _ = stopped.changed() => return,
            accepted = listener.accept() => match accepted {
                Ok((stream, _peer)) => {
                    tokio::spawn(serve_connection(Arc::clone(&shared), stream, stopped.clone()));
                }
                Err(error) => {
                    // Out of file descriptors or similar: back off instead of spinning.
                    eprintln!("strobe-sim: accept failed ({error}); retrying");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            },
        }
    }
}

async fn serve_connection(
    shared: Arc<Shared>,
    stream: TcpStream,
    mut stopped: watch::Receiver<bool>,
) {
    let mut connection = Connection::new(stream);
    let limits = Limits {
        max_head_bytes: MAX_HEAD_BYTES,
        max_body_bytes: shared.config.max_body_bytes,
    };
    loop {
        let next = tokio::select! {
            _ = stopped.changed() => return,
            next = tokio::time::timeout(IDLE_TIMEOUT, connection.read_request(limits)) => next,
        };
        let request = match next {
            // Idle too long, or the peer closed between requests.
            Err(_) | Ok(Ok(None)) => return,
            Ok(Err(error)) => {
                answer_unreadable(&mut connection, &error).await;
                return;
            }
            Ok(Ok(Some(request))) => request,
        };
        let keep_alive = tokio::select! {
            _ = stopped.changed() => return,
            keep_alive = route(&shared, &mut connection, request) => keep_alive,
        };
        if !keep_alive {
            return;
        }
    }
}

async fn answer_unreadable(connection: &mut Connection, error: &HttpError) {
    let Some(status) = error.status() else {
        return;
    };
    let body = ErrorBody::new(error.to_string(), "invalid_request_error", None, None).to_json();
    let headers = vec![
        ("content-type".to_string(), "application/json".to_string()),
        ("content-length".to_string(), body.len().to_string()),
        ("connection".to_string(), "close".to_string()),
    ];
    let mut bytes = response_head(status, &headers);
    bytes.extend_from_slice(body.as_bytes());
    // The connection is closed right after; a failed write changes nothing.
    let _ = connection.write(&bytes).await;
}

/// Handles one request; returns whether the connection may carry another.
async fn route(shared: &Arc<Shared>, connection: &mut Connection, request: HttpRequest) -> bool {
    let keep_alive = request.keeps_alive();
    let path = match request.path.trim_end_matches('/') {
        "" => "/",
        trimmed => trimmed,
    }
    .to_string();
    let method = request.method.as_str();
    if method == "OPTIONS" {
        return send(connection, &request, preflight(&request), keep_alive).await;
    }
    let reply = match (method, path.as_str()) {
        ("POST", "/v1/chat/completions") => {
            return request::handle(shared, connection, request, Api::Chat).await;
        }
        ("POST", "/v1/completions") => {
            return request::handle(shared, connection, request, Api::Completions).await;
        }
        ("GET", "/health") => Reply::json(200, r#"{"status":"ok"}"#.to_string()),
        ("GET", "/v1/models") => match check_api_key(&shared.config, &request) {
            Some(denied) => denied,
            None => Reply::json(200, models_body(shared)),
        },
        // As vLLM's, the metrics and the cache reset are outside /v1, so no API key guards them.
        ("GET", "/metrics") => {
            let reply = metrics_reply(shared, connection.port());
            if !shared.config.metrics_cors {
                // `--metrics-cors off`: a page of another origin cannot read this answer.
                return send_without_cors(connection, reply, keep_alive).await;
            }
            reply
        }
        ("POST", "/reset_prefix_cache") => {
            let received = hold_reset(shared).await;
            reset_prefix_cache(shared, connection.port(), received)
        }
        ("GET" | "POST", "/flush_cache") => {
            let received = hold_reset(shared).await;
            flush_cache(shared, connection.port(), received)
        }
        ("GET", "/sim/truth") => {
            let query = request.query.as_deref();
            match (parse_seq(query, "since"), parse_seq(query, "scrapes_since")) {
                (Ok(since), Ok(scrapes_since)) => {
                    Reply::json(200, to_json(&shared.truth.page(since, scrapes_since)))
                }
                (Err(message), _) => Reply::error(
                    400,
                    ErrorBody::new(message, "invalid_request_error", Some("since"), None),
                ),
                (_, Err(message)) => Reply::error(
                    400,
                    ErrorBody::new(
                        message,
                        "invalid_request_error",
                        Some("scrapes_since"),
                        None,
                    ),
                ),
            }
        }
        ("POST", "/sim/truth/reset") | ("DELETE", "/sim/truth") => {
            let dropped = shared.truth.reset();
            let body = format!(
                r#"{{"dropped":{dropped},"last_seq":{}}}"#,
                shared.truth.last_seq()
            );
            Reply::json(200, body)
        }
        (
            _,
            "/health"
            | "/v1/models"
            | "/v1/chat/completions"
            | "/v1/completions"
            | "/sim/truth"
            | "/sim/truth/reset"
            | "/metrics"
            | "/reset_prefix_cache"
            | "/flush_cache",
        ) => {
            let message = format!("{method} is not allowed on {path}");
            let mut reply = Reply::error(
                405,
                ErrorBody::new(message, "invalid_request_error", None, None),
            );
            reply
                .headers
                .push(("allow".into(), allowed_methods(&path).into()));
            reply
        }
        _ => {
            let message = format!(
                "{path} is not an endpoint of strobe-sim; use /v1/chat/completions, /v1/completions, /v1/models, /metrics, /reset_prefix_cache, /flush_cache, /sim/truth or /health"
            );
            Reply::error(
                404,
                ErrorBody::new(message, "invalid_request_error", None, Some("not_found")),
            )
        }
    };
    send(connection, &request, reply, keep_alive).await
}

fn allowed_methods(path: &str) -> &'static str {
    match path {
        "/v1/chat/completions" | "/v1/completions" | "/sim/truth/reset" | "/reset_prefix_cache" => {
            "POST, OPTIONS"
        }
        "/sim/truth" => "GET, DELETE, OPTIONS",
        "/flush_cache" => "GET, POST, OPTIONS",
        _ => "GET, OPTIONS",
    }
}

/// The integer query parameter `name` (a record seq), 0 when absent.
fn parse_seq(query: Option<&str>, name: &str) -> Result<u64, String> {
    let Some(query) = query else {
        return Ok(0);
    };
    for pair in query.split('&') {
        if let Some(value) = pair
            .strip_prefix(name)
            .and_then(|rest| rest.strip_prefix('='))
        {
            return value.parse::<u64>().map_err(|_| {
                format!("{name} must be a record seq (an integer ≥ 0), got `{value}`")
            });
        }
    }
    Ok(0)
}

/// `GET /metrics`: the engine's state in vLLM's names, recorded in the truth log as answered.
fn metrics_reply(shared: &Shared, port: u16) -> Reply {
    let received = shared.clock.now();
    let snapshot = shared.engine.metrics();
    let model = shared.config.models.first().map_or("", String::as_str);
    let body = render_vllm(&snapshot, model);
    shared.truth.push_scrape(ScrapeRecord {
        seq: 0,
        port,
        endpoint: ScrapeEndpoint::Metrics,
        received,
        status: 200,
        metrics: Some(snapshot),
        cleared_blocks: None,
    });
    Reply {
        status: 200,
        headers: vec![(
            "content-type".into(),
            "text/plain; version=0.0.4; charset=utf-8".into(),
        )],
        body,
    }
}

/// When a reset arrived; it is done `--reset-delay-ms` later.
async fn hold_reset(shared: &Shared) -> Stamp {
    let received = shared.clock.now();
    if shared.config.reset_delay_ms > 0 {
        tokio::time::sleep(Duration::from_millis(shared.config.reset_delay_ms)).await;
    }
    received
}

/// `POST /reset_prefix_cache`: empties the prefix cache and, as vLLM, answers 200 with no body.
fn reset_prefix_cache(shared: &Shared, port: u16, received: Stamp) -> Reply {
    let cleared = shared.engine.reset_prefix_cache();
    shared.truth.push_scrape(ScrapeRecord {
        seq: 0,
        port,
        endpoint: ScrapeEndpoint::ResetPrefixCache,
        received,
        status: 200,
        metrics: None,
        cleared_blocks: Some(cleared),
    });
    Reply {
        status: 200,
        headers: Vec::new(),
        body: String::new(),
    }
}

/// What SGLang's `/flush_cache` answers, whether it flushed (200) or not (400).
const FLUSH_CACHE_TEXT: &str = "Cache flushed.\nPlease check backend logs for more details. (When \
there are running or waiting requests, the operation will not be performed.)\n";

/// `GET` or `POST /flush_cache`: as SGLang, empties the prefix cache and answers 200, or
/// answers 400 and keeps it while requests run or wait.
fn flush_cache(shared: &Shared, port: u16, received: Stamp) -> Reply {
    let cleared = shared.engine.flush_cache();
    let status = if cleared.is_some() { 200 } else { 400 };
    shared.truth.push_scrape(ScrapeRecord {
        seq: 0,
        port,
        endpoint: ScrapeEndpoint::FlushCache,
        received,
        status,
        metrics: None,
        cleared_blocks: cleared,
    });
    Reply {
        status,
        headers: vec![("content-type".into(), "text/plain; charset=utf-8".into())],
        body: FLUSH_CACHE_TEXT.to_owned(),
    }
}

#[derive(Serialize)]
struct ModelList<'a> {
    object: &'static str,
    data: Vec<ModelCard<'a>>,
}

#[derive(Serialize)]
struct ModelCard<'a> {
    id: &'a str,
    object: &'static str,
    created: u64,
    owned_by: &'static str,
    root: &'a str,
    parent: Option<&'a str>,
    max_model_len: u32,
}

fn models_body(shared: &Shared) -> String {
    let list = ModelList {
        object: "list",
        data: shared
            .config
            .models
            .iter()
            .map(|id| ModelCard {
                id,
                object: "model",
                created: shared.started_unix_s,
                owned_by: "strobe-sim",
                root: id,
                parent: None,
                max_model_len: shared.config.max_model_len,
            })
            .collect(),
    };
    to_json(&list)
}

fn preflight(request: &HttpRequest) -> Reply {
    let allowed_headers = request
        .header("access-control-request-headers")
        .filter(|requested| !requested.trim().is_empty())
        .map(str::to_string)
        .unwrap_or_else(|| format!("authorization, content-type, {FAULT_HEADER}"));
    let mut headers = vec![
        (
            "access-control-allow-methods".into(),
            "GET, POST, DELETE, OPTIONS".into(),
        ),
        ("access-control-allow-headers".into(), allowed_headers),
        ("access-control-max-age".into(), "600".into()),
    ];
    // Chrome's Private Network Access asks before a public page may reach 127.0.0.1.
    if request
        .header("access-control-request-private-network")
        .is_some_and(|value| value.eq_ignore_ascii_case("true"))
    {
        headers.push(("access-control-allow-private-network".into(), "true".into()));
    }
    Reply {
        status: 204,
        headers,
        body: String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reply::cors_headers;

    fn request(headers: &[(&str, &str)]) -> HttpRequest {
        HttpRequest {
            method: "OPTIONS".into(),
            path: "/v1/chat/completions".into(),
            query: None,
            minor_version: 1,
            headers: headers
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            body: Vec::new(),
        }
    }

    fn header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
        headers
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
    }

    #[test]
    fn preflight_allows_what_the_page_asks_for() {
        let asked = request(&[
            ("origin", "http://127.0.0.1:8080"),
            ("access-control-request-method", "POST"),
            (
                "access-control-request-headers",
                "authorization,content-type",
            ),
            ("access-control-request-private-network", "true"),
        ]);
        let reply = preflight(&asked);
        assert_eq!(reply.status, 204);
        assert_eq!(
            header(&reply.headers, "access-control-allow-headers"),
            Some("authorization,content-type")
        );
        assert_eq!(
            header(&reply.headers, "access-control-allow-private-network"),
            Some("true")
        );
        let cors = cors_headers(&asked);
        assert_eq!(
            header(&cors, "access-control-allow-origin"),
            Some("http://127.0.0.1:8080")
        );
        assert_eq!(
            header(&cors, "cross-origin-resource-policy"),
            Some("cross-origin")
        );
        let bare = preflight(&request(&[]));
        assert!(header(&bare.headers, "access-control-allow-headers")
            .is_some_and(|v| v.contains("authorization")));
    }

    #[test]
    fn since_defaults_to_zero_and_rejects_junk() {
        assert_eq!(parse_seq(None, "since"), Ok(0));
        assert_eq!(parse_seq(Some("x=1&since=7"), "since"), Ok(7));
        assert!(parse_seq(Some("since=-1"), "since").is_err());
        let both = Some("scrapes_since=3&since=9");
        assert_eq!(parse_seq(both, "since"), Ok(9));
        assert_eq!(parse_seq(both, "scrapes_since"), Ok(3));
        assert_eq!(parse_seq(Some("sinceX=4"), "since"), Ok(0));
    }

    #[test]
    fn the_api_key_must_match_exactly() {
        let config = SimConfig {
            api_key: Some("k".into()),
            ..SimConfig::default()
        };
        assert!(check_api_key(&config, &request(&[("authorization", "Bearer k")])).is_none());
        let wrong =
            check_api_key(&config, &request(&[("authorization", "Bearer x")])).expect("denied");
        assert_eq!(wrong.status, 401);
        assert!(wrong.body.contains("Incorrect API key"));
        assert!(check_api_key(&config, &request(&[])).is_some());
        assert!(check_api_key(&SimConfig::default(), &request(&[])).is_none());
    }
}
