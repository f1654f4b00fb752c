//! The run form: the table of settings the browser renders ([`FIELDS`]), the raw text the
//! user typed into them ([`RunForm`]), its conversion to a checked [`RunConfig`], and the
//! shareable link that carries the whole form in the page URL's query string.
//!
//! Query keys are the artifact's field names (ARTIFACT.md §1.1), so a link reads like the
//! artifact it reproduces; the exceptions, `pool`, `warmup`, `traces`, `measurement` and
//! `live_view`, are strobe's own [`ClientOptions`], which say how the browser measures rather
//! than what it requests. A link only ever fills the form: it never starts a run and never
//! carries an API key (keys found in a link are ignored and reported).

use std::collections::{BTreeMap, BTreeSet};

use thiserror::Error;

use super::plan::{
    ClientOptions, ConfigError, ControlledOutputPolicy, LiveView, MeasurementThread,
    PromptCacheMode, RunConfig, ThinkingMode, MAX_CONCURRENCY, MAX_CONTEXT_SETTING_TOKENS,
    MAX_OUTPUT_SETTING, MAX_REQUESTS, MAX_SHARED_PREFIX_TOKENS, MAX_TEMPERATURE, MAX_TIMEOUT_S,
};

/// Longest value, in characters after decoding, that a link may set; longer ones are dropped.
pub const MAX_QUERY_VALUE_CHARS: usize = 2_048;

/// How many unknown link keys are reported one by one before the rest are summarised.
const MAX_UNKNOWN_KEY_NOTICES: usize = 8;

/// How many characters of user text an error message or notice quotes.
const PREVIEW_CHARS: usize = 40;

/// Longest `owned_by` text [`engine_hint`] accepts as an engine name; real engines report
/// short names (`vllm`, `llamacpp`), so anything longer is not a name worth recording.
pub const MAX_ENGINE_HINT_CHARS: usize = 64;

/// Why an empty engine field blocks a run, and how it gets filled.
const ENGINE_REQUIRED_MESSAGE: &str = "engine must name the serving engine (e.g. vllm, sglang, \
     llama.cpp): artifacts without one cannot be compared or combined; Check endpoint fills it \
     from the server's model list when it can.";

/// Which fieldset a setting is shown in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FieldGroup {
    /// Where the requests go and how the run is labelled.
    Endpoint,
    /// How many requests, and how many at once.
    Load,
    /// What each request asks for: context, prompt caching, output contract.
    Prompt,
    /// Sampling and reasoning controls sent with each request.
    Sampling,
    /// Timeouts and the context-length cap.
    Limits,
}

impl FieldGroup {
    /// Every group, in display order.
    pub const ALL: &'static [Self] = &[
        Self::Endpoint,
        Self::Load,
        Self::Prompt,
        Self::Sampling,
        Self::Limits,
    ];

    /// The fieldset legend.
    pub fn label(self) -> &'static str {
        match self {
            Self::Endpoint => "Endpoint",
            Self::Load => "Load",
            Self::Prompt => "Prompt",
            Self::Sampling => "Sampling",
            Self::Limits => "Limits",
        }
    }
}

/// What kind of input a setting takes; bounds are for the input element and for messages,
/// the rules themselves are [`RunConfig::validate`]'s.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum FieldKind {
    /// Free text.
    Text,
    /// An `http://` or `https://` URL.
    Url,
    /// A whole number from `min` to `max` (inclusive).
    Integer {
        /// Smallest accepted value.
        min: i64,
        /// Largest accepted value.
        max: i64,
    },
    /// A finite decimal number from `min` (exclusive when `min_exclusive`) to `max` (inclusive).
    Decimal {
        /// Lower bound.
        min: f64,
        /// Upper bound (inclusive).
        max: f64,
        /// Whether `min` itself is rejected (`timeout_s` and `top_p` must be above 0).
        min_exclusive: bool,
        /// Whether the field may be left empty (then the setting is not sent / recorded null).
        optional: bool,
    },
    /// On or off; the form text is `"true"` or `"false"`.
    Toggle,
    /// One of the listed spellings.
    Choice(&'static [&'static str]),
    /// Empty (unset) or one of the listed spellings.
    OptionalChoice(&'static [&'static str]),
}

/// One setting of the run form.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FieldSpec {
    /// The artifact field name, also the query key and the [`ConfigError::field`].
    pub key: &'static str,
    /// Short label shown next to the input.
    pub label: &'static str,
    /// What the input accepts.
    pub kind: FieldKind,
    /// One or two user-facing sentences: what the setting does and what is allowed.
    pub help: &'static str,
    /// The fieldset it belongs to.
    pub group: FieldGroup,
}

/// The spellings of [`PromptCacheMode`], in its `ALL` order.
const PROMPT_CACHE_MODES: &[&str] = &["shared", "unique"];
/// The spellings of [`ControlledOutputPolicy`], in its `ALL` order.
const CONTROLLED_OUTPUT_POLICIES: &[&str] = &["observe", "strict"];
/// The spellings of [`ThinkingMode`], in its `ALL` order.
const THINKING_MODES: &[&str] = &["default", "enabled", "disabled", "unsupported"];
/// The spellings of [`ReasoningEffort`](super::plan::ReasoningEffort), in its `ALL` order.
const REASONING_EFFORTS: &[&str] = &["none", "minimal", "low", "medium", "high", "max", "xhigh"];
/// The spellings of [`MeasurementThread`], in its `ALL` order.
const MEASUREMENT_THREADS: &[&str] = &["worker", "main"];
/// The spellings of [`LiveView`], in its `ALL` order.
const LIVE_VIEWS: &[&str] = &["during", "end"];

/// `u64` bounds as `i64` for [`FieldKind::Integer`]; every bound in plan.rs is far below
/// `i64::MAX`, and a larger one saturates instead of wrapping.
const fn bound(value: u64) -> i64 {
    if value > i64::MAX as u64 {
        i64::MAX
    } else {
        value as i64
    }
}

