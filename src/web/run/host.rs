//! The page's side of a run: starts the measurement on the thread the user chose — a dedicated
//! Web Worker running this same wasm (the default), or the page's own thread — and keeps the
//! page's copy of its progress ([`LiveTally`]), which the live numbers and charts read.
//!
//! In worker mode the page never touches a request: the worker sends the finished requests and
//! the counters a few times a second, and at the end the artifact's exact text.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use futures::channel::oneshot;
use futures::future::LocalBoxFuture;
use futures::FutureExt;
use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};
use web_sys::{ErrorEvent, Event, MessageEvent, Url, Worker, WorkerOptions, WorkerType};

use crate::core::artifact::schema::client::ClientBlock;
use crate::core::artifact::schema::ArtifactV1;
use crate::core::config::choices::MeasurementThread;
use crate::core::live::checkpoint::{checkpoint_artifact, CheckpointError, CheckpointInput};
use crate::core::live::{
    decode_message, encode_message, FromMeasurement, LiveSnapshot, LiveTally, ToMeasurement,
};
use crate::core::plan::workload::WorkloadRequests;
use crate::core::plan::RunPlan;
use crate::core::read::loaded::views::{FailureView, RowView};

use crate::web::js::worker_script_url;
use crate::web::measure::live_run::{self, LiveRun, RunSetup};
use crate::web::measure::{prepare, scheduler};
use crate::web::platform::clock::Clock;
use crate::web::platform::js_error::js_text;
use crate::web::platform::timers::sleep_ms;
use crate::web::state::error::{RunError, USE_MAIN_THREAD};

/// How long a new measurement worker may take to load and say it is ready.
const WORKER_START_TIMEOUT_MS: f64 = 30_000.0;

/// How long a running measurement worker may stay silent before the run is given up: it
/// reports every 250 ms, so this is forty missed reports.
const WORKER_SILENCE_LIMIT_MS: f64 = 10_000.0;

/// How a run ends: its artifact, or the reason it has none.
pub type RunResult = Result<ArtifactV1, RunError>;

/// A run in progress, as the page sees it.
pub struct Measurement {
    /// The page's clock, for the elapsed time shown.
    clock: Clock,
    tally: Rc<RefCell<LiveTally>>,
    /// The run's result has arrived (whatever the last counters said).
    ended: Rc<Cell<bool>>,
    thread: Thread,
}

enum Thread {
    /// The run executes on the page's thread.
    Page(Rc<LiveRun>),
    /// The run executes in a worker; the page holds the worker and its listeners.
    Worker(WorkerLink),
}

/// The worker and the page's listeners on it (kept alive as long as the run is shown).
struct WorkerLink {
    worker: Worker,
    /// Cancel was pressed: before the worker is ready, that means it is never told to start.
    cancel_requested: Rc<Cell<bool>>,
    _on_message: Closure<dyn FnMut(MessageEvent)>,
    _on_error: Closure<dyn FnMut(Event)>,
}

impl Measurement {
    /// Starts `setup` on the thread its configuration names. Returns the handle the page polls
    /// and the future of the run's result.
    pub fn start(
        clock: Clock,
        setup: RunSetup,
        discovered_max_model_len: Option<u64>,
    ) -> Result<(Rc<Self>, LocalBoxFuture<'static, RunResult>), RunError> {
        let tally = Rc::new(RefCell::new(LiveTally::new(setup.plan.requests())));
        let ended = Rc::new(Cell::new(false));
        prepare::rehearse_live_updates(&setup, clock.now_unix_ms());
        match setup.config.client.measurement {
            MeasurementThread::Main => {
                let run_clock = Clock::of_this_thread().ok_or(RunError::NoClock)?;
                let setup = Rc::new(setup);
                let live = live_run::start(run_clock, &setup);
                let measurement = Rc::new(Self {
                    clock,
                    tally,
                    ended: ended.clone(),
                    thread: Thread::Page(live.clone()),
                });
                let result = async move {
                    let result = scheduler::execute(live, setup)
                        .await
                        .map_err(RunError::Measurement);
                    ended.set(true);
                    result
                };
                Ok((measurement, result.boxed_local()))
            }
            MeasurementThread::Worker => {
                let start = ToMeasurement::Start {
                    config: Box::new(setup.config),
                    discovered_max_model_len,
                    api_key: setup.api_key,
                    calibration: setup.plan.calibration().cloned(),
                    workload: setup
                        .plan
                        .workload()
                        .map(|workload| Box::new(WorkloadRequests::clone(workload))),
                };
                let (link, result) = spawn_worker(start, tally.clone())?;
                let worker = link.worker.clone();
                let measurement = Rc::new(Self {
                    clock,
                    tally,
                    ended: ended.clone(),
                    thread: Thread::Worker(link),
                });
                let result = async move {
                    let result = result.await.unwrap_or(Err(RunError::WorkerGone));
                    ended.set(true);
                    // Its job is done: free its memory and connections.
                    worker.terminate();
                    result
                };
                Ok((measurement, result.boxed_local()))
            }
        }
    }

