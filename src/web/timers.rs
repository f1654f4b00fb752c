//! Timers as futures, on the browser's `setTimeout` (the page's or the worker's).

use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;

use js_sys::{Function, Promise};
use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{MessageChannel, MessagePort};

use super::scope;

/// Resolves after about `ms` milliseconds (at least one event-loop turn).
pub async fn sleep_ms(ms: f64) {
    let promise = js_sys::Promise::new(&mut |resolve, _reject| {
        let resolve_later = resolve.clone();
        let callback = Closure::once_into_js(move || {
            let _ = resolve_later.call0(&wasm_bindgen::JsValue::NULL);
        });
        let delay = ms.clamp(0.0, i32::MAX as f64) as i32;
        if !scope::set_timeout(callback.unchecked_ref(), delay) {
            // No timer to wait on: resolve now rather than never.
            let _ = resolve.call0(&wasm_bindgen::JsValue::NULL);
        }
    });
    let _ = JsFuture::from(promise).await;
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
