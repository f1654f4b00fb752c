//! The server's own `/metrics`, scraped from the page while a run measures
//! (docs/guide/telemetry.md, *Scraping*): never from the measuring thread, one scrape at a time on
//! the schedule the core's [`ScrapeSession`] keeps, each answer read to a bounded size and
//! handed to the core. A baseline goes out before the warm-up, one as the warm-up ends, then
//! one every interval, and a last one after the last request; the samples are then put on the
//! run's clock (ms from the measured run's start, like the rows' `started_at_ms`) and become
//! the artifact's `server_metrics` block. A server without metrics, or one that does not let
//! the page read them, leaves the run as it is, with a note in the block; when the endpoint
//! check just before the run found that, the run sends no scrape at all.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use leptos::task::spawn_local;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use web_sys::{
    AbortController, RequestCache, RequestCredentials, RequestInit, RequestMode, Response,
};

use crate::core::config::settings::RunConfig;
use crate::core::schema::server_metrics::ServerMetricsBlock;
use crate::core::telemetry::exposition::MAX_TEXT_BYTES;
use crate::core::telemetry::scrape::{MetricsCheck, ScrapeFailure, ScrapeSession};
use crate::core::telemetry::summary::Window;

use crate::web::measure::transport::read_bytes_bounded;
use crate::web::platform::clock::Clock;
use crate::web::platform::timers::sleep_ms;

/// The most a scrape reads of an answer: the reader's own cap and one more line's worth, so
/// the reader sees that it was cut.
const MOST_BYTES_READ: usize = MAX_TEXT_BYTES + 64 * 1024;
/// The scraping loop's tick at most, ms: how late a due scrape can go out.
const LONGEST_TICK_MS: f64 = 100.0;

/// The scrapes of one run, on the page's thread. Times are the page clock's Unix ms until
/// [`finish`](Self::finish) puts them on the run's clock.
pub struct MetricsScrape {
    session: Rc<RefCell<ScrapeSession>>,
    url: String,
    clock: Clock,
    stopped: Rc<Cell<bool>>,
}

impl MetricsScrape {
    /// Starts scraping for a run of `config`, unless its `server_metrics` is `off`. When the
    /// endpoint check before the run (`check`) found that URL failing in a way that will not
    /// mend, nothing is sent and the block says why.
    pub fn start(
        config: &RunConfig,
        clock: Clock,
        check: Option<&MetricsCheck>,
    ) -> Option<Rc<Self>> {
        let url = config.client.metrics_url(&config.base_url)?;
        let interval_ms = config.client.server_metrics_interval_ms;
        let session = ScrapeSession::for_run(&url, interval_ms, check);
        // A session that gave up before it began sends nothing, not even a baseline.
        let sends = !session.gave_up();
        let scrape = Rc::new(Self {
            session: Rc::new(RefCell::new(session)),
            url,
            clock,
            stopped: Rc::new(Cell::new(false)),
        });
        if sends {
            spawn_local(scrape.clone().schedule());
        }
        Some(scrape)
    }

    /// Sends each scrape when the session says it is due, until stopped.
    async fn schedule(self: Rc<Self>) {
        let tick_ms = (self.session.borrow().interval_ms() as f64 / 10.0).min(LONGEST_TICK_MS);
        while !self.stopped.get() {
            let now = self.clock.now_unix_ms();
            if self.session.borrow_mut().next_send(now) {
                spawn_local(self.clone().scrape_once(now));
            }
            if self.session.borrow().gave_up() {
                return;
            }
            sleep_ms(tick_ms).await;
        }
    }

    /// One scrape sent at `sent` (Unix ms), its answer or failure reported to the session.
    async fn scrape_once(self: Rc<Self>, sent: f64) {
        let timeout_ms = self.session.borrow().timeout_ms();
        let outcome = fetch_bounded(&self.url, timeout_ms).await;
        let now = self.clock.now_unix_ms();
        let mut session = self.session.borrow_mut();
        match outcome {
            Ok((status, body)) => session.answered(sent, now, status, &body),
            Err(failure) => session.failed(sent, failure),
        }
    }

