//! Tests of reading artifact files of every generation into a [`OpenedArtifact`](super::OpenedArtifact).

use super::*;
use crate::core::observe::accumulate::CHUNK_ARRIVALS_KEPT;
use crate::core::read::opened::views::row_notes;
use serde_json::json;
use serde_json::Value;

#[test]
fn a_non_object_is_invalid_with_nothing_read() {
    let opened = OpenedArtifact::from_text("list.json", "[1, 2]");
    assert_eq!(opened.verdict(), Verdict::Invalid);
    assert!(opened.rows.is_empty());
    assert_eq!(opened.identity, RunIdentity::default());
    // JSON of no shape strobe reads says what it reads; the validator's reasons stay listed.
    assert!(opened.unrecognized);
    assert!(opened
        .status_line()
        .starts_with("Not a file strobe reads: it reads strobe and anvil artifacts"));
    assert!(!opened.problems().is_empty());
}

#[test]
fn other_tools_files_load_as_runs_of_their_tool() {
    let path = |relative: &str| {
        std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/peers")
            .join(relative)
    };
    let text = std::fs::read_to_string(path("vllm/vllm-0.33.0-c1.json")).expect("fixture");
    let opened = OpenedArtifact::all_from_text("vllm.json", &text);
    assert_eq!(opened.len(), 1);
    let run = &opened[0];
    assert_eq!(run.verdict(), Verdict::Foreign);
    assert_eq!(run.verdict_label(), "read as vLLM (version not recorded)");
    assert_eq!(run.rows.len(), 48);
    assert!(run
        .status_line()
        .starts_with("Read as vLLM (version not recorded): 48 request rows"));
    // A GuideLLM report of two benchmarks gives two runs, each named after its strategy.
    let mut report: Value = serde_json::from_str(
        &std::fs::read_to_string(path("guidellm/guidellm-0.8.1-c4.json")).expect("fixture"),
    )
    .expect("JSON");
    let benchmark = report["benchmarks"][0].clone();
    report["benchmarks"]
        .as_array_mut()
        .expect("array")
        .push(benchmark);
    let runs = OpenedArtifact::all_from_text("sweep.json", &report.to_string());
    let labels: Vec<String> = runs.iter().map(OpenedArtifact::label).collect();
    assert_eq!(
        labels,
        [
            "sweep.json › benchmark 1 (concurrent 4)",
            "sweep.json › benchmark 2 (concurrent 4)"
        ]
    );
    // A broken one is refused with its field named, nothing read.
    let mut broken: Value = serde_json::from_str(&text).expect("JSON");
    broken["ttfts"][0] = json!("x");
    let broken = broken.to_string();
    let refused = OpenedArtifact::from_text("broken.json", &broken);
    assert_eq!(refused.verdict(), Verdict::Invalid);
    assert!(refused.rows.is_empty());
    assert!(
        refused
            .status_line()
            .contains("`ttfts[0]` must be a finite number"),
        "{}",
        refused.status_line()
    );
    // A NaN token (Python's json writes them) is no JSON: the card names where it is.
    let nan = text.replacen("\"ttfts\": [", "\"ttfts\": [NaN, ", 1);
    let refused = OpenedArtifact::from_text("nan.json", &nan);
    assert_eq!(refused.verdict(), Verdict::Invalid);
    let problems = refused.problems();
    assert!(
        problems
            .iter()
            .any(|problem| problem.contains("$.ttfts[0]")),
        "{problems:?}"
    );
    // Truncated, it says so too.
    let truncated = OpenedArtifact::from_text("cut.json", &text[..text.len() / 3]);
    assert_eq!(truncated.verdict(), Verdict::Invalid);
    assert!(
        truncated.status_line().contains("truncated"),
        "{}",
        truncated.status_line()
    );
}

#[test]
fn malformed_rows_and_fields_are_skipped_not_fatal() {
    let text = json!({
        "schema": "anvil-serving.benchmark/v1",
        "run_id": 42,
        "model": "m",
        "concurrency": true,
        "request_timings": [
            "not a row",
            {"request_index": -1, "ttft_ms": "fast", "e2e_ms": 12.5, "cached_tokens": 7},
        ],
        "failures": [{"error_type": ["TypeError"], "request_index": 3}],
    })
    .to_string();
    let opened = OpenedArtifact::from_text("odd.json", &text);
    assert_eq!(opened.verdict(), Verdict::Invalid);
    assert_eq!(opened.identity.run_id, None, "a number is not a run id");
    assert_eq!(opened.workload.concurrency, None, "a bool is not a count");
    assert_eq!(opened.rows.len(), 1);
    let row = &opened.rows[0];
    assert_eq!((row.position, row.request_index), (1, None));
    assert_eq!(row.index_or_position(), 1);
    assert_eq!((row.ttft_ms, row.e2e_ms), (None, Some(12.5)));
    assert_eq!(row.cached_tokens, Some(7));
    assert_eq!(opened.failures[0].error_type, None);
    assert_eq!(opened.failures[0].index_or_position(), 3);
    assert!(opened
        .notices
        .contains(&LoadNotice::RowsSkipped { count: 1 }));
}

