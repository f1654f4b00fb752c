//! Tests of the field table: keys, groups, kinds and spellings agree with the settings.

use super::*;
use crate::core::config::choices::*;
use crate::core::config::form::RunForm;
use crate::core::config::settings::RunConfig;

#[test]
fn fields_are_the_artifact_keys_once_each_in_contiguous_groups() {
    let keys: Vec<&str> = FIELDS.iter().map(|spec| spec.key).collect();
    let mut expected = vec![
        "base_url",
        "pool",
        "server_metrics",
        "server_metrics_interval_ms",
        "reset_prefix_cache",
        "reset_prefix_cache_url",
        "model",
        "engine",
        "gpu",
        "endpoint",
        "requests",
        "concurrency",
        "load",
        "rate",
        "arrivals",
        "burstiness",
        "arrival_seed",
        "ramp_s",
        "ramp_start_rate",
        "duration_s",
        "sweep",
        "sweep_steps",
        "sweep_max_error",
        "sweep_min_attainment",
        "sweep_stop_saturated",
        "sweep_cooldown_s",
        "repeats",
        "slo",
        "slo_target",
        "warmup",
        "traces",
        "measurement",
        "live_view",
        "context_tokens",
        "context_seed",
        "context_calibration",
        "max_tokens",
        "response_words",
        "controlled_output_policy",
        "prompt_cache_mode",
        "shared_prefix_tokens",
        "request_canaries",
        "workload_url",
        "workload_turns",
        "workload_order",
        "workload_seed",
        "output_lengths",
        "history",
        "think_time_ms",
        "session_header",
        "trace_speed",
        "temperature",
        "top_p",
        "thinking_mode",
        "reasoning_effort",
        "timeout_s",
        "max_model_len",
        "margin",
    ];
    let mut sorted_keys = keys.clone();
    sorted_keys.sort_unstable();
    expected.sort_unstable();
    assert_eq!(sorted_keys, expected);

    // Groups appear in FieldGroup::ALL order and never resume after another group.
    let mut group_runs: Vec<FieldGroup> = FIELDS.iter().map(|spec| spec.group).collect();
    group_runs.dedup();
    assert_eq!(group_runs, FieldGroup::ALL);

    for spec in FIELDS {
        assert!(
            !spec.label.is_empty() && !spec.help.is_empty(),
            "{}",
            spec.key
        );
        assert_eq!(field_spec(spec.key), Some(spec));
    }
    assert_eq!(field_spec("burst"), None);
}

