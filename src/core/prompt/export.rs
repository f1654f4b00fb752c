//! The plan a run would send, as a document another load engine carries out
//! (docs/operate/locust.md): every request's index, planned context, canary marker, prompt and
//! exact body, the endpoints and the load shape (the closed loop's concurrency, or the open loop's
//! arrival schedule). It is made from the page's settings alone (a link's query), never from an
//! endpoint check, so the page and `strobe-artifact plan` write the same bytes for the same
//! settings.
//!
//! With a workload file, the plan carries the file's requests as the page would send them:
//! each body byte for byte, the sessions and turns with each turn's wait, a trace's arrival
//! times, the session header, and the workload's shape ([`WorkloadShape`]: no text), which the
//! workers copy into their records so the import writes the `workload` block and each row's
//! place in the file as the page does. Such a plan holds the user's prompts, and says so
//! ([`LinkPlan::holds_prompts`], the document's `prompts`). A later turn of a conversation
//! whose history is the server's own replies (`history=live`) cannot be written whole ahead:
//! its body comes in parts ([`live_body_parts`]) between which the locustfile puts each earlier
//! reply as a JSON string, giving the bytes the page would send.
//!
//! [`WorkloadShape`]: crate::core::plan::workload::shape::WorkloadShape

use std::collections::BTreeSet;
use std::sync::Arc;

use serde_json::{json, Map, Value};
use thiserror::Error;

use crate::core::config::choices::HistoryMode;
use crate::core::config::error::ConfigError;
use crate::core::config::fields::FieldKey;
use crate::core::config::form::RunForm;
use crate::core::config::link::{LinkReading, QueryNotice};
use crate::core::config::settings::{RunConfig, MAX_REQUESTS};
use crate::core::plan::workload::WorkloadRequests;
use crate::core::plan::{PlanError, RunPlan};
use crate::core::prompt::session::{
    failed_turn_reason, long_reply_reason, replies_known_ahead, session_header,
    HISTORY_REPLY_LIMIT_CHARS,
};
use crate::core::prompt::workload::{workload_request_body, WorkloadBodyError};
use crate::core::prompt::{request_body, PromptError, PromptSpec};
use crate::core::python::json::{dumps_artifact, PyJsonError};
use crate::core::workload::read::{read, ReadOptions};
use crate::core::workload::Workload;

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
    /// A workload request's body cannot be built.
    #[error("{0}")]
    Body(#[from] WorkloadBodyError),
    /// The settings name a workload file (`workload_url`) the plan was not given.
    #[error(
        "the settings send the workload file at workload_url, which the plan cannot fetch: \
         give the plan the file itself (strobe-artifact plan --workload FILE; on the page, \
         export once the file is read), or remove workload_url to export synthetic prompts"
    )]
    WorkloadFile,
    /// The workload file given cannot be read.
    #[error("the workload file {0}")]
    WorkloadRead(String),
    /// A live turn's body cannot be cut around its replies: the file's text holds strobe's
    /// placeholder for them (every one tried).
    #[error(
        "request {0} cannot be planned with live history: the workload's text holds the \
         placeholder strobe cuts its body at; set history=recorded, or run it from the page"
    )]
    ReplyPlaceholder(u64),
    /// The document cannot be written (a non-finite number).
    #[error("the plan cannot be written: {0}")]
    Encoding(#[from] PyJsonError),
}

/// The settings `form` makes and their plan, from the settings alone (no endpoint check): what
/// a plan document holds, and what reading a run of one back makes again from its link.
pub fn settings_plan(form: &RunForm) -> Result<(RunConfig, RunPlan), PlanExportError> {
    let config = config_of(form)?;
    let plan = RunPlan::new(&config, None)?;
    Ok((config, plan))
}

/// `form`'s settings, or what to fix, field by field.
fn config_of(form: &RunForm) -> Result<RunConfig, PlanExportError> {
    form.to_config().map_err(|errors| {
        PlanExportError::Settings(
            errors
                .iter()
                .map(|error| format!("{}: {}", error.field, error.message))
                .collect(),
        )
    })
}

/// The plan of `config`, sending `workload`'s requests when one is given, as the page plans a
/// run of it (without an endpoint check).
fn plan_with(config: &RunConfig, workload: Option<&Workload>) -> Result<RunPlan, PlanExportError> {
    let Some(workload) = workload else {
        if config.workload.url.is_some() {
            return Err(PlanExportError::WorkloadFile);
        }
        return Ok(RunPlan::new(config, None)?);
    };
    let requests = WorkloadRequests::plan(workload, config).map_err(PlanError::from)?;
    Ok(RunPlan::for_run(config, None, Some(Arc::new(requests)))?)
}

