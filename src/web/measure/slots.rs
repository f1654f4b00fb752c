//! The closed loop: exactly `concurrency` slots, each taking the next request index until
//! none is left (slot `k` sending to endpoint `k mod n` of the endpoint pool), in index order
//! through one sending turn. The measured run uses it when the plan has no arrival schedule and
//! no conversations; the [`prepare`](super::prepare) stage's dry run uses it with nothing on
//! the wire.

use std::future::Future;
use std::rc::Rc;

use futures::future::join_all;

use crate::core::prompt::PromptSpec;

use crate::web::measure::live_run::{LiveRun, RunSetup};
use crate::web::measure::request::{cancelled_before_sending, run_one};
use crate::web::platform::timers::yield_to_event_loop;

/// Runs `run`'s requests with the plan's `concurrency` slots, slot `k` sending to endpoint
/// `k mod n` of `urls`, until none is left.
pub(super) async fn run_slots(
    run: &Rc<LiveRun>,
    setup: &Rc<RunSetup>,
    prompt_spec: &Rc<PromptSpec>,
    urls: &[String],
) {
    on_every_slot(setup, urls, |endpoint, url| {
        run_slot(
            run.clone(),
            setup.clone(),
            prompt_spec.clone(),
            endpoint,
            url,
        )
    })
    .await;
}

/// Runs `slot(endpoint, url)` for each of the plan's `concurrency` slots at once, slot `k` on
/// endpoint `k mod n` of `urls`, until every one has ended: the closed loop's slots, and the
/// sessions'.
pub(super) async fn on_every_slot<Slot, Ends>(setup: &RunSetup, urls: &[String], slot: Slot)
where
    Slot: Fn(usize, String) -> Ends,
    Ends: Future<Output = ()>,
{
    let slots = (0..setup.plan.concurrency()).map(|slot_index| {
        let endpoint = setup.plan.endpoint_of_slot(slot_index);
        slot(endpoint, urls[endpoint].clone())
    });
    join_all(slots).await;
}

/// One concurrency slot: takes the next request index until none is left, and sends each to
/// its endpoint.
async fn run_slot(
    live: Rc<LiveRun>,
    setup: Rc<RunSetup>,
    prompt_spec: Rc<PromptSpec>,
    endpoint: usize,
    url: String,
) {
    loop {
        if live.cancelled.get() {
            // Nothing more is sent: every index left is accounted for at once, without turns.
            while let Some(index) = live.take_index() {
                let outcome = cancelled_before_sending(&setup.plan, index);
                live.outcomes.borrow_mut().push(outcome);
            }
            break;
        }
        // Each request is sent from a task of its own, and only after every read that was
        // waiting when the previous request was sent: a `fetch()` call holds the thread, and a
        // wave sent from one task would hold every read behind it (docs/design/measurement.md,
        // *Sending*). A slot takes the sending turn, then yields to the event loop (a message to
        // itself, which runs after the tasks queued before it: the reads); everything from here
        // to its `fetch()` call is synchronous, so the next slot yields only once this one has
        // sent. The index is taken inside the turn, so requests are sent in index order.
        let index = {
            let _turn = live.sending_turns.take().await;
            yield_to_event_loop().await;
            live.take_index()
        };
        let Some(index) = index else {
            break;
        };
        let outcome = if live.cancelled.get() {
            cancelled_before_sending(&setup.plan, index)
        } else {
            live.request_sent(endpoint);
            let outcome = run_one(&live, &setup, &prompt_spec, endpoint, &url, index).await;
            live.request_ended(endpoint);
            outcome
        };
        live.outcomes.borrow_mut().push(outcome);
    }
}
