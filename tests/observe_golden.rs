//! Golden tests of the per-request observation against real artifacts and recorded transcripts:
//! the reference artifact's six rows are recomputed bit for bit, rows and failure records keep
//! the artifact's exact key sets, and a vLLM transcript flows through decoder, accumulator and
//! disposition into the row the reference producer would have written; a vLLM `/v1/completions`
//! transcript (`choices[].text`) gives the same kind of row.

mod common;

use common::{fixture_text, reference_text};

use serde_json::Value;
use strobe::core::config::choices::ControlledOutputPolicy;
use strobe::core::observe::accumulate::{StreamAccumulator, StreamFlow};
use strobe::core::observe::conclude::{conclude_request, RequestOutcome, RequestPlanFacts};
use strobe::core::observe::failure::RequestError;
use strobe::core::observe::row::{seconds_from_ms, RowInputs};
use strobe::core::schema::rows::{FailureRecord, OutputTokenSource, RequestTiming};
use strobe::core::stream::sse::{ChunkEvent, SseDecoder};

const VLLM_TRANSCRIPT: &[u8] = include_bytes!("fixtures/sse/vllm-reasoning.sse");
const VLLM_COMPLETIONS_TRANSCRIPT: &[u8] = include_bytes!("fixtures/sse/vllm-completions.sse");

fn reference_rows() -> Vec<Value> {
    let artifact: Value =
        serde_json::from_str(&reference_text()).expect("reference artifact parses");
    let rows = artifact["request_timings"]
        .as_array()
        .expect("request_timings is a list")
        .clone();
    assert_eq!(rows.len(), 6);
    rows
}

fn sorted_keys(value: &Value) -> Vec<String> {
    let mut keys: Vec<String> = value
        .as_object()
        .expect("an object")
        .keys()
        .cloned()
        .collect();
    keys.sort();
    keys
}

fn bits(value: Option<f64>) -> Option<u64> {
    value.map(f64::to_bits)
}

#[test]
fn derived_fields_of_every_reference_row_recompute_bit_for_bit() {
    for fixture in reference_rows() {
        let row: RequestTiming = serde_json::from_value(fixture.clone()).expect("row deserializes");
        let again = row.recompute_derived();
        let index = row.request_index;
        assert_eq!(
            again.generation_ms.to_bits(),
            row.generation_ms.to_bits(),
            "row {index} generation_ms"
        );
        assert_eq!(
            again.visible_generation_ms.to_bits(),
            row.visible_generation_ms.to_bits(),
            "row {index} visible_generation_ms"
        );
        for (name, ours, theirs) in [
            (
                "effective_prefill_tok_s",
                again.effective_prefill_tok_s,
                row.effective_prefill_tok_s,
            ),
            ("decode_tok_s", again.decode_tok_s, row.decode_tok_s),
            (
                "mean_inter_token_latency_ms",
                again.mean_inter_token_latency_ms,
                row.mean_inter_token_latency_ms,
            ),
            (
                "mean_time_per_output_token_ms",
                again.mean_time_per_output_token_ms,
                row.mean_time_per_output_token_ms,
            ),
            ("tpot_ms", again.tpot_ms, row.tpot_ms),
        ] {
            assert!(
                theirs.is_some(),
                "row {index} {name} is null in the fixture"
            );
            assert_eq!(bits(ours), bits(theirs), "row {index} {name}");
        }
        assert_eq!(again, row, "row {index}: nothing else changes");
    }
}

#[test]
fn rows_built_from_inverted_seconds_equal_the_reference_rows() {
    for fixture in reference_rows() {
        let row: RequestTiming = serde_json::from_value(fixture.clone()).expect("row deserializes");
        let built = RequestTiming::from_seconds(RowInputs {
            request_index: row.request_index,
            planned_context_tokens: row.planned_context_tokens,
            ttfo_s: Some(seconds_from_ms(row.time_to_first_output_ms)),
            ttft_s: Some(seconds_from_ms(row.ttft_ms)),
            e2e_s: seconds_from_ms(row.e2e_ms),
            prompt_tokens: row.prompt_tokens,
            out_toks: row.output_tokens,
            output_token_source: Some(OutputTokenSource::Usage),
            reasoning_chunks: row.reasoning_chunks,
            content_chunks: row.content_chunks,
            request_canary: row.request_canary.clone(),
            controlled_output: row.controlled_output.clone(),
            visible_content_truncated: row.visible_content_truncated,
            cached_tokens: None,
            started_at_ms: None,
            chunk_arrivals_ms: None,
        })
        .expect("reference times are ordered");
        let built = serde_json::to_value(&built).expect("row serializes");
        assert_eq!(built, fixture, "row {}", row.request_index);
    }
}

