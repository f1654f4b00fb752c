//! The table of run settings the page renders, links carry and help texts explain ([`FIELDS`]):
//! each field's key (the artifact's field name, or strobe's own for [`ClientOptions`](crate::core::config::settings::ClientOptions)), group,
//! kind, bounds and help, in display order; and the cross-field rules' inputs.

use std::fmt;

use crate::core::config::bounds::{
    DecimalBounds, WholeBounds, BURSTINESS_BOUNDS, BURST_BOUNDS, CONCURRENCY_BOUNDS,
    CONTEXT_TOKENS_BOUNDS, DURATION_S_BOUNDS, FIXED_CONTEXT_TOKENS_BOUNDS, MARGIN_BOUNDS,
    MAX_MODEL_LEN_BOUNDS, MAX_TOKENS_BOUNDS, MIN_MAX_TOKENS_WITH_CANARIES, RAMP_S_BOUNDS,
    RATE_BOUNDS, REPEATS_BOUNDS, REQUESTS_BOUNDS, RESPONSE_WORDS_BOUNDS,
    SERVER_METRICS_INTERVAL_MS_BOUNDS, SHARED_PREFIX_TOKENS_BOUNDS, SLO_TARGET_BOUNDS,
    SWEEP_COOLDOWN_S_BOUNDS, SWEEP_MAX_ERROR_BOUNDS, SWEEP_MIN_ATTAINMENT_BOUNDS,
    SWEEP_STEPS_BOUNDS, TEMPERATURE_BOUNDS, THINK_TIME_MS_BOUNDS, TIMEOUT_S_BOUNDS, TOP_P_BOUNDS,
    TRACE_SPEED_BOUNDS,
};

/// Which fieldset a setting is shown in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FieldGroup {
    /// Where the requests go and how the run is labelled.
    Endpoint,
    /// How many requests, and how many at once.
    Load,
    /// The service-level objective the requests are held to.
    Objective,
    /// What each request asks for: context, prompt caching, output contract.
    Prompt,
    /// A workload file's records: which turns, order, output lengths, history, trace speed.
    Workload,
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
        Self::Objective,
        Self::Prompt,
        Self::Workload,
        Self::Sampling,
        Self::Limits,
    ];

    /// The fieldset legend.
    pub fn label(self) -> &'static str {
        match self {
            Self::Endpoint => "Endpoint",
            Self::Load => "Load",
            Self::Objective => "Service level",
            Self::Prompt => "Prompt",
            Self::Workload => "Workload",
            Self::Sampling => "Sampling",
            Self::Limits => "Limits",
        }
    }
}

/// What kind of input a setting takes. A number's bounds are constants of
/// [`bounds`](crate::core::config::bounds), the same ones
/// [`RunConfig::validate`](crate::core::config::settings::RunConfig::validate) and the form's
/// rules check against, so the help text ([`FieldSpec::help`]) and the rule cannot differ.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum FieldKind {
    /// Free text.
    Text,
    /// An `http://` or `https://` URL.
    Url,
    /// A whole number within the bounds.
    Integer(WholeBounds),
    /// A finite decimal number within the bounds.
    Decimal {
        /// The accepted values.
        bounds: DecimalBounds,
        /// Whether the field may be left empty (then the setting is not sent / recorded null).
        optional: bool,
    },
    /// Empty, or a whole number within the bounds.
    OptionalInteger(WholeBounds),
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
    /// The artifact field name, also the query key and an error's
    /// [`field`](crate::core::config::error::ConfigError::field).
    pub key: &'static str,
    /// Short label shown next to the input.
    pub label: &'static str,
    /// What the input accepts.
    pub kind: FieldKind,
    /// One or two user-facing sentences: what the setting does and what is allowed, its
    /// numbers written as placeholders that [`FieldSpec::help`] fills in.
    help: &'static str,
    /// The fieldset it belongs to.
    pub group: FieldGroup,
}

impl FieldSpec {
    /// The help text, its numbers taken from the bounds the table holds: `{range}` is the
    /// kind's bounds (`1–10000`, `above 0 and at most 1`), `{fixed_context}` those of a fixed
    /// `context_tokens`, `{canary_max_tokens}` the least `max_tokens` with request canaries.
    pub fn help(&self) -> String {
        let range = match self.kind {
            FieldKind::Integer(bounds) | FieldKind::OptionalInteger(bounds) => bounds.to_string(),
            FieldKind::Decimal { bounds, .. } => bounds.to_string(),
            _ => String::new(),
        };
        self.help
            .replace("{range}", &range)
            .replace("{fixed_context}", &FIXED_CONTEXT_TOKENS_BOUNDS.to_string())
            .replace(
                "{canary_max_tokens}",
                &MIN_MAX_TOKENS_WITH_CANARIES.to_string(),
            )
    }
}

