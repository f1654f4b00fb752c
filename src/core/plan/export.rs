//! The plan a run would send, as a document another load engine carries out (docs/locust.md):
//! every request's index, planned context, canary marker, prompt and exact body, the endpoints
//! and the load shape (the closed loop's concurrency, or the open loop's arrival schedule).
//! It is made from the page's settings alone (a link's query), never from an endpoint check,
//! so the page and `strobe-artifact plan` write the same bytes for the same settings. Settings
//! that send a workload file are refused ([`PlanExportError::WorkloadFile`]): the plan carries
//! synthetic prompts only, and Locust's records are read back against the plan of the link.

use std::collections::BTreeSet;

use serde_json::{json, Value};
use thiserror::Error;

use crate::core::config::error::ConfigError;
use crate::core::config::form::RunForm;
use crate::core::config::link::{LinkReading, QueryNotice};
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
    /// The settings send a workload file, whose requests a plan does not carry.
    #[error(
        "the plan export carries strobe's synthetic prompts only, not a workload file's \
         requests (its prompts and sessions would not be in plan.json, and Locust's records \
         could not be read back against them): run the workload from the page, or remove it \
         (workload_url in the link, No workload on the page) to export the synthetic plan"
    )]
    WorkloadFile,
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

/// The plan a link makes ([`plan_of_link`]): the text of `plan.json`, and what reading the link
/// ignored.
#[derive(Debug, Clone, PartialEq)]
pub struct LinkPlan {
    /// The text of `plan.json`, as [`plan_document`] writes it.
    pub document: String,
    /// What reading the link ignored or overrode, to show the user.
    pub notices: Vec<QueryNotice>,
}

/// The plan of a link's settings, as `strobe-artifact plan --link` writes it: `link` is the
/// page's query or its whole address ([`RunForm::read_link`]). The same settings give the same
/// bytes as the page's *Export plan*. Unlike the page, whose form always shows the base URL it
/// will use, a link must name its server: a link without `base_url` is
/// refused with the key to add, never planned against the simulator's default. A setting the
/// link leaves out is named with the key to add.
pub fn plan_of_link(link: &str) -> Result<LinkPlan, PlanExportError> {
    let LinkReading { form, notices, set } = RunForm::read_link(link);
    let mut problems = Vec::new();
    if !set.contains("base_url") {
        let default = RunForm::browser_defaults();
        let default = default.get_named("base_url").unwrap_or_default();
        problems.push(format!(
            "base_url: the link sets no base_url, so the plan would have no server to measure; \
             add `base_url=` with the server's OpenAI-compatible address, e.g. \
             `base_url=http://127.0.0.1:8000/v1` (the page leaves base_url out of its address \
             while it is the simulator's {default}: add `base_url={default}` to plan against \
             strobe-sim)"
        ));
    }
    let config = form.to_config().map_err(|errors| {
        errors
            .iter()
            .filter(|error| set.contains("base_url") || error.field != "base_url")
            .map(|error| link_problem(error, &set))
            .collect::<Vec<_>>()
    });
    match config {
        Ok(config) if config.workload.url.is_some() && problems.is_empty() => {
            Err(PlanExportError::WorkloadFile)
        }
        Ok(config) if problems.is_empty() => {
            let plan = RunPlan::new(&config, None)?;
            let document = document_of(&form, &config, &plan)?;
            Ok(LinkPlan { document, notices })
        }
        Ok(_) => Err(PlanExportError::Settings(problems)),
        Err(more) => {
            problems.extend(more);
            Err(PlanExportError::Settings(problems))
        }
    }
}

/// An invalid setting of a link, with the key to add when the link leaves it out.
fn link_problem(error: &ConfigError, set: &BTreeSet<&'static str>) -> String {
    let field = error.field;
    if set.contains(field) {
        format!("{field}: {}", error.message)
    } else if field == "engine" {
        // The form's own message points to the page's Check endpoint button, which a link has not.
        "engine: the link sets no engine; add `engine=` naming the serving engine, e.g. \
         `engine=vllm` (or sglang, llama.cpp, tgi, ollama): artifacts without one cannot be \
         compared or combined"
            .to_owned()
    } else {
        format!(
            "{field}: {} (the link sets no {field}; add `{field}=` to it)",
            error.message
        )
    }
}

/// The plan of `form`'s settings as the text of `plan.json` (sorted keys, two-space indent, a
/// trailing newline).
pub fn plan_document(form: &RunForm) -> Result<String, PlanExportError> {
    let (config, plan) = settings_plan(form)?;
    if config.workload.url.is_some() {
        return Err(PlanExportError::WorkloadFile);
    }
    document_of(form, &config, &plan)
}

