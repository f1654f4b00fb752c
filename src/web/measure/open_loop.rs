//! An open-loop (`load: rate`) run on the measuring thread: each request goes out at its
//! scheduled time, as [`OpenLoop`] decides, with at most `concurrency` in flight, to the
//! endpoint with the fewest in flight, and how it went out (due, sent, held by the cap) is
//! kept for its row (docs/guide/load.md).

use std::cell::RefCell;
use std::rc::Rc;

use futures::channel::mpsc;
use futures::StreamExt;
use wasm_bindgen_futures::spawn_local;

use crate::core::load::dispatch::{Dispatch, OpenLoop};
use crate::core::observe::dispatch::DispatchFacts;
use crate::core::prompt::PromptSpec;
use crate::web::measure::live_run::{LiveRun, RunSetup};
use crate::web::measure::request::{cancelled_before_sending, run_one};
use crate::web::platform::timers::{sleep_ms, yield_to_event_loop};

/// Timers wake a little late, so a wait ends on a timer this long before the request is due
/// and the rest is spent yielding to the event loop (reads are stamped meanwhile).
const TIMER_MARGIN_MS: f64 = 4.0;
/// A wait sleeps at most this long at a time, so a Cancel is seen soon even at 0.01 req/s.
const LONGEST_SLEEP_MS: f64 = 100.0;

/// Sends every request of the plan's schedule at its time and waits for the last to end.
pub(super) async fn run_open_loop(
    live: &Rc<LiveRun>,
    setup: &Rc<RunSetup>,
    prompt_spec: &Rc<PromptSpec>,
    urls: &[String],
) {
    let times = setup.plan.arrival_times_ms().unwrap_or_default().to_vec();
    let dispatcher = Rc::new(RefCell::new(OpenLoop::new(times, setup.plan.concurrency())));
    let (ended, mut endings) = mpsc::unbounded::<()>();
    loop {
        if live.cancelled.get() {
            let rest = dispatcher.borrow_mut().abandon();
            let mut outcomes = live.outcomes.borrow_mut();
            outcomes.extend(rest.map(|index| cancelled_before_sending(&setup.plan, index)));
            break;
        }
        let now_ms = live.clock.now_ms() - live.run_started_ms.get();
        let decision = dispatcher.borrow_mut().poll(now_ms);
        match decision {
            Dispatch::Done => break,
            Dispatch::WaitUntil { at_ms } => wait_until(live, at_ms).await,
            // Any request's end frees a slot; the dispatcher is asked again after it.
            Dispatch::WaitForSlot => {
                let _ = endings.next().await;
            }
            Dispatch::Send { index, cap_wait_ms } => {
                // Reads that arrived while this request was waiting are stamped before its
                // `fetch()` call holds the thread (docs/design/measurement.md, *Sending*).
                yield_to_event_loop().await;
                let scheduled_ms = dispatcher.borrow().due_ms(index).unwrap_or(now_ms);
                let endpoint = live.least_loaded_endpoint();
                let url = urls[endpoint].clone();
                let (live, setup, prompt_spec) = (live.clone(), setup.clone(), prompt_spec.clone());
                let (dispatcher, ended) = (dispatcher.clone(), ended.clone());
                live.request_sent(endpoint);
                spawn_local(async move {
                    let outcome = run_one(&live, &setup, &prompt_spec, endpoint, &url, index).await;
                    live.request_ended(endpoint);
                    if let Some(&(_, sent_ms)) = live.sent.borrow().get(&index) {
                        live.record_dispatch(
                            index,
                            DispatchFacts {
                                scheduled_ms,
                                sent_ms: sent_ms - live.run_started_ms.get(),
                                cap_wait_ms,
                            },
                        );
                    }
                    live.outcomes.borrow_mut().push(outcome);
                    dispatcher.borrow_mut().ended();
                    let _ = ended.unbounded_send(());
                });
            }
        }
    }
    while dispatcher.borrow().in_flight() > 0 {
        if endings.next().await.is_none() {
            break;
        }
    }
}

/// Waits until `at_ms` on the run's clock: on timers while the moment is far, then yielding to
/// the event loop, so the send is neither early nor a timer's slack late. Returns early when
/// the run is cancelled.
pub(super) async fn wait_until(live: &LiveRun, at_ms: f64) {
    loop {
        if live.cancelled.get() {
            return;
        }
        let remaining = at_ms - (live.clock.now_ms() - live.run_started_ms.get());
        if remaining <= 0.0 {
            return;
        }
        // The timer is set from a message task, not from the timer task before it: browsers
        // clamp a timer set five timers deep to 4 ms, which would make every send late.
        yield_to_event_loop().await;
        if remaining > TIMER_MARGIN_MS {
            sleep_ms((remaining - TIMER_MARGIN_MS).min(LONGEST_SLEEP_MS)).await;
        }
    }
}
