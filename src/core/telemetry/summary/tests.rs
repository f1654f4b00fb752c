//! The summary's arithmetic: gauges, counters with restarts, histogram quantiles, the window.

use std::collections::BTreeMap;

use super::*;
use crate::core::telemetry::exposition::bucket_key;

fn sample(t_ms: f64, values: &[(&str, f64)]) -> ServerMetricsSample {
    ServerMetricsSample {
        t_ms,
        latency_ms: 2.0,
        values: values
            .iter()
            .map(|(key, value)| ((*key).to_owned(), *value))
            .collect(),
    }
}

/// A histogram's keys in a sample's values.
fn histogram_values(base: &str, buckets: &[(f64, f64)], sum: f64) -> Vec<(String, f64)> {
    let mut values: Vec<(String, f64)> = buckets
        .iter()
        .map(|&(bound, count)| (bucket_key(&format!("{base}_bucket"), bound), count))
        .collect();
    values.push((format!("{base}_sum"), sum));
    values.push((format!("{base}_count"), buckets.last().map_or(0.0, |b| b.1)));
    values
}

fn histogram(buckets: &[(f64, f64)], sum: f64) -> Histogram {
    let values: BTreeMap<String, f64> = histogram_values("h", buckets, sum).into_iter().collect();
    Histogram::from_values(&values, "h").expect("a histogram")
}

#[test]
fn a_gauge_gives_min_mean_and_max() {
    assert_eq!(gauge_summary(&[]), None);
    let one = gauge_summary(&[4.0]).expect("one sample");
    assert_eq!(
        (one.min, one.mean, one.max, one.samples),
        (4.0, 4.0, 4.0, 1)
    );
    let flat = gauge_summary(&[0.1; 7]).expect("no spread");
    assert_eq!((flat.min, flat.mean, flat.max), (0.1, 0.1, 0.1));
    let spread = gauge_summary(&[3.0, 12.0, 0.0, 5.0]).expect("samples");
    assert_eq!((spread.min, spread.mean, spread.max), (0.0, 5.0, 12.0));
}

#[test]
fn a_counter_gives_its_growth_and_rate() {
    assert_eq!(counter_summary(&[]), None);
    assert_eq!(counter_summary(&[(0.0, 5.0)]), None);
    let grown = counter_summary(&[(0.0, 100.0), (1000.0, 150.0), (2000.0, 300.0)]).expect("two");
    assert_eq!(
        (grown.delta, grown.rate_per_s, grown.resets),
        (200.0, Some(100.0), 0)
    );
    let flat = counter_summary(&[(0.0, 7.0), (500.0, 7.0)]).expect("two");
    assert_eq!((flat.delta, flat.rate_per_s), (0.0, Some(0.0)));
    let no_time = counter_summary(&[(10.0, 1.0), (10.0, 2.0)]).expect("two");
    assert_eq!((no_time.delta, no_time.rate_per_s), (1.0, None));
}

#[test]
fn a_counter_that_drops_restarted_and_its_new_value_counts() {
    // 10 → 30 is +20; the drop to 5 is a restart, so +5; 5 → 8 is +3.
    let restarted = counter_summary(&[(0.0, 10.0), (1000.0, 30.0), (2000.0, 5.0), (4000.0, 8.0)])
        .expect("points");
    assert_eq!(
        (restarted.delta, restarted.rate_per_s, restarted.resets),
        (28.0, Some(7.0), 1)
    );
    let to_zero = counter_summary(&[(0.0, 10.0), (1000.0, 0.0)]).expect("points");
    assert_eq!((to_zero.delta, to_zero.resets), (0.0, 1));
}

#[test]
fn quantiles_interpolate_inside_the_bucket_the_rank_falls_in() {
    // 10 observations ≤ 0.1 s, 20 more ≤ 1 s, 10 above.
    let h = histogram(&[(0.1, 10.0), (1.0, 30.0), (f64::INFINITY, 40.0)], 24.0);
    // Rank 20 is the 10th of the 20 in (0.1, 1]: halfway.
    assert_eq!(h.quantile(0.5), Some(0.55));
    // Rank 4 in the first bucket interpolates from zero.
    assert_eq!(h.quantile(0.1), Some(0.04));
    // A rank in +Inf answers the highest finite bound.
    assert_eq!(h.quantile(0.99), Some(1.0));
    assert_eq!(h.quantile(0.0), Some(0.0));
    assert_eq!(h.quantile(1.5), None);
    assert_eq!(h.mean(), Some(0.6));
    let summary = h.summary_ms();
    assert_eq!(summary.count, 40.0);
    assert_eq!(summary.mean_ms, Some(600.0));
    assert_eq!(summary.p50_ms, Some(550.0));
    assert_eq!(summary.p99_ms, Some(1000.0));
}