#[test]
fn reference_rows_round_trip_with_the_same_key_set() {
    for fixture in reference_rows() {
        let row: RequestTiming = serde_json::from_value(fixture.clone()).expect("row deserializes");
        let written = serde_json::to_value(&row).expect("row serializes");
        assert_eq!(sorted_keys(&written), sorted_keys(&fixture));
        assert_eq!(written, fixture);
    }
}

#[test]
fn real_failure_records_round_trip_with_the_same_key_set() {
    let artifact: Value = serde_json::from_str(&fixture_text(
        "real/2026-10-05-swift__swift-capacity-8k-c1.json",
    ))
    .expect("artifact parses");
    let failures = artifact["failures"].as_array().expect("failures is a list");
    assert_eq!(failures.len(), 12);
    for fixture in failures {
        let record: FailureRecord =
            serde_json::from_value(fixture.clone()).expect("failure deserializes");
        let written = serde_json::to_value(&record).expect("failure serializes");
        assert_eq!(sorted_keys(&written), sorted_keys(fixture));
        assert_eq!(&written, fixture);
    }
}

/// Decodes the vLLM transcript and feeds it in five network reads.
fn observe_vllm_transcript(start_ms: f64, read_times_ms: [f64; 5]) -> StreamAccumulator {
    let mut decoder = SseDecoder::new();
    let mut events = Vec::new();
    decoder
        .push(VLLM_TRANSCRIPT, &mut events)
        .expect("transcript decodes");
    decoder
        .finish(&mut events)
        .expect("transcript ends cleanly");
    let chunks: Vec<ChunkEvent> = events.iter().map(ChunkEvent::from_sse).collect();
    // 0 role, 1-6 reasoning, 7-15 content, 16 finish, 17 usage, 18 [DONE].
    assert_eq!(chunks.len(), 19);
    let reads = [0..2, 2..7, 7..9, 9..16, 16..19];
    let mut accumulator = StreamAccumulator::new(start_ms);
    for (read, now_ms) in reads.into_iter().zip(read_times_ms) {
        let flow = accumulator.on_read_events(now_ms, &chunks[read]);
        if flow == StreamFlow::Stop {
            break;
        }
    }
    accumulator
}

#[test]
fn vllm_transcript_becomes_the_row_the_producer_would_write() {
    let start_ms = 10523.700000000186;
    let reads_ms = [
        10879.476000000535,
        11203.25,
        11942.000000000698,
        12011.9,
        12085.3,
    ];
    let end_ms = 12086.55570000026;
    let accumulator = observe_vllm_transcript(start_ms, reads_ms);
    let stats = accumulator.read_stats();
    assert_eq!(
        (stats.reads, stats.events, stats.events_sharing_a_read),
        (5, 19, 19)
    );
    let stream = accumulator.finish(end_ms).expect("well-formed stream");
    let plan = RequestPlanFacts {
        request_index: 0,
        planned_context_tokens: 65536,
        expected_marker: Some("ANVIL_REQ_1717_00000".to_owned()),
        response_words: 0,
        policy: ControlledOutputPolicy::Observe,
        run_started_ms: 9000.0,
    };
    let outcome = conclude_request(&plan, 10520.125, Ok(stream), 12087.05570000026);
    let RequestOutcome::Completed(done) = outcome else {
        panic!("the transcript is a valid completion: {outcome:?}");
    };
    let row = done.row.expect("ordered times give a row");

    // Expected values from CPython 3.11.7 with the producer's formulas:
    //   ttfo = (t_read1 - start) / 1000; ttft = (t_read3 - start) / 1000; e2e = (end - start) / 1000
    //   gen = e2e - ttfo; vis = e2e - ttft; each ms field = seconds * 1000.0
    //   prefill = 62327 / ttfo; decode = 280 / gen; tpot = gen * 1000.0 / 280
    assert_eq!(row.time_to_first_output_ms, 355.7760000003491);
    assert_eq!(row.ttft_ms, 1418.3000000005122);
    assert_eq!(row.e2e_ms, 1562.8557000000728);
    assert_eq!(row.generation_ms, 1207.0796999997237);
    assert_eq!(row.visible_generation_ms, 144.55569999956074);
    assert_eq!(row.effective_prefill_tok_s, Some(175186.07213510424));
    assert_eq!(row.decode_tok_s, Some(231.96479901042497));
    assert_eq!(row.tpot_ms, Some(4.3109989285704415));
    assert_eq!(row.mean_inter_token_latency_ms, row.tpot_ms);
    assert_eq!(row.mean_time_per_output_token_ms, row.tpot_ms);
    // started_at_ms = start - run start (CPython: 10523.700000000186 - 9000.0).
    assert_eq!(row.started_at_ms, Some(1523.7000000001863));

    assert_eq!(row.prompt_tokens, Some(62327));
    assert_eq!(row.output_tokens, Some(281));
    assert_eq!(row.output_token_source, "usage");
    assert_eq!((row.reasoning_chunks, row.content_chunks), (6, 9));
    assert_eq!(row.cached_tokens, Some(Some(62320)));
    assert!(!row.visible_content_truncated);
    let canary = row.request_canary.clone().expect("canaries on");
    assert!(canary.passed && canary.marker_at_start);
    assert_eq!(canary.observed_marker_count, 1);
    assert_eq!(row.controlled_output, None);

    // CPython: 62320 / 62327.
    assert_eq!(done.cached_fraction, Some(0.9998876891234938));
    assert_eq!(done.cached_tokens, Some(62320));

    // A strobe row carries the reference keys plus its two additions.
    let mut expected_keys = sorted_keys(&reference_rows()[0]);
    expected_keys.extend(["cached_tokens".to_owned(), "started_at_ms".to_owned()]);
    expected_keys.sort();
    let written = serde_json::to_value(&row).expect("row serializes");
    assert_eq!(sorted_keys(&written), expected_keys);
}