#[test]
fn the_label_is_the_file_name_else_the_run_id() {
    let text = json!({"run_id": "benchmark-20260101T000000Z"}).to_string();
    assert_eq!(
        OpenedArtifact::from_text("run.json", &text).label(),
        "run.json"
    );
    assert_eq!(
        OpenedArtifact::from_text("  ", &text).label(),
        "benchmark-20260101T000000Z"
    );
    assert_eq!(OpenedArtifact::from_text("", "{}").label(), "(unnamed run)");
}

#[test]
fn the_client_block_says_how_the_numbers_were_taken() {
    let text = json!({"client": {
        "name": "strobe", "version": "0.1.0", "timer_resolution_ms": 0.005,
        "cross_origin_isolated": true, "measurement_thread": "worker",
        "transport": {"http_protocols_seen": ["http/1.1"], "connection_limit_suspected": true,
                      "endpoints": 1, "max_in_flight_per_origin": 8},
        "warmup": {"requests": 16, "duration_ms": 80.5, "failures": 0, "check_rounds": 2,
                   "connections": "ready"}
    }})
    .to_string();
    let opened = OpenedArtifact::from_text("run.json", &text);
    let notes = opened
        .client
        .map(|client| client.notes())
        .unwrap_or_default();
    assert_eq!(
        notes[..2],
        [
            "Measured by strobe 0.1.0 in a dedicated worker; timer resolution 5 µs; \
             cross-origin isolated."
                .to_owned(),
            "1 endpoint; at most 8 requests in flight to one origin.".to_owned(),
        ]
    );
    assert_eq!(
        notes[2],
        "Warm-up: 16 unmeasured requests before the run; every connection the first \
         wave needs was shown open when it started."
    );
    assert!(notes[3].contains("waiting inside the browser"), "{notes:?}");
    // Each verdict says what it means; an unheard-of one only counts the requests.
    let warmup_note = |connections: Value| {
        let text = json!({"client": {"warmup": {"requests": 8, "connections": connections}}});
        OpenedArtifact::from_text("w.json", &text.to_string())
            .client
            .and_then(|client| client.warmup_note())
            .unwrap_or_default()
    };
    assert!(warmup_note(json!("still_opening")).contains("still opened a connection"));
    assert!(warmup_note(json!("not_shown")).contains("ended too quickly"));
    assert!(warmup_note(json!("unknown")).contains("Timing-Allow-Origin"));
    assert_eq!(
        warmup_note(json!("<b>maybe</b>")),
        "Warm-up: 8 unmeasured requests before the run."
    );
    // Where the page drew while it measured.
    let measured_by = |thread: &str, live_view: &str| {
        let text = json!({"client": {"name": "strobe", "measurement_thread": thread,
                                     "live_view": live_view}});
        OpenedArtifact::from_text("t.json", &text.to_string())
            .client
            .map(|client| client.notes()[0].clone())
            .unwrap_or_default()
    };
    assert_eq!(
        measured_by("main", "end"),
        "Measured by strobe on the page's main thread, the page drawing nothing until the \
         run ended."
    );
    assert_eq!(
        measured_by("main", "during"),
        "Measured by strobe on the page's main thread, which also drew the live progress \
         (reads arriving meanwhile could be stamped late)."
    );
    assert_eq!(
        measured_by("worker", "during"),
        "Measured by strobe in a dedicated worker."
    );
    assert_eq!(
        measured_by("worker", "<i>x</i>"),
        "Measured by strobe in a dedicated worker."
    );
    // A page a service worker isolated: a worker's requests passed it, the page's bypass it.
    let service_worker_note = |thread: &str, flag: Value| {
        let text = json!({"client": {"name": "strobe", "measurement_thread": thread,
                                     "isolation_service_worker": flag}});
        OpenedArtifact::from_text("s.json", &text.to_string())
            .client
            .map(|client| client.notes())
            .unwrap_or_default()
            .into_iter()
            .find(|note| note.contains("service worker"))
    };
    assert!(service_worker_note("worker", json!(true))
        .is_some_and(|note| note.contains("passed its fetch event")));
    assert!(service_worker_note("main", json!(true))
        .is_some_and(|note| note.contains("bypass it by static routing")));
    assert_eq!(service_worker_note("worker", json!("yes")), None);
    // Buffered streams and a hidden transport are said, with the fix.
    let text = json!({"client": {"name": "strobe", "sse": {"buffered_streams": 3},
                                 "transport": {"http_protocols_seen": []}}});
    let notes = OpenedArtifact::from_text("b.json", &text.to_string())
        .client
        .map(|client| client.notes())
        .unwrap_or_default();
    assert!(
        notes
            .iter()
            .any(|note| note.starts_with("3 requests received many events")
                && note.contains("proxy_buffering off")),
        "{notes:?}"
    );
    assert!(
        notes
            .iter()
            .any(|note| note.contains("Timing-Allow-Origin $http_origin")),
        "{notes:?}"
    );
    // A calibrated run says by what; a hostile block says nothing.
    let calibration_note = |calibration: Value| {
        let text = json!({"client": {"name": "strobe", "context_calibration": calibration}});
        OpenedArtifact::from_text("c.json", &text.to_string())
            .client
            .map(|client| client.notes())
            .unwrap_or_default()
            .into_iter()
            .find(|note| note.contains("context calibration"))
    };
    assert_eq!(
        calibration_note(json!({"chars_per_token": 1.4567, "overhead_tokens": 9.6,
                                "estimated_chars_per_token": 3})),
        Some(
            "Prompts were sized in this server's own tokens (context calibration): two \
             unmeasured probes before the run showed 1.46 characters per token on the \
             benchmark's text (strobe's estimate is 3) plus 10 tokens of chat template, and \
             every prompt was rescaled to its planned context."
                .to_owned()
        )
    );
    assert_eq!(
        calibration_note(json!({"chars_per_token": "<b>1</b>", "overhead_tokens": 1})),
        None
    );
    assert_eq!(calibration_note(json!(true)), None);
    // Rows counted by content chunks say so.
    let rows = json!({"request_timings": [
        {"request_index": 0, "output_token_source": "usage"},
        {"request_index": 1, "output_token_source": "content_chunks"},
    ]});
    let opened = OpenedArtifact::from_text("r.json", &rows.to_string());
    let notes = row_notes(&opened.rows);
    assert_eq!(notes.len(), 1);
    assert!(
        notes[0].starts_with("1 of 2 requests got no usage"),
        "{notes:?}"
    );
    // A session's later turns carry their history: only first turns speak of the tokenizer.
    let session = |turn: u64, planned: u64, measured: u64| {
        json!({"request_index": turn, "planned_context_tokens": planned,
               "prompt_tokens": measured, "workload": {"record": 0, "session": 0, "turn": turn}})
    };
    let rows = json!({"request_timings": [
        session(0, 20, 21), session(1, 20, 180), session(2, 20, 400),
    ]});
    let opened = OpenedArtifact::from_text("s.json", &rows.to_string());
    assert!(
        row_notes(&opened.rows).is_empty(),
        "{:?}",
        row_notes(&opened.rows)
    );
    let rows = json!({"request_timings": [session(0, 20, 60), session(1, 20, 180)]});
    let opened = OpenedArtifact::from_text("s.json", &rows.to_string());
    assert!(row_notes(&opened.rows)[0].starts_with("Prompts measured 3.00 server tokens"));
    // An older strobe file: no thread, no pool, nothing suspected.
    let old =
        json!({"client": {"name": "strobe", "version": "0.0.9", "cross_origin_isolated": false}});
    let opened = OpenedArtifact::from_text("old.json", &old.to_string());
    assert_eq!(
        opened.client.map(|client| client.notes()),
        Some(vec![
            "Measured by strobe 0.0.9; not cross-origin isolated (coarser timer).".to_owned()
        ])
    );
}