const BASE_URL: FieldSpec = FieldSpec {
    key: "base_url",
    label: "Base URL",
    kind: FieldKind::Url,
    help: "OpenAI-compatible API root, e.g. http://127.0.0.1:8000/v1. The server must allow \
           this page's origin (CORS).",
    group: FieldGroup::Endpoint,
};
const POOL: FieldSpec = FieldSpec {
    key: "pool",
    label: "Endpoint pool",
    kind: FieldKind::Text,
    help: "Optional: more base URLs of the same server on other ports or host names, separated \
           by spaces or commas. Concurrency slots take turns over base URL and pool, so each \
           origin carries at most six requests and concurrency above six is not queued inside \
           the browser (HTTP/1.1 allows six connections per origin; HTTP/2 needs no pool).",
    group: FieldGroup::Endpoint,
};
const MODEL: FieldSpec = FieldSpec {
    key: "model",
    label: "Model",
    kind: FieldKind::Text,
    help: "Model id sent with every request; pick one from the server's /models list.",
    group: FieldGroup::Endpoint,
};
const ENGINE: FieldSpec = FieldSpec {
    key: "engine",
    label: "Engine",
    kind: FieldKind::Text,
    help: "Serving engine recorded in the artifact, e.g. vllm, sglang or llama.cpp; required. \
           When empty, Check endpoint fills it from the server's /models list (owned_by).",
    group: FieldGroup::Endpoint,
};
const GPU: FieldSpec = FieldSpec {
    key: "gpu",
    label: "GPU",
    kind: FieldKind::Text,
    help: "GPU label recorded in the artifact, e.g. H100. Empty records null.",
    group: FieldGroup::Endpoint,
};
const REQUESTS: FieldSpec = FieldSpec {
    key: "requests",
    label: "Requests",
    kind: FieldKind::Integer {
        min: 1,
        max: bound(MAX_REQUESTS),
    },
    help: "Total number of requests to send, 1–10000.",
    group: FieldGroup::Load,
};
const CONCURRENCY: FieldSpec = FieldSpec {
    key: "concurrency",
    label: "Concurrency",
    kind: FieldKind::Integer {
        min: 1,
        max: bound(MAX_CONCURRENCY),
    },
    help: "Requests in flight at once, 1–256. A new request starts as soon as one finishes.",
    group: FieldGroup::Load,
};
const WARMUP: FieldSpec = FieldSpec {
    key: "warmup",
    label: "Warm-up",
    kind: FieldKind::Toggle,
    help: "Before measuring, send two tiny requests per concurrency slot (max_tokens 1), all \
           at once, so every slot finds an open connection and a cached CORS preflight; they \
           are not counted. Off measures a cold start: the first requests' TTFO then includes \
           connection setup and preflights.",
    group: FieldGroup::Load,
};
const TRACES: FieldSpec = FieldSpec {
    key: "traces",
    label: "Chunk traces",
    kind: FieldKind::Toggle,
    help: "Record in every row when each stream read arrived (chunk_arrivals_ms), for timelines \
           of single requests. Makes the artifact much larger.",
    group: FieldGroup::Load,
};
const MEASUREMENT: FieldSpec = FieldSpec {
    key: "measurement",
    label: "Measure in",
    kind: FieldKind::Choice(MEASUREMENT_THREADS),
    help: "worker: a dedicated Web Worker sends the requests and timestamps every read, so \
           drawing the page cannot delay a timestamp. main: the page's own thread, for \
           comparison.",
    group: FieldGroup::Load,
};
const LIVE_VIEW: FieldSpec = FieldSpec {
    key: "live_view",
    label: "Live view",
    kind: FieldKind::Choice(LIVE_VIEWS),
    help: "during: the page shows counters and running medians four times a second while the \
           run goes on. end: it shows nothing new until the run ends, so no page work competes \
           with the measurement; worth it with Measure in: main, where drawing shares the \
           thread that stamps the reads.",
    group: FieldGroup::Load,
};
const CONTEXT_TOKENS: FieldSpec = FieldSpec {
    key: "context_tokens",
    label: "Context tokens",
    kind: FieldKind::Integer {
        min: 0,
        max: bound(MAX_CONTEXT_SETTING_TOKENS),
    },
    help: "Prompt length per request, 32–1048576 tokens, shortened to fit the model's context. \
           0 samples the context per request from the published distribution (16k–262k tokens).",
    group: FieldGroup::Prompt,
};
const CONTEXT_SEED: FieldSpec = FieldSpec {
    key: "context_seed",
    label: "Context seed",
    kind: FieldKind::Integer {
        min: i64::MIN,
        max: i64::MAX,
    },
    help: "Seed of the context sampler and the canary markers; any whole number. The same seed \
           plans the same contexts.",
    group: FieldGroup::Prompt,
};
const PROMPT_CACHE_MODE: FieldSpec = FieldSpec {
    key: "prompt_cache_mode",
    label: "Prompt cache mode",
    kind: FieldKind::Choice(PROMPT_CACHE_MODES),
    help: "unique gives every prompt its own content; shared opens every prompt with one common \
           prefix to exercise the server's prefix cache.",
    group: FieldGroup::Prompt,
};
const SHARED_PREFIX_TOKENS: FieldSpec = FieldSpec {
    key: "shared_prefix_tokens",
    label: "Shared prefix tokens",
    kind: FieldKind::Integer {
        min: 0,
        max: bound(MAX_SHARED_PREFIX_TOKENS),
    },
    help: "Length of the common prefix in shared mode, 0–262144 tokens. Unique mode ignores it \
           and records 0.",
    group: FieldGroup::Prompt,
};
const MAX_TOKENS: FieldSpec = FieldSpec {
    key: "max_tokens",
    label: "Max tokens",
    kind: FieldKind::Integer {
        min: 1,
        max: bound(MAX_OUTPUT_SETTING),
    },
    help: "Most tokens each response may generate, 1–65536 (at least 16 with request canaries).",
    group: FieldGroup::Prompt,
};
const RESPONSE_WORDS: FieldSpec = FieldSpec {
    key: "response_words",
    label: "Response words",
    kind: FieldKind::Integer {
        min: 0,
        max: bound(MAX_OUTPUT_SETTING),
    },
    help: "Ask every response for exactly this many words, 0–65536, and record whether it \
           complied. 0 asks for a one-line summary instead.",
    group: FieldGroup::Prompt,
};
const CONTROLLED_OUTPUT_POLICY: FieldSpec = FieldSpec {
    key: "controlled_output_policy",
    label: "Controlled output policy",
    kind: FieldKind::Choice(CONTROLLED_OUTPUT_POLICIES),
    help: "observe records whether responses met response_words; strict counts a miss as a \
           failed request and needs response_words above 0.",
    group: FieldGroup::Prompt,
};
const REQUEST_CANARIES: FieldSpec = FieldSpec {
    key: "request_canaries",
    label: "Request canaries",
    kind: FieldKind::Toggle,
    help: "Every response must begin with its own marker, which catches responses crossed \
           between requests. Needs max_tokens of 16 or more.",
    group: FieldGroup::Prompt,
};
const TEMPERATURE: FieldSpec = FieldSpec {
    key: "temperature",
    label: "Temperature",
    kind: FieldKind::Decimal {
        min: 0.0,
        max: MAX_TEMPERATURE,
        min_exclusive: false,
        optional: true,
    },
    help: "Sampling temperature, 0–2. Empty sends 0.0 and records no requested value.",
    group: FieldGroup::Sampling,
};
const TOP_P: FieldSpec = FieldSpec {
    key: "top_p",
    label: "Top p",
    kind: FieldKind::Decimal {
        min: 0.0,
        max: 1.0,
        min_exclusive: true,
        optional: true,
    },
    help: "Nucleus sampling, above 0 and at most 1. Empty does not send top_p.",
    group: FieldGroup::Sampling,
};
const THINKING_MODE: FieldSpec = FieldSpec {
    key: "thinking_mode",
    label: "Thinking mode",
    kind: FieldKind::Choice(THINKING_MODES),
    help: "default sends no thinking control; enabled and disabled set \
           chat_template_kwargs.enable_thinking; unsupported records that the model has none.",
    group: FieldGroup::Sampling,
};
const REASONING_EFFORT: FieldSpec = FieldSpec {
    key: "reasoning_effort",
    label: "Reasoning effort",
    kind: FieldKind::OptionalChoice(REASONING_EFFORTS),
    help: "reasoning_effort sent with each request; empty sends none. Works only with thinking \
           mode default, and the server decides which values its model accepts.",
    group: FieldGroup::Sampling,
};
const TIMEOUT_S: FieldSpec = FieldSpec {
    key: "timeout_s",
    label: "Timeout (s)",
    kind: FieldKind::Decimal {
        min: 0.0,
        max: MAX_TIMEOUT_S,
        min_exclusive: true,
        optional: false,
    },
    help: "Per-request timeout in seconds, above 0 and at most 3600. A request that takes longer \
           is recorded as failed.",
    group: FieldGroup::Limits,
};
const MAX_MODEL_LEN: FieldSpec = FieldSpec {
    key: "max_model_len",
    label: "Max model length",
    kind: FieldKind::Integer {
        min: 0,
        max: bound(MAX_CONTEXT_SETTING_TOKENS),
    },
    help: "The model's context length, 0–1048576 tokens; it must exceed max tokens plus margin. \
           0 discovers it from /models.",
    group: FieldGroup::Limits,
};
const MARGIN: FieldSpec = FieldSpec {
    key: "margin",
    label: "Context margin",
    kind: FieldKind::Integer {
        min: 0,
        max: bound(MAX_CONTEXT_SETTING_TOKENS),
    },
    help: "Tokens kept free besides max tokens when prompts are shortened to fit the model's \
           context, 0–1048576.",
    group: FieldGroup::Limits,
};

