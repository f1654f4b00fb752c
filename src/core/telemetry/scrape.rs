//! The scrape schedule as a pure state machine (docs/guide/telemetry.md, *Scraping*): where to
//! scrape, when the next scrape is due, what each answer or failure becomes, and the
//! `server_metrics` block at the end. The caller owns the clock and the network: it asks
//! [`ScrapeSession::next_send`] on its timer, sends, and reports back with
//! [`ScrapeSession::answered`] or [`ScrapeSession::failed`]; all times are ms on the run's
//! clock.
//!
//! One scrape at a time: a scrape still unanswered when the next is due delays it, so a slow
//! server is never sent a pile of them. A server that has no `/metrics` or refuses the page is
//! given up on after a few tries, with a note that says how to enable it; the run goes on. When
//! the endpoint check just before the run found that already, the run does not ask at all.

use std::collections::BTreeMap;

pub use crate::core::config::metrics::{credential_in_url, default_metrics_url};

use crate::core::config::settings::url_origin;

use crate::core::schema::server_metrics::{ServerMetricsBlock, ServerMetricsSample, INTERVAL_MS};
use crate::core::telemetry::engines::Family;
use crate::core::telemetry::exposition::read_exposition;
use crate::core::telemetry::summary::{summarize, Window};

/// Failures in a row, of a kind that will not mend by itself, before scraping stops.
pub const GIVE_UP_AFTER: u32 = 3;
/// Longest a scrape may take before the caller should abort it, ms.
pub const MAX_TIMEOUT_MS: f64 = 5_000.0;
/// Shortest scrape timeout, ms: a busy server that answers in 150 ms at a 100 ms interval gave
/// a sample (late, and the next scrape waits for it), not a failure.
pub const MIN_TIMEOUT_MS: f64 = 1_000.0;
/// Distinct reading notes kept for the block.
const MAX_READING_NOTES: usize = 8;

/// Why a scrape brought no sample.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum ScrapeFailure {
    /// `fetch` failed without a status: the server is down, or it does not allow this page's
    /// origin (CORS); a browser cannot tell the two apart.
    Unreachable,
    /// Aborted after [`ScrapeSession::timeout_ms`].
    Timeout,
    /// An HTTP status other than 200.
    Status(u16),
}

impl ScrapeFailure {
    /// Whether trying again is pointless: nothing there, refused, or blocked.
    fn is_lasting(&self) -> bool {
        matches!(
            self,
            ScrapeFailure::Unreachable | ScrapeFailure::Status(401 | 403 | 404 | 405 | 501)
        )
    }

    /// What happened and what to do, for the block's notes. `api_answered`: the server at the
    /// metrics URL's origin answered the run's own requests, so one that gave no readable
    /// answer to a scrape is not down but keeps this page's origin out of `/metrics` (CORS).
    pub fn advice(&self, api_answered: bool) -> String {
        match self {
            ScrapeFailure::Unreachable if api_answered => "no answer the page could read, \
                 though the same server answered the run's requests: it does not let this \
                 page's origin read /metrics (CORS). To read them, let it: vLLM and SGLang \
                 allow every origin on /metrics as on /v1, llama-server --metrics echoes the \
                 page's origin, TGI follows --cors-allow-origin, and a proxy in front of the \
                 server must send Access-Control-Allow-Origin on /metrics as it does on /v1 \
                 (docs/guide/telemetry.md); or set server_metrics to off"
                .to_owned(),
            ScrapeFailure::Unreachable => "no answer the page could read: the server is down, \
                 or it does not allow this page's origin on /metrics (CORS; docs/guide/telemetry.md \
                 names each engine's flag)"
                .to_owned(),
            ScrapeFailure::Timeout => format!(
                "no answer within the timeout (at most {MAX_TIMEOUT_MS} ms); the server may be \
                 too busy to answer its metrics"
            ),
            ScrapeFailure::Status(404) => "HTTP 404: this server has no /metrics here; vLLM \
                 serves it by default, SGLang needs --enable-metrics, llama-server --metrics, \
                 and Ollama has none (or give the metrics URL if they are on another port)"
                .to_owned(),
            ScrapeFailure::Status(501) => "HTTP 501: this server serves no metrics as started \
                 (llama-server answers 501 on /metrics until it is started with --metrics)"
                .to_owned(),
            ScrapeFailure::Status(status @ (401 | 403)) => format!(
                "HTTP {status}: the metrics need a key (llama-server with --api-key guards \
                 /metrics too)"
            ),
            ScrapeFailure::Status(503) => {
                "HTTP 503: the server is not ready (llama-server answers 503 while it loads)"
                    .to_owned()
            }
            ScrapeFailure::Status(status) => format!("HTTP {status}"),
        }
    }
}

