//! Tests of the run settings: defaults, spellings, every bound on both sides, and the messages.

use super::*;
use serde_json::json;

/// A config that passes validation: the CLI defaults plus an endpoint and a model.
pub(crate) fn valid_config() -> RunConfig {
    RunConfig {
        base_url: "http://127.0.0.1:8000/v1".to_owned(),
        model: "test-model".to_owned(),
        ..RunConfig::default()
    }
}

pub(crate) fn pooled(concurrency: u64, pool: &[&str]) -> RunConfig {
    RunConfig {
        concurrency,
        context_tokens: 1024,
        max_model_len: 32_768,
        client: ClientOptions {
            endpoint_pool: pool.iter().map(|url| url.to_string()).collect(),
            ..ClientOptions::default()
        },
        ..valid_config()
    }
}

#[test]
fn pool_entries_must_be_base_urls_on_origins_of_their_own() {
    assert_eq!(
        rejected_fields(&pooled(4, &["http://127.0.0.1:8001/v1"])),
        Vec::<&str>::new()
    );
    assert_eq!(
        rejected_fields(&pooled(4, &["localhost:8001"])),
        vec!["pool"]
    );
    // The default port is the same origin as no port.
    let same_origin = RunConfig {
        base_url: "http://h/v1".into(),
        ..pooled(4, &["HTTP://H:80/other"])
    };
    assert_eq!(rejected_fields(&same_origin), vec!["pool"]);
    let errors = pooled(4, &["http://127.0.0.1:8000/v2"])
        .validate()
        .unwrap_err();
    assert!(
        errors[0].message.contains("own port or host name"),
        "{errors:?}"
    );
    let too_many: Vec<String> = (1..=MAX_ENDPOINTS)
        .map(|port| format!("http://127.0.0.1:{}/v1", 9000 + port))
        .collect();
    let too_many: Vec<&str> = too_many.iter().map(String::as_str).collect();
    assert_eq!(rejected_fields(&pooled(4, &too_many)), vec!["pool"]);
    assert_eq!(
        rejected_fields(&pooled(4, &too_many[1..])),
        Vec::<&str>::new()
    );
}

#[test]
fn origins_are_what_browsers_count_connections_by() {
    assert_eq!(
        url_origin("http://127.0.0.1:8000/v1").as_deref(),
        Some("http://127.0.0.1:8000")
    );
    assert_eq!(
        url_origin("HTTPS://Example.COM:443/v1?x").as_deref(),
        Some("https://example.com")
    );
    assert_eq!(
        url_origin("http://user@host:81").as_deref(),
        Some("http://host:81")
    );
    assert_eq!(url_origin("ftp://host/"), None);
    assert_eq!(url_origin("http:///v1"), None);
}

#[test]
fn the_measurement_thread_defaults_to_the_worker() {
    assert_eq!(
        ClientOptions::default().measurement,
        MeasurementThread::Worker
    );
    assert_eq!("main".parse(), Ok(MeasurementThread::Main));
    assert_eq!(MeasurementThread::Worker.as_str(), "worker");
}

#[test]
fn the_page_shows_progress_during_the_run_unless_asked_not_to() {
    assert_eq!(ClientOptions::default().live_view, LiveView::During);
    assert_eq!("end".parse(), Ok(LiveView::End));
    assert_eq!(LiveView::End.as_str(), "end");
    assert!("later".parse::<LiveView>().is_err());
}

fn rejected_fields(config: &RunConfig) -> Vec<&'static str> {
    match config.validate() {
        Ok(()) => Vec::new(),
        Err(errors) => errors.iter().map(|error| error.field.as_str()).collect(),
    }
}

#[test]
fn defaults_are_the_cli_defaults() {
    let config = RunConfig::default();
    assert_eq!(config.requests, 60);
    assert_eq!(config.concurrency, 20);
    assert_eq!(config.burst, 0);
    assert_eq!(config.shared_prefix_tokens, 8_000);
    assert_eq!(config.context_tokens, 0);
    assert_eq!(config.context_seed, 0);
    assert_eq!(config.max_tokens, 64);
    assert_eq!(config.response_words, 0);
    assert_eq!(config.prompt_cache_mode, PromptCacheMode::Shared);
    assert!(!config.request_canaries);
    assert_eq!(
        config.controlled_output_policy,
        ControlledOutputPolicy::Observe
    );
    assert_eq!(config.max_model_len, 0);
    assert_eq!(config.margin, 1_024);
    assert_eq!(config.thinking_mode, ThinkingMode::Default);
    assert_eq!(config.reasoning_effort, None);
    assert_eq!(config.timeout_s, 900.0);
    assert_eq!(valid_config().validate(), Ok(()));
}

