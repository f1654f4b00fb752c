//! Tests of the page's link: reading a query or a whole address, writing one back.

use super::*;
use crate::core::config::choices::LiveView;
use crate::core::config::choices::MeasurementThread;
use crate::core::config::error::ConfigError;
use crate::core::config::fields::{FieldGroup, FieldKey, FieldKind, LIVE_VIEWS};
use crate::core::config::form::tests::*;
use crate::core::config::settings::ClientOptions;

/// The client options a link gives, once the endpoint check has filled model and engine;
/// the link itself must read without notices.
fn client_options_of_link(query: &str) -> Result<ClientOptions, Vec<ConfigError>> {
    let (mut form, notices) = RunForm::from_query(query);
    assert!(notices.is_empty(), "{notices:?}");
    assert_eq!(form.set_named("model", "sim-model"), Ok(()));
    assert_eq!(form.set_named("engine", "strobe-sim"), Ok(()));
    form.to_config().map(|config| config.client)
}

#[test]
fn pool_and_measurement_thread_travel_in_the_link() {
    let client = client_options_of_link(
        "pool=http%3A%2F%2F127.0.0.1%3A8012%2Fv1%2C%20http%3A%2F%2F127.0.0.1%3A8013%2Fv1&measurement=main",
    );
    assert_eq!(
        client,
        Ok(ClientOptions {
            measurement: MeasurementThread::Main,
            endpoint_pool: vec![
                "http://127.0.0.1:8012/v1".to_owned(),
                "http://127.0.0.1:8013/v1".to_owned()
            ],
            ..ClientOptions::default()
        })
    );
    let errors = errors_of(&form_with(&[("pool", "http://127.0.0.1:8012/v1 nonsense")]));
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(errors[0].0, "pool");
    assert!(errors[0].1.contains("\"nonsense\""), "{errors:?}");
    let errors = errors_of(&form_with(&[("measurement", "gpu")]));
    assert_eq!(
        errors,
        [(
            "measurement",
            "measurement must be one of worker, main (got \"gpu\")".to_owned()
        )]
    );
    let spec = field_spec("pool").map(|spec| (spec.kind, spec.group));
    assert_eq!(spec, Some((FieldKind::Text, FieldGroup::Endpoint)));
}

#[test]
fn the_live_view_travels_in_the_link() {
    assert_eq!(
        client_options_of_link("measurement=main&live_view=END"),
        Ok(ClientOptions {
            measurement: MeasurementThread::Main,
            live_view: LiveView::End,
            ..ClientOptions::default()
        })
    );
    // Only a change from the default reaches the link.
    let quiet = form_with(&[("live_view", "end")]);
    assert_eq!(
        quiet.to_query(),
        "model=sim-model&engine=strobe-sim&live_view=end"
    );
    let errors = errors_of(&form_with(&[("live_view", "never")]));
    assert_eq!(
        errors,
        [(
            "live_view",
            "live_view must be one of during, end (got \"never\")".to_owned()
        )]
    );
    let spec = field_spec("live_view").map(|spec| (spec.kind, spec.group));
    assert_eq!(
        spec,
        Some((FieldKind::Choice(LIVE_VIEWS), FieldGroup::Load))
    );
}

#[test]
fn context_calibration_travels_in_the_link() {
    assert_eq!(
        client_options_of_link("context_calibration=on"),
        Ok(ClientOptions {
            context_calibration: true,
            ..ClientOptions::default()
        })
    );
    let calibrated = form_with(&[("context_calibration", "true")]);
    assert_eq!(
        calibrated.to_query(),
        "model=sim-model&engine=strobe-sim&context_calibration=true"
    );
    let errors = errors_of(&form_with(&[("context_calibration", "server")]));
    assert_eq!(
        errors,
        [(
            "context_calibration",
            "context_calibration must be true or false (got \"server\")".to_owned()
        )]
    );
    let spec = field_spec("context_calibration").map(|spec| (spec.kind, spec.group));
    assert_eq!(spec, Some((FieldKind::Toggle, FieldGroup::Prompt)));
}