/// The spellings of [`PromptCacheMode`], in its `ALL` order.
const PROMPT_CACHE_MODES: &[&str] = &["shared", "unique"];
/// The spellings of [`ControlledOutputPolicy`], in its `ALL` order.
const CONTROLLED_OUTPUT_POLICIES: &[&str] = &["observe", "strict"];
/// The spellings of [`ThinkingMode`], in its `ALL` order.
const THINKING_MODES: &[&str] = &["default", "enabled", "disabled", "unsupported"];
/// The spellings of [`ReasoningEffort`](super::plan::ReasoningEffort), in its `ALL` order.
const REASONING_EFFORTS: &[&str] = &["none", "minimal", "low", "medium", "high", "max", "xhigh"];
/// The spellings of [`PrefixCacheReset`](super::choices::PrefixCacheReset), in its `ALL` order.
pub(crate) const PREFIX_CACHE_RESETS: &[&str] = &["off", "before_run", "before_each_step"];
/// The spellings of [`MeasurementThread`], in its `ALL` order.
const MEASUREMENT_THREADS: &[&str] = &["worker", "main"];
/// The spellings of [`LiveView`], in its `ALL` order.
pub(crate) const LIVE_VIEWS: &[&str] = &["during", "end"];
/// The spellings of [`ApiEndpoint`](super::choices::ApiEndpoint), in its `ALL` order.
pub(crate) const API_ENDPOINTS: &[&str] = &["chat", "completions"];
/// The spellings of [`WorkloadTurns`](super::choices::WorkloadTurns), in its `ALL` order.
pub(crate) const WORKLOAD_TURN_CHOICES: &[&str] = &["first", "all"];
/// The spellings of [`WorkloadOrder`](super::choices::WorkloadOrder), in its `ALL` order.
pub(crate) const WORKLOAD_ORDERS: &[&str] = &["file", "shuffle"];
/// The spellings of [`OutputLengths`](super::choices::OutputLengths), in its `ALL` order.
pub(crate) const OUTPUT_LENGTH_CHOICES: &[&str] = &["file", "fixed"];
/// The spellings of [`HistoryMode`](super::choices::HistoryMode), in its `ALL` order.
pub(crate) const HISTORY_MODES: &[&str] = &["live", "recorded"];
/// The spellings of [`LoadMode`](super::choices::LoadMode), in its `ALL` order.
pub(crate) const LOAD_MODES: &[&str] = &["concurrency", "rate"];
/// The spellings of [`Arrivals`](super::choices::Arrivals), in its `ALL` order.
pub(crate) const ARRIVAL_KINDS: &[&str] = &["poisson", "constant", "gamma"];

