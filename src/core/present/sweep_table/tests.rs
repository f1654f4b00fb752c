//! The sweep's table on the reference artifact filed as sweep steps: the heading with and without
//! repeats, each row's label, figures and note, the server column and how the sweep ended.

use super::*;
use crate::core::present::capacity::capacity_point;
use crate::core::present::server::ServerFigures;
use crate::core::read::opened::OpenedArtifact;
use crate::core::schema::repeat::RepeatBlock;
use crate::core::schema::sweep::{StopReason, SweepBlock, SweepVariable};
use crate::core::slo::SloOutcome;

const REFERENCE: &str = include_str!("../../../../tests/fixtures/reference-artifact.json");

/// The reference run filed as step `step_index` of a three-step sweep.
fn step(step_index: u64, stop_reason: Option<StopReason>) -> ArtifactV1 {
    let mut artifact: ArtifactV1 = serde_json::from_str(REFERENCE).expect("the reference");
    artifact.sweep = Some(SweepBlock {
        id: "sweep-a".to_owned(),
        step_index,
        step_count: 3,
        variable: SweepVariable::Concurrency,
        value: (step_index + 1) as f64,
        spec: "concurrency:1,2,4".to_owned(),
        stop_reason,
    });
    artifact
}

fn point() -> CapacityPoint {
    capacity_point(&OpenedArtifact::from_text("run.json", REFERENCE)).expect("a wall time")
}

fn status(repeats: u64, steps_reached: usize, ended: Option<SweepEnding<'_>>) -> SweepStatus<'_> {
    SweepStatus {
        spec: "concurrency:1,2,4",
        step_count: 3,
        repeats,
        runs_filed: 0,
        steps_reached,
        current: None,
        ended,
        cooling_s: None,
        cancelled: false,
    }
}

#[test]
fn each_step_is_a_row_of_its_figures() {
    let first = step(0, None);
    let point = point();
    let table = SweepTable::new(&status(1, 1, None), [(&first, Some(&point))]);
    assert_eq!(table.heading, "Sweep concurrency:1,2,4 · 1 of 3 steps");
    assert_eq!(table.step_heading, "step");
    assert_eq!(table.ended, None);
    assert!(!table.downloadable, "a sweep still running has no download");
    assert!(!table.server_column);
    assert_eq!(table.figure_columns(), 6);
    let row = &table.rows[0];
    assert_eq!(row.label, "1");
    assert_eq!(row.note, "");
    let figures = row.figures.as_ref().expect("a point");
    assert_eq!(figures.load, point.label);
    assert_eq!(figures.ttft_p95_ms, "10017.0");
    assert_eq!(figures.tpot_p95_ms, "4.6");
    assert_eq!(figures.e2e_p95_ms, "10137.6");
    assert_eq!(
        figures.requests_per_s,
        format_tenths(point.requests_per_s, "")
    );
    assert_eq!(figures.server, crate::core::format::MISSING);
}

#[test]
fn notes_join_the_slo_saturation_and_where_the_sweep_stopped() {
    let last = step(1, Some(StopReason::Saturated));
    let mut point = point();
    point.saturated = true;
    point.slo = Some(SloOutcome {
        sent: 4,
        failed: 0,
        met: 3,
        attainment: Some(0.75),
        goodput_req_s: None,
        goodput_output_tok_s: None,
        met_uncounted_tokens: 0,
        bounds: Vec::new(),
    });
    point.server = Some(ServerFigures {
        waiting_peak: Some(12.0),
        ..ServerFigures::default()
    });
    let reason = StopReason::Saturated.describe().to_string();
    let table = SweepTable::new(
        &status(1, 2, Some(SweepEnding::Stopped(&reason))),
        [(&last, Some(&point))],
    );
    assert_eq!(
        table.ended.as_deref(),
        Some(format!("Stopped: {reason}.").as_str())
    );
    assert!(table.downloadable);
    assert!(table.server_column);
    assert_eq!(table.figure_columns(), 7);
    let row = &table.rows[0];
    assert_eq!(row.label, "2");
    assert_eq!(
        row.note,
        format!(
            "SLO met by 75.0 %; saturated: below 90 % of the offered rate; stopped here: {reason}"
        )
    );
    assert_eq!(
        row.figures.as_ref().map(|figures| figures.server.as_str()),
        Some("waiting 12")
    );
}

#[test]
fn with_repeats_rows_say_which_repeat_and_a_run_without_wall_time_says_so() {
    let mut first = step(0, None);
    first.repeat = Some(RepeatBlock {
        group_id: "g".to_owned(),
        index: 1,
        count: 2,
    });
    let mut cut = step(2, Some(StopReason::Cancelled));
    cut.sweep = None;
    let table = SweepTable::new(
        &status(2, 1, Some(SweepEnding::Complete)),
        [(&first, None), (&cut, None)],
    );
    assert_eq!(
        table.heading,
        "Sweep concurrency:1,2,4 · 1 of 3 steps × 2 repeats (2 runs)"
    );
    assert_eq!(table.step_heading, "step · repeat");
    assert_eq!(table.ended.as_deref(), Some("Every step ran."));
    assert_eq!(table.rows[0].label, "1 · 2 of 2");
    assert_eq!(table.rows[0].figures, None);
    assert_eq!(table.rows[0].note, "");
    // Without its `sweep` block a run is numbered by its place.
    assert_eq!(table.rows[1].label, "2");
    let nothing = SweepTable::new(&status(1, 0, Some(SweepEnding::Complete)), []);
    assert!(!nothing.downloadable, "no run, nothing to download");
    assert_eq!(nothing.heading, "Sweep concurrency:1,2,4 · 0 of 3 steps");
}