#[test]
fn warmup_and_traces_travel_in_the_link() {
    let defaults = defaults_with_model()
        .to_config()
        .map(|config| config.client);
    assert_eq!(defaults, Ok(ClientOptions::default()));

    let (form, _) = RunForm::from_query("warmup=false&traces=on");
    assert_eq!(form.get_named("warmup"), Some("false"));
    assert_eq!(form.get_named("traces"), Some("on"));
    assert_eq!(
        client_options_of_link("warmup=false&traces=on"),
        Ok(ClientOptions {
            warmup: false,
            chunk_traces: true,
            ..ClientOptions::default()
        })
    );

    // Only a change from the defaults reaches the link, under its own key.
    let cold = form_with(&[("warmup", "false")]);
    assert_eq!(
        cold.to_query(),
        "model=sim-model&engine=strobe-sim&warmup=false"
    );
    let errors = errors_of(&form_with(&[("warmup", "maybe")]));
    assert_eq!(
        errors,
        [(
            "warmup",
            "warmup must be true or false (got \"maybe\")".to_owned()
        )]
    );
    let spec = field_spec("warmup").map(|spec| (spec.kind, spec.group));
    assert_eq!(spec, Some((FieldKind::Toggle, FieldGroup::Load)));
    let spec = field_spec("traces").map(|spec| (spec.kind, spec.group));
    assert_eq!(spec, Some((FieldKind::Toggle, FieldGroup::Load)));
}

#[test]
fn form_to_query_to_form_is_identity() {
    let mut forms: Vec<RunForm> = sample_configs().iter().map(RunForm::from_config).collect();
    // Raw, unparsed text survives a link too, whitespace and all.
    forms.push(form_with(&[
        ("requests", " 4.5 "),
        ("model", "модель/ü 😀"),
        ("engine", "a+b=c&d#e%f"),
        ("temperature", ""),
        ("base_url", "http://h:8000/v1?x=1&y=2#frag"),
    ]));
    for form in forms {
        let query = form.to_query();
        let (reopened, notices) = RunForm::from_query(&query);
        assert_eq!(reopened, form, "{query}");
        assert!(notices.is_empty(), "{notices:?}");
        let (with_question_mark, _) = RunForm::from_query(&format!("?{query}"));
        assert_eq!(with_question_mark, form);
    }
}

#[test]
fn to_query_omits_defaults_and_follows_field_order() {
    let form = form_with(&[("margin", "2048"), ("requests", "8"), ("model", "m")]);
    assert_eq!(
        form.to_query(),
        "model=m&engine=strobe-sim&requests=8&margin=2048"
    );
}

#[test]
fn to_query_percent_encodes_everything_but_unreserved() {
    // Expected values: urllib.parse.quote(text, safe='') in Python 3.11.
    let cases = [
        (
            "base_url",
            "http://h:8000/v1?x=1&y=2#frag",
            "http%3A%2F%2Fh%3A8000%2Fv1%3Fx%3D1%26y%3D2%23frag",
        ),
        ("model", "a b+c", "a%20b%2Bc"),
        (
            "model",
            "модель/ü",
            "%D0%BC%D0%BE%D0%B4%D0%B5%D0%BB%D1%8C%2F%C3%BC",
        ),
        ("engine", "qwen3 & co=1", "qwen3%20%26%20co%3D1"),
        ("engine", "~._-AZaz09", "~._-AZaz09"),
        ("gpu", "😀", "%F0%9F%98%80"),
    ];
    for (key, text, encoded) in cases {
        let mut form = RunForm::browser_defaults();
        assert_eq!(form.set_named(key, text), Ok(()));
        assert_eq!(form.to_query(), format!("{key}={encoded}"));
    }
}

