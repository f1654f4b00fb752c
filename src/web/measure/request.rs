//! One measured request on the measuring thread: its body (built ahead, or now), its abort
//! control under the run's watchdog, the send and the read through the transport, and its
//! conclusion into a row or a failure record; or, after a Cancel, the failure of a request
//! never sent.

use wasm_bindgen::JsValue;

use crate::core::artifact::schema::rows::FailureRecord;
use crate::core::observe::conclude::{conclude_request, RequestOutcome};
use crate::core::observe::failure::RequestError;
use crate::core::plan::RunPlan;
use crate::core::prompt::PromptSpec;

use crate::web::measure::live_run::{planned_context, LiveRun, RunSetup};
use crate::web::measure::prepare::{planned_body, rehearsal_content};
use crate::web::measure::transport::{synthetic_stream, RequestControl};
use crate::web::measure::warmup::send_watched;

/// The failure of a request the run was cancelled before it sent.
pub(super) fn cancelled_before_sending(plan: &RunPlan, index: u64) -> RequestOutcome {
    let error = RequestError::new(
        "AbortError",
        "the run was cancelled before this request was sent",
    );
    RequestOutcome::Failed(FailureRecord::request_error(
        index,
        planned_context(plan, index),
        &error,
        0.0,
    ))
}

pub(super) async fn run_one(
    live: &LiveRun,
    setup: &RunSetup,
    prompt_spec: &PromptSpec,
    endpoint: usize,
    url: &str,
    index: u64,
) -> RequestOutcome {
    let clock = &live.clock;
    let request_started_ms = clock.now_ms();
    let facts = setup.plan_facts(index, live.run_started_ms.get());
    let prepared = live.prepared_bodies.borrow_mut().remove(&index);
    let body = match prepared {
        Some(body) => body,
        // A dry run sends nothing: its requests need no prompt (building one per request
        // would cost a long context's run seconds).
        None if live.dry_run => JsValue::from_str(DRY_RUN_BODY),
        None => match planned_body(setup, prompt_spec, index) {
            Ok(body) => JsValue::from_str(&body),
            Err(err) => {
                let error = RequestError::new("ValueError", err);
                return conclude_request(&facts, request_started_ms, Err(error), clock.now_ms());
            }
        },
    };
    let control = match RequestControl::new(clock.now_ms()) {
        Ok(control) => control,
        Err(error) => {
            return conclude_request(&facts, request_started_ms, Err(error), clock.now_ms())
        }
    };
    live.controls.borrow_mut().insert(index, control.clone());
    let chunk_traces = setup.config.client.chunk_traces;
    let synthetic = live
        .dry_run
        .then(|| synthetic_stream(&rehearsal_content(setup, &facts)));
    let (sent_ms, result) = send_watched(
        live,
        setup,
        &control,
        url,
        &body,
        chunk_traces,
        synthetic.as_ref(),
    )
    .await;
    live.controls.borrow_mut().remove(&index);
    live.sent.borrow_mut().insert(index, (endpoint, sent_ms));
    conclude_request(&facts, request_started_ms, result, clock.now_ms())
}

/// The body of a dry run's requests, which are never sent.
pub(super) const DRY_RUN_BODY: &str = "{}";
