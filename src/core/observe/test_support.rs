//! Helpers the observation tests share: events, streams and plans built in one line.

use serde_json::{json, Value};

use crate::core::config::choices::ControlledOutputPolicy;
use crate::core::observe::accumulate::*;
use crate::core::observe::conclude::*;
use crate::core::observe::row::*;
use crate::core::observe::transport::*;
use crate::core::schema::rows::*;
use crate::core::stream::sse::ChatChunk;
use crate::core::stream::sse::ChoiceDelta;
use crate::core::stream::sse::ChunkEvent;

pub(crate) fn content(text: &str) -> ChunkEvent {
    ChunkEvent::Chunk(ChatChunk {
        choices: vec![ChoiceDelta {
            content: Some(text.to_owned()),
            ..ChoiceDelta::default()
        }],
        usage: None,
    })
}

pub(crate) fn reasoning(text: &str) -> ChunkEvent {
    ChunkEvent::Chunk(ChatChunk {
        choices: vec![ChoiceDelta {
            reasoning: Some(text.to_owned()),
            ..ChoiceDelta::default()
        }],
        usage: None,
    })
}

pub(crate) fn finish_reason(reason: &str) -> ChunkEvent {
    ChunkEvent::Chunk(ChatChunk {
        choices: vec![ChoiceDelta {
            finish_reason: Some(reason.to_owned()),
            ..ChoiceDelta::default()
        }],
        usage: None,
    })
}

pub(crate) fn usage(value: Value) -> ChunkEvent {
    ChunkEvent::Chunk(ChatChunk {
        choices: Vec::new(),
        usage: Some(value),
    })
}

/// A stream of `reads`, each `(arrival ms, events)`, ended at `end_ms`.
pub(crate) fn observe(
    start_ms: f64,
    reads: &[(f64, Vec<ChunkEvent>)],
    end_ms: f64,
) -> StreamResult {
    let mut accumulator = StreamAccumulator::new(start_ms);
    for (now_ms, events) in reads {
        if accumulator.on_read_events(*now_ms, events) == StreamFlow::Stop {
            break;
        }
    }
    accumulator.finish(end_ms).expect("well-formed stream")
}

pub(crate) fn plan(
    marker: Option<&str>,
    words: u64,
    policy: ControlledOutputPolicy,
) -> RequestPlanFacts {
    RequestPlanFacts {
        request_index: 3,
        planned_context_tokens: 8192,
        expected_marker: marker.map(str::to_owned),
        response_words: words,
        policy,
        run_started_ms: 100.0,
    }
}

pub(crate) fn good_stream(text: &str) -> StreamResult {
    observe(
        1000.0,
        &[
            (1100.0, vec![reasoning("r")]),
            (1250.5, vec![content(text)]),
            (
                1300.0,
                vec![
                    finish_reason("stop"),
                    usage(json!({"prompt_tokens": 100, "completion_tokens": 12,
                                 "total_tokens": 112})),
                    ChunkEvent::Done,
                ],
            ),
        ],
        1301.0,
    )
}

/// `good_stream`'s reads, traced.
pub(crate) fn traced_stream(reads: &[(f64, Vec<ChunkEvent>)], end_ms: f64) -> StreamResult {
    let mut accumulator = StreamAccumulator::new(1000.0).with_chunk_arrivals();
    for (now_ms, events) in reads {
        if accumulator.on_read_events(*now_ms, events) == StreamFlow::Stop {
            break;
        }
    }
    accumulator.finish(end_ms).expect("well-formed stream")
}

pub(crate) fn keys(value: &Value) -> Vec<&str> {
    let mut keys: Vec<&str> = value
        .as_object()
        .expect("an object")
        .keys()
        .map(String::as_str)
        .collect();
    keys.sort_unstable();
    keys
}

pub(crate) fn failed(outcome: RequestOutcome) -> FailureRecord {
    match outcome {
        RequestOutcome::Failed(record) => record,
        RequestOutcome::Completed(done) => panic!("expected a failure, got {done:?}"),
    }
}

pub(crate) fn row_inputs() -> RowInputs {
    RowInputs {
        request_index: 0,
        planned_context_tokens: 1024,
        ttfo_s: Some(0.5),
        ttft_s: Some(1.0),
        e2e_s: 2.0,
        prompt_tokens: Some(100),
        out_toks: Some(11),
        output_token_source: Some(OutputTokenSource::Usage),
        reasoning_chunks: 1,
        content_chunks: 2,
        request_canary: None,
        controlled_output: None,
        visible_content_truncated: false,
        cached_tokens: None,
        started_at_ms: None,
        chunk_arrivals_ms: None,
    }
}

/// An entry as Chromium reports it: a reused connection has every connection time equal
/// to `fetchStart`.
pub(crate) fn entry(
    start_ms: f64,
    request_start_ms: f64,
    connect_ms: Option<(f64, f64)>,
) -> ResourceTimingEntry {
    let (connect_start_ms, connect_end_ms) = connect_ms.unwrap_or((start_ms, start_ms));
    ResourceTimingEntry {
        start_time_ms: start_ms,
        fetch_start_ms: start_ms,
        connect_start_ms,
        connect_end_ms,
        request_start_ms,
        next_hop_protocol: "http/1.1".to_owned(),
        response_end_ms: request_start_ms + 50.0,
    }
}