#[test]
fn enums_use_the_artifact_spellings_everywhere() {
    for mode in PromptCacheMode::ALL {
        assert_eq!(serde_json::to_value(mode).ok(), Some(json!(mode.as_str())));
        assert_eq!(mode.as_str().parse::<PromptCacheMode>().as_ref(), Ok(mode));
    }
    for policy in ControlledOutputPolicy::ALL {
        assert_eq!(
            serde_json::to_value(policy).ok(),
            Some(json!(policy.as_str()))
        );
        assert_eq!(
            policy.as_str().parse::<ControlledOutputPolicy>().as_ref(),
            Ok(policy)
        );
    }
    for mode in ThinkingMode::ALL {
        assert_eq!(serde_json::to_value(mode).ok(), Some(json!(mode.as_str())));
        assert_eq!(mode.as_str().parse::<ThinkingMode>().as_ref(), Ok(mode));
    }
    for effort in ReasoningEffort::ALL {
        assert_eq!(
            serde_json::to_value(effort).ok(),
            Some(json!(effort.as_str()))
        );
        assert_eq!(
            effort.as_str().parse::<ReasoningEffort>().as_ref(),
            Ok(effort)
        );
    }
    let spellings: Vec<&str> = ReasoningEffort::ALL.iter().map(|e| e.as_str()).collect();
    assert_eq!(
        spellings,
        ["none", "minimal", "low", "medium", "high", "max", "xhigh"]
    );
    assert_eq!(PromptCacheMode::Unique.as_str(), "unique");
    assert_eq!(ControlledOutputPolicy::Strict.as_str(), "strict");
    assert_eq!(ThinkingMode::Enabled.to_string(), "enabled");
}

#[test]
fn unknown_choice_names_the_field_and_the_allowed_values() {
    let error = "Disabled".parse::<ThinkingMode>().err();
    assert_eq!(
        error.map(|e| e.to_string()),
        Some(
            "thinking_mode must be one of default, enabled, disabled, unsupported \
             (got \"Disabled\")"
                .to_owned()
        )
    );
}

#[test]
fn config_round_trips_and_missing_keys_take_defaults() {
    let config = RunConfig {
        prompt_cache_mode: PromptCacheMode::Unique,
        controlled_output_policy: ControlledOutputPolicy::Strict,
        response_words: 32,
        reasoning_effort: Some(ReasoningEffort::Xhigh),
        temperature: Some(0.9),
        ..valid_config()
    };
    let value = serde_json::to_value(&config).unwrap_or_default();
    assert_eq!(value["prompt_cache_mode"], json!("unique"));
    assert_eq!(value["controlled_output_policy"], json!("strict"));
    assert_eq!(value["reasoning_effort"], json!("xhigh"));
    assert_eq!(value["thinking_mode"], json!("default"));
    assert_eq!(
        value["client"],
        json!({
            "warmup": true,
            "chunk_traces": false,
            "measurement": "worker",
            "live_view": "during",
            "endpoint_pool": [],
            "context_calibration": false,
            "server_metrics": "auto",
            "server_metrics_interval_ms": 1000,
            "reset_prefix_cache": "off",
            "reset_prefix_cache_url": null
        })
    );
    let back: Option<RunConfig> = serde_json::from_value(value).ok();
    assert_eq!(back, Some(config));

    let partial: Option<RunConfig> =
        serde_json::from_value(json!({"model": "m", "requests": 6})).ok();
    assert_eq!(
        partial,
        Some(RunConfig {
            model: "m".to_owned(),
            requests: 6,
            ..RunConfig::default()
        })
    );
    let cold: Option<RunConfig> = serde_json::from_value(json!({"client": {"warmup": false}})).ok();
    assert_eq!(
        cold.map(|config| config.client),
        Some(ClientOptions {
            warmup: false,
            ..ClientOptions::default()
        })
    );
}