/// The text of `plan.json` for `form`, its settings and their plan.
fn document_of(
    form: &RunForm,
    config: &RunConfig,
    plan: &RunPlan,
) -> Result<String, PlanExportError> {
    let prompts = PromptSpec::for_plan(plan);
    let planned = plan.planned_context_tokens();
    let mut requests = Vec::with_capacity(planned.len());
    for (index, planned_context_tokens) in planned.iter().enumerate() {
        let prompt = prompts.build(index, plan.prompt_budget_tokens(index))?;
        let body = request_body(config, &prompt);
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
        "endpoints": config.request_urls(),
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
    fn a_whole_page_address_plans_like_its_query() {
        let query = "base_url=http://127.0.0.1:9/v1&model=m&engine=vllm&requests=4";
        let from_query = plan_of_link(query).expect("plans");
        for link in [
            format!("http://127.0.0.1:8080/?{query}"),
            format!("https://strobe.example/app/?{query}#results"),
            format!("http://127.0.0.1:8080/#{query}"),
        ] {
            let from_address = plan_of_link(&link).expect("plans");
            assert_eq!(from_address, from_query, "{link}");
        }
        assert!(from_query.notices.is_empty(), "{:?}", from_query.notices);
        let (form, _) = RunForm::from_query(query);
        assert_eq!(
            from_query.document,
            plan_document(&form).expect("plans"),
            "the page's Export plan writes the same bytes"
        );
    }

    #[test]
    fn a_link_without_a_base_url_is_refused_not_planned_against_the_simulator() {
        for link in [
            "model=m&engine=vllm&requests=4",
            "http://127.0.0.1:8080/?model=m&engine=vllm",
            "http://127.0.0.1:8080/",
            // A value over the limit is ignored, so the link sets no base URL after all.
            &format!(
                "base_url=http://{}/v1&model=m&engine=vllm",
                "h".repeat(3_000)
            ),
        ] {
            let error = plan_of_link(link).expect_err("no base URL");
            let PlanExportError::Settings(problems) = &error else {
                panic!("{link}: {error}");
            };
            assert!(problems[0].starts_with("base_url: "), "{problems:?}");
            let message = error.to_string();
            assert!(message.contains("add `base_url=`"), "{message}");
            assert!(
                message.contains("base_url=http://127.0.0.1:8011/v1"),
                "{message}"
            );
        }
    }

    #[test]
    fn a_link_without_engine_or_model_names_the_key_to_add() {
        let error = plan_of_link("base_url=http://127.0.0.1:9/v1").expect_err("unplannable");
        let PlanExportError::Settings(problems) = &error else {
            panic!("{error}");
        };
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert!(problems[0].starts_with("model: "), "{problems:?}");
        assert!(problems[0].contains("add `model=` to it"), "{problems:?}");
        assert!(problems[1].starts_with("engine: "), "{problems:?}");
        assert!(problems[1].contains("add `engine=`"), "{problems:?}");
        assert!(!error.to_string().contains("Check endpoint"), "{error}");
        // A value the link gave keeps the form's own message.
        let error = plan_of_link("base_url=http://127.0.0.1:9/v1&model=m&engine=vllm&requests=0")
            .expect_err("unplannable");
        assert!(!error.to_string().contains("add `requests=`"), "{error}");
        assert!(error.to_string().contains("requests: "), "{error}");
    }

    #[test]
    fn invalid_settings_say_what_to_fix() {
        let (form, _) = RunForm::from_query("base_url=not-a-url&requests=0");
        let error = plan_document(&form).expect_err("invalid");
        assert!(matches!(error, PlanExportError::Settings(_)), "{error}");
        assert!(error.to_string().contains("requests"), "{error}");
    }

    #[test]
    fn settings_that_send_a_workload_file_are_refused_with_what_to_do() {
        let query = "base_url=http://127.0.0.1:9/v1&model=m&engine=vllm&requests=5\
                     &workload_url=https://team.example/chats.jsonl";
        let (form, _) = RunForm::from_query(query);
        let refusal = plan_document(&form).expect_err("refused");
        assert_eq!(refusal, PlanExportError::WorkloadFile);
        let words = refusal.to_string();
        assert!(words.contains("run the workload from the page"), "{words}");
        assert!(words.contains("workload_url"), "{words}");
        assert_eq!(
            plan_of_link(query).expect_err("refused"),
            PlanExportError::WorkloadFile
        );
    }
}
