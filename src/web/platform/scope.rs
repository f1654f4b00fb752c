//! The global scope the code runs in: the page's `window`, or the measurement worker's
//! `DedicatedWorkerGlobalScope`. The runner, the transport, the clock and the timers reach the
//! browser only through this module, so the same code measures on either thread.

use js_sys::Function;
use wasm_bindgen::{JsCast, JsValue};
use web_sys::{Performance, Window, WorkerGlobalScope};

/// The two kinds of global scope strobe runs in.
#[derive(Clone)]
enum Scope {
    Window(Window),
    Worker(WorkerGlobalScope),
}

thread_local! {
    /// This thread's scope, found once: the test is an `instanceof Window`, which in a worker
    /// (where `Window` is not defined) throws and is caught, and that cost, paid on every timer
    /// and every request, held the measuring thread.
    static THIS_SCOPE: Option<Scope> = find_scope();
}

fn find_scope() -> Option<Scope> {
    let global = js_sys::global();
    if let Some(window) = global.dyn_ref::<Window>() {
        return Some(Scope::Window(window.clone()));
    }
    global
        .dyn_into::<WorkerGlobalScope>()
        .ok()
        .map(Scope::Worker)
}

fn scope() -> Option<Scope> {
    THIS_SCOPE.with(Clone::clone)
}

/// Whether this code runs in a worker (no document, no window).
pub fn in_worker() -> bool {
    matches!(scope(), Some(Scope::Worker(_)))
}

/// The scope's `performance` object (its own time origin: a worker's starts when the worker
/// does).
pub fn performance() -> Option<Performance> {
    match scope()? {
        Scope::Window(window) => window.performance(),
        Scope::Worker(worker) => worker.performance(),
    }
}

/// `setTimeout(callback, ms)` in this scope: the timer's id, or `None` when it could not be
/// scheduled.
pub fn set_timeout(callback: &Function, ms: i32) -> Option<i32> {
    let scheduled = match scope()? {
        Scope::Window(window) => {
            window.set_timeout_with_callback_and_timeout_and_arguments_0(callback, ms)
        }
        Scope::Worker(worker) => {
            worker.set_timeout_with_callback_and_timeout_and_arguments_0(callback, ms)
        }
    };
    scheduled.ok()
}

/// `clearTimeout(id)` in this scope: the timer set as `id` will not fire.
pub fn clear_timeout(id: i32) {
    match scope() {
        Some(Scope::Window(window)) => window.clear_timeout_with_handle(id),
        Some(Scope::Worker(worker)) => worker.clear_timeout_with_handle(id),
        None => {}
    }
}

/// Whether the scope is cross-origin isolated (then the timer is precise to 5 µs). A worker
/// created by an isolated page is isolated too.
pub fn cross_origin_isolated() -> bool {
    js_sys::Reflect::get(&js_sys::global(), &"crossOriginIsolated".into())
        .ok()
        .and_then(|value| value.as_bool())
        .unwrap_or(false)
}

/// Whether a service worker controls this page (`navigator.serviceWorker.controller`); always
/// false in a worker, whose navigator has no `serviceWorker`.
pub fn service_worker_controlled() -> bool {
    let navigator =
        js_sys::Reflect::get(&js_sys::global(), &"navigator".into()).unwrap_or(JsValue::UNDEFINED);
    js_sys::Reflect::get(&navigator, &"serviceWorker".into())
        .ok()
        .filter(|container| container.is_object())
        .and_then(|container| js_sys::Reflect::get(&container, &"controller".into()).ok())
        .is_some_and(|controller| controller.is_object())
}

/// `navigator.userAgent` of this scope (a worker's navigator says the same as the page's).
pub fn user_agent() -> String {
    let navigator =
        js_sys::Reflect::get(&js_sys::global(), &"navigator".into()).unwrap_or(JsValue::UNDEFINED);
    js_sys::Reflect::get(&navigator, &"userAgent".into())
        .ok()
        .and_then(|agent| agent.as_string())
        .unwrap_or_default()
}
