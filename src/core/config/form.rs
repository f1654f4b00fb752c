//! The run form: the raw text the user typed into each field of [`FIELDS`] ([`RunForm`]) and
//! its conversion to a checked [`RunConfig`], every unparsable field named with what is allowed
//! and the rules of [`RunConfig::validate`] reported at their field.

use std::collections::{BTreeMap, BTreeSet};

use thiserror::Error;

use crate::core::config::bounds::{
    DecimalBounds, WholeBounds, REPEATS_BOUNDS, SLO_TARGET_BOUNDS, SWEEP_COOLDOWN_S_BOUNDS,
    SWEEP_MAX_ERROR_BOUNDS, SWEEP_MIN_ATTAINMENT_BOUNDS, SWEEP_STEPS_BOUNDS,
};
use crate::core::config::choices::{
    ApiEndpoint, HistoryMode, OutputLengths, WorkloadOrder, WorkloadTurns,
};
use crate::core::config::choices::{Arrivals, LoadMode};
use crate::core::config::choices::{
    ControlledOutputPolicy, LiveView, MeasurementThread, PrefixCacheReset, PromptCacheMode,
    ThinkingMode,
};
use crate::core::config::error::ConfigError;
use crate::core::config::fields::display_position;
use crate::core::config::fields::FieldKey;
use crate::core::config::fields::FieldKind;
use crate::core::config::fields::FieldSpec;
use crate::core::config::fields::FIELDS;
use crate::core::config::fields::RULE_INPUTS;
use crate::core::config::fields::{
    ARRIVALS, ARRIVAL_SEED, BASE_URL, BURSTINESS, CONCURRENCY, CONTEXT_CALIBRATION, CONTEXT_SEED,
    CONTEXT_TOKENS, CONTROLLED_OUTPUT_POLICY, DURATION_S, ENDPOINT, ENGINE, GPU, HISTORY,
    LIVE_VIEW, LOAD, MARGIN, MAX_MODEL_LEN, MAX_TOKENS, MEASUREMENT, MODEL, OUTPUT_LENGTHS, POOL,
    PROMPT_CACHE_MODE, RAMP_S, RAMP_START_RATE, RATE, REASONING_EFFORT, REPEATS, REQUESTS,
    REQUEST_CANARIES, RESET_PREFIX_CACHE, RESET_PREFIX_CACHE_URL, RESPONSE_WORDS, SERVER_METRICS,
    SERVER_METRICS_INTERVAL_MS, SESSION_HEADER, SHARED_PREFIX_TOKENS, SLO_TARGET, SWEEP_COOLDOWN_S,
    SWEEP_STEPS, SWEEP_STOP_SATURATED, TEMPERATURE, THINKING_MODE, THINK_TIME_MS, TIMEOUT_S, TOP_P,
    TRACES, TRACE_SPEED, WARMUP, WORKLOAD_ORDER, WORKLOAD_SEED, WORKLOAD_TURNS, WORKLOAD_URL,
};
use crate::core::config::load::{LoadOptions, DEFAULT_AUTO_STEPS};
use crate::core::config::settings::{
    ClientOptions, RunConfig, DEFAULT_SERVER_METRICS_INTERVAL_MS, SERVER_METRICS_AUTO,
};
use crate::core::config::slo::{Slo, SloSpec, DEFAULT_SLO_TARGET_PERCENT};
use crate::core::config::sweep::{SweepKind, SweepSpec};
use crate::core::config::workload::WorkloadOptions;
use crate::core::format::quoted_preview;

/// Why an empty engine field blocks a run, and how it gets filled.
const ENGINE_REQUIRED_MESSAGE: &str = "engine must name the serving engine (e.g. vllm, sglang, \
     llama.cpp): artifacts without one cannot be compared or combined; Check endpoint fills it \
     from the server's model list when it can.";

/// [`RunForm::set_named`] was given a key that is not in [`FIELDS`].
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[error("{key:?} is not a run form field; use one of the keys in FIELDS")]
pub struct UnknownFieldError {
    /// The rejected key.
    pub key: String,
}

/// The raw text of every run form field, exactly as typed: a half-typed number is kept, not
/// lost, and only [`RunForm::to_config`] interprets it.
///
/// It holds no secret: the API key lives outside the form (in the page's own state), so
/// neither the form nor the link built by [`RunForm::to_query`] can ever carry one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunForm {
    /// Text per field key; always holds every key of [`FIELDS`] and nothing else.
    pub(crate) texts: BTreeMap<&'static str, String>,
}

