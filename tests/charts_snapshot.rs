//! Snapshot tests of the chart options for the reference artifact, a G1 legacy artifact and
//! their comparison, plus safety checks over the options of every fixture.
//!
//! The snapshots live in `tests/fixtures/charts/`. After an intended change, rewrite them with
//! `UPDATE_SNAPSHOTS=1 cargo test -p strobe --test charts_snapshot` and read the diff: units
//! in axis names, `renderMode: "richText"`, no HTML anywhere.

mod common;

use std::collections::BTreeSet;
use std::fs;
use std::sync::OnceLock;

use common::{fixture_paths, repo_path};

use serde_json::{Map, Value};
use strobe::core::config::slo::Slo;
use strobe::core::present::capacity::{capacity_series, capacity_series_with_slo};
use strobe::core::present::charts::legacy_percentiles_bar;
use strobe::core::present::charts::timeline;
use strobe::core::present::charts::{artifact_charts, comparison_charts};
use strobe::core::present::charts::{attainment_curve, goodput_curve, overlay_slo};
use strobe::core::present::charts::{capacity_curve, offered_vs_achieved, pareto, CapacityAxis};
use strobe::core::present::charts::{distribution_cdf, distribution_histogram};
use strobe::core::present::charts::{fit_subtitle, ChartTheme, NamedChart, SUBTITLE_LINE_CHARS};
use strobe::core::read::opened::metrics::{MetricKind, MetricStat};
use strobe::core::read::opened::views::FailureView;
use strobe::core::read::opened::OpenedArtifact;

const REFERENCE: &str = "tests/fixtures/reference-artifact.json";
const LEGACY_G1: &str =
    "tests/fixtures/real/2026-07-16-gemma4-vllm0251-wsl2__control-fast-c128-ctx1024.json";

fn load(relative: &str) -> OpenedArtifact {
    let path = repo_path(relative);
    let bytes = fs::read(&path).unwrap_or_else(|error| panic!("read {}: {error}", path.display()));
    let file_name = path
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default();
    OpenedArtifact::from_bytes(&file_name, &bytes)
}

fn charts_object(charts: &[NamedChart]) -> Value {
    let mut object = Map::new();
    for chart in charts {
        object.insert(chart.id.clone(), chart.option.clone());
    }
    Value::Object(object)
}

/// Compares `actual` with the committed snapshot, or rewrites it under `UPDATE_SNAPSHOTS=1`.
fn assert_snapshot(name: &str, actual: &Value) {
    let path = repo_path(&format!("tests/fixtures/charts/{name}.json"));
    if std::env::var("UPDATE_SNAPSHOTS").is_ok_and(|value| value == "1") {
        let mut text = serde_json::to_string_pretty(actual).expect("options serialize");
        text.push('\n');
        fs::write(&path, text).unwrap_or_else(|error| panic!("write {}: {error}", path.display()));
        return;
    }
    let text = fs::read_to_string(&path).unwrap_or_else(|error| {
        panic!(
            "read {}: {error}; create it with UPDATE_SNAPSHOTS=1",
            path.display()
        )
    });
    let expected: Value = serde_json::from_str(&text).expect("snapshot is JSON");
    if &expected != actual {
        let actual_text = serde_json::to_string_pretty(actual).unwrap_or_default();
        let first_difference = text
            .lines()
            .zip(actual_text.lines())
            .position(|(expected, actual)| expected != actual);
        panic!(
            "chart options differ from {} (first differing line: {:?}); if the change is \
             intended, rerun with UPDATE_SNAPSHOTS=1 and review the diff",
            path.display(),
            first_difference.map(|line| line + 1)
        );
    }
}

#[test]
fn reference_artifact_charts_match_snapshot() {
    let reference = load(REFERENCE);
    let charts = artifact_charts(&reference, ChartTheme::LIGHT);
    let ids: Vec<&str> = charts.iter().map(|chart| chart.id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "hist-ttfo",
            "cdf-ttfo",
            "hist-ttft",
            "cdf-ttft",
            "hist-e2e",
            "cdf-e2e",
            "hist-tpot",
            "cdf-tpot",
            "hist-decode",
            "cdf-decode",
            "timeline",
            "throughput",
            "context",
        ]
    );
    assert_snapshot("reference", &charts_object(&charts));
}