/// The scrapes of one run.
#[derive(Clone, Debug)]
pub struct ScrapeSession {
    source: String,
    interval_ms: u64,
    /// When the scrape in flight was sent.
    in_flight: Option<f64>,
    /// When the last scrape was sent.
    last_sent: Option<f64>,
    /// A scrape was asked for out of turn and not yet sent.
    now_wanted: bool,
    samples: Vec<ServerMetricsSample>,
    failures: BTreeMap<ScrapeFailure, u32>,
    lasting_in_a_row: u32,
    gave_up: bool,
    reading_notes: Vec<String>,
    /// The server at the metrics URL's origin answered the run's requests.
    api_answered: bool,
    /// Not scraped at all: the endpoint check found a failure that will not mend, this advice.
    not_scraped: Option<String>,
}

impl ScrapeSession {
    /// Scrapes of `url` every `interval_ms` (clamped to [`INTERVAL_MS`]). The first is due at
    /// once: the baseline before warm-up.
    pub fn new(url: &str, interval_ms: u64) -> Self {
        Self {
            source: url.to_owned(),
            interval_ms: interval_ms.clamp(*INTERVAL_MS.start(), *INTERVAL_MS.end()),
            in_flight: None,
            last_sent: None,
            now_wanted: false,
            samples: Vec::new(),
            failures: BTreeMap::new(),
            lasting_in_a_row: 0,
            gave_up: false,
            reading_notes: Vec::new(),
            api_answered: false,
            not_scraped: None,
        }
    }

    /// The session of a run that scrapes `url`, given the endpoint check just before it
    /// (`check`): when that check asked the same URL and found it failing in a way that will
    /// not mend by itself ([`MetricsCheck::lasting`]), the session sends nothing and its block
    /// holds one note that says why; otherwise it scrapes ([`Self::new`]). A check of another
    /// URL (the form changed since) says nothing about this one.
    pub fn for_run(url: &str, interval_ms: u64, check: Option<&MetricsCheck>) -> Self {
        let lasting = check
            .filter(|check| check.url == url)
            .and_then(|check| check.lasting.as_deref());
        match lasting {
            Some(advice) => Self::not_scraped(url, interval_ms, advice),
            None => Self::new(url, interval_ms),
        }
    }

    /// A session that sends nothing: the endpoint check just before the run found `url`
    /// failing in a way that will not mend by itself ([`MetricsCheck::lasting`], its advice),
    /// so the run does not ask again (each failed fetch is also an error line in the browser's
    /// console). Its block has no samples and one note that says why and what to do.
    fn not_scraped(url: &str, interval_ms: u64, advice: &str) -> Self {
        let mut session = Self::new(url, interval_ms);
        session.gave_up = true;
        session.not_scraped = Some(advice.to_owned());
        session
    }

    /// The interval between scrapes, ms.
    pub fn interval_ms(&self) -> u64 {
        self.interval_ms
    }

    /// How long one scrape may take before the caller aborts it: the interval, held between
    /// [`MIN_TIMEOUT_MS`] and [`MAX_TIMEOUT_MS`].
    pub fn timeout_ms(&self) -> f64 {
        (self.interval_ms as f64).clamp(MIN_TIMEOUT_MS, MAX_TIMEOUT_MS)
    }

    /// Whether scraping stopped because the server cannot be scraped.
    pub fn gave_up(&self) -> bool {
        self.gave_up
    }