pub(crate) const BASE_URL: FieldSpec = FieldSpec {
    key: "base_url",
    label: "Base URL",
    kind: FieldKind::Url,
    help: "OpenAI-compatible API root, e.g. http://127.0.0.1:8000/v1. The server must allow \
           this page's origin (CORS).",
    group: FieldGroup::Endpoint,
};
pub(crate) const SERVER_METRICS: FieldSpec = FieldSpec {
    key: "server_metrics",
    label: "Server metrics",
    kind: FieldKind::Text,
    help: "The server's own Prometheus /metrics, scraped from the page beside the run (not from \
           the measuring thread) and kept in the artifact: auto (the base URL's origin + \
           /metrics; the default), off, or the metrics URL (another port or host). A server \
           without them leaves the run untouched, with a note.",
    group: FieldGroup::Endpoint,
};
pub(crate) const SERVER_METRICS_INTERVAL_MS: FieldSpec = FieldSpec {
    key: "server_metrics_interval_ms",
    label: "Metrics interval (ms)",
    kind: FieldKind::Integer(SERVER_METRICS_INTERVAL_MS_BOUNDS),
    help: "How often the server's metrics are scraped during a run, {range} ms.",
    group: FieldGroup::Endpoint,
};
pub(crate) const RESET_PREFIX_CACHE: FieldSpec = FieldSpec {
    key: "reset_prefix_cache",
    label: "Reset prefix cache",
    kind: FieldKind::Choice(PREFIX_CACHE_RESETS),
    help: "Empty the server's prefix cache before measuring, so a run does not find what the \
           last one cached: off, before_run (once, before the first run's warm-up) or \
           before_each_step (before every sweep step and repeat). vLLM serves its reset only \
           with VLLM_SERVER_DEV_MODE=1; SGLang flushes with /flush_cache; llama.cpp, TGI and \
           Ollama have none. A reset that fails stops the run before it measures.",
    group: FieldGroup::Endpoint,
};
pub(crate) const RESET_PREFIX_CACHE_URL: FieldSpec = FieldSpec {
    key: "reset_prefix_cache_url",
    label: "Reset URL",
    kind: FieldKind::Text,
    help: "Optional: where the reset is POSTed instead of the engine's own route (the base \
           URL's origin + /reset_prefix_cache for vLLM, /flush_cache for SGLang); any 2xx \
           answer counts as done.",
    group: FieldGroup::Endpoint,
};
pub(crate) const POOL: FieldSpec = FieldSpec {
    key: "pool",
    label: "Endpoint pool",
    kind: FieldKind::Text,
    help: "Optional: more base URLs of the same server on other ports or host names, separated \
           by spaces or commas. Concurrency slots take turns over base URL and pool, so each \
           origin carries at most six requests and concurrency above six is not queued inside \
           the browser (HTTP/1.1 allows six connections per origin; HTTP/2 needs no pool). \
           For a server on this machine, Loopback aliases fills it with 127.0.0.2, 127.0.0.3 ….",
    group: FieldGroup::Endpoint,
};
pub(crate) const MODEL: FieldSpec = FieldSpec {
    key: "model",
    label: "Model",
    kind: FieldKind::Text,
    help: "Model id sent with every request; pick one from the server's /models list.",
    group: FieldGroup::Endpoint,
};
pub(crate) const ENGINE: FieldSpec = FieldSpec {
    key: "engine",
    label: "Engine",
    kind: FieldKind::Text,
    help: "Serving engine recorded in the artifact, e.g. vllm, sglang or llama.cpp; required. \
           When empty, Check endpoint fills it from the server's /models list (owned_by).",
    group: FieldGroup::Endpoint,
};
pub(crate) const GPU: FieldSpec = FieldSpec {
    key: "gpu",
    label: "GPU",
    kind: FieldKind::Text,
    help: "GPU label recorded in the artifact, e.g. H100. Empty records null.",
    group: FieldGroup::Endpoint,
};
pub(crate) const ENDPOINT: FieldSpec = FieldSpec {
    key: "endpoint",
    label: "API",
    kind: FieldKind::Choice(API_ENDPOINTS),
    help: "chat: POST /chat/completions with messages. completions: POST /completions with a \
           prompt string, as vllm bench serve sends by default.",
    group: FieldGroup::Endpoint,
};
pub(crate) const REQUESTS: FieldSpec = FieldSpec {
    key: "requests",
    label: "Requests",
    kind: FieldKind::Integer(REQUESTS_BOUNDS),
    help: "Total number of requests to send, {range}.",
    group: FieldGroup::Load,
};
pub(crate) const CONCURRENCY: FieldSpec = FieldSpec {
    key: "concurrency",
    label: "Concurrency",
    kind: FieldKind::Integer(CONCURRENCY_BOUNDS),
    help: "Requests in flight at once, {range}. With load concurrency a new request starts as \
           soon as one finishes; with load rate it is the most in flight, and a request due \
           while that many are running waits for a slot (the run then says it was throttled).",
    group: FieldGroup::Load,
};
pub(crate) const LOAD: FieldSpec = FieldSpec {
    key: "load",
    label: "Load",
    kind: FieldKind::Choice(LOAD_MODES),
    help: "concurrency keeps exactly that many requests in flight (a closed loop, the \
           reference tool's way); rate sends each request at its scheduled time, rate a second, \
           whatever the server's pace (an open loop), to ask how much load it carries.",
    group: FieldGroup::Load,
};
pub(crate) const RATE: FieldSpec = FieldSpec {
    key: "rate",
    label: "Rate (req/s)",
    kind: FieldKind::Decimal {
        bounds: RATE_BOUNDS,
        optional: false,
    },
    help: "With load rate: requests per second, {range} (after any ramp).",
    group: FieldGroup::Load,
};
pub(crate) const ARRIVALS: FieldSpec = FieldSpec {
    key: "arrivals",
    label: "Arrivals",
    kind: FieldKind::Choice(ARRIVAL_KINDS),
    help: "With load rate: how the gaps between requests are drawn. poisson: exponential gaps \
           (a Poisson process); constant: every gap 1/rate; gamma: gaps of shape burstiness.",
    group: FieldGroup::Load,
};
pub(crate) const BURSTINESS: FieldSpec = FieldSpec {
    key: "burstiness",
    label: "Burstiness",
    kind: FieldKind::Decimal {
        bounds: BURSTINESS_BOUNDS,
        optional: false,
    },
    help: "With gamma arrivals: the gamma shape, {range}. 1 is Poisson, below 1 \
           burstier, above 1 smoother (vLLM's meaning).",
    group: FieldGroup::Load,
};
pub(crate) const ARRIVAL_SEED: FieldSpec = FieldSpec {
    key: "arrival_seed",
    label: "Arrival seed",
    kind: FieldKind::OptionalInteger(WholeBounds::ANY),
    help: "With load rate: the seed of the gaps, any whole number. Empty uses the context seed. \
           The same seed gives the same schedule (and Python's random.Random the same gaps).",
    group: FieldGroup::Load,
};
pub(crate) const RAMP_S: FieldSpec = FieldSpec {
    key: "ramp_s",
    label: "Ramp (s)",
    kind: FieldKind::Decimal {
        bounds: RAMP_S_BOUNDS,
        optional: false,
    },
    help: "With load rate: seconds over which the rate goes linearly from the ramp's start rate \
           to rate, {range}; 0 is no ramp.",
    group: FieldGroup::Load,
};
pub(crate) const RAMP_START_RATE: FieldSpec = FieldSpec {
    key: "ramp_start_rate",
    label: "Ramp start (req/s)",
    kind: FieldKind::Decimal {
        bounds: RATE_BOUNDS,
        optional: true,
    },
    help: "With a ramp: the rate it starts from, {range}. Needed when ramp is above 0.",
    group: FieldGroup::Load,
};
pub(crate) const DURATION_S: FieldSpec = FieldSpec {
    key: "duration_s",
    label: "Duration (s)",
    kind: FieldKind::Decimal {
        bounds: DURATION_S_BOUNDS,
        optional: true,
    },
    help: "With load rate: schedule requests for this many seconds only ({range}), at most \
           requests of them; the run then has those due before it ends. Empty sends every \
           request.",
    group: FieldGroup::Load,
};
pub(crate) const SWEEP: FieldSpec = FieldSpec {
    key: "sweep",
    label: "Sweep",
    kind: FieldKind::Text,
    help: "Optional: a series of complete runs over one variable, to find the load the server \
           carries. concurrency:1,2,4,8 runs each concurrency; rate:1,2,5,10 each rate (the \
           concurrency above is the cap); auto runs one request at a time, then at full \
           concurrency, then rates evenly between the two. Empty runs once.",
    group: FieldGroup::Load,
};
pub(crate) const SWEEP_STEPS: FieldSpec = FieldSpec {
    key: "sweep_steps",
    label: "Sweep steps",
    kind: FieldKind::Integer(SWEEP_STEPS_BOUNDS),
    help: "With sweep auto: how many steps, {range}, the two measuring steps included.",
    group: FieldGroup::Load,
};
pub(crate) const SWEEP_MAX_ERROR: FieldSpec = FieldSpec {
    key: "sweep_max_error",
    label: "Stop at failures",
    kind: FieldKind::Decimal {
        bounds: SWEEP_MAX_ERROR_BOUNDS,
        optional: true,
    },
    help: "With a sweep: stop after a step whose failed share of requests is above this, \
           {range} (0.05 is 5 %). Empty never stops for failures.",
    group: FieldGroup::Load,
};
pub(crate) const SWEEP_MIN_ATTAINMENT: FieldSpec = FieldSpec {
    key: "sweep_min_attainment",
    label: "Stop below SLO (%)",
    kind: FieldKind::Decimal {
        bounds: SWEEP_MIN_ATTAINMENT_BOUNDS,
        optional: true,
    },
    help: "With a sweep and an SLO: stop after a step in which fewer than this percentage \
           ({range}) of the requests met the SLO. Empty never stops for the SLO.",
    group: FieldGroup::Load,
};
pub(crate) const SWEEP_STOP_SATURATED: FieldSpec = FieldSpec {
    key: "sweep_stop_saturated",
    label: "Stop when saturated",
    kind: FieldKind::Toggle,
    help: "With a rate sweep: stop after a step that completed fewer than 90 % of the \
           requests per second it offered (the server is saturated).",
    group: FieldGroup::Load,
};
pub(crate) const SWEEP_COOLDOWN_S: FieldSpec = FieldSpec {
    key: "sweep_cooldown_s",
    label: "Cool-down (s)",
    kind: FieldKind::Decimal {
        bounds: SWEEP_COOLDOWN_S_BOUNDS,
        optional: false,
    },
    help: "With a sweep or repeats: seconds to wait between two runs, {range}, so the server \
           settles.",
    group: FieldGroup::Load,
};
pub(crate) const REPEATS: FieldSpec = FieldSpec {
    key: "repeats",
    label: "Repeats",
    kind: FieldKind::Integer(REPEATS_BOUNDS),
    help: "Run the same plan this many times, {range} (the same requests each time), to see \
           whether a difference between runs is more than noise; with a sweep, each step. \
           1 runs once.",
    group: FieldGroup::Load,
};
pub(crate) const SLO: FieldSpec = FieldSpec {
    key: "slo",
    label: "SLO",
    kind: FieldKind::Text,
    help: "Optional latency bounds in ms, e.g. ttft:500,tpot:50 (metrics ttfo, ttft, tpot, \
           e2el). A request meets the SLO when it succeeded and every bound holds; a failed \
           request never does; an answer of one token has no TPOT, so its TPOT bound is skipped. \
           It can be changed after the run, in the results, without running again.",
    group: FieldGroup::Objective,
};
pub(crate) const SLO_TARGET: FieldSpec = FieldSpec {
    key: "slo_target",
    label: "SLO target (%)",
    kind: FieldKind::Decimal {
        bounds: SLO_TARGET_BOUNDS,
        optional: false,
    },
    help: "The share of requests that must meet the SLO, {range} %, for a load to count as \
           carried: the capacity view finds the highest load of a sweep that keeps it.",
    group: FieldGroup::Objective,
};
pub(crate) const WARMUP: FieldSpec = FieldSpec {
    key: "warmup",
    label: "Warm-up",
    kind: FieldKind::Toggle,
    help: "Before measuring, send two tiny requests per concurrency slot (max_tokens 1), all \
           at once, so every slot finds an open connection and a cached CORS preflight; they \
           are not counted. Off measures a cold start: the first requests' TTFO then includes \
           connection setup and preflights.",
    group: FieldGroup::Load,
};
pub(crate) const TRACES: FieldSpec = FieldSpec {
    key: "traces",
    label: "Chunk traces",
    kind: FieldKind::Toggle,
    help: "Record in every row when each stream read arrived (chunk_arrivals_ms), for timelines \
           of single requests. Makes the artifact much larger.",
    group: FieldGroup::Load,
};
pub(crate) const MEASUREMENT: FieldSpec = FieldSpec {
    key: "measurement",
    label: "Measure in",
    kind: FieldKind::Choice(MEASUREMENT_THREADS),
    help: "worker: a dedicated Web Worker sends the requests and timestamps every read, so \
           drawing the page cannot delay a timestamp. main: the page's own thread, for \
           comparison.",
    group: FieldGroup::Load,
};
pub(crate) const LIVE_VIEW: FieldSpec = FieldSpec {
    key: "live_view",
    label: "Live view",
    kind: FieldKind::Choice(LIVE_VIEWS),
    help: "during: the page shows counters and running medians four times a second while the \
           run goes on. end: it shows nothing new until the run ends, so no page work competes \
           with the measurement; worth it with Measure in: main, where drawing shares the \
           thread that stamps the reads.",
    group: FieldGroup::Load,
};
pub(crate) const CONTEXT_TOKENS: FieldSpec = FieldSpec {
    key: "context_tokens",
    label: "Context tokens",
    kind: FieldKind::Integer(CONTEXT_TOKENS_BOUNDS),
    help: "Prompt length per request, {fixed_context} tokens, shortened to fit the model's \
           context. 0 samples the context per request from the published distribution \
           (16k–262k tokens).",
    group: FieldGroup::Prompt,
};
pub(crate) const CONTEXT_SEED: FieldSpec = FieldSpec {
    key: "context_seed",
    label: "Context seed",
    kind: FieldKind::Integer(WholeBounds::ANY),
    help: "Seed of the context sampler and the canary markers; any whole number. The same seed \
           plans the same contexts.",
    group: FieldGroup::Prompt,
};
pub(crate) const CONTEXT_CALIBRATION: FieldSpec = FieldSpec {
    key: "context_calibration",
    label: "Context calibration",
    kind: FieldKind::Toggle,
    help: "Size prompts in this server's own tokens: before the run, two unmeasured probes \
           read the server's usage.prompt_tokens, and every prompt is rescaled to land on its \
           context. Off (the default) sizes prompts at 3 characters per token, like the \
           reference tool, so prompts are the same bytes on every server.",
    group: FieldGroup::Prompt,
};
pub(crate) const PROMPT_CACHE_MODE: FieldSpec = FieldSpec {
    key: "prompt_cache_mode",
    label: "Prompt cache mode",
    kind: FieldKind::Choice(PROMPT_CACHE_MODES),
    help: "unique gives every prompt its own content; shared opens every prompt with one common \
           prefix to exercise the server's prefix cache.",
    group: FieldGroup::Prompt,
};
pub(crate) const SHARED_PREFIX_TOKENS: FieldSpec = FieldSpec {
    key: "shared_prefix_tokens",
    label: "Shared prefix tokens",
    kind: FieldKind::Integer(SHARED_PREFIX_TOKENS_BOUNDS),
    help: "Length of the common prefix in shared mode, {range} tokens. Unique mode ignores it \
           and records 0.",
    group: FieldGroup::Prompt,
};
pub(crate) const MAX_TOKENS: FieldSpec = FieldSpec {
    key: "max_tokens",
    label: "Max tokens",
    kind: FieldKind::Integer(MAX_TOKENS_BOUNDS),
    help: "Most tokens each response may generate, {range} (at least {canary_max_tokens} with \
           request canaries).",
    group: FieldGroup::Prompt,
};
pub(crate) const RESPONSE_WORDS: FieldSpec = FieldSpec {
    key: "response_words",
    label: "Response words",
    kind: FieldKind::Integer(RESPONSE_WORDS_BOUNDS),
    help: "Ask every response for exactly this many words, {range}, and record whether it \
           complied. 0 asks for a one-line summary instead.",
    group: FieldGroup::Prompt,
};
pub(crate) const CONTROLLED_OUTPUT_POLICY: FieldSpec = FieldSpec {
    key: "controlled_output_policy",
    label: "Controlled output policy",
    kind: FieldKind::Choice(CONTROLLED_OUTPUT_POLICIES),
    help: "observe records whether responses met response_words; strict counts a miss as a \
           failed request and needs response_words above 0.",
    group: FieldGroup::Prompt,
};
pub(crate) const REQUEST_CANARIES: FieldSpec = FieldSpec {
    key: "request_canaries",
    label: "Request canaries",
    kind: FieldKind::Toggle,
    help: "Every response must begin with its own marker, which catches responses crossed \
           between requests. Needs max_tokens of {canary_max_tokens} or more.",
    group: FieldGroup::Prompt,
};
pub(crate) const WORKLOAD_URL: FieldSpec = FieldSpec {
    key: "workload_url",
    label: "Workload URL",
    kind: FieldKind::Text,
    help: "Address of a workload file the page fetches (the server must allow CORS), so one \
           link shares setup and data. Empty: choose a file above, or none for synthetic prompts.",
    group: FieldGroup::Workload,
};
pub(crate) const WORKLOAD_TURNS: FieldSpec = FieldSpec {
    key: "workload_turns",
    label: "Turns",
    kind: FieldKind::Choice(WORKLOAD_TURN_CHOICES),
    help: "first: one request a record, its first prompt (vLLM's ShareGPT rule). all: whole \
           conversations as sessions, each turn sent with the history before it.",
    group: FieldGroup::Workload,
};
pub(crate) const WORKLOAD_ORDER: FieldSpec = FieldSpec {
    key: "workload_order",
    label: "Order",
    kind: FieldKind::Choice(WORKLOAD_ORDERS),
    help: "file: records in the file's order. shuffle: in an order drawn from the workload \
           seed (the same seed, the same order). Requests takes the first N.",
    group: FieldGroup::Workload,
};
pub(crate) const WORKLOAD_SEED: FieldSpec = FieldSpec {
    key: "workload_seed",
    label: "Workload seed",
    kind: FieldKind::Integer(WholeBounds::ANY),
    help: "Seed of the shuffled order; any whole number.",
    group: FieldGroup::Workload,
};
pub(crate) const OUTPUT_LENGTHS: FieldSpec = FieldSpec {
    key: "output_lengths",
    label: "Output lengths",
    kind: FieldKind::Choice(OUTPUT_LENGTH_CHOICES),
    help: "file: each record's own output length as max_tokens (Max tokens where it has \
           none). fixed: Max tokens for every request.",
    group: FieldGroup::Workload,
};
pub(crate) const HISTORY: FieldSpec = FieldSpec {
    key: "history",
    label: "History",
    kind: FieldKind::Choice(HISTORY_MODES),
    help: "In sessions, what a later turn carries as the assistant's earlier messages. live: \
           the server's own replies. recorded: the file's replies (the same bytes on every \
           server).",
    group: FieldGroup::Workload,
};
pub(crate) const THINK_TIME_MS: FieldSpec = FieldSpec {
    key: "think_time_ms",
    label: "Think time (ms)",
    kind: FieldKind::Integer(THINK_TIME_MS_BOUNDS),
    help: "In sessions, the wait after a reply before the next turn when the record gives no \
           delay, {range} ms.",
    group: FieldGroup::Workload,
};
pub(crate) const SESSION_HEADER: FieldSpec = FieldSpec {
    key: "session_header",
    label: "Session header",
    kind: FieldKind::Text,
    help: "A header sent with each request of a session, its value the session's id, for \
           routers with session affinity, e.g. X-Session-ID. Empty sends none.",
    group: FieldGroup::Workload,
};
pub(crate) const TRACE_SPEED: FieldSpec = FieldSpec {
    key: "trace_speed",
    label: "Trace speed",
    kind: FieldKind::Decimal {
        bounds: TRACE_SPEED_BOUNDS,
        optional: false,
    },
    help: "A trace's requests go out at their timestamps divided by this: 1 real time, 2 twice \
           as fast, {range}.",
    group: FieldGroup::Workload,
};
pub(crate) const TEMPERATURE: FieldSpec = FieldSpec {
    key: "temperature",
    label: "Temperature",
    kind: FieldKind::Decimal {
        bounds: TEMPERATURE_BOUNDS,
        optional: true,
    },
    help: "Sampling temperature, {range}. Empty sends 0.0 and records no requested value.",
    group: FieldGroup::Sampling,
};
pub(crate) const TOP_P: FieldSpec = FieldSpec {
    key: "top_p",
    label: "Top p",
    kind: FieldKind::Decimal {
        bounds: TOP_P_BOUNDS,
        optional: true,
    },
    help: "Nucleus sampling, {range}. Empty does not send top_p.",
    group: FieldGroup::Sampling,
};
pub(crate) const THINKING_MODE: FieldSpec = FieldSpec {
    key: "thinking_mode",
    label: "Thinking mode",
    kind: FieldKind::Choice(THINKING_MODES),
    help: "default sends no thinking control; enabled and disabled set \
           chat_template_kwargs.enable_thinking; unsupported records that the model has none.",
    group: FieldGroup::Sampling,
};
pub(crate) const REASONING_EFFORT: FieldSpec = FieldSpec {
    key: "reasoning_effort",
    label: "Reasoning effort",
    kind: FieldKind::OptionalChoice(REASONING_EFFORTS),
    help: "reasoning_effort sent with each request; empty sends none. Works only with thinking \
           mode default, and the server decides which values its model accepts.",
    group: FieldGroup::Sampling,
};
pub(crate) const TIMEOUT_S: FieldSpec = FieldSpec {
    key: "timeout_s",
    label: "Timeout (s)",
    kind: FieldKind::Decimal {
        bounds: TIMEOUT_S_BOUNDS,
        optional: false,
    },
    help: "Per-request idle timeout in seconds, {range}: a request on which no \
           data arrives for that long is recorded as failed (TimeoutError), as the reference \
           tool's read timeout does.",
    group: FieldGroup::Limits,
};
pub(crate) const MAX_MODEL_LEN: FieldSpec = FieldSpec {
    key: "max_model_len",
    label: "Max model length",
    kind: FieldKind::Integer(MAX_MODEL_LEN_BOUNDS),
    help: "The model's context length, {range} tokens; it must exceed max tokens plus margin. \
           0 discovers it from /models.",
    group: FieldGroup::Limits,
};
pub(crate) const MARGIN: FieldSpec = FieldSpec {
    key: "margin",
    label: "Context margin",
    kind: FieldKind::Integer(MARGIN_BOUNDS),
    help: "Tokens kept free besides max tokens when prompts are shortened to fit the model's \
           context, {range}.",
    group: FieldGroup::Limits,
};

