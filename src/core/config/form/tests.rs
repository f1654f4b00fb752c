//! Tests of the run form: parsing every field, its messages, and config ↔ form round trips.

use super::*;
use crate::core::config::choices::ReasoningEffort;
use crate::core::config::choices::{Arrivals, LoadMode};
use crate::core::config::link::PREVIEW_CHARS;
use crate::core::config::load::LoadOptions;

/// The browser defaults with a model and engine picked, as after the first `/models`
/// fetch from strobe-sim (whose models are `owned_by` "strobe-sim").
pub(crate) fn defaults_with_model() -> RunForm {
    let mut form = RunForm::browser_defaults();
    assert_eq!(form.set_named("model", "sim-model"), Ok(()));
    assert_eq!(form.set_named("engine", "strobe-sim"), Ok(()));
    form
}

/// The errors of a form that must not pass, as `(field, message)` pairs.
pub(crate) fn errors_of(form: &RunForm) -> Vec<(&'static str, String)> {
    match form.to_config() {
        Ok(config) => panic!("expected errors, got {config:?}"),
        Err(errors) => errors
            .into_iter()
            .map(|error| (error.field.as_str(), error.message))
            .collect(),
    }
}

pub(crate) fn form_with(changes: &[(&str, &str)]) -> RunForm {
    let mut form = defaults_with_model();
    for (key, text) in changes {
        assert_eq!(form.set_named(key, *text), Ok(()), "{key}");
    }
    form
}

#[test]
fn browser_defaults_need_only_a_model_and_an_engine() {
    let errors = errors_of(&RunForm::browser_defaults());
    let fields: Vec<&str> = errors.iter().map(|(field, _)| *field).collect();
    assert_eq!(fields, ["model", "engine"], "{errors:?}");
    assert_eq!(errors[1].1, ENGINE_REQUIRED_MESSAGE);

    let config = defaults_with_model().to_config();
    let expected = RunConfig {
        base_url: "http://127.0.0.1:8011/v1".to_owned(),
        model: "sim-model".to_owned(),
        engine: Some("strobe-sim".to_owned()),
        requests: 24,
        concurrency: 4,
        context_tokens: 4_096,
        max_tokens: 128,
        prompt_cache_mode: PromptCacheMode::Unique,
        shared_prefix_tokens: 2_048,
        request_canaries: true,
        timeout_s: 120.0,
        ..RunConfig::default()
    };
    assert_eq!(config, Ok(expected));
}

#[test]
fn get_and_set_know_only_form_fields() {
    let mut form = RunForm::browser_defaults();
    assert_eq!(form.get_named("requests"), Some("24"));
    assert_eq!(form.get_named("api_key"), None);
    assert_eq!(form.set_named("requests", " 4.5"), Ok(()));
    assert_eq!(form.get_named("requests"), Some(" 4.5"));
    assert_eq!(
        form.set_named("burst", "3"),
        Err(UnknownFieldError {
            key: "burst".to_owned()
        })
    );
    assert_eq!(form.get_named("burst"), None);
}

