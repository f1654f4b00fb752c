//! A run as the measuring thread holds it: the checked setup it was started with ([`RunSetup`])
//! and its live state ([`LiveRun`]: the slots' sending turns, the requests sent and finished,
//! cancel), which the page reads a few times a second.

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::rc::Rc;
use std::task::{Poll, Waker};

use wasm_bindgen::JsValue;

use crate::core::config::settings::RunConfig;
use crate::core::live::{FinishedRequest, LiveProgress};
use crate::core::observe::conclude::{RequestOutcome, RequestPlanFacts};
use crate::core::plan::RunPlan;

use crate::core::live::OpenLoopProgress;
use crate::core::observe::dispatch::DispatchFacts;
use crate::core::schema::load::LATE_SEND_MS;
use crate::web::measure::transport::{AbortCause, RequestControl, RequestHeaders};
use crate::web::platform::clock::Clock;

/// How often, and how long apart, the end of a run looks again for Resource Timing entries
/// still missing: the browser adds an entry when the response ends, which can be a moment
/// after the last read of its stream, and longer on a busy machine (the measuring thread
/// stalls up to 170 ms on 2 cores otherwise busy). Every request with a row gets an entry in
/// Chromium, aborted ones too, so the 2 s are spent only while one is truly late.
pub(super) const ENTRY_WAIT_ROUNDS: u32 = 100;

pub(super) const ENTRY_WAIT_STEP_MS: f64 = 20.0;

/// What a run needs, fixed before the first request.
pub struct RunSetup {
    /// The validated configuration.
    pub config: RunConfig,
    /// The request plan derived from it.
    pub plan: RunPlan,
    /// The API key, if any: sent as a header, never stored in the artifact.
    pub api_key: Option<String>,
}

impl RunSetup {
    /// What the core needs to know of request `index`'s plan to conclude it into a row.
    pub(super) fn plan_facts(&self, index: u64, run_started_ms: f64) -> RequestPlanFacts {
        RequestPlanFacts {
            request_index: index,
            planned_context_tokens: planned_context(&self.plan, index),
            expected_marker: self
                .config
                .request_canaries
                .then(|| self.plan.marker(index as usize)),
            response_words: self.config.response_words,
            policy: self.config.controlled_output_policy,
            run_started_ms,
        }
    }
}

/// A run in progress, shared between the slot tasks, the Cancel button and the page.
pub struct LiveRun {
    pub(super) clock: Clock,
    /// When the measured run started: read again after the warm-up, so that the run's wall
    /// time, throughput and every row's `started_at_ms` leave the warm-up out.
    pub(super) run_started_ms: Cell<f64>,
    pub(super) warming_up: Cell<bool>,
    pub(super) requests: u64,
    pub(super) next_index: Cell<u64>,
    /// A run of conversations: how many sessions it plays, and the next to start.
    pub(super) sessions: usize,
    pub(super) next_session: Cell<usize>,
    pub(super) in_flight: Cell<u64>,
    /// When each open-loop request went out against when it was due (empty in a closed loop).
    pub(super) dispatch: RefCell<BTreeMap<u64, DispatchFacts>>,
    /// The open-loop sends so far, for the live view.
    pub(super) open_loop: Cell<Option<OpenLoopProgress>>,
    /// Measured requests in flight per endpoint (each endpoint is an origin of its own), and
    /// the most any endpoint ever had: what decides whether the browser can have queued them.
    pub(super) in_flight_per_endpoint: RefCell<Vec<u64>>,
    pub(super) max_in_flight_per_endpoint: Cell<u64>,
    pub(super) cancelled: Cell<bool>,
    pub(super) outcomes: RefCell<Vec<RequestOutcome>>,
    pub(super) controls: RefCell<BTreeMap<u64, Rc<RequestControl>>>,
    pub(super) warmup_controls: RefCell<Vec<Rc<RequestControl>>>,
    /// One slot at a time takes its turn to send, first come first served
    /// (see `slots::run_slot`).
    pub(super) sending_turns: SendingTurns,
    /// Request bodies built before anything was sent, as JavaScript strings, by request index
    /// (see `prepare::prepare_bodies`); a request not in it builds its own.
    pub(super) prepared_bodies: RefCell<BTreeMap<u64, JsValue>>,
    /// The headers every request sends, made once.
    pub(super) headers: RequestHeaders,
    /// A dry run (see `prepare::dry_run`): requests are answered by synthetic streams, nothing is
    /// sent.
    pub(super) dry_run: bool,
    /// Which endpoint each measured request went to, and when its `fetch()` was called: the
    /// key that pairs it with the browser's Resource Timing entry for that endpoint's URL.
    pub(super) sent: RefCell<BTreeMap<u64, (usize, f64)>>,
    pub(super) finished_ms: Cell<Option<f64>>,
}