pub(crate) const BURST: FieldSpec = FieldSpec {
    key: "burst",
    label: "Burst",
    kind: FieldKind::Integer(BURST_BOUNDS),
    help: "Requests sent all at once (the reference tool's --burst), {range}; 0 sends none, and \
           a burst needs prompt_cache_mode shared. The form has no field for it.",
    group: FieldGroup::Load,
};
pub(crate) const CLOCK_DOMAIN_ID: FieldSpec = FieldSpec {
    key: "clock_domain_id",
    label: "Clock domain",
    kind: FieldKind::Text,
    help: "The operator's name for the clock the timestamps share, 1 to 64 letters, digits, \
           '.', '_' or '-'. The form has no field for it.",
    group: FieldGroup::Endpoint,
};
pub(crate) const CONFIGURATION_FINGERPRINT: FieldSpec = FieldSpec {
    key: "configuration_fingerprint",
    label: "Configuration fingerprint",
    kind: FieldKind::Text,
    help: "sha256: and 64 lowercase hex digits naming the serving configuration. The form has \
           no field for it.",
    group: FieldGroup::Endpoint,
};

/// Declares [`FieldKey`] and [`FIELDS`] from one list, so the enum and the table always hold the
/// same fields in the same (display) order.
macro_rules! run_form_fields {
    (
        $($variant:ident => $spec:ident),* $(,)?;
        without a field: $($hidden:ident => $hidden_spec:ident),* $(,)?
    ) => {
        /// Every field of the run form, by name, and the settings
        /// [`RunConfig::validate`](crate::core::config::settings::RunConfig::validate) checks
        /// that the form has no field for: code that names a field names it with a variant, so
        /// a misspelt field is a compile error, not a silently ignored key.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum FieldKey {
            $(
                #[doc = concat!("The `", stringify!($spec), "` field.")]
                $variant,
            )*
            $(
                #[doc = concat!("The `", stringify!($hidden_spec), "` setting (no form field).")]
                $hidden,
            )*
        }

        impl FieldKey {
            /// Every field, in display order (the order of [`FIELDS`]).
            pub const ALL: &'static [FieldKey] = &[$(FieldKey::$variant),*];

            /// The settings a [`RunConfig`](crate::core::config::settings::RunConfig) has and
            /// the form does not show: a link cannot set them, an error can name them.
            pub const WITHOUT_FIELD: &'static [FieldKey] = &[$(FieldKey::$hidden),*];

            /// The field's description: its entry in [`FIELDS`], or the table's entry of a
            /// setting without a field.
            pub fn spec(self) -> &'static FieldSpec {
                match self {
                    $(FieldKey::$variant => &$spec,)*
                    $(FieldKey::$hidden => &$hidden_spec,)*
                }
            }
        }

        /// Every run form field, in display order (groups are contiguous).
        pub const FIELDS: &[FieldSpec] = &[$($spec),*];
    };
}

