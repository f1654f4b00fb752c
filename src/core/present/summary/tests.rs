//! Tests of the run summary's view model: the basis and its caption, the table's numbers, the
//! notes, the failures as plain text and the SLO's inputs.

use super::*;
use crate::core::artifact::from_wire::NO_WIRE_TIME_REASON;
use crate::core::format::MISSING;
use crate::core::observe::failure::RequestError;
use crate::core::observe::test_support::entry;
use crate::core::observe::transport::TransportFacts;
use crate::core::schema::client::{ClientBlock, ClientSseCounts, ClientTransport};
use crate::core::schema::from_wire::FromWireBlock;
use crate::core::schema::rows::{FailureClass, FailureRecord};

const REFERENCE: &str = include_str!("../../../../tests/fixtures/reference-artifact.json");

/// The reference run: six requests, no failures, no `client` block (another producer wrote it).
fn reference() -> ArtifactV1 {
    serde_json::from_str(REFERENCE).expect("the reference artifact")
}

fn client() -> ClientBlock {
    ClientBlock::strobe(
        "test browser",
        true,
        0.005,
        ClientTransport::observed(vec!["http/1.1".to_owned()], 1, 6),
        ClientSseCounts::default(),
    )
}

/// The reference run as strobe would have written it, the browser having said how long each
/// request waited before it left (`queue_ms` by row).
fn with_wire_times(queue_ms: [f64; 6]) -> ArtifactV1 {
    let mut artifact = reference();
    for (row, queue_ms) in artifact.request_timings.iter_mut().zip(queue_ms) {
        row.set_transport(&TransportFacts::from_entry(
            &entry(100.1, 100.0 + queue_ms, None),
            100.0,
        ));
    }
    artifact.client = Some(ClientBlock {
        from_wire: Some(FromWireBlock::of_rows(&artifact.request_timings)),
        ..client()
    });
    artifact
}

/// Two rows waited 2 ms (under the 5 ms flag), four waited 8 s.
const QUEUES: [f64; 6] = [2.0, 8_000.0, 8_000.0, 8_000.0, 2.0, 8_000.0];

fn row<'a>(summary: &'a RunSummaryView, label: &str) -> &'a SummaryMetricRow {
    summary
        .metric_rows
        .iter()
        .find(|row| row.label == label)
        .expect("a row of that metric")
}

#[test]
fn the_title_and_the_table_say_the_reference_run() {
    let summary = RunSummaryView::of(&reference(), TimeBasis::Measured);
    assert_eq!(summary.run_id, "benchmark-20261005T114224Z");
    assert_eq!(summary.model, "qwen38-swift15-ninfer-dflash2-c4-262k");
    assert_eq!(summary.completion, "6 of 6 completed");
    assert_eq!(summary.protocol, "capacity-v4-reasoning");
    let labels: Vec<&str> = summary.metric_rows.iter().map(|row| row.label).collect();
    assert_eq!(
        labels,
        ["TTFO", "TTFT", "E2E", "TPOT", "Decode", "Effective prefill"]
    );
    // 8953.168 ms is grouped and whole; 231.96 tok/s keeps two decimals.
    let ttft = row(&summary, "TTFT");
    assert_eq!(
        (ttft.p50.as_str(), ttft.p95.as_str(), ttft.mean.as_str()),
        ("8,953", "10,017", "6,933")
    );
    assert_eq!(ttft.unit, "ms");
    assert_eq!(row(&summary, "Decode").p50, "231.96");
    assert_eq!(row(&summary, "Decode").unit, "tok/s");
    assert_eq!(row(&summary, "TPOT").p50, "4.17");
    assert_eq!(summary.throughput, "53.9 tok/s");
    assert_eq!(summary.prefix_cache, "33.3 %");
    assert!(summary.failures.is_empty());
    assert_eq!(summary.failures_heading(), "Failures (0)");
    // Another producer's file: no client block, no load block, so no notes of either.
    assert_eq!(summary.client_notes, None);
    assert_eq!(summary.load_notes, None);
    assert!(summary.load_warnings.is_empty());
}

