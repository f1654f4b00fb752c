//! Timers as futures, on the browser's `setTimeout` (the page's or the worker's).

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

use js_sys::{Function, Promise};
use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{MessageChannel, MessagePort};

use crate::web::platform::scope;

/// Resolves after about `ms` milliseconds, in a timer task of its own (or at once where this
/// thread has no timers). Dropped before then (a wait that lost a race, such as a body's end
/// grace), it clears its timer, so nothing is left to wake the thread later in the run, among
/// the reads being timed.
pub fn sleep_ms(ms: f64) -> Sleep {
    let state = Rc::new(SleepState::default());
    let on_time = {
        let state = state.clone();
        Closure::<dyn FnMut()>::new(move || {
            state.elapsed.set(true);
            let waker = state.waker.borrow_mut().take();
            if let Some(waker) = waker {
                waker.wake();
            }
        })
    };
    let delay = ms.clamp(0.0, i32::MAX as f64) as i32;
    match scope::set_timeout(on_time.as_ref().unchecked_ref(), delay) {
        Some(timer) => Sleep {
            state,
            timer: Some((timer, on_time)),
        },
        None => {
            // No timer to wait on: resolve now rather than never.
            state.elapsed.set(true);
            Sleep { state, timer: None }
        }
    }
}

/// The future [`sleep_ms`] returns.
pub struct Sleep {
    state: Rc<SleepState>,
    /// The browser's timer id and the callback it calls, kept alive until the timer fires or
    /// is cleared.
    timer: Option<(i32, Closure<dyn FnMut()>)>,
}

#[derive(Default)]
struct SleepState {
    elapsed: Cell<bool>,
    waker: RefCell<Option<Waker>>,
}

impl Future for Sleep {
    type Output = ();

    fn poll(self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<()> {
        if self.state.elapsed.get() {
            Poll::Ready(())
        } else {
            *self.state.waker.borrow_mut() = Some(context.waker().clone());
            Poll::Pending
        }
    }
}

impl Drop for Sleep {
    fn drop(&mut self) {
        if let Some((timer, _on_time)) = &self.timer {
            if !self.state.elapsed.get() {
                // Cleared before the callback is dropped: the browser never calls a freed one.
                scope::clear_timeout(*timer);
            }
        }
    }
}

/// A `MessageChannel` whose messages resume the futures waiting in [`yield_to_event_loop`], in
/// the order they yielded.
struct Yielder {
    sender: MessagePort,
    waiting: Rc<RefCell<VecDeque<Function>>>,
    /// Kept alive as long as the channel: the receiving port calls it.
    _on_message: Closure<dyn FnMut()>,
}

impl Yielder {
    fn new() -> Option<Self> {
        let channel = MessageChannel::new().ok()?;
        let waiting: Rc<RefCell<VecDeque<Function>>> = Rc::default();
        let on_message = {
            let waiting = waiting.clone();
            Closure::<dyn FnMut()>::new(move || {
                let next = waiting.borrow_mut().pop_front();
                if let Some(resume) = next {
                    let _ = resume.call0(&JsValue::NULL);
                }
            })
        };
        channel
            .port1()
            .set_onmessage(Some(on_message.as_ref().unchecked_ref()));
        Some(Self {
            sender: channel.port2(),
            waiting,
            _on_message: on_message,
        })
    }
}

thread_local! {
    static YIELDER: Option<Yielder> = Yielder::new();
}

/// Lets every task already queued run before this future resumes, the browser's read
/// callbacks included (a microtask would not yield to them at all). Through a message to
/// itself rather than a zero-delay timer: the browser makes a timer set from a timer's own
/// task wait at least 4 ms once five are nested, and a chain of yields would nest.
pub async fn yield_to_event_loop() {
    let promise = Promise::new(&mut |resume, _reject| {
        let posted = YIELDER.with(|yielder| {
            yielder.as_ref().is_some_and(|yielder| {
                yielder.waiting.borrow_mut().push_back(resume.clone());
                let posted = yielder.sender.post_message(&JsValue::NULL).is_ok();
                if !posted {
                    yielder.waiting.borrow_mut().pop_back();
                }
                posted
            })
        });
        if !posted {
            // No channel: resume now rather than never (the yield is only a courtesy).
            let _ = resume.call0(&JsValue::NULL);
        }
    });
    let _ = JsFuture::from(promise).await;
}
