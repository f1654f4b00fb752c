//! Tests of the chart options: bins, ranks, sampling, safety and the option shapes.

use std::collections::BTreeSet;

use super::*;
use crate::core::present::charts::distribution::{cdf_ranks, even_ranks, nice_extent};
use crate::core::read::opened::views::FailureView;
use crate::core::read::opened::views::RowView;
use serde_json::json;
use serde_json::Value;

fn row(index: u64, started_at_ms: f64, ttfo: f64, ttft: f64, e2e: f64, out: u64) -> RowView {
    RowView {
        position: index as usize,
        request_index: Some(index),
        started_at_ms: Some(started_at_ms),
        ttfo_ms: Some(ttfo),
        ttft_ms: Some(ttft),
        e2e_ms: Some(e2e),
        output_tokens: Some(out),
        ..RowView::default()
    }
}

fn points(series: &Value) -> Vec<(f64, f64)> {
    series["data"]
        .as_array()
        .map(|data| {
            data.iter()
                .filter_map(|point| Some((point[0].as_f64()?, point[1].as_f64()?)))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn histogram_bins_follow_freedman_diaconis_within_the_clamp() {
    assert_eq!(HistogramBins::for_values(&[]), None);
    assert_eq!(HistogramBins::for_values(&[f64::NAN]), None);

    // 0..=9999: nearest-rank p25 = 2499 and p75 = 7499, so the FD width is
    // 2 · 5000 / ∛10000 = 464.2 and 9999 / 464.2 rounds up to 22 bins.
    let uniform: Vec<f64> = (0..10_000).map(f64::from).collect();
    let bins = HistogramBins::for_values(&uniform).expect("bins");
    let fd_width = 2.0 * 5000.0 / 10_000f64.cbrt();
    assert_eq!(bins.count, (9999.0 / fd_width).ceil() as usize);
    assert_eq!(bins.lower, 0.0);
    assert_eq!(
        bins.bin_of(9999.0),
        bins.count - 1,
        "the maximum is in the last bin"
    );
    assert_eq!(bins.bin_of(-5.0), 0);
    assert_eq!(bins.bin_of(f64::NAN), 0);

    // A long tail asks for thousands of FD bins; the clamp keeps 60.
    let mut tailed = uniform.clone();
    tailed.push(1e9);
    assert_eq!(
        HistogramBins::for_values(&tailed).map(|bins| bins.count),
        Some(HISTOGRAM_MAX_BINS)
    );

    // Zero IQR falls back to Sturges (log2 8 + 1 = 4), clamped up to 10.
    let spiky = [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 100.0];
    assert_eq!(
        HistogramBins::for_values(&spiky).map(|bins| bins.count),
        Some(HISTOGRAM_MIN_BINS)
    );
}

#[test]
fn a_single_distinct_value_sits_in_the_middle_bin() {
    let bins = HistogramBins::for_values(&[250.0, 250.0]).expect("bins");
    assert_eq!(bins.count, 11);
    assert_eq!(bins.bin_of(250.0), 5);
    assert!((bins.center(5) - 250.0).abs() < 1e-9);
}

#[test]
fn histogram_axes_round_outward_to_a_nice_step() {
    assert_eq!(nice_extent(59.49, 8157.3), (0.0, 10_000.0));
    assert_eq!(nice_extent(1418.3, 10_017.0), (0.0, 12_000.0));
    assert_eq!(nice_extent(4.01, 4.63), (4.0, 4.8));
    assert_eq!(nice_extent(7.0, 7.0), (7.0, 7.0));
    let (low, high) = nice_extent(216.2, 249.7);
    assert!(low <= 216.2 && high >= 249.7 && (high - low) <= 2.0 * (249.7 - 216.2));
}

#[test]
fn cdf_ranks_keep_both_ends_and_stay_bounded() {
    assert_eq!(cdf_ranks(3), [0, 1, 2]);
    let ranks = cdf_ranks(10_000);
    assert_eq!(ranks.len(), CDF_MAX_POINTS);
    assert_eq!((ranks[0], ranks[CDF_MAX_POINTS - 1]), (0, 9_999));
    assert!(ranks.windows(2).all(|pair| pair[0] < pair[1]));
}

#[test]
fn histogram_counts_every_value_once_and_shares_sum_to_100() {
    let first = [1.0, 2.0, 2.5, 9.0];
    let second = [3.0, 4.0];
    let single = distribution_histogram(&[("a", &first)], MetricKind::E2e, ChartTheme::LIGHT);
    let counted: f64 = points(&single["series"][0]).iter().map(|p| p.1).sum();
    assert_eq!(counted, first.len() as f64);
    assert_eq!(single["yAxis"]["name"], "Requests");

    let both = distribution_histogram(
        &[("a", &first), ("b", &second)],
        MetricKind::E2e,
        ChartTheme::LIGHT,
    );
    for series in both["series"].as_array().expect("series") {
        let share: f64 = points(series).iter().map(|p| p.1).sum();
        assert!((share - 100.0).abs() < 1e-9, "{share}");
    }
    // Both runs use the same bins.
    let centers = |series: &Value| points(series).iter().map(|p| p.0).collect::<Vec<_>>();
    assert_eq!(centers(&both["series"][0]), centers(&both["series"][1]));
}

#[test]
fn throughput_buckets_conserve_tokens_and_request_time() {
    let rows = [
        row(0, 0.0, 100.0, 150.0, 1000.0, 90),
        row(1, 200.0, 50.0, 50.0, 2200.0, 300),
        row(2, 1500.0, 10.0, 20.0, 20.0, 7),
    ];
    let option = throughput_over_time(&rows, ChartTheme::LIGHT);
    let rate = points(&option["series"][0]);
    let in_flight = points(&option["series"][1]);
    assert_eq!(rate.len(), THROUGHPUT_MIN_BUCKETS);
    let width_ms = 2400.0 / THROUGHPUT_MIN_BUCKETS as f64;
    let tokens: f64 = rate.iter().map(|p| p.1 * width_ms / 1000.0).sum();
    assert!((tokens - 397.0).abs() < 1e-9, "{tokens}");
    let open_ms: f64 = in_flight.iter().map(|p| p.1 * width_ms).sum();
    assert!(
        (open_ms - (1000.0 + 2200.0 + 20.0)).abs() < 1e-9,
        "{open_ms}"
    );
    assert!(
        in_flight.iter().all(|p| p.1 <= 2.0 + 1e-12),
        "at most two overlap"
    );
}

#[test]
fn traced_rows_give_a_gap_distribution_and_their_longest_stalls() {
    let traced = |index: u64, gaps: &[f64]| RowView {
        read_gaps_ms: gaps.to_vec(),
        ..row(index, index as f64 * 100.0, 20.0, 30.0, 200.0, 10)
    };
    let rows = vec![
        traced(0, &[10.0, 12.0, 11.0]),
        row(1, 100.0, 20.0, 30.0, 200.0, 10),
        traced(2, &[9.0, 250.0, 10.0]),
    ];
    let gaps = read_gap_cdf(&rows, ChartTheme::default());
    assert_eq!(
        gaps.pointer("/title/0/subtext")
            .or_else(|| gaps.pointer("/title/subtext")),
        Some(&json!(
            "6 gaps over 2 traced requests · share of gaps at or below each value · dashed \
             lines: p50, p95, p99"
        ))
    );
    let line = points(&gaps["series"][0]);
    assert_eq!(line.first(), Some(&(9.0, 0.0)));
    assert_eq!(line.last(), Some(&(250.0, 100.0)));

    let stalls = longest_stalls(&rows, ChartTheme::default());
    let subtitle = stalls
        .pointer("/title/0/subtext")
        .or_else(|| stalls.pointer("/title/subtext"))
        .and_then(Value::as_str)
        .unwrap_or_default();
    assert_eq!(
        subtitle,
        "2 traced requests · the worst: 250 ms (request 2)"
    );
    let stall_points: Vec<Value> = stalls["series"][0]["data"]
        .as_array()
        .map(|data| data.iter().map(|point| point["value"].clone()).collect())
        .unwrap_or_default();
    assert_eq!(stall_points, vec![json!([0.0, 12.0]), json!([2.0, 250.0])]);
    assert_eq!(
        stalls["series"][0]["data"][1]["name"],
        json!("request 2: 250 ms")
    );

    let untraced = [row(0, 0.0, 1.0, 2.0, 3.0, 4)];
    for empty in [
        read_gap_cdf(&untraced, ChartTheme::default()),
        longest_stalls(&untraced, ChartTheme::default()),
    ] {
        assert!(
            empty.to_string().contains("turn Chunk traces on"),
            "{empty}"
        );
    }
}

#[test]
fn throughput_without_start_times_explains_itself() {
    let mut legacy = row(0, 0.0, 1.0, 2.0, 3.0, 4);
    legacy.started_at_ms = None;
    let option = throughput_over_time(&[legacy], ChartTheme::DARK);
    let subtext = option["title"][0]["subtext"].as_str().unwrap_or_default();
    assert!(subtext.contains("started_at_ms"), "{subtext}");
}

#[test]
fn timeline_splits_each_request_into_its_phases() {
    let rows = [
        row(0, 0.0, 100.0, 400.0, 900.0, 10),
        row(1, 500.0, 300.0, 300.0, 800.0, 10),
    ];
    let failure = FailureView {
        request_index: Some(2),
        elapsed_ms: Some(50.0),
        ..FailureView::default()
    };
    let option = timeline(&rows, &[failure], ChartTheme::LIGHT);
    let names: Vec<&str> = option["series"]
        .as_array()
        .expect("series")
        .iter()
        .filter_map(|series| series["name"].as_str())
        .collect();
    assert_eq!(
        names,
        [
            "To first output (TTFO)",
            "Reasoning (to TTFT)",
            "Content (to end)",
            "End",
            "Failure (start not recorded)",
        ]
    );
    // On the run clock, in seconds: request 1 waits from 0.5 s to 0.8 s.
    assert_eq!(
        points(&option["series"][0]),
        [(0.0, 0.0), (0.1, 0.0), (0.5, 1.0), (0.8, 1.0)]
    );
    // Only request 0 reasoned (TTFT > TTFO).
    assert_eq!(points(&option["series"][1]), [(0.1, 0.0), (0.4, 0.0)]);
    // The y axis is the request index, first request on top.
    let y_axis = &option["yAxis"];
    assert_eq!(
        (
            &y_axis["type"],
            &y_axis["min"],
            &y_axis["max"],
            &y_axis["inverse"]
        ),
        (&json!("value"), &json!(0.0), &json!(2.0), &json!(true))
    );
    assert_eq!(option["xAxis"]["name"], "Time since run start (s)");
    let subtext = option["title"][0]["subtext"].as_str().unwrap_or_default();
    assert!(!subtext.contains("sampled"), "{subtext}");
}

/// 10,000 completed requests (a quarter with prefix-cache hits, the rest misses) and
/// `failures` failed ones after them.
fn big_run(failures: u64) -> (Vec<RowView>, Vec<FailureView>) {
    let rows = (0..10_000u64)
        .map(|index| RowView {
            prompt_tokens: Some(1000 + index % 7),
            cached_tokens: Some(if index % 4 == 0 { 500 } else { 0 }),
            prefill_tok_s: Some(5000.0 + index as f64),
            ..row(index, index as f64 * 10.0, 50.0, 80.0, 400.0, 20)
        })
        .collect();
    let failures = (0..failures)
        .map(|offset| FailureView {
            request_index: Some(10_000 + offset),
            started_at_ms: Some(100_000.0 + offset as f64),
            elapsed_ms: Some(5.0),
            ..FailureView::default()
        })
        .collect();
    (rows, failures)
}

/// The y values (request indexes) of a series' points, plain or named.
fn requests_drawn(series: &Value) -> BTreeSet<u64> {
    series["data"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|point| point.get("value").unwrap_or(point)[1].as_f64())
        .map(|y| y as u64)
        .collect()
}

#[test]
fn a_long_timeline_draws_an_even_sample_says_so_and_keeps_every_failure() {
    let (rows, failures) = big_run(3);
    let option = timeline(&rows, &failures, ChartTheme::LIGHT);
    let series = option["series"].as_array().expect("series");
    let waiting = requests_drawn(&series[0]);
    assert_eq!(waiting.len(), SAMPLED_CHART_MAX_REQUESTS);
    // First and last request included.
    assert_eq!(waiting.first(), Some(&0));
    assert_eq!(waiting.last(), Some(&9_999));
    let gaps: BTreeSet<u64> = waiting
        .iter()
        .zip(waiting.iter().skip(1))
        .map(|(a, b)| b - a)
        .collect();
    // Ranks step by 9,999 / 1,999 ≈ 5.002: gaps of 5, now and then 6.
    assert_eq!(gaps, BTreeSet::from([5, 6]), "even spacing");
    let failure_marks = series
        .iter()
        .find(|series| series["name"] == "Failure")
        .expect("failure marks");
    assert_eq!(
        requests_drawn(failure_marks),
        BTreeSet::from([10_000, 10_001, 10_002])
    );
    let subtext = option["title"][0]["subtext"].as_str().unwrap_or_default();
    assert!(
        subtext.starts_with("10,003 requests, 3 failed"),
        "{subtext}"
    );
    assert!(
        subtext.contains(
            "\nshowing 2,000 of 10,000 completed requests, evenly sampled by index; \
             every failure is drawn"
        ),
        "{subtext}"
    );
    let ends = series
        .iter()
        .find(|series| series["name"] == "End")
        .expect("ends");
    assert_eq!(ends["large"], true, "2,000 end marks draw as one path");
    assert_eq!(option["yAxis"]["max"], 10_002.0);
}

#[test]
fn a_big_context_scatter_draws_a_sample_but_counts_every_row() {
    let (rows, _) = big_run(0);
    let option = context_scatter(&rows, ChartTheme::LIGHT);
    let series = option["series"].as_array().expect("series");
    let drawn_in_panel = |panel: f64| -> usize {
        series
            .iter()
            .filter(|series| series["xAxisIndex"].as_f64() == Some(panel))
            .map(|series| points(series).len())
            .sum()
    };
    assert_eq!(drawn_in_panel(0.0), SAMPLED_CHART_MAX_REQUESTS);
    assert_eq!(drawn_in_panel(1.0), SAMPLED_CHART_MAX_REQUESTS);
    assert!(series
        .iter()
        .all(|series| series["large"] == true || points(series).len() <= SCATTER_LARGE_THRESHOLD));
    let subtext = option["title"][0]["subtext"].as_str().unwrap_or_default();
    assert!(
        subtext.starts_with("10,000 requests, 2,500 with prefix-cache hits"),
        "{subtext}"
    );
    assert!(
        subtext.ends_with("\nshowing 2,000 of 10,000 requests, evenly sampled by index"),
        "{subtext}"
    );

    let small = context_scatter(&rows[..SAMPLED_CHART_MAX_REQUESTS], ChartTheme::LIGHT);
    let subtext = small["title"][0]["subtext"].as_str().unwrap_or_default();
    assert!(!subtext.contains("sampled"), "{subtext}");
    assert!(
        small["series"][0].get("large").is_some(),
        "1,500 misses still draw large"
    );
}

#[test]
fn distributions_are_drawn_from_every_value() {
    // Values 1..=10,000 shuffled by a fixed stride: nothing about them is sampled.
    let values: Vec<f64> = (0..10_000u64)
        .map(|i| ((i * 7_919) % 10_000 + 1) as f64)
        .collect();
    let histogram = distribution_histogram(&[("run", &values)], MetricKind::E2e, ChartTheme::LIGHT);
    let counted: f64 = points(&histogram["series"][0]).iter().map(|p| p.1).sum();
    assert_eq!(counted, 10_000.0);
    let cdf = distribution_cdf(&[("run", &values)], MetricKind::E2e, ChartTheme::LIGHT);
    let marks: Vec<f64> = cdf["series"][0]["markLine"]["data"]
        .as_array()
        .expect("marks")
        .iter()
        .filter_map(|mark| mark["xAxis"].as_f64())
        .collect();
    // Nearest rank over all 10,000 values: p50 is the 5,000th value, p95 the 9,500th and
    // p99 the 9,900th.
    assert_eq!(marks, [5_000.0, 9_500.0, 9_900.0]);
    let subtext = cdf["title"][0]["subtext"].as_str().unwrap_or_default();
    assert!(subtext.starts_with("10,000 requests"), "{subtext}");
}

#[test]
fn even_ranks_keep_both_ends_and_never_exceed_the_limit() {
    assert_eq!(even_ranks(0, 5), Vec::<usize>::new());
    assert_eq!(even_ranks(3, 5), [0, 1, 2]);
    assert_eq!(even_ranks(10, 4), [0, 3, 6, 9]);
    assert_eq!(even_ranks(10, 1), [0]);
    assert_eq!(even_ranks(10, 0), Vec::<usize>::new());
}

#[test]
fn a_run_keeps_its_colour_when_an_earlier_run_has_nothing_to_draw() {
    let option = distribution_cdf(
        &[("legacy", &[]), ("modern", &[5.0, 6.0])],
        MetricKind::Ttft,
        ChartTheme::LIGHT,
    );
    let series = option["series"].as_array().expect("series");
    assert_eq!(series.len(), 1);
    assert_eq!(series[0]["name"], "modern");
    assert_eq!(
        series[0]["itemStyle"]["color"],
        ChartTheme::LIGHT.series_color(1)
    );
    let subtext = option["title"][0]["subtext"].as_str().unwrap_or_default();
    assert!(subtext.starts_with("1 of 2 runs"), "{subtext}");
}

#[test]
fn labels_are_capped_and_made_distinct() {
    let long = "n".repeat(LABEL_MAX_CHARS + 10);
    let labels = distinct_labels(&["a".to_owned(), "a".to_owned(), long, "b".to_owned()]);
    assert_eq!(labels[0], "a");
    assert_eq!(labels[1], "a (2)");
    assert_eq!(
        labels[2].chars().count(),
        LABEL_MAX_CHARS + 1,
        "cap plus the ellipsis"
    );
    assert_eq!(labels[3], "b");
}

#[test]
fn themes_differ_in_colour_only() {
    let values = [1.0, 2.0, 3.0];
    let light = distribution_cdf(&[("a", &values)], MetricKind::Ttft, ChartTheme::LIGHT);
    let dark = distribution_cdf(&[("a", &values)], MetricKind::Ttft, ChartTheme::DARK);
    assert_ne!(light["textStyle"], dark["textStyle"]);
    assert_ne!(light["color"], dark["color"]);
    assert_eq!(light["series"][0]["data"], dark["series"][0]["data"]);
    assert_eq!(
        ChartTheme::DARK.series_color(6),
        ChartTheme::DARK.series_color(0)
    );
}

/// A G3 artifact of four requests a second apart: TTFO and TTFT 100, 200, 300, 400 ms, E2E
/// 1000 ms each, and `tpot_ms` when given.
fn four_request_run(tpot_ms: Option<f64>) -> OpenedArtifact {
    let rows: Vec<Value> = (0..4)
        .map(|i| {
            let mut row = json!({
                "request_index": i,
                "started_at_ms": 1000.0 * i as f64,
                "prompt_tokens": 1000,
                "output_tokens": 10,
                "time_to_first_output_ms": 100.0 * (i + 1) as f64,
                "ttft_ms": 100.0 * (i + 1) as f64,
                "e2e_ms": 1000.0,
            });
            if let Some(tpot) = tpot_ms {
                row["tpot_ms"] = json!(tpot);
            }
            row
        })
        .collect();
    let text = json!({ "measurement_protocol": "capacity-v3", "request_timings": rows });
    OpenedArtifact::from_text("t.json", &text.to_string())
}

#[test]
fn an_slo_draws_its_bounds_and_marks_the_requests_that_miss_it() {
    use crate::core::config::slo::Slo;
    // Four requests: TTFT 100, 200, 300, 400 ms; E2E 1000 ms each.
    let run = four_request_run(Some(5.0));
    assert_eq!(run.rows.len(), 4);
    let rows = run.rows.clone();
    let mut charts = artifact_charts(&run, ChartTheme::LIGHT);
    let slo: Slo = "ttft:250,e2el:5000".parse().expect("valid");
    overlay_slo(&mut charts, &slo, Some(&rows), ChartTheme::LIGHT);
    let chart = |id: &str| {
        charts
            .iter()
            .find(|chart| chart.id == id)
            .unwrap_or_else(|| panic!("{id} drawn"))
    };
    let series_named = |id: &str, name: &str| -> Vec<Value> {
        chart(id).option["series"]
            .as_array()
            .expect("series")
            .iter()
            .filter(|series| series["name"] == name)
            .cloned()
            .collect()
    };
    for id in ["hist-ttft", "cdf-ttft"] {
        let lines = series_named(id, SLO_THRESHOLD_SERIES);
        assert_eq!(lines.len(), 1, "{id}");
        assert_eq!(lines[0]["markLine"]["data"][0]["xAxis"], 250.0, "{id}");
        assert_eq!(lines[0]["markLine"]["label"]["formatter"], "SLO ≤ 250 ms");
    }
    // E2E is bounded at 5000 ms, beyond the histogram's bins: its axis reaches the line.
    assert_eq!(series_named("hist-e2e", SLO_THRESHOLD_SERIES).len(), 1);
    assert!(chart("hist-e2e").option["xAxis"]["max"].as_f64() >= Some(5000.0));
    assert!(
        series_named("hist-tpot", SLO_THRESHOLD_SERIES).is_empty(),
        "TPOT is not bounded"
    );
    // Requests 2 and 3 (TTFT 300, 400) miss: ringed at their ends (2 s + 1 s, 3 s + 1 s) and at
    // their (prompt tokens, TTFO).
    let misses = series_named("timeline", SLO_MISS_SERIES);
    assert_eq!(points(&misses[0]), [(3.0, 2.0), (4.0, 3.0)]);
    let misses = series_named("context", SLO_MISS_SERIES);
    assert_eq!(points(&misses[0]), [(1000.0, 300.0), (1000.0, 400.0)]);
    // An SLO every request meets marks none.
    let mut charts = artifact_charts(&run, ChartTheme::LIGHT);
    overlay_slo(
        &mut charts,
        &"ttft:1000".parse().expect("valid"),
        Some(&rows),
        ChartTheme::LIGHT,
    );
    assert!(charts.iter().all(|chart| chart.option["series"]
        .as_array()
        .is_none_or(|all| all.iter().all(|series| series["name"] != SLO_MISS_SERIES))));
}

#[test]
fn subtitles_wrap_at_separators_then_at_spaces_and_never_lose_a_word() {
    let text = "6 gaps over 2 traced requests · share of gaps at or below each value · dashed lines: p50, p95, p99";
    assert_eq!(
        wrap_subtitle(text, 70),
        "6 gaps over 2 traced requests · share of gaps at or below each value\ndashed lines: p50, p95, p99"
    );
    assert_eq!(wrap_subtitle(text, 200), text, "a line that fits is kept");
    let narrow = wrap_subtitle(
        "showing 2,000 of 10,000 completed requests, evenly sampled by index",
        30,
    );
    assert_eq!(
        narrow,
        "showing 2,000 of 10,000\ncompleted requests, evenly\nsampled by index"
    );
    // Authored line breaks stay; a word longer than a line stays whole.
    assert_eq!(wrap_subtitle("a\nb", 10), "a\nb");
    assert_eq!(
        wrap_subtitle("supercalifragilistic", 5),
        "supercalifragilistic"
    );
    let words = |text: &str| {
        text.split([' ', '\n'])
            .filter(|word| !word.is_empty() && *word != "·")
            .map(str::to_owned)
            .collect::<Vec<_>>()
    };
    for width in [16, 30, 46, 80] {
        assert_eq!(
            words(&wrap_subtitle(text, width)),
            words(text),
            "width {width}"
        );
    }
}

#[test]
fn a_fitted_subtitle_moves_the_plot_down_by_its_extra_lines() {
    let rows: Vec<RowView> = (0..4)
        .map(|index| row(index, index as f64 * 10.0, 100.0, 120.0, 900.0, 20))
        .collect();
    let mut option = timeline(&rows, &[], ChartTheme::LIGHT);
    let top_before = option["grid"][0]["top"].as_i64().expect("grid top");
    let subtitle = option["title"][0]["subtext"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let lines = wrap_subtitle(&subtitle, 20).lines().count();
    assert!(lines > 2, "{subtitle}");
    fit_subtitle(&mut option, 20);
    let fitted = option["title"][0]["subtext"].as_str().unwrap_or_default();
    assert!(fitted
        .lines()
        .all(|line| line.chars().count() <= 20 || !line.contains(' ')));
    assert_eq!(
        option["grid"][0]["top"].as_i64(),
        Some(top_before + (lines as i64 - 2) * 16)
    );
    assert_eq!(subtitle_chars_for_width(350.0), SUBTITLE_LINE_CHARS);
    assert_eq!(subtitle_chars_for_width(f64::NAN), 16);
    assert_eq!(subtitle_chars_for_width(0.0), 16);
}

#[test]
fn a_legend_that_would_only_name_the_run_is_hidden() {
    let values = [100.0, 200.0, 300.0];
    let theme = ChartTheme::LIGHT;
    let mut one = distribution_cdf(&[("run.json", &values)], MetricKind::Ttft, theme);
    assert_ne!(
        one["legend"]["show"], false,
        "a comparison keeps every legend"
    );
    hide_single_entry_legend(&mut one);
    assert_eq!(one["legend"]["show"], false, "{}", one["legend"]);
    let runs = [("a.json", &values[..]), ("b.json", &values[..])];
    let mut two = distribution_cdf(&runs, MetricKind::Ttft, theme);
    hide_single_entry_legend(&mut two);
    assert_ne!(two["legend"]["show"], false);
}

#[test]
fn charts_group_by_the_question_they_answer() {
    let run = four_request_run(None);
    let charts = artifact_charts(&run, ChartTheme::LIGHT);
    let groups = group_charts(&charts);
    let sections: Vec<ChartSection> = groups.iter().map(|group| group.section).collect();
    assert_eq!(
        sections,
        [
            ChartSection::Latency,
            ChartSection::OverTheRun,
            ChartSection::PromptAndCache
        ]
    );
    let latency = &groups[0];
    assert_eq!(
        latency.metrics,
        [MetricKind::Ttfo, MetricKind::Ttft, MetricKind::E2e]
    );
    assert_eq!(latency.default_metric(), Some(MetricKind::Ttft));
    let ids = |positions: Vec<usize>| -> Vec<&str> {
        positions
            .into_iter()
            .map(|position| charts[position].id.as_str())
            .collect()
    };
    assert_eq!(ids(latency.positions_for(None)), ["hist-ttft", "cdf-ttft"]);
    assert_eq!(
        ids(latency.positions_for(Some(MetricKind::E2e))),
        ["hist-e2e", "cdf-e2e"]
    );
    assert_eq!(
        ids(latency.positions_for(Some(MetricKind::Decode))),
        ["hist-ttft", "cdf-ttft"],
        "a metric the run lacks shows the default"
    );
    assert_eq!(
        ids(groups[1].positions_for(None)),
        ["timeline", "throughput"]
    );
    assert!(groups[1].metrics.is_empty());
}
