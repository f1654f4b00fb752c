//! `POST /v1/chat/completions`: validates the request, picks faults, plans the answer, paces it
//! on the latency model against the real clock, writes it (streaming or not) and records the
//! truth of what was sent and when.

use std::io;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use serde::Deserialize;

use crate::contract::{plan_output, read_contract, MarkerFault, OutputPlan, OutputSettings};
use crate::engine::{Abandoned, AdmissionSlot, Engine};
use crate::faults::{faults_in_model_id, parse_fault_list, Fault, FaultSet, FAULT_HEADER};
use crate::http::{response_head, Connection, HttpRequest};
use crate::reply::{check_api_key, cors_headers, send, Reply};
use crate::rng::{fnv1a64, SimRng, FNV_OFFSET};
use crate::shared::Shared;
use crate::truth::{Outcome, SimClock, Stamp, TruthLog, TruthRecord, CONTENT_CAPTURE_CHARS};
use crate::wire::{
    chunk_frame, completion_body, content_chunk, finish_chunk, malformed_payload, reasoning_chunk,
    role_chunk, split_into_writes, sse_comment, sse_data_event, usage_chunk, ChunkIdentity,
    ErrorBody, LineEnding, ReasoningField, Usage, WritePolicy, LAST_CHUNK,
};

/// The request body fields the simulator reads; everything else is accepted and ignored.
#[derive(Debug, Deserialize)]
struct ChatRequestBody {
    model: Option<String>,
    messages: Vec<ChatMessage>,
    max_tokens: Option<i64>,
    max_completion_tokens: Option<i64>,
    stream: Option<bool>,
    stream_options: Option<StreamOptions>,
    chat_template_kwargs: Option<TemplateKwargs>,
}

#[derive(Debug, Deserialize)]
struct ChatMessage {
    content: Option<MessageContent>,
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum MessageContent {
    Text(String),
    Parts(Vec<ContentPart>),
}

#[derive(Debug, Deserialize)]
struct ContentPart {
    text: Option<String>,
}

#[derive(Debug, Deserialize)]
struct StreamOptions {
    include_usage: Option<bool>,
}

#[derive(Debug, Deserialize)]
struct TemplateKwargs {
    enable_thinking: Option<bool>,
}

/// A validated request, ready to be paced and written.
struct Job {
    /// The request's number, also its place in the admission queue.
    number: u64,
    /// Headers every response to it carries (`x-sim-request-id`, `x-sim-fault`).
    response_headers: Vec<(String, String)>,
    identity: ChunkIdentity,
    served_model: String,
    stream: bool,
    include_usage: bool,
    faults: FaultSet,
    prompt: String,
    prompt_tokens: u32,
    plan: OutputPlan,
    rng: SimRng,
}

/// The truth record being filled in; pushed to the log exactly once, by [`Trace::finish`] or,
/// if the handler is cancelled (server shutdown), by `Drop`.
struct Trace {
    record: TruthRecord,
    pushed: bool,
    log: Arc<TruthLog>,
    clock: SimClock,
}

impl Trace {
    fn new(shared: &Shared, request_id: String, port: u16, received: Stamp) -> Self {
        Self {
            record: TruthRecord::received(request_id, port, received),
            pushed: false,
            log: Arc::clone(&shared.truth),
            clock: shared.clock,
        }
    }

    fn now(&self) -> Stamp {
        self.clock.now()
    }

    fn content_sent(&mut self, text: &str) {
        let record = &mut self.record;
        let room = CONTENT_CAPTURE_CHARS.saturating_sub(record.content_chars);
        record.content.extend(text.chars().take(room));
        record.content_chars += text.chars().count();
        record.content_tokens_sent += 1;
    }

