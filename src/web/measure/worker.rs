//! The measurement worker's side: when this app's wasm starts in a dedicated worker (there is
//! no window), it serves runs here. It receives [`ToMeasurement`] messages from the page, runs
//! the scheduler, transport, clock and SSE decoding on the worker's own thread, and sends
//! progress about every [`PROGRESS_INTERVAL_MS`] and the artifact's text at the end. Rendering,
//! layout and garbage collection on the page's thread then cannot delay a read's timestamp.

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::Arc;

use leptos::wasm_split::wasm_split;
use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::spawn_local;
use web_sys::{DedicatedWorkerGlobalScope, MessageEvent};

use crate::core::config::settings::RunConfig;
use crate::core::live::{
    decode_message, encode_message, FromMeasurement, LiveProgress, ToMeasurement,
};
use crate::core::plan::workload::WorkloadRequests;
use crate::core::plan::RunPlan;
use crate::core::schema::calibration::ContextCalibration;

use crate::web::measure::live_run::{self, LiveRun, RunSetup};
use crate::web::measure::scheduler;
use crate::web::platform::clock::Clock;
use crate::web::platform::parts::PartNotLoaded;
use crate::web::platform::timers::sleep_ms;

/// How often the worker sends the page what finished: as often as the page refreshes its
/// numbers, and cheap (a few rows of JSON) next to the reads it shares the thread with.
const PROGRESS_INTERVAL_MS: f64 = 250.0;

/// Listens for the page's messages; called by `main` when it runs in a worker. The measuring
/// code is a part of the wasm of its own, fetched as the worker starts (the page waits for its
/// `Ready`); one that cannot be fetched is a `Failed` message with what to do.
pub async fn serve_measurements() {
    if let Err(error) = serve_part().await {
        post(&failed(format!(
            "the measurement worker could not start: {error}"
        )));
    }
}

/// Sets the worker's message handler and says it is ready (a split point: the measuring part
/// of the wasm).
#[wasm_split(measure, wasm_split_path = ::leptos::wasm_split, fallible)]
fn serve_part() -> Result<(), PartNotLoaded> {
    let scope: DedicatedWorkerGlobalScope = js_sys::global().unchecked_into();
    let current: Rc<RefCell<Option<Rc<LiveRun>>>> = Rc::new(RefCell::new(None));
    let on_message = Closure::<dyn FnMut(MessageEvent)>::new(move |event: MessageEvent| {
        let message = event
            .data()
            .as_string()
            .ok_or_else(|| "the page sent the measurement worker something not text".to_owned())
            .and_then(|text| decode_message::<ToMeasurement>(&text));
        match message {
            Ok(ToMeasurement::Start {
                config,
                discovered_max_model_len,
                api_key,
                calibration,
                workload,
            }) => {
                // One run per worker: the page starts a fresh worker for every run.
                if current.borrow().is_none() {
                    spawn_local(run(
                        *config,
                        discovered_max_model_len,
                        api_key,
                        calibration,
                        workload.map(|workload| Arc::new(*workload)),
                        current.clone(),
                    ));
                }
            }
            Ok(ToMeasurement::Cancel) => {
                if let Some(live) = current.borrow().as_ref() {
                    live.cancel();
                }
            }
            Err(reason) => post(&failed(reason)),
        }
    });
    scope.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    // The listener lives as long as the worker.
    on_message.forget();
    post(&FromMeasurement::Ready);
    Ok(())
}

async fn run(
    config: RunConfig,
    discovered_max_model_len: Option<u64>,
    api_key: Option<String>,
    calibration: Option<ContextCalibration>,
    workload: Option<Arc<WorkloadRequests>>,
    current: Rc<RefCell<Option<Rc<LiveRun>>>>,
) {
    let plan = match RunPlan::for_run(&config, discovered_max_model_len, workload) {
        Ok(plan) => match calibration {
            Some(calibration) => plan.with_calibration(calibration),
            None => plan,
        },
        Err(error) => return post(&failed(error.to_string())),
    };
    let Some(clock) = Clock::of_this_thread() else {
        return post(&failed("the worker has no performance clock".to_owned()));
    };
    let setup = Rc::new(RunSetup {
        config: plan.config().clone(),
        plan,
        api_key,
    });
    let live = live_run::start(clock, &setup);
    *current.borrow_mut() = Some(live.clone());
    let sent = Rc::new(Cell::new(0usize));
    let done = Rc::new(Cell::new(false));
    spawn_local(report_progress(live.clone(), sent.clone(), done.clone()));
    let result = scheduler::execute(live.clone(), setup).await;
    done.set(true);
    let finished = live.finished_since(sent.get());
    let progress = live.progress();
    let message = match result.and_then(|artifact| {
        artifact
            .to_json_text()
            .map_err(|err| format!("the run finished but its artifact could not be written: {err}"))
    }) {
        Ok(artifact_text) => FromMeasurement::Finished {
            progress,
            finished,
            artifact_text,
        },
        Err(reason) => FromMeasurement::Failed {
            progress,
            finished,
            reason,
        },
    };
    post(&message);
}

/// Sends what finished since the last report, until the run is done.
async fn report_progress(live: Rc<LiveRun>, sent: Rc<Cell<usize>>, done: Rc<Cell<bool>>) {
    loop {
        sleep_ms(PROGRESS_INTERVAL_MS).await;
        if done.get() {
            return;
        }
        let finished = live.finished_since(sent.get());
        sent.set(sent.get() + finished.len());
        post(&FromMeasurement::Progress {
            progress: live.progress(),
            finished,
        });
    }
}

/// The worker's failure before any request of the run ended: no counters, no rows, the reason.
fn failed(reason: String) -> FromMeasurement {
    FromMeasurement::Failed {
        progress: LiveProgress::default(),
        finished: Vec::new(),
        reason,
    }
}

fn post(message: &FromMeasurement) {
    let scope: DedicatedWorkerGlobalScope = js_sys::global().unchecked_into();
    let text = encode_message(message)
        .unwrap_or_else(|reason| encode_message(&failed(reason)).unwrap_or_default());
    let _ = scope.post_message(&JsValue::from_str(&text));
}
