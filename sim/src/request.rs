//! One generation request, whichever endpoint it came in on (`/v1/chat/completions` or
//! `/v1/completions`): reads the body fields both share, asks the endpoint's module for the
//! prompt text, picks faults, plans the answer and hands it to [`respond`](crate::respond).
//! Also owns the request's [`Trace`], the truth record being filled in.
//!
//! Both endpoints run the same latency model, admission, faults and prefix cache; they differ
//! only in where the prompt text comes from ([`chat`], [`completions`]), whether the model
//! thinks (never on completions: there is no chat template to turn it on) and the chunk shapes
//! the writer sends.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::config::TRUTH_HEADERS;
use crate::contract::{plan_output, read_contract, MarkerFault, OutputSettings};
use crate::faults::{faults_in_model_id, parse_fault_list, Fault, FaultSet, FAULT_HEADER};
use crate::http::{Connection, HttpRequest};
use crate::job::{Job, Trace};
use crate::reply::bad_request;
use crate::reply::{check_api_key, send, Reply};
use crate::respond::{complete_response, stream_response};
use crate::rng::{fnv1a64, SimRng, FNV_OFFSET};
use crate::shared::Shared;
use crate::truth::{Api, Outcome, ReceivedJson, Stamp, TruthRecord};
use crate::wire::{ChunkIdentity, ErrorBody};
use crate::{chat, completions};

/// The request body fields the simulator reads; everything else is accepted and ignored.
/// `messages` and `prompt` stay raw: the endpoint's module reads its own, and the truth log can
/// keep it byte for byte.
#[derive(Debug, Deserialize)]
struct RequestBody {
    model: Option<String>,
    messages: Option<Box<RawValue>>,
    prompt: Option<Box<RawValue>>,
    max_tokens: Option<i64>,
    max_completion_tokens: Option<i64>,
    stream: Option<bool>,
    stream_options: Option<StreamOptions>,
    chat_template_kwargs: Option<TemplateKwargs>,
}

#[derive(Debug, Deserialize)]
struct StreamOptions {
    include_usage: Option<bool>,
}

#[derive(Debug, Deserialize)]
struct TemplateKwargs {
    enable_thinking: Option<bool>,
}

/// Handles one chat or completions request; returns whether the connection stays open.
pub(crate) async fn handle(
    shared: &Arc<Shared>,
    connection: &mut Connection,
    request: HttpRequest,
    api: Api,
) -> bool {
    let keep_alive = request.keeps_alive();
    let received = shared.clock.now();
    let number = shared.next_request.fetch_add(1, Ordering::Relaxed) + 1;
    let request_id = format!("sim-{number:06}");
    let mut trace = Trace::new(shared, request_id.clone(), connection.port(), received);
    trace.record.api = api;
    record_client_headers(&shared.config.truth_headers, &request, &mut trace.record);
    let id_header = ("x-sim-request-id".to_string(), request_id.clone());

    let job = match prepare(shared, &request, api, number, received, &mut trace) {
        Ok(job) => job,
        Err(mut reply) => {
            reply.headers.push(id_header);
            return reject(connection, &request, reply, keep_alive, trace).await;
        }
    };

    if job.faults.contains(Fault::SlowHeaders) {
        let deadline =
            tokio::time::Instant::now() + Duration::from_millis(shared.config.slow_headers_ms);
        if !connection.sleep_unless_closed(deadline).await {
            trace.finish(
                Outcome::ClientDisconnected,
                Some("the client left while the headers were held back".into()),
            );
            return false;
        }
    }
    if job.faults.contains(Fault::Http500) || job.faults.contains(Fault::Http429) {
        let mut reply = if job.faults.contains(Fault::Http500) {
            Reply::error(500, ErrorBody::new(
                "strobe-sim injected fault http-500: the server failed while handling the request. Retry it, or drop the fault from the model id / x-sim-fault header.",
                "server_error",
                None,
                Some("sim_fault_http_500"),
            ))
        } else {
            let mut reply = Reply::error(429, ErrorBody::new(
                "strobe-sim injected fault http-429: rate limit reached. Retry after 1 second, or drop the fault from the model id / x-sim-fault header.",
                "rate_limit_error",
                None,
                Some("rate_limit_exceeded"),
            ));
            reply.headers.push(("retry-after".into(), "1".into()));
            reply
        };
        reply.headers.extend(job.response_headers);
        return reject(connection, &request, reply, keep_alive, trace).await;
    }

    if job.stream {
        stream_response(shared, connection, &request, job, trace).await
    } else {
        complete_response(shared, connection, &request, job, trace).await
    }
}

/// Copies the values of the always-kept headers and of `extra` (lowercase names) into
/// `record.client_headers`.
fn record_client_headers(extra: &[String], request: &HttpRequest, record: &mut TruthRecord) {
    let names = TRUTH_HEADERS
        .iter()
        .copied()
        .chain(extra.iter().map(String::as_str));
    for name in names {
        if let Some(value) = request.header(name) {
            record
                .client_headers
                .insert(name.to_string(), value.to_string());
        }
    }
}