/// A workload file given to [`plan_of_link`]: its name and bytes, read there with the link's
/// settings (`workload_turns`) by the page's own reader.
#[derive(Clone, Copy)]
pub struct WorkloadBytes<'a> {
    /// The name the artifact records (the file's name, without its folder).
    pub name: &'a str,
    /// Its bytes.
    pub bytes: &'a [u8],
}

/// The plan a link makes ([`plan_of_link`]): the text of `plan.json`, and what reading the link
/// ignored.
#[derive(Debug, Clone, PartialEq)]
pub struct LinkPlan {
    /// The text of `plan.json`, as [`plan_document`] writes it.
    pub document: String,
    /// What reading the link ignored or overrode, to show the user.
    pub notices: Vec<QueryNotice>,
    /// With a workload file: the sentence saying that the plan holds its prompts.
    pub holds_prompts: Option<String>,
}

/// The plan of a link's settings, as `strobe-artifact plan --link` writes it: `link` is the
/// page's query or its whole address ([`RunForm::read_link`]), `workload` the file whose
/// requests it sends, if any. The same settings (and file) give the same bytes as the page's
/// *Export plan*. Unlike the page, whose form always shows the base URL it will use, a link
/// must name its server: a link without `base_url` is refused with the key to add, never
/// planned against the simulator's default. A setting the link leaves out is named with the
/// key to add.
pub fn plan_of_link(
    link: &str,
    workload: Option<WorkloadBytes<'_>>,
) -> Result<LinkPlan, PlanExportError> {
    let LinkReading {
        mut form,
        notices,
        set,
    } = RunForm::read_link(link);
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
            .filter(|error| set.contains("base_url") || error.field != FieldKey::BaseUrl)
            .map(|error| link_problem(error, &set))
            .collect::<Vec<_>>()
    });
    match config {
        Ok(mut config) if problems.is_empty() => {
            let workload = match workload {
                None => None,
                Some(file) => {
                    let options = ReadOptions {
                        turns: config.workload.turns,
                        ..ReadOptions::default()
                    };
                    let read = read(file.bytes, Some(file.name), &options).map_err(|error| {
                        PlanExportError::WorkloadRead(format!("{}: {error}", file.name))
                    })?;
                    if chosen_as_on_the_page(&mut form, &set, &read) {
                        config = config_of(&form)?;
                    }
                    Some(read)
                }
            };
            let plan = plan_with(&config, workload.as_ref())?;
            let document = document_of(&form, &config, &plan)?;
            Ok(LinkPlan {
                document,
                notices,
                holds_prompts: plan.workload().map(|_| prompts_notice(&plan)),
            })
        }
        Ok(_) => Err(PlanExportError::Settings(problems)),
        Err(more) => {
            problems.extend(more);
            Err(PlanExportError::Settings(problems))
        }
    }
}

/// What choosing `workload` on the page does to the form, for the settings the link leaves out
/// (`set` holds those it gives): *Requests* becomes all of its requests (at most 10,000) and
/// canaries go off, so the server receives the file's text as given. Whether it changed any.
fn chosen_as_on_the_page(
    form: &mut RunForm,
    set: &BTreeSet<&'static str>,
    workload: &Workload,
) -> bool {
    let mut changed = false;
    if !set.contains(FieldKey::Requests.as_str()) {
        let requests = workload.summary.turns.clamp(1, MAX_REQUESTS);
        form.set(FieldKey::Requests, requests.to_string());
        changed = true;
    }
    if !set.contains(FieldKey::RequestCanaries.as_str()) {
        form.set(FieldKey::RequestCanaries, "false");
        changed = true;
    }
    changed
}