run_form_fields! {
    BaseUrl => BASE_URL,
    Pool => POOL,
    ServerMetrics => SERVER_METRICS,
    ServerMetricsIntervalMs => SERVER_METRICS_INTERVAL_MS,
    ResetPrefixCache => RESET_PREFIX_CACHE,
    ResetPrefixCacheUrl => RESET_PREFIX_CACHE_URL,
    Model => MODEL,
    Engine => ENGINE,
    Gpu => GPU,
    Endpoint => ENDPOINT,
    Requests => REQUESTS,
    Concurrency => CONCURRENCY,
    Load => LOAD,
    Rate => RATE,
    Arrivals => ARRIVALS,
    Burstiness => BURSTINESS,
    ArrivalSeed => ARRIVAL_SEED,
    RampS => RAMP_S,
    RampStartRate => RAMP_START_RATE,
    DurationS => DURATION_S,
    Sweep => SWEEP,
    SweepSteps => SWEEP_STEPS,
    SweepMaxError => SWEEP_MAX_ERROR,
    SweepMinAttainment => SWEEP_MIN_ATTAINMENT,
    SweepStopSaturated => SWEEP_STOP_SATURATED,
    SweepCooldownS => SWEEP_COOLDOWN_S,
    Repeats => REPEATS,
    Warmup => WARMUP,
    Traces => TRACES,
    Measurement => MEASUREMENT,
    LiveView => LIVE_VIEW,
    Slo => SLO,
    SloTarget => SLO_TARGET,
    ContextTokens => CONTEXT_TOKENS,
    ContextSeed => CONTEXT_SEED,
    ContextCalibration => CONTEXT_CALIBRATION,
    PromptCacheMode => PROMPT_CACHE_MODE,
    SharedPrefixTokens => SHARED_PREFIX_TOKENS,
    MaxTokens => MAX_TOKENS,
    ResponseWords => RESPONSE_WORDS,
    ControlledOutputPolicy => CONTROLLED_OUTPUT_POLICY,
    RequestCanaries => REQUEST_CANARIES,
    WorkloadUrl => WORKLOAD_URL,
    WorkloadTurns => WORKLOAD_TURNS,
    WorkloadOrder => WORKLOAD_ORDER,
    WorkloadSeed => WORKLOAD_SEED,
    OutputLengths => OUTPUT_LENGTHS,
    History => HISTORY,
    ThinkTimeMs => THINK_TIME_MS,
    SessionHeader => SESSION_HEADER,
    TraceSpeed => TRACE_SPEED,
    Temperature => TEMPERATURE,
    TopP => TOP_P,
    ThinkingMode => THINKING_MODE,
    ReasoningEffort => REASONING_EFFORT,
    TimeoutS => TIMEOUT_S,
    MaxModelLen => MAX_MODEL_LEN,
    Margin => MARGIN;
    without a field:
    Burst => BURST,
    ClockDomainId => CLOCK_DOMAIN_ID,
    ConfigurationFingerprint => CONFIGURATION_FINGERPRINT,
}

