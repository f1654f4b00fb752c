//! A run of conversations on the measuring thread: `concurrency` slots, each playing one
//! session at a time from its first turn to its last (slot `k` sending to endpoint `k mod n`
//! of the endpoint pool). A turn goes out after the previous turn's reply has ended and its
//! wait has passed, with the history the core builds ([`SessionPlay`]); with live history its
//! whole reply is kept for the next turn. A timed workload's session starts no earlier than
//! its arrival. Turns that cannot be sent (a broken live history, a cancel) end as failures
//! with the reason (docs/guide/workloads.md, *Conversations*).

use std::rc::Rc;

use wasm_bindgen::JsValue;

use crate::core::config::choices::HistoryMode;
use crate::core::observe::conclude::RequestOutcome;
use crate::core::prompt::session::{SessionPlay, TurnEnd, HISTORY_REPLY_LIMIT_CHARS};

use crate::web::measure::live_run::{LiveRun, RunSetup};
use crate::web::measure::open_loop::wait_until;
use crate::web::measure::request::{never_sent, run_request, RequestSend};
use crate::web::measure::slots::on_every_slot;
use crate::web::measure::transport::RequestHeaders;
use crate::web::platform::timers::yield_to_event_loop;

/// Plays every session of the plan with `concurrency` slots until none is left.
pub(super) async fn run_sessions(live: &Rc<LiveRun>, setup: &Rc<RunSetup>, urls: &[String]) {
    let arrivals: Rc<Option<Vec<f64>>> = Rc::new(
        setup
            .plan
            .workload()
            .and_then(|workload| workload.session_arrivals_ms(setup.config.workload.trace_speed)),
    );
    on_every_slot(setup, urls, |endpoint, url| {
        session_slot(live.clone(), setup.clone(), arrivals.clone(), endpoint, url)
    })
    .await;
}

/// One slot: takes the next session until none is left, and plays it to its end.
async fn session_slot(
    live: Rc<LiveRun>,
    setup: Rc<RunSetup>,
    arrivals: Rc<Option<Vec<f64>>>,
    endpoint: usize,
    url: String,
) {
    while let Some(session) = live.take_session() {
        let Some(mut play) = SessionPlay::new(&setup.plan, session) else {
            continue;
        };
        if let Some(at_ms) = arrivals
            .as_ref()
            .as_ref()
            .and_then(|times| times.get(session))
        {
            wait_until(&live, *at_ms).await;
        }
        if !live.cancelled.get() {
            play_session(&live, &setup, &mut play, endpoint, &url).await;
        }
        // Whatever was not sent: the rest of a broken session, or every turn after a Cancel
        // (then every session not yet started too, as this loop goes on taking them).
        let cancelled = live.cancelled.get();
        let mut outcomes = live.outcomes.borrow_mut();
        for (index, error) in play.abandon(cancelled) {
            outcomes.push(never_sent(&setup.plan, index, &error));
        }
    }
}

/// Sends `play`'s turns one after the other until the session is done, broken or cancelled.
async fn play_session(
    live: &LiveRun,
    setup: &RunSetup,
    play: &mut SessionPlay,
    endpoint: usize,
    url: &str,
) {
    let headers = play
        .header(&setup.plan)
        .map(|(name, value)| RequestHeaders::for_session(setup.api_key.as_deref(), &name, &value));
    let reply_limit =
        (setup.config.workload.history == HistoryMode::Live).then_some(HISTORY_REPLY_LIMIT_CHARS);
    let mut reply_ended_ms = None;
    while let Some(due) = play.next_turn() {
        if let Some(ended_ms) = reply_ended_ms {
            if due.wait_ms > 0.0 {
                wait_until(live, ended_ms + due.wait_ms).await;
            }
        }
        if live.cancelled.get() {
            return;
        }
        // Built before the sending turn: a long history is thread time no read may wait for.
        let prepared = live.prepared_bodies.borrow_mut().remove(&due.index);
        let body = match prepared {
            Some(body) => Ok(body),
            None => play
                .body(&setup.plan)
                .map(|body| JsValue::from_str(&body))
                .map_err(|error| error.to_string()),
        };
        // The sending turn, as the closed loop's slots take it (slots.rs, `run_slot`):
        // reads waiting now are stamped before this `fetch()` call holds the thread.
        {
            let _turn = live.sending_turns.take().await;
            yield_to_event_loop().await;
        }
        if live.cancelled.get() {
            return;
        }
        let send = RequestSend {
            body,
            headers: headers.as_ref(),
            reply_limit,
        };
        live.request_sent(endpoint);
        let (outcome, reply) = run_request(live, setup, endpoint, url, due.index, send).await;
        live.request_ended(endpoint);
        reply_ended_ms = Some(live.clock.now_ms() - live.run_started_ms.get());
        let end = match (&outcome, &reply) {
            (RequestOutcome::Completed(_), Some(reply)) => TurnEnd::Replied(reply),
            _ => TurnEnd::Failed,
        };
        play.ended(end);
        live.outcomes.borrow_mut().push(outcome);
    }
}
