use super::*;
use crate::core::config::choices::ThinkingMode;
use crate::core::config::fields::FieldKey;
use crate::core::config::settings::tests::pooled;
use crate::core::config::settings::ClientOptions;
use crate::core::prompt::PromptSpec;

/// A config that passes validation: the CLI defaults plus an endpoint and a model.
fn valid_config() -> RunConfig {
    RunConfig {
        base_url: "http://127.0.0.1:8000/v1".to_owned(),
        model: "test-model".to_owned(),
        ..RunConfig::default()
    }
}

#[test]
fn warmup_sends_two_requests_per_usable_connection() {
    let plan = |concurrency: u64, burst: u64, warmup: bool| {
        let config = RunConfig {
            concurrency,
            burst,
            context_tokens: 1024,
            max_model_len: 32_768,
            client: ClientOptions {
                warmup,
                ..ClientOptions::default()
            },
            ..valid_config()
        };
        RunPlan::new(&config, None)
    };
    let warmups = |concurrency, burst, warmup| {
        plan(concurrency, burst, warmup).map(|plan| plan.warmup_requests())
    };
    assert_eq!(warmups(1, 0, true), Ok(2));
    assert_eq!(warmups(4, 0, true), Ok(8));
    assert_eq!(warmups(6, 0, true), Ok(12));
    // No more than a browser can open to one HTTP/1.1 origin.
    assert_eq!(warmups(20, 0, true), Ok(12));
    // A burst replaces the concurrency.
    assert_eq!(warmups(20, 3, true), Ok(6));
    assert_eq!(warmups(4, 0, false), Ok(0));
    let checks = |concurrency, warmup| {
        plan(concurrency, 0, warmup).map(|plan| {
            (
                plan.warmup_check_requests_per_endpoint(),
                plan.most_warmup_requests(),
            )
        })
    };
    assert_eq!(checks(4, true), Ok((vec![4], 8 + WARMUP_CHECK_ROUNDS * 4)));
    assert_eq!(
        checks(20, true),
        Ok((vec![6], 12 + WARMUP_CHECK_ROUNDS * 6))
    );
    assert_eq!(checks(4, false), Ok((vec![0], 0)));
}

#[test]
fn a_pool_spreads_slots_round_robin_and_warms_each_endpoint() {
    let pool = ["http://127.0.0.1:8001/v1", "http://127.0.0.1:8002/v1"];
    let plan = RunPlan::new(&pooled(16, &pool), None).expect("valid");
    assert_eq!(plan.endpoint_count(), 3);
    assert_eq!(plan.slots_per_endpoint(), vec![6, 5, 5]);
    let slots: Vec<usize> = (0..7).map(|slot| plan.endpoint_of_slot(slot)).collect();
    assert_eq!(slots, vec![0, 1, 2, 0, 1, 2, 0]);
    assert_eq!(plan.warmup_requests_per_endpoint(), vec![12, 10, 10]);
    assert_eq!(plan.warmup_requests(), 32);
    // A check round: one request per connection each endpoint's slots use.
    assert_eq!(plan.warmup_check_requests_per_endpoint(), vec![6, 5, 5]);
    assert_eq!(plan.most_warmup_requests(), 32 + WARMUP_CHECK_ROUNDS * 16);
    assert_eq!(
        plan.config().request_urls(),
        vec![
            "http://127.0.0.1:8000/v1/chat/completions",
            "http://127.0.0.1:8001/v1/chat/completions",
            "http://127.0.0.1:8002/v1/chat/completions",
        ]
    );
    // Fewer slots than endpoints: the spare endpoints get neither slots nor warm-up.
    let small = RunPlan::new(&pooled(2, &pool), None).expect("valid");
    assert_eq!(small.slots_per_endpoint(), vec![1, 1, 0]);
    assert_eq!(small.warmup_requests_per_endpoint(), vec![2, 2, 0]);
    // Past six slots per endpoint the warm-up stops growing, as without a pool.
    let big = RunPlan::new(&pooled(64, &pool), None).expect("valid");
    assert_eq!(big.slots_per_endpoint(), vec![22, 21, 21]);
    assert_eq!(big.warmup_requests(), 36);
}