#[test]
fn query_components_decode_like_form_urlencoded() {
    // Expected values: urllib.parse.unquote_plus(text, errors='replace') in Python 3.11.
    let cases = [
        ("%", "%"),
        ("%zz", "%zz"),
        ("%FF%FE", "\u{FFFD}\u{FFFD}"),
        ("a%2Bb+c", "a+b c"),
        ("%4", "%4"),
        ("%e2%82%ac", "€"),
        ("100%", "100%"),
    ];
    for (raw, decoded) in cases {
        // The decoder the link uses, on the component alone, then through the link.
        let component = form_urlencoded::parse(format!("k={raw}").as_bytes())
            .map(|(_, value)| value.into_owned())
            .next();
        assert_eq!(component.as_deref(), Some(decoded), "{raw}");
        let (form, notices) = RunForm::from_query(&format!("model={raw}"));
        assert_eq!(form.get_named("model"), Some(decoded), "{raw}");
        assert!(notices.is_empty());
    }
}

#[test]
fn hostile_queries_never_panic_and_keep_the_rest() {
    let (form, notices) = RunForm::from_query("&&model=a=b=c&&=x&requests&#concurrency=9");
    assert_eq!(form.get_named("model"), Some("a=b=c"));
    // A key without `=` sets the empty text; the fragment is not part of the query.
    assert_eq!(form.get_named("requests"), Some(""));
    assert_eq!(form.get_named("concurrency"), Some("4"));
    assert!(notices.is_empty(), "{notices:?}");

    let (form, _) = RunForm::from_query("model=%E6%A8%A1%E5%9E%8B+%F0%9F%A6%80&gpu=日本");
    assert_eq!(form.get_named("model"), Some("模型 🦀"));
    assert_eq!(form.get_named("gpu"), Some("日本"));

    for query in [
        "%",
        "%%%",
        "=",
        "==&==",
        "?",
        "??model=x",
        "&",
        "#",
        "%zz=%zz",
    ] {
        let (form, _) = RunForm::from_query(query);
        assert_eq!(
            form.get_named("base_url"),
            Some("http://127.0.0.1:8011/v1"),
            "{query}"
        );
    }
}

#[test]
fn overlong_values_are_dropped_with_a_notice() {
    let long = "x".repeat(10_000);
    let (form, notices) = RunForm::from_query(&format!("model=ok&model={long}&gpu=g"));
    assert_eq!(form.get_named("model"), Some("ok"));
    assert_eq!(form.get_named("gpu"), Some("g"));
    assert!(notices.iter().any(|n| n.key == "model"
        && n.message.contains("10000 characters")
        && n.message.contains("2048")));

    // Exactly the limit is kept; the limit counts characters, not bytes.
    let at_limit = "é".repeat(MAX_QUERY_VALUE_CHARS);
    let (form, notices) = RunForm::from_query(&format!("engine={at_limit}"));
    assert_eq!(form.get_named("engine"), Some(at_limit.as_str()));
    assert!(notices.is_empty());

    // A 10k-character unknown key is reported shortened, not echoed in full.
    let (_, notices) = RunForm::from_query(&format!("{long}=1"));
    assert_eq!(notices.len(), 1);
    assert!(notices[0].key.chars().count() <= PREVIEW_CHARS + 1);
    assert!(notices[0].message.len() < 200);
}

#[test]
fn api_keys_in_links_are_never_applied() {
    for query in [
        "api_key=sk-123",
        "API_KEY=sk-123",
        "key=sk-123",
        "Token=sk-123",
        "authorization=Bearer%20sk-123",
        "BEARER=sk-123",
        "api-key=sk-123",
        "openai_api_key=sk-123",
    ] {
        let (form, notices) = RunForm::from_query(&format!("model=m&engine=e&{query}"));
        assert_eq!(
            form,
            form_with(&[("model", "m"), ("engine", "e")]),
            "{query}"
        );
        assert_eq!(notices.len(), 1, "{query}: {notices:?}");
        let notice = &notices[0];
        assert!(notice.message.contains("API key"), "{query}");
        assert!(notice.message.contains("rotate"), "{query}");
        assert!(!notice.message.contains("sk-123"), "{query}");
        assert!(!form.to_query().contains("sk-123"));
    }
    // Repeating the key does not repeat the notice.
    let (_, notices) = RunForm::from_query("api_key=a&api_key=b");
    assert_eq!(notices.len(), 1);
}