#[test]
fn quantiles_of_empty_odd_or_unordered_buckets_stay_defined() {
    let empty = histogram(&[(0.1, 0.0), (f64::INFINITY, 0.0)], 0.0);
    assert_eq!((empty.quantile(0.5), empty.mean()), (None, None));
    let no_buckets = histogram(&[], 0.0);
    assert_eq!(no_buckets.quantile(0.5), None);
    // Everything in +Inf, nothing finite below it.
    let only_inf = histogram(&[(f64::INFINITY, 4.0)], 40.0);
    assert_eq!(only_inf.quantile(0.5), None);
    // A count that falls from one bucket to the next is raised to the one below.
    let unordered = histogram(&[(1.0, 10.0), (2.0, 8.0), (f64::INFINITY, 10.0)], 12.0);
    assert_eq!(unordered.quantile(0.5), Some(0.5));
    // A first bound at or below zero answers itself.
    let negative = histogram(&[(-1.0, 5.0), (f64::INFINITY, 5.0)], -5.0);
    assert_eq!(negative.quantile(0.5), Some(-1.0));
    let summary = empty.summary_ms();
    assert_eq!(
        (summary.count, summary.mean_ms, summary.p95_ms),
        (0.0, None, None)
    );
}

#[test]
fn a_histogram_since_an_earlier_reading_holds_only_the_new_observations() {
    let earlier = histogram(&[(0.1, 5.0), (1.0, 8.0), (f64::INFINITY, 10.0)], 6.0);
    let later = histogram(&[(0.1, 5.0), (1.0, 18.0), (f64::INFINITY, 20.0)], 12.0);
    let window = later.since(&earlier);
    assert_eq!(
        window.buckets,
        [(0.1, 0.0), (1.0, 10.0), (f64::INFINITY, 10.0)]
    );
    assert_eq!((window.count, window.sum), (10.0, 6.0));
    // The server restarted: the later reading is all there is since.
    let restarted = histogram(&[(0.1, 1.0), (f64::INFINITY, 2.0)], 0.5);
    assert_eq!(restarted.since(&earlier), restarted);
}

/// A vLLM-named run: a baseline at 0 before the window (100–1200 ms), two samples inside, a
/// closing one after; the server restarts between 1000 and 1500.
fn vllm_run() -> Vec<ServerMetricsSample> {
    let ttft = "vllm:time_to_first_token_seconds";
    let mut samples = Vec::new();
    for (t_ms, running, waiting, kv, queries, hits, generated, ttft_buckets, ttft_sum) in [
        (
            0.0,
            0.0,
            0.0,
            0.0,
            1000.0,
            500.0,
            40.0,
            [1.0, 2.0, 2.0],
            0.3,
        ),
        (
            500.0,
            8.0,
            4.0,
            0.5,
            3000.0,
            1500.0,
            400.0,
            [3.0, 8.0, 8.0],
            2.0,
        ),
        (
            1000.0,
            4.0,
            0.0,
            0.9,
            5000.0,
            2000.0,
            900.0,
            [4.0, 12.0, 13.0],
            4.5,
        ),
        (
            1500.0,
            0.0,
            0.0,
            0.1,
            1000.0,
            0.0,
            100.0,
            [1.0, 1.0, 1.0],
            0.05,
        ),
    ] {
        let mut values = vec![
            ("vllm:num_requests_running".to_owned(), running),
            ("vllm:num_requests_waiting".to_owned(), waiting),
            ("vllm:kv_cache_usage_perc".to_owned(), kv),
            ("vllm:prefix_cache_queries_total".to_owned(), queries),
            ("vllm:prefix_cache_hits_total".to_owned(), hits),
            ("vllm:generation_tokens_total".to_owned(), generated),
            ("vllm:some_new_series".to_owned(), 1.0),
        ];
        let [fast, slow, all] = ttft_buckets;
        values.extend(histogram_values(
            ttft,
            &[(0.1, fast), (1.0, slow), (f64::INFINITY, all)],
            ttft_sum,
        ));
        samples.push(ServerMetricsSample {
            t_ms,
            latency_ms: 3.0,
            values: values.into_iter().collect(),
        });
    }
    samples
}

#[test]
fn a_window_summarizes_gauges_inside_it_and_counts_across_it() {
    let window = Window {
        start_ms: 100.0,
        end_ms: 1200.0,
    };
    let summary = summarize(&vllm_run(), Family::Vllm, window);
    assert_eq!(
        (summary.from_t_ms, summary.to_t_ms),
        (Some(0.0), Some(1500.0))
    );
    let gauge = |key: &str| {
        let gauge = &summary.gauges[key];
        (gauge.min, gauge.mean, gauge.max, gauge.samples)
    };
    // Only the two samples inside the window: the idle baseline and closing ones are not.
    assert_eq!(gauge("running"), (4.0, 6.0, 8.0, 2));
    assert_eq!(gauge("waiting"), (0.0, 2.0, 4.0, 2));
    assert_eq!(gauge("kv_cache_use"), (0.5, 0.7, 0.9, 2));
    let counter = |key: &str| {
        let counter = &summary.counters[key];
        (counter.delta, counter.rate_per_s, counter.resets)
    };
    // 1000 → 3000 → 5000, then a restart: +1000.
    assert_eq!(
        counter("prefix_cache_queries"),
        (5000.0, Some(5000.0 / 1.5), 1)
    );
    assert_eq!(counter("prefix_cache_hits"), (1500.0, Some(1000.0), 1));
    assert_eq!(counter("generation_tokens").0, 960.0);
    assert_eq!(summary.prefix_cache_hit_rate, Some(0.3));
    // TTFT: 11 observations up to the restart, 1 after it.
    let ttft = &summary.histograms["ttft"];
    assert_eq!(ttft.count, 12.0);
    assert_eq!(ttft.mean_ms, Some((4.2 + 0.05) / 12.0 * 1000.0));
    assert!(ttft
        .p50_ms
        .is_some_and(|p50| (100.0..=1000.0).contains(&p50)));
    // Only common series are summarized; the rest stays in the samples.
    assert!(!summary.gauges.contains_key("vllm:some_new_series"));
    assert!(!summary.counters.contains_key("preemptions"));
}

