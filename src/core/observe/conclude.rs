//! Disposition (ARTIFACT.md §1.3 step 3, §6.2): the one call the web layer makes per request,
//! turning a stream's result and the plan's facts into a row or a failure record.

use crate::core::config::choices::ControlledOutputPolicy;
use crate::core::observe::accumulate::validate_stream;
use crate::core::observe::accumulate::ReadStats;
use crate::core::observe::accumulate::StreamResult;
use crate::core::observe::contract::observe_canary;
use crate::core::observe::contract::observe_controlled_output;
use crate::core::observe::failure::bounded_error_message;
use crate::core::observe::failure::RequestError;
use crate::core::observe::failure::VALIDATION_ERROR_TYPE;
use crate::core::observe::row::RowInputs;
use crate::core::observe::transport::TransportFacts;
use crate::core::schema::rows::{
    ControlledOutput, FailureClass, FailureRecord, OutputTokenSource, RequestCanary, RequestTiming,
    ResponseMetadata,
};

/// The plan's facts about one request that its conclusion needs.
#[derive(Clone, Debug, PartialEq)]
pub struct RequestPlanFacts {
    /// Request index i.
    pub request_index: u64,
    /// The clamped planned context of request i.
    pub planned_context_tokens: u64,
    /// `ANVIL_REQ_{seed}_{i:05}` when canaries are on.
    pub expected_marker: Option<String>,
    /// `--response-words`.
    pub response_words: u64,
    /// `--controlled-output-policy`.
    pub policy: ControlledOutputPolicy,
    /// The caller's clock at the start of the run, in ms (for the row's `started_at_ms`).
    pub run_started_ms: f64,
}

/// A request that counts as a result.
#[derive(Clone, Debug, PartialEq)]
pub struct CompletedRequest {
    /// Request index i.
    pub request_index: u64,
    /// Its timing row. `None` only when the caller's clock produced an impossible order
    /// (E2E < TTFT) or a non-finite time: the reference then kept the result without a row,
    /// and so does strobe.
    pub row: Option<RequestTiming>,
    /// Output tokens (for `metrics.output_tokens`).
    pub out_toks: u64,
    /// Where they came from (for `output_token_sources` and exactness).
    pub output_token_source: OutputTokenSource,
    /// Content deltas (for `metrics.content_chunks`).
    pub content_chunks: u64,
    /// Reasoning deltas (for `metrics.reasoning_chunks` and the protocol name).
    pub reasoning_chunks: u64,
    /// `usage.prompt_tokens` when exact.
    pub prompt_tokens: Option<u64>,
    /// `usage.prompt_tokens_details.cached_tokens` when exact.
    pub cached_tokens: Option<u64>,
    /// The reference's `cached_fraction(usage)`, input of `prefix_cache_hit_avg`.
    pub cached_fraction: Option<f64>,
    /// How the events arrived.
    pub read_stats: ReadStats,
}

/// What became of one request.
///
/// Both variants are about as large (a failure holds the row its response would have made):
/// one outcome a request, made once and moved a few times, so boxing would buy nothing but an
/// allocation per request on the measuring thread.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq)]
pub enum RequestOutcome {
    /// A successful result.
    Completed(CompletedRequest),
    /// A failure record for `failures[]`.
    Failed(FailureRecord),
}

impl RequestOutcome {
    /// The request's index.
    pub fn request_index(&self) -> u64 {
        match self {
            Self::Completed(completed) => completed.request_index,
            Self::Failed(failure) => failure.request_index,
        }
    }

    /// The row this outcome carries: a result's row, or a failure's `response_timing` row.
    pub fn row(&self) -> Option<&RequestTiming> {
        match self {
            Self::Completed(completed) => completed.row.as_ref(),
            Self::Failed(failure) => failure.response_timing.as_ref().and_then(Option::as_ref),
        }
    }