    /// Cancels the run: nothing new starts, what is in flight is aborted, finished rows stay.
    pub fn cancel(&self) {
        match &self.thread {
            Thread::Page(live) => live.cancel(),
            Thread::Worker(link) => {
                link.cancel_requested.set(true);
                if let Ok(text) = encode_message(&ToMeasurement::Cancel) {
                    let _ = link.worker.post_message(&JsValue::from_str(&text));
                }
            }
        }
    }

    /// Copies what the run did since the last call into the page's tally (on the page's
    /// thread; a worker's messages update the tally as they arrive).
    pub fn refresh(&self) {
        if let Thread::Page(live) = &self.thread {
            let mut tally = self.tally.borrow_mut();
            let seen = tally.finished_count();
            tally.update(live.finished_since(seen), live.progress());
        }
    }

    /// The running numbers now.
    pub fn snapshot(&self) -> LiveSnapshot {
        self.tally.borrow().snapshot(self.clock.now_unix_ms())
    }

    /// The finished requests as the live charts read them.
    pub fn views(&self) -> (Vec<RowView>, Vec<FailureView>) {
        self.tally.borrow().views()
    }

    /// How many requests have ended, as far as the page has heard.
    pub fn finished_count(&self) -> usize {
        self.tally.borrow().finished_count()
    }

    /// The artifact of the run so far (docs/guide/results.md, *Checkpoints*): what has ended, and
    /// every other planned request as not finished; `run_failed` when the run stopped so.
    pub fn checkpoint(
        &self,
        plan: &RunPlan,
        client: ClientBlock,
        run_failed: Option<String>,
    ) -> Result<ArtifactV1, CheckpointError> {
        let tally = self.tally.borrow();
        checkpoint_artifact(CheckpointInput {
            plan,
            finished: tally.finished(),
            progress: tally.progress(),
            saved_unix_ms: self.clock.now_unix_ms(),
            client,
            run_failed,
        })
    }

    /// Whether the run is still warming up, as far as the page has heard.
    pub fn warming_up(&self) -> bool {
        self.tally.borrow().progress().warming_up
    }

    /// The page's clock now, in ms.
    pub fn now_ms(&self) -> f64 {
        self.clock.now_ms()
    }

    /// Whether the run has ended.
    pub fn is_finished(&self) -> bool {
        self.ended.get() || self.tally.borrow().progress().finished_unix_ms.is_some()
    }
}

/// Starts a module worker that loads this app's own wasm (its `main` sees no window and
/// serves measurements, see [`serve_measurements`](crate::web::measure::worker::serve_measurements)),
/// sends it `start` once it is ready, and routes its messages into `tally` and the result.
fn spawn_worker(
    start: ToMeasurement,
    tally: Rc<RefCell<LiveTally>>,
) -> Result<(WorkerLink, oneshot::Receiver<RunResult>), RunError> {
    let (worker, code) = new_app_worker("strobe-measurement")?;

    let (sender, receiver) = oneshot::channel::<RunResult>();
    let sender = Rc::new(RefCell::new(Some(sender)));
    let finish = {
        let sender = sender.clone();
        move |result: RunResult| {
            if let Some(sender) = sender.borrow_mut().take() {
                let _ = sender.send(result);
            }
        }
    };
    let start_text = encode_message(&start).map_err(RunError::UnreadableMessage)?;
    drop(start);
    let ready = Rc::new(Cell::new(false));
    let cancel_requested = Rc::new(Cell::new(false));
    let clock = Clock::of_this_thread();
    let now_ms = move || clock.as_ref().map_or(0.0, Clock::now_ms);
    let last_heard_ms = Rc::new(Cell::new(now_ms()));
    let on_message = {
        let worker = worker.clone();
        let finish = finish.clone();
        let ready = ready.clone();
        let cancel_requested = cancel_requested.clone();
        let last_heard_ms = last_heard_ms.clone();
        let tally = tally.clone();
        let now_ms = now_ms.clone();
        let mut start_text = Some(start_text);
        Closure::<dyn FnMut(MessageEvent)>::new(move |event: MessageEvent| {
            last_heard_ms.set(now_ms());
            let message = event
                .data()
                .as_string()
                .ok_or_else(|| "a message that is not text".to_owned())
                .and_then(|text| decode_message::<FromMeasurement>(&text));
            match message {
                Ok(FromMeasurement::Ready) => {
                    ready.set(true);
                    if cancel_requested.get() {
                        // A Cancel posted while the worker was loading reached no listener.
                        finish(Err(RunError::CancelledBeforeStart));
                        start_text = None;
                    }
                    if let Some(text) = start_text.take() {
                        let _ = worker.post_message(&JsValue::from_str(&text));
                    }
                }
                Ok(FromMeasurement::Progress { progress, finished }) => {
                    tally.borrow_mut().update(finished, progress);
                }
                Ok(FromMeasurement::Finished {
                    progress,
                    finished,
                    artifact_text,
                }) => {
                    tally.borrow_mut().update(finished, progress);
                    finish(
                        serde_json::from_str::<ArtifactV1>(&artifact_text)
                            .map_err(|err| RunError::UnreadableArtifact(err.to_string())),
                    );
                }
                Ok(FromMeasurement::Failed {
                    progress,
                    finished,
                    reason,
                }) => {
                    tally.borrow_mut().update(finished, progress);
                    finish(Err(RunError::Measurement(reason)));
                }
                Err(reason) => finish(Err(RunError::UnreadableMessage(reason))),
            }
        })
    };
    // A script error arrives as an ErrorEvent with a message; a worker whose code could not
    // be loaded gets a plain Event, with nothing to say but that it failed.
    let on_error = {
        let finish = finish.clone();
        Closure::<dyn FnMut(Event)>::new(move |event: Event| {
            let detail = event
                .dyn_ref::<ErrorEvent>()
                .map(ErrorEvent::message)
                .filter(|message| !message.is_empty())
                .unwrap_or_else(|| "its code could not be loaded".to_owned());
            finish(Err(RunError::WorkerFailed(detail)));
        })
    };
    // The backstops: a worker that never says it is ready, or that falls silent (it reports
    // four times a second while it runs; a crashed worker sends nothing), stops the run
    // instead of hanging it.
    wasm_bindgen_futures::spawn_local(async move {
        sleep_ms(WORKER_START_TIMEOUT_MS).await;
        if !ready.get() {
            finish(Err(RunError::WorkerStartTimedOut(
                WORKER_START_TIMEOUT_MS / 1000.0,
            )));
            return;
        }
        while sender.borrow().is_some() {
            if now_ms() - last_heard_ms.get() > WORKER_SILENCE_LIMIT_MS {
                finish(Err(RunError::WorkerSilent {
                    silence_s: WORKER_SILENCE_LIMIT_MS / 1000.0,
                    reported: tally.borrow().finished_count(),
                }));
                return;
            }
            sleep_ms(1_000.0).await;
        }
    });
    worker.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    worker.set_onerror(Some(on_error.as_ref().unchecked_ref()));
    code.hand_over(&worker)?;
    Ok((
        WorkerLink {
            worker,
            cancel_requested,
            _on_message: on_message,
            _on_error: on_error,
        },
        receiver,
    ))
}

