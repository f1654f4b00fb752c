//! Loading, validating and charting an artifact with 10,000 request rows must take well under a
//! second. This benchmark builds such an artifact through the real pipeline (stream
//! accumulator → `conclude_request` → `build_artifact`), serializes it, then times each stage
//! of what the results page does with a dropped file: `OpenedArtifact::from_text`, every chart
//! function, the comparison, both exports, and an SLO applied afterwards. It prints the best
//! and the median of 5 runs.
//!
//! Run with `cargo bench --bench load_10k`. Set `STROBE_BENCH_DUMP=DIR` to also write the
//! artifact and its chart options there for a look in a browser.

#[path = "common/synthetic.rs"]
mod synthetic;
#[path = "common/timing.rs"]
mod timing;

use serde_json::Value;
use strobe::core::config::slo::Slo;
use strobe::core::present::charts::overlay_slo;
use strobe::core::present::charts::throughput_over_time;
use strobe::core::present::charts::{artifact_charts, comparison_charts};
use strobe::core::present::charts::{context_scatter, timeline};
use strobe::core::present::charts::{distribution_cdf, distribution_histogram};
use strobe::core::present::charts::{ChartTheme, DISTRIBUTION_CHART_METRICS};
use strobe::core::present::compare::compare;
use strobe::core::present::export::{rows_csv, rows_csv_with_slo, summary_markdown};
use strobe::core::read::opened::OpenedArtifact;
use strobe::core::read::validate::report::Verdict;
use strobe::core::read::validate::validate_artifact;
use strobe::core::slo::judge_opened;
use synthetic::synthetic_artifact_text;
use timing::time;

const REQUESTS: u64 = 10_000;

fn main() {
    let text = synthetic_artifact_text(REQUESTS);
    println!(
        "artifact: {REQUESTS} requests, {:.2} MiB of JSON",
        text.len() as f64 / (1024.0 * 1024.0)
    );

    let mut stages: Vec<(String, f64, f64)> = Vec::new();
    let (best, median, opened) = time(|| OpenedArtifact::from_text("bench-10k.json", &text));
    assert_eq!(opened.verdict(), Verdict::Valid, "{}", opened.report);
    assert!(opened.rows.len() > 9_800, "{} rows", opened.rows.len());
    stages.push(("load + validate (from_text)".to_owned(), best, median));

    // The parts of from_text, for context: the JSON parse and the validator's rules.
    let (best, median, value) = time(|| serde_json::from_str::<Value>(&text));
    stages.push(("  of which: JSON parse".to_owned(), best, median));
    let Ok(value) = value else {
        panic!("the benchmark artifact parses");
    };
    let (best, median, _) = time(|| validate_artifact(&value));
    stages.push(("  of which: validation rules".to_owned(), best, median));

    let theme = ChartTheme::LIGHT;
    let label = opened.label();
    for metric in DISTRIBUTION_CHART_METRICS {
        let values = metric.values(&opened.rows);
        let runs = [(label.as_str(), values.as_slice())];
        let (best, median, _) = time(|| distribution_histogram(&runs, metric, theme));
        stages.push((format!("histogram {}", metric.id()), best, median));
        let (best, median, _) = time(|| distribution_cdf(&runs, metric, theme));
        stages.push((format!("cdf {}", metric.id()), best, median));
    }
    let (best, median, _) = time(|| timeline(&opened.rows, &opened.failures, theme));
    stages.push(("timeline".to_owned(), best, median));
    let (best, median, _) = time(|| context_scatter(&opened.rows, theme));
    stages.push(("context scatter".to_owned(), best, median));
    let (best, median, _) = time(|| throughput_over_time(&opened.rows, theme));
    stages.push(("throughput over time".to_owned(), best, median));
    let (best, median, charts) = time(|| artifact_charts(&opened, theme));
    stages.push(("all artifact charts".to_owned(), best, median));
    let (best, median, comparison) = time(|| compare(&[&opened, &opened]));
    stages.push(("compare (2 runs)".to_owned(), best, median));
    let (best, median, _) = time(|| comparison_charts(&[&opened, &opened], theme));
    stages.push(("comparison charts (2 runs)".to_owned(), best, median));
    let (best, median, csv) = time(|| rows_csv(&opened));
    stages.push(("rows CSV".to_owned(), best, median));
    // An SLO applied after the fact: judging every row, then marking the drawn charts.
    let slo: Slo = "ttft:2000,tpot:50".parse().expect("a valid SLO");
    let (best, median, _) = time(|| judge_opened(&slo, &opened));
    stages.push(("SLO: judge 10,000 rows".to_owned(), best, median));
    let (best, median, _) = time(|| {
        let mut marked = charts.clone();
        overlay_slo(&mut marked, &slo, Some(&opened.rows), theme);
        marked
    });
    stages.push((
        "SLO: thresholds and misses on the charts".to_owned(),
        best,
        median,
    ));
    let (best, median, _) = time(|| rows_csv_with_slo(&opened, Some(&slo)));
    stages.push(("SLO: rows CSV with its columns".to_owned(), best, median));
    let (best, median, _) = time(|| summary_markdown(&[&opened, &opened], &comparison));
    stages.push(("summary Markdown".to_owned(), best, median));
    let (best, median, _) = time(|| {
        let opened = OpenedArtifact::from_text("bench-10k.json", &text);
        let charts = artifact_charts(&opened, theme);
        let comparison = compare(&[&opened, &opened]);
        (opened, charts, comparison)
    });
    stages.push((
        "end to end: load + all charts + compare".to_owned(),
        best,
        median,
    ));

    println!("{:<42} {:>10} {:>10}", "stage", "best ms", "median ms");
    for (stage, best, median) in &stages {
        println!("{stage:<42} {best:>10.2} {median:>10.2}");
    }
    let options_bytes: usize = charts
        .iter()
        .map(|chart| chart.option.to_string().len())
        .sum();
    println!(
        "{} charts, {:.2} MiB of option JSON; CSV {:.2} MiB",
        charts.len(),
        options_bytes as f64 / (1024.0 * 1024.0),
        csv.len() as f64 / (1024.0 * 1024.0)
    );

    if let Ok(directory) = std::env::var("STROBE_BENCH_DUMP") {
        let directory = std::path::Path::new(&directory);
        let mut object = serde_json::Map::new();
        for chart in &charts {
            object.insert(chart.id.clone(), chart.option.clone());
        }
        let written = std::fs::create_dir_all(directory)
            .and_then(|()| std::fs::write(directory.join("bench-10k.json"), &text))
            .and_then(|()| {
                std::fs::write(
                    directory.join("bench-10k-charts.json"),
                    Value::Object(object).to_string(),
                )
            });
        if let Err(error) = written {
            eprintln!("could not write to {}: {error}", directory.display());
        }
    }
}