    /// Writes `facts` into the row this outcome carries (see [`row`](Self::row)). An outcome
    /// without a row is left as it is.
    pub fn set_transport(&mut self, facts: &TransportFacts) {
        let row = match self {
            Self::Completed(completed) => completed.row.as_mut(),
            Self::Failed(failure) => failure.response_timing.as_mut().and_then(Option::as_mut),
        };
        if let Some(row) = row {
            row.set_transport(facts);
        }
    }
}

/// Decides the fate of one request (§1.3 steps 3.3-3.7, §4.3, §6).
///
/// `request_started_ms` is the caller's clock at the start of request i, before its prompt was
/// built; `now_ms` is read when the outcome is known. `elapsed_ms` of a failure is
/// `((now_ms - request_started_ms) / 1000.0) * 1000.0`: seconds first, then ms, as the reference
/// computed `(perf_counter() - request_started) * 1000`. The stream's own times are relative to
/// its send time ([`StreamResult::request_started_ms`]), which also gives the row's
/// `started_at_ms` relative to `plan.run_started_ms`.
pub fn conclude_request(
    plan: &RequestPlanFacts,
    request_started_ms: f64,
    outcome: Result<StreamResult, RequestError>,
    now_ms: f64,
) -> RequestOutcome {
    let elapsed_ms = ((now_ms - request_started_ms) / 1000.0) * 1000.0;
    let stream = match outcome {
        Ok(stream) => stream,
        Err(error) => {
            return RequestOutcome::Failed(FailureRecord::request_error(
                plan.request_index,
                plan.planned_context_tokens,
                &error,
                elapsed_ms,
            ))
        }
    };
    let row_inputs =
        |canary: Option<RequestCanary>, controlled: Option<ControlledOutput>| RowInputs {
            request_index: plan.request_index,
            planned_context_tokens: plan.planned_context_tokens,
            ttfo_s: stream.ttfo_s,
            ttft_s: stream.ttft_s,
            e2e_s: stream.e2e_s,
            prompt_tokens: stream.prompt_tokens(),
            out_toks: Some(stream.out_toks),
            output_token_source: Some(stream.output_token_source),
            reasoning_chunks: stream.reasoning_chunks,
            content_chunks: stream.content_chunks,
            request_canary: canary,
            controlled_output: controlled,
            visible_content_truncated: stream.visible_content_truncated,
            cached_tokens: Some(stream.cached_tokens()),
            started_at_ms: Some(stream.request_started_ms - plan.run_started_ms),
            chunk_arrivals_ms: stream.chunk_arrivals_ms.clone(),
        };
    let failure =
        |class: FailureClass,
         message: &str,
         row: Option<RequestTiming>,
         contract: Option<(Option<RequestCanary>, Option<ControlledOutput>)>| {
            let (error_message, error_message_truncated) = bounded_error_message(message);
            let (request_canary, controlled_output) = match contract {
                Some((canary, controlled)) => (Some(canary), Some(controlled)),
                None => (None, None),
            };
            RequestOutcome::Failed(FailureRecord {
                request_index: plan.request_index,
                planned_context_tokens: Some(plan.planned_context_tokens),
                failure_class: class,
                error_type: VALIDATION_ERROR_TYPE.to_owned(),
                error_message,
                error_message_truncated,
                response_received: true,
                performance_eligible: false,
                elapsed_ms: Some(elapsed_ms),
                response_timing: Some(row),
                response_metadata: Some(ResponseMetadata::from_stream(&stream)),
                request_canary,
                controlled_output,
                scheduled_ms: None,
                dispatch_lag_ms: None,
                cap_wait_ms: None,
                workload: None,
            })
        };

    if let Err(invalid) = validate_stream(&stream) {
        let row = RequestTiming::from_seconds(row_inputs(None, None));
        return failure(
            FailureClass::StreamValidationFailed,
            &invalid.to_string(),
            row,
            None,
        );
    }

    let truncated = stream.visible_content_truncated;
    let canary = plan
        .expected_marker
        .as_deref()
        .map(|marker| observe_canary(&stream.visible_content, marker, truncated));
    let controlled = observe_controlled_output(
        &stream.visible_content,
        plan.expected_marker.as_deref(),
        plan.response_words,
        plan.policy,
        truncated,
    );
    let mut row = RequestTiming::from_seconds(row_inputs(canary.clone(), controlled.clone()));
    if let Some(row) = row.as_mut().filter(|_| stream.read_stats.looks_buffered()) {
        row.buffered_stream = Some(true);
    }

    if canary.as_ref().is_some_and(|canary| !canary.passed) {
        return failure(
            FailureClass::RequestCanaryFailed,
            "request canary validation failed",
            row,
            Some((canary, controlled)),
        );
    }
    let strict = plan.policy == ControlledOutputPolicy::Strict && plan.response_words > 0;
    if strict
        && controlled
            .as_ref()
            .is_some_and(|controlled| !controlled.passed)
    {
        return failure(
            FailureClass::ControlledOutputFailed,
            "controlled output validation failed",
            row,
            Some((canary, controlled)),
        );
    }

    RequestOutcome::Completed(CompletedRequest {
        request_index: plan.request_index,
        row,
        out_toks: stream.out_toks,
        output_token_source: stream.output_token_source,
        content_chunks: stream.content_chunks,
        reasoning_chunks: stream.reasoning_chunks,
        prompt_tokens: stream.prompt_tokens(),
        cached_tokens: stream.cached_tokens(),
        cached_fraction: stream.cached_fraction(),
        read_stats: stream.read_stats,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::observe::accumulate::StreamAccumulator;
    use crate::core::observe::accumulate::StreamFlow;
    use crate::core::observe::test_support::*;
    use crate::core::stream::sse::ChunkEvent;
    use serde_json::json;
    use serde_json::Value;

    /// What the browser's rehearsal before a run relies on (`web::runner::rehearse_request`):
    /// the sample stream, answering with the marker and the requested words, concludes as a
    /// completed request with both checks passed, so the rehearsal runs the success path.
    #[test]
    fn a_sample_stream_that_answers_as_asked_concludes_as_completed() {
        use crate::core::stream::sse::{sample_stream_events, SseDecoder};
        let marker = "ANVIL_REQ_7_00000".to_string();
        let mut content = vec![marker.clone()];
        content.extend(std::iter::repeat_n(" code".to_string(), 24));
        let mut decoder = SseDecoder::new();
        let mut accumulator = StreamAccumulator::new(0.0);
        let mut flow = StreamFlow::Continue;
        for (read, event) in sample_stream_events(8, &content).iter().enumerate() {
            let mut decoded = Vec::new();
            decoder
                .push(event.as_bytes(), &mut decoded)
                .expect("a valid stream");
            let events: Vec<ChunkEvent> = decoded.iter().map(ChunkEvent::from_sse).collect();
            flow = accumulator.on_read_events(read as f64, &events);
            if flow == StreamFlow::Stop {
                break;
            }
        }
        assert_eq!(flow, StreamFlow::Stop, "[DONE] ends the reading");
        let facts = RequestPlanFacts {
            request_index: 0,
            planned_context_tokens: 1024,
            expected_marker: Some(marker),
            response_words: 24,
            policy: ControlledOutputPolicy::Strict,
            run_started_ms: 0.0,
        };
        let stream = accumulator.finish(40.0).expect("a complete stream");
        match conclude_request(&facts, 0.0, Ok(stream), 41.0) {
            RequestOutcome::Completed(_) => {}
            RequestOutcome::Failed(failure) => panic!("failed: {failure:?}"),
        }
    }

    #[test]
    fn many_events_in_one_or_two_reads_mark_the_row_buffered() {
        let words: Vec<ChunkEvent> = (0..10).map(|k| content(&format!(" w{k}"))).collect();
        let mut all_at_once = words.clone();
        all_at_once.extend([finish_reason("length"), ChunkEvent::Done]);
        let buffered = observe(0.0, &[(900.0, all_at_once)], 901.0);
        let row_of = |stream: StreamResult| match conclude_request(
            &plan(None, 0, ControlledOutputPolicy::Observe),
            0.0,
            Ok(stream),
            1000.0,
        ) {
            RequestOutcome::Completed(completed) => completed.row.expect("a row"),
            RequestOutcome::Failed(failure) => panic!("failed: {failure:?}"),
        };
        assert_eq!(row_of(buffered).buffered_stream, Some(true));
        // The same events one read each are a stream, and the key stays out of the row.
        let mut reads: Vec<(f64, Vec<ChunkEvent>)> = words
            .into_iter()
            .enumerate()
            .map(|(k, event)| (100.0 + 10.0 * k as f64, vec![event]))
            .collect();
        reads.push((300.0, vec![finish_reason("length"), ChunkEvent::Done]));
        let streamed = row_of(observe(0.0, &reads, 301.0));
        assert_eq!(streamed.buffered_stream, None);
        let json = serde_json::to_value(&streamed).expect("serializes");
        assert!(json.get("buffered_stream").is_none());
    }

    #[test]
    fn stream_validation_failure_keeps_metadata_and_a_null_row() {
        let reasoning_only = observe(
            0.0,
            &[(
                10.0,
                vec![
                    reasoning("r"),
                    finish_reason("length"),
                    usage(json!({"prompt_tokens": 7, "completion_tokens": 8,
                                 "total_tokens": null})),
                ],
            )],
            20.0,
        );
        let record = failed(conclude_request(
            &plan(
                Some("ANVIL_REQ_1_00003"),
                0,
                ControlledOutputPolicy::Observe,
            ),
            0.0,
            Ok(reasoning_only),
            21.0,
        ));
        assert_eq!(record.failure_class, FailureClass::StreamValidationFailed);
        assert_eq!(record.error_type, "ValueError");
        assert_eq!(
            record.error_message,
            "stream completed without visible content"
        );
        let value = serde_json::to_value(&record).expect("serializable");
        assert_eq!(value["response_timing"], Value::Null);
        assert!(value.get("request_canary").is_none());
        assert_eq!(
            value["response_metadata"],
            json!({"output_token_source": "usage", "content_chunks": 0, "reasoning_chunks": 1,
                   "finish_reasons": ["length"], "stream_terminal_observed": true,
                   "visible_content_truncated": false,
                   "usage": {"prompt_tokens": 7, "completion_tokens": 8}})
        );
    }

    #[test]
    fn unterminated_stream_failure_keeps_its_row() {
        let cut = observe(0.0, &[(10.0, vec![content("ANVIL_REQ_1_00003 x")])], 20.0);
        let record = failed(conclude_request(
            &plan(
                Some("ANVIL_REQ_1_00003"),
                0,
                ControlledOutputPolicy::Observe,
            ),
            0.0,
            Ok(cut),
            21.0,
        ));
        assert_eq!(record.failure_class, FailureClass::StreamValidationFailed);
        let row = record
            .response_timing
            .flatten()
            .expect("times are valid, so a row exists");
        assert_eq!(row.ttft_ms, 10.0);
        assert_eq!(
            row.request_canary, None,
            "validation runs before the canary"
        );
        assert_eq!(row.output_token_source, "content_chunks");
    }

    #[test]
    fn canary_failure_comes_before_controlled_output_failure() {
        let record = failed(conclude_request(
            &plan(Some("ANVIL_REQ_1_00003"), 2, ControlledOutputPolicy::Strict),
            1000.0,
            Ok(good_stream("ANVIL_REQ_1_00004 code code")),
            1400.0,
        ));
        assert_eq!(record.failure_class, FailureClass::RequestCanaryFailed);
        assert_eq!(record.error_message, "request canary validation failed");
        let canary = record.request_canary.clone().flatten().expect("computed");
        assert_eq!(canary.foreign_marker_count, 1);
        let controlled = record.controlled_output.clone().flatten().expect("W > 0");
        assert_eq!(controlled.observed_extra_words, 1);
        let row = record
            .response_timing
            .clone()
            .flatten()
            .expect("valid times");
        assert_eq!(row.request_canary, Some(canary));
    }

    #[test]
    fn canary_failure_without_controlled_output_writes_null() {
        let record = failed(conclude_request(
            &plan(
                Some("ANVIL_REQ_1_00003"),
                0,
                ControlledOutputPolicy::Observe,
            ),
            1000.0,
            Ok(good_stream("Sure! ANVIL_REQ_1_00003")),
            1400.0,
        ));
        let value = serde_json::to_value(&record).expect("serializable");
        assert_eq!(value["controlled_output"], Value::Null);
        assert_eq!(value["request_canary"]["marker_at_start"], false);
    }

    #[test]
    fn strict_controlled_output_failure() {
        let record = failed(conclude_request(
            &plan(Some("ANVIL_REQ_1_00003"), 3, ControlledOutputPolicy::Strict),
            1000.0,
            Ok(good_stream("ANVIL_REQ_1_00003 code code")),
            1400.0,
        ));
        assert_eq!(record.failure_class, FailureClass::ControlledOutputFailed);
        assert_eq!(record.error_message, "controlled output validation failed");
        assert!(record.request_canary.flatten().is_some_and(|c| c.passed));
    }

    #[test]
    fn observe_policy_keeps_non_exact_output_as_a_success() {
        let outcome = conclude_request(
            &plan(
                Some("ANVIL_REQ_1_00003"),
                3,
                ControlledOutputPolicy::Observe,
            ),
            990.0,
            Ok(good_stream("ANVIL_REQ_1_00003 code code")),
            1400.0,
        );
        let RequestOutcome::Completed(done) = outcome else {
            panic!("observe must not fail: {outcome:?}");
        };
        let row = done.row.expect("valid times");
        let controlled = row.controlled_output.expect("W > 0");
        assert_eq!(controlled.exact_adherence, Some(false));
        assert!(controlled.passed);
        assert_eq!(row.started_at_ms, Some(1000.0 - 100.0));
        assert_eq!(row.cached_tokens, Some(None));
        assert_eq!(row.prompt_tokens, Some(100));
        assert_eq!(done.out_toks, 12);
        assert_eq!(done.output_token_source, OutputTokenSource::Usage);
        assert_eq!((done.reasoning_chunks, done.content_chunks), (1, 1));
    }

    #[test]
    fn traces_reach_the_row_and_only_then_its_keys() {
        let stream = traced_stream(
            &[
                (1100.0, vec![content("hi")]),
                (1300.0, vec![finish_reason("stop"), ChunkEvent::Done]),
            ],
            1300.0,
        );
        let outcome = conclude_request(
            &plan(None, 0, ControlledOutputPolicy::Observe),
            990.0,
            Ok(stream),
            1300.0,
        );
        let RequestOutcome::Completed(done) = outcome else {
            panic!("a good stream completes: {outcome:?}");
        };
        let row = done.row.expect("valid times");
        assert_eq!(row.chunk_arrivals_ms, Some(vec![100.0, 300.0]));
        let value = serde_json::to_value(&row).expect("serializable");
        assert_eq!(value["chunk_arrivals_ms"], json!([100.0, 300.0]));

        let untraced = conclude_request(
            &plan(None, 0, ControlledOutputPolicy::Observe),
            990.0,
            Ok(good_stream("hi")),
            1400.0,
        );
        let RequestOutcome::Completed(done) = untraced else {
            panic!("a good stream completes: {untraced:?}");
        };
        let value = serde_json::to_value(done.row.expect("valid times")).expect("serializable");
        assert!(value.get("chunk_arrivals_ms").is_none());
    }
}