    fn finish(mut self, outcome: Outcome, error: Option<String>) {
        self.record.outcome = outcome;
        if error.is_some() {
            self.record.error = error;
        }
        if self.record.times.last_byte_sent.is_none() && self.record.writes > 0 {
            self.record.times.last_byte_sent = Some(self.clock.now());
        }
        self.pushed = true;
        self.log.push(self.record.clone());
    }
}

impl Drop for Trace {
    fn drop(&mut self) {
        if !self.pushed {
            self.record.outcome = Outcome::ServerShutdown;
            self.record.error = Some("the server shut down before the response finished".into());
            self.log.push(self.record.clone());
        }
    }
}

/// Handles one chat completion request; returns whether the connection stays open.
pub(crate) async fn handle(
    shared: &Arc<Shared>,
    connection: &mut Connection,
    request: HttpRequest,
) -> bool {
    let keep_alive = request.keeps_alive();
    let received = shared.clock.now();
    let number = shared.next_request.fetch_add(1, Ordering::Relaxed) + 1;
    let request_id = format!("sim-{number:06}");
    let mut trace = Trace::new(shared, request_id.clone(), connection.port(), received);
    let id_header = ("x-sim-request-id".to_string(), request_id.clone());

    let job = match prepare(shared, &request, number, received, &mut trace) {
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

fn bad_request(message: impl Into<String>, param: Option<&str>) -> Reply {
    Reply::error(
        400,
        ErrorBody::new(message, "invalid_request_error", param, None),
    )
}

/// Validates the request and plans the answer, or returns the error reply to send.
fn prepare(
    shared: &Shared,
    request: &HttpRequest,
    number: u64,
    received: Stamp,
    trace: &mut Trace,
) -> Result<Job, Reply> {
    let config = &shared.config;
    if let Some(denied) = check_api_key(config, request) {
        return Err(denied);
    }
    let body: ChatRequestBody = serde_json::from_slice(&request.body).map_err(|error| {
        bad_request(
            format!("The request body is not a valid chat completion request ({error}). Send a JSON object with `model` and a non-empty `messages` array."),
            None,
        )
    })?;
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

    if body.messages.is_empty() {
        return Err(bad_request(
            "`messages` must contain at least one message.",
            Some("messages"),
        ));
    }
    let prompt = prompt_text(&body.messages);
    let prompt_chars = prompt.chars().count();
    let prompt_tokens = config.latency.prompt_tokens(prompt_chars);
    {
        let record = &mut trace.record;
        record.prompt_chars = prompt_chars;
        record.prompt_tokens = prompt_tokens;
    }

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
            "This model's maximum context length is {max_model_len} tokens. However, you requested {} tokens ({prompt_tokens} in the messages, {max_tokens} in the completion). Please reduce the length of the messages or completion.",
            i64::from(prompt_tokens) + max_tokens
        );
        return Err(bad_request(message, Some("messages")));
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

    let thinking = body
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
    Ok(Job {
        number,
        response_headers,
        identity: ChunkIdentity {
            id: format!("chatcmpl-{}", trace.record.request_id),
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

/// All message texts joined by newlines: what the prompt-token estimate and the prefix cache see.
fn prompt_text(messages: &[ChatMessage]) -> String {
    let texts: Vec<String> = messages
        .iter()
        .map(|message| match &message.content {
            Some(MessageContent::Text(text)) => text.clone(),
            Some(MessageContent::Parts(parts)) => parts
                .iter()
                .filter_map(|part| part.text.as_deref())
                .collect::<Vec<_>>()
                .join("\n"),
            None => String::new(),
        })
        .collect();
    texts.join("\n")
}

/// The per-request seed: `--seed` and the request's content, so the same request gets the same
/// answer whatever else is running.
fn request_seed(seed: u64, model: &str, prompt: &str, max_tokens: u32) -> u64 {
    let hash = fnv1a64(FNV_OFFSET, &seed.to_le_bytes());
    let hash = fnv1a64(hash, model.as_bytes());
    let hash = fnv1a64(hash, prompt.as_bytes());
    fnv1a64(hash, &max_tokens.to_le_bytes())
}

/// Paces tokens on the latency model: the first at the end of prefill, each next one a decode
/// interval (for the current number of active sequences, with jitter) after the previous.
struct Pacer<'a> {
    engine: &'a Engine,
    clock: SimClock,
    next_ms: f64,
    started: bool,
}

impl Pacer<'_> {
    /// Waits for the next token's time. With `connection`, gives up (returns `false`) if the
    /// client leaves meanwhile; streams skip that check because their writes notice instead.
    async fn next_token(&mut self, rng: &mut SimRng, connection: Option<&Connection>) -> bool {
        if self.started {
            let interval = self
                .engine
                .params()
                .decode_interval_ms(self.engine.active(), rng.next_f64());
            self.next_ms += interval;
        }
        self.started = true;
        let deadline = tokio::time::Instant::from_std(self.clock.instant_at(self.next_ms));
        if deadline <= tokio::time::Instant::now() {
            // Behind schedule or a zero interval: let other streams run, then go on at once.
            tokio::task::yield_now().await;
            return true;
        }
        match connection {
            Some(connection) => connection.sleep_unless_closed(deadline).await,
            None => {
                tokio::time::sleep_until(deadline).await;
                true
            }
        }
    }
}

/// Admits the request and waits out its prefill; `Err` if the client left meanwhile.
async fn admit_and_prefill<'a>(
    shared: &'a Shared,
    connection: &Connection,
    job: &Job,
    trace: &mut Trace,
) -> Result<(AdmissionSlot, Pacer<'a>), Abandoned> {
    let admitted = shared
        .engine
        .admit(job.number, connection.peer_closed())
        .await?;
    let admitted_at = shared.clock.now();
    let plan = shared.engine.schedule_prefill(
        &job.served_model,
        job.prompt.as_bytes(),
        job.prompt_tokens,
        admitted_at.monotonic_ms,
    );
    let clock = shared.clock;
    let record = &mut trace.record;
    record.queued_behind = admitted.queued_behind;
    record.active_at_admission = admitted.active_at_admission;
    record.cached_tokens = plan.cached_tokens;
    record.times.admitted = Some(admitted_at);
    record.times.prefill_started = Some(clock.stamp_at(clock.instant_at(plan.slot.start_ms)));
    record.times.prefill_finished = Some(clock.stamp_at(clock.instant_at(plan.slot.end_ms)));
    let pacer = Pacer {
        engine: &shared.engine,
        clock,
        next_ms: plan.slot.end_ms,
        started: false,
    };
    Ok((admitted.slot, pacer))
}

/// Writes SSE events as separate socket writes, framed as HTTP chunks when chunked.
struct EventWriter<'c> {
    connection: &'c mut Connection,
    chunked: bool,
    ending: LineEnding,
    policy: WritePolicy,
    writes: u32,
    utf8_split_writes: u32,
    clock: SimClock,
    /// When the latest write began (`TruthTimes::last_write_started` once the stream ends).
    last_write_started: Option<Stamp>,
}

impl EventWriter<'_> {
    async fn data(&mut self, payload: &str) -> io::Result<()> {
        let event = sse_data_event(payload, self.ending);
        self.send(&event).await
    }

    async fn comment(&mut self, text: &str) -> io::Result<()> {
        let event = sse_comment(text, self.ending);
        self.send(&event).await
    }

    async fn send(&mut self, event: &[u8]) -> io::Result<()> {
        let (pieces, inside_characters) = split_into_writes(event, self.policy);
        for piece in pieces {
            if self.chunked {
                self.write(&chunk_frame(piece)).await?;
            } else {
                self.write(piece).await?;
            }
        }
        self.utf8_split_writes += inside_characters;
        Ok(())
    }

    async fn end_body(&mut self) -> io::Result<()> {
        if self.chunked {
            self.write(LAST_CHUNK).await?;
        }
        Ok(())
    }

    /// One write of the body, counted, stamped (`last_write_started`) just before it starts.
    async fn write(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.last_write_started = Some(self.clock.now());
        self.connection.write(bytes).await?;
        self.writes += 1;
        Ok(())
    }
}

fn write_policy(faults: &FaultSet) -> WritePolicy {
    WritePolicy {
        max_write_bytes: faults.contains(Fault::SplitWrites).then_some(3),
        split_inside_multibyte: faults.contains(Fault::Utf8Split),
    }
}

/// How a stream ended, when no write failed.
enum StreamEnd {
    Completed,
    Reset,
    Hung {
        client_closed: bool,
    },
    /// `[DONE]` went out and the body was held open (the `hold-after-done` fault).
    HeldAfterDone {
        client_closed: bool,
    },
    Abandoned,
}

/// Content tokens sent before the `reset` and `hang` faults cut the stream: half, rounded up,
/// so the client has seen content but not the end.
fn cut_point(content_tokens: usize) -> usize {
    content_tokens.div_ceil(2)
}

async fn stream_response(
    shared: &Shared,
    connection: &mut Connection,
    request: &HttpRequest,
    mut job: Job,
    mut trace: Trace,
) -> bool {
    // HTTP/1.0 clients get a body delimited by closing the connection.
    let chunked = request.minor_version >= 1;
    let keep_alive = chunked && request.keeps_alive();
    let mut headers = std::mem::take(&mut job.response_headers);
    headers.extend([
        (
            "content-type".to_string(),
            "text/event-stream; charset=utf-8".to_string(),
        ),
        ("cache-control".to_string(), "no-cache".to_string()),
        ("x-accel-buffering".to_string(), "no".to_string()),
        ("server".to_string(), "strobe-sim".to_string()),
        (
            "connection".to_string(),
            if keep_alive { "keep-alive" } else { "close" }.to_string(),
        ),
    ]);
    if chunked {
        headers.push(("transfer-encoding".into(), "chunked".into()));
    }
    headers.extend(cors_headers(request));
    let head = response_head(200, &headers);
    if connection.write(&head).await.is_err() {
        trace.finish(
            Outcome::ClientDisconnected,
            Some("writing the response head failed".into()),
        );
        return false;
    }
    trace.record.status = 200;
    trace.record.times.headers_sent = Some(trace.now());

    let mut out = EventWriter {
        connection,
        chunked,
        ending: if job.faults.contains(Fault::Crlf) {
            LineEnding::CrLf
        } else {
            LineEnding::Lf
        },
        policy: write_policy(&job.faults),
        writes: 0,
        utf8_split_writes: 0,
        clock: shared.clock,
        last_write_started: None,
    };
    let result = stream_events(shared, &mut out, &mut job, &mut trace).await;
    let record = &mut trace.record;
    record.times.last_write_started = out.last_write_started;
    record.writes = out.writes;
    record.utf8_split_writes = out.utf8_split_writes;
    match result {
        Ok(StreamEnd::Completed) => {
            trace.record.times.last_byte_sent = Some(trace.now());
            trace.finish(Outcome::Completed, None);
            keep_alive
        }
        Ok(StreamEnd::HeldAfterDone { client_closed }) => {
            let closer = if client_closed {
                "the client closed the connection"
            } else {
                "the server closed it after --hang-ms"
            };
            trace.finish(
                Outcome::Completed,
                Some(format!(
                    "hold-after-done fault: the body stayed open after [DONE]; {closer}"
                )),
            );
            false
        }
        Ok(StreamEnd::Reset) => {
            out.connection.arm_reset();
            let sent = trace.record.content_tokens_sent;
            trace.finish(
                Outcome::Reset,
                Some(format!(
                    "reset fault: connection reset after {sent} content tokens"
                )),
            );
            false
        }
        Ok(StreamEnd::Hung { client_closed }) => {
            let sent = trace.record.content_tokens_sent;
            let closer = if client_closed {
                "the client closed the connection"
            } else {
                "the server closed it after --hang-ms"
            };
            trace.finish(
                Outcome::Hung,
                Some(format!(
                    "hang fault: stopped after {sent} content tokens; {closer}"
                )),
            );
            false
        }
        Ok(StreamEnd::Abandoned) => {
            trace.finish(
                Outcome::ClientDisconnected,
                Some("the client left before the first token".into()),
            );
            false
        }
        Err(error) => {
            trace.finish(
                Outcome::ClientDisconnected,
                Some(format!("a write failed: {error}")),
            );
            false
        }
    }
}

async fn stream_events(
    shared: &Shared,
    out: &mut EventWriter<'_>,
    job: &mut Job,
    trace: &mut Trace,
) -> io::Result<StreamEnd> {
    let faults = job.faults.clone();
    if faults.contains(Fault::KeepAlive) {
        out.comment("keep-alive").await?;
        trace.record.keep_alive_comments += 1;
    }
    let Ok((slot, mut pacer)) = admit_and_prefill(shared, out.connection, job, trace).await else {
        return Ok(StreamEnd::Abandoned);
    };
    let reasoning_field = if faults.contains(Fault::ReasoningField) {
        ReasoningField::Reasoning
    } else {
        ReasoningField::ReasoningContent
    };
    let cut_after = cut_point(job.plan.content.len());
    let cuts = faults.contains(Fault::Reset) || faults.contains(Fault::Hang);
    let Job {
        plan,
        rng,
        identity,
        ..
    } = job;
    let tokens = plan
        .reasoning
        .iter()
        .map(|text| (false, text))
        .chain(plan.content.iter().map(|text| (true, text)));
    let mut role_sent = false;
    for (is_content, text) in tokens {
        pacer.next_token(rng, None).await;
        if !role_sent {
            out.data(&role_chunk(identity)).await?;
            role_sent = true;
        }
        if is_content {
            out.data(&content_chunk(identity, text)).await?;
            let now = trace.now();
            trace
                .record
                .times
                .first_content_byte_sent
                .get_or_insert(now);
            trace.content_sent(text);
        } else {
            out.data(&reasoning_chunk(identity, text, reasoning_field))
                .await?;
            let now = trace.now();
            trace
                .record
                .times
                .first_reasoning_byte_sent
                .get_or_insert(now);
            trace.record.reasoning_tokens_sent += 1;
        }
        let content_sent = trace.record.content_tokens_sent as usize;
        if is_content && content_sent == 1 && faults.contains(Fault::MalformedJson) {
            out.data(&malformed_payload(identity)).await?;
            trace.record.malformed_events += 1;
        }
        if faults.contains(Fault::KeepAlive) {
            out.comment("keep-alive").await?;
            trace.record.keep_alive_comments += 1;
        }
        if is_content && cuts && content_sent == cut_after {
            let now = trace.now();
            trace.record.times.last_byte_sent = Some(now);
            drop(slot);
            if faults.contains(Fault::Reset) {
                return Ok(StreamEnd::Reset);
            }
            let limit = Duration::from_millis(shared.config.hang_ms);
            let client_closed = out.connection.drain_until_closed(limit).await;
            return Ok(StreamEnd::Hung { client_closed });
        }
    }
    drop(slot);

    let finish_reason = plan.finish_reason.as_str();
    out.data(&finish_chunk(identity, finish_reason)).await?;
    trace.record.finish_reason = Some(finish_reason.to_string());
    if job.include_usage && !faults.contains(Fault::NoUsage) {
        let record = &mut trace.record;
        let usage = Usage::new(
            job.prompt_tokens,
            record.cached_tokens,
            record.reasoning_tokens_sent,
            record.content_tokens_sent,
        );
        out.data(&usage_chunk(identity, &usage)).await?;
        trace.record.usage = Some(usage);
    }
    if !faults.contains(Fault::NoDone) {
        out.data("[DONE]").await?;
        trace.record.done_sent = true;
    }
    if faults.contains(Fault::HoldAfterDone) {
        trace.record.times.last_byte_sent = Some(trace.now());
        let limit = Duration::from_millis(shared.config.hang_ms);
        let client_closed = out.connection.drain_until_closed(limit).await;
        return Ok(StreamEnd::HeldAfterDone { client_closed });
    }
    out.end_body().await?;
    Ok(StreamEnd::Completed)
}

async fn complete_response(
    shared: &Shared,
    connection: &mut Connection,
    request: &HttpRequest,
    mut job: Job,
    mut trace: Trace,
) -> bool {
    let keep_alive = request.keeps_alive();
    let Ok((slot, mut pacer)) = admit_and_prefill(shared, connection, &job, &mut trace).await
    else {
        trace.finish(
            Outcome::ClientDisconnected,
            Some("the client left before the first token".into()),
        );
        return false;
    };
    for _ in 0..job.plan.completion_tokens() {
        if !pacer.next_token(&mut job.rng, Some(connection)).await {
            trace.finish(
                Outcome::ClientDisconnected,
                Some("the client left while the answer was generated".into()),
            );
            return false;
        }
    }
    drop(slot);

    let reasoning_field = if job.faults.contains(Fault::ReasoningField) {
        ReasoningField::Reasoning
    } else {
        ReasoningField::ReasoningContent
    };
    let reasoning_text = job.plan.reasoning.concat();
    let content_text = job.plan.content_text();
    let usage = Usage::new(
        job.prompt_tokens,
        trace.record.cached_tokens,
        job.plan.reasoning.len() as u32,
        job.plan.content.len() as u32,
    );
    let with_usage = !job.faults.contains(Fault::NoUsage);
    let body = completion_body(
        &job.identity,
        &content_text,
        (!reasoning_text.is_empty()).then_some((reasoning_text.as_str(), reasoning_field)),
        job.plan.finish_reason.as_str(),
        with_usage.then_some(&usage),
    );
    let mut headers = std::mem::take(&mut job.response_headers);
    headers.extend([
        ("content-type".to_string(), "application/json".to_string()),
        ("content-length".to_string(), body.len().to_string()),
        ("server".to_string(), "strobe-sim".to_string()),
        (
            "connection".to_string(),
            if keep_alive { "keep-alive" } else { "close" }.to_string(),
        ),
    ]);
    headers.extend(cors_headers(request));
    let head = response_head(200, &headers);
    trace.record.status = 200;

    let cuts = job.faults.contains(Fault::Reset) || job.faults.contains(Fault::Hang);
    let body_bytes = body.as_bytes();
    let sent_body = if cuts {
        &body_bytes[..body_bytes.len() / 2]
    } else {
        body_bytes
    };
    let policy = write_policy(&job.faults);
    let (pieces, inside_characters) = split_into_writes(sent_body, policy);
    let mut writes = 0u32;
    let mut written = if policy == WritePolicy::default() {
        let mut whole = head;
        whole.extend_from_slice(sent_body);
        connection.write(&whole).await
    } else {
        connection.write(&head).await
    };
    if policy != WritePolicy::default() {
        for piece in pieces {
            if written.is_err() {
                break;
            }
            written = connection.write(piece).await;
            writes += 1;
        }
    }
    let now = trace.now();
    {
        let record = &mut trace.record;
        record.writes = writes.max(1);
        record.utf8_split_writes = inside_characters;
        record.times.headers_sent = Some(now);
        record.times.last_byte_sent = Some(now);
    }
    if let Err(error) = written {
        trace.finish(
            Outcome::ClientDisconnected,
            Some(format!("a write failed: {error}")),
        );
        return false;
    }
    if cuts {
        if job.faults.contains(Fault::Reset) {
            connection.arm_reset();
            trace.finish(
                Outcome::Reset,
                Some("reset fault: connection reset halfway through the body".into()),
            );
        } else {
            let client_closed = connection
                .drain_until_closed(Duration::from_millis(shared.config.hang_ms))
                .await;
            let closer = if client_closed {
                "the client closed the connection"
            } else {
                "the server closed it after --hang-ms"
            };
            trace.finish(
                Outcome::Hung,
                Some(format!(
                    "hang fault: stopped halfway through the body; {closer}"
                )),
            );
        }
        return false;
    }
    {
        let record = &mut trace.record;
        if !job.plan.reasoning.is_empty() {
            record.times.first_reasoning_byte_sent = Some(now);
            record.reasoning_tokens_sent = job.plan.reasoning.len() as u32;
        }
        if !job.plan.content.is_empty() {
            record.times.first_content_byte_sent = Some(now);
        }
        record.finish_reason = Some(job.plan.finish_reason.as_str().to_string());
        record.usage = with_usage.then_some(usage);
    }
    for text in &job.plan.content {
        trace.content_sent(text);
    }
    trace.finish(Outcome::Completed, None);
    keep_alive
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cut_falls_after_half_the_content_rounded_up() {
        assert_eq!(cut_point(1), 1);
        assert_eq!(cut_point(5), 3);
        assert_eq!(cut_point(6), 3);
    }

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
    fn prompt_text_joins_string_and_part_contents() {
        let body: ChatRequestBody = serde_json::from_str(
            r#"{"messages":[{"role":"system","content":"a"},{"role":"user","content":[{"type":"text","text":"b"},{"type":"image_url"}]},{"role":"assistant","content":null}]}"#,
        )
        .expect("a valid body");
        assert_eq!(prompt_text(&body.messages), "a\nb\n");
    }
}