impl LiveRun {
    /// Cancels the run: no new request starts, and every request in flight is aborted. Rows of
    /// requests that already finished are kept.
    pub fn cancel(&self) {
        self.cancelled.set(true);
        // Nothing more is sent: the bodies built ahead are not needed.
        self.prepared_bodies.borrow_mut().clear();
        for control in self.controls.borrow().values() {
            control.abort(AbortCause::Cancelled);
        }
        for control in self.warmup_controls.borrow().iter() {
            control.abort(AbortCause::Cancelled);
        }
    }

    /// The requests that ended after the first `already_seen`, in the order they ended.
    pub fn finished_since(&self, already_seen: usize) -> Vec<FinishedRequest> {
        self.outcomes
            .borrow()
            .iter()
            .skip(already_seen)
            .map(FinishedRequest::from)
            .collect()
    }

    /// The counters now, with times as Unix epoch ms.
    pub fn progress(&self) -> LiveProgress {
        let warming_up = self.warming_up.get();
        LiveProgress {
            in_flight: self.in_flight.get(),
            warming_up,
            cancelled: self.cancelled.get(),
            run_started_unix_ms: (!warming_up)
                .then(|| self.clock.unix_ms_at(self.run_started_ms.get())),
            finished_unix_ms: self
                .finished_ms
                .get()
                .map(|finished| self.clock.unix_ms_at(finished)),
            open_loop: self.open_loop.get(),
        }
    }

    /// Keeps how open-loop request `index` went out, and counts it for the live view.
    pub(super) fn record_dispatch(&self, index: u64, facts: DispatchFacts) {
        if let Some(mut progress) = self.open_loop.get() {
            progress.sent += 1;
            progress.late += u64::from(facts.lag_ms() > LATE_SEND_MS);
            progress.capped += u64::from(facts.cap_wait_ms > 0.0);
            self.open_loop.set(Some(progress));
        }
        self.dispatch.borrow_mut().insert(index, facts);
    }

    /// The endpoint with the fewest measured requests in flight (the first of equals): where
    /// an open-loop request goes, so no origin carries more than its share.
    pub(super) fn least_loaded_endpoint(&self) -> usize {
        let per_endpoint = self.in_flight_per_endpoint.borrow();
        (0..per_endpoint.len())
            .min_by_key(|&endpoint| per_endpoint[endpoint])
            .unwrap_or(0)
    }

    pub(super) fn take_index(&self) -> Option<u64> {
        let index = self.next_index.get();
        (index < self.requests).then(|| {
            self.next_index.set(index + 1);
            index
        })
    }

    /// The next session to play, in plan order, if any is left.
    pub(super) fn take_session(&self) -> Option<usize> {
        let session = self.next_session.get();
        (session < self.sessions).then(|| {
            self.next_session.set(session + 1);
            session
        })
    }

    pub(super) fn request_sent(&self, endpoint: usize) {
        self.in_flight.set(self.in_flight.get() + 1);
        let mut per_endpoint = self.in_flight_per_endpoint.borrow_mut();
        if let Some(count) = per_endpoint.get_mut(endpoint) {
            *count += 1;
            self.max_in_flight_per_endpoint
                .set(self.max_in_flight_per_endpoint.get().max(*count));
        }
    }