/// Configs that exercise every field away from its default, every enum value, sampled
/// and fixed contexts, strict output and sampling values.
pub(crate) fn sample_configs() -> Vec<RunConfig> {
    let base = RunConfig {
        base_url: "https://gpu-box.example:8443/v1".to_owned(),
        model: "Qwen/Qwen3-8B".to_owned(),
        engine: Some("vllm".to_owned()),
        ..RunConfig::default()
    };
    let mut configs = vec![
        base.clone(),
        RunConfig {
            load: LoadOptions {
                mode: LoadMode::Rate,
                rate: 2.5,
                arrivals: Arrivals::Gamma,
                burstiness: 0.25,
                arrival_seed: Some(-9),
                ramp_s: 30.0,
                ramp_start_rate: Some(0.5),
                duration_s: Some(120.0),
            },
            ..base.clone()
        },
        RunConfig {
            load: LoadOptions {
                mode: LoadMode::Rate,
                rate: 10_000.0,
                arrivals: Arrivals::Constant,
                ..LoadOptions::default()
            },
            concurrency: 64,
            ..base.clone()
        },
        RunConfig {
            context_tokens: 0,
            context_seed: -1_717,
            engine: Some("vllm 0.11".to_owned()),
            gpu: Some("H100 SXM & co".to_owned()),
            ..base.clone()
        },
        RunConfig {
            context_tokens: 65_536,
            response_words: 40,
            controlled_output_policy: ControlledOutputPolicy::Strict,
            request_canaries: true,
            max_tokens: 8_192,
            prompt_cache_mode: PromptCacheMode::Unique,
            shared_prefix_tokens: 12,
            ..base.clone()
        },
        RunConfig {
            temperature: Some(0.7),
            top_p: Some(0.95),
            timeout_s: 0.25,
            max_model_len: 131_072,
            margin: 0,
            requests: 10_000,
            concurrency: 256,
            context_seed: i64::MIN,
            ..base.clone()
        },
        RunConfig {
            temperature: Some(0.0),
            top_p: Some(1.0),
            timeout_s: 3_600.0,
            context_seed: i64::MAX,
            ..base.clone()
        },
    ];
    for &thinking_mode in ThinkingMode::ALL {
        configs.push(RunConfig {
            thinking_mode,
            ..base.clone()
        });
    }
    for &effort in ReasoningEffort::ALL {
        configs.push(RunConfig {
            reasoning_effort: Some(effort),
            ..base.clone()
        });
    }
    for (warmup, chunk_traces) in [(false, false), (false, true), (true, true)] {
        configs.push(RunConfig {
            client: ClientOptions {
                warmup,
                chunk_traces,
                ..ClientOptions::default()
            },
            ..base.clone()
        });
    }
    configs.push(RunConfig {
        client: ClientOptions {
            measurement: MeasurementThread::Main,
            live_view: LiveView::End,
            endpoint_pool: vec![
                "http://127.0.0.1:8001/v1".to_owned(),
                "http://127.0.0.1:8002/v1".to_owned(),
            ],
            context_calibration: true,
            ..ClientOptions::default()
        },
        ..base.clone()
    });
    configs
}

#[test]
fn config_to_form_to_config_is_identity() {
    for config in sample_configs() {
        assert_eq!(config.validate(), Ok(()), "{config:?}");
        assert_eq!(RunForm::from_config(&config).to_config(), Ok(config));
    }
}

#[test]
fn each_unparsable_field_names_itself_and_what_is_allowed() {
    let cases = [
        (
            "concurrency",
            "4.5",
            r#"concurrency must be a whole number from 1 to 256 (got "4.5")"#,
        ),
        (
            "requests",
            "-3",
            r#"requests must be a whole number from 1 to 10000 (got "-3")"#,
        ),
        (
            "context_tokens",
            "",
            r#"context_tokens must be a whole number from 0 to 1048576 (got "")"#,
        ),
        (
            "context_seed",
            "1.5",
            r#"context_seed must be a whole number, e.g. 0 or -5 (got "1.5")"#,
        ),
        (
            "shared_prefix_tokens",
            "8k",
            r#"shared_prefix_tokens must be a whole number from 0 to 262144 (got "8k")"#,
        ),
        (
            "max_tokens",
            "lots",
            r#"max_tokens must be a whole number from 1 to 65536 (got "lots")"#,
        ),
        (
            "response_words",
            "1e3",
            r#"response_words must be a whole number from 0 to 65536 (got "1e3")"#,
        ),
        (
            "max_model_len",
            "99999999999999999999999",
            r#"max_model_len must be a whole number from 0 to 1048576 (got "99999999999999999999999")"#,
        ),
        (
            "margin",
            "1,024",
            r#"margin must be a whole number from 0 to 1048576 (got "1,024")"#,
        ),
        (
            "temperature",
            "hot",
            r#"temperature must be a number from 0 to 2, or empty (got "hot")"#,
        ),
        (
            "top_p",
            "NaN",
            r#"top_p must be a number above 0 and at most 1, or empty (got "NaN")"#,
        ),
        (
            "timeout_s",
            "",
            r#"timeout_s must be a number above 0 and at most 3600 (got "")"#,
        ),
        (
            "request_canaries",
            "maybe",
            r#"request_canaries must be true or false (got "maybe")"#,
        ),
        (
            "prompt_cache_mode",
            "private",
            r#"prompt_cache_mode must be one of shared, unique (got "private")"#,
        ),
        (
            "controlled_output_policy",
            "",
            r#"controlled_output_policy must be one of observe, strict (got "")"#,
        ),
        (
            "thinking_mode",
            "on",
            r#"thinking_mode must be one of default, enabled, disabled, unsupported (got "on")"#,
        ),
        (
            "reasoning_effort",
            "extreme",
            r#"reasoning_effort must be one of none, minimal, low, medium, high, max, xhigh, or empty (got "extreme")"#,
        ),
    ];
    for (key, text, message) in cases {
        let errors = errors_of(&form_with(&[(key, text)]));
        assert_eq!(errors, [(key, message.to_owned())], "{key}");
    }
}