/// Sends an error reply and records it as rejected.
async fn reject(
    connection: &mut Connection,
    request: &HttpRequest,
    reply: Reply,
    keep_alive: bool,
    mut trace: Trace,
) -> bool {
    let status = reply.status;
    let message = serde_json::from_str::<ErrorBody>(&reply.body)
        .map(|body| body.error.message)
        .unwrap_or_else(|_| reply.body.clone());
    let written_bytes = reply.body.len();
    let kept = send(connection, request, reply, keep_alive).await;
    let record = &mut trace.record;
    record.status = status;
    record.writes = u32::from(written_bytes > 0);
    trace.record.times.last_byte_sent = Some(trace.now());
    trace.finish(Outcome::Rejected, Some(message));
    kept
}

fn fault_header(faults: &FaultSet) -> Option<(String, String)> {
    (!faults.is_empty()).then(|| {
        let names: Vec<&str> = faults.iter().map(Fault::name).collect();
        (FAULT_HEADER.to_string(), names.join(","))
    })
}

/// What a body that does not parse is told to look like.
fn body_hint(api: Api) -> &'static str {
    match api {
        Api::Chat => "The request body is not a valid chat completion request ({error}). Send a JSON object with `model` and a non-empty `messages` array.",
        Api::Completions => "The request body is not a valid completion request ({error}). Send a JSON object with `model` and `prompt`, a string.",
    }
}

/// Validates the request and plans the answer, or returns the error reply to send.
fn prepare(
    shared: &Shared,
    request: &HttpRequest,
    api: Api,
    number: u64,
    received: Stamp,
    trace: &mut Trace,
) -> Result<Job, Reply> {
    let config = &shared.config;
    if let Some(denied) = check_api_key(config, request) {
        return Err(denied);
    }
    let mut body: RequestBody = serde_json::from_slice(&request.body).map_err(|error| {
        bad_request(body_hint(api).replace("{error}", &error.to_string()), None)
    })?;
    let raw_prompt = match api {
        Api::Chat => body.messages.take(),
        Api::Completions => body.prompt.take(),
    };
    let prompt = match api {
        Api::Chat => chat::prompt_text(raw_prompt.as_deref()),
        Api::Completions => completions::prompt_text(raw_prompt.as_deref()),
    };
    if config.truth_prompts {
        trace.record.received = raw_prompt.map(ReceivedJson::new);
    }
    let stream = body.stream.unwrap_or(false);
    trace.record.stream = stream;

    let requested_model = body
        .model
        .clone()
        .unwrap_or_else(|| config.models[0].clone());
    trace.record.model = Some(requested_model.clone());
    let mut faults = FaultSet::default();
    let served_model = match faults_in_model_id(&requested_model) {
        Some(Ok(list)) => {
            list.into_iter().for_each(|fault| faults.insert(fault));
            config.models[0].clone()
        }
        Some(Err(unknown)) => return Err(bad_request(unknown.to_string(), Some("model"))),
        None if config.models.contains(&requested_model) => requested_model.clone(),
        None => {
            let message = format!(
                "The model `{requested_model}` does not exist. strobe-sim serves {}; fault models are named sim-fault-<fault>.",
                config.models.join(", ")
            );
            return Err(Reply::error(
                404,
                ErrorBody::new(
                    message,
                    "invalid_request_error",
                    Some("model"),
                    Some("model_not_found"),
                ),
            ));
        }
    };
    if let Some(names) = request.header(FAULT_HEADER) {
        let list = parse_fault_list(names, ',')
            .map_err(|unknown| bad_request(format!("{FAULT_HEADER} header: {unknown}"), None))?;
        list.into_iter().for_each(|fault| faults.insert(fault));
    }

    let prompt = prompt?;
    let prompt_chars = prompt.chars().count();
    let prompt_tokens = config.latency.prompt_tokens(prompt_chars);
    {
        let record = &mut trace.record;
        record.prompt_chars = prompt_chars;
        record.prompt_tokens = prompt_tokens;
    }

    let (prompt_name, prompt_param) = match api {
        Api::Chat => ("messages", "messages"),
        Api::Completions => ("prompt", "prompt"),
    };
    let max_model_len = i64::from(config.max_model_len);
    let max_tokens = match body.max_completion_tokens.or(body.max_tokens) {
        Some(value) if value < 1 => {
            return Err(bad_request(
                format!("`max_tokens` must be at least 1, got {value}."),
                Some("max_tokens"),
            ));
        }
        Some(value) => value,
        None => max_model_len - i64::from(prompt_tokens),
    };
    if i64::from(prompt_tokens) + max_tokens > max_model_len {
        let message = format!(
            "This model's maximum context length is {max_model_len} tokens. However, you requested {} tokens ({prompt_tokens} in the {prompt_name}, {max_tokens} in the completion). Please reduce the length of the {prompt_name} or completion.",
            i64::from(prompt_tokens) + max_tokens
        );
        return Err(bad_request(message, Some(prompt_param)));
    }
    // In range now: 1 ≤ max_tokens ≤ max_model_len, which is a u32.
    let max_tokens = u32::try_from(max_tokens).unwrap_or(config.max_model_len);
    trace.record.max_tokens = Some(max_tokens);

    let mut rng = SimRng::new(request_seed(
        config.seed,
        &requested_model,
        &prompt,
        max_tokens,
    ));
    if config.fault_rate > 0.0 && rng.next_f64() < config.fault_rate {
        let pick = rng.below(config.fault_kinds.len() as u64) as usize;
        if let Some(fault) = config.fault_kinds.get(pick) {
            faults.insert(*fault);
        }
    }

    // Completions have no chat template, so nothing turns thinking on.
    let thinking = api == Api::Chat
        && body
            .chat_template_kwargs
            .and_then(|kwargs| kwargs.enable_thinking)
            .unwrap_or(config.thinking_by_default)
        && config.reasoning_tokens > 0;
    let contract = read_contract(&prompt);
    let marker_fault = if faults.contains(Fault::WrongMarker) {
        Some(MarkerFault::Wrong)
    } else if faults.contains(Fault::ForeignMarker) {
        Some(MarkerFault::Foreign)
    } else {
        None
    };
    let settings = OutputSettings {
        max_tokens,
        reasoning_tokens: if thinking { config.reasoning_tokens } else { 0 },
        answer_words: config.answer_words,
        multibyte: faults.contains(Fault::Utf8Split),
        marker_fault,
    };
    let plan = plan_output(&contract, &settings, &mut rng);
    {
        let record = &mut trace.record;
        record.faults = faults.clone();
        record.thinking = thinking;
        record.marker = contract.marker.clone();
        record.requested_words = contract.words.as_ref().map(|words| words.count);
        record.emitted_marker = plan.emitted_marker.clone();
    }
    let mut response_headers = vec![(
        "x-sim-request-id".to_string(),
        trace.record.request_id.clone(),
    )];
    response_headers.extend(fault_header(&faults));
    let id_prefix = match api {
        Api::Chat => "chatcmpl",
        Api::Completions => "cmpl",
    };
    Ok(Job {
        api,
        number,
        response_headers,
        identity: ChunkIdentity {
            id: format!("{id_prefix}-{}", trace.record.request_id),
            created: received.unix_ns / 1_000_000_000,
            model: requested_model,
        },
        served_model,
        stream,
        include_usage: body
            .stream_options
            .and_then(|options| options.include_usage)
            .unwrap_or(false),
        faults,
        prompt,
        prompt_tokens,
        plan,
        rng,
    })
}