#[test]
fn missing_statistics_show_the_dash_and_a_withheld_throughput_says_why() {
    let mut artifact = reference();
    for key in [
        "ttft_p95_ms",
        "ttft_mean_ms",
        "throughput_tok_s",
        "prefix_cache_hit_avg",
    ] {
        artifact
            .metrics
            .insert(key.to_owned(), serde_json::Value::Null);
    }
    artifact
        .metrics
        .insert("ttft_p50_ms".to_owned(), serde_json::json!(0.004));
    artifact
        .metrics
        .insert("e2e_p95_ms".to_owned(), serde_json::json!(1_234_567.891));
    let summary = RunSummaryView::of(&artifact, TimeBasis::Measured);
    let ttft = row(&summary, "TTFT");
    assert_eq!(
        (ttft.p50.as_str(), ttft.p95.as_str(), ttft.mean.as_str()),
        ("0.00", MISSING, MISSING)
    );
    assert_eq!(row(&summary, "E2E").p95, "1,234,568");
    assert_eq!(
        summary.throughput,
        "withheld (a request failed, or the server did not count its tokens)"
    );
    assert_eq!(summary.prefix_cache, "not reported");
}

#[test]
fn a_run_without_wire_times_is_shown_as_measured_and_says_why() {
    // No client block at all: the reader's own words.
    let summary = RunSummaryView::of(&reference(), TimeBasis::FromWire);
    assert_eq!(summary.shown_basis, TimeBasis::Measured);
    assert_eq!(
        summary.basis_caption,
        "Times as measured: this run has no times from the wire (the browser reported no \
         client_queue_ms)."
    );
    // strobe's client block that says why: its reason.
    let mut artifact = reference();
    artifact.client = Some(ClientBlock {
        from_wire: Some(FromWireBlock::of_rows(&artifact.request_timings)),
        ..client()
    });
    let summary = RunSummaryView::of(&artifact, TimeBasis::FromWire);
    assert_eq!(summary.shown_basis, TimeBasis::Measured);
    assert_eq!(
        summary.basis_caption,
        format!("Times as measured: this run has no times from the wire ({NO_WIRE_TIME_REASON}).")
    );
    // Asked as measured, nothing to explain.
    let summary = RunSummaryView::of(&artifact, TimeBasis::Measured);
    assert_eq!(
        summary.basis_caption,
        "Times as measured, from just before each request was sent."
    );
}

#[test]
fn from_the_wire_the_table_the_cards_and_the_slo_read_the_wire_times() {
    let artifact = with_wire_times(QUEUES);
    let block = artifact
        .client
        .as_ref()
        .and_then(|client| client.from_wire.clone())
        .expect("a from_wire block");
    let measured = RunSummaryView::of(&artifact, TimeBasis::Measured);
    let wire = RunSummaryView::of(&artifact, TimeBasis::FromWire);
    assert_eq!(measured.shown_basis, TimeBasis::Measured);
    assert_eq!(wire.shown_basis, TimeBasis::FromWire);
    assert_eq!(
        wire.basis_caption,
        "Times from the wire: each TTFO, TTFT and E2E minus the time the request spent in the \
         browser before it left (client_queue_ms)."
    );
    assert_eq!(row(&measured, "TTFT").p50, "8,953");
    assert_eq!(
        row(&wire, "TTFT").p50,
        format_table_number(block.statistic("ttft_p50_ms"))
    );
    assert_ne!(row(&wire, "TTFT").p50, row(&measured, "TTFT").p50);
    // TPOT and the rates do not depend on the basis.
    assert_eq!(row(&wire, "TPOT"), row(&measured, "TPOT"));
    assert_eq!(
        wire.headline.metrics.ttft.p50,
        block.statistic("ttft_p50_ms")
    );
    let cards = wire.headline.cards(None);
    assert_eq!(cards[0].value, "6 ok");
    assert_eq!(cards[0].detail.as_deref(), Some("of 6"));
    // TTFT ≤ 2000 ms: two of six as measured; from the wire all but request 1 (2017 ms).
    let slo: Slo = "ttft:2000".parse().expect("an SLO");
    assert_eq!(measured.slo.judge(&slo).met, 2);
    let outcome = wire.slo.judge(&slo);
    assert_eq!((outcome.sent, outcome.met), (6, 5));
    assert_eq!(wire.slo.wall_clock_ms, artifact.wall_clock_ms);
    let goodput = wire.headline.cards(Some(&outcome));
    assert_eq!(goodput.last().map(|card| card.id), Some("goodput"));
}

