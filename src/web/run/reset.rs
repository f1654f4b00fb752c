//! The prefix-cache reset, sent from the page before a run's warm-up (docs/guide/telemetry.md, *A
//! clean prefix cache*): the engine's route with the run's API key in its `Authorization`
//! header, as every request of the run carries it; SGLang asked again while it is busy; the
//! server's prefix-cache series read just before and just after, when its metrics are scraped.
//! What an answer means and what the artifact records are the core's
//! ([`telemetry::reset`](crate::core::telemetry::reset)); a reset that fails stops the run
//! before it measures, with what to do. Cancel stops a reset in flight ([`ResetCancel`]): the
//! request is aborted, and the run sends nothing.

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::rc::Rc;

use leptos::task::spawn_local;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use web_sys::{
    AbortController, Headers, RequestCache, RequestCredentials, RequestInit, RequestMode, Response,
};

use crate::core::config::cache_reset::ResetRoute;
use crate::core::config::settings::RunConfig;
use crate::core::schema::cache_reset::ResetRecord;
use crate::core::telemetry::reset::{
    cache_counters, judge_answer, ResetAnswer, ResetFailed, ResetStep, RESET_TIMEOUT_MS,
    RETRY_AFTER_MS,
};

use crate::web::platform::clock::Clock;
use crate::web::platform::timers::sleep_ms;
use crate::web::run::metrics::fetch_bounded_with;
use crate::web::state::error::RunError;

/// How long a scrape around the reset may take, ms.
const COUNTERS_TIMEOUT_MS: f64 = 5_000.0;

/// Cancel for a reset in flight: it aborts the request under way (a scrape of the counters,
/// or the reset itself) and no further one is sent.
#[derive(Default)]
pub struct ResetCancel {
    cancelled: Cell<bool>,
    current: RefCell<Option<AbortController>>,
}

impl ResetCancel {
    /// Stops the reset: the request under way is aborted.
    pub fn cancel(&self) {
        self.cancelled.set(true);
        if let Some(controller) = self.current.borrow().as_ref() {
            controller.abort();
        }
    }

    /// Whether Cancel was pressed.
    pub fn is_cancelled(&self) -> bool {
        self.cancelled.get()
    }

    /// `controller` aborts the request now under way; at once when Cancel came first.
    fn watch(&self, controller: &AbortController) {
        if self.cancelled.get() {
            controller.abort();
        }
        *self.current.borrow_mut() = Some(controller.clone());
    }
}

/// Empties the prefix cache of `config`'s server by `route`. The record's `t_ms` is the page
/// clock's Unix ms when the answer that counted was asked for, until the run's start is known.
/// A reset that fails is [`RunError::CacheReset`] with what to do; one `cancel` stopped is
/// [`RunError::CancelledDuringReset`].
pub async fn reset_prefix_cache(
    config: &RunConfig,
    route: &ResetRoute,
    api_key: Option<&str>,
    clock: &Clock,
    cancel: &ResetCancel,
) -> Result<ResetRecord, RunError> {
    let cancelled = || RunError::CancelledDuringReset(format!("{} {}", route.method, route.url));
    let metrics_url = config.client.metrics_url(&config.base_url);
    let counters_before = read_counters(metrics_url.as_deref(), cancel).await;
    let mut attempt = 1;
    let (sent, latency_ms, status) = loop {
        if cancel.is_cancelled() {
            return Err(cancelled());
        }
        let sent = clock.now_unix_ms();
        let answer = send(route, api_key, cancel)
            .await
            .map_err(|failed| RunError::CacheReset(failed.to_string()))?;
        let latency_ms = clock.now_unix_ms() - sent;
        if cancel.is_cancelled() {
            return Err(cancelled());
        }
        match judge_answer(route, answer, attempt) {
            ResetStep::Done => {
                let status = match answer {
                    ResetAnswer::Status(status) => status,
                    _ => 200,
                };
                break (sent, latency_ms, status);
            }
            ResetStep::AskAgain => {
                attempt += 1;
                sleep_ms(RETRY_AFTER_MS).await;
            }
            ResetStep::Stop(failed) => return Err(RunError::CacheReset(failed.to_string())),
        }
    };
    let counters_after = read_counters(metrics_url.as_deref(), cancel).await;
    if cancel.is_cancelled() {
        return Err(cancelled());
    }
    Ok(ResetRecord {
        engine: route.engine.as_str().to_owned(),
        method: route.method.to_owned(),
        url: route.url.clone(),
        status,
        attempts: attempt,
        t_ms: sent,
        latency_ms,
        counters_before,
        counters_after,
    })
}

/// The prefix-cache series of one scrape of `url`, when it answers with them (and Cancel
/// did not stop it).
async fn read_counters(url: Option<&str>, cancel: &ResetCancel) -> Option<BTreeMap<String, f64>> {
    let url = url?;
    let controller = AbortController::new().ok()?;
    cancel.watch(&controller);
    match fetch_bounded_with(url, COUNTERS_TIMEOUT_MS, controller).await {
        Ok((200, body)) => cache_counters(&body),
        _ => None,
    }
}

/// Sends the reset once, aborted after [`RESET_TIMEOUT_MS`] or by `cancel`: the status, or
/// why none came. Only a key a header cannot carry is an error of its own.
async fn send(
    route: &ResetRoute,
    api_key: Option<&str>,
    cancel: &ResetCancel,
) -> Result<ResetAnswer, ResetFailed> {
    let Some(window) = web_sys::window() else {
        return Ok(ResetAnswer::Unreadable);
    };
    let Ok(controller) = AbortController::new() else {
        return Ok(ResetAnswer::Unreadable);
    };
    cancel.watch(&controller);
    let timed_out = Rc::new(Cell::new(false));
    {
        let (controller, timed_out) = (controller.clone(), timed_out.clone());
        spawn_local(async move {
            sleep_ms(RESET_TIMEOUT_MS).await;
            timed_out.set(true);
            controller.abort();
        });
    }
    let init = RequestInit::new();
    init.set_method(route.method);
    init.set_mode(RequestMode::Cors);
    init.set_credentials(RequestCredentials::Omit);
    init.set_cache(RequestCache::NoStore);
    init.set_signal(Some(&controller.signal()));
    if let Some(key) = api_key.filter(|key| !key.is_empty()) {
        let headers = Headers::new().map_err(|_| header_refused())?;
        // The key's text is never put into the error: say only that it was refused.
        headers
            .set("Authorization", &format!("Bearer {key}"))
            .map_err(|_| header_refused())?;
        init.set_headers(&headers);
    }
    let unanswered = |timed_out: &Cell<bool>| {
        if timed_out.get() {
            ResetAnswer::TimedOut
        } else {
            ResetAnswer::Unreadable
        }
    };
    let answer = match JsFuture::from(window.fetch_with_str_and_init(&route.url, &init)).await {
        Ok(response) => match response.dyn_into::<Response>() {
            Ok(response) => ResetAnswer::Status(response.status()),
            Err(_) => unanswered(&timed_out),
        },
        Err(_) => unanswered(&timed_out),
    };
    // The body says nothing the status does not (vLLM's is empty); stop the timer.
    controller.abort();
    Ok(answer)
}

/// A key the `Authorization` header cannot carry.
fn header_refused() -> ResetFailed {
    ResetFailed(
        "the API key contains characters a header cannot carry; paste it again without spaces \
         or line breaks"
            .to_owned(),
    )
}