    /// Asks for a scrape at once (the warm-up has ended).
    pub fn want_now(&self) {
        self.session.borrow_mut().want_now();
    }

    /// The last scrape, then the block: samples on the run's clock (ms from
    /// `run_started_unix_ms`), summarized over the measured window up to
    /// `run_finished_unix_ms`. Waits at most the scrape timeout for the last answer.
    pub async fn finish(
        &self,
        run_started_unix_ms: f64,
        run_finished_unix_ms: f64,
    ) -> ServerMetricsBlock {
        let before = self.session.borrow().samples().len();
        self.want_now();
        let timeout_ms = self.session.borrow().timeout_ms();
        let deadline = self.clock.now_unix_ms() + timeout_ms + 2.0 * LONGEST_TICK_MS;
        while self.clock.now_unix_ms() < deadline && !self.session.borrow().gave_up() {
            let last_answered = self.session.borrow().samples().len() > before;
            if last_answered {
                break;
            }
            sleep_ms(LONGEST_TICK_MS / 4.0).await;
        }
        self.stopped.set(true);
        let session = self.session.borrow().clone();
        let window = Window {
            start_ms: run_started_unix_ms,
            end_ms: run_finished_unix_ms,
        };
        let mut block = session.finish(Some(window));
        for sample in &mut block.samples {
            sample.t_ms -= run_started_unix_ms;
        }
        block
    }

    /// The run's requests to `base_url` were answered: a scrape there that got no readable
    /// answer was kept out by CORS, and the block's note says so
    /// ([`ScrapeSession::api_answered_at`]).
    pub fn api_answered_at(&self, base_url: &str) {
        self.session.borrow_mut().api_answered_at(base_url);
    }

    /// Stops scraping without a block (the run failed or was refused).
    pub fn stop(&self) {
        self.stopped.set(true);
    }
}

/// GETs `url` without credentials, aborted after `timeout_ms`: its status and at most
/// [`MOST_BYTES_READ`] bytes of its body.
pub(crate) async fn fetch_bounded(
    url: &str,
    timeout_ms: f64,
) -> Result<(u16, Vec<u8>), ScrapeFailure> {
    let controller = AbortController::new().map_err(|_| ScrapeFailure::Unreachable)?;
    fetch_bounded_with(url, timeout_ms, controller).await
}

/// [`fetch_bounded`] under `controller`, which its caller may also abort (a Cancel).
pub(crate) async fn fetch_bounded_with(
    url: &str,
    timeout_ms: f64,
    controller: AbortController,
) -> Result<(u16, Vec<u8>), ScrapeFailure> {
    let window = web_sys::window().ok_or(ScrapeFailure::Unreachable)?;
    let timed_out = Rc::new(Cell::new(false));
    {
        let (controller, timed_out) = (controller.clone(), timed_out.clone());
        spawn_local(async move {
            sleep_ms(timeout_ms).await;
            timed_out.set(true);
            controller.abort();
        });
    }
    let failure = |timed_out: &Cell<bool>| {
        if timed_out.get() {
            ScrapeFailure::Timeout
        } else {
            ScrapeFailure::Unreachable
        }
    };
    let init = RequestInit::new();
    init.set_method("GET");
    init.set_mode(RequestMode::Cors);
    init.set_credentials(RequestCredentials::Omit);
    init.set_cache(RequestCache::NoStore);
    init.set_signal(Some(&controller.signal()));
    let response = JsFuture::from(window.fetch_with_str_and_init(url, &init))
        .await
        .map_err(|_| failure(&timed_out))?;
    let response: Response = response.dyn_into().map_err(|_| failure(&timed_out))?;
    let status = response.status();
    let bytes = match read_bytes_bounded(&response, MOST_BYTES_READ).await {
        Some((_, Some(_))) => return Err(failure(&timed_out)),
        Some((bytes, None)) => bytes,
        None => Vec::new(),
    };
    controller.abort();
    Ok((status, bytes))
}