#[test]
fn every_bound_is_checked_on_both_sides() {
    type Mutation = fn(&mut RunConfig);
    // (what is changed, the change, the field expected to be rejected or None for valid)
    let cases: &[(&str, Mutation, Option<&str>)] = &[
        (
            "https url",
            |c| c.base_url = "https://example.com/v1".into(),
            None,
        ),
        (
            "upper-case scheme",
            |c| c.base_url = "HTTP://h:1".into(),
            None,
        ),
        (
            "ftp url",
            |c| c.base_url = "ftp://h/v1".into(),
            Some("base_url"),
        ),
        (
            "bare host",
            |c| c.base_url = "localhost:8000".into(),
            Some("base_url"),
        ),
        (
            "scheme only",
            |c| c.base_url = "http://".into(),
            Some("base_url"),
        ),
        (
            "url with space",
            |c| c.base_url = "http://h /v1".into(),
            Some("base_url"),
        ),
        ("empty model", |c| c.model = String::new(), Some("model")),
        ("blank model", |c| c.model = "  ".into(), Some("model")),
        ("requests 1", |c| c.requests = 1, None),
        ("requests 0", |c| c.requests = 0, Some("requests")),
        ("requests 10000", |c| c.requests = 10_000, None),
        ("requests 10001", |c| c.requests = 10_001, Some("requests")),
        ("concurrency 1", |c| c.concurrency = 1, None),
        ("concurrency 0", |c| c.concurrency = 0, Some("concurrency")),
        ("concurrency 256", |c| c.concurrency = 256, None),
        (
            "concurrency 257",
            |c| c.concurrency = 257,
            Some("concurrency"),
        ),
        ("burst 256", |c| c.burst = 256, None),
        ("burst 257", |c| c.burst = 257, Some("burst")),
        (
            "burst in unique mode",
            |c| {
                c.burst = 4;
                c.prompt_cache_mode = PromptCacheMode::Unique;
            },
            Some("burst"),
        ),
        (
            "shared_prefix 262144",
            |c| c.shared_prefix_tokens = 262_144,
            None,
        ),
        (
            "shared_prefix 262145",
            |c| c.shared_prefix_tokens = 262_145,
            Some("shared_prefix_tokens"),
        ),
        ("ctx 32", |c| c.context_tokens = 32, None),
        ("ctx 31", |c| c.context_tokens = 31, Some("context_tokens")),
        ("ctx 1", |c| c.context_tokens = 1, Some("context_tokens")),
        ("ctx 1048576", |c| c.context_tokens = 1_048_576, None),
        (
            "ctx 1048577",
            |c| c.context_tokens = 1_048_577,
            Some("context_tokens"),
        ),
        ("max_tokens 1", |c| c.max_tokens = 1, None),
        ("max_tokens 0", |c| c.max_tokens = 0, Some("max_tokens")),
        ("max_tokens 65536", |c| c.max_tokens = 65_536, None),
        (
            "max_tokens 65537",
            |c| c.max_tokens = 65_537,
            Some("max_tokens"),
        ),
        (
            "canaries with 16",
            |c| {
                c.request_canaries = true;
                c.max_tokens = 16;
            },
            None,
        ),
        (
            "canaries with 15",
            |c| {
                c.request_canaries = true;
                c.max_tokens = 15;
            },
            Some("max_tokens"),
        ),
        ("response_words 65536", |c| c.response_words = 65_536, None),
        (
            "response_words 65537",
            |c| c.response_words = 65_537,
            Some("response_words"),
        ),
        (
            "strict with words",
            |c| {
                c.controlled_output_policy = ControlledOutputPolicy::Strict;
                c.response_words = 1;
            },
            None,
        ),
        (
            "strict without words",
            |c| c.controlled_output_policy = ControlledOutputPolicy::Strict,
            Some("controlled_output_policy"),
        ),
        (
            "clock id 64 chars",
            |c| c.clock_domain_id = Some("a".repeat(64)),
            None,
        ),
        (
            "clock id charset",
            |c| c.clock_domain_id = Some("lab-1.rack_2".into()),
            None,
        ),
        (
            "clock id 65 chars",
            |c| c.clock_domain_id = Some("a".repeat(65)),
            Some("clock_domain_id"),
        ),
        (
            "clock id empty",
            |c| c.clock_domain_id = Some(String::new()),
            Some("clock_domain_id"),
        ),
        (
            "clock id slash",
            |c| c.clock_domain_id = Some("lab/1".into()),
            Some("clock_domain_id"),
        ),
        (
            "clock id newline",
            |c| c.clock_domain_id = Some("lab\n".into()),
            Some("clock_domain_id"),
        ),
        (
            "fingerprint ok",
            |c| c.configuration_fingerprint = Some(format!("sha256:{}", "0a".repeat(32))),
            None,
        ),
        (
            "fingerprint upper hex",
            |c| c.configuration_fingerprint = Some(format!("sha256:{}", "0A".repeat(32))),
            Some("configuration_fingerprint"),
        ),
        (
            "fingerprint 63 digits",
            |c| c.configuration_fingerprint = Some(format!("sha256:{}", "a".repeat(63))),
            Some("configuration_fingerprint"),
        ),
        (
            "fingerprint wrong prefix",
            |c| c.configuration_fingerprint = Some(format!("sha512:{}", "a".repeat(64))),
            Some("configuration_fingerprint"),
        ),
        (
            "max_model_len 1048576",
            |c| c.max_model_len = 1_048_576,
            None,
        ),
        (
            "max_model_len 1048577",
            |c| c.max_model_len = 1_048_577,
            Some("max_model_len"),
        ),
        (
            "max_model_len just enough",
            |c| c.max_model_len = 64 + 1_024 + 1,
            None,
        ),
        (
            "max_model_len equal",
            |c| c.max_model_len = 64 + 1_024,
            Some("max_model_len"),
        ),
        ("margin 0", |c| c.margin = 0, None),
        ("margin 1048576", |c| c.margin = 1_048_576, None),
        ("margin 1048577", |c| c.margin = 1_048_577, Some("margin")),
        ("temperature 0", |c| c.temperature = Some(0.0), None),
        ("temperature 2", |c| c.temperature = Some(2.0), None),
        (
            "temperature above 2",
            |c| c.temperature = Some(2.000_001),
            Some("temperature"),
        ),
        (
            "temperature negative",
            |c| c.temperature = Some(-0.1),
            Some("temperature"),
        ),
        (
            "temperature NaN",
            |c| c.temperature = Some(f64::NAN),
            Some("temperature"),
        ),
        (
            "temperature inf",
            |c| c.temperature = Some(f64::INFINITY),
            Some("temperature"),
        ),
        ("top_p 1", |c| c.top_p = Some(1.0), None),
        ("top_p tiny", |c| c.top_p = Some(1e-9), None),
        ("top_p 0", |c| c.top_p = Some(0.0), Some("top_p")),
        ("top_p above 1", |c| c.top_p = Some(1.01), Some("top_p")),
        ("top_p NaN", |c| c.top_p = Some(f64::NAN), Some("top_p")),
        (
            "effort with default thinking",
            |c| c.reasoning_effort = Some(ReasoningEffort::Low),
            None,
        ),
        (
            "effort with enabled thinking",
            |c| {
                c.reasoning_effort = Some(ReasoningEffort::Low);
                c.thinking_mode = ThinkingMode::Enabled;
            },
            Some("reasoning_effort"),
        ),
        (
            "effort with disabled thinking",
            |c| {
                c.reasoning_effort = Some(ReasoningEffort::None);
                c.thinking_mode = ThinkingMode::Disabled;
            },
            Some("reasoning_effort"),
        ),
        (
            "effort with unsupported thinking",
            |c| {
                c.reasoning_effort = Some(ReasoningEffort::High);
                c.thinking_mode = ThinkingMode::Unsupported;
            },
            Some("reasoning_effort"),
        ),
        ("timeout 3600", |c| c.timeout_s = 3_600.0, None),
        ("timeout tiny", |c| c.timeout_s = 0.001, None),
        ("timeout 0", |c| c.timeout_s = 0.0, Some("timeout_s")),
        (
            "timeout above 3600",
            |c| c.timeout_s = 3_600.5,
            Some("timeout_s"),
        ),
        ("timeout NaN", |c| c.timeout_s = f64::NAN, Some("timeout_s")),
    ];
    for (label, mutate, expected_field) in cases {
        let mut config = valid_config();
        mutate(&mut config);
        let expected: Vec<&str> = expected_field.iter().copied().collect();
        assert_eq!(rejected_fields(&config), expected, "case {label}");
    }
}

