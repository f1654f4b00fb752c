//! The warm-up: unmeasured requests that open every connection the slots need and fill the
//! CORS preflight cache, checked through Resource Timing before the measured run starts
//! (docs/design/measurement.md, *Warm-up*).

use std::collections::{BTreeMap, BTreeSet};

use futures::future::join_all;
use wasm_bindgen::JsValue;

use crate::core::artifact::client::WarmupError;
use crate::core::config::settings::WARMUP_CHECK_ROUNDS;
use crate::core::observe::failure::RequestError;
use crate::core::observe::transport::ResourceTimingEntry;
use crate::core::prompt::{warmup_check_request_body, warmup_request_body};
use crate::core::schema::client::{ClientWarmup, WarmupConnections};

use crate::web::measure::live_run::{LiveRun, RunSetup};
use crate::web::measure::resource_timing::resource_entries;
use crate::web::measure::send::{send_watched, SendOptions};
use crate::web::measure::transport::RequestControl;

/// Warms the connections up: a priming round, then check rounds until one shows the
/// connections open (see [`WARMUP_CHECK_ROUNDS`] and [`WarmupConnections::of_round`]). Stops
/// at the first failed or cancelled round.
///
/// The priming round sends every endpoint [`RunPlan::warmup_requests_per_endpoint`] requests
/// (two per connection its slots can use, `max_tokens: 1`) at once: the browser opens a
/// connection for every one it cannot serve from its idle pool, up to its per-host limit, and
/// the first CORS preflight to each origin fills the preflight cache for the measured
/// requests' URL and headers. A one-token answer can end before a connection opened for
/// another request is up, and the browser then drops that connection, so each check round
/// sends one longer request per connection ([`RunPlan::warmup_check_requests_per_endpoint`],
/// [`WARMUP_CHECK_MAX_TOKENS`](crate::core::prompt::WARMUP_CHECK_MAX_TOKENS) tokens) and asks Resource Timing whether they all went out
/// together on connections that were already open.
pub(super) async fn warm_up(
    live: &LiveRun,
    setup: &RunSetup,
    urls: &[String],
) -> Result<ClientWarmup, WarmupError> {
    let clock = &live.clock;
    let started_ms = clock.now_ms();
    let priming_body = JsValue::from_str(&warmup_request_body(&setup.config));
    let priming = setup.plan.warmup_requests_per_endpoint();
    let mut round = warm_up_round(live, setup, urls, &priming, &priming_body).await;
    let mut requests = round.sent.len() as u64;
    let mut errors = std::mem::take(&mut round.errors);
    let mut check_rounds = 0;
    let mut connections = WarmupConnections::Unknown;
    let check_body = JsValue::from_str(&warmup_check_request_body(&setup.config));
    let check = setup.plan.warmup_check_requests_per_endpoint();
    while errors.is_empty() && !live.cancelled.get() && check_rounds < WARMUP_CHECK_ROUNDS {
        round = warm_up_round(live, setup, urls, &check, &check_body).await;
        check_rounds += 1;
        requests += round.sent.len() as u64;
        errors = std::mem::take(&mut round.errors);
        if !errors.is_empty() || live.cancelled.get() {
            break;
        }
        connections = round.connections(urls).await;
        if !connections.worth_another_round() {
            break;
        }
    }
    let duration_ms = clock.now_ms() - started_ms;
    live.warmup_controls.borrow_mut().clear();
    if live.cancelled.get() {
        return Err(WarmupError::Cancelled);
    }
    WarmupError::check(requests, duration_ms, errors)
        .map(|warmup| warmup.with_check(check_rounds, connections))
}

/// What one warm-up round sent and which of its requests failed.
pub(super) struct WarmupRound {
    /// Per request: its endpoint (index into the run's URLs) and when `fetch()` was called.
    sent: Vec<(usize, f64)>,
    /// The failures, each naming its endpoint when the run has several.
    errors: Vec<RequestError>,
}

impl WarmupRound {
    /// The round's verdict on the connections, from the browser's Resource Timing entries of
    /// its requests.
    async fn connections(&self, urls: &[String]) -> WarmupConnections {
        let sent: BTreeMap<u64, (usize, f64)> = (0..).zip(self.sent.iter().copied()).collect();
        let everyone: BTreeSet<u64> = sent.keys().copied().collect();
        let entries = resource_entries(&sent, urls, &everyone).await;
        let by_endpoint: Vec<Vec<Option<&ResourceTimingEntry>>> = (0..urls.len())
            .map(|endpoint| {
                sent.iter()
                    .filter(|(_, (to, _))| *to == endpoint)
                    .map(|(index, _)| entries.get(index).and_then(Option::as_ref))
                    .collect()
            })
            .collect();
        WarmupConnections::of_round(&by_endpoint)
    }
}

/// Sends each endpoint `per_endpoint[endpoint]` copies of `body` at once and waits for all of
/// them. `join_all` polls every one before any waits, so all the `fetch()` calls happen in one
/// task turn.
pub(super) async fn warm_up_round(
    live: &LiveRun,
    setup: &RunSetup,
    urls: &[String],
    per_endpoint: &[u64],
    body: &JsValue,
) -> WarmupRound {
    let several = urls.len() > 1;
    let targets = urls
        .iter()
        .enumerate()
        .zip(per_endpoint)
        .flat_map(|(target, count)| std::iter::repeat_n(target, *count as usize));
    let results = join_all(targets.map(|(endpoint, url)| async move {
        let (sent_ms, result) = warm_up_one(live, setup, url, body).await;
        let result = result.map_err(|error| {
            if several {
                error.at_endpoint(url)
            } else {
                error
            }
        });
        ((endpoint, sent_ms), result)
    }))
    .await;
    let mut round = WarmupRound {
        sent: Vec::with_capacity(results.len()),
        errors: Vec::new(),
    };
    for (sent, result) in results {
        round.sent.push(sent);
        round.errors.extend(result.err());
    }
    round
}

/// One warm-up request, read to its end: when its `fetch()` was called, and whether it failed.
/// Any answer that streams counts: with `max_tokens: 1` a thinking model may send no visible
/// content, and that is no transport problem.
pub(super) async fn warm_up_one(
    live: &LiveRun,
    setup: &RunSetup,
    url: &str,
    body: &JsValue,
) -> (f64, Result<(), RequestError>) {
    let control = match RequestControl::new(live.clock.now_ms()) {
        Ok(control) => control,
        Err(error) => return (f64::NAN, Err(error)),
    };
    live.warmup_controls.borrow_mut().push(control.clone());
    let (sent_ms, result) =
        send_watched(live, setup, &control, url, body, SendOptions::default()).await;
    (sent_ms, result.map(drop))
}