    /// Whether a scrape should be sent at `now_ms`; if so it is counted as sent then.
    pub fn next_send(&mut self, now_ms: f64) -> bool {
        if self.gave_up || self.in_flight.is_some() {
            return false;
        }
        let due = match self.last_sent {
            None => true,
            Some(_) if self.now_wanted => true,
            Some(last) => now_ms >= last + self.interval_ms as f64,
        };
        if due {
            self.in_flight = Some(now_ms);
            self.last_sent = Some(now_ms);
            self.now_wanted = false;
        }
        due
    }

    /// A scrape is due as soon as none is in flight, whatever the interval. Call it when the
    /// warm-up has ended, so the counters count from a sample that leaves the warm-up out, and
    /// when the last request has ended, for the final scrape.
    pub fn want_now(&mut self) {
        self.now_wanted = true;
    }

    /// The scrape sent at `sent_ms` was answered at `now_ms` with `status` and `body`.
    pub fn answered(&mut self, sent_ms: f64, now_ms: f64, status: u16, body: &[u8]) {
        if status != 200 {
            self.failed(sent_ms, ScrapeFailure::Status(status));
            return;
        }
        self.settle(sent_ms);
        self.lasting_in_a_row = 0;
        let mut reading = read_exposition(body);
        for note in reading.notes.drain(..) {
            let note = note.to_string();
            if self.reading_notes.len() < MAX_READING_NOTES && !self.reading_notes.contains(&note) {
                self.reading_notes.push(note);
            }
        }
        if reading.values.is_empty() {
            return;
        }
        self.samples.push(ServerMetricsSample {
            t_ms: sent_ms,
            latency_ms: (now_ms - sent_ms).max(0.0),
            values: reading.values,
        });
    }

    /// The scrape sent at `sent_ms` brought nothing.
    pub fn failed(&mut self, sent_ms: f64, failure: ScrapeFailure) {
        self.settle(sent_ms);
        if failure.is_lasting() {
            self.lasting_in_a_row += 1;
            if self.lasting_in_a_row >= GIVE_UP_AFTER {
                self.gave_up = true;
            }
        } else {
            self.lasting_in_a_row = 0;
        }
        *self.failures.entry(failure).or_insert(0) += 1;
    }

    fn settle(&mut self, sent_ms: f64) {
        if self.in_flight == Some(sent_ms) {
            self.in_flight = None;
        }
    }

    /// The run's requests to `base_url` were answered (it completed some): when that is the
    /// metrics URL's origin, a scrape with no readable answer there was kept out by CORS, not
    /// sent to a server that is down, and its note says so and how to let the page in.
    pub fn api_answered_at(&mut self, base_url: &str) {
        let origin = url_origin(base_url);
        if origin.is_some() && origin == url_origin(&self.source) {
            self.api_answered = true;
        }
    }

    /// The samples so far, oldest first (for a live chart).
    pub fn samples(&self) -> &[ServerMetricsSample] {
        &self.samples
    }

    /// The `server_metrics` block, summarized over `window` when given. `source` keeps no
    /// credential: a URL that carries one is written as its origin and path only.
    pub fn finish(self, window: Option<Window>) -> ServerMetricsBlock {
        let mut samples = self.samples;
        samples.sort_by(|a, b| a.t_ms.total_cmp(&b.t_ms));
        let family = Family::detect(
            samples
                .iter()
                .flat_map(|sample| sample.values.keys())
                .map(String::as_str),
        );
        let mut notes: Vec<String> = self
            .failures
            .iter()
            .map(|(failure, count)| {
                let scrapes = if *count == 1 { "scrape" } else { "scrapes" };
                format!(
                    "{count} {scrapes} failed: {}",
                    failure.advice(self.api_answered)
                )
            })
            .collect();
        if let Some(advice) = &self.not_scraped {
            notes.push(format!(
                "not scraped: the endpoint check before the run found {advice}; the run went \
                 on without the server's view"
            ));
        } else if self.gave_up {
            notes.push(format!(
                "scraping stopped after {GIVE_UP_AFTER} failures in a row; the run went on"
            ));
        }
        notes.extend(self.reading_notes);
        let summary = window
            .filter(|_| !samples.is_empty())
            .map(|window| summarize(&samples, family, window));
        ServerMetricsBlock {
            source: shareable_source(&self.source),
            interval_ms: self.interval_ms,
            family: family.as_str().to_owned(),
            samples,
            summary,
            notes,
        }
    }
}