/// Every setting of the run form, in display order; each group's fields are contiguous.
pub const FIELDS: &[FieldSpec] = &[
    BASE_URL,
    POOL,
    MODEL,
    ENGINE,
    GPU,
    REQUESTS,
    CONCURRENCY,
    WARMUP,
    TRACES,
    MEASUREMENT,
    LIVE_VIEW,
    CONTEXT_TOKENS,
    CONTEXT_SEED,
    PROMPT_CACHE_MODE,
    SHARED_PREFIX_TOKENS,
    MAX_TOKENS,
    RESPONSE_WORDS,
    CONTROLLED_OUTPUT_POLICY,
    REQUEST_CANARIES,
    TEMPERATURE,
    TOP_P,
    THINKING_MODE,
    REASONING_EFFORT,
    TIMEOUT_S,
    MAX_MODEL_LEN,
    MARGIN,
];

/// The form field with this key, if there is one.
pub fn field_spec(key: &str) -> Option<&'static FieldSpec> {
    FIELDS.iter().find(|spec| spec.key == key)
}

/// Position of a field in [`FIELDS`], for sorting errors into display order.
fn display_position(key: &str) -> usize {
    FIELDS
        .iter()
        .position(|spec| spec.key == key)
        .unwrap_or(FIELDS.len())
}

/// Cross-field rules of [`RunConfig::validate`]: an error reported on the first field also
/// reads the listed fields. When one of those could not be parsed, the rule saw a stand-in
/// value, so its error would mislead and is held back until the input is fixed.
const RULE_INPUTS: &[(&str, &[&str])] = &[
    ("max_tokens", &["request_canaries"]),
    ("controlled_output_policy", &["response_words"]),
    ("max_model_len", &["max_tokens", "margin"]),
    ("reasoning_effort", &["thinking_mode"]),
];

/// [`RunForm::set`] was given a key that is not in [`FIELDS`].
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[error("{key:?} is not a run form field; use one of the keys in FIELDS")]
pub struct UnknownFieldError {
    /// The rejected key.
    pub key: String,
}

/// Something [`RunForm::from_query`] ignored or overrode, to show the user above the form.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct QueryNotice {
    /// The query key concerned (shortened when very long); empty when the notice sums up
    /// several keys.
    pub key: String,
    /// What happened and what to do about it. Never quotes the value of a secret key.
    pub message: String,
}