#[test]
fn a_window_without_samples_around_it_uses_what_there_is() {
    let samples = vllm_run();
    // Starts before the first sample and ends after the last.
    let wide = summarize(
        &samples,
        Family::Vllm,
        Window {
            start_ms: -50.0,
            end_ms: 9000.0,
        },
    );
    assert_eq!((wide.from_t_ms, wide.to_t_ms), (Some(0.0), Some(1500.0)));
    assert_eq!(wide.gauges["running"].samples, 4);
    // No samples at all.
    let none = summarize(
        &[],
        Family::Vllm,
        Window {
            start_ms: 0.0,
            end_ms: 1.0,
        },
    );
    assert_eq!(
        (none.from_t_ms, none.gauges.len(), none.counters.len()),
        (None, 0, 0)
    );
    assert_eq!(none.prefix_cache_hit_rate, None);
    // One sample: levels, but no growth.
    let one = summarize(
        &samples[1..2],
        Family::Vllm,
        Window {
            start_ms: 0.0,
            end_ms: 1000.0,
        },
    );
    assert_eq!(one.gauges["running"].max, 8.0);
    assert!(one.counters.is_empty() && one.histograms.is_empty());
    // Out of order samples are put in order.
    let mut shuffled = samples.clone();
    shuffled.reverse();
    let window = Window {
        start_ms: 100.0,
        end_ms: 1200.0,
    };
    assert_eq!(
        summarize(&shuffled, Family::Vllm, window),
        summarize(&samples, Family::Vllm, window)
    );
}

#[test]
fn an_engine_hit_rate_gauge_stands_in_when_there_are_no_counters() {
    let samples = [
        sample(
            0.0,
            &[
                ("sglang:cache_hit_rate", 0.2),
                ("sglang:num_queue_reqs", 1.0),
            ],
        ),
        sample(
            1000.0,
            &[
                ("sglang:cache_hit_rate", 0.6),
                ("sglang:num_queue_reqs", 3.0),
            ],
        ),
    ];
    let summary = summarize(
        &samples,
        Family::Sglang,
        Window {
            start_ms: 0.0,
            end_ms: 1000.0,
        },
    );
    assert_eq!(summary.prefix_cache_hit_rate, Some(0.4));
    assert_eq!(summary.gauges["waiting"].max, 3.0);
    // The same names read as an unknown engine map nothing.
    let unknown = summarize(
        &samples,
        Family::Unknown,
        Window {
            start_ms: 0.0,
            end_ms: 1000.0,
        },
    );
    assert!(unknown.gauges.is_empty());
}

#[test]
fn llamacpp_hits_count_against_prompt_tokens_plus_hits() {
    // llama.cpp's prompt counter leaves out the cached tokens it counts apart.
    let samples = [
        sample(
            0.0,
            &[
                ("llamacpp:prompt_tokens_total", 0.0),
                ("llamacpp:prompt_tokens_cached_total", 0.0),
            ],
        ),
        sample(
            1000.0,
            &[
                ("llamacpp:prompt_tokens_total", 31.0),
                ("llamacpp:prompt_tokens_cached_total", 14.0),
            ],
        ),
    ];
    let window = Window {
        start_ms: 0.0,
        end_ms: 1000.0,
    };
    let summary = summarize(&samples, Family::Llamacpp, window);
    assert_eq!(summary.prefix_cache_hit_rate, Some(14.0 / 45.0));
    // The same counters read as vLLM's would have no queries to divide by.
    let renamed: Vec<ServerMetricsSample> = samples
        .iter()
        .map(|s| {
            sample(
                s.t_ms,
                &[
                    (
                        "vllm:prompt_tokens_total",
                        s.values["llamacpp:prompt_tokens_total"],
                    ),
                    (
                        "vllm:prefix_cache_hits_total",
                        s.values["llamacpp:prompt_tokens_cached_total"],
                    ),
                ],
            )
        })
        .collect();
    assert_eq!(
        summarize(&renamed, Family::Vllm, window).prefix_cache_hit_rate,
        None
    );
}