impl RunForm {
    /// A form with every field empty.
    fn blank() -> Self {
        Self {
            texts: FIELDS
                .iter()
                .map(|spec| (spec.key, String::new()))
                .collect(),
        }
    }

    /// A blank form with the given fields filled in.
    fn with_texts(texts: impl IntoIterator<Item = (&'static str, String)>) -> Self {
        let mut form = Self::blank();
        for (key, text) in texts {
            if let Some(slot) = form.texts.get_mut(key) {
                *slot = text;
            }
        }
        form
    }

    /// What a first visit shows: a small, quick run against the built-in simulator
    /// (`strobe-sim` on port 8011). The model and engine stay empty until picked from
    /// `/models` (the engine from the model's `owned_by`, see [`engine_hint`](crate::core::config::models::engine_hint)).
    pub fn browser_defaults() -> Self {
        Self::with_texts([
            (BASE_URL.key, "http://127.0.0.1:8011/v1".to_owned()),
            (REQUESTS.key, "24".to_owned()),
            (CONCURRENCY.key, "4".to_owned()),
            (LOAD.key, LoadMode::Concurrency.as_str().to_owned()),
            (RATE.key, "10".to_owned()),
            (ARRIVALS.key, Arrivals::Poisson.as_str().to_owned()),
            (BURSTINESS.key, "1".to_owned()),
            (RAMP_S.key, "0".to_owned()),
            (SWEEP_STEPS.key, DEFAULT_AUTO_STEPS.to_string()),
            (SWEEP_STOP_SATURATED.key, "false".to_owned()),
            (SWEEP_COOLDOWN_S.key, "0".to_owned()),
            (REPEATS.key, "1".to_owned()),
            (SLO_TARGET.key, DEFAULT_SLO_TARGET_PERCENT.to_string()),
            (WARMUP.key, "true".to_owned()),
            (TRACES.key, "false".to_owned()),
            (
                MEASUREMENT.key,
                MeasurementThread::Worker.as_str().to_owned(),
            ),
            (LIVE_VIEW.key, LiveView::During.as_str().to_owned()),
            (SERVER_METRICS.key, SERVER_METRICS_AUTO.to_owned()),
            (
                SERVER_METRICS_INTERVAL_MS.key,
                DEFAULT_SERVER_METRICS_INTERVAL_MS.to_string(),
            ),
            (
                RESET_PREFIX_CACHE.key,
                PrefixCacheReset::Off.as_str().to_owned(),
            ),
            (ENDPOINT.key, ApiEndpoint::Chat.as_str().to_owned()),
            (WORKLOAD_TURNS.key, WorkloadTurns::First.as_str().to_owned()),
            (WORKLOAD_ORDER.key, WorkloadOrder::File.as_str().to_owned()),
            (WORKLOAD_SEED.key, "0".to_owned()),
            (OUTPUT_LENGTHS.key, OutputLengths::File.as_str().to_owned()),
            (HISTORY.key, HistoryMode::Live.as_str().to_owned()),
            (THINK_TIME_MS.key, "0".to_owned()),
            (TRACE_SPEED.key, "1".to_owned()),
            (CONTEXT_TOKENS.key, "4096".to_owned()),
            (CONTEXT_SEED.key, "0".to_owned()),
            (CONTEXT_CALIBRATION.key, "false".to_owned()),
            (
                PROMPT_CACHE_MODE.key,
                PromptCacheMode::Unique.as_str().to_owned(),
            ),
            // Unique mode ignores it; 2048 is a sensible prefix inside the 4096-token context
            // should the user switch to shared.
            (SHARED_PREFIX_TOKENS.key, "2048".to_owned()),
            (MAX_TOKENS.key, "128".to_owned()),
            (RESPONSE_WORDS.key, "0".to_owned()),
            (
                CONTROLLED_OUTPUT_POLICY.key,
                ControlledOutputPolicy::Observe.as_str().to_owned(),
            ),
            (REQUEST_CANARIES.key, "true".to_owned()),
            (THINKING_MODE.key, ThinkingMode::Default.as_str().to_owned()),
            (TIMEOUT_S.key, "120".to_owned()),
            (MAX_MODEL_LEN.key, "0".to_owned()),
            (MARGIN.key, "1024".to_owned()),
        ])
    }

    /// The form showing `config`. Settings the form has no field for (`tier`, `burst`,
    /// `clock_domain_id`, `configuration_fingerprint`) are not carried over.
    pub fn from_config(config: &RunConfig) -> Self {
        let optional_text = |value: &Option<String>| value.clone().unwrap_or_default();
        Self::with_texts([
            (BASE_URL.key, config.base_url.clone()),
            (MODEL.key, config.model.clone()),
            (ENGINE.key, optional_text(&config.engine)),
            (GPU.key, optional_text(&config.gpu)),
            (REQUESTS.key, config.requests.to_string()),
            (CONCURRENCY.key, config.concurrency.to_string()),
            (LOAD.key, config.load.mode.as_str().to_owned()),
            (RATE.key, config.load.rate.to_string()),
            (ARRIVALS.key, config.load.arrivals.as_str().to_owned()),
            (BURSTINESS.key, config.load.burstiness.to_string()),
            (
                ARRIVAL_SEED.key,
                config
                    .load
                    .arrival_seed
                    .map(|seed| seed.to_string())
                    .unwrap_or_default(),
            ),
            (RAMP_S.key, config.load.ramp_s.to_string()),
            (
                RAMP_START_RATE.key,
                decimal_text(config.load.ramp_start_rate),
            ),
            (DURATION_S.key, decimal_text(config.load.duration_s)),
            // A configuration is one run: the sweep fields keep their defaults.
            (SWEEP_STEPS.key, DEFAULT_AUTO_STEPS.to_string()),
            (SWEEP_STOP_SATURATED.key, "false".to_owned()),
            (SWEEP_COOLDOWN_S.key, "0".to_owned()),
            (REPEATS.key, "1".to_owned()),
            (SLO_TARGET.key, DEFAULT_SLO_TARGET_PERCENT.to_string()),
            (POOL.key, config.client.endpoint_pool.join(" ")),
            (SERVER_METRICS.key, config.client.server_metrics.clone()),
            (
                SERVER_METRICS_INTERVAL_MS.key,
                config.client.server_metrics_interval_ms.to_string(),
            ),
            (
                RESET_PREFIX_CACHE.key,
                config.client.reset_prefix_cache.to_string(),
            ),
            (
                RESET_PREFIX_CACHE_URL.key,
                optional_text(&config.client.reset_prefix_cache_url),
            ),
            (WARMUP.key, config.client.warmup.to_string()),
            (TRACES.key, config.client.chunk_traces.to_string()),
            (MEASUREMENT.key, config.client.measurement.to_string()),
            (LIVE_VIEW.key, config.client.live_view.to_string()),
            (ENDPOINT.key, config.endpoint.to_string()),
            (WORKLOAD_URL.key, optional_text(&config.workload.url)),
            (WORKLOAD_TURNS.key, config.workload.turns.to_string()),
            (WORKLOAD_ORDER.key, config.workload.order.to_string()),
            (WORKLOAD_SEED.key, config.workload.seed.to_string()),
            (
                OUTPUT_LENGTHS.key,
                config.workload.output_lengths.to_string(),
            ),
            (HISTORY.key, config.workload.history.to_string()),
            (THINK_TIME_MS.key, config.workload.think_time_ms.to_string()),
            (
                SESSION_HEADER.key,
                optional_text(&config.workload.session_header),
            ),
            (TRACE_SPEED.key, config.workload.trace_speed.to_string()),
            (CONTEXT_TOKENS.key, config.context_tokens.to_string()),
            (CONTEXT_SEED.key, config.context_seed.to_string()),
            (
                CONTEXT_CALIBRATION.key,
                config.client.context_calibration.to_string(),
            ),
            (PROMPT_CACHE_MODE.key, config.prompt_cache_mode.to_string()),
            (
                SHARED_PREFIX_TOKENS.key,
                config.shared_prefix_tokens.to_string(),
            ),
            (MAX_TOKENS.key, config.max_tokens.to_string()),
            (RESPONSE_WORDS.key, config.response_words.to_string()),
            (
                CONTROLLED_OUTPUT_POLICY.key,
                config.controlled_output_policy.to_string(),
            ),
            (REQUEST_CANARIES.key, config.request_canaries.to_string()),
            // `f64`'s Display is the shortest text that parses back to the same value.
            (TEMPERATURE.key, decimal_text(config.temperature)),
            (TOP_P.key, decimal_text(config.top_p)),
            (THINKING_MODE.key, config.thinking_mode.to_string()),
            (
                REASONING_EFFORT.key,
                config
                    .reasoning_effort
                    .map(|effort| effort.to_string())
                    .unwrap_or_default(),
            ),
            (TIMEOUT_S.key, config.timeout_s.to_string()),
            (MAX_MODEL_LEN.key, config.max_model_len.to_string()),
            (MARGIN.key, config.margin.to_string()),
        ])
    }

    /// The text of field `key`.
    pub fn get(&self, key: FieldKey) -> &str {
        self.text(key.spec())
    }

    /// Replaces the text of field `key` with exactly `text` (no trimming: that is
    /// [`RunForm::to_config`]'s job, so the input shows what was typed).
    pub fn set(&mut self, key: FieldKey, text: impl Into<String>) {
        if let Some(slot) = self.texts.get_mut(key.as_str()) {
            *slot = text.into();
        }
    }

    /// The text of the field named `key` (a name from outside the code), or `None` when the
    /// form has no such field.
    pub fn get_named(&self, key: &str) -> Option<&str> {
        self.texts.get(key).map(String::as_str)
    }

    /// Like [`RunForm::set`] for a field named by text; an unknown name is an error that says
    /// so.
    pub fn set_named(
        &mut self,
        key: &str,
        text: impl Into<String>,
    ) -> Result<(), UnknownFieldError> {
        match FieldKey::named(key) {
            Some(field) => {
                self.set(field, text);
                Ok(())
            }
            None => Err(UnknownFieldError {
                key: key.to_owned(),
            }),
        }
    }

    /// The text of a field of [`FIELDS`] (always present by construction).
    pub(crate) fn text(&self, spec: &FieldSpec) -> &str {
        self.texts.get(spec.key).map_or("", String::as_str)
    }

    /// Parses every field and checks the result with [`RunConfig::validate`].
    ///
    /// Returns every problem at once, in [`FIELDS`] order: fields that do not parse, and rule
    /// violations of the fields that do. Surrounding whitespace is ignored; empty optional
    /// fields become `None`. `engine` is required here although [`RunConfig`] allows `None`:
    /// a browser run always writes an artifact, and readers reject one without an engine.
    /// Settings the form has no field for keep [`RunConfig::default`].
    pub fn to_config(&self) -> Result<RunConfig, Vec<ConfigError>> {
        let defaults = RunConfig::default();
        let mut parser = FieldParser {
            form: self,
            errors: Vec::new(),
        };
        let config = RunConfig {
            base_url: parser.required_text(FieldKey::BaseUrl),
            model: parser.required_text(FieldKey::Model),
            engine: parser.engine(FieldKey::Engine),
            gpu: parser.optional_text(FieldKey::Gpu),
            requests: parser
                .unsigned(FieldKey::Requests)
                .unwrap_or(defaults.requests),
            concurrency: parser
                .unsigned(FieldKey::Concurrency)
                .unwrap_or(defaults.concurrency),
            context_tokens: parser
                .unsigned(FieldKey::ContextTokens)
                .unwrap_or(defaults.context_tokens),
            context_seed: parser
                .signed(FieldKey::ContextSeed)
                .unwrap_or(defaults.context_seed),
            prompt_cache_mode: parser
                .choice(FieldKey::PromptCacheMode)
                .unwrap_or(defaults.prompt_cache_mode),
            shared_prefix_tokens: parser
                .unsigned(FieldKey::SharedPrefixTokens)
                .unwrap_or(defaults.shared_prefix_tokens),
            max_tokens: parser
                .unsigned(FieldKey::MaxTokens)
                .unwrap_or(defaults.max_tokens),
            response_words: parser
                .unsigned(FieldKey::ResponseWords)
                .unwrap_or(defaults.response_words),
            controlled_output_policy: parser
                .choice(FieldKey::ControlledOutputPolicy)
                .unwrap_or(defaults.controlled_output_policy),
            request_canaries: parser
                .toggle(FieldKey::RequestCanaries)
                .unwrap_or(defaults.request_canaries),
            temperature: parser
                .optional_decimal(FieldKey::Temperature)
                .unwrap_or(None),
            top_p: parser.optional_decimal(FieldKey::TopP).unwrap_or(None),
            thinking_mode: parser
                .choice(FieldKey::ThinkingMode)
                .unwrap_or(defaults.thinking_mode),
            reasoning_effort: parser
                .optional_choice(FieldKey::ReasoningEffort)
                .unwrap_or(None),
            timeout_s: parser
                .decimal(FieldKey::TimeoutS)
                .unwrap_or(defaults.timeout_s),
            max_model_len: parser
                .unsigned(FieldKey::MaxModelLen)
                .unwrap_or(defaults.max_model_len),
            margin: parser.unsigned(FieldKey::Margin).unwrap_or(defaults.margin),
            load: LoadOptions {
                mode: parser.choice(FieldKey::Load).unwrap_or(defaults.load.mode),
                rate: parser.decimal(FieldKey::Rate).unwrap_or(defaults.load.rate),
                arrivals: parser
                    .choice(FieldKey::Arrivals)
                    .unwrap_or(defaults.load.arrivals),
                burstiness: parser
                    .decimal(FieldKey::Burstiness)
                    .unwrap_or(defaults.load.burstiness),
                arrival_seed: parser
                    .optional_signed(FieldKey::ArrivalSeed)
                    .unwrap_or(None),
                ramp_s: parser
                    .decimal(FieldKey::RampS)
                    .unwrap_or(defaults.load.ramp_s),
                ramp_start_rate: parser
                    .optional_decimal(FieldKey::RampStartRate)
                    .unwrap_or(None),
                duration_s: parser.optional_decimal(FieldKey::DurationS).unwrap_or(None),
            },
            client: ClientOptions {
                warmup: parser
                    .toggle(FieldKey::Warmup)
                    .unwrap_or(defaults.client.warmup),
                chunk_traces: parser
                    .toggle(FieldKey::Traces)
                    .unwrap_or(defaults.client.chunk_traces),
                measurement: parser
                    .choice(FieldKey::Measurement)
                    .unwrap_or(defaults.client.measurement),
                live_view: parser
                    .choice(FieldKey::LiveView)
                    .unwrap_or(defaults.client.live_view),
                endpoint_pool: parser.url_list(FieldKey::Pool),
                context_calibration: parser
                    .toggle(FieldKey::ContextCalibration)
                    .unwrap_or(defaults.client.context_calibration),
                server_metrics: parser
                    .optional_text(FieldKey::ServerMetrics)
                    .unwrap_or(defaults.client.server_metrics),
                server_metrics_interval_ms: parser
                    .unsigned(FieldKey::ServerMetricsIntervalMs)
                    .unwrap_or(defaults.client.server_metrics_interval_ms),
                reset_prefix_cache: parser
                    .choice(FieldKey::ResetPrefixCache)
                    .unwrap_or(defaults.client.reset_prefix_cache),
                reset_prefix_cache_url: parser.optional_text(FieldKey::ResetPrefixCacheUrl),
            },
            endpoint: parser
                .choice(FieldKey::Endpoint)
                .unwrap_or(defaults.endpoint),
            workload: WorkloadOptions {
                url: parser.optional_text(FieldKey::WorkloadUrl),
                turns: parser
                    .choice(FieldKey::WorkloadTurns)
                    .unwrap_or(defaults.workload.turns),
                order: parser
                    .choice(FieldKey::WorkloadOrder)
                    .unwrap_or(defaults.workload.order),
                seed: parser
                    .signed(FieldKey::WorkloadSeed)
                    .unwrap_or(defaults.workload.seed),
                output_lengths: parser
                    .choice(FieldKey::OutputLengths)
                    .unwrap_or(defaults.workload.output_lengths),
                history: parser
                    .choice(FieldKey::History)
                    .unwrap_or(defaults.workload.history),
                think_time_ms: parser
                    .unsigned(FieldKey::ThinkTimeMs)
                    .unwrap_or(defaults.workload.think_time_ms),
                session_header: parser.optional_text(FieldKey::SessionHeader),
                trace_speed: parser
                    .decimal(FieldKey::TraceSpeed)
                    .unwrap_or(defaults.workload.trace_speed),
            },
            ..defaults
        };

        // The sweep and SLO fields are not settings of one run; their errors show with the
        // others.
        parser.sweep();
        parser.slo();
        parser.repeats();
        let mut errors = parser.errors;
        if let Err(rule_errors) = config.validate() {
            let unparsed: BTreeSet<FieldKey> = errors.iter().map(|error| error.field).collect();
            let reads_unparsed = |field: FieldKey| {
                unparsed.contains(&field)
                    || RULE_INPUTS.iter().any(|(rule_field, inputs)| {
                        *rule_field == field && inputs.iter().any(|input| unparsed.contains(input))
                    })
            };
            errors.extend(
                rule_errors
                    .into_iter()
                    .filter(|error| !reads_unparsed(error.field)),
            );
        }
        if errors.is_empty() {
            Ok(config)
        } else {
            errors.sort_by_key(|error| display_position(error.field));
            Err(errors)
        }
    }

    /// How many times to run the plan (`repeats`, 1–20); the field's error otherwise.
    pub fn to_repeats(&self) -> Result<u64, Vec<ConfigError>> {
        let mut parser = FieldParser {
            form: self,
            errors: Vec::new(),
        };
        let repeats = parser.repeats();
        if parser.errors.is_empty() {
            Ok(repeats.unwrap_or(1))
        } else {
            Err(parser.errors)
        }
    }

    /// The sweep the form asks for, `None` when its `sweep` field is empty; the errors of the
    /// sweep fields otherwise (the run's own fields are [`RunForm::to_config`]'s).
    pub fn to_sweep(&self) -> Result<Option<SweepSpec>, Vec<ConfigError>> {
        let mut parser = FieldParser {
            form: self,
            errors: Vec::new(),
        };
        let sweep = parser.sweep();
        if parser.errors.is_empty() {
            Ok(sweep)
        } else {
            Err(parser.errors)
        }
    }
}

impl RunForm {
    /// The SLO the form asks for with its target and sweep floor, `None` when its `slo` field
    /// is empty; the errors of the SLO fields otherwise.
    pub fn to_slo(&self) -> Result<Option<SloSpec>, Vec<ConfigError>> {
        let mut parser = FieldParser {
            form: self,
            errors: Vec::new(),
        };
        let slo = parser.slo();
        if parser.errors.is_empty() {
            Ok(slo)
        } else {
            Err(parser.errors)
        }
    }
}

/// The form text of an optional decimal: empty for `None`.
fn decimal_text(value: Option<f64>) -> String {
    value.map(|value| value.to_string()).unwrap_or_default()
}

/// Parses form fields one by one, collecting an error per field that does not parse.
struct FieldParser<'a> {
    form: &'a RunForm,
    errors: Vec<ConfigError>,
}