#[test]
fn the_client_notes_count_the_requests_that_waited_in_the_browser() {
    let summary = RunSummaryView::of(&with_wire_times(QUEUES), TimeBasis::Measured);
    let notes = summary.client_notes.expect("a client block's notes");
    assert!(!notes.is_empty());
    assert_eq!(
        notes.last().map(String::as_str),
        Some(
            "4 requests waited inside the browser before leaving it (client_queue_ms in their \
             rows): their TTFO includes that wait."
        )
    );
    let one = RunSummaryView::of(
        &with_wire_times([2.0, 2.0, 2.0, 2.0, 2.0, 6.0]),
        TimeBasis::Measured,
    );
    let notes = one.client_notes.expect("notes");
    assert!(notes
        .last()
        .is_some_and(|note| note.starts_with("1 request waited inside the browser")));
    // Nobody waited over the flag: no such note.
    let none = RunSummaryView::of(&with_wire_times([2.0; 6]), TimeBasis::Measured);
    assert!(none
        .client_notes
        .expect("notes")
        .iter()
        .all(|note| !note.contains("waited inside the browser")));
}

#[test]
fn hostile_text_from_the_file_stays_plain_text() {
    let mut artifact = reference();
    artifact.run_id = "<script>alert(1)</script>".to_owned();
    artifact.model = "<b>model</b> & co".to_owned();
    artifact.failed = 3;
    artifact.completed = 4;
    artifact.failures = vec![
        FailureRecord::request_error(
            4,
            1024,
            &RequestError::new("HttpError", "HTTP 500: <img src=x onerror=alert(1)> &amp;"),
            12.5,
        ),
        FailureRecord::request_error(5, 1024, &RequestError::new("<i>Type</i>", "plain"), 3.0),
    ];
    let summary = RunSummaryView::of(&artifact, TimeBasis::Measured);
    assert_eq!(summary.run_id, "<script>alert(1)</script>");
    assert_eq!(summary.model, "<b>model</b> & co");
    assert_eq!(summary.completion, "4 of 6 completed");
    assert_eq!(summary.failures_heading(), "Failures (2)");
    assert_eq!(
        summary.failures[0],
        SummaryFailureRow {
            request_index: 4,
            class: FailureClass::RequestError.as_str(),
            error_type: "HttpError".to_owned(),
            message: "HTTP 500: <img src=x onerror=alert(1)> &amp;".to_owned(),
        }
    );
    assert_eq!(summary.failures[1].error_type, "<i>Type</i>");
    // The larger of `failed` and the failures listed counts against the SLO and on the card.
    assert_eq!(summary.headline.failed, 3);
    assert_eq!(summary.slo.failed, 3);
    artifact.failed = 0;
    let summary = RunSummaryView::of(&artifact, TimeBasis::Measured);
    assert_eq!(summary.headline.failed, 2);
}

#[test]
fn the_caption_covers_every_pair_of_bases() {
    assert_eq!(
        basis_caption(
            TimeBasis::FromWire,
            TimeBasis::Measured,
            Some("why".to_owned())
        ),
        "Times as measured: this run has no times from the wire (why)."
    );
    assert!(
        basis_caption(TimeBasis::FromWire, TimeBasis::FromWire, None)
            .starts_with("Times from the wire:")
    );
    assert_eq!(
        basis_caption(
            TimeBasis::Measured,
            TimeBasis::Measured,
            Some("ignored".to_owned())
        ),
        "Times as measured, from just before each request was sent."
    );
}