#[test]
fn choice_lists_match_the_plan_enums() {
    assert_eq!(
        PROMPT_CACHE_MODES,
        PromptCacheMode::ALL
            .iter()
            .map(|v| v.as_str())
            .collect::<Vec<_>>()
    );
    assert_eq!(
        CONTROLLED_OUTPUT_POLICIES,
        ControlledOutputPolicy::ALL
            .iter()
            .map(|v| v.as_str())
            .collect::<Vec<_>>()
    );
    assert_eq!(
        THINKING_MODES,
        ThinkingMode::ALL
            .iter()
            .map(|v| v.as_str())
            .collect::<Vec<_>>()
    );
    assert_eq!(
        REASONING_EFFORTS,
        ReasoningEffort::ALL
            .iter()
            .map(|v| v.as_str())
            .collect::<Vec<_>>()
    );
    assert_eq!(
        MEASUREMENT_THREADS,
        MeasurementThread::ALL
            .iter()
            .map(|v| v.as_str())
            .collect::<Vec<_>>()
    );
    assert_eq!(
        LIVE_VIEWS,
        LiveView::ALL.iter().map(|v| v.as_str()).collect::<Vec<_>>()
    );
    assert_eq!(
        LOAD_MODES,
        LoadMode::ALL.iter().map(|v| v.as_str()).collect::<Vec<_>>()
    );
    assert_eq!(
        ARRIVAL_KINDS,
        Arrivals::ALL.iter().map(|v| v.as_str()).collect::<Vec<_>>()
    );
    let spellings = |all: &[&'static str]| all.to_vec();
    assert_eq!(
        spellings(PREFIX_CACHE_RESETS),
        PrefixCacheReset::ALL
            .iter()
            .map(|v| v.as_str())
            .collect::<Vec<_>>()
    );
    assert_eq!(
        spellings(API_ENDPOINTS),
        ApiEndpoint::ALL
            .iter()
            .map(|v| v.as_str())
            .collect::<Vec<_>>()
    );
    assert_eq!(
        spellings(WORKLOAD_TURN_CHOICES),
        WorkloadTurns::ALL
            .iter()
            .map(|v| v.as_str())
            .collect::<Vec<_>>()
    );
    assert_eq!(
        spellings(WORKLOAD_ORDERS),
        WorkloadOrder::ALL
            .iter()
            .map(|v| v.as_str())
            .collect::<Vec<_>>()
    );
    assert_eq!(
        spellings(OUTPUT_LENGTH_CHOICES),
        OutputLengths::ALL
            .iter()
            .map(|v| v.as_str())
            .collect::<Vec<_>>()
    );
    assert_eq!(
        spellings(HISTORY_MODES),
        HistoryMode::ALL
            .iter()
            .map(|v| v.as_str())
            .collect::<Vec<_>>()
    );
}

#[test]
fn field_keys_name_the_table_in_its_order_and_round_trip() {
    assert_eq!(FieldKey::ALL.len(), FIELDS.len());
    for (key, spec) in FieldKey::ALL.iter().zip(FIELDS) {
        assert_eq!(key.spec(), spec);
        assert_eq!(FieldKey::named(key.as_str()), Some(*key));
    }
    assert_eq!(FieldKey::MaxTokens.as_str(), "max_tokens");
    assert_eq!(FieldKey::named("burst"), None, "a setting without a field");
    assert_eq!(FieldKey::named("api_key"), None);
}

/// A form every bounded field can be checked in: open loop with gamma arrivals and a ramp (so
/// the rate rules apply), no canaries (so `max_tokens` takes its own bounds).
fn form_with_every_rule_in_force() -> RunForm {
    let mut form = RunForm::browser_defaults();
    for (key, text) in [
        (FieldKey::Model, "m"),
        (FieldKey::Engine, "vllm"),
        (FieldKey::Load, "rate"),
        (FieldKey::Arrivals, "gamma"),
        (FieldKey::RampS, "1"),
        (FieldKey::RampStartRate, "1"),
        (FieldKey::RequestCanaries, "false"),
    ] {
        form.set(key, text);
    }
    form
}

/// Whether the form refuses `text` in `key`'s field (an error names that field).
fn refuses(key: FieldKey, text: &str) -> bool {
    let mut form = form_with_every_rule_in_force();
    form.set(key, text);
    form.to_config()
        .err()
        .is_some_and(|errors| errors.iter().any(|error| error.field == key))
}

/// The closest `f64` above `value`, and the closest below.
fn next_up(value: f64) -> f64 {
    if value == 0.0 {
        f64::from_bits(1)
    } else if value > 0.0 {
        f64::from_bits(value.to_bits() + 1)
    } else {
        f64::from_bits(value.to_bits() - 1)
    }
}
fn next_down(value: f64) -> f64 {
    -next_up(-value)
}

#[test]
fn every_bounded_field_says_the_bounds_its_rule_checks() {
    assert!(
        form_with_every_rule_in_force().to_config().is_ok(),
        "{:?}",
        form_with_every_rule_in_force().to_config()
    );
    let mut checked = Vec::new();
    for &key in FieldKey::ALL {
        let spec = key.spec();
        let help = spec.help();
        assert!(!help.contains('{'), "{key}: a placeholder left in {help:?}");
        match spec.kind {
            FieldKind::Integer(bounds) | FieldKind::OptionalInteger(bounds) if !bounds.is_any() => {
                let (min, max) = (bounds.min, bounds.max);
                if key == FieldKey::ContextTokens {
                    // 0 samples the distribution; a fixed context has bounds of its own.
                    let fixed = FIXED_CONTEXT_TOKENS_BOUNDS;
                    assert!(help.contains(&format!("{fixed} tokens")), "{key}: {help}");
                    assert!(help.contains("0 samples"), "{key}: {help}");
                    assert!(refuses(key, &(fixed.min - 1).to_string()), "{key}");
                    assert!(!refuses(key, &fixed.min.to_string()), "{key}");
                } else {
                    assert!(help.contains(&bounds.to_string()), "{key}: {help}");
                }
                assert!(!refuses(key, &min.to_string()), "{key} refuses {min}");
                assert!(
                    refuses(key, &(min - 1).to_string()),
                    "{key} takes {min} - 1"
                );
                assert!(!refuses(key, &max.to_string()), "{key} refuses {max}");
                assert!(
                    refuses(key, &(max + 1).to_string()),
                    "{key} takes {max} + 1"
                );
                checked.push(key);
            }
            FieldKind::Decimal { bounds, .. } => {
                let (min, max) = (bounds.min, bounds.max);
                assert!(help.contains(&bounds.to_string()), "{key}: {help}");
                if bounds.min_exclusive {
                    assert!(refuses(key, &min.to_string()), "{key} takes {min}");
                    assert!(!refuses(key, &next_up(min).to_string()), "{key}");
                } else {
                    assert!(!refuses(key, &min.to_string()), "{key} refuses {min}");
                    assert!(refuses(key, &next_down(min).to_string()), "{key}");
                }
                assert!(!refuses(key, &max.to_string()), "{key} refuses {max}");
                assert!(refuses(key, &next_up(max).to_string()), "{key} above {max}");
                checked.push(key);
            }
            _ => {}
        }
    }
    assert_eq!(checked.len(), 25, "{checked:?}");

    // The least max_tokens with canaries, in both help texts and in the rule.
    let least = MIN_MAX_TOKENS_WITH_CANARIES;
    for key in [FieldKey::MaxTokens, FieldKey::RequestCanaries] {
        assert!(key.spec().help().contains(&least.to_string()), "{key}");
    }
    let with_canaries = |max_tokens: u64| {
        let mut form = form_with_every_rule_in_force();
        form.set(FieldKey::RequestCanaries, "true");
        form.set(FieldKey::MaxTokens, max_tokens.to_string());
        form.to_config().is_ok()
    };
    assert!(with_canaries(least) && !with_canaries(least - 1));

    // burst has no field, but its entry holds its bounds too.
    let FieldKind::Integer(bounds) = FieldKey::Burst.spec().kind else {
        panic!("burst is a whole number")
    };
    assert!(FieldKey::Burst.spec().help().contains(&bounds.to_string()));
    let burst_refused = |burst: i64| {
        let config = RunConfig {
            burst: u64::try_from(burst).expect("a count"),
            ..RunConfig::default()
        };
        config
            .validate()
            .err()
            .is_some_and(|errors| errors.iter().any(|e| e.field == FieldKey::Burst))
    };
    assert!(!burst_refused(bounds.min) && !burst_refused(bounds.max));
    assert!(burst_refused(bounds.max + 1));
}

#[test]
fn settings_without_a_field_have_a_key_but_no_input() {
    for &key in FieldKey::WITHOUT_FIELD {
        assert!(!FieldKey::ALL.contains(&key), "{key}");
        assert_eq!(FieldKey::named(key.as_str()), None, "{key}");
        assert_eq!(field_spec(key.as_str()), None, "{key}");
        assert_eq!(display_position(key), FIELDS.len(), "{key}");
    }
    assert_eq!(FieldKey::Burst.to_string(), "burst");
    assert_eq!(
        FieldKey::ConfigurationFingerprint.as_str(),
        "configuration_fingerprint"
    );
}