/// The per-request seed: `--seed` and the request's content, so the same request gets the same
/// answer whatever else is running.
fn request_seed(seed: u64, model: &str, prompt: &str, max_tokens: u32) -> u64 {
    let hash = fnv1a64(FNV_OFFSET, &seed.to_le_bytes());
    let hash = fnv1a64(hash, model.as_bytes());
    let hash = fnv1a64(hash, prompt.as_bytes());
    fnv1a64(hash, &max_tokens.to_le_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_request_seed_depends_on_every_input() {
        let base = request_seed(1, "m", "p", 8);
        assert_eq!(base, request_seed(1, "m", "p", 8));
        assert_ne!(base, request_seed(2, "m", "p", 8));
        assert_ne!(base, request_seed(1, "n", "p", 8));
        assert_ne!(base, request_seed(1, "m", "q", 8));
        assert_ne!(base, request_seed(1, "m", "p", 9));
    }

    #[test]
    fn client_headers_keep_the_known_and_the_named_ones() {
        let request = HttpRequest {
            method: "POST".into(),
            path: "/v1/completions".into(),
            query: None,
            minor_version: 1,
            headers: vec![
                ("x-session-id".into(), "s1".into()),
                ("x-request-id".into(), "r7".into()),
                ("x-tenant".into(), "t".into()),
                ("authorization".into(), "Bearer secret".into()),
            ],
            body: Vec::new(),
        };
        let mut record = TruthRecord::received(
            "sim-000001".into(),
            1,
            Stamp {
                unix_ns: 0,
                monotonic_ms: 0.0,
            },
        );
        record_client_headers(&["x-tenant".into()], &request, &mut record);
        let kept: Vec<(&str, &str)> = record
            .client_headers
            .iter()
            .map(|(name, value)| (name.as_str(), value.as_str()))
            .collect();
        assert_eq!(
            kept,
            [
                ("x-request-id", "r7"),
                ("x-session-id", "s1"),
                ("x-tenant", "t")
            ]
        );
    }
}