#[test]
fn a_completions_transcript_counts_its_text_as_content() {
    let mut decoder = SseDecoder::new();
    let mut events = Vec::new();
    decoder
        .push(VLLM_COMPLETIONS_TRANSCRIPT, &mut events)
        .expect("transcript decodes");
    decoder
        .finish(&mut events)
        .expect("transcript ends cleanly");
    let chunks: Vec<ChunkEvent> = events.iter().map(ChunkEvent::from_sse).collect();
    // 0-8 text (the last with the finish reason), 9 usage, 10 [DONE].
    assert_eq!(chunks.len(), 11);
    let start_ms = 2000.0;
    let mut accumulator = StreamAccumulator::new(start_ms);
    for (read, now_ms) in [(0..1, 2250.0), (1..5, 2300.0), (5..11, 2400.0)] {
        if accumulator.on_read_events(now_ms, &chunks[read]) == StreamFlow::Stop {
            break;
        }
    }
    let stream = accumulator.finish(2401.0).expect("well-formed stream");
    let plan = RequestPlanFacts {
        request_index: 1,
        planned_context_tokens: 2048,
        expected_marker: Some("ANVIL_REQ_1717_00001".to_owned()),
        response_words: 0,
        policy: ControlledOutputPolicy::Observe,
        run_started_ms: 1000.0,
    };
    let outcome = conclude_request(&plan, 1999.0, Ok(stream), 2402.0);
    let RequestOutcome::Completed(done) = outcome else {
        panic!("the transcript is a valid completion: {outcome:?}");
    };
    let row = done.row.expect("ordered times give a row");
    // The first text is the first output and the first token: no reasoning came before it.
    assert_eq!(row.ttft_ms, 250.0);
    assert_eq!(row.time_to_first_output_ms, row.ttft_ms);
    assert_eq!((row.reasoning_chunks, row.content_chunks), (0, 9));
    assert_eq!(row.prompt_tokens, Some(1843));
    assert_eq!(row.output_tokens, Some(9));
    assert_eq!(row.output_token_source, "usage");
    let canary = row.request_canary.clone().expect("canaries on");
    assert!(canary.passed && canary.marker_at_start, "{canary:?}");
    assert_eq!(canary.observed_marker_count, 1);
}

#[test]
fn request_error_elapsed_is_seconds_times_1000() {
    let plan = RequestPlanFacts {
        request_index: 2,
        planned_context_tokens: 4096,
        expected_marker: None,
        response_words: 0,
        policy: ControlledOutputPolicy::Observe,
        run_started_ms: 0.0,
    };
    let outcome = conclude_request(
        &plan,
        10520.125,
        Err(RequestError::timed_out(900.0)),
        12087.05570000026,
    );
    let RequestOutcome::Failed(record) = outcome else {
        panic!("an error is a failure");
    };
    // CPython: (12087.05570000026 - 10520.125) / 1000 * 1000.0
    assert_eq!(record.elapsed_ms, Some(1566.930700000259));
    assert_eq!(record.error_type, "TimeoutError");
}
