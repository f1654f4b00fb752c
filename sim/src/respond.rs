//! Pacing and writing an answer: admission and prefill on the engine, tokens on the latency
//! model against the real clock, streamed as SSE events (each its own write) or sent as one
//! body, in the chat or completions shape of [`Job::api`], with the faults the job carries. Each
//! write and moment lands in the request's [`Trace`].

use std::io;
use std::time::Duration;

use crate::engine::{Abandoned, AdmissionSlot, Engine};
use crate::faults::{Fault, FaultSet};
use crate::http::{response_head, Connection, HttpRequest};
use crate::job::{Job, Trace};
use crate::reply::cors_headers;
use crate::rng::SimRng;
use crate::shared::Shared;
use crate::truth::{Api, Outcome, SimClock, Stamp};
use crate::wire::{
    chunk_frame, completion_body, content_chunk, finish_chunk, malformed_payload,
    malformed_text_payload, reasoning_chunk, role_chunk, split_into_writes, sse_comment,
    sse_data_event, text_chunk, text_completion_body, text_usage_chunk, usage_chunk, LineEnding,
    ReasoningField, Usage, WritePolicy, LAST_CHUNK,
};

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

pub(crate) async fn stream_response(
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
    let api = job.api;
    let finish_reason = plan.finish_reason.as_str();
    let last_content = plan.content.len();
    // Completions have no role chunk; chat sends one before the first token.
    let mut role_sent = api == Api::Completions;
    for (is_content, text) in tokens {
        pacer.next_token(rng, None).await;
        if !role_sent {
            out.data(&role_chunk(identity)).await?;
            role_sent = true;
        }
        if is_content {
            let payload = match api {
                Api::Chat => content_chunk(identity, text),
                // As vLLM does, the last token's chunk carries the finish reason.
                Api::Completions => {
                    let is_last = trace.record.content_tokens_sent as usize + 1 == last_content;
                    text_chunk(identity, text, is_last.then_some(finish_reason))
                }
            };
            out.data(&payload).await?;
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
            let payload = match api {
                Api::Chat => malformed_payload(identity),
                Api::Completions => malformed_text_payload(identity),
            };
            out.data(&payload).await?;
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

    match api {
        Api::Chat => out.data(&finish_chunk(identity, finish_reason)).await?,
        // The finish reason went out with the last token, unless there was none.
        Api::Completions if last_content == 0 => {
            out.data(&text_chunk(identity, "", Some(finish_reason)))
                .await?;
        }
        Api::Completions => {}
    }
    trace.record.finish_reason = Some(finish_reason.to_string());
    if job.include_usage && !faults.contains(Fault::NoUsage) {
        let record = &mut trace.record;
        let usage = Usage::new(
            job.prompt_tokens,
            record.cached_tokens,
            record.reasoning_tokens_sent,
            record.content_tokens_sent,
        );
        let payload = match api {
            Api::Chat => usage_chunk(identity, &usage),
            Api::Completions => text_usage_chunk(identity, &usage),
        };
        out.data(&payload).await?;
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

pub(crate) async fn complete_response(
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
    let body = match job.api {
        Api::Chat => completion_body(
            &job.identity,
            &content_text,
            (!reasoning_text.is_empty()).then_some((reasoning_text.as_str(), reasoning_field)),
            job.plan.finish_reason.as_str(),
            with_usage.then_some(&usage),
        ),
        Api::Completions => text_completion_body(
            &job.identity,
            &content_text,
            job.plan.finish_reason.as_str(),
            with_usage.then_some(&usage),
        ),
    };
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
}
