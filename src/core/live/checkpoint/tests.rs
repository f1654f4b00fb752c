use super::*;
use crate::core::config::settings::RunConfig;
use crate::core::live::{decode_message, encode_message, FromMeasurement};
use crate::core::observe::accumulate::ReadStats;
use crate::core::observe::conclude::CompletedRequest;
use crate::core::observe::row::RowInputs;
use crate::core::read::opened::OpenedArtifact;
use crate::core::read::validate::report::Verdict;
use crate::core::schema::client::ClientTransport;
use crate::core::schema::rows::{OutputTokenSource, RequestTiming};

const STARTED_MS: f64 = 1_700_000_000_000.0;

fn plan(requests: u64) -> RunPlan {
    let config = RunConfig {
        base_url: "http://127.0.0.1:8000/v1".to_owned(),
        model: "test-model".to_owned(),
        engine: Some("strobe-sim".to_owned()),
        requests,
        concurrency: 2,
        context_tokens: 1024,
        ..RunConfig::default()
    };
    RunPlan::new(&config, None).expect("a valid plan")
}

/// A result of request `index`, usage-counted, with a cache hit and read statistics.
fn completed(index: u64) -> RequestOutcome {
    let start_s = index as f64 * 0.1;
    let row = RequestTiming::from_seconds(RowInputs {
        request_index: index,
        planned_context_tokens: 1024,
        ttfo_s: None,
        ttft_s: Some(0.2 + start_s / 10.0),
        e2e_s: 1.0 + start_s / 10.0,
        prompt_tokens: Some(1000),
        out_toks: Some(16),
        output_token_source: Some(OutputTokenSource::Usage),
        reasoning_chunks: 0,
        content_chunks: 16,
        request_canary: None,
        controlled_output: None,
        visible_content_truncated: false,
        cached_tokens: Some(Some(250)),
        started_at_ms: Some(start_s * 1000.0),
        chunk_arrivals_ms: None,
    });
    RequestOutcome::Completed(CompletedRequest {
        request_index: index,
        row,
        out_toks: 16,
        output_token_source: OutputTokenSource::Usage,
        content_chunks: 16,
        reasoning_chunks: 0,
        prompt_tokens: Some(1000),
        cached_tokens: Some(250),
        cached_fraction: Some(0.25),
        read_stats: ReadStats {
            reads: 17,
            events: 18,
            events_sharing_a_read: 2,
            ignored_payloads: 0,
        },
    })
}

fn client() -> ClientBlock {
    ClientBlock::strobe(
        "test browser",
        false,
        0.1,
        ClientTransport::observed(Vec::new(), 1, 2),
        ClientSseCounts::default(),
    )
}

fn input<'a>(plan: &'a RunPlan, finished: &'a [FinishedRequest]) -> CheckpointInput<'a> {
    CheckpointInput {
        plan,
        finished,
        progress: LiveProgress {
            run_started_unix_ms: Some(STARTED_MS),
            in_flight: 2,
            ..LiveProgress::default()
        },
        saved_unix_ms: STARTED_MS + 4_000.0,
        client: client(),
        run_failed: None,
    }
}