#[test]
fn legacy_g1_artifact_charts_match_snapshot() {
    let legacy = load(LEGACY_G1);
    assert!(!legacy.has_rows());
    let charts = artifact_charts(&legacy, ChartTheme::LIGHT);
    assert_eq!(charts.len(), 1, "a G1 artifact has only its p50/p95 bars");
    assert_snapshot("legacy-g1", &charts_object(&charts));
}

#[test]
fn comparison_charts_match_snapshot_in_dark_mode() {
    let reference = load(REFERENCE);
    let legacy = load(LEGACY_G1);
    let charts = comparison_charts(&[&reference, &legacy], ChartTheme::DARK);
    assert_snapshot("compare-reference-legacy-dark", &charts_object(&charts));
}

#[test]
fn reference_cdf_marks_the_artifacts_own_percentiles() {
    // The dashed p50/p95/p99 lines must sit exactly on the nearest-rank values the artifact
    // states in its metrics (ARTIFACT.md §7.1), e.g. ttft_p50_ms = 8953.168000000005.
    let reference = load(REFERENCE);
    let option = distribution_cdf(
        &[("reference", &MetricKind::Ttft.values(&reference.rows))],
        MetricKind::Ttft,
        ChartTheme::LIGHT,
    );
    let marks: Vec<(String, f64)> = option["series"][0]["markLine"]["data"]
        .as_array()
        .expect("markLine data")
        .iter()
        .filter_map(|mark| Some((mark["name"].as_str()?.to_owned(), mark["xAxis"].as_f64()?)))
        .collect();
    let stated = &reference.metrics.ttft;
    // With 6 requests p95 and p99 are the same (largest) value, so they share one line.
    assert_eq!(stated.p95, stated.p99);
    assert_eq!(
        marks,
        [
            ("p50 8953 ms".to_owned(), stated.p50.expect("p50")),
            ("p95/p99 10017 ms".to_owned(), stated.p95.expect("p95")),
        ]
    );
    // The last CDF point is the largest value at 100 %.
    let points = option["series"][0]["data"].as_array().expect("data");
    assert_eq!(points.len(), 7, "a start point at 0 % plus one per request");
    let last = points.last().expect("a point");
    assert_eq!(last[0].as_f64(), reference.metrics.ttft.p99);
    assert_eq!(last[1].as_f64(), Some(100.0));
}

#[test]
fn empty_inputs_give_no_data_options_instead_of_panicking() {
    let theme = ChartTheme::LIGHT;
    let options = [
        distribution_histogram(&[], MetricKind::Ttft, theme),
        distribution_histogram(&[("empty", &[])], MetricKind::Ttft, theme),
        distribution_histogram(
            &[("nan", &[f64::NAN, f64::INFINITY])],
            MetricKind::E2e,
            theme,
        ),
        distribution_cdf(&[], MetricKind::Decode, theme),
        timeline(&[], &[], theme),
        strobe::core::present::charts::context_scatter(&[], theme),
        strobe::core::present::charts::throughput_over_time(&[], theme),
        legacy_percentiles_bar(&[], theme),
    ];
    for option in &options {
        let subtext = option["title"]["subtext"]
            .as_str()
            .or_else(|| option["title"][0]["subtext"].as_str())
            .unwrap_or_default();
        assert!(subtext.starts_with("No data: "), "{option}");
        assert!(option.get("series").is_none(), "{option}");
        assert_safe_option("empty", option);
    }
}

