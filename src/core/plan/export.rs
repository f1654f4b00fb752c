//! The plan a run would send, as a document another load engine carries out (docs/locust.md):
//! every request's index, planned context, canary marker, prompt and exact body, the endpoints
//! and the load shape (the closed loop's concurrency, or the open loop's arrival schedule).
//! It is made from the page's settings alone (a link's query), never from an endpoint check,
//! so the page and `strobe-artifact plan` write the same bytes for the same settings.

use serde_json::{json, Value};
use thiserror::Error;

use crate::core::config::form::RunForm;
use crate::core::config::settings::RunConfig;
use crate::core::plan::{PlanError, RunPlan};
use crate::core::prompt::{request_body, PromptError, PromptSpec};
use crate::core::python::json::{dumps_artifact, PyJsonError};

/// The document's `schema`.
pub const PLAN_SCHEMA: &str = "strobe.plan/v1";

/// The environment variable the API key is read from where the plan runs; a plan never holds it.
pub const API_KEY_ENV: &str = "STROBE_API_KEY";

/// Why no plan document can be made.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum PlanExportError {
    /// The settings are invalid: what to fix, field by field.
    #[error("the settings cannot be planned: {}", .0.join("; "))]
    Settings(Vec<String>),
    /// The plan cannot be made from valid settings.
    #[error("{0}")]
    Plan(#[from] PlanError),
    /// A request's prompt cannot be built.
    #[error("{0}")]
    Prompt(#[from] PromptError),
    /// The document cannot be written (a non-finite number).
    #[error("the plan cannot be written: {0}")]
    Encoding(#[from] PyJsonError),
}

/// The settings `form` makes and their plan, from the settings alone (no endpoint check): what
/// a plan document holds, and what reading a run of one back makes again from its link.
pub fn settings_plan(form: &RunForm) -> Result<(RunConfig, RunPlan), PlanExportError> {
    let config = form.to_config().map_err(|errors| {
        PlanExportError::Settings(
            errors
                .iter()
                .map(|error| format!("{}: {}", error.field, error.message))
                .collect(),
        )
    })?;
    let plan = RunPlan::new(&config, None)?;
    Ok((config, plan))
}

/// The plan of `form`'s settings as the text of `plan.json` (sorted keys, two-space indent, a
/// trailing newline).
pub fn plan_document(form: &RunForm) -> Result<String, PlanExportError> {
    let (config, plan) = settings_plan(form)?;
    let prompts = PromptSpec::for_plan(&plan);
    let planned = plan.planned_context_tokens();
    let mut requests = Vec::with_capacity(planned.len());
    for (index, planned_context_tokens) in planned.iter().enumerate() {
        let prompt = prompts.build(index, plan.prompt_budget_tokens(index))?;
        let body = request_body(&config, &prompt);
        requests.push(json!({
            "index": index,
            "planned_context_tokens": planned_context_tokens,
            "canary_marker": prompts.marker(index),
            "prompt": prompt,
            "body": body,
        }));
    }
    let load = match plan.arrival_times_ms() {
        Some(arrivals) => json!({
            "mode": "rate",
            "arrival_ms": arrivals,
            "max_in_flight": plan.concurrency(),
            "rule": "request i is sent at arrival_ms[i] after the run starts, unless \
                     max_in_flight are open; requests are split across workers by index",
        }),
        None => json!({
            "mode": "concurrency",
            "concurrency": plan.concurrency(),
            "rule": "each of `concurrency` slots sends the next unsent request index when it is \
                     free; slot k sends to endpoints[k mod len(endpoints)]",
        }),
    };
    let document = json!({
        "schema": PLAN_SCHEMA,
        "strobe_version": env!("CARGO_PKG_VERSION"),
        "link": form.to_query(),
        "model": config.model,
        "endpoints": config.chat_completions_urls(),
        "headers": { "Accept": "text/event-stream", "Content-Type": "application/json" },
        "api_key_env": API_KEY_ENV,
        "timeout_s": config.timeout_s,
        "load": load,
        "requests": Value::Array(requests),
    });
    Ok(dumps_artifact(&document)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn document(query: &str) -> Value {
        let (form, _) = RunForm::from_query(query);
        serde_json::from_str(&plan_document(&form).expect("plans")).expect("JSON")
    }

    #[test]
    fn a_closed_loop_plan_holds_every_request_and_its_exact_body() {
        let plan = document("base_url=http://127.0.0.1:9/v1&model=m&engine=vllm&requests=5&concurrency=2&context_tokens=512&request_canaries=true");
        assert_eq!(plan["schema"], PLAN_SCHEMA);
        assert_eq!(plan["load"]["mode"], "concurrency");
        assert_eq!(plan["load"]["concurrency"], 2);
        assert_eq!(
            plan["endpoints"][0],
            "http://127.0.0.1:9/v1/chat/completions"
        );
        let requests = plan["requests"].as_array().expect("requests");
        assert_eq!(requests.len(), 5);
        for (index, request) in requests.iter().enumerate() {
            assert_eq!(request["index"], index);
            let body: Value =
                serde_json::from_str(request["body"].as_str().expect("body")).expect("JSON body");
            assert_eq!(body["messages"][0]["content"], request["prompt"]);
            let marker = request["canary_marker"].as_str().expect("a marker");
            assert!(request["prompt"].as_str().expect("prompt").contains(marker));
        }
        // No key anywhere: only the name of the variable it is read from.
        assert_eq!(plan["api_key_env"], API_KEY_ENV);
    }

    #[test]
    fn an_open_loop_plan_carries_its_arrival_schedule_and_a_link_never_its_key() {
        let plan = document("base_url=http://127.0.0.1:9/v1&model=m&engine=vllm&requests=8&load=rate&rate=4&api_key=sk-secret");
        assert_eq!(plan["load"]["mode"], "rate");
        let arrivals = plan["load"]["arrival_ms"].as_array().expect("schedule");
        assert_eq!(
            arrivals.len(),
            plan["requests"].as_array().map_or(0, Vec::len)
        );
        assert!(!plan.to_string().contains("sk-secret"));
    }

    #[test]
    fn invalid_settings_say_what_to_fix() {
        let (form, _) = RunForm::from_query("base_url=not-a-url&requests=0");
        let error = plan_document(&form).expect_err("invalid");
        assert!(matches!(error, PlanExportError::Settings(_)), "{error}");
        assert!(error.to_string().contains("requests"), "{error}");
    }
}
