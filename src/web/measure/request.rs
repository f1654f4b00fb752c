//! One measured request on the measuring thread: its body (built ahead, or now), its abort
//! control under the run's watchdog, the send and the read through the transport, and its
//! conclusion into a row or a failure record; or, after a Cancel, the failure of a request
//! never sent.

use wasm_bindgen::JsValue;

use crate::core::observe::accumulate::CapturedReply;
use crate::core::observe::conclude::{conclude_request, RequestOutcome, RequestPlanFacts};
use crate::core::observe::failure::RequestError;
use crate::core::plan::RunPlan;
use crate::core::prompt::PromptSpec;
use crate::core::schema::rows::FailureRecord;

use crate::web::measure::body::{planned_body, DRY_RUN_BODY};
use crate::web::measure::live_run::{planned_context, LiveRun, RunSetup};
use crate::web::measure::send::{send_watched, SendOptions};
use crate::web::measure::transport::{synthetic_stream, RequestControl, RequestHeaders};

/// The failure of a request the run was cancelled before it sent.
pub(super) fn cancelled_before_sending(plan: &RunPlan, index: u64) -> RequestOutcome {
    let error = RequestError::new(
        "AbortError",
        "the run was cancelled before this request was sent",
    );
    never_sent(plan, index, &error)
}

/// The failure of request `index`, which was never sent, for `error`'s reason.
pub(super) fn never_sent(plan: &RunPlan, index: u64, error: &RequestError) -> RequestOutcome {
    RequestOutcome::Failed(FailureRecord::request_error(
        index,
        planned_context(plan, index),
        error,
        0.0,
    ))
}

/// Request `index` of the plan: its body built ahead, or now.
pub(super) async fn run_one(
    live: &LiveRun,
    setup: &RunSetup,
    prompt_spec: &PromptSpec,
    endpoint: usize,
    url: &str,
    index: u64,
) -> RequestOutcome {
    let body = live.prepared_bodies.borrow_mut().remove(&index);
    let body = match body {
        Some(body) => Ok(body),
        // A dry run sends nothing: its requests need no prompt (building one per request
        // would cost a long context's run seconds).
        None if live.dry_run => Ok(JsValue::from_str(DRY_RUN_BODY)),
        None => planned_body(setup, prompt_spec, index).map(|body| JsValue::from_str(&body)),
    };
    let send = RequestSend {
        body,
        headers: None,
        reply_limit: None,
    };
    run_request(live, setup, endpoint, url, index, send).await.0
}

/// What one request sends beyond the run's own settings.
pub(super) struct RequestSend<'a> {
    /// Its body, or why it cannot be built (then it fails with that reason, unsent).
    pub body: Result<JsValue, String>,
    /// Its session's headers instead of the run's.
    pub headers: Option<&'a RequestHeaders>,
    /// Keep its whole reply, up to this many characters (a session's live history).
    pub reply_limit: Option<usize>,
}

/// Sends request `index` with `send`'s body under the run's watchdog, and concludes it: its
/// row or failure, and its whole reply when `send` asked for it.
pub(super) async fn run_request(
    live: &LiveRun,
    setup: &RunSetup,
    endpoint: usize,
    url: &str,
    index: u64,
    send: RequestSend<'_>,
) -> (RequestOutcome, Option<CapturedReply>) {
    let clock = &live.clock;
    let request_started_ms = clock.now_ms();
    let facts = setup.plan_facts(index, live.run_started_ms.get());
    let body = match send.body {
        Ok(body) => body,
        Err(err) => {
            let error = RequestError::new("ValueError", err);
            let outcome = conclude_request(&facts, request_started_ms, Err(error), clock.now_ms());
            return (outcome, None);
        }
    };
    let control = match RequestControl::new(clock.now_ms()) {
        Ok(control) => control,
        Err(error) => {
            let outcome = conclude_request(&facts, request_started_ms, Err(error), clock.now_ms());
            return (outcome, None);
        }
    };
    live.controls.borrow_mut().insert(index, control.clone());
    let synthetic = live
        .dry_run
        .then(|| synthetic_stream(&rehearsal_content(setup, &facts)));
    let options = SendOptions {
        chunk_traces: setup.config.client.chunk_traces,
        synthetic: synthetic.as_ref(),
        headers: send.headers,
        reply_limit: send.reply_limit,
    };
    let (sent_ms, mut result) = send_watched(live, setup, &control, url, &body, options).await;
    live.controls.borrow_mut().remove(&index);
    live.sent.borrow_mut().insert(index, (endpoint, sent_ms));
    let reply = result.as_mut().ok().and_then(|stream| stream.reply.take());
    let outcome = conclude_request(&facts, request_started_ms, result, clock.now_ms());
    (outcome, reply)
}

/// What a rehearsed request's stream answers: the canary marker it is asked for, if any, then
/// the requested words (at most [`REHEARSAL_MOST_WORDS`]: a run asking for more rehearses its
/// conclusion on a short answer, which fails the word count; the code is the same).
pub(super) fn rehearsal_content(setup: &RunSetup, facts: &RequestPlanFacts) -> Vec<String> {
    let mut content: Vec<String> = facts.expected_marker.iter().cloned().collect();
    let words = setup.config.response_words.clamp(1, REHEARSAL_MOST_WORDS) as usize;
    content.extend(std::iter::repeat_n(" code".to_string(), words));
    content
}

/// The most words a rehearsed stream answers with (a run asking for more rehearses its
/// conclusion on a short answer, which fails the word count: the code is the same).
pub(super) const REHEARSAL_MOST_WORDS: u64 = 256;