#[test]
fn hostile_text_reaches_charts_only_as_canvas_data() {
    let hostile = "<img src=x onerror=alert(1)>";
    let failure = FailureView {
        request_index: Some(0),
        failure_class: Some(strobe::core::read::opened::text::CappedText::new(hostile)),
        elapsed_ms: Some(12.5),
        ..FailureView::default()
    };
    let option = timeline(&[], &[failure], ChartTheme::DARK);
    let text = option.to_string();
    // Kept verbatim (canvas text shows it literally); never inside a formatter.
    assert!(text.contains(&format!("request 0: {hostile}")), "{text}");
    assert_safe_option("timeline", &option);

    let histogram = distribution_histogram(
        &[(hostile, &[1.0, 2.0, 3.0])],
        MetricKind::Ttft,
        ChartTheme::LIGHT,
    );
    assert_eq!(histogram["series"][0]["name"], hostile);
    assert_safe_option("histogram", &histogram);
}

/// Every option of every fixture (and of a comparison of all of them) is safe and complete.
#[test]
fn every_fixture_option_is_safe_and_labelled() {
    let runs: Vec<OpenedArtifact> = fixture_paths()
        .iter()
        .map(|path| {
            let relative = path
                .strip_prefix(env!("CARGO_MANIFEST_DIR"))
                .expect("inside the repository")
                .to_string_lossy()
                .into_owned();
            load(&relative)
        })
        .collect();
    assert!(runs.len() >= 20, "all fixtures were found");
    let slo: Slo = "ttfo:900,ttft:1000,tpot:10,e2el:5000"
        .parse()
        .expect("valid");
    for theme in [ChartTheme::LIGHT, ChartTheme::DARK] {
        for run in &runs {
            let mut charts = artifact_charts(run, theme);
            for chart in &charts {
                let context = format!("{} {}", run.label(), chart.id);
                assert_safe_option(&context, &chart.option);
                assert_legend_tells_series_apart(&context, &chart.option);
            }
            overlay_slo(&mut charts, &slo, Some(&run.rows), theme);
            for chart in &charts {
                assert_safe_option(
                    &format!("{} {} + SLO", run.label(), chart.id),
                    &chart.option,
                );
            }
        }
        let all: Vec<&OpenedArtifact> = runs.iter().collect();
        let mut charts = comparison_charts(&all, theme);
        overlay_slo(&mut charts, &slo, None, theme);
        for chart in &charts {
            assert_safe_option(&chart.id, &chart.option);
        }
        let series = capacity_series_with_slo(&all, Some(&slo));
        for axis in [CapacityAxis::Tokens, CapacityAxis::Requests] {
            assert_safe_option("goodput", &goodput_curve(&series, axis, theme));
        }
        assert_safe_option("attainment", &attainment_curve(&series, 0.95, theme));
    }
}

/// One run's chart shows a legend only when it tells two or more series apart: a single entry
/// would repeat the run's name, which the page shows above its charts.
fn assert_legend_tells_series_apart(context: &str, option: &Value) {
    if option["legend"]["show"] != false {
        let mut names: Vec<&str> = option["series"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|series| series["name"].as_str())
            .collect();
        names.sort_unstable();
        names.dedup();
        assert!(
            names.len() > 1,
            "{context}: a legend of {names:?} only repeats the run's name"
        );
    }
}

