//! The page's side of a run: starts the measurement on the thread the user chose — a dedicated
//! Web Worker running this same wasm (the default), or the page's own thread — and keeps the
//! page's copy of its progress ([`LiveTally`]), which the live numbers and charts read.
//!
//! In worker mode the page never touches a request: the worker sends the finished requests and
//! the counters a few times a second, and at the end the artifact's exact text. What each of
//! its messages, Cancel, its error event and the watchdog's tick mean is decided by the core's
//! [`WorkerSession`]; this file only wires the worker's events and a timer to it and does the
//! actions it returns.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use futures::channel::oneshot;
use futures::future::LocalBoxFuture;
use futures::FutureExt;
use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};
use web_sys::{ErrorEvent, Event, MessageEvent, Url, Worker, WorkerOptions, WorkerType};

use crate::core::config::choices::MeasurementThread;
use crate::core::live::checkpoint::{checkpoint_artifact, CheckpointError, CheckpointInput};
use crate::core::live::protocol::{WorkerAction, WorkerEnd, WorkerSession, WORKER_TICK_MS};
use crate::core::live::{
    decode_message, encode_message, FromMeasurement, LiveSnapshot, LiveTally, ToMeasurement,
};
use crate::core::plan::workload::WorkloadRequests;
use crate::core::plan::RunPlan;
use crate::core::read::opened::views::{FailureView, RowView};
use crate::core::schema::client::ClientBlock;
use crate::core::schema::ArtifactV1;