/// Where this app's code is, to hand over to a worker of its own.
pub struct AppCode {
    glue_url: String,
    wasm_url: String,
}

/// Starts a module worker named `name` that will run this app's own wasm once
/// [`AppCode::hand_over`] gives it the code (its `main` sees no window and serves what the
/// name says: measurements, or reading a workload file). Set its listeners before handing the
/// code over: its first message follows soon after.
pub fn new_app_worker(name: &str) -> Result<(Worker, AppCode), RunError> {
    let (glue_url, wasm_url) = app_module_urls()?;
    // The bootstrap is a module of the app's own (src/web/js/measure_worker.js), served beside
    // the glue, so no script is built from text and a CSP needs only `worker-src 'self'`.
    let worker_options = WorkerOptions::new();
    worker_options.set_type(WorkerType::Module);
    worker_options.set_name(name);
    let worker = Worker::new_with_options(&worker_script_url(), &worker_options)
        .map_err(|err| RunError::WorkerNotStarted(js_text(&err)))?;
    Ok((worker, AppCode { glue_url, wasm_url }))
}

impl AppCode {
    /// The worker's first message: the glue to import and the page's own compiled
    /// `WebAssembly.Module` (or, failing that, the wasm's URL), whose optimized code it
    /// shares.
    pub fn hand_over(&self, worker: &Worker) -> Result<(), RunError> {
        let module = wasm_bindgen::module();
        let module = if module.is_instance_of::<js_sys::WebAssembly::Module>() {
            module
        } else {
            JsValue::from_str(&self.wasm_url)
        };
        let bootstrap = js_sys::Object::new();
        for (key, value) in [
            ("glue", JsValue::from_str(&self.glue_url)),
            ("module", module),
            ("useMainThread", JsValue::from_str(USE_MAIN_THREAD)),
        ] {
            let _ = js_sys::Reflect::set(&bootstrap, &JsValue::from_str(key), &value);
        }
        worker
            .post_message(&bootstrap)
            .map_err(|err| RunError::CodeNotHandedOver(js_text(&err)))
    }
}

/// The absolute URLs of this app's JavaScript glue and wasm module, from the preload links the
/// build (trunk) puts into the page.
fn app_module_urls() -> Result<(String, String), RunError> {
    let missing = || RunError::AppFilesNotFound;
    let document = web_sys::window()
        .and_then(|window| window.document())
        .ok_or_else(missing)?;
    let base = document.base_uri().ok().flatten().ok_or_else(missing)?;
    let href_of = |selector: &str| -> Result<String, RunError> {
        let href = document
            .query_selector(selector)
            .ok()
            .flatten()
            .and_then(|link| link.get_attribute("href"))
            .ok_or_else(missing)?;
        Url::new_with_base(&href, &base)
            .map(|url| url.href())
            .map_err(|_| missing())
    };
    Ok((
        href_of("link[rel=modulepreload][href$='.js']")?,
        href_of("link[rel=preload][href$='.wasm']")?,
    ))
}