#[test]
fn links_never_start_runs() {
    for key in ["autorun", "run", "START", "AutoRun"] {
        let (form, notices) = RunForm::from_query(&format!("{key}=1&requests=3"));
        assert_eq!(form.get_named("requests"), Some("3"));
        assert_eq!(notices.len(), 1);
        assert_eq!(notices[0].key, key);
        assert!(notices[0].message.contains("never start runs"));
    }
}

#[test]
fn unknown_and_repeated_keys_get_notices() {
    let (form, notices) = RunForm::from_query("foo=1&requests=3&Model=x&requests=5&foo=2");
    assert_eq!(form.get_named("requests"), Some("5"));
    assert_eq!(form.get_named("model"), Some(""));
    let keys: Vec<&str> = notices.iter().map(|n| n.key.as_str()).collect();
    assert_eq!(keys, ["requests", "foo", "Model"]);
    assert!(notices[0].message.contains("last value"));
    assert!(notices[1]
        .message
        .contains("\"foo\" is not a strobe setting"));

    let many: Vec<String> = (0..20).map(|i| format!("unknown{i}=1")).collect();
    let (_, notices) = RunForm::from_query(&many.join("&"));
    assert_eq!(notices.len(), MAX_UNKNOWN_KEY_NOTICES + 1);
    assert_eq!(notices[MAX_UNKNOWN_KEY_NOTICES].key, "");
    assert!(notices[MAX_UNKNOWN_KEY_NOTICES]
        .message
        .starts_with("12 more"));
}

#[test]
fn browser_defaults_make_an_empty_query() {
    assert_eq!(RunForm::browser_defaults().to_query(), "");
    let (form, notices) = RunForm::from_query("");
    assert_eq!(form, RunForm::browser_defaults());
    assert!(notices.is_empty());
}

#[test]
fn the_load_shape_travels_in_the_link() {
    let query = "model=m&engine=e&load=rate&rate=20&arrivals=gamma&burstiness=0.5\
                 &arrival_seed=-3&ramp_s=10&ramp_start_rate=2&duration_s=60";
    let (form, notices) = RunForm::from_query(query);
    assert!(notices.is_empty(), "{notices:?}");
    let config = form.to_config().expect("a valid open-loop config");
    assert_eq!(
        config.load,
        crate::core::config::load::LoadOptions {
            mode: crate::core::config::choices::LoadMode::Rate,
            rate: 20.0,
            arrivals: crate::core::config::choices::Arrivals::Gamma,
            burstiness: 0.5,
            arrival_seed: Some(-3),
            ramp_s: 10.0,
            ramp_start_rate: Some(2.0),
            duration_s: Some(60.0),
        }
    );
    assert_eq!(
        RunForm::from_config(&config).to_query(),
        query.replace("\n", "")
    );
    // A closed-loop link carries none of it.
    assert!(!defaults_with_model().to_query().contains("load"));
}

#[test]
fn load_fields_say_what_is_wrong() {
    let errors = errors_of(&form_with(&[
        ("load", "rate"),
        ("rate", "0"),
        ("ramp_s", "5"),
        ("arrival_seed", "x"),
    ]));
    let fields: Vec<&str> = errors.iter().map(|(field, _)| *field).collect();
    assert_eq!(fields, ["rate", "arrival_seed", "ramp_start_rate"]);
    assert!(
        errors[0]
            .1
            .contains("from 0.01 to 10000 requests per second"),
        "{errors:?}"
    );
    assert!(
        errors[1]
            .1
            .contains("a whole number, e.g. 0 or -5, or empty"),
        "{errors:?}"
    );
    assert!(
        errors[2].1.contains("must be set when ramp_s is above 0"),
        "{errors:?}"
    );
    let errors = errors_of(&form_with(&[("load", "open")]));
    assert!(
        errors[0]
            .1
            .contains("load must be one of concurrency, rate"),
        "{errors:?}"
    );
    // In concurrency mode the rate fields are not checked against their bounds.
    assert!(form_with(&[("rate", "0")]).to_config().is_ok());
}