/// An invalid setting of a link, with the key to add when the link leaves it out.
fn link_problem(error: &ConfigError, set: &BTreeSet<&'static str>) -> String {
    let field = error.field;
    if set.contains(field.as_str()) {
        format!("{field}: {}", error.message)
    } else if field == FieldKey::Engine {
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
/// trailing newline), synthetic prompts only.
pub fn plan_document(form: &RunForm) -> Result<String, PlanExportError> {
    plan_document_with(form, None)
}

/// The plan of `form`'s settings sending `workload`'s requests (the file the page read with
/// the form's settings), or synthetic prompts without one, as the text of `plan.json`.
pub fn plan_document_with(
    form: &RunForm,
    workload: Option<&Workload>,
) -> Result<String, PlanExportError> {
    let config = config_of(form)?;
    let plan = plan_with(&config, workload)?;
    document_of(form, &config, &plan)
}

/// What a plan with a workload says of itself: it holds the file's prompts.
pub fn prompts_notice(plan: &RunPlan) -> String {
    let name = plan
        .workload()
        .and_then(|workload| workload.file().name.clone());
    holds_prompts(name.as_deref())
}

/// The sentence a plan of the workload file `name` carries, and the page and the command line
/// show: the plan holds the file's prompts.
pub fn holds_prompts(name: Option<&str>) -> String {
    format!(
        "This plan holds the prompts of {}: every request's body is sent as the file gives \
         it. Keep plan.json as private as the file; the records Locust's workers write and \
         the artifact imported from them hold no prompt.",
        name.unwrap_or("the workload file")
    )
}

/// The text of `plan.json` for `form`, its settings and their plan.
fn document_of(
    form: &RunForm,
    config: &RunConfig,
    plan: &RunPlan,
) -> Result<String, PlanExportError> {
    let requests = match plan.workload() {
        Some(_) => workload_requests(plan)?,
        None => synthetic_requests(config, plan)?,
    };
    let load = match plan.arrival_times_ms() {
        Some(arrivals) => json!({
            "mode": "rate",
            "arrival_ms": arrivals,
            "max_in_flight": plan.concurrency(),
            "rule": "request i is sent at arrival_ms[i] after the run starts, unless \
                     max_in_flight are open; requests are split across workers by index",
        }),
        None if plan.workload().is_some() => sessions_load(plan),
        None => json!({
            "mode": "concurrency",
            "concurrency": plan.concurrency(),
            "rule": "each of `concurrency` slots sends the next unsent request index when it is \
                     free; slot k sends to endpoints[k mod len(endpoints)]",
        }),
    };
    let mut document = json!({
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
    if let Some(workload) = plan.workload() {
        document["workload"] = serde_json::to_value(workload.shape())
            .map_err(|error| PlanExportError::Settings(vec![error.to_string()]))?;
        document["prompts"] = Value::String(prompts_notice(plan));
        if workload.has_conversations() && config.workload.history == HistoryMode::Live {
            document["live_history"] = json!({
                "reply_limit_chars": HISTORY_REPLY_LIMIT_CHARS,
                "failed_turn": failed_turn_reason("{turn}"),
                "long_reply": long_reply_reason("{turn}", HISTORY_REPLY_LIMIT_CHARS),
                "rule": "a later turn's body is body_parts[0] + reply_0 + body_parts[1] + … + \
                         reply_{k-1} + body_parts[k], reply_j the JSON string of the content \
                         the server streamed for turn j of the session (choices[0].delta.content \
                         of every event); a turn that failed (no response, a status outside \
                         2xx, no [DONE]) or whose reply is longer than reply_limit_chars ends \
                         its session: the turns after it are not sent and are recorded with \
                         the error SessionError and failed_turn or long_reply, {turn} the \
                         turn's 1-based number",
            });
        }
    }
    Ok(dumps_artifact(&document)?)
}

/// Each synthetic request: index, planned context, canary marker, prompt and body.
fn synthetic_requests(config: &RunConfig, plan: &RunPlan) -> Result<Vec<Value>, PlanExportError> {
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
    Ok(requests)
}

/// Each workload request: its session and turn, the wait before it, the session header, and
/// its body as the page sends it (with recorded history: the file's replies before it).
fn workload_requests(plan: &RunPlan) -> Result<Vec<Value>, PlanExportError> {
    let config = plan.config();
    let Some(workload) = plan.workload() else {
        return Ok(Vec::new());
    };
    let think_time_ms = config.workload.think_time_ms as f64;
    let planned = plan.planned_context_tokens();
    let mut requests = Vec::with_capacity(planned.len());
    for (index, planned_context_tokens) in planned.iter().enumerate() {
        let at = index as u64;
        let (session, turn) = workload
            .position(at)
            .ok_or(WorkloadBodyError::NoSuchRequest(at))?;
        let (body, body_parts) = match replies_known_ahead(plan, at) {
            Some(replies) => (
                Value::String(workload_request_body(plan, at, &replies)?),
                None,
            ),
            None => (Value::Null, Some(live_body_parts(plan, at, turn)?)),
        };
        let delay_ms = match turn {
            0 => 0.0,
            _ => workload.sessions()[session].turns[turn]
                .delay_ms
                .unwrap_or(think_time_ms)
                .max(0.0),
        };
        let mut headers = Map::new();
        if let Some((name, value)) = session_header(plan, session) {
            headers.insert(name, Value::String(value));
        }
        let mut request = json!({
            "index": index,
            "session": session,
            "turn": turn,
            "delay_ms": delay_ms,
            "headers": headers,
            "planned_context_tokens": planned_context_tokens,
            "canary_marker": config.request_canaries.then(|| plan.marker(index)),
            "prompt": Value::Null,
            "body": body,
        });
        if let Some(parts) = body_parts {
            request["body_parts"] = json!(parts);
        }
        requests.push(request);
    }
    Ok(requests)
}

/// The body of request `index`, turn `turn` of a live-history session, cut where each earlier
/// reply goes: `turn + 1` parts, between which the locustfile puts the JSON string of each
/// reply the server gave (as `serde_json` writes a string, which Python's
/// `json.dumps(reply, ensure_ascii=False)` matches), so the bytes sent are the page's. Each
/// reply stands in as a placeholder no text of the file holds (another is tried if one does).
pub fn live_body_parts(
    plan: &RunPlan,
    index: u64,
    turn: usize,
) -> Result<Vec<String>, PlanExportError> {
    for attempt in 0..16 {
        let placeholders: Vec<String> = (0..turn)
            .map(|reply| format!("\u{fdd0}strobe-reply-{attempt}-{reply}\u{fdd0}"))
            .collect();
        let replies: Vec<&str> = placeholders.iter().map(String::as_str).collect();
        let body = workload_request_body(plan, index, &replies)?;
        let quoted: Vec<String> = placeholders
            .iter()
            .map(|placeholder| Value::String(placeholder.clone()).to_string())
            .collect();
        if quoted
            .iter()
            .any(|quoted| body.matches(quoted.as_str()).count() != 1)
        {
            continue;
        }
        let mut parts = Vec::with_capacity(turn + 1);
        let mut rest = body.as_str();
        for quoted in &quoted {
            let Some((before, after)) = rest.split_once(quoted.as_str()) else {
                break;
            };
            parts.push(before.to_owned());
            rest = after;
        }
        if parts.len() == turn {
            parts.push(rest.to_owned());
            return Ok(parts);
        }
    }
    Err(PlanExportError::ReplyPlaceholder(index))
}

/// A workload's closed loop: each slot plays whole sessions, a timed one no earlier than its
/// arrival.
fn sessions_load(plan: &RunPlan) -> Value {
    let mut load = json!({
        "mode": "concurrency",
        "concurrency": plan.concurrency(),
        "rule": "each of `concurrency` slots takes the next unsent session and sends its turns \
                 in order, turn k once turn k-1's response has ended and its delay_ms has \
                 passed; slot k sends to endpoints[k mod len(endpoints)]; sessions are split \
                 across workers by session",
    });
    let speed = plan.config().workload.trace_speed;
    if let Some(arrivals) = plan
        .workload()
        .and_then(|workload| workload.session_arrivals_ms(speed))
    {
        load["session_arrival_ms"] = json!(arrivals);
    }
    load
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
        let from_query = plan_of_link(query, None).expect("plans");
        for link in [
            format!("http://127.0.0.1:8080/?{query}"),
            format!("https://strobe.example/app/?{query}#results"),
            format!("http://127.0.0.1:8080/#{query}"),
        ] {
            let from_address = plan_of_link(&link, None).expect("plans");
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
            let error = plan_of_link(link, None).expect_err("no base URL");
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
        let error = plan_of_link("base_url=http://127.0.0.1:9/v1", None).expect_err("unplannable");
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
        let error = plan_of_link(
            "base_url=http://127.0.0.1:9/v1&model=m&engine=vllm&requests=0",
            None,
        )
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
    fn a_workload_url_without_its_file_is_refused_with_what_to_do() {
        let query = "base_url=http://127.0.0.1:9/v1&model=m&engine=vllm&requests=5\
                     &workload_url=https://team.example/chats.jsonl";
        let (form, _) = RunForm::from_query(query);
        let refusal = plan_document(&form).expect_err("refused");
        assert_eq!(refusal, PlanExportError::WorkloadFile);
        let words = refusal.to_string();
        assert!(words.contains("--workload FILE"), "{words}");
        assert!(words.contains("workload_url"), "{words}");
        assert_eq!(
            plan_of_link(query, None).expect_err("refused"),
            PlanExportError::WorkloadFile
        );
    }
}

#[cfg(test)]
mod workload_tests;