fn sampled_plan(seed: i64, requests: u64, max_model_len: u64) -> RunPlan {
    let config = RunConfig {
        context_seed: seed,
        requests,
        max_model_len,
        ..valid_config()
    };
    match RunPlan::new(&config, None) {
        Ok(plan) => plan,
        Err(error) => panic!("plan for seed {seed}: {error}"),
    }
}

#[test]
fn sample_ctx_bounds_are_inclusive() {
    let just_above = |bound: f64| f64::from_bits(bound.to_bits() + 1);
    let expectations = [
        (0.0, 16_000),
        (0.218, 16_000),
        (just_above(0.218), 32_768),
        (0.602, 32_768),
        (just_above(0.602), 65_536),
        (0.906, 65_536),
        (just_above(0.906), 131_072),
        (0.995, 131_072),
        (just_above(0.995), 262_144),
        (1.0, 262_144),
    ];
    for (u, tokens) in expectations {
        assert_eq!(sample_ctx(u), Ok(tokens), "u = {u}");
    }
    for u in [-1e-12, just_above(1.0), f64::NAN, f64::INFINITY] {
        assert!(
            matches!(sample_ctx(u), Err(PlanError::DrawOutOfRange(_))),
            "u = {u}"
        );
    }
}

#[test]
fn sampled_plans_match_the_published_vectors() {
    // ARTIFACT.md §1.2, n = 12, no cap.
    let vectors: [(i64, [u64; 12]); 4] = [
        (
            0,
            [
                65536, 65536, 32768, 32768, 32768, 32768, 65536, 32768, 32768, 32768, 131072, 32768,
            ],
        ),
        (
            1717,
            [
                65536, 32768, 131072, 16000, 32768, 65536, 32768, 32768, 32768, 65536, 32768, 65536,
            ],
        ),
        (
            1,
            [
                16000, 65536, 65536, 32768, 32768, 32768, 65536, 65536, 16000, 16000, 65536, 32768,
            ],
        ),
        (
            42,
            [
                65536, 16000, 32768, 32768, 65536, 65536, 65536, 16000, 32768, 16000, 32768, 32768,
            ],
        ),
    ];
    for (seed, expected) in vectors {
        let plan = sampled_plan(seed, 12, 0);
        assert_eq!(plan.planned_context_tokens(), expected, "seed {seed}");
        assert_eq!(plan.prompt_budget_cap(), None);
        assert_eq!(plan.max_context_tokens(), None);
        assert_eq!(plan.context_tokens_field(), None);
        assert_eq!(plan.context_seed(), seed);
    }
}

#[test]
fn first_draws_match_the_published_prefixes() {
    // The spec prints them rounded to six places.
    let mut seed_0 = PyRandom::new(0);
    assert_eq!(format!("{:.6}", seed_0.random()), "0.844422");
    assert_eq!(format!("{:.6}", seed_0.random()), "0.757954");
    let mut seed_1717 = PyRandom::new(1717);
    assert_eq!(format!("{:.6}", seed_1717.random()), "0.779376");
    assert_eq!(format!("{:.6}", seed_1717.random()), "0.228766");
}

#[test]
fn cap_clamps_planned_contexts() {
    let unclamped = sampled_plan(0, 12, 0);
    // 122880 + 64 + 1024: the cap is exactly 122880.
    let capped = sampled_plan(0, 12, 123_968);
    assert_eq!(capped.prompt_budget_cap(), Some(122_880));
    assert_eq!(capped.max_context_tokens(), Some(123_968));
    let mut expected = unclamped.planned_context_tokens().to_vec();
    expected[10] = 122_880;
    assert_eq!(capped.planned_context_tokens(), expected);

    let capped = sampled_plan(0, 12, 131_072);
    assert_eq!(capped.prompt_budget_cap(), Some(129_984));
    expected[10] = 129_984;
    assert_eq!(capped.planned_context_tokens(), expected);
    assert_eq!(capped.context_distribution()["129984"], 1);
}