#[test]
fn long_typed_text_is_quoted_shortened() {
    let errors = errors_of(&form_with(&[("requests", &"9".repeat(500))]));
    assert_eq!(errors.len(), 1);
    assert_eq!(
        errors[0].1,
        format!(
            "requests must be a whole number from 1 to 10000 (got \"{}\"…)",
            "9".repeat(PREVIEW_CHARS)
        )
    );
}

#[test]
fn non_finite_decimals_are_rejected() {
    for text in ["inf", "-inf", "infinity", "NaN", "1e999", "-1e400"] {
        for key in ["temperature", "top_p", "timeout_s"] {
            let errors = errors_of(&form_with(&[(key, text)]));
            assert_eq!(errors.len(), 1, "{key}={text}");
            assert_eq!(errors[0].0, key);
            assert!(errors[0].1.contains(&format!("(got {text:?})")));
        }
    }
}

#[test]
fn rule_errors_come_from_validate_with_their_field() {
    let errors = errors_of(&form_with(&[("requests", "0"), ("context_tokens", "16")]));
    let fields: Vec<&str> = errors.iter().map(|(field, _)| *field).collect();
    assert_eq!(fields, ["requests", "context_tokens"]);
    assert_eq!(errors[0].1, "requests must be between 1 and 10000 (got 0)");

    let errors = errors_of(&form_with(&[("controlled_output_policy", "strict")]));
    assert_eq!(errors.len(), 1);
    assert_eq!(errors[0].0, "controlled_output_policy");
}

#[test]
fn all_errors_are_returned_together_in_field_order() {
    let form = form_with(&[
        ("model", "  "),
        ("base_url", "ftp://x"),
        ("concurrency", "4.5"),
        ("requests", "0"),
        ("temperature", "hot"),
        ("top_p", "1.5"),
        ("thinking_mode", "disabled"),
        ("reasoning_effort", "high"),
        ("timeout_s", "0"),
    ]);
    let fields: Vec<&str> = errors_of(&form).iter().map(|(field, _)| *field).collect();
    assert_eq!(
        fields,
        [
            "base_url",
            "model",
            "requests",
            "concurrency",
            "temperature",
            "top_p",
            "reasoning_effort",
            "timeout_s"
        ]
    );
}

#[test]
fn rules_reading_an_unparsable_field_wait_for_the_fix() {
    // Strict with response_words "x": only response_words is reported, not the strict rule
    // judging the stand-in 0.
    let errors = errors_of(&form_with(&[
        ("controlled_output_policy", "strict"),
        ("response_words", "x"),
    ]));
    let fields: Vec<&str> = errors.iter().map(|(field, _)| *field).collect();
    assert_eq!(fields, ["response_words"]);

    let errors = errors_of(&form_with(&[("max_tokens", "?"), ("max_model_len", "100")]));
    let fields: Vec<&str> = errors.iter().map(|(field, _)| *field).collect();
    assert_eq!(fields, ["max_tokens"]);

    // Once max_tokens parses, the max_model_len rule reports.
    let errors = errors_of(&form_with(&[
        ("max_tokens", "64"),
        ("max_model_len", "100"),
    ]));
    let fields: Vec<&str> = errors.iter().map(|(field, _)| *field).collect();
    assert_eq!(fields, ["max_model_len"]);
}

#[test]
fn surrounding_whitespace_and_case_are_forgiven() {
    let form = form_with(&[
        ("base_url", "  http://h:1/v1\t"),
        ("model", " m "),
        ("engine", " vllm\t"),
        ("gpu", " A100 "),
        ("requests", " 7\n"),
        ("context_seed", " -9 "),
        ("prompt_cache_mode", " Shared "),
        ("request_canaries", " OFF "),
        ("temperature", " 0.5 "),
        ("top_p", "   "),
        ("reasoning_effort", " "),
        ("timeout_s", " 30 "),
    ]);
    let config = form.to_config();
    let expected = RunConfig {
        base_url: "http://h:1/v1".to_owned(),
        model: "m".to_owned(),
        engine: Some("vllm".to_owned()),
        gpu: Some("A100".to_owned()),
        requests: 7,
        context_seed: -9,
        prompt_cache_mode: PromptCacheMode::Shared,
        request_canaries: false,
        temperature: Some(0.5),
        top_p: None,
        reasoning_effort: None,
        timeout_s: 30.0,
        ..defaults_with_model().to_config().unwrap_or_default()
    };
    assert_eq!(config, Ok(expected));

    // An optional text field holding only whitespace is unset, not a blank label.
    let config = form_with(&[("gpu", " \t ")]).to_config();
    assert_eq!(config.map(|config| config.gpu), Ok(None));
}

