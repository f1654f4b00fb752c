//! The page's context calibration before a run (`context_calibration=on`): two unmeasured probe
//! requests to the run's first endpoint, whose `usage.prompt_tokens` fix how the plan's prompts
//! are sized ([`crate::core::plan::calibration`]; docs/guide/metrics.md, *Context calibration*).
//! They are sent before the measuring thread starts, so nothing of them is in the measurement.

use std::rc::Rc;

use leptos::task::spawn_local;
use wasm_bindgen::JsValue;

use crate::core::config::settings::RunConfig;
use crate::core::plan::calibration::{
    probe_prompt_tokens, second_probe_budget, CalibrationError, FIRST_PROBE_BUDGET_TOKENS,
};
use crate::core::plan::RunPlan;
use crate::core::prompt::{calibration_probe_prompt, calibration_request_body};
use crate::core::schema::calibration::{CalibrationProbe, ContextCalibration};

use crate::web::measure::transport::{
    stream_chat, AbortCause, ChatRequest, RequestControl, RequestHeaders,
};
use crate::web::platform::clock::Clock;
use crate::web::platform::timers::sleep_ms;

/// Measures how the server counts the benchmark's prompts: a small probe, then one aimed at the
/// plan's largest context, and the line through them.
pub async fn calibrate(
    clock: &Clock,
    config: &RunConfig,
    plan: &RunPlan,
    api_key: Option<&str>,
) -> Result<ContextCalibration, CalibrationError> {
    let url = config.request_urls().into_iter().next().unwrap_or_default();
    let headers = RequestHeaders::new(api_key);
    let probe = |index: u64, budget: u64| {
        let prompt = calibration_probe_prompt(plan, index, budget);
        send_probe(clock, config, &url, &headers, api_key, index, prompt)
    };
    let first = probe(1, FIRST_PROBE_BUDGET_TOKENS).await?;
    let second_budget = second_probe_budget(first, plan.largest_planned_context_tokens());
    let second = probe(2, second_budget).await?;
    ContextCalibration::fit(first, second)
}

/// Sends probe `index` with its `prompt` and reads the server's count. The run's idle timeout
/// applies, as to any request of the run.
async fn send_probe(
    clock: &Clock,
    config: &RunConfig,
    url: &str,
    headers: &RequestHeaders,
    api_key: Option<&str>,
    index: u64,
    prompt: String,
) -> Result<CalibrationProbe, CalibrationError> {
    let prompt_chars = prompt.len() as u64;
    let failed = |reason: String| CalibrationError::ProbeFailed {
        probe: index,
        prompt_chars,
        reason,
    };
    let body = JsValue::from_str(&calibration_request_body(config, &prompt));
    let control = RequestControl::new(clock.now_ms()).map_err(|error| failed(error.message))?;
    spawn_local(abort_when_idle(
        clock.clone(),
        control.clone(),
        config.timeout_s * 1000.0,
    ));
    let request = ChatRequest {
        url,
        body: &body,
        headers,
        api_key,
        timeout_s: config.timeout_s,
        chunk_traces: false,
        synthetic: None,
        reply_limit: None,
    };
    let (_, result) = stream_chat(clock, &request, &control).await;
    control.ended.set(true);
    let result = result.map_err(|error| failed(error.message))?;
    Ok(CalibrationProbe {
        prompt_chars,
        prompt_tokens: probe_prompt_tokens(index, result.usage.as_ref())?,
    })
}

/// Aborts `control`'s request once nothing has arrived for `timeout_ms`.
async fn abort_when_idle(clock: Clock, control: Rc<RequestControl>, timeout_ms: f64) {
    let tick_ms = (timeout_ms / 4.0).clamp(1.0, 250.0);
    while !control.ended.get() {
        sleep_ms(tick_ms).await;
        if control.idle_past(timeout_ms, clock.now_ms()) {
            control.abort(AbortCause::TimedOut);
            return;
        }
    }
}
