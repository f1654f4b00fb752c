//! Tests of the reset's answers, counters and check.

use super::*;
use crate::core::config::cache_reset::reset_route;
use crate::core::observe::test_support::row_inputs;

fn route(engine: &str) -> ResetRoute {
    reset_route(engine, "http://gpu-box:8000/v1", None).expect("a route")
}

fn stop_message(step: ResetStep) -> String {
    match step {
        ResetStep::Stop(failed) => failed.to_string(),
        other => panic!("expected a stop, got {other:?}"),
    }
}

#[test]
fn any_2xx_is_done_and_sglang_is_asked_again_while_busy() {
    for engine in ["vllm", "sglang", "strobe-sim"] {
        for status in [200, 204] {
            assert_eq!(
                judge_answer(&route(engine), ResetAnswer::Status(status), 1),
                ResetStep::Done
            );
        }
    }
    let sglang = route("sglang");
    assert_eq!(
        judge_answer(&sglang, ResetAnswer::Status(400), 1),
        ResetStep::AskAgain
    );
    let gave_up = stop_message(judge_answer(
        &sglang,
        ResetAnswer::Status(400),
        MOST_ATTEMPTS,
    ));
    assert!(gave_up.contains("requests run or wait"), "{gave_up}");
    // vLLM's 400 is no busy signal: it stops at once.
    let vllm_400 = stop_message(judge_answer(&route("vllm"), ResetAnswer::Status(400), 1));
    assert!(vllm_400.contains("answered 400"), "{vllm_400}");
}

#[test]
fn every_failure_says_what_to_do() {
    let vllm = route("vllm");
    let missing = stop_message(judge_answer(&vllm, ResetAnswer::Status(404), 1));
    assert!(missing.starts_with("the prefix-cache reset failed, so nothing was measured"));
    assert!(
        missing.contains("start vLLM with VLLM_SERVER_DEV_MODE=1"),
        "{missing}"
    );
    assert!(missing.contains("POST http://gpu-box:8000/reset_prefix_cache"));
    assert!(missing.contains("set reset_prefix_cache to off"));
    let sglang = stop_message(judge_answer(&route("sglang"), ResetAnswer::Status(404), 1));
    assert!(sglang.contains("/flush_cache"), "{sglang}");
    let given = reset_route("x", "http://a/v1", Some("http://a/reset")).unwrap();
    let given = stop_message(judge_answer(&given, ResetAnswer::Status(405), 1));
    assert!(given.contains("check reset_prefix_cache_url"), "{given}");
    let key = stop_message(judge_answer(&vllm, ResetAnswer::Status(401), 1));
    assert!(key.contains("API key"), "{key}");
    let cors = stop_message(judge_answer(&vllm, ResetAnswer::Unreadable, 1));
    assert!(cors.contains("CORS"), "{cors}");
    let slow = stop_message(judge_answer(&vllm, ResetAnswer::TimedOut, 1));
    assert!(slow.contains("within 30 s"), "{slow}");
    let odd = stop_message(judge_answer(&vllm, ResetAnswer::Status(500), 1));
    assert!(odd.contains("answered 500"), "{odd}");
}

#[test]
fn the_counters_are_the_prefix_cache_series_by_common_name() {
    let vllm = b"vllm:prefix_cache_queries_total{engine=\"0\"} 1200\n\
                 vllm:prefix_cache_hits_total{engine=\"0\"} 800\n\
                 vllm:kv_cache_usage_perc{engine=\"0\"} 0.25\n\
                 vllm:num_requests_running 0\n";
    let counters = cache_counters(vllm).expect("counters");
    assert_eq!(
        counters.into_iter().collect::<Vec<_>>(),
        [
            ("kv_cache_use".to_owned(), 0.25),
            ("prefix_cache_hits".to_owned(), 800.0),
            ("prefix_cache_queries".to_owned(), 1200.0),
        ]
    );
    let sglang = b"sglang:cache_hit_rate 0.5\nsglang:token_usage 0.1\nsglang:num_running_reqs 1\n";
    let counters = cache_counters(sglang).expect("counters");
    assert_eq!(counters["prefix_cache_hit_rate"], 0.5);
    assert_eq!(counters["kv_cache_use"], 0.1);
    assert_eq!(cache_counters(b"tgi_queue_size 3\n"), None);
    assert_eq!(cache_counters(b"\x00\x01 binary"), None);
    assert_eq!(cache_counters(b""), None);
}

fn row(index: u64, started_at_ms: f64, cached: Option<u64>) -> RequestTiming {
    let mut inputs = row_inputs();
    inputs.request_index = index;
    inputs.started_at_ms = Some(started_at_ms);
    inputs.cached_tokens = Some(cached);
    RequestTiming::from_seconds(inputs).expect("valid times")
}

fn record() -> ResetRecord {
    ResetRecord {
        engine: "vllm".to_owned(),
        method: "POST".to_owned(),
        url: "http://gpu-box:8000/reset_prefix_cache".to_owned(),
        status: 200,
        attempts: 1,
        t_ms: -250.0,
        latency_ms: 1.5,
        counters_before: None,
        counters_after: None,
    }
}

