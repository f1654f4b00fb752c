use super::*;
use crate::core::read::opened::OpenedArtifact;

const REFERENCE: &str = include_str!("../../../tests/fixtures/reference-artifact.json");
const G1: &str = include_str!("../../../tests/fixtures/generations/g1-legacy-minimal.json");
const G2: &str = include_str!("../../../tests/fixtures/generations/g2.json");
const G3: &str = include_str!("../../../tests/fixtures/generations/g3.json");
const ALL_FAILED: &str =
    include_str!("../../../tests/fixtures/generations/modern-all-failed-strict.json");

fn slo(text: &str) -> Slo {
    text.parse().expect("a valid SLO")
}

fn judge(text: &str, file: &str) -> Result<SloOutcome, Unjudgeable> {
    judge_opened(&slo(text), &OpenedArtifact::from_text("f.json", file))
}

/// The reference run: six requests over 42385.45840000006 ms, no failures. Its rows (ttft,
/// ttfo, tpot, e2e, output tokens) are listed in the fixture; the expected counts below are
/// read off them by hand.
const REFERENCE_WALL_S: f64 = 42.38545840000006;

#[test]
fn ttft_bound_on_the_reference_run() {
    // TTFT ≤ 2000 ms: requests 0 (1418.3) and 4 (1752.6) of six.
    let outcome = judge("ttft:2000", REFERENCE).expect("judged");
    assert_eq!((outcome.sent, outcome.met, outcome.failed), (6, 2, 0));
    assert_eq!(outcome.attainment, Some(2.0 / 6.0));
    assert_eq!(outcome.goodput_req_s, Some(2.0 / REFERENCE_WALL_S));
    assert_eq!(
        outcome.goodput_output_tok_s,
        Some((281 + 433) as f64 / REFERENCE_WALL_S)
    );
    let most = outcome.most_rejecting().expect("a bound rejects");
    assert_eq!(
        (most.metric, most.missed, most.no_value),
        (SloMetric::Ttft, 4, 0)
    );
}

#[test]
fn two_bounds_must_both_hold_and_the_tighter_one_rejects_most() {
    // TTFT ≤ 10000 misses request 1 (10017.0); TPOT ≤ 4.2 misses 0 (4.31), 3 (4.62), 5 (4.36).
    // Requests 2 (8953.2 ms, 4.09 ms) and 4 (1752.6 ms, 4.17 ms) meet both.
    let outcome = judge("ttft:10000,tpot:4.2", REFERENCE).expect("judged");
    assert_eq!(outcome.met, 2);
    let missed: Vec<(SloMetric, u64)> = outcome
        .bounds
        .iter()
        .map(|tally| (tally.metric, tally.missed))
        .collect();
    assert_eq!(missed, [(SloMetric::Ttft, 1), (SloMetric::Tpot, 3)]);
    assert_eq!(
        outcome.most_rejecting().map(|tally| tally.metric),
        Some(SloMetric::Tpot)
    );
    assert!(outcome.summary().starts_with("33.3 % met (2 of 6)"));
    assert!(outcome.summary().contains("TPOT rejects most (3)"));
}

#[test]
fn a_bound_holds_at_its_limit_exactly() {
    // Request 3's E2E is exactly 9593.297499999608 ms: at the limit, it meets it; 0, 2 and 4
    // are below; 1 and 5 above.
    let outcome = judge("e2el:9593.297499999608", REFERENCE).expect("judged");
    assert_eq!(outcome.met, 4);
    // TTFO ≤ 8100 ms: 0 (355.8), 1 (8018.1), 2 (8016.4), 4 (59.5); not 3 (8115.7) or 5.
    assert_eq!(judge("ttfo:8100", REFERENCE).expect("judged").met, 4);
    // A generous SLO meets every request and rejects nothing.
    let all = judge("ttfo:60000,ttft:60000,tpot:100,e2el:60000", REFERENCE).expect("judged");
    assert_eq!((all.met, all.attainment), (6, Some(1.0)));
    assert_eq!(all.most_rejecting(), None);
}

