//! Tests of the field table: keys, groups, kinds and spellings agree with the settings.

use super::*;
use crate::core::config::choices::*;

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
