//! A run of a workload file's conversations built through the real pipeline: the sample
//! `public/samples/conversations.jsonl` played as sessions (`workload_turns=all`), each request
//! streamed and concluded, the artifact built, validated (the `workload-block` and
//! `workload-origin` rules among the rest) and read back the way the results pages read it:
//! the turns table shows each turn's TTFT and its growing history.

mod common;

use std::sync::Arc;

use common::repo_path;
use serde_json::{json, Value};
use strobe::core::artifact::build::{build_artifact, RunTiming};
use strobe::core::config::choices::WorkloadTurns;
use strobe::core::config::settings::RunConfig;
use strobe::core::observe::accumulate::StreamAccumulator;
use strobe::core::observe::conclude::{conclude_request, RequestOutcome, RequestPlanFacts};
use strobe::core::plan::workload::WorkloadRequests;
use strobe::core::plan::RunPlan;
use strobe::core::present::turns::turns_table;
use strobe::core::read::opened::OpenedArtifact;
use strobe::core::read::validate::validate_artifact_text;
use strobe::core::schema::ArtifactV1;
use strobe::core::stream::sse::{ChatChunk, ChoiceDelta, ChunkEvent};
use strobe::core::workload::read::{read, ReadOptions};

/// The server's prompt tokens for a turn: its own text plus the history before it.
pub fn prompt_tokens_of(turn: u64) -> u64 {
    40 + 150 * turn
}

/// TTFT of a turn: later turns find their history in the prefix cache and start sooner.
pub fn ttft_of(turn: u64, session: u64) -> f64 {
    (if turn == 0 { 300.0 } else { 120.0 }) + session as f64
}

fn chunk(delta: ChoiceDelta, usage: Option<Value>) -> ChunkEvent {
    ChunkEvent::Chunk(ChatChunk {
        choices: vec![delta],
        usage,
    })
}

/// The sample conversations run one request after another through the observation pipeline.
pub fn conversations_run() -> (RunPlan, ArtifactV1) {
    let bytes = std::fs::read(repo_path("public/samples/conversations.jsonl")).expect("sample");
    let options = ReadOptions {
        turns: WorkloadTurns::All,
        ..ReadOptions::default()
    };
    let workload = read(&bytes, Some("conversations.jsonl"), &options).expect("reads");
    let mut config = RunConfig {
        base_url: "http://127.0.0.1:8011/v1".to_owned(),
        model: "sim".to_owned(),
        engine: Some("strobe-sim".to_owned()),
        requests: 10_000,
        request_canaries: false,
        max_model_len: 32_768,
        ..RunConfig::default()
    };
    config.workload.turns = WorkloadTurns::All;
    let requests = WorkloadRequests::plan(&workload, &config).expect("plans");
    let plan = RunPlan::for_run(&config, None, Some(Arc::new(requests))).expect("plan");
    let workload_plan = plan.workload().expect("a workload plan").clone();
    let mut outcomes = Vec::new();
    let mut start = 1000.0;
    for index in 0..plan.requests() {
        let (session, turn) = workload_plan.position(index).expect("planned");
        let (session, turn) = (session as u64, turn as u64);
        let first = start + ttft_of(turn, session);
        let end = first + 200.0;
        let mut accumulator = StreamAccumulator::new(start);
        let usage = json!({"prompt_tokens": prompt_tokens_of(turn), "completion_tokens": 12,
                           "total_tokens": prompt_tokens_of(turn) + 12});
        accumulator.on_read_events(
            first,
            &[chunk(
                ChoiceDelta {
                    content: Some("A reply of some words.".to_owned()),
                    ..ChoiceDelta::default()
                },
                None,
            )],
        );
        accumulator.on_read_events(
            end - 1.0,
            &[
                chunk(
                    ChoiceDelta {
                        finish_reason: Some("stop".to_owned()),
                        ..ChoiceDelta::default()
                    },
                    Some(usage),
                ),
                ChunkEvent::Done,
            ],
        );
        let facts = RequestPlanFacts {
            request_index: index,
            planned_context_tokens: plan.planned_context_tokens()[index as usize],
            expected_marker: None,
            response_words: 0,
            policy: plan.config().controlled_output_policy,
            run_started_ms: 1000.0,
        };
        let outcome: RequestOutcome = conclude_request(&facts, start, accumulator.finish(end), end);
        outcomes.push(outcome);
        start = end + 5.0;
    }
    let wall_ms = start;
    let timing = RunTiming {
        started_at_unix_ns: 1_764_700_000_000_000_000,
        finished_at_unix_ns: 1_764_700_000_000_000_000 + (wall_ms * 1e6) as i64 + 1_700,
        wall_seconds: wall_ms / 1000.0,
    };
    let artifact = build_artifact(plan.config(), &plan, outcomes, timing, None).expect("builds");
    (plan, artifact)
}

#[test]
fn a_run_of_conversations_validates_and_every_row_says_its_session_and_turn() {
    let (plan, artifact) = conversations_run();
    let text = artifact.to_json_text().expect("serializes");
    let report = validate_artifact_text(&text);
    assert!(report.is_acceptable(), "{report}");
    let value: Value = serde_json::from_str(&text).expect("parses");
    let block = &value["workload"];
    assert_eq!(block["source"], "file");
    assert_eq!(block["file"]["format"], "aiperf_multi_turn");
    assert_eq!(block["sending"]["turns"], "all");
    let sessions = block["sending"]["sessions"].as_u64().expect("sessions");
    assert_eq!(sessions, 8);
    let rows = value["request_timings"].as_array().expect("rows");
    assert_eq!(rows.len() as u64, plan.requests());
    let turns: Vec<u64> = rows
        .iter()
        .map(|row| row["workload"]["turn"].as_u64().expect("turn"))
        .collect();
    assert_eq!(
        turns.iter().filter(|turn| **turn == 0).count() as u64,
        sessions
    );
    assert!(turns.iter().any(|turn| *turn >= 2), "{turns:?}");
}

#[test]
fn the_turns_table_reads_the_history_growing_turn_by_turn() {
    let (_, artifact) = conversations_run();
    let text = artifact.to_json_text().expect("serializes");
    let run = OpenedArtifact::from_text("conversations-run.json", &text);
    let table = turns_table(&run).expect("sessions of several turns");
    assert_eq!(table.sessions, 8);
    assert_eq!(table.turns[0].requests, 8);
    assert_eq!(table.turns[0].failed, 0);
    for row in &table.turns {
        assert_eq!(row.prompt_tokens_p50, Some(prompt_tokens_of(row.turn)));
    }
    // Sessions 0…7 at turn 0 wait 300 + session ms: nearest-rank p50 and p90 of eight.
    assert_eq!(table.turns[0].ttft_p50_ms, Some(ttft_of(0, 3)));
    assert_eq!(table.turns[0].ttft_p90_ms, Some(ttft_of(0, 7)));
    assert!(table.turns[1].ttft_p50_ms < table.turns[0].ttft_p50_ms);
    // The table docs/guide/workloads.md shows.
    let expected = [
        ["0", "8", "0", "303 ms", "307 ms", "40"],
        ["1", "8", "0", "123 ms", "127 ms", "190"],
        ["2", "5", "0", "124 ms", "127 ms", "340"],
        ["3", "2", "0", "122 ms", "127 ms", "490"],
    ];
    assert_eq!(
        table.cells(),
        expected.map(|row| row.map(String::from).to_vec())
    );
    let requests: u64 = table.turns.iter().map(|row| row.requests).sum();
    assert_eq!(requests, run.rows.len() as u64);
}