/// What the page received: the outcomes as the worker's messages carry them.
fn received(outcomes: &[RequestOutcome]) -> Vec<FinishedRequest> {
    let message = FromMeasurement::Progress {
        progress: LiveProgress::default(),
        finished: outcomes.iter().map(FinishedRequest::from).collect(),
    };
    let text = encode_message(&message).expect("encodes");
    match decode_message::<FromMeasurement>(&text).expect("decodes") {
        FromMeasurement::Progress { finished, .. } => finished,
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_checkpoint_says_it_is_partial_and_reads_back_valid() {
    let plan = plan(10);
    // Four ended: three results and a failure; six had not.
    let mut outcomes: Vec<RequestOutcome> = [0, 1, 3].into_iter().map(completed).collect();
    outcomes.push(RequestOutcome::Failed(FailureRecord::request_error(
        2,
        1024,
        &RequestError::new("HttpError", "HTTP 500: overloaded"),
        12.5,
    )));
    let finished = received(&outcomes);
    let artifact = checkpoint_artifact(input(&plan, &finished)).expect("a checkpoint");
    assert_eq!(artifact.requests, 10);
    assert_eq!(artifact.completed, 3);
    assert_eq!(artifact.failed, 7);
    assert_eq!(artifact.request_timings.len(), 3);
    assert!(!artifact.performance_eligible);
    assert_eq!(
        artifact.metrics["throughput_tok_s"],
        serde_json::Value::Null
    );
    assert_eq!(artifact.wall_clock_ms, 4_000.0);
    let unfinished: Vec<u64> = artifact
        .failures
        .iter()
        .filter(|failure| failure.error_message == UNFINISHED_MESSAGE)
        .map(|failure| failure.request_index)
        .collect();
    assert_eq!(unfinished, vec![4, 5, 6, 7, 8, 9]);
    assert!(artifact
        .failures
        .iter()
        .all(|failure| failure.request_index == 2 || failure.error_type == "AbortError"));
    let client = artifact.client.as_ref().expect("a client block");
    assert_eq!(
        client.checkpoint,
        Some(CheckpointBlock {
            finished_requests: 4,
            run_failed: None,
        })
    );
    // The read statistics of the results travelled with them.
    assert_eq!(client.sse.reads, 51);
    // The reader takes it as a valid artifact and labels it partial.
    let text = artifact.to_json_text().expect("writes");
    let opened = OpenedArtifact::from_text(&artifact.file_name(), &text);
    assert_eq!(opened.verdict(), Verdict::Valid, "{:?}", opened.problems());
    assert_eq!(opened.rows.len(), 3);
    assert_eq!(
        opened.partial_label().as_deref(),
        Some("partial: the tab closed during the run, 4 of 10 requests")
    );
    assert!(
        opened.status_line().starts_with("Partial run"),
        "{}",
        opened.status_line()
    );
}

#[test]
fn a_checkpoint_of_every_request_counts_as_the_run_would() {
    let plan = plan(4);
    let outcomes: Vec<RequestOutcome> = (0..4).map(completed).collect();
    let finished = received(&outcomes);
    let mut checkpoint = checkpoint_artifact(input(&plan, &finished)).expect("a checkpoint");
    let timing = RunTiming {
        started_at_unix_ns: (STARTED_MS * 1e6) as i64,
        finished_at_unix_ns: ((STARTED_MS + 4_000.0) * 1e6) as i64,
        wall_seconds: 4.0,
    };
    let client = ClientBlock {
        sse: ClientSseCounts::of_outcomes(&outcomes),
        ..client()
    };
    let built =
        build_artifact(plan.config(), &plan, outcomes, timing, Some(client)).expect("builds");
    // Nothing the artifact counts was lost on the way to the page: the same metrics, rows and
    // client block, but for the checkpoint's own mark.
    if let Some(client) = checkpoint.client.as_mut() {
        assert!(client.checkpoint.take().is_some());
    }
    assert_eq!(checkpoint, built);
}

#[test]
fn a_failed_run_says_why_and_nothing_is_made_before_a_request_ended() {
    let plan = plan(5);
    let finished = received(&[completed(0)]);
    let failed = CheckpointInput {
        run_failed: Some("the measurement worker fell silent".to_owned()),
        ..input(&plan, &finished)
    };
    let artifact = checkpoint_artifact(failed).expect("a checkpoint");
    let text = artifact.to_json_text().expect("writes");
    let opened = OpenedArtifact::from_text("x.json", &text);
    assert_eq!(
        opened.partial_label().as_deref(),
        Some("partial: the run failed (the measurement worker fell silent), 1 of 5 requests")
    );
    // Warming up, or nothing ended: no checkpoint.
    let warming = CheckpointInput {
        progress: LiveProgress::default(),
        ..input(&plan, &finished)
    };
    assert_eq!(
        checkpoint_artifact(warming),
        Err(CheckpointError::NothingYet)
    );
    assert_eq!(
        checkpoint_artifact(input(&plan, &[])),
        Err(CheckpointError::NothingYet)
    );
    // A request reported twice, or off the plan, counts once or not at all.
    let mut twice = received(&[completed(0), completed(0)]);
    twice.extend(received(&[completed(9)]));
    let artifact = checkpoint_artifact(input(&plan, &twice)).expect("a checkpoint");
    assert_eq!(artifact.completed, 1);
    assert_eq!(artifact.failed, 4);
}