/// What the endpoint check found at the metrics URL: whether runs will have the server's own
/// view, in one line for the page.
#[derive(Clone, Debug, PartialEq)]
pub struct MetricsCheck {
    /// The URL checked.
    pub url: String,
    /// The URL answered with metrics strobe can read.
    pub found: bool,
    /// The line: what answered and how often runs scrape it, or why not and what to do.
    pub text: String,
    /// A failure that will not mend by itself (a 404 or 501, a key wanted, CORS, nothing
    /// listening), as advice: runs of this URL do not scrape it
    /// ([`ScrapeSession::for_run`]). `None` when metrics were found, or the failure may
    /// pass (a timeout, a 503, an answer that is not Prometheus text).
    pub lasting: Option<String>,
}

/// The endpoint check's verdict on one scrape of `url`: `outcome` is its status and body, or
/// why it brought neither; `api_answered` says the same origin answered the check's own
/// request (then an unreadable answer means CORS, not a server that is down). Runs scrape
/// every `interval_ms`. Text from the server is never quoted: only counts and names strobe
/// knows.
pub fn check_metrics_answer(
    url: &str,
    interval_ms: u64,
    outcome: Result<(u16, &[u8]), ScrapeFailure>,
    api_answered: bool,
) -> MetricsCheck {
    let source = shareable_source(url);
    let failure = match outcome {
        Ok((200, body)) => {
            let reading = read_exposition(body);
            if !reading.values.is_empty() {
                let family = Family::detect(reading.values.keys().map(String::as_str));
                let names = match family {
                    Family::Vllm => "vLLM's names",
                    Family::Sglang => "SGLang's names",
                    Family::Llamacpp => "llama.cpp's names",
                    Family::Tgi => "TGI's names",
                    Family::Unknown => "names strobe does not map (kept as they are)",
                };
                let interval = interval_ms.clamp(*INTERVAL_MS.start(), *INTERVAL_MS.end());
                return MetricsCheck {
                    url: url.to_owned(),
                    found: true,
                    lasting: None,
                    text: format!(
                        "Server metrics: {source} answers with {} metrics in {names}; each \
                         run scrapes it every {} s and puts the server's view beside its own.",
                        reading.values.len(),
                        interval as f64 / 1000.0
                    ),
                };
            }
            return MetricsCheck {
                url: url.to_owned(),
                found: false,
                lasting: None,
                text: format!(
                    "Server metrics: {source} answers, but with no metric strobe can read \
                     (is it a Prometheus /metrics page?). Runs go on without the server's \
                     view; give the metrics URL in server_metrics, or set it to off."
                ),
            };
        }
        Ok((status, _)) => ScrapeFailure::Status(status),
        Err(failure) => failure,
    };
    let advice = failure.advice(api_answered);
    MetricsCheck {
        url: url.to_owned(),
        found: false,
        text: format!("Server metrics: {source}: {advice}. Runs go on without the server's view."),
        lasting: failure.is_lasting().then_some(advice),
    }
}

/// `url` as it may be written into a shared file: unchanged, or without user information and
/// query when it carries a credential.
fn shareable_source(url: &str) -> String {
    if credential_in_url(url).is_none() {
        return url.to_owned();
    }
    let (scheme, rest) = url.split_once("://").unwrap_or(("http", url));
    let path_start = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let host = rest[..path_start]
        .rsplit_once('@')
        .map_or(&rest[..path_start], |(_, host)| host);
    let path = rest[path_start..]
        .split(['?', '#'])
        .next()
        .unwrap_or_default();
    format!("{scheme}://{host}{path}")
}

#[cfg(test)]
mod tests;
