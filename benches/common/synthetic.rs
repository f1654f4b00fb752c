//! The synthetic run the native benchmarks read (`load_10k`, `report`): an artifact built
//! through the real pipeline (stream accumulator → `conclude_request` → `build_artifact`),
//! with reasoning on every third request, prefix-cache hits on a quarter and 1 % of requests
//! failing with an HTTP 500 whose body is hostile markup.

use serde_json::{json, Value};
use strobe::core::artifact::build::{build_artifact, RunTiming};
use strobe::core::config::settings::RunConfig;
use strobe::core::observe::accumulate::StreamAccumulator;
use strobe::core::observe::conclude::{conclude_request, RequestPlanFacts};
use strobe::core::observe::failure::RequestError;
use strobe::core::plan::RunPlan;
use strobe::core::stream::sse::{ChatChunk, ChoiceDelta, ChunkEvent};

#[path = "../../tests/common/noise.rs"]
mod noise;

use noise::Noise;

const CONCURRENCY: u64 = 64;
const RUN_STARTED_MS: f64 = 1000.0;

fn chunk(choice: ChoiceDelta, usage: Option<Value>) -> ChunkEvent {
    ChunkEvent::Chunk(ChatChunk {
        choices: vec![choice],
        usage,
    })
}

/// A run of `requests` requests at concurrency 64, built through the real pipeline: reasoning on every third request, prefix-cache hits
/// on a quarter, and 1 % of requests failing with an HTTP 500 whose body is hostile markup.
pub fn synthetic_artifact_text(requests: u64) -> String {
    let config = RunConfig {
        base_url: "http://127.0.0.1:8000/v1".to_owned(),
        model: "bench-model".to_owned(),
        engine: Some("strobe-sim".to_owned()),
        gpu: Some("bench-gpu".to_owned()),
        requests,
        concurrency: CONCURRENCY,
        context_tokens: 4096,
        context_seed: 11,
        max_tokens: 512,
        request_canaries: false,
        max_model_len: 32_768,
        ..RunConfig::default()
    };
    let plan = match RunPlan::new(&config, None) {
        Ok(plan) => plan,
        Err(error) => panic!("benchmark plan: {error:?}"),
    };
    let mut noise = Noise(0x5eed_0010_0000_0001);
    let mut slot_free_at = vec![RUN_STARTED_MS; CONCURRENCY as usize];
    let mut outcomes = Vec::with_capacity(requests as usize);
    let mut run_end = RUN_STARTED_MS;
    for index in 0..requests {
        let slot = (index % CONCURRENCY) as usize;
        let start = slot_free_at[slot] + noise.between(0.0, 2.0);
        let facts = RequestPlanFacts {
            request_index: index,
            planned_context_tokens: plan.planned_context_tokens()[index as usize],
            expected_marker: None,
            response_words: 0,
            policy: config.controlled_output_policy,
            run_started_ms: RUN_STARTED_MS,
        };
        let end = if index % 100 == 37 {
            let end = start + noise.between(5.0, 50.0);
            let error = RequestError::http_status(
                500,
                "Internal Server Error",
                "<img src=x onerror=alert(1)>",
                &[],
            );
            outcomes.push(conclude_request(&facts, start, Err(error), end));
            end
        } else {
            let mut accumulator = StreamAccumulator::new(start);
            let first = start + noise.between(30.0, 900.0);
            if index % 3 == 0 {
                let reasoning = ChoiceDelta {
                    reasoning: Some("thinking".to_owned()),
                    ..ChoiceDelta::default()
                };
                accumulator.on_read_events(first, &[chunk(reasoning, None)]);
            }
            let content_at = first + noise.between(0.0, 200.0);
            let content = ChoiceDelta {
                content: Some("benchmark output".to_owned()),
                ..ChoiceDelta::default()
            };
            accumulator.on_read_events(content_at, &[chunk(content, None)]);
            let prompt_tokens = facts.planned_context_tokens * 19 / 20;
            let completion_tokens = 32 + noise.next() % 480;
            let cached_tokens = if index % 4 == 0 { prompt_tokens / 2 } else { 0 };
            let usage = json!({
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
                "prompt_tokens_details": {"cached_tokens": cached_tokens},
            });
            let end = content_at + completion_tokens as f64 * noise.between(8.0, 14.0);
            let finish = ChoiceDelta {
                finish_reason: Some("stop".to_owned()),
                ..ChoiceDelta::default()
            };
            accumulator.on_read_events(end - 0.5, &[chunk(finish, Some(usage)), ChunkEvent::Done]);
            outcomes.push(conclude_request(
                &facts,
                start,
                accumulator.finish(end),
                end,
            ));
            end
        };
        slot_free_at[slot] = end;
        run_end = run_end.max(end);
    }
    let wall_ms = run_end - RUN_STARTED_MS;
    let started_at_unix_ns = 1_790_000_000_000_000_000_i64;
    let timing = RunTiming {
        started_at_unix_ns,
        finished_at_unix_ns: started_at_unix_ns + (wall_ms * 1e6) as i64,
        wall_seconds: wall_ms / 1000.0,
    };
    let artifact = match build_artifact(&config, &plan, outcomes, timing, None) {
        Ok(artifact) => artifact,
        Err(error) => panic!("benchmark artifact: {error}"),
    };
    match artifact.to_json_text() {
        Ok(text) => text,
        Err(error) => panic!("benchmark artifact text: {error}"),
    }
}