/// The raw text of every run form field, exactly as typed: a half-typed number is kept, not
/// lost, and only [`RunForm::to_config`] interprets it.
///
/// It holds no secret: the API key lives outside the form (in the page's own state), so
/// neither the form nor the link built by [`RunForm::to_query`] can ever carry one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunForm {
    /// Text per field key; always holds every key of [`FIELDS`] and nothing else.
    texts: BTreeMap<&'static str, String>,
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
    /// `/models` (the engine from the model's `owned_by`, see [`engine_hint`]).
    pub fn browser_defaults() -> Self {
        Self::with_texts([
            (BASE_URL.key, "http://127.0.0.1:8011/v1".to_owned()),
            (REQUESTS.key, "24".to_owned()),
            (CONCURRENCY.key, "4".to_owned()),
            (WARMUP.key, "true".to_owned()),
            (TRACES.key, "false".to_owned()),
            (
                MEASUREMENT.key,
                MeasurementThread::Worker.as_str().to_owned(),
            ),
            (LIVE_VIEW.key, LiveView::During.as_str().to_owned()),
            (CONTEXT_TOKENS.key, "4096".to_owned()),
            (CONTEXT_SEED.key, "0".to_owned()),
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
            (POOL.key, config.client.endpoint_pool.join(" ")),
            (WARMUP.key, config.client.warmup.to_string()),
            (TRACES.key, config.client.chunk_traces.to_string()),
            (MEASUREMENT.key, config.client.measurement.to_string()),
            (LIVE_VIEW.key, config.client.live_view.to_string()),
            (CONTEXT_TOKENS.key, config.context_tokens.to_string()),
            (CONTEXT_SEED.key, config.context_seed.to_string()),
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

    /// The text of field `key`, or `None` when no such field exists.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.texts.get(key).map(String::as_str)
    }

    /// Replaces the text of field `key` with exactly `text` (no trimming: that is
    /// [`RunForm::to_config`]'s job, so the input shows what was typed).
    pub fn set(&mut self, key: &str, text: impl Into<String>) -> Result<(), UnknownFieldError> {
        match self.texts.get_mut(key) {
            Some(slot) => {
                *slot = text.into();
                Ok(())
            }
            None => Err(UnknownFieldError {
                key: key.to_owned(),
            }),
        }
    }

    /// The text of a field of [`FIELDS`] (always present by construction).
    fn text(&self, spec: &FieldSpec) -> &str {
        self.get(spec.key).unwrap_or_default()
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
            base_url: parser.required_text(&BASE_URL),
            model: parser.required_text(&MODEL),
            engine: parser.engine(&ENGINE),
            gpu: parser.optional_text(&GPU),
            requests: parser.unsigned(&REQUESTS).unwrap_or(defaults.requests),
            concurrency: parser
                .unsigned(&CONCURRENCY)
                .unwrap_or(defaults.concurrency),
            context_tokens: parser
                .unsigned(&CONTEXT_TOKENS)
                .unwrap_or(defaults.context_tokens),
            context_seed: parser
                .signed(&CONTEXT_SEED)
                .unwrap_or(defaults.context_seed),
            prompt_cache_mode: parser
                .choice(&PROMPT_CACHE_MODE)
                .unwrap_or(defaults.prompt_cache_mode),
            shared_prefix_tokens: parser
                .unsigned(&SHARED_PREFIX_TOKENS)
                .unwrap_or(defaults.shared_prefix_tokens),
            max_tokens: parser.unsigned(&MAX_TOKENS).unwrap_or(defaults.max_tokens),
            response_words: parser
                .unsigned(&RESPONSE_WORDS)
                .unwrap_or(defaults.response_words),
            controlled_output_policy: parser
                .choice(&CONTROLLED_OUTPUT_POLICY)
                .unwrap_or(defaults.controlled_output_policy),
            request_canaries: parser
                .toggle(&REQUEST_CANARIES)
                .unwrap_or(defaults.request_canaries),
            temperature: parser.optional_decimal(&TEMPERATURE).unwrap_or(None),
            top_p: parser.optional_decimal(&TOP_P).unwrap_or(None),
            thinking_mode: parser
                .choice(&THINKING_MODE)
                .unwrap_or(defaults.thinking_mode),
            reasoning_effort: parser.optional_choice(&REASONING_EFFORT).unwrap_or(None),
            timeout_s: parser.decimal(&TIMEOUT_S).unwrap_or(defaults.timeout_s),
            max_model_len: parser
                .unsigned(&MAX_MODEL_LEN)
                .unwrap_or(defaults.max_model_len),
            margin: parser.unsigned(&MARGIN).unwrap_or(defaults.margin),
            client: ClientOptions {
                warmup: parser.toggle(&WARMUP).unwrap_or(defaults.client.warmup),
                chunk_traces: parser
                    .toggle(&TRACES)
                    .unwrap_or(defaults.client.chunk_traces),
                measurement: parser
                    .choice(&MEASUREMENT)
                    .unwrap_or(defaults.client.measurement),
                live_view: parser
                    .choice(&LIVE_VIEW)
                    .unwrap_or(defaults.client.live_view),
                endpoint_pool: parser.url_list(&POOL),
            },
            ..defaults
        };

        let mut errors = parser.errors;
        if let Err(rule_errors) = config.validate() {
            let unparsed: BTreeSet<&str> = errors.iter().map(|error| error.field).collect();
            let reads_unparsed = |field: &str| {
                unparsed.contains(field)
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

    /// The form a link opens: [`RunForm::browser_defaults`] with the link's settings applied,
    /// plus notices about everything in the link that was ignored.
    ///
    /// `query` is a URL query string, with or without the leading `?` (anything from a `#`
    /// on is a fragment and ignored), in `application/x-www-form-urlencoded` form: `+` is a
    /// space, `%XX` a byte, a `%` not followed by two hex digits stays literal, and invalid
    /// UTF-8 becomes U+FFFD. Keys are matched exactly. Ignored, each with a notice:
    /// API-key-like keys (never applied, whatever their value), keys asking to start a run
    /// (links never start runs), unknown keys, and values over [`MAX_QUERY_VALUE_CHARS`].
    /// A key given twice takes its last value, with a notice.
    pub fn from_query(query: &str) -> (Self, Vec<QueryNotice>) {
        let query = query.strip_prefix('?').unwrap_or(query);
        let query = query.split_once('#').map_or(query, |(before, _)| before);

        let mut form = Self::browser_defaults();
        let mut notices = Vec::new();
        let mut noticed: BTreeSet<QueryNotice> = BTreeSet::new();
        let mut notify = |notice: QueryNotice| {
            if noticed.insert(notice.clone()) {
                notices.push(notice);
            }
        };
        let mut applied: BTreeSet<&'static str> = BTreeSet::new();
        let mut unknown_keys: Vec<String> = Vec::new();

        for pair in query.split('&') {
            let (raw_key, raw_value) = pair.split_once('=').unwrap_or((pair, ""));
            let key = percent_decode(raw_key);
            if key.is_empty() {
                continue;
            }
            if is_secret_key(&key) {
                notify(QueryNotice {
                    key: shortened(&key),
                    message: format!(
                        "The link contains an API key ({}); strobe ignored it because keys are \
                         never read from links. If this link was shared, rotate that key now, \
                         and enter keys only in the API key field.",
                        quoted_preview(&key)
                    ),
                });
                continue;
            }
            if is_run_key(&key) {
                notify(QueryNotice {
                    key: shortened(&key),
                    message: format!(
                        "Links never start runs, so {} was ignored; check the settings and \
                         press Run.",
                        quoted_preview(&key)
                    ),
                });
                continue;
            }
            let Some(spec) = field_spec(&key) else {
                if !unknown_keys.contains(&key) {
                    unknown_keys.push(key);
                }
                continue;
            };
            if !applied.insert(spec.key) {
                notify(QueryNotice {
                    key: spec.key.to_owned(),
                    message: format!(
                        "The link sets {} more than once; the last value was used.",
                        spec.key
                    ),
                });
            }
            let value = percent_decode(raw_value);
            let value_chars = value.chars().count();
            if value_chars > MAX_QUERY_VALUE_CHARS {
                notify(QueryNotice {
                    key: spec.key.to_owned(),
                    message: format!(
                        "The link's value for {} is {value_chars} characters long (the limit \
                         is {MAX_QUERY_VALUE_CHARS}) and was ignored; the field keeps its \
                         previous value.",
                        spec.key
                    ),
                });
                continue;
            }
            if let Some(slot) = form.texts.get_mut(spec.key) {
                *slot = value;
            }
        }

        for key in unknown_keys.iter().take(MAX_UNKNOWN_KEY_NOTICES) {
            notify(QueryNotice {
                key: shortened(key),
                message: format!(
                    "The link's setting {} is not a strobe setting and was ignored.",
                    quoted_preview(key)
                ),
            });
        }
        let unreported = unknown_keys.len().saturating_sub(MAX_UNKNOWN_KEY_NOTICES);
        if unreported > 0 {
            notify(QueryNotice {
                key: String::new(),
                message: format!("{unreported} more unknown settings in the link were ignored."),
            });
        }
        (form, notices)
    }

    /// The query string (without `?`) of a link that reopens this form: `key=value` pairs in
    /// [`FIELDS`] order, joined by `&`, omitting fields equal to [`RunForm::browser_defaults`]
    /// so links stay short. Everything but `A-Z a-z 0-9 - . _ ~` is percent-encoded as UTF-8.
    /// It never contains a secret: the form holds none.
    pub fn to_query(&self) -> String {
        let defaults = Self::browser_defaults();
        FIELDS
            .iter()
            .filter(|spec| self.text(spec) != defaults.text(spec))
            .map(|spec| {
                format!(
                    "{}={}",
                    percent_encode(spec.key),
                    percent_encode(self.text(spec))
                )
            })
            .collect::<Vec<_>>()
            .join("&")
    }
}

/// The engine name a server's `/models` answer suggests for `model`: the `owned_by` of the
/// first `data[]` entry whose `id` is `model` (surrounding whitespace of `model` ignored, as
/// [`RunForm::to_config`] ignores it). vLLM reports `"vllm"`, llama.cpp `"llamacpp"` and
/// strobe-sim `"strobe-sim"`.
///
/// The answer is outside input that ends up in the form and the artifact, so only a plain
/// name is taken: trimmed, non-empty, at most [`MAX_ENGINE_HINT_CHARS`] characters, with no
/// control or invisible formatting character. Anything else gives `None` and the user types
/// the engine.
pub fn engine_hint(models_body: &serde_json::Value, model: &str) -> Option<String> {
    let model = Some(model.trim()).filter(|model| !model.is_empty())?;
    let entry = models_body
        .get("data")?
        .as_array()?
        .iter()
        .find(|entry| entry.get("id").and_then(serde_json::Value::as_str) == Some(model))?;
    let owned_by = entry.get("owned_by")?.as_str()?.trim();
    let is_plain_name = !owned_by.is_empty()
        && owned_by.chars().count() <= MAX_ENGINE_HINT_CHARS
        && !owned_by.chars().any(is_unprintable);
    is_plain_name.then(|| owned_by.to_owned())
}

/// Control characters, and the invisible formatting characters (zero-width, bidirectional
/// overrides, byte order mark) that can make a recorded name read differently from what it is.
fn is_unprintable(character: char) -> bool {
    character.is_control()
        || matches!(
            character,
            '\u{00AD}'
                | '\u{200B}'..='\u{200F}'
                | '\u{2028}'..='\u{202E}'
                | '\u{2060}'..='\u{2069}'
                | '\u{FEFF}'
                | '\u{FFF9}'..='\u{FFFB}'
        )
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
    fn trimmed(&self, spec: &FieldSpec) -> &str {
        self.form.text(spec).trim()
    }

    fn reject(&mut self, spec: &FieldSpec, message: String) {
        self.errors.push(ConfigError {
            field: spec.key,
            message,
        });
    }

    /// Trimmed text; emptiness is the validator's call (it names the fix).
    fn required_text(&self, spec: &FieldSpec) -> String {
        self.trimmed(spec).to_owned()
    }

    /// The trimmed engine name. Unlike `gpu` it may not be empty: readers reject an artifact
    /// whose `engine` is null (ARTIFACT.md §9), and no [`RunConfig::validate`] rule checks it
    /// because the CLI may leave it unset.
    fn engine(&mut self, spec: &FieldSpec) -> Option<String> {
        let engine = self.optional_text(spec);
        if engine.is_none() {
            self.reject(spec, ENGINE_REQUIRED_MESSAGE.to_owned());
        }
        engine
    }

    /// The entries of a list field, split at whitespace and commas; each entry is checked by
    /// the validator, which names the bad one.
    fn url_list(&self, spec: &FieldSpec) -> Vec<String> {
        list_entries(self.trimmed(spec))
            .map(str::to_owned)
            .collect()
    }

    /// Trimmed text, `None` when empty.
    fn optional_text(&self, spec: &FieldSpec) -> Option<String> {
        Some(self.trimmed(spec).to_owned()).filter(|text| !text.is_empty())
    }

    /// The "must be a whole number from … to …" message of an integer field.
    fn whole_number_error(&mut self, spec: &FieldSpec, text: &str) {
        let allowed = match spec.kind {
            FieldKind::Integer {
                min: i64::MIN,
                max: i64::MAX,
            } => "a whole number, e.g. 0 or -5".to_owned(),
            FieldKind::Integer { min, max } => format!("a whole number from {min} to {max}"),
            _ => "a whole number".to_owned(),
        };
        let message = format!(
            "{} must be {allowed} (got {})",
            spec.key,
            quoted_preview(text)
        );
        self.reject(spec, message);
    }

    /// A non-negative whole number. Range checks are the validator's; this only rejects text
    /// that is not a whole number at all (including negative ones, which no `u64` setting takes).
    fn unsigned(&mut self, spec: &FieldSpec) -> Option<u64> {
        let text = self.trimmed(spec).to_owned();
        let parsed = text.parse::<u64>().ok();
        if parsed.is_none() {
            self.whole_number_error(spec, &text);
        }
        parsed
    }

    /// A whole number that may be negative.
    fn signed(&mut self, spec: &FieldSpec) -> Option<i64> {
        let text = self.trimmed(spec).to_owned();
        let parsed = text.parse::<i64>().ok();
        if parsed.is_none() {
            self.whole_number_error(spec, &text);
        }
        parsed
    }

    /// The "must be a number …" message of a decimal field.
    fn decimal_error(&mut self, spec: &FieldSpec, text: &str) {
        let (range, optional) = match spec.kind {
            FieldKind::Decimal {
                min,
                max,
                min_exclusive: true,
                optional,
            } => (format!("above {min} and at most {max}"), optional),
            FieldKind::Decimal {
                min, max, optional, ..
            } => (format!("from {min} to {max}"), optional),
            _ => (String::new(), false),
        };
        let empty_hint = if optional { ", or empty" } else { "" };
        let message = format!(
            "{} must be a number {range}{empty_hint} (got {})",
            spec.key,
            quoted_preview(text)
        );
        self.reject(spec, message);
    }

    /// A finite decimal number; `inf`, `NaN` and overflowing text like `1e999` are rejected.
    fn decimal(&mut self, spec: &FieldSpec) -> Option<f64> {
        let text = self.trimmed(spec).to_owned();
        let parsed = text.parse::<f64>().ok().filter(|value| value.is_finite());
        if parsed.is_none() {
            self.decimal_error(spec, &text);
        }
        parsed
    }

    /// `Some(None)` when empty, `Some(Some(x))` for a finite number, `None` when invalid.
    fn optional_decimal(&mut self, spec: &FieldSpec) -> Option<Option<f64>> {
        if self.trimmed(spec).is_empty() {
            Some(None)
        } else {
            self.decimal(spec).map(Some)
        }
    }

    /// `true`/`false`, also `on`/`off`, `1`/`0` and `yes`/`no` in any case, as links and
    /// checkboxes spell them.
    fn toggle(&mut self, spec: &FieldSpec) -> Option<bool> {
        let text = self.trimmed(spec).to_owned();
        match text.to_ascii_lowercase().as_str() {
            "true" | "on" | "1" | "yes" => Some(true),
            "false" | "off" | "0" | "no" => Some(false),
            _ => {
                let message = format!(
                    "{} must be true or false (got {})",
                    spec.key,
                    quoted_preview(&text)
                );
                self.reject(spec, message);
                None
            }
        }
    }

    /// One of a choice's spellings, matched ignoring case.
    fn choice<T: std::str::FromStr>(&mut self, spec: &FieldSpec) -> Option<T> {
        let text = self.trimmed(spec).to_owned();
        let parsed = text.to_ascii_lowercase().parse::<T>().ok();
        if parsed.is_none() {
            let (allowed, empty_hint) = match spec.kind {
                FieldKind::Choice(allowed) => (allowed, ""),
                FieldKind::OptionalChoice(allowed) => (allowed, ", or empty"),
                _ => (&[][..], ""),
            };
            let message = format!(
                "{} must be one of {}{empty_hint} (got {})",
                spec.key,
                allowed.join(", "),
                quoted_preview(&text)
            );
            self.reject(spec, message);
        }
        parsed
    }

    /// `Some(None)` when empty, `Some(Some(value))` for a valid spelling, `None` when invalid.
    fn optional_choice<T: std::str::FromStr>(&mut self, spec: &FieldSpec) -> Option<Option<T>> {
        if self.trimmed(spec).is_empty() {
            Some(None)
        } else {
            self.choice(spec).map(Some)
        }
    }
}

/// The entries of a list field such as `pool`: the text split at whitespace and commas, empty
/// pieces dropped. Each entry is checked by [`RunConfig::validate`].
pub fn list_entries(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| c == ',' || c.is_whitespace())
        .filter(|entry| !entry.is_empty())
}

/// Whether a link key looks like it carries a credential: the keys people use for API keys,
/// in any case, with `-` or `_`.
fn is_secret_key(key: &str) -> bool {
    let normalized = key.trim().to_ascii_lowercase().replace('-', "_");
    matches!(
        normalized.as_str(),
        "api_key"
            | "apikey"
            | "key"
            | "token"
            | "access_token"
            | "authorization"
            | "bearer"
            | "secret"
            | "password"
    ) || normalized.ends_with("_key")
        || normalized.ends_with("_token")
        || normalized.ends_with("_secret")
}

/// Whether a link key asks to start a run, which links never do.
fn is_run_key(key: &str) -> bool {
    matches!(
        key.trim().to_ascii_lowercase().as_str(),
        "run" | "autorun" | "auto_run" | "start" | "autostart"
    )
}

/// The value of one ASCII hex digit.
fn hex_value(byte: u8) -> Option<u8> {
    match byte {
        b'0'..=b'9' => Some(byte - b'0'),
        b'a'..=b'f' => Some(byte - b'a' + 10),
        b'A'..=b'F' => Some(byte - b'A' + 10),
        _ => None,
    }
}

/// Decodes one `application/x-www-form-urlencoded` component: `+` → space, `%XX` → byte,
/// any other `%` kept literally, invalid UTF-8 → U+FFFD.
fn percent_decode(component: &str) -> String {
    let bytes = component.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut rest = bytes;
    while let Some((&byte, after)) = rest.split_first() {
        rest = after;
        match byte {
            b'+' => decoded.push(b' '),
            b'%' => match after {
                [high, low, tail @ ..] => match (hex_value(*high), hex_value(*low)) {
                    (Some(high), Some(low)) => {
                        decoded.push((high << 4) | low);
                        rest = tail;
                    }
                    _ => decoded.push(b'%'),
                },
                _ => decoded.push(b'%'),
            },
            other => decoded.push(other),
        }
    }
    String::from_utf8_lossy(&decoded).into_owned()
}

/// Percent-encodes every UTF-8 byte except the unreserved `A-Z a-z 0-9 - . _ ~`.
fn percent_encode(text: &str) -> String {
    const HEX_DIGITS: &[u8; 16] = b"0123456789ABCDEF";
    let mut encoded = String::with_capacity(text.len());
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~') {
            encoded.push(char::from(byte));
        } else {
            encoded.push('%');
            encoded.push(char::from(HEX_DIGITS[usize::from(byte >> 4)]));
            encoded.push(char::from(HEX_DIGITS[usize::from(byte & 0x0F)]));
        }
    }
    encoded
}