#[test]
fn chunk_traces_become_read_gaps_and_anything_odd_is_no_trace() {
    let gaps_of = |trace: Value| {
        let row = json!({"request_index": 0, "chunk_arrivals_ms": trace});
        let row = row.as_object().cloned().unwrap_or_default();
        RowView::from_json(0, &row).read_gaps_ms
    };
    assert_eq!(
        gaps_of(json!([100.0, 110.5, 130.5, 131.0])),
        vec![10.5, 20.0, 0.5]
    );
    assert_eq!(gaps_of(json!([100.0])), Vec::<f64>::new());
    assert_eq!(
        gaps_of(json!([100.0, "<img src=x>", 120.0])),
        Vec::<f64>::new()
    );
    assert_eq!(gaps_of(json!({"0": 1.0})), Vec::<f64>::new());
    // A step backwards ends the trace; a trace longer than strobe writes is refused.
    assert_eq!(gaps_of(json!([100.0, 110.0, 90.0, 120.0])), vec![10.0]);
    let too_long: Vec<f64> = (0..=CHUNK_ARRIVALS_KEPT).map(|i| i as f64).collect();
    assert_eq!(gaps_of(json!(too_long)), Vec::<f64>::new());

    let traced = RowView {
        read_gaps_ms: vec![3.0, 41.5, 2.0],
        ..RowView::default()
    };
    assert_eq!(traced.longest_stall_ms(), Some(41.5));
    assert_eq!(RowView::default().longest_stall_ms(), None);
}