impl FieldKey {
    /// The settings most runs change, shown up front; every other field sits in its group's
    /// collapsed *Advanced* section.
    pub const ESSENTIALS: [FieldKey; 7] = [
        FieldKey::BaseUrl,
        FieldKey::Model,
        FieldKey::Requests,
        FieldKey::Concurrency,
        FieldKey::Load,
        FieldKey::ContextTokens,
        FieldKey::MaxTokens,
    ];

    /// Whether the field is one of [`Self::ESSENTIALS`].
    pub fn is_essential(self) -> bool {
        Self::ESSENTIALS.contains(&self)
    }

    /// The artifact field name (also the query key), e.g. `"max_tokens"`.
    pub fn as_str(self) -> &'static str {
        self.spec().key
    }

    /// The field named `key` (a query key, say), if the form has one.
    pub fn named(key: &str) -> Option<Self> {
        Self::ALL
            .iter()
            .copied()
            .find(|field| field.as_str() == key)
    }
}

/// The artifact field name (also the query key), as messages name the field.
impl fmt::Display for FieldKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The form field with this key, if there is one.
pub fn field_spec(key: &str) -> Option<&'static FieldSpec> {
    FIELDS.iter().find(|spec| spec.key == key)
}

/// Position of a field in [`FIELDS`], for sorting errors into display order; a setting
/// without a field comes after them all.
pub(crate) fn display_position(key: FieldKey) -> usize {
    FieldKey::ALL
        .iter()
        .position(|field| *field == key)
        .unwrap_or(FIELDS.len())
}