#[test]
fn toggles_accept_checkbox_and_link_spellings() {
    for (text, expected) in [
        ("true", true),
        ("on", true),
        ("1", true),
        ("Yes", true),
        ("false", false),
        ("off", false),
        ("0", false),
        ("NO", false),
    ] {
        let config = form_with(&[("request_canaries", text)]).to_config();
        assert_eq!(
            config.map(|config| config.request_canaries),
            Ok(expected),
            "{text}"
        );
    }
}

#[test]
fn settings_without_a_field_keep_their_defaults() {
    let config = RunConfig {
        base_url: "http://h/v1".to_owned(),
        model: "m".to_owned(),
        engine: Some("sglang".to_owned()),
        tier: Some("t1".to_owned()),
        burst: 8,
        clock_domain_id: Some("lab".to_owned()),
        ..RunConfig::default()
    };
    let defaults = RunConfig::default();
    let reopened = RunForm::from_config(&config).to_config();
    assert_eq!(
        reopened.map(|c| (c.tier, c.burst, c.clock_domain_id)),
        Ok((defaults.tier, defaults.burst, defaults.clock_domain_id))
    );
}
#[test]
fn an_empty_engine_is_reported_with_the_other_errors() {
    for engine in ["", "   ", "\t\n"] {
        let errors = errors_of(&form_with(&[("engine", engine)]));
        assert_eq!(
            errors,
            [("engine", ENGINE_REQUIRED_MESSAGE.to_owned())],
            "{engine:?}"
        );

        let form = form_with(&[
            ("concurrency", "4.5"),
            ("engine", engine),
            ("model", ""),
            ("base_url", "ftp://x"),
            ("timeout_s", "0"),
        ]);
        let fields: Vec<&str> = errors_of(&form).iter().map(|(field, _)| *field).collect();
        assert_eq!(
            fields,
            ["base_url", "model", "engine", "concurrency", "timeout_s"],
            "{engine:?}"
        );
    }
    // The message says why and what to do.
    assert!(ENGINE_REQUIRED_MESSAGE.contains("compared or combined"));
    assert!(ENGINE_REQUIRED_MESSAGE.contains("Check endpoint"));
}

#[test]
fn a_named_engine_is_accepted_and_kept_through_links() {
    for engine in [
        "vllm",
        "llamacpp",
        "llama.cpp",
        "strobe-sim",
        "sglang 0.5 & co",
    ] {
        let form = form_with(&[("engine", engine)]);
        let config = form.to_config();
        assert_eq!(
            config.as_ref().map(|config| config.engine.as_deref()),
            Ok(Some(engine)),
            "{engine}"
        );
        // Form → link → form → config keeps the engine.
        let (reopened, notices) = RunForm::from_query(&form.to_query());
        assert!(notices.is_empty(), "{notices:?}");
        assert_eq!(reopened.get_named("engine"), Some(engine));
        assert_eq!(reopened.to_config(), config);
    }
    // Config → form → config keeps it too.
    for config in sample_configs() {
        let engine = config.engine.clone();
        assert!(engine.is_some());
        let reopened = RunForm::from_config(&config).to_config();
        assert_eq!(reopened.map(|config| config.engine), Ok(engine));
    }
}

#[test]
fn repeats_default_to_one_travel_in_the_link_and_refuse_out_of_range() {
    assert_eq!(RunForm::browser_defaults().to_repeats(), Ok(1));
    let form = form_with(&[("repeats", "3")]);
    assert_eq!(form.to_repeats(), Ok(3));
    assert!(form.to_query().contains("repeats=3"), "{}", form.to_query());
    let (reopened, notices) = RunForm::from_query(&form.to_query());
    assert!(notices.is_empty(), "{notices:?}");
    assert_eq!(reopened.to_repeats(), Ok(3));
    for text in ["0", "21", "two"] {
        let errors = form_with(&[("repeats", text)])
            .to_repeats()
            .expect_err("out of range");
        assert_eq!(errors.len(), 1, "{text}");
        assert_eq!(errors[0].field, FieldKey::Repeats);
        // The run form shows the error with the others.
        let all = form_with(&[("repeats", text)])
            .to_config()
            .expect_err("refused");
        assert!(
            all.iter().any(|error| error.field == FieldKey::Repeats),
            "{text}"
        );
    }
    let error = &form_with(&[("repeats", "21")])
        .to_repeats()
        .expect_err("21")[0];
    assert!(
        error
            .message
            .starts_with("repeats must be from 1 to 20 (got 21)"),
        "{}",
        error.message
    );
}