/// The safety and completeness rules every option must follow.
fn assert_safe_option(context: &str, option: &Value) {
    assert_drawable_by_the_bundle(context, option);
    assert_eq!(option["animation"], false, "{context}: animation off");
    assert_eq!(
        option["tooltip"]["renderMode"], "richText",
        "{context}: tooltip must render as canvas text"
    );
    assert_eq!(
        option["toolbox"]["feature"]["saveAsImage"]["type"], "png",
        "{context}: PNG export"
    );
    let title = option["title"]["text"]
        .as_str()
        .or_else(|| option["title"][0]["text"].as_str());
    assert!(
        title.is_some_and(|title| !title.is_empty()),
        "{context}: a title"
    );
    // As the page draws it on the narrowest chart: wrapped, the plot moved down to make room.
    let mut fitted = option.clone();
    fit_subtitle(&mut fitted, SUBTITLE_LINE_CHARS);
    let subtitle = fitted["title"]["subtext"]
        .as_str()
        .or_else(|| fitted["title"][0]["subtext"].as_str())
        .unwrap_or_default();
    for line in subtitle.lines() {
        assert!(
            line.chars().count() <= SUBTITLE_LINE_CHARS || !line.contains(' '),
            "{context}: subtitle line {line:?} is wrapped, not cut at the card's edge"
        );
    }
    for axis_key in ["xAxis", "yAxis"] {
        let axes: Vec<&Value> = match &option[axis_key] {
            Value::Array(axes) => axes.iter().collect(),
            Value::Null => Vec::new(),
            axis => vec![axis],
        };
        for axis in axes {
            let name = axis["name"].as_str().unwrap_or_default();
            assert!(!name.is_empty(), "{context}: every axis is named");
            assert_eq!(
                axis["axisLabel"]["hideOverlap"], true,
                "{context}: tick labels never overlap"
            );
        }
    }
    walk(option, &mut |key, value| {
        if key == Some("formatter") {
            let formatter = value.as_str().unwrap_or_default();
            assert!(
                !formatter.contains('<'),
                "{context}: formatter {formatter:?} could carry HTML"
            );
        }
        if key == Some("tooltip") {
            assert_eq!(value["renderMode"], "richText", "{context}: nested tooltip");
        }
        if let Value::Number(number) = value {
            assert!(
                number.as_f64().is_some_and(f64::is_finite),
                "{context}: finite numbers"
            );
        }
    });
}

/// What the shipped ECharts registers: the names in `echarts.use([…])` of
/// scripts/echarts/entry.mjs, the bundle the page loads.
fn bundled_echarts_parts() -> &'static BTreeSet<String> {
    static PARTS: OnceLock<BTreeSet<String>> = OnceLock::new();
    PARTS.get_or_init(|| {
        let entry = fs::read_to_string(repo_path("scripts/echarts/entry.mjs"))
            .expect("scripts/echarts/entry.mjs");
        let list = entry
            .split("echarts.use([")
            .nth(1)
            .and_then(|rest| rest.split("])").next())
            .expect("entry.mjs registers its parts with echarts.use([…])");
        list.split(',')
            .map(|name| name.trim().to_owned())
            .filter(|name| !name.is_empty())
            .collect()
    })
}

/// Every series type, component and mark an option uses is registered by the bundle: ECharts
/// built from modules draws nothing for an unregistered one (only a console error says so).
fn assert_drawable_by_the_bundle(context: &str, option: &Value) {
    let parts = bundled_echarts_parts();
    let need = |part: &str, why: &str| {
        assert!(
            parts.contains(part),
            "{context}: {why} needs {part}; add it to echarts.use in scripts/echarts/entry.mjs"
        );
    };
    let Some(object) = option.as_object() else {
        return;
    };
    need("CanvasRenderer", "drawing");
    for (key, value) in object {
        match key.as_str() {
            "animation" | "backgroundColor" | "color" | "textStyle" | "series" => {}
            "title" => need("TitleComponent", "title"),
            "legend" => need("LegendComponent", "legend"),
            "tooltip" => need("TooltipComponent", "tooltip"),
            "toolbox" => need("ToolboxComponent", "toolbox"),
            "grid" | "xAxis" | "yAxis" => need("GridComponent", key),
            "dataZoom" => {
                let zooms: Vec<&Value> = match value {
                    Value::Array(zooms) => zooms.iter().collect(),
                    zoom => vec![zoom],
                };
                for zoom in zooms {
                    match zoom["type"].as_str() {
                        Some("inside") => need("DataZoomInsideComponent", "an inside dataZoom"),
                        other => need("DataZoomSliderComponent", &format!("dataZoom {other:?}")),
                    }
                }
            }
            other => panic!(
                "{context}: option key {other:?} is not known to be drawable by the bundle; \
                 register its component in scripts/echarts/entry.mjs and name it here"
            ),
        }
    }
    for series in option["series"].as_array().into_iter().flatten() {
        let kind = series["type"].as_str().unwrap_or("line");
        let chart = format!("{}{}Chart", kind[..1].to_uppercase(), &kind[1..]);
        need(&chart, &format!("a {kind} series"));
        for (mark, component) in [
            ("markLine", "MarkLineComponent"),
            ("markArea", "MarkAreaComponent"),
            ("markPoint", "MarkPointComponent"),
        ] {
            if series.get(mark).is_some() {
                need(component, mark);
            }
        }
    }
}