#[test]
fn a_sweep_travels_in_the_link_and_says_what_is_wrong() {
    use crate::core::config::sweep::{SweepKind, SweepSpec};
    let (form, notices) = RunForm::from_query(
        "model=m&engine=e&sweep=concurrency:1,2,4&sweep_max_error=0.1\
         &sweep_stop_saturated=true&sweep_cooldown_s=2",
    );
    assert!(notices.is_empty(), "{notices:?}");
    assert_eq!(
        form.to_sweep(),
        Ok(Some(SweepSpec {
            kind: SweepKind::Concurrency(vec![1, 2, 4]),
            max_error: Some(0.1),
            stop_when_saturated: true,
            cooldown_s: 2.0,
            min_attainment: None,
        }))
    );
    assert!(form.to_config().is_ok(), "a sweep is a valid form");
    assert_eq!(
        defaults_with_model().to_sweep(),
        Ok(None),
        "no sweep by default"
    );
    let auto = form_with(&[("sweep", "auto"), ("sweep_steps", "5")]);
    assert_eq!(
        auto.to_sweep().map(|spec| spec.map(|spec| spec.kind)),
        Ok(Some(SweepKind::Auto { steps: 5 }))
    );
    let errors = errors_of(&form_with(&[
        ("sweep", "rate:fast"),
        ("sweep_steps", "40"),
        ("sweep_max_error", "2"),
    ]));
    let fields: Vec<&str> = errors.iter().map(|(field, _)| *field).collect();
    assert_eq!(fields, ["sweep", "sweep_steps", "sweep_max_error"]);
    assert!(
        errors[0].1.contains("sweep rate values must be numbers"),
        "{errors:?}"
    );
    assert!(errors[1].1.contains("from 3 to 20"), "{errors:?}");
    assert!(errors[2].1.contains("share from 0 to 1"), "{errors:?}");
}

#[test]
fn an_slo_travels_in_the_link_and_says_what_is_wrong() {
    use crate::core::config::slo::{Slo, SloSpec};
    let (form, notices) = RunForm::from_query(
        "model=m&engine=e&slo=ttft:500,tpot:50&slo_target=90&sweep_min_attainment=50",
    );
    assert!(notices.is_empty(), "{notices:?}");
    assert_eq!(
        form.to_slo(),
        Ok(Some(SloSpec {
            slo: "ttft:500,tpot:50".parse::<Slo>().expect("valid"),
            target: 0.9,
            sweep_min_attainment: Some(0.5),
        }))
    );
    assert!(form.to_config().is_ok(), "an SLO is a valid form");
    assert!(
        form.to_query().contains("slo=ttft%3A500%2Ctpot%3A50"),
        "{}",
        form.to_query()
    );
    let defaults = defaults_with_model();
    assert_eq!(defaults.to_slo(), Ok(None), "no SLO by default");
    assert!(
        !defaults.to_query().contains("slo"),
        "the default target stays out"
    );
    let errors = errors_of(&form_with(&[
        ("slo", "ttft:fast"),
        ("slo_target", "0"),
        ("sweep_min_attainment", "101"),
    ]));
    let fields: Vec<&str> = errors.iter().map(|(field, _)| *field).collect();
    assert_eq!(fields, ["sweep_min_attainment", "slo", "slo_target"]);
    assert!(
        errors[0].1.contains("percentage from 0 to 100"),
        "{errors:?}"
    );
    assert!(
        errors[1].1.contains("must be a number of milliseconds"),
        "{errors:?}"
    );
    assert!(
        errors[2].1.contains("above 0 and at most 100"),
        "{errors:?}"
    );
}