#[test]
fn a_one_token_answer_skips_its_tpot_bound_and_a_missing_value_fails_it() {
    let row = |output_tokens: Option<u64>, tpot_ms: Option<f64>| RowView {
        ttft_ms: Some(100.0),
        e2e_ms: Some(100.0),
        tpot_ms,
        output_tokens,
        ..RowView::default()
    };
    let rows = [
        row(Some(1), None),      // one token: no TPOT, bound skipped, meets
        row(Some(0), None),      // no token at all: skipped too
        row(None, None),         // tokens not counted, no TPOT: cannot be shown to hold
        row(Some(5), None),      // a longer answer without TPOT: does not meet
        row(Some(5), Some(9.0)), // meets
        row(Some(5), Some(11.0)),
    ];
    let outcome = judge_rows(&slo("tpot:10"), &rows, 2, Some(2000.0));
    assert_eq!((outcome.sent, outcome.met, outcome.failed), (8, 3, 2));
    let tally = &outcome.bounds[0];
    assert_eq!((tally.missed, tally.no_value, tally.skipped), (1, 2, 2));
    assert_eq!(outcome.goodput_req_s, Some(1.5));
    assert_eq!(outcome.goodput_output_tok_s, Some(3.0));
    // A row without TTFO is judged by its TTFT (§5); one without either cannot meet TTFO.
    assert_eq!(
        check_bound(SloMetric::Ttfo, 150.0, &rows[0]),
        BoundCheck::Met
    );
    assert_eq!(
        check_bound(SloMetric::Ttfo, 150.0, &RowView::default()),
        BoundCheck::NoValue
    );
    // Without a wall time there is no goodput, but attainment stands.
    let timeless = judge_rows(&slo("tpot:10"), &rows, 2, None);
    assert_eq!(
        (timeless.goodput_req_s, timeless.attainment),
        (None, Some(3.0 / 8.0))
    );
}

#[test]
fn failed_requests_never_meet_an_slo() {
    // Twelve requests, all failed: sent and judged, none met.
    let outcome = judge("ttft:100000", ALL_FAILED).expect("judged");
    assert_eq!((outcome.sent, outcome.failed, outcome.met), (12, 12, 0));
    assert_eq!(outcome.attainment, Some(0.0));
    assert_eq!(outcome.goodput_req_s, Some(0.0));
    assert_eq!(
        outcome.most_rejecting(),
        None,
        "no bound rejected a success"
    );
}

#[test]
fn legacy_rows_are_judged_and_summary_only_files_are_refused_with_a_reason() {
    // G3: ten rows with the legacy inter-token key as TPOT, two failures, 48250 ms.
    // TTFT ≤ 3000 ms holds for the first four rows (2300, 2450, 2600, 2750).
    let outcome = judge("ttft:3000", G3).expect("judged");
    assert_eq!((outcome.sent, outcome.met, outcome.failed), (12, 4, 2));
    assert_eq!(outcome.goodput_req_s, Some(4.0 / 48.25));
    // TPOT ≤ 11 ms reads mean_inter_token_latency_ms: 10.55, 10.78, 10.99 hold.
    assert_eq!(judge("tpot:11", G3).expect("judged").met, 3);
    for (file, generation) in [(G1, Generation::G1LegacyMinimal), (G2, Generation::G2)] {
        let refusal = judge("ttft:3000", file).expect_err("summary only");
        assert_eq!(refusal, Unjudgeable::SummaryOnly { generation });
        assert!(refusal.to_string().contains("only summary statistics"));
    }
    let not_json = judge("ttft:3000", "{").expect_err("nothing to judge");
    assert!(matches!(not_json, Unjudgeable::NoRequests { .. }));
}

