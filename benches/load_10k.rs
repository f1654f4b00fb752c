//! Loading, validating and charting an artifact with 10,000 request rows must take well under a
//! second. This benchmark builds such an artifact through the real pipeline (stream
//! accumulator → `conclude_request` → `build_artifact`), serializes it, then times each stage
//! of what the results page does with a dropped file: `LoadedArtifact::from_text`, every chart
//! function, the comparison, both exports, and an SLO applied afterwards. It prints the best
//! and the median of 5 runs.
//!
//! Run with `cargo bench --bench load_10k`. Set `STROBE_BENCH_DUMP=DIR` to also write the
//! artifact and its chart options there for a look in a browser.

#[path = "../tests/common/noise.rs"]
mod noise;

use std::time::Instant;

use noise::Noise;
use serde_json::{json, Value};
use strobe::core::artifact::build::{build_artifact, RunTiming};
use strobe::core::config::settings::RunConfig;
use strobe::core::config::slo::Slo;
use strobe::core::observe::accumulate::StreamAccumulator;
use strobe::core::observe::conclude::{conclude_request, RequestPlanFacts};
use strobe::core::observe::failure::RequestError;
use strobe::core::plan::RunPlan;
use strobe::core::present::charts::overlay_slo;
use strobe::core::present::charts::throughput_over_time;
use strobe::core::present::charts::{artifact_charts, comparison_charts};
use strobe::core::present::charts::{context_scatter, timeline};
use strobe::core::present::charts::{distribution_cdf, distribution_histogram};
use strobe::core::present::charts::{ChartTheme, DISTRIBUTION_CHART_METRICS};
use strobe::core::present::compare::compare;
use strobe::core::present::export::{rows_csv, rows_csv_with_slo, summary_markdown};
use strobe::core::read::loaded::LoadedArtifact;
use strobe::core::read::validate::report::Verdict;
use strobe::core::read::validate::validate_artifact;
use strobe::core::slo::judge_loaded;
use strobe::core::stream::sse::{ChatChunk, ChoiceDelta, ChunkEvent};

const REQUESTS: u64 = 10_000;
const CONCURRENCY: u64 = 64;
const REPEATS: usize = 5;
const RUN_STARTED_MS: f64 = 1000.0;

fn chunk(choice: ChoiceDelta, usage: Option<Value>) -> ChunkEvent {
    ChunkEvent::Chunk(ChatChunk {
        choices: vec![choice],
        usage,
    })
}

/// A 10,000-request run at concurrency 64: reasoning on every third request, prefix-cache hits
/// on a quarter, and 1 % of requests failing with an HTTP 500 whose body is hostile markup.
fn synthetic_artifact_text() -> String {
    let config = RunConfig {
        base_url: "http://127.0.0.1:8000/v1".to_owned(),
        model: "bench-model".to_owned(),
        engine: Some("strobe-sim".to_owned()),
        gpu: Some("bench-gpu".to_owned()),
        requests: REQUESTS,
        concurrency: CONCURRENCY,
        context_tokens: 4096,
        context_seed: 11,
        max_tokens: 512,
        request_canaries: false,
        max_model_len: 32_768,
        ..RunConfig::default()
    };
    let plan = match RunPlan::new(&config, None) {
        Ok(plan) => plan,
        Err(error) => panic!("benchmark plan: {error:?}"),
    };
    let mut noise = Noise(0x5eed_0010_0000_0001);
    let mut slot_free_at = vec![RUN_STARTED_MS; CONCURRENCY as usize];
    let mut outcomes = Vec::with_capacity(REQUESTS as usize);
    let mut run_end = RUN_STARTED_MS;
    for index in 0..REQUESTS {
        let slot = (index % CONCURRENCY) as usize;
        let start = slot_free_at[slot] + noise.between(0.0, 2.0);
        let facts = RequestPlanFacts {
            request_index: index,
            planned_context_tokens: plan.planned_context_tokens()[index as usize],
            expected_marker: None,
            response_words: 0,
            policy: config.controlled_output_policy,
            run_started_ms: RUN_STARTED_MS,
        };
        let end = if index % 100 == 37 {
            let end = start + noise.between(5.0, 50.0);
            let error = RequestError::http_status(
                500,
                "Internal Server Error",
                "<img src=x onerror=alert(1)>",
                &[],
            );
            outcomes.push(conclude_request(&facts, start, Err(error), end));
            end
        } else {
            let mut accumulator = StreamAccumulator::new(start);
            let first = start + noise.between(30.0, 900.0);
            if index % 3 == 0 {
                let reasoning = ChoiceDelta {
                    reasoning: Some("thinking".to_owned()),
                    ..ChoiceDelta::default()
                };
                accumulator.on_read_events(first, &[chunk(reasoning, None)]);
            }
            let content_at = first + noise.between(0.0, 200.0);
            let content = ChoiceDelta {
                content: Some("benchmark output".to_owned()),
                ..ChoiceDelta::default()
            };
            accumulator.on_read_events(content_at, &[chunk(content, None)]);
            let prompt_tokens = facts.planned_context_tokens * 19 / 20;
            let completion_tokens = 32 + noise.next() % 480;
            let cached_tokens = if index % 4 == 0 { prompt_tokens / 2 } else { 0 };
            let usage = json!({
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
                "prompt_tokens_details": {"cached_tokens": cached_tokens},
            });
            let end = content_at + completion_tokens as f64 * noise.between(8.0, 14.0);
            let finish = ChoiceDelta {
                finish_reason: Some("stop".to_owned()),
                ..ChoiceDelta::default()
            };
            accumulator.on_read_events(end - 0.5, &[chunk(finish, Some(usage)), ChunkEvent::Done]);
            outcomes.push(conclude_request(
                &facts,
                start,
                accumulator.finish(end),
                end,
            ));
            end
        };
        slot_free_at[slot] = end;
        run_end = run_end.max(end);
    }
    let wall_ms = run_end - RUN_STARTED_MS;
    let started_at_unix_ns = 1_790_000_000_000_000_000_i64;
    let timing = RunTiming {
        started_at_unix_ns,
        finished_at_unix_ns: started_at_unix_ns + (wall_ms * 1e6) as i64,
        wall_seconds: wall_ms / 1000.0,
    };
    let artifact = match build_artifact(&config, &plan, outcomes, timing, None) {
        Ok(artifact) => artifact,
        Err(error) => panic!("benchmark artifact: {error}"),
    };
    match artifact.to_json_text() {
        Ok(text) => text,
        Err(error) => panic!("benchmark artifact text: {error}"),
    }
}