#[test]
fn validation_reports_every_violation_with_advice() {
    let config = RunConfig {
        base_url: String::new(),
        model: String::new(),
        requests: 0,
        max_tokens: 8,
        request_canaries: true,
        timeout_s: 0.0,
        ..RunConfig::default()
    };
    let errors = config.validate().err().unwrap_or_default();
    let fields: Vec<&str> = errors.iter().map(|error| error.field.as_str()).collect();
    assert_eq!(
        fields,
        ["base_url", "model", "requests", "max_tokens", "timeout_s"]
    );
    assert_eq!(
        errors[3].message,
        "max_tokens must be at least 16 when request_canaries is on (got 8); \
         raise max_tokens or turn canaries off"
    );
    assert_eq!(
        errors[2].to_string(),
        "requests must be between 1 and 10000 (got 0)"
    );
}

#[test]
fn urls_drop_trailing_slashes() {
    let config = RunConfig {
        base_url: "http://h:8000/v1//".to_owned(),
        ..valid_config()
    };
    assert_eq!(config.request_url(), "http://h:8000/v1/chat/completions");
    assert_eq!(config.models_url(), "http://h:8000/v1/models");
    assert_eq!(config.server_url("/api/ps"), "http://h:8000/api/ps");
    let rootless = RunConfig {
        base_url: "http://h:8000/openai/".to_owned(),
        ..valid_config()
    };
    assert_eq!(rootless.server_url("/info"), "http://h:8000/openai/info");
}