use crate::web::js::worker_script_url;
use crate::web::measure::live_run::{self, LiveRun, RunSetup};
use crate::web::measure::{prepare, scheduler};
use crate::web::platform::clock::Clock;
use crate::web::platform::js_error::js_text;
use crate::web::platform::timers::sleep_ms;
use crate::web::state::error::{RunError, USE_MAIN_THREAD};

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
    /// The handshake's state machine and what its actions act on (Cancel is one of its inputs).
    wiring: Rc<SessionWiring>,
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
                let (link, result) = spawn_worker(start, tally.clone(), clock.clone())?;
                let worker = link.worker.clone();
                let measurement = Rc::new(Self {
                    clock,
                    tally,
                    ended: ended.clone(),
                    thread: Thread::Worker(link),
                });
                let result = async move {
                    // The session terminates the worker as it ends; a result channel closed
                    // without one leaves it to be ended here.
                    let result = result.await.unwrap_or_else(|_| {
                        worker.terminate();
                        Err(RunError::WorkerGone)
                    });
                    ended.set(true);
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
            Thread::Worker(link) => link.wiring.input(WorkerSession::on_cancel),
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
/// and wires it to a [`WorkerSession`], which decides what each of its messages, Cancel, its
/// error event and the watchdog's tick mean; the actions it returns are done here.
fn spawn_worker(
    start: ToMeasurement,
    tally: Rc<RefCell<LiveTally>>,
    clock: Clock,
) -> Result<(WorkerLink, oneshot::Receiver<RunResult>), RunError> {
    let (worker, code) = new_app_worker("strobe-measurement")?;
    let start_text = encode_message(&start).map_err(RunError::UnreadableMessage)?;
    drop(start);
    let (sender, receiver) = oneshot::channel::<RunResult>();
    let wiring = Rc::new(SessionWiring {
        session: RefCell::new(WorkerSession::new(clock.now_ms())),
        clock,
        worker: worker.clone(),
        tally,
        start_text: RefCell::new(Some(start_text)),
        sender: RefCell::new(Some(sender)),
    });
    let on_message = {
        let wiring = wiring.clone();
        Closure::<dyn FnMut(MessageEvent)>::new(move |event: MessageEvent| {
            let message = event
                .data()
                .as_string()
                .ok_or_else(|| "a message that is not text".to_owned())
                .and_then(|text| decode_message::<FromMeasurement>(&text));
            let now_ms = wiring.now_ms();
            wiring.input(|session| session.on_message(message, now_ms));
        })
    };
    // A script error arrives as an ErrorEvent with a message; a worker whose code could not
    // be loaded gets a plain Event, with nothing to say but that it failed.
    let on_error = {
        let wiring = wiring.clone();
        Closure::<dyn FnMut(Event)>::new(move |event: Event| {
            let detail = event
                .dyn_ref::<ErrorEvent>()
                .map(ErrorEvent::message)
                .filter(|message| !message.is_empty())
                .unwrap_or_else(|| "its code could not be loaded".to_owned());
            wiring.input(|session| session.on_worker_error(detail));
        })
    };
    // The backstops' clock: a worker that never says it is ready, or that falls silent,
    // stops the run instead of hanging it (the session judges; this only ticks).
    {
        let wiring = wiring.clone();
        wasm_bindgen_futures::spawn_local(async move {
            while !wiring.session.borrow().is_ended() {
                sleep_ms(WORKER_TICK_MS).await;
                let now_ms = wiring.now_ms();
                wiring.input(|session| session.on_tick(now_ms));
            }
        });
    }
    worker.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    worker.set_onerror(Some(on_error.as_ref().unchecked_ref()));
    code.hand_over(&worker)?;
    Ok((
        WorkerLink {
            worker,
            wiring,
            _on_message: on_message,
            _on_error: on_error,
        },
        receiver,
    ))
}

/// What a [`WorkerSession`]'s actions act on: the worker, the page's tally, the run's `Start`
/// text (held here, not in the session: it carries the API key) and the run's result.
struct SessionWiring {
    session: RefCell<WorkerSession>,
    clock: Clock,
    worker: Worker,
    tally: Rc<RefCell<LiveTally>>,
    start_text: RefCell<Option<String>>,
    sender: RefCell<Option<oneshot::Sender<RunResult>>>,
}

impl SessionWiring {
    /// The page's clock now, ms.
    fn now_ms(&self) -> f64 {
        self.clock.now_ms()
    }

    /// Gives the session one input and does what it answers.
    fn input(&self, step: impl FnOnce(&mut WorkerSession) -> Vec<WorkerAction>) {
        let actions = step(&mut self.session.borrow_mut());
        for action in actions {
            self.perform(action);
        }
    }

    fn perform(&self, action: WorkerAction) {
        match action {
            WorkerAction::PostStart => {
                if let Some(text) = self.start_text.borrow_mut().take() {
                    self.post(&text, "the run");
                }
            }
            WorkerAction::PostCancel => match encode_message(&ToMeasurement::Cancel) {
                Ok(text) => self.post(&text, "Cancel"),
                Err(reason) => self.input(|session| session.on_worker_error(reason)),
            },
            WorkerAction::UpdateTally { finished, progress } => {
                self.tally.borrow_mut().update(finished, progress);
            }
            WorkerAction::Finish(end) => {
                // The key goes with the run: a session that ended never posts its start.
                self.start_text.borrow_mut().take();
                if let Some(sender) = self.sender.borrow_mut().take() {
                    // A dropped receiver means nobody waits for the result any more.
                    sender.send(run_result(end)).unwrap_or_default();
                }
            }
            WorkerAction::Terminate => self.worker.terminate(),
        }
    }

    /// Posts `text` to the worker; a post the browser refuses ends the session as the worker's
    /// failure, since the worker would never hear `what`.
    fn post(&self, text: &str, what: &str) {
        if let Err(error) = self.worker.post_message(&JsValue::from_str(text)) {
            let detail = format!("the page could not send it {what} ({})", js_text(&error));
            self.input(|session| session.on_worker_error(detail));
        }
    }
}

/// The page's words for how a worker's run ended.
fn run_result(end: WorkerEnd) -> RunResult {
    match end {
        WorkerEnd::Finished(artifact) => Ok(*artifact),
        WorkerEnd::Failed(reason) => Err(RunError::Measurement(reason)),
        WorkerEnd::UnreadableArtifact(reason) => Err(RunError::UnreadableArtifact(reason)),
        WorkerEnd::UnreadableMessage(reason) => Err(RunError::UnreadableMessage(reason)),
        WorkerEnd::WorkerFailed(detail) => Err(RunError::WorkerFailed(detail)),
        WorkerEnd::StartTimedOut { limit_s } => Err(RunError::WorkerStartTimedOut(limit_s)),
        WorkerEnd::Silent {
            silence_s,
            reported,
        } => Err(RunError::WorkerSilent {
            silence_s,
            reported,
        }),
        WorkerEnd::CancelledBeforeStart => Err(RunError::CancelledBeforeStart),
    }
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