#[test]
fn seed_0_n_60_distribution_is_the_published_one() {
    let plan = sampled_plan(0, 60, 0);
    let distribution = serde_json::to_string(&plan.context_distribution()).unwrap_or_default();
    assert_eq!(
        distribution,
        r#"{"131072":7,"16000":6,"32768":27,"65536":20}"#
    );
}

#[test]
fn fixed_context_is_recorded_before_clamping_and_draws_nothing() {
    let config = RunConfig {
        context_tokens: 65_536,
        context_seed: 1_717,
        requests: 6,
        concurrency: 1,
        max_tokens: 8_192,
        prompt_cache_mode: PromptCacheMode::Unique,
        request_canaries: true,
        ..valid_config()
    };
    let plan = RunPlan::new(&config, Some(262_144));
    let plan = plan.as_ref().ok();
    assert_eq!(plan.map(RunPlan::prompt_budget_cap), Some(Some(252_928)));
    assert_eq!(plan.map(RunPlan::context_tokens_field), Some(Some(65_536)));
    assert_eq!(plan.map(RunPlan::shared_prefix_tokens), Some(0));
    let distribution = plan.map(RunPlan::context_distribution).unwrap_or_default();
    assert_eq!(distribution, BTreeMap::from([("65536".to_owned(), 6)]));

    let clamped = RunPlan::new(&config, Some(40_000)).ok();
    assert_eq!(
        clamped.as_ref().map(RunPlan::planned_context_tokens),
        Some(&[40_000 - 8_192 - 1_024; 6][..])
    );
    assert_eq!(
        clamped.as_ref().map(RunPlan::context_tokens_field),
        Some(Some(65_536))
    );
}

#[test]
fn explicit_max_model_len_wins_over_discovery() {
    let config = RunConfig {
        max_model_len: 32_768,
        ..valid_config()
    };
    let plan = RunPlan::new(&config, Some(262_144)).ok();
    assert_eq!(
        plan.as_ref().and_then(RunPlan::max_context_tokens),
        Some(32_768)
    );
    let discovered = RunPlan::new(&valid_config(), Some(262_144)).ok();
    assert_eq!(
        discovered.as_ref().and_then(RunPlan::max_context_tokens),
        Some(262_144)
    );
    let zero = RunPlan::new(&valid_config(), Some(0)).ok();
    assert_eq!(zero.as_ref().and_then(RunPlan::max_context_tokens), None);
}

#[test]
fn discovered_context_too_small_is_a_cap_error() {
    let result = RunPlan::new(&valid_config(), Some(64 + 1_024));
    assert_eq!(
        result.as_ref().err(),
        Some(&PlanError::PromptCapNotPositive {
            max_model_len: 1_088,
            max_tokens: 64,
            margin: 1_024
        })
    );
    let message = result.err().map(|e| e.to_string()).unwrap_or_default();
    assert!(message.starts_with("max_model_len must exceed max_tokens plus the context margin"));
    assert!(RunPlan::new(&valid_config(), Some(64 + 1_024 + 1)).is_ok());
}

#[test]
fn invalid_config_is_rejected_by_the_plan() {
    let config = RunConfig {
        requests: 0,
        ..valid_config()
    };
    assert!(matches!(
        RunPlan::new(&config, None),
        Err(PlanError::InvalidConfig(errors)) if errors.len() == 1 && errors[0].field == FieldKey::Requests
    ));
}

#[test]
fn aggregate_guard_allows_exactly_the_limit() {
    // Sampled, no cap: planned = 262144 per request; 256 × 262144 = 67108864.
    let at_limit = RunConfig {
        requests: 256,
        ..valid_config()
    };
    assert!(RunPlan::new(&at_limit, None).is_ok());
    let over = RunConfig {
        requests: 257,
        ..valid_config()
    };
    assert_eq!(
        RunPlan::new(&over, None).err(),
        Some(PlanError::AggregateTooLarge {
            requests: 257,
            planned_tokens_per_request: 262_144,
            total_tokens: 257 * 262_144
        })
    );
    // A known cap lowers the sampled planned value: 257 × 129984 passes.
    assert!(RunPlan::new(&over, Some(131_072)).is_ok());
    // Fixed contexts count before clamping: 64 × 1048576 is the limit.
    let fixed = |requests| RunConfig {
        requests,
        context_tokens: 1_048_576,
        ..valid_config()
    };
    assert!(RunPlan::new(&fixed(64), Some(131_072)).is_ok());
    assert!(matches!(
        RunPlan::new(&fixed(65), Some(131_072)),
        Err(PlanError::AggregateTooLarge {
            total_tokens: 68_157_440,
            ..
        })
    ));
}