/// Cross-field rules of [`RunConfig::validate`]: an error reported on the first field also
/// reads the listed fields. When one of those could not be parsed, the rule saw a stand-in
/// value, so its error would mislead and is held back until the input is fixed.
pub(crate) const RULE_INPUTS: &[(FieldKey, &[FieldKey])] = &[
    (FieldKey::MaxTokens, &[FieldKey::RequestCanaries]),
    (FieldKey::ControlledOutputPolicy, &[FieldKey::ResponseWords]),
    (
        FieldKey::MaxModelLen,
        &[FieldKey::MaxTokens, FieldKey::Margin],
    ),
    (FieldKey::ReasoningEffort, &[FieldKey::ThinkingMode]),
    (FieldKey::Rate, &[FieldKey::Load]),
    (FieldKey::Burstiness, &[FieldKey::Load, FieldKey::Arrivals]),
    (FieldKey::RampS, &[FieldKey::Load]),
    (FieldKey::RampStartRate, &[FieldKey::Load, FieldKey::RampS]),
    (FieldKey::DurationS, &[FieldKey::Load]),
    (
        FieldKey::ResetPrefixCache,
        &[
            FieldKey::Engine,
            FieldKey::BaseUrl,
            FieldKey::ResetPrefixCacheUrl,
        ],
    ),
];

#[cfg(test)]
mod tests;