    pub(super) fn request_ended(&self, endpoint: usize) {
        self.in_flight.set(self.in_flight.get().saturating_sub(1));
        if let Some(count) = self.in_flight_per_endpoint.borrow_mut().get_mut(endpoint) {
            *count = count.saturating_sub(1);
        }
    }
}

/// Prepares a run; call [`execute`] to start it.
pub fn start(clock: Clock, setup: &RunSetup) -> Rc<LiveRun> {
    LiveRun::new(clock, setup, setup.plan.requests(), false)
}

impl LiveRun {
    pub(super) fn new(clock: Clock, setup: &RunSetup, requests: u64, dry_run: bool) -> Rc<Self> {
        // Provisional: `execute` reads the start again when the measured requests begin.
        let run_started_ms = clock.now_ms();
        Rc::new(Self {
            clock,
            run_started_ms: Cell::new(run_started_ms),
            warming_up: Cell::new(setup.plan.warmup_requests() > 0),
            requests,
            next_index: Cell::new(0),
            sessions: setup
                .plan
                .workload()
                .map_or(0, |workload| workload.sessions().len()),
            next_session: Cell::new(0),
            in_flight: Cell::new(0),
            dispatch: RefCell::new(BTreeMap::new()),
            open_loop: Cell::new(setup.plan.arrival_times_ms().map(|times| OpenLoopProgress {
                scheduled: times.len() as u64,
                ..OpenLoopProgress::default()
            })),
            in_flight_per_endpoint: RefCell::new(vec![0; setup.plan.endpoint_count()]),
            max_in_flight_per_endpoint: Cell::new(0),
            cancelled: Cell::new(false),
            outcomes: RefCell::new(Vec::new()),
            controls: RefCell::new(BTreeMap::new()),
            warmup_controls: RefCell::new(Vec::new()),
            sending_turns: SendingTurns::default(),
            prepared_bodies: RefCell::new(BTreeMap::new()),
            headers: RequestHeaders::new(setup.api_key.as_deref()),
            dry_run,
            sent: RefCell::new(BTreeMap::new()),
            finished_ms: Cell::new(None),
        })
    }
}

/// Turns to send, taken first come first served (a ticket lock): a slot that has waited
/// longest sends next, so no slot waits out several others' sends and the run keeps its
/// concurrency. A turn ends when its [`SendingTurn`] is dropped. A slot's future is never
/// dropped while it waits for its turn (slots run to the end of the run), so no ticket is
/// left unserved.
#[derive(Default)]
pub(super) struct SendingTurns {
    next_ticket: Cell<u64>,
    serving: Cell<u64>,
    waiting: RefCell<BTreeMap<u64, Waker>>,
}

impl SendingTurns {
    /// Waits for this caller's turn.
    pub(super) async fn take(&self) -> SendingTurn<'_> {
        let ticket = self.next_ticket.get();
        self.next_ticket.set(ticket + 1);
        std::future::poll_fn(|context| {
            if self.serving.get() == ticket {
                Poll::Ready(())
            } else {
                self.waiting
                    .borrow_mut()
                    .insert(ticket, context.waker().clone());
                Poll::Pending
            }
        })
        .await;
        SendingTurn { turns: self }
    }
}

/// One slot's turn to send; dropping it hands the turn to the next ticket.
pub(super) struct SendingTurn<'a> {
    turns: &'a SendingTurns,
}

impl Drop for SendingTurn<'_> {
    fn drop(&mut self) {
        let next = self.turns.serving.get() + 1;
        self.turns.serving.set(next);
        let waker = self.turns.waiting.borrow_mut().remove(&next);
        if let Some(waker) = waker {
            waker.wake();
        }
    }
}

pub(super) fn planned_context(plan: &RunPlan, index: u64) -> u64 {
    plan.planned_context_tokens()
        .get(index as usize)
        .copied()
        .unwrap_or_default()
}