#[test]
fn server_metrics_is_auto_off_or_a_url_without_credentials() {
    let with = |setting: &str, interval: u64| RunConfig {
        client: ClientOptions {
            server_metrics: setting.to_owned(),
            server_metrics_interval_ms: interval,
            ..ClientOptions::default()
        },
        ..valid_config()
    };
    let fields = |config: RunConfig| -> Vec<String> {
        config
            .validate()
            .err()
            .unwrap_or_default()
            .into_iter()
            .map(|error| error.field.to_string())
            .collect()
    };
    for good in ["auto", "off", "http://gpu-box:8000/metrics"] {
        assert!(fields(with(good, 1000)).is_empty(), "{good}");
    }
    assert_eq!(fields(with("metrics please", 1000)), ["server_metrics"]);
    assert_eq!(
        fields(with("http://u:p@gpu-box:8000/metrics", 1000)),
        ["server_metrics"]
    );
    assert_eq!(
        fields(with("http://gpu-box/metrics?token=1", 1000)),
        ["server_metrics"]
    );
    assert_eq!(fields(with("auto", 99)), ["server_metrics_interval_ms"]);
    assert_eq!(fields(with("auto", 60_001)), ["server_metrics_interval_ms"]);

    let base = "http://user:pw@gpu-box:8000/v1";
    assert_eq!(
        with("auto", 1000).client.metrics_url(base).as_deref(),
        Some("http://gpu-box:8000/metrics")
    );
    assert_eq!(with("off", 1000).client.metrics_url(base), None);
    assert_eq!(
        with("http://gpu-box:9100/metrics", 1000)
            .client
            .metrics_url(base)
            .as_deref(),
        Some("http://gpu-box:9100/metrics")
    );
    assert_eq!(
        ClientOptions::default().server_metrics,
        "auto",
        "scraped unless turned off"
    );
}

#[test]
fn a_prefix_cache_reset_needs_an_engine_with_a_route_or_a_url_without_credentials() {
    use crate::core::config::cache_reset::ResetEngine;
    use crate::core::config::choices::PrefixCacheReset;
    let with = |engine: &str, policy: PrefixCacheReset, url: Option<&str>| RunConfig {
        engine: Some(engine.to_owned()),
        client: ClientOptions {
            reset_prefix_cache: policy,
            reset_prefix_cache_url: url.map(str::to_owned),
            ..ClientOptions::default()
        },
        ..valid_config()
    };
    let errors = |config: RunConfig| -> Vec<(String, String)> {
        config
            .validate()
            .err()
            .unwrap_or_default()
            .into_iter()
            .map(|error| (error.field.to_string(), error.message))
            .collect()
    };
    let each = PrefixCacheReset::BeforeEachStep;
    assert!(errors(with("vllm", each, None)).is_empty());
    assert!(errors(with("tgi", PrefixCacheReset::Off, None)).is_empty());
    let refused = errors(with("tgi", each, None));
    assert_eq!(refused.len(), 1);
    assert_eq!(refused[0].0, "reset_prefix_cache");
    assert!(
        refused[0].1.contains("Hugging Face TGI"),
        "{}",
        refused[0].1
    );
    assert!(errors(with("tgi", each, Some("http://proxy:9/flush"))).is_empty());
    for bad in [
        "flush please",
        "http://u:p@h/reset",
        "http://h/reset?api_key=1",
    ] {
        let found = errors(with("vllm", PrefixCacheReset::Off, Some(bad)));
        assert_eq!(found.len(), 1, "{bad}");
        assert_eq!(found[0].0, "reset_prefix_cache_url", "{bad}");
    }

    let route = with("sglang", PrefixCacheReset::BeforeRun, None)
        .prefix_cache_reset_route()
        .and_then(Result::ok)
        .map(|route| (route.engine, route.url));
    assert_eq!(
        route,
        Some((
            ResetEngine::Sglang,
            "http://127.0.0.1:8000/flush_cache".to_owned()
        ))
    );
    assert_eq!(
        with("vllm", PrefixCacheReset::Off, None).prefix_cache_reset_route(),
        None
    );
    // An engine not named yet is the engine field's business.
    let unnamed = RunConfig {
        engine: None,
        ..with("x", each, None)
    };
    assert!(errors(unnamed).is_empty());
}