#[test]
fn the_slo_block_round_trips_through_a_file_and_restores_the_slo() {
    let spec = SloSpec {
        slo: slo("tpot:4.2,ttft:10000"),
        target: 0.9,
        sweep_min_attainment: None,
    };
    let outcome = judge(&spec.slo.to_string(), REFERENCE).expect("judged");
    let block = slo_block(&spec, &outcome);
    assert_eq!(block.spec, "ttft:10000,tpot:4.2");
    assert_eq!((block.sent, block.met), (6, 2));
    assert_eq!(block.rejected_by.get("tpot"), Some(&3));
    assert_eq!(block.bounds_ms.get("ttft"), Some(&10000.0));

    let mut value: serde_json::Value = serde_json::from_str(REFERENCE).expect("JSON");
    value["slo"] = serde_json::to_value(&block).expect("serializes");
    let artifact: ArtifactV1 = serde_json::from_value(value).expect("reads as an artifact");
    assert_eq!(artifact.slo.as_ref(), Some(&block));
    let text = artifact.to_json_text().expect("writes");
    let report = crate::core::read::validate::validate_artifact_text(&text);
    assert!(report.is_acceptable(), "{report}");

    let opened = OpenedArtifact::from_text("held.json", &text);
    let view = opened.slo.as_ref().expect("an slo block");
    assert_eq!(view.slo.as_ref(), Some(&spec.slo));
    assert_eq!((view.target, view.problem.as_deref()), (Some(0.9), None));
    assert_eq!(judge_opened(&spec.slo, &opened), Ok(outcome));

    // A hostile block restores nothing and says why.
    let mut hostile: serde_json::Value = serde_json::from_str(REFERENCE).expect("JSON");
    hostile["slo"] = serde_json::json!({"spec": "<b>ttft</b>:5", "target": 7});
    let opened = OpenedArtifact::from_text("hostile.json", &hostile.to_string());
    let view = opened.slo.as_ref().expect("an slo block");
    assert_eq!((view.slo.as_ref(), view.target), (None, None));
    assert!(view
        .problem
        .as_deref()
        .is_some_and(|p| p.contains("not restored")));
}

fn steps(pairs: &[(f64, f64)]) -> Vec<AttainmentAtLoad> {
    pairs
        .iter()
        .map(|&(load, attainment)| AttainmentAtLoad { load, attainment })
        .collect()
}

#[test]
fn capacity_at_slo_interpolates_between_the_steps_around_the_target() {
    // Every request met it at 4 req/s, half at 8: 87.5 % is crossed a quarter of the way, at 5.
    let sweep = steps(&[(8.0, 0.5), (1.0, 1.0), (4.0, 1.0), (16.0, 0.25)]);
    assert_eq!(
        capacity_at_slo(&sweep, 0.875),
        CapacityAtSlo::Reached {
            load: 5.0,
            interpolated: true,
            lower: 4.0,
            upper: 8.0,
        }
    );
    // A step exactly at the target is that step, not an interpolation.
    let exact = steps(&[(1.0, 1.0), (2.0, 0.95), (4.0, 0.5)]);
    assert_eq!(
        capacity_at_slo(&exact, 0.95),
        CapacityAtSlo::Reached {
            load: 2.0,
            interpolated: false,
            lower: 2.0,
            upper: 4.0
        }
    );
    // A curve that recovers is read at its first fall.
    let wobbly = steps(&[(1.0, 1.0), (2.0, 0.5), (3.0, 1.0)]);
    assert!(matches!(
        capacity_at_slo(&wobbly, 0.75),
        CapacityAtSlo::Reached { load, .. } if load == 1.5
    ));
    let text = capacity_at_slo(&sweep, 0.875).describe(0.95, |load| format!("{load:.1} req/s"));
    assert_eq!(
        text,
        "95 % of requests meet the SLO up to about 5.0 req/s (interpolated between 4.0 req/s \
         and 8.0 req/s)"
    );
}

#[test]
fn capacity_at_slo_is_not_reached_when_no_step_or_every_step_meets_it() {
    assert_eq!(
        capacity_at_slo(&steps(&[(2.0, 0.9), (1.0, 0.94)]), 0.95),
        CapacityAtSlo::NoStepMet { lowest: 1.0 }
    );
    assert_eq!(
        capacity_at_slo(&steps(&[(2.0, 0.96), (1.0, 1.0)]), 0.95),
        CapacityAtSlo::EveryStepMet { highest: 2.0 }
    );
    assert_eq!(capacity_at_slo(&[], 0.95), CapacityAtSlo::NoSteps);
    let never = CapacityAtSlo::NoStepMet { lowest: 1.0 }.describe(0.95, |c| format!("c={c}"));
    assert!(never.starts_with("not reached in this sweep"), "{never}");
    let always = CapacityAtSlo::EveryStepMet { highest: 8.0 }.describe(0.95, |c| format!("c={c}"));
    assert!(always.contains("at every step, up to c=8"), "{always}");
}