#[test]
fn burst_replaces_requests_and_concurrency() {
    let config = RunConfig {
        burst: 8,
        requests: 100,
        concurrency: 3,
        ..valid_config()
    };
    let plan = RunPlan::new(&config, None).ok();
    assert_eq!(plan.as_ref().map(RunPlan::requests), Some(8));
    assert_eq!(plan.as_ref().map(RunPlan::concurrency), Some(8));
    assert_eq!(
        plan.as_ref().map(|p| p.planned_context_tokens().len()),
        Some(8)
    );
    assert_eq!(
        plan.as_ref()
            .map(|p| p.serve_flags()["shared_prefix_burst"].clone()),
        Some(json!(true))
    );
    assert_eq!(
        plan.as_ref().map(RunPlan::shared_prefix_tokens),
        Some(8_000)
    );
}

#[test]
fn markers_are_zero_padded_and_keep_the_sign() {
    let plan = sampled_plan(1_717, 6, 0);
    assert_eq!(plan.marker(0), "ANVIL_REQ_1717_00000");
    assert_eq!(plan.marker(42), "ANVIL_REQ_1717_00042");
    assert_eq!(canary_marker(-5, 0), "ANVIL_REQ_-5_00000");
    assert_eq!(canary_marker(0, 9_999), "ANVIL_REQ_0_09999");
}

#[test]
fn sampling_block_without_flags_is_the_documented_default() {
    let plan = sampled_plan(0, 1, 0);
    assert_eq!(
        serde_json::to_string(&plan.sampling_block()).unwrap_or_default(),
        r#"{"temperature":{"effective_request":0.0,"requested":null,"sent":true},"top_p":{"effective_request":null,"requested":null,"sent":false}}"#
    );
}

#[test]
fn sampling_block_records_requested_values() {
    let config = RunConfig {
        temperature: Some(0.9),
        top_p: Some(0.95),
        ..valid_config()
    };
    let plan = RunPlan::new(&config, None).ok();
    assert_eq!(
        plan.map(|p| p.sampling_block()),
        Some(json!({
            "temperature": {"effective_request": 0.9, "requested": 0.9, "sent": true},
            "top_p": {"effective_request": 0.95, "requested": 0.95, "sent": true}
        }))
    );
}

#[test]
fn serve_flags_follow_thinking_and_effort() {
    assert_eq!(
        sampled_plan(0, 1, 0).serve_flags(),
        json!({"no_thinking": false, "reasoning_effort": null,
               "shared_prefix_burst": false, "thinking_mode": "default"})
    );
    let disabled = RunConfig {
        thinking_mode: ThinkingMode::Disabled,
        ..valid_config()
    };
    // As the reference writes `--thinking-mode disabled`: the mode, not the alias flag.
    assert_eq!(
        RunPlan::new(&disabled, None).ok().map(|p| p.serve_flags()),
        Some(json!({"no_thinking": false, "reasoning_effort": null,
                    "shared_prefix_burst": false, "thinking_mode": "disabled"}))
    );
    let enabled = RunConfig {
        thinking_mode: ThinkingMode::Enabled,
        ..valid_config()
    };
    assert_eq!(
        RunPlan::new(&enabled, None)
            .ok()
            .map(|p| p.serve_flags()["no_thinking"].clone()),
        Some(json!(false))
    );
    let effort = RunConfig {
        reasoning_effort: Some(ReasoningEffort::Low),
        ..valid_config()
    };
    assert_eq!(
        RunPlan::new(&effort, None)
            .ok()
            .map(|p| p.serve_flags()["reasoning_effort"].clone()),
        Some(json!("low"))
    );
}

