//! The verdict on loaded runs and groups: the tests it runs, Holm's correction across the
//! metrics, and the words.

use super::*;
use crate::core::inference::holm::holm_adjusted;
use crate::core::inference::two_sample::mann_whitney_u;
use crate::core::present::repeats::group_repeats;

/// A run whose rows have these TTFTs, each TPOT `tpot_ms`, E2E = TTFT + 500 ms.
fn run_with_rows(ttfts: &[f64], tpot_ms: f64) -> OpenedArtifact {
    let rows: Vec<String> = ttfts
        .iter()
        .enumerate()
        .map(|(index, ttft)| {
            format!(
                r#"{{"request_index": {index}, "time_to_first_output_ms": {ttft},
                    "ttft_ms": {ttft}, "e2e_ms": {}, "tpot_ms": {}}}"#,
                ttft + 500.0,
                tpot_ms + (index % 3) as f64
            )
        })
        .collect();
    OpenedArtifact::from_text(
        "run.json",
        &format!(
            r#"{{"completed": {}, "request_timings": [{}]}}"#,
            ttfts.len(),
            rows.join(",")
        ),
    )
}

/// A run without rows whose `metrics` state these p50 and p95 TTFTs (as a G1 file does).
fn run_with_p50(ttft_p50: f64, repeat: Option<(&str, u64)>) -> OpenedArtifact {
    let repeat = repeat.map_or(String::new(), |(id, index)| {
        format!(r#", "repeat": {{"group_id": "{id}", "index": {index}, "count": 3}}"#)
    });
    OpenedArtifact::from_text(
        "run.json",
        &format!(
            r#"{{"metrics": {{"ttft_p50_ms": {ttft_p50}, "ttft_p95_ms": {}}}{repeat}}}"#,
            ttft_p50 * 1.5
        ),
    )
}

fn ttfts(count: usize, scale: f64) -> Vec<f64> {
    (0..count)
        .map(|i| (1000.0 + ((i * 37) % 101) as f64 * 3.0) * scale)
        .collect()
}

#[test]
fn two_runs_twenty_percent_apart_in_ttft_differ_significantly_and_alike_tpots_do_not() {
    let a = run_with_rows(&ttfts(60, 1.0), 20.0);
    let b = run_with_rows(&ttfts(60, 0.8), 20.0);
    let verdict = verdict_of_runs(&a, &b);
    let ttft = verdict.of(MetricKind::Ttft).expect("TTFT");
    let direct = mann_whitney_u(
        &MetricKind::Ttft.values(&a.rows),
        &MetricKind::Ttft.values(&b.rows),
    )
    .expect("finite");
    match ttft.outcome {
        TestOutcome::Tested {
            p_raw,
            significant,
            b_lower,
            ..
        } => {
            assert_eq!(p_raw, direct.p_value);
            assert!(significant && b_lower);
        }
        ref other => panic!("{other:?}"),
    }
    let ratio = ttft.ratio.expect("medians");
    assert!((ratio - 0.8).abs() < 1e-12, "{ratio}");
    assert_eq!(ttft.sentence(), "B's TTFT is 20 % lower (p < 0.001)");
    let tpot = verdict.of(MetricKind::Tpot).expect("TPOT");
    assert!(
        tpot.sentence()
            .starts_with("no significant difference in TPOT (p = "),
        "{}",
        tpot.sentence()
    );
}

#[test]
fn holm_adjusts_across_the_metrics_tested() {
    let a = run_with_rows(&ttfts(30, 1.0), 20.0);
    let b = run_with_rows(&ttfts(30, 0.97), 20.5);
    let verdict = verdict_of_runs(&a, &b);
    let (raw, adjusted): (Vec<f64>, Vec<f64>) = verdict
        .metrics
        .iter()
        .filter_map(|metric| match metric.outcome {
            TestOutcome::Tested {
                p_raw, p_adjusted, ..
            } => Some((p_raw, p_adjusted)),
            TestOutcome::TooFew(_) => None,
        })
        .unzip();
    assert_eq!(raw.len(), 4, "every metric was tested");
    assert_eq!(adjusted, holm_adjusted(&raw).expect("p-values"));
    assert!(raw
        .iter()
        .zip(&adjusted)
        .all(|(raw, adjusted)| adjusted >= raw));
}

#[test]
fn too_few_rows_or_no_rows_say_so_and_claim_nothing() {
    let a = run_with_rows(&[100.0, 110.0, 120.0], 20.0);
    let b = run_with_rows(&ttfts(20, 0.5), 20.0);
    let verdict = verdict_of_runs(&a, &b);
    let ttft = verdict.of(MetricKind::Ttft).expect("TTFT");
    assert_eq!(
        ttft.sentence(),
        "too few samples to tell: A has 3 rows and B 20 rows that record TTFT, and the test needs 8 each"
    );
    let json = verdict.to_json();
    assert_eq!(json["metrics"]["ttft_ms"]["p_value"], Value::Null);
    assert_eq!(json["metrics"]["ttft_ms"]["significant"], json!(false));
    let legacy = run_with_p50(900.0, None);
    let verdict = verdict_of_runs(&legacy, &b);
    let ttft = verdict.of(MetricKind::Ttft).expect("TTFT");
    assert!(
        ttft.sentence().contains("legacy artifact"),
        "{}",
        ttft.sentence()
    );
    // The file's p50 still gives the ratio.
    assert!(ttft.ratio.is_some());
}

#[test]
fn groups_are_compared_by_welch_over_their_p50s_and_the_campaign_is_no_proof() {
    // Issue #36's campaign: three repeats each; one run of each would have said 11 % faster.
    let default: Vec<OpenedArtifact> = [1049.0, 1065.0, 1057.0]
        .iter()
        .map(|p50| run_with_p50(*p50, None))
        .collect();
    let tuned: Vec<OpenedArtifact> = [929.0, 1462.0, 1336.0]
        .iter()
        .map(|p50| run_with_p50(*p50, None))
        .collect();
    let verdict = verdict_of_groups(
        &default.iter().collect::<Vec<_>>(),
        &tuned.iter().collect::<Vec<_>>(),
    );
    let ttft = verdict.of(MetricKind::Ttft).expect("TTFT");
    let welch = welch_t_test(&[1049.0, 1065.0, 1057.0], &[929.0, 1462.0, 1336.0]).expect("t");
    match ttft.outcome {
        TestOutcome::Tested {
            p_raw,
            p_adjusted,
            significant,
            df,
            ..
        } => {
            assert_eq!((p_raw, df), (welch.p_value, Some(welch.df)));
            // TTFT is the only metric these files state, so Holm changes nothing.
            assert_eq!(p_adjusted, p_raw);
            assert!(!significant);
        }
        ref other => panic!("{other:?}"),
    }
    assert!(ttft
        .sentence()
        .starts_with("no significant difference in TTFT"));
    let json = verdict.to_json();
    let a = &json["metrics"]["ttft_ms"]["a"];
    assert_eq!(a["runs"], json!(3));
    assert_eq!(a["p50_mean"], json!(1057.0));
    assert_eq!(a["p50_sd"], json!(8.0));
    let interval = a["p50_ci95"].as_array().expect("an interval");
    assert!(interval[0].as_f64().expect("low") < 1057.0);
    assert_eq!(json["compared"], json!("groups"));
    let tpot = verdict.of(MetricKind::Tpot).expect("TPOT");
    assert!(tpot.sentence().starts_with("too few samples to tell"));
}

#[test]
fn across_runs_reads_as_the_page_writes_it_and_flags_disagreeing_runs() {
    let default = AcrossRuns::of(&[1049.0, 1065.0, 1057.0]).expect("runs");
    assert_eq!(
        across_runs_text(&default, "ms"),
        "1,057 ms ± 19.9 (95 %, 3 runs)"
    );
    assert_eq!(disagreement(&default), None);
    let tuned = AcrossRuns::of(&[929.0, 1462.0, 1336.0]).expect("runs");
    let flag = disagreement(&tuned).expect("a CV above 10 %");
    assert!(flag.starts_with("the 3 runs disagree (their spread is 22 % of the mean, above 10 %)"));
    assert!(flag.contains("more repeats"), "{flag}");
    let one = AcrossRuns::of(&[1057.0]).expect("a run");
    assert_eq!(across_runs_text(&one, "ms"), "1,057 ms (1 run)");
}

#[test]
fn p_values_and_numbers_are_written_for_people() {
    assert_eq!(format_p(0.003), "p = 0.003");
    assert_eq!(format_p(0.41), "p = 0.41");
    assert_eq!(format_p(0.0494), "p = 0.049");
    assert_eq!(format_p(0.0004), "p < 0.001");
    assert_eq!(format_p(1.0), "p = 1");
    assert_eq!(format_with_separators(1234567.0), "1,234,567");
    assert_eq!(format_with_separators(-1057.3), "-1,057");
    assert_eq!(format_with_separators(12.35), "12.3");
}

#[test]
fn repeats_regroup_by_their_block_in_any_order() {
    let runs = vec![
        run_with_p50(1.0, Some(("g-b", 1))),
        run_with_p50(1.0, Some(("g-a", 2))),
        run_with_p50(1.0, None),
        run_with_p50(1.0, Some(("g-a", 0))),
        run_with_p50(1.0, Some(("g-b", 1))),
    ];
    let groups = group_repeats(&runs);
    assert_eq!(groups.len(), 2);
    assert_eq!(groups[0].group_id, "g-b");
    assert_eq!(groups[0].members, [0, 4]);
    assert_eq!(groups[0].duplicated, [1]);
    assert_eq!(groups[0].missing, [0, 2]);
    assert_eq!(groups[1].group_id, "g-a");
    assert_eq!(groups[1].members, [3, 1]);
    assert_eq!(groups[1].missing, [1]);
    assert_eq!(groups[1].planned, Some(3));
}

#[test]
fn runs_of_different_workloads_are_tested_and_flagged() {
    let with_workload = |run: &OpenedArtifact, sha: char| {
        let mut run = run.clone();
        let block = serde_json::json!({"source": "file", "endpoint": "chat",
            "file": {"sha256": format!("sha256:{}", sha.to_string().repeat(64))},
            "sending": {"turns": "first", "order": "file"}});
        run.workload_block = block
            .as_object()
            .map(crate::core::read::opened::workload::WorkloadBlockView::from_json);
        run
    };
    let a = run_with_rows(&ttfts(60, 1.0), 20.0);
    let b = run_with_rows(&ttfts(60, 0.8), 20.0);
    assert_eq!(verdict_of_runs(&a, &b).workloads_differ, None);
    assert_eq!(
        verdict_of_runs(&a, &b).to_json()["workloads_differ"],
        Value::Null
    );

    let (a, b) = (with_workload(&a, 'a'), with_workload(&b, 'b'));
    let verdict = verdict_of_runs(&a, &b);
    let words = verdict.workloads_differ.clone().expect("flagged");
    assert!(words.contains("workload.file.sha256"), "{words}");
    assert_eq!(verdict.to_json()["workloads_differ"], Value::from(words));
    assert!(
        matches!(
            verdict.of(MetricKind::Ttft).expect("TTFT").outcome,
            TestOutcome::Tested { .. }
        ),
        "the test still runs"
    );
    // Groups: one run of B from another file is enough to say so.
    let synthetic = run_with_rows(&ttfts(60, 1.0), 20.0);
    let grouped = verdict_of_groups(&[&a, &with_workload(&a, 'a')], &[&synthetic, &b]);
    assert!(grouped
        .workloads_differ
        .expect("flagged")
        .contains("workload.source"));
}