fn walk(value: &Value, visit: &mut dyn FnMut(Option<&str>, &Value)) {
    match value {
        Value::Object(object) => {
            for (key, child) in object {
                visit(Some(key), child);
                walk(child, visit);
            }
        }
        Value::Array(items) => {
            for item in items {
                visit(None, item);
                walk(item, visit);
            }
        }
        _ => {}
    }
}

/// Four closed-loop steps of one sweep, the knee at concurrency 4, and two rate steps of another
/// (the second saturated): the runs the capacity view is snapshot-tested on.
fn capacity_runs() -> Vec<OpenedArtifact> {
    let closed = |concurrency: u64, ttft_p95: f64, tokens: u64| {
        OpenedArtifact::from_text(
            &format!("c{concurrency}.json"),
            &format!(
                r#"{{"concurrency": {concurrency}, "completed": 32, "wall_clock_ms": 4000,
                    "metrics": {{"output_tokens": {tokens}, "ttfo_p50_ms": 20,
                    "ttft_p50_ms": {}, "ttft_p95_ms": {ttft_p95}, "e2e_p95_ms": {},
                    "decode_tok_s_p50": {}}},
                    "sweep": {{"id": "sweep-20261201T120000Z", "step_index": 0, "step_count": 4,
                    "variable": "concurrency", "value": {concurrency}}}}}"#,
                ttft_p95 / 2.0,
                ttft_p95 + 600.0,
                400.0 / concurrency as f64
            ),
        )
    };
    let rate = |rate: f64, completed: u64| {
        OpenedArtifact::from_text(
            &format!("r{rate}.json"),
            &format!(
                r#"{{"concurrency": 16, "completed": {completed}, "wall_clock_ms": 1000,
                    "metrics": {{"output_tokens": {}, "ttft_p95_ms": {}, "decode_tok_s_p50": 50}},
                    "load": {{"mode": "rate", "rate": {rate}, "offered_rate": {rate}}},
                    "sweep": {{"id": "sweep-rates", "variable": "rate", "value": {rate}}}}}"#,
                completed * 64,
                completed * 10
            ),
        )
    };
    vec![
        closed(1, 40.0, 2048),
        closed(2, 42.0, 4096),
        closed(4, 45.0, 8192),
        closed(8, 900.0, 8192),
        rate(5.0, 5),
        rate(20.0, 12),
    ]
}

#[test]
fn capacity_charts_match_snapshot() {
    let runs = capacity_runs();
    let refs: Vec<&OpenedArtifact> = runs.iter().collect();
    let series = capacity_series(&refs);
    assert_eq!(series.len(), 2, "one curve per sweep");
    let mut charts = Map::new();
    for theme in [ChartTheme::LIGHT, ChartTheme::DARK] {
        let options = [
            (
                "curve-ttft-p95",
                capacity_curve(
                    &series,
                    MetricKind::Ttft,
                    MetricStat::P95,
                    CapacityAxis::Tokens,
                    theme,
                ),
            ),
            (
                "curve-e2e-p95-requests",
                capacity_curve(
                    &series,
                    MetricKind::E2e,
                    MetricStat::P95,
                    CapacityAxis::Requests,
                    theme,
                ),
            ),
            ("offered-achieved", offered_vs_achieved(&series, theme)),
            ("pareto", pareto(&series, theme)),
        ];
        for (id, option) in options {
            assert_safe_option(id, &option);
            if theme == ChartTheme::LIGHT {
                charts.insert(id.to_owned(), option);
            }
        }
    }
    assert_snapshot("capacity", &Value::Object(charts));
}