fn facts(rows: &[RequestTiming], mode: PromptCacheMode) -> RunFacts<'_> {
    RunFacts {
        rows,
        concurrency: 2,
        prompt_cache_mode: mode,
        shared_prefix_tokens: 2048,
    }
}

#[test]
fn the_first_wave_shows_whether_the_shared_prefix_was_cached() {
    // Rows in index order; the first wave is the two that started first.
    let emptied = [
        row(0, 5.0, Some(2040)),
        row(1, 0.0, Some(0)),
        row(2, 1.0, Some(2040)),
        row(3, 900.0, Some(0)),
    ];
    let check = check_reset(Some(&record()), &facts(&emptied, PromptCacheMode::Shared));
    assert_eq!(check.verdict, ResetVerdict::Emptied);
    assert_eq!(check.first_wave_min_cached_tokens, Some(0));

    let warm = [
        row(0, 0.0, Some(2040)),
        row(1, 0.5, Some(2032)),
        row(2, 700.0, Some(0)),
    ];
    let check = check_reset(Some(&record()), &facts(&warm, PromptCacheMode::Shared));
    assert_eq!(check.verdict, ResetVerdict::NotEmptied);
    assert_eq!(check.first_wave_min_cached_tokens, Some(2032));
    assert!(
        check.reason.contains("at least 2032 tokens"),
        "{}",
        check.reason
    );

    let unique = check_reset(Some(&record()), &facts(&emptied, PromptCacheMode::Unique));
    assert_eq!(unique.verdict, ResetVerdict::Unchecked);
    assert!(unique.reason.contains("share no prefix"));

    let no_usage = [row(0, 0.0, None), row(1, 0.0, None)];
    let check = check_reset(Some(&record()), &facts(&no_usage, PromptCacheMode::Shared));
    assert_eq!(check.verdict, ResetVerdict::Unchecked);
    assert_eq!(check.first_wave_min_cached_tokens, None);
    assert!(check.reason.contains("--enable-prompt-tokens-details"));

    let none_sent = check_reset(None, &facts(&warm, PromptCacheMode::Shared));
    assert_eq!(none_sent.verdict, ResetVerdict::Unchecked);
    assert_eq!(none_sent.first_wave_min_cached_tokens, Some(2032));
    assert_eq!(
        check_reset(Some(&record()), &facts(&[], PromptCacheMode::Shared)).verdict,
        ResetVerdict::Unchecked
    );
}

#[test]
fn a_kv_cache_use_that_fell_to_zero_stands_in_for_the_rows() {
    let mut fell = record();
    fell.counters_before = Some([("kv_cache_use".to_owned(), 0.4)].into());
    fell.counters_after = Some([("kv_cache_use".to_owned(), 0.0)].into());
    let rows = [row(0, 0.0, None)];
    let check = check_reset(Some(&fell), &facts(&rows, PromptCacheMode::Unique));
    assert_eq!(check.verdict, ResetVerdict::Emptied);
    assert!(
        check.reason.contains("fell from 0.4 to 0"),
        "{}",
        check.reason
    );
    let mut idle = fell.clone();
    idle.counters_before = Some([("kv_cache_use".to_owned(), 0.0)].into());
    let check = check_reset(Some(&idle), &facts(&rows, PromptCacheMode::Unique));
    assert_eq!(check.verdict, ResetVerdict::Unchecked);
}

#[test]
fn the_block_writes_and_reads_back_and_refuses_non_finite_numbers() {
    let rows = [row(0, 0.0, Some(0)), row(1, 0.1, Some(2040))];
    let mut reset = record();
    reset.counters_after = Some([("prefix_cache_hits".to_owned(), 10.0)].into());
    let block = reset_block(
        PrefixCacheReset::BeforeEachStep,
        Some(reset),
        &facts(&rows, PromptCacheMode::Shared),
    );
    let value = serde_json::to_value(&block).expect("json");
    assert_eq!(value["policy"], "before_each_step");
    assert_eq!(value["check"]["verdict"], "emptied");
    assert_eq!(value["reset"]["counters_after"]["prefix_cache_hits"], 10.0);
    assert!(value["reset"].get("counters_before").is_none());
    let back: PrefixCacheResetBlock = serde_json::from_value(value).expect("reads back");
    assert_eq!(back, block);
    assert_eq!(block.first_non_finite(), None);

    let mut broken = block.clone();
    if let Some(reset) = broken.reset.as_mut() {
        reset.counters_after = Some([("kv_cache_use".to_owned(), f64::NAN)].into());
    }
    let (place, _) = broken.first_non_finite().expect("found");
    assert_eq!(
        place,
        "prefix_cache_reset.reset.counters_after.kv_cache_use"
    );

    let later = reset_block(
        PrefixCacheReset::BeforeRun,
        None,
        &facts(&rows, PromptCacheMode::Shared),
    );
    assert_eq!(
        serde_json::to_value(&later).expect("json")["reset"],
        serde_json::Value::Null
    );
}