/// The first [`PREVIEW_CHARS`] characters of `text`, with `…` when cut.
fn shortened(text: &str) -> String {
    let mut chars = text.chars();
    let head: String = chars.by_ref().take(PREVIEW_CHARS).collect();
    if chars.next().is_some() {
        format!("{head}…")
    } else {
        head
    }
}

/// A quoted, escaped, shortened rendering of user text for messages (pasted text can be huge).
fn quoted_preview(text: &str) -> String {
    let mut chars = text.chars();
    let head: String = chars.by_ref().take(PREVIEW_CHARS).collect();
    if chars.next().is_some() {
        format!("{head:?}…")
    } else {
        format!("{head:?}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::plan::ReasoningEffort;

    /// The browser defaults with a model and engine picked, as after the first `/models`
    /// fetch from strobe-sim (whose models are `owned_by` "strobe-sim").
    fn defaults_with_model() -> RunForm {
        let mut form = RunForm::browser_defaults();
        assert_eq!(form.set("model", "sim-model"), Ok(()));
        assert_eq!(form.set("engine", "strobe-sim"), Ok(()));
        form
    }

    /// The errors of a form that must not pass, as `(field, message)` pairs.
    fn errors_of(form: &RunForm) -> Vec<(&'static str, String)> {
        match form.to_config() {
            Ok(config) => panic!("expected errors, got {config:?}"),
            Err(errors) => errors
                .into_iter()
                .map(|error| (error.field, error.message))
                .collect(),
        }
    }

    /// The client options a link gives, once the endpoint check has filled model and engine;
    /// the link itself must read without notices.
    fn client_options_of_link(query: &str) -> Result<ClientOptions, Vec<ConfigError>> {
        let (mut form, notices) = RunForm::from_query(query);
        assert!(notices.is_empty(), "{notices:?}");
        assert_eq!(form.set("model", "sim-model"), Ok(()));
        assert_eq!(form.set("engine", "strobe-sim"), Ok(()));
        form.to_config().map(|config| config.client)
    }

    fn form_with(changes: &[(&str, &str)]) -> RunForm {
        let mut form = defaults_with_model();
        for (key, text) in changes {
            assert_eq!(form.set(key, *text), Ok(()), "{key}");
        }
        form
    }

    #[test]
    fn fields_are_the_artifact_keys_once_each_in_contiguous_groups() {
        let keys: Vec<&str> = FIELDS.iter().map(|spec| spec.key).collect();
        let mut expected = vec![
            "base_url",
            "pool",
            "model",
            "engine",
            "gpu",
            "requests",
            "concurrency",
            "warmup",
            "traces",
            "measurement",
            "live_view",
            "context_tokens",
            "context_seed",
            "max_tokens",
            "response_words",
            "controlled_output_policy",
            "prompt_cache_mode",
            "shared_prefix_tokens",
            "request_canaries",
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
    fn browser_defaults_make_an_empty_query() {
        assert_eq!(RunForm::browser_defaults().to_query(), "");
        let (form, notices) = RunForm::from_query("");
        assert_eq!(form, RunForm::browser_defaults());
        assert!(notices.is_empty());
    }

    #[test]
    fn get_and_set_know_only_form_fields() {
        let mut form = RunForm::browser_defaults();
        assert_eq!(form.get("requests"), Some("24"));
        assert_eq!(form.get("api_key"), None);
        assert_eq!(form.set("requests", " 4.5"), Ok(()));
        assert_eq!(form.get("requests"), Some(" 4.5"));
        assert_eq!(
            form.set("burst", "3"),
            Err(UnknownFieldError {
                key: "burst".to_owned()
            })
        );
        assert_eq!(form.get("burst"), None);
    }

    /// Configs that exercise every field away from its default, every enum value, sampled
    /// and fixed contexts, strict output and sampling values.
    fn sample_configs() -> Vec<RunConfig> {
        let base = RunConfig {
            base_url: "https://gpu-box.example:8443/v1".to_owned(),
            model: "Qwen/Qwen3-8B".to_owned(),
            engine: Some("vllm".to_owned()),
            ..RunConfig::default()
        };
        let mut configs = vec![
            base.clone(),
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
                ..ClientOptions::default()
            },
            ..base.clone()
        });
        configs
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
    fn warmup_and_traces_travel_in_the_link() {
        let defaults = defaults_with_model()
            .to_config()
            .map(|config| config.client);
        assert_eq!(defaults, Ok(ClientOptions::default()));

        let (form, _) = RunForm::from_query("warmup=false&traces=on");
        assert_eq!(form.get("warmup"), Some("false"));
        assert_eq!(form.get("traces"), Some("on"));
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
    fn config_to_form_to_config_is_identity() {
        for config in sample_configs() {
            assert_eq!(config.validate(), Ok(()), "{config:?}");
            assert_eq!(RunForm::from_config(&config).to_config(), Ok(config));
        }
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
            assert_eq!(form.set(key, text), Ok(()));
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
            assert_eq!(percent_decode(raw), decoded, "{raw}");
            let (form, notices) = RunForm::from_query(&format!("model={raw}"));
            assert_eq!(form.get("model"), Some(decoded), "{raw}");
            assert!(notices.is_empty());
        }
    }

    #[test]
    fn hostile_queries_never_panic_and_keep_the_rest() {
        let (form, notices) = RunForm::from_query("&&model=a=b=c&&=x&requests&#concurrency=9");
        assert_eq!(form.get("model"), Some("a=b=c"));
        // A key without `=` sets the empty text; the fragment is not part of the query.
        assert_eq!(form.get("requests"), Some(""));
        assert_eq!(form.get("concurrency"), Some("4"));
        assert!(notices.is_empty(), "{notices:?}");

        let (form, _) = RunForm::from_query("model=%E6%A8%A1%E5%9E%8B+%F0%9F%A6%80&gpu=日本");
        assert_eq!(form.get("model"), Some("模型 🦀"));
        assert_eq!(form.get("gpu"), Some("日本"));

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
                form.get("base_url"),
                Some("http://127.0.0.1:8011/v1"),
                "{query}"
            );
        }
    }

    #[test]
    fn overlong_values_are_dropped_with_a_notice() {
        let long = "x".repeat(10_000);
        let (form, notices) = RunForm::from_query(&format!("model=ok&model={long}&gpu=g"));
        assert_eq!(form.get("model"), Some("ok"));
        assert_eq!(form.get("gpu"), Some("g"));
        assert!(notices.iter().any(|n| n.key == "model"
            && n.message.contains("10000 characters")
            && n.message.contains("2048")));

        // Exactly the limit is kept; the limit counts characters, not bytes.
        let at_limit = "é".repeat(MAX_QUERY_VALUE_CHARS);
        let (form, notices) = RunForm::from_query(&format!("engine={at_limit}"));
        assert_eq!(form.get("engine"), Some(at_limit.as_str()));
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
            assert_eq!(form.get("requests"), Some("3"));
            assert_eq!(notices.len(), 1);
            assert_eq!(notices[0].key, key);
            assert!(notices[0].message.contains("never start runs"));
        }
    }

    #[test]
    fn unknown_and_repeated_keys_get_notices() {
        let (form, notices) = RunForm::from_query("foo=1&requests=3&Model=x&requests=5&foo=2");
        assert_eq!(form.get("requests"), Some("5"));
        assert_eq!(form.get("model"), Some(""));
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
            assert_eq!(reopened.get("engine"), Some(engine));
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

    /// A `/models` answer listing `entries`, in the OpenAI shape vLLM and strobe-sim send.
    fn models_body(entries: serde_json::Value) -> serde_json::Value {
        serde_json::json!({ "object": "list", "data": entries })
    }

    #[test]
    fn engine_hint_takes_owned_by_of_the_matching_model() {
        let body = models_body(serde_json::json!([
            { "id": "other", "object": "model", "owned_by": "sglang" },
            { "id": "Qwen/Qwen3-8B", "object": "model", "owned_by": "vllm", "max_model_len": 40960 },
            { "id": "gguf", "object": "model", "owned_by": "llamacpp" },
            { "id": "sim-model", "object": "model", "owned_by": "strobe-sim" },
            { "id": "padded", "owned_by": "  vllm \n" },
            { "id": "Qwen/Qwen3-8B", "owned_by": "second-entry" },
        ]));
        assert_eq!(engine_hint(&body, "Qwen/Qwen3-8B"), Some("vllm".to_owned()));
        assert_eq!(engine_hint(&body, " gguf "), Some("llamacpp".to_owned()));
        assert_eq!(
            engine_hint(&body, "sim-model"),
            Some("strobe-sim".to_owned())
        );
        assert_eq!(engine_hint(&body, "other"), Some("sglang".to_owned()));
        assert_eq!(engine_hint(&body, "padded"), Some("vllm".to_owned()));
    }

    #[test]
    fn engine_hint_is_none_without_a_matching_model() {
        let body = models_body(serde_json::json!([
            { "id": "Qwen/Qwen3-8B", "owned_by": "vllm" },
            { "id": "", "owned_by": "blank-id" },
        ]));
        for model in ["qwen/qwen3-8b", "Qwen3-8B", "", "  "] {
            assert_eq!(engine_hint(&body, model), None, "{model:?}");
        }
        for body in [
            serde_json::json!({}),
            serde_json::json!(null),
            serde_json::json!([{ "id": "Qwen/Qwen3-8B", "owned_by": "vllm" }]),
            serde_json::json!({ "data": { "id": "Qwen/Qwen3-8B", "owned_by": "vllm" } }),
            serde_json::json!({ "data": "Qwen/Qwen3-8B" }),
            models_body(serde_json::json!([])),
            models_body(serde_json::json!([null, 7, "Qwen/Qwen3-8B", { "id": 1 }])),
        ] {
            assert_eq!(engine_hint(&body, "Qwen/Qwen3-8B"), None, "{body}");
        }
    }

    #[test]
    fn engine_hint_ignores_missing_or_non_text_owned_by() {
        for entry in [
            serde_json::json!({ "id": "m" }),
            serde_json::json!({ "id": "m", "owned_by": null }),
            serde_json::json!({ "id": "m", "owned_by": 42 }),
            serde_json::json!({ "id": "m", "owned_by": true }),
            serde_json::json!({ "id": "m", "owned_by": ["vllm"] }),
            serde_json::json!({ "id": "m", "owned_by": { "name": "vllm" } }),
            serde_json::json!({ "id": "m", "owned_by": "" }),
            serde_json::json!({ "id": "m", "owned_by": " \t " }),
        ] {
            let body = models_body(serde_json::json!([entry]));
            assert_eq!(engine_hint(&body, "m"), None, "{body}");
        }
    }

    #[test]
    fn engine_hint_rejects_hostile_text() {
        let at_limit = "é".repeat(MAX_ENGINE_HINT_CHARS);
        let hint = |owned_by: &str| {
            engine_hint(
                &models_body(serde_json::json!([{ "id": "m", "owned_by": owned_by }])),
                "m",
            )
        };
        // The limit counts characters, not bytes, and applies after trimming.
        assert_eq!(hint(&at_limit), Some(at_limit.clone()));
        assert_eq!(hint(&format!("  {at_limit}  ")), Some(at_limit.clone()));
        assert_eq!(hint(&format!("{at_limit}x")), None);
        assert_eq!(hint(&"v".repeat(100_000)), None);
        for hostile in [
            "vllm\u{0}",
            "vl\nlm",
            "vllm\rinjected",
            "\u{1b}[31mvllm",
            "vllm\u{7f}",
            "vl\u{85}lm",
            "vl\u{200B}lm",
            "\u{202E}mllv",
            "vllm\u{2066}",
            "\u{FEFF}vllm",
        ] {
            assert_eq!(hint(hostile), None, "{hostile:?}");
        }
        // Non-ASCII printable names are fine.
        assert_eq!(hint("引擎 v1"), Some("引擎 v1".to_owned()));
    }
}