impl FieldParser<'_> {
    /// The trimmed text of a field.
    fn trimmed(&self, key: FieldKey) -> &str {
        self.form.get(key).trim()
    }

    fn reject(&mut self, key: FieldKey, message: String) {
        self.errors.push(ConfigError {
            field: key,
            message,
        });
    }

    /// Trimmed text; emptiness is the validator's call (it names the fix).
    fn required_text(&self, key: FieldKey) -> String {
        self.trimmed(key).to_owned()
    }

    /// The trimmed engine name. Unlike `gpu` it may not be empty: readers reject an artifact
    /// whose `engine` is null (ARTIFACT.md §9), and no [`RunConfig::validate`] rule checks it
    /// because the CLI may leave it unset.
    fn engine(&mut self, key: FieldKey) -> Option<String> {
        let engine = self.optional_text(key);
        if engine.is_none() {
            self.reject(key, ENGINE_REQUIRED_MESSAGE.to_owned());
        }
        engine
    }

    /// The entries of a list field, split at whitespace and commas; each entry is checked by
    /// the validator, which names the bad one.
    fn url_list(&self, key: FieldKey) -> Vec<String> {
        list_entries(self.trimmed(key)).map(str::to_owned).collect()
    }

    /// Trimmed text, `None` when empty.
    fn optional_text(&self, key: FieldKey) -> Option<String> {
        Some(self.trimmed(key).to_owned()).filter(|text| !text.is_empty())
    }

    /// The "must be a whole number from … to …" message of an integer field.
    fn whole_number_error(&mut self, key: FieldKey, text: &str) {
        let allowed = match key.spec().kind {
            FieldKind::Integer(bounds) if bounds.is_any() => {
                "a whole number, e.g. 0 or -5".to_owned()
            }
            FieldKind::Integer(WholeBounds { min, max }) => {
                format!("a whole number from {min} to {max}")
            }
            FieldKind::OptionalInteger(bounds) if bounds.is_any() => {
                "a whole number, e.g. 0 or -5, or empty".to_owned()
            }
            FieldKind::OptionalInteger(WholeBounds { min, max }) => {
                format!("a whole number from {min} to {max}, or empty")
            }
            _ => "a whole number".to_owned(),
        };
        let message = format!("{} must be {allowed} (got {})", key, quoted_preview(text));
        self.reject(key, message);
    }

    /// A non-negative whole number. Range checks are the validator's; this only rejects text
    /// that is not a whole number at all (including negative ones, which no `u64` setting takes).
    fn unsigned(&mut self, key: FieldKey) -> Option<u64> {
        let text = self.trimmed(key).to_owned();
        let parsed = text.parse::<u64>().ok();
        if parsed.is_none() {
            self.whole_number_error(key, &text);
        }
        parsed
    }

    /// A whole number that may be negative.
    fn signed(&mut self, key: FieldKey) -> Option<i64> {
        let text = self.trimmed(key).to_owned();
        let parsed = text.parse::<i64>().ok();
        if parsed.is_none() {
            self.whole_number_error(key, &text);
        }
        parsed
    }

    /// `repeats`: `None` when it does not parse or is out of range (its error is recorded).
    fn repeats(&mut self) -> Option<u64> {
        let repeats = self.unsigned(FieldKey::Repeats)?;
        if REPEATS_BOUNDS.admits(repeats) {
            return Some(repeats);
        }
        self.reject(
            FieldKey::Repeats,
            format!(
                "repeats must be from {} to {} (got {repeats}); 3 shows whether a difference \
                 between runs is more than noise",
                REPEATS_BOUNDS.min, REPEATS_BOUNDS.max
            ),
        );
        None
    }

    /// The sweep fields: `None` when `sweep` is empty or a field does not parse (its error is
    /// recorded).
    fn sweep(&mut self) -> Option<SweepSpec> {
        let steps = self.unsigned(FieldKey::SweepSteps);
        let max_error = self.optional_decimal(FieldKey::SweepMaxError);
        let stop_when_saturated = self.toggle(FieldKey::SweepStopSaturated);
        let cooldown_s = self.decimal(FieldKey::SweepCooldownS);
        if let Some(steps) = steps.filter(|steps| !SWEEP_STEPS_BOUNDS.admits(*steps)) {
            self.reject(
                FieldKey::SweepSteps,
                format!(
                    "sweep_steps must be from {} to {} (got {steps})",
                    SWEEP_STEPS_BOUNDS.min, SWEEP_STEPS_BOUNDS.max
                ),
            );
        }
        let share = SWEEP_MAX_ERROR_BOUNDS;
        if let Some(Some(max)) = max_error.filter(|max| max.is_some_and(|m| !share.admits(m))) {
            self.reject(
                FieldKey::SweepMaxError,
                format!(
                    "sweep_max_error must be a share from {} to {} (got {max}); 0.05 is 5 %",
                    share.min, share.max
                ),
            );
        }
        let cooldown = SWEEP_COOLDOWN_S_BOUNDS;
        if let Some(seconds) = cooldown_s.filter(|c| !cooldown.admits(*c)) {
            self.reject(
                FieldKey::SweepCooldownS,
                format!(
                    "sweep_cooldown_s must be from {} to {} seconds (got {seconds})",
                    cooldown.min, cooldown.max
                ),
            );
        }
        let text = self.trimmed(FieldKey::Sweep).to_owned();
        if text.is_empty() {
            return None;
        }
        let kind = match text.parse::<SweepKind>() {
            Ok(SweepKind::Auto { .. }) => SweepKind::Auto {
                steps: steps.unwrap_or(DEFAULT_AUTO_STEPS),
            },
            Ok(kind) => kind,
            Err(error) => {
                self.reject(FieldKey::Sweep, error.0);
                return None;
            }
        };
        Some(SweepSpec {
            kind,
            max_error: max_error.flatten(),
            stop_when_saturated: stop_when_saturated.unwrap_or(false),
            cooldown_s: cooldown_s.unwrap_or(0.0),
            min_attainment: None,
        })
    }

    /// The SLO fields: `None` when `slo` is empty or a field does not parse (its error is
    /// recorded). Percentages become shares.
    fn slo(&mut self) -> Option<SloSpec> {
        let target = self.decimal(FieldKey::SloTarget);
        let floor = self.optional_decimal(FieldKey::SweepMinAttainment);
        let (percent, floor_percent) = (SLO_TARGET_BOUNDS, SWEEP_MIN_ATTAINMENT_BOUNDS);
        if let Some(target) = target.filter(|t| !percent.admits(*t)) {
            self.reject(
                FieldKey::SloTarget,
                format!(
                    "slo_target must be a percentage above {} and at most {} (got {target})",
                    percent.min, percent.max
                ),
            );
        }
        if let Some(Some(floor)) = floor.filter(|f| f.is_some_and(|f| !floor_percent.admits(f))) {
            self.reject(
                FieldKey::SweepMinAttainment,
                format!(
                    "sweep_min_attainment must be a percentage from {} to {} (got {floor})",
                    floor_percent.min, floor_percent.max
                ),
            );
        }
        let slo = match Slo::parse_optional(self.trimmed(FieldKey::Slo)) {
            Ok(slo) => slo?,
            Err(error) => {
                self.reject(FieldKey::Slo, error.to_string());
                return None;
            }
        };
        let target = target.filter(|t| percent.admits(*t))?;
        let floor = floor?.filter(|f| floor_percent.admits(*f));
        Some(SloSpec {
            slo,
            target: target / 100.0,
            sweep_min_attainment: floor.map(|f| f / 100.0),
        })
    }

    /// `Some(None)` when empty, `Some(Some(n))` for a whole number, `None` when invalid.
    fn optional_signed(&mut self, key: FieldKey) -> Option<Option<i64>> {
        if self.trimmed(key).is_empty() {
            Some(None)
        } else {
            self.signed(key).map(Some)
        }
    }

    /// The "must be a number …" message of a decimal field.
    fn decimal_error(&mut self, key: FieldKey, text: &str) {
        let (range, optional) = match key.spec().kind {
            FieldKind::Decimal {
                bounds:
                    DecimalBounds {
                        min,
                        max,
                        min_exclusive: true,
                    },
                optional,
            } => (format!("above {min} and at most {max}"), optional),
            FieldKind::Decimal {
                bounds: DecimalBounds { min, max, .. },
                optional,
            } => (format!("from {min} to {max}"), optional),
            _ => (String::new(), false),
        };
        let empty_hint = if optional { ", or empty" } else { "" };
        let message = format!(
            "{} must be a number {range}{empty_hint} (got {})",
            key,
            quoted_preview(text)
        );
        self.reject(key, message);
    }

    /// A finite decimal number; `inf`, `NaN` and overflowing text like `1e999` are rejected.
    fn decimal(&mut self, key: FieldKey) -> Option<f64> {
        let text = self.trimmed(key).to_owned();
        let parsed = text.parse::<f64>().ok().filter(|value| value.is_finite());
        if parsed.is_none() {
            self.decimal_error(key, &text);
        }
        parsed
    }

    /// `Some(None)` when empty, `Some(Some(x))` for a finite number, `None` when invalid.
    fn optional_decimal(&mut self, key: FieldKey) -> Option<Option<f64>> {
        if self.trimmed(key).is_empty() {
            Some(None)
        } else {
            self.decimal(key).map(Some)
        }
    }

    /// `true`/`false`, also `on`/`off`, `1`/`0` and `yes`/`no` in any case, as links and
    /// checkboxes spell them.
    fn toggle(&mut self, key: FieldKey) -> Option<bool> {
        let text = self.trimmed(key).to_owned();
        match text.to_ascii_lowercase().as_str() {
            "true" | "on" | "1" | "yes" => Some(true),
            "false" | "off" | "0" | "no" => Some(false),
            _ => {
                let message = format!(
                    "{} must be true or false (got {})",
                    key,
                    quoted_preview(&text)
                );
                self.reject(key, message);
                None
            }
        }
    }

    /// One of a choice's spellings, matched ignoring case.
    fn choice<T: std::str::FromStr>(&mut self, key: FieldKey) -> Option<T> {
        let text = self.trimmed(key).to_owned();
        let parsed = text.to_ascii_lowercase().parse::<T>().ok();
        if parsed.is_none() {
            let (allowed, empty_hint) = match key.spec().kind {
                FieldKind::Choice(allowed) => (allowed, ""),
                FieldKind::OptionalChoice(allowed) => (allowed, ", or empty"),
                _ => (&[][..], ""),
            };
            let message = format!(
                "{} must be one of {}{empty_hint} (got {})",
                key,
                allowed.join(", "),
                quoted_preview(&text)
            );
            self.reject(key, message);
        }
        parsed
    }

    /// `Some(None)` when empty, `Some(Some(value))` for a valid spelling, `None` when invalid.
    fn optional_choice<T: std::str::FromStr>(&mut self, key: FieldKey) -> Option<Option<T>> {
        if self.trimmed(key).is_empty() {
            Some(None)
        } else {
            self.choice(key).map(Some)
        }
    }
}

/// The entries of a list field such as `pool`: the text split at whitespace and commas, empty
/// pieces dropped. Each entry is checked by [`RunConfig::validate`].
pub fn list_entries(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| c == ',' || c.is_whitespace())
        .filter(|entry| !entry.is_empty())
}

#[cfg(test)]
pub(crate) mod tests;