#[test]
fn a_whole_page_address_gives_its_query_or_its_fragment() {
    let query = "base_url=http://x/v1&model=m&engine=vllm&requests=4";
    for (link, expected) in [
        (format!("http://127.0.0.1:8080/?{query}"), query),
        (
            format!("https://strobe.example/app/index.html?{query}#top"),
            query,
        ),
        (format!("http://127.0.0.1:8080?{query}"), query),
        (format!("localhost:8080/?{query}"), query),
        (format!("/?{query}"), query),
        (format!("http://127.0.0.1:8080/#{query}"), query),
        (format!("http://127.0.0.1:8080/#?{query}"), query),
        (format!("http://127.0.0.1:8080/#/run?{query}"), query),
        // An empty query gives way to the fragment.
        (format!("http://127.0.0.1:8080/?#{query}"), query),
        ("http://127.0.0.1:8080/".to_owned(), ""),
        // A query stays a query, up to its fragment, with or without its `?`.
        (format!("?{query}"), query),
        (format!("{query}#frag"), query),
        (query.to_owned(), query),
        ("".to_owned(), ""),
    ] {
        assert_eq!(link_query(&link), expected, "{link}");
    }
    let reading = RunForm::read_link(&format!("http://127.0.0.1:8080/?{query}"));
    assert!(reading.notices.is_empty(), "{:?}", reading.notices);
    assert_eq!(reading.form, RunForm::from_query(query).0);
    assert_eq!(
        reading.form.get_named("base_url"),
        Some("http://x/v1"),
        "the address's own host is not the base URL"
    );
}

#[test]
fn an_address_without_settings_says_so() {
    let reading = RunForm::read_link("http://127.0.0.1:8080/");
    assert_eq!(reading.form, RunForm::browser_defaults());
    assert_eq!(reading.notices.len(), 1, "{:?}", reading.notices);
    assert!(
        reading.notices[0].message.contains("holds no settings"),
        "{:?}",
        reading.notices
    );
}

#[test]
fn read_link_names_the_fields_the_link_set() {
    let long = "x".repeat(MAX_QUERY_VALUE_CHARS + 1);
    let reading = RunForm::read_link(&format!(
        "model=m&gpu=&api_key=sk-1&foo=1&engine={long}&requests=3&requests=4"
    ));
    let set: Vec<&str> = reading.set.iter().copied().collect();
    // An empty value sets the field; an ignored key or an over-long value does not.
    assert_eq!(set, ["gpu", "model", "requests"]);
    assert_eq!(reading.form.get_named("requests"), Some("4"));
    assert!(RunForm::read_link("").set.is_empty());
}

#[test]
fn the_prefix_cache_reset_travels_in_the_link_and_is_refused_for_an_engine_without_one() {
    use crate::core::config::choices::PrefixCacheReset;
    assert_eq!(
        client_options_of_link(
            "reset_prefix_cache=before_each_step&reset_prefix_cache_url=http%3A%2F%2Fh%3A1%2Fr"
        ),
        Ok(ClientOptions {
            reset_prefix_cache: PrefixCacheReset::BeforeEachStep,
            reset_prefix_cache_url: Some("http://h:1/r".to_owned()),
            ..ClientOptions::default()
        })
    );
    let (mut form, _) = RunForm::from_query("reset_prefix_cache=before_run&engine=ollama");
    assert_eq!(form.set_named("model", "m"), Ok(()));
    let errors = form.to_config().expect_err("refused");
    assert_eq!(errors.len(), 1);
    assert_eq!(errors[0].field, FieldKey::ResetPrefixCache);
    assert!(errors[0].message.starts_with("Ollama has no route"));
    let mut off = form.clone();
    assert_eq!(off.set_named("reset_prefix_cache", "off"), Ok(()));
    assert!(off.to_config().is_ok());
    assert_eq!(
        off.to_query(),
        "model=m&engine=ollama",
        "the default stays out of the link"
    );
    let (form, _) = RunForm::from_query("reset_prefix_cache=sometimes");
    let errors = form.to_config().expect_err("refused");
    assert!(errors
        .iter()
        .any(|error| error.field == FieldKey::ResetPrefixCache
            && error.message.contains("off, before_run, before_each_step")));
}