#[test]
fn the_context_window_note_names_the_window_and_the_cap() {
    let window = ContextWindow {
        tokens: 2048,
        key: "meta.n_ctx",
    };
    let config = |context_tokens: u64, max_tokens: u64| RunConfig {
        context_tokens,
        max_tokens,
        ..RunConfig::default()
    };
    assert_eq!(
        context_window_note(&config(4096, 64), window),
        "Context window: 2,048 tokens (meta.n_ctx: llama.cpp, per slot). Prompts are capped at \
         960 tokens to fit it (2,048 − max_tokens 64 − margin 1,024); context_tokens asks for \
         4,096."
    );
    assert!(context_window_note(&config(256, 64), window).ends_with(
        "Prompts of 256 tokens fit (at most 960: 2,048 − max_tokens 64 − margin 1,024)."
    ));
    assert!(context_window_note(&config(0, 64), window)
        .contains("Sampled contexts above 960 tokens are capped"));
    assert!(context_window_note(&config(256, 1024), window).contains("no room for a prompt"));
    let explicit = RunConfig {
        max_model_len: 4096,
        ..config(256, 64)
    };
    assert!(context_window_note(&explicit, window)
        .ends_with("The form's max_model_len (4,096) is used instead."));
}

fn calibration(chars_per_token: f64, overhead_tokens: f64) -> ContextCalibration {
    ContextCalibration {
        estimated_chars_per_token: 3,
        chars_per_token,
        overhead_tokens,
        probes: Vec::new(),
    }
}

#[test]
fn an_uncalibrated_plan_builds_prompts_from_the_planned_context() {
    let plan = sampled_plan(0, 60, 131_072);
    assert_eq!(plan.calibration(), None);
    for (index, planned) in plan.planned_context_tokens().iter().enumerate() {
        assert_eq!(plan.prompt_budget_tokens(index), *planned);
    }
    assert_eq!(plan.prompt_budget_tokens(60), 0);
    assert_eq!(plan.largest_planned_context_tokens(), 131_072 - 64 - 1_024);
}

#[test]
fn a_calibrated_plan_keeps_its_contexts_and_rescales_its_prompts() {
    let config = RunConfig {
        requests: 3,
        context_tokens: 1_024,
        prompt_cache_mode: PromptCacheMode::Shared,
        shared_prefix_tokens: 300,
        ..valid_config()
    };
    let uncalibrated = RunPlan::new(&config, Some(4_096)).unwrap();
    let plan = uncalibrated
        .clone()
        .with_calibration(calibration(1.5, 10.0));
    // What the rows and the artifact record is the plan's, calibrated or not.
    assert_eq!(plan.planned_context_tokens(), [1_024, 1_024, 1_024]);
    assert_eq!(
        plan.context_distribution(),
        uncalibrated.context_distribution()
    );
    assert_eq!(plan.shared_prefix_tokens(), 300);
    // (1024 − 10) × 1.5 / 3 = 507 estimated tokens, 1521 characters.
    assert_eq!(plan.prompt_budget_tokens(0), 507);
    assert_eq!(plan.shared_prefix_budget_tokens(), 150);
    assert_eq!(uncalibrated.shared_prefix_budget_tokens(), 300);
    let spec = PromptSpec::for_plan(&plan);
    assert_eq!(spec.shared_prefix().len(), 450);
    let prompt = spec.build(2, plan.prompt_budget_tokens(2)).unwrap();
    assert_eq!(prompt.len(), 1_521);
    // The cap is in the server's tokens: a plan capped at 2048 − 64 − 1024 keeps its cap, and
    // its prompts are sized to it.
    let capped = RunPlan::new(
        &RunConfig {
            context_tokens: 100_000,
            ..config
        },
        Some(2_048),
    )
    .unwrap()
    .with_calibration(calibration(4.5, 0.0));
    let cap = capped.prompt_budget_cap().unwrap();
    assert_eq!(capped.planned_context_tokens()[0], cap);
    assert_eq!(
        capped.prompt_budget_tokens(0),
        (cap as f64 * 1.5).round() as u64
    );
}