/// Runs `work` [`REPEATS`] times; returns (best, median) in ms and the last result.
fn time<T>(mut work: impl FnMut() -> T) -> (f64, f64, T) {
    let mut samples = Vec::with_capacity(REPEATS);
    let mut last = None;
    for _ in 0..REPEATS {
        // A native benchmark times itself; nothing in the app reads this clock.
        #[allow(clippy::disallowed_methods)]
        let started = Instant::now();
        let result = work();
        samples.push(started.elapsed().as_secs_f64() * 1000.0);
        last = Some(std::hint::black_box(result));
    }
    samples.sort_by(f64::total_cmp);
    match last {
        Some(result) => (samples[0], samples[REPEATS / 2], result),
        None => unreachable!("REPEATS is at least 1"),
    }
}

fn main() {
    let text = synthetic_artifact_text();
    println!(
        "artifact: {REQUESTS} requests, {:.2} MiB of JSON",
        text.len() as f64 / (1024.0 * 1024.0)
    );

    let mut stages: Vec<(String, f64, f64)> = Vec::new();
    let (best, median, loaded) = time(|| LoadedArtifact::from_text("bench-10k.json", &text));
    assert_eq!(loaded.verdict(), Verdict::Valid, "{}", loaded.report);
    assert!(loaded.rows.len() > 9_800, "{} rows", loaded.rows.len());
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
    let label = loaded.label();
    for metric in DISTRIBUTION_CHART_METRICS {
        let values = metric.values(&loaded.rows);
        let runs = [(label.as_str(), values.as_slice())];
        let (best, median, _) = time(|| distribution_histogram(&runs, metric, theme));
        stages.push((format!("histogram {}", metric.id()), best, median));
        let (best, median, _) = time(|| distribution_cdf(&runs, metric, theme));
        stages.push((format!("cdf {}", metric.id()), best, median));
    }
    let (best, median, _) = time(|| timeline(&loaded.rows, &loaded.failures, theme));
    stages.push(("timeline".to_owned(), best, median));
    let (best, median, _) = time(|| context_scatter(&loaded.rows, theme));
    stages.push(("context scatter".to_owned(), best, median));
    let (best, median, _) = time(|| throughput_over_time(&loaded.rows, theme));
    stages.push(("throughput over time".to_owned(), best, median));
    let (best, median, charts) = time(|| artifact_charts(&loaded, theme));
    stages.push(("all artifact charts".to_owned(), best, median));
    let (best, median, comparison) = time(|| compare(&[&loaded, &loaded]));
    stages.push(("compare (2 runs)".to_owned(), best, median));
    let (best, median, _) = time(|| comparison_charts(&[&loaded, &loaded], theme));
    stages.push(("comparison charts (2 runs)".to_owned(), best, median));
    let (best, median, csv) = time(|| rows_csv(&loaded));
    stages.push(("rows CSV".to_owned(), best, median));
    // An SLO applied after the fact: judging every row, then marking the drawn charts.
    let slo: Slo = "ttft:2000,tpot:50".parse().expect("a valid SLO");
    let (best, median, _) = time(|| judge_loaded(&slo, &loaded));
    stages.push(("SLO: judge 10,000 rows".to_owned(), best, median));
    let (best, median, _) = time(|| {
        let mut marked = charts.clone();
        overlay_slo(&mut marked, &slo, Some(&loaded.rows), theme);
        marked
    });
    stages.push((
        "SLO: thresholds and misses on the charts".to_owned(),
        best,
        median,
    ));
    let (best, median, _) = time(|| rows_csv_with_slo(&loaded, Some(&slo)));
    stages.push(("SLO: rows CSV with its columns".to_owned(), best, median));
    let (best, median, _) = time(|| summary_markdown(&[&loaded, &loaded], &comparison));
    stages.push(("summary Markdown".to_owned(), best, median));
    let (best, median, _) = time(|| {
        let loaded = LoadedArtifact::from_text("bench-10k.json", &text);
        let charts = artifact_charts(&loaded, theme);
        let comparison = compare(&[&loaded, &loaded]);
        (loaded, charts, comparison)
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
