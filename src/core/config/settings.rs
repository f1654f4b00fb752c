//! [`RunConfig`]: every setting of a run a user chooses, the bounds of the reference tool
//! (ARTIFACT.md §1.1) and their validation, which reports every violation with what to change;
//! strobe's own [`ClientOptions`]; and the origin rule browsers count connections by.

use crate::core::config::bounds::{
    WholeBounds, BURST_BOUNDS, CONCURRENCY_BOUNDS, CONTEXT_TOKENS_BOUNDS,
    FIXED_CONTEXT_TOKENS_BOUNDS, MARGIN_BOUNDS, MAX_MODEL_LEN_BOUNDS, MAX_TOKENS_BOUNDS,
    REQUESTS_BOUNDS, RESPONSE_WORDS_BOUNDS, SERVER_METRICS_INTERVAL_MS_BOUNDS,
    SHARED_PREFIX_TOKENS_BOUNDS, TEMPERATURE_BOUNDS, TIMEOUT_S_BOUNDS, TOP_P_BOUNDS,
};
use crate::core::config::cache_reset::{reset_route, NoResetRoute, ResetRoute};
use crate::core::config::choices::ApiEndpoint;
use crate::core::config::choices::ControlledOutputPolicy;
use crate::core::config::choices::LiveView;
use crate::core::config::choices::MeasurementThread;
use crate::core::config::choices::PrefixCacheReset;
use crate::core::config::choices::PromptCacheMode;
use crate::core::config::choices::ReasoningEffort;
use crate::core::config::choices::ThinkingMode;
use crate::core::config::error::ConfigError;
use crate::core::config::fields::FieldKey;
use crate::core::config::load::LoadOptions;
use crate::core::config::metrics::{credential_in_url, default_metrics_url};
use crate::core::config::workload::WorkloadOptions;
use crate::core::format::quoted_preview;
use serde::{Deserialize, Serialize};

// The bounds of the reference tool's settings are written with every other bound, in
// `bounds`; these paths stay for the code that reads them here.
pub use crate::core::config::bounds::{
    MAX_CONCURRENCY, MAX_CONTEXT_SETTING_TOKENS, MAX_OUTPUT_SETTING, MAX_REQUESTS,
    MAX_SHARED_PREFIX_TOKENS, MAX_TEMPERATURE, MAX_TIMEOUT_S, MIN_FIXED_CONTEXT_TOKENS,
    MIN_MAX_TOKENS_WITH_CANARIES,
};

/// The connections a browser opens to one HTTP/1.1 origin at most: more requests than this
/// wait inside the browser, and that wait lands inside their TTFO.
pub const BROWSER_HTTP1_CONNECTIONS_PER_HOST: u64 = 6;

/// The most warm-up check rounds after the priming round. In a check round every connection
/// the slots need carries one request, all sent at the same moment; a round whose requests
/// were all on the wire together, each on a connection that was already open, shows that the
/// measured run's first wave will find them open. A round that still opened a connection (or
/// whose requests did not overlap) is followed by another, up to this many. Measured in
/// Chromium 156: the priming round alone left a measured request opening a connection in about
/// one run of a dozen with a pool of 3 ports at concurrency 16.
pub const WARMUP_CHECK_ROUNDS: u64 = 3;
/// Most base URLs a run may spread its requests over (`base_url` plus the endpoint pool).
pub const MAX_ENDPOINTS: usize = 16;
/// The context a sampled plan assumes per request when no cap is known, and the largest
/// sampled context (the aggregate guard's "planned" value in sampled mode).
pub const SAMPLED_CONTEXT_CEILING_TOKENS: u64 = 262_144;
/// The aggregate guard: `requests × planned tokens per request` may not exceed this.
pub const MAX_AGGREGATE_PLANNED_TOKENS: u64 = 67_108_864;

/// `sample_ctx`'s table: a draw `u` maps to the first row with `u <= bound` (inclusive).
pub(crate) const SAMPLED_CONTEXT_TABLE: [(f64, u64); 5] = [
    (0.218, 16_000),
    (0.602, 32_768),
    (0.906, 65_536),
    (0.995, 131_072),
    (1.0, 262_144),
];

/// Every setting of a benchmark run that makes sense in a browser, named like the artifact
/// fields (ARTIFACT.md §1.1). `Default` gives the CLI defaults (plus strobe's own
/// [`ClientOptions`] defaults); missing keys deserialize to them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RunConfig {
    /// OpenAI-compatible API root, e.g. `http://127.0.0.1:8000/v1` (no default).
    pub base_url: String,
    /// Model id sent in every request (no default).
    pub model: String,
    /// Serving engine label recorded in the artifact, or null.
    pub engine: Option<String>,
    /// GPU label recorded in the artifact, or null.
    pub gpu: Option<String>,
    /// Tier label recorded in the artifact, or null.
    pub tier: Option<String>,
    /// Number of requests, 1..=10000 (default 60). Replaced by `burst` when that is nonzero.
    pub requests: u64,
    /// Requests in flight at once, 1..=256 (default 20). Replaced by `burst` when nonzero.
    pub concurrency: u64,
    /// 0..=256 (default 0). Nonzero sends `burst` requests all at once; needs shared mode.
    pub burst: u64,
    /// Tokens of the shared prefix in shared mode, 0..=262144 (default 8000).
    pub shared_prefix_tokens: u64,
    /// Fixed context per request, 0 or 32..=1048576 (default 0 = sample the distribution).
    pub context_tokens: u64,
    /// Seed of the context sampler and of the canary markers (default 0; any i64).
    pub context_seed: i64,
    /// `max_tokens` sent with each request, 1..=65536 (default 64; at least 16 with canaries).
    pub max_tokens: u64,
    /// Words each response is asked to emit, 0..=65536 (default 0 = summarize in one line).
    pub response_words: u64,
    /// Shared prefix or unique prompts (default shared).
    pub prompt_cache_mode: PromptCacheMode,
    /// Ask every response to begin with its own marker and check it (default off).
    pub request_canaries: bool,
    /// What a response missing the `response_words` contract does (default observe).
    pub controlled_output_policy: ControlledOutputPolicy,
    /// Operator-chosen clock domain, `[A-Za-z0-9._-]{1,64}`, or null.
    pub clock_domain_id: Option<String>,
    /// Operator-supplied `sha256:<64 lowercase hex>` of the serving configuration, or null.
    pub configuration_fingerprint: Option<String>,
    /// The model's context length, 0..=1048576 (default 0 = discover it from `/models`).
    pub max_model_len: u64,
    /// Tokens kept free besides `max_tokens` when capping prompts, 0..=1048576 (default 1024).
    pub margin: u64,
    /// Requested temperature, finite 0..=2, or null (then 0.0 is sent).
    pub temperature: Option<f64>,
    /// Requested top_p, finite in (0, 1], or null (then it is not sent).
    pub top_p: Option<f64>,
    /// Thinking control (default `default`).
    pub thinking_mode: ThinkingMode,
    /// `reasoning_effort` to send, or null to send none.
    pub reasoning_effort: Option<ReasoningEffort>,
    /// Per-request timeout in seconds, 0 < t <= 3600 (default 900).
    pub timeout_s: f64,
    /// How requests are sent: closed loop at `concurrency` (the reference tool's way, the
    /// default) or open loop at a request rate, `concurrency` then capping requests in flight.
    /// strobe's own; recorded in the artifact's `load` block when open.
    pub load: LoadOptions,
    /// How strobe's browser client carries the plan out (warm-up, traces). Not a setting of the
    /// reference tool, and never recorded as one: see [`ClientOptions`].
    pub client: ClientOptions,
    /// Which API the requests go to (default chat). strobe's own; recorded in the artifact's
    /// `workload` block when not chat.
    pub endpoint: ApiEndpoint,
    /// How a workload file's records are sent; recorded in the artifact's `workload` block.
    pub workload: WorkloadOptions,
}

/// How strobe's browser client carries a plan out: choices the reference tool did not have,
/// which change what the measurement includes but not what is requested.
///
/// They live in [`RunConfig`] because the run form is parsed into one value in one place
/// ([`RunForm::to_config`](super::form::RunForm::to_config)), so a link that says `warmup=false`
/// reaches the runner without a second path. The artifact records what they caused, not the
/// choices themselves: the warm-up that ran in `client.warmup`, traces as the rows'
/// `chunk_arrivals_ms`, the thread that measured in `client.measurement_thread`, whether the page
/// drew meanwhile in `client.live_view`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct ClientOptions {
    /// Before the measured run, send tiny unmeasured requests, all at once, so every
    /// concurrency slot finds an open connection and a cached CORS preflight at its first
    /// measured `fetch()` (default on; see [`RunPlan::warmup_requests`](crate::core::plan::RunPlan::warmup_requests)). Off measures a cold
    /// start.
    pub warmup: bool,
    /// Record the arrival time of every stream read that carried events in each row's
    /// `chunk_arrivals_ms` (default off: it makes artifacts much larger).
    pub chunk_traces: bool,
    /// Which thread measures (default: a dedicated worker).
    pub measurement: MeasurementThread,
    /// Whether the page shows progress while the run goes on (default) or only at its end.
    pub live_view: LiveView,
    /// More base URLs of the same server (other ports or host names), each its own origin.
    /// Concurrency slot `k` sends to endpoint `k mod n` of `[base_url, pool…]`
    /// ([`RunPlan::endpoint_of_slot`](crate::core::plan::RunPlan::endpoint_of_slot)), so a browser's six HTTP/1.1 connections per origin
    /// become six per endpoint. Empty: every request goes to `base_url`.
    pub endpoint_pool: Vec<String>,
    /// Size prompts in the server's own tokens, measured by two unmeasured probes before the
    /// run (default off: prompts at 3 characters per token, the same bytes on every server;
    /// see [`calibration`](crate::core::plan::calibration)).
    pub context_calibration: bool,
    /// The server's `/metrics`, scraped from the page during the run (docs/guide/telemetry.md):
    /// `auto` (the base URL's origin + `/metrics`, the default), `off`, or the metrics URL.
    pub server_metrics: String,
    /// How often the metrics are scraped, ms (100–60,000; default 1,000).
    pub server_metrics_interval_ms: u64,
    /// When the server's prefix cache is emptied (docs/guide/telemetry.md, *A clean prefix cache*):
    /// never (the default), before the first run's warm-up, or before every run's.
    pub reset_prefix_cache: PrefixCacheReset,
    /// Where the reset is sent instead of the engine's own route, with `POST`; `None`: the
    /// route of [`RunConfig::engine`] on the base URL's origin.
    pub reset_prefix_cache_url: Option<String>,
}

impl Default for ClientOptions {
    fn default() -> Self {
        Self {
            warmup: true,
            chunk_traces: false,
            measurement: MeasurementThread::Worker,
            live_view: LiveView::During,
            endpoint_pool: Vec::new(),
            context_calibration: false,
            server_metrics: SERVER_METRICS_AUTO.to_owned(),
            server_metrics_interval_ms: DEFAULT_SERVER_METRICS_INTERVAL_MS,
            reset_prefix_cache: PrefixCacheReset::Off,
            reset_prefix_cache_url: None,
        }
    }
}

/// `server_metrics=auto` (the default): scrape `<origin of base_url>/metrics`. The fidelity
/// benchmark finds scraping no worse for the measurement (docs/develop/accuracy.md).
pub const SERVER_METRICS_AUTO: &str = "auto";
/// `server_metrics=off`: no scrape.
pub const SERVER_METRICS_OFF: &str = "off";
/// The default scrape interval, ms.
pub const DEFAULT_SERVER_METRICS_INTERVAL_MS: u64 = 1_000;

impl ClientOptions {
    /// Where the run scrapes the server's metrics, if anywhere: `<origin of base_url>/metrics`
    /// for `auto`, nothing for `off`, else the URL given.
    pub fn metrics_url(&self, base_url: &str) -> Option<String> {
        match self.server_metrics.trim() {
            SERVER_METRICS_OFF => None,
            SERVER_METRICS_AUTO => default_metrics_url(base_url),
            url => Some(url.to_owned()),
        }
    }
}

/// The origin of an `http(s)://` URL, lower-cased (`scheme://host[:port]`): what a browser
/// counts its per-host connections by. `None` when `url` is not an `http(s)` URL.
pub fn url_origin(url: &str) -> Option<String> {
    let lower = url.trim().to_ascii_lowercase();
    let (scheme, rest) = lower
        .strip_prefix("https://")
        .map(|rest| ("https", rest))
        .or_else(|| lower.strip_prefix("http://").map(|rest| ("http", rest)))?;
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let authority = authority.rsplit('@').next().unwrap_or_default();
    if authority.is_empty() {
        return None;
    }
    let default_port = if scheme == "https" { ":443" } else { ":80" };
    let authority = authority.strip_suffix(default_port).unwrap_or(authority);
    Some(format!("{scheme}://{authority}"))
}

impl Default for RunConfig {
    fn default() -> Self {
        Self {
            base_url: String::new(),
            model: String::new(),
            engine: None,
            gpu: None,
            tier: None,
            requests: 60,
            concurrency: 20,
            burst: 0,
            shared_prefix_tokens: 8_000,
            context_tokens: 0,
            context_seed: 0,
            max_tokens: 64,
            response_words: 0,
            prompt_cache_mode: PromptCacheMode::Shared,
            request_canaries: false,
            controlled_output_policy: ControlledOutputPolicy::Observe,
            clock_domain_id: None,
            configuration_fingerprint: None,
            max_model_len: 0,
            margin: 1_024,
            temperature: None,
            top_p: None,
            thinking_mode: ThinkingMode::Default,
            reasoning_effort: None,
            timeout_s: 900.0,
            load: LoadOptions::default(),
            client: ClientOptions::default(),
            endpoint: ApiEndpoint::Chat,
            workload: WorkloadOptions::default(),
        }
    }
}

/// Pushes an error unless `value` is within `field`'s bounds (the ones its table entry holds).
fn check_range(errors: &mut Vec<ConfigError>, field: FieldKey, bounds: WholeBounds, value: u64) {
    if !bounds.admits(value) {
        let WholeBounds { min, max } = bounds;
        errors.push(ConfigError::new(
            field,
            format!("{field} must be between {min} and {max} (got {value})"),
        ));
    }
}

/// `[A-Za-z0-9._-]{1,64}`, matched against the whole string.
fn is_valid_clock_domain_id(id: &str) -> bool {
    (1..=64).contains(&id.len())
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

/// `sha256:[0-9a-f]{64}`, matched against the whole string.
fn is_valid_configuration_fingerprint(fingerprint: &str) -> bool {
    fingerprint.strip_prefix("sha256:").is_some_and(|hex| {
        hex.len() == 64 && hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
    })
}

/// `http://…` or `https://…` with a non-empty rest and no whitespace.
fn is_valid_base_url(url: &str) -> bool {
    let lower = url.to_ascii_lowercase();
    let rest = lower
        .strip_prefix("https://")
        .or_else(|| lower.strip_prefix("http://"));
    rest.is_some_and(|rest| !rest.is_empty() && !rest.starts_with('/'))
        && !url.chars().any(char::is_whitespace)
}

impl RunConfig {
    /// Checks every bound of ARTIFACT.md §1.1 and returns every violation, not just the first.
    ///
    /// The CLI's per-model-family `reasoning_effort` rules (GPT-OSS takes low/medium/high,
    /// DeepSeek-V4 low/high/max, …) are deliberately not enforced: the CLI keys them off model
    /// families it resolves from its tier registry, while strobe talks to arbitrary endpoints
    /// whose model ids say nothing reliable about the family. A server that rejects the value
    /// answers with an error, which the run records as a failed request.
    pub fn validate(&self) -> Result<(), Vec<ConfigError>> {
        let mut errors = Vec::new();

        if !is_valid_base_url(&self.base_url) {
            errors.push(ConfigError::new(
                FieldKey::BaseUrl,
                format!(
                    "base_url must start with http:// or https:// followed by a host, \
                     e.g. http://127.0.0.1:8000/v1 (got {})",
                    quoted_preview(&self.base_url)
                ),
            ));
        }
        if self.model.trim().is_empty() {
            errors.push(ConfigError::new(
                FieldKey::Model,
                "model must not be empty; enter the model id the server serves (see its /models list)",
            ));
        }

        check_range(
            &mut errors,
            FieldKey::Requests,
            REQUESTS_BOUNDS,
            self.requests,
        );
        check_range(
            &mut errors,
            FieldKey::Concurrency,
            CONCURRENCY_BOUNDS,
            self.concurrency,
        );
        check_range(&mut errors, FieldKey::Burst, BURST_BOUNDS, self.burst);
        if self.burst > 0 && self.prompt_cache_mode != PromptCacheMode::Shared {
            errors.push(ConfigError::new(
                FieldKey::Burst,
                format!(
                    "burst needs prompt_cache_mode shared (got burst {} with {}); \
                     set burst to 0 or switch to shared",
                    self.burst, self.prompt_cache_mode
                ),
            ));
        }
        check_range(
            &mut errors,
            FieldKey::SharedPrefixTokens,
            SHARED_PREFIX_TOKENS_BOUNDS,
            self.shared_prefix_tokens,
        );
        if !CONTEXT_TOKENS_BOUNDS.admits(self.context_tokens)
            || (self.context_tokens != 0
                && !FIXED_CONTEXT_TOKENS_BOUNDS.admits(self.context_tokens))
        {
            errors.push(ConfigError::new(
                FieldKey::ContextTokens,
                format!(
                    "context_tokens must be 0 (sample the distribution) or between {} and {} \
                     (got {})",
                    FIXED_CONTEXT_TOKENS_BOUNDS.min,
                    FIXED_CONTEXT_TOKENS_BOUNDS.max,
                    self.context_tokens
                ),
            ));
        }

        check_range(
            &mut errors,
            FieldKey::MaxTokens,
            MAX_TOKENS_BOUNDS,
            self.max_tokens,
        );
        if self.request_canaries && self.max_tokens < MIN_MAX_TOKENS_WITH_CANARIES {
            errors.push(ConfigError::new(
                FieldKey::MaxTokens,
                format!(
                    "max_tokens must be at least {MIN_MAX_TOKENS_WITH_CANARIES} when \
                     request_canaries is on (got {}); raise max_tokens or turn canaries off",
                    self.max_tokens
                ),
            ));
        }
        check_range(
            &mut errors,
            FieldKey::ResponseWords,
            RESPONSE_WORDS_BOUNDS,
            self.response_words,
        );
        if self.controlled_output_policy == ControlledOutputPolicy::Strict
            && self.response_words == 0
        {
            errors.push(ConfigError::new(
                FieldKey::ControlledOutputPolicy,
                "controlled_output_policy strict needs response_words above 0 (got 0); \
                 set response_words or choose observe",
            ));
        }

        if let Some(id) = &self.clock_domain_id {
            if !is_valid_clock_domain_id(id) {
                errors.push(ConfigError::new(
                    FieldKey::ClockDomainId,
                    format!(
                        "clock_domain_id must be 1 to 64 characters of letters, digits, '.', '_' \
                         or '-' (got {}); leave it empty to record none",
                        quoted_preview(id)
                    ),
                ));
            }
        }
        if let Some(fingerprint) = &self.configuration_fingerprint {
            if !is_valid_configuration_fingerprint(fingerprint) {
                errors.push(ConfigError::new(
                    FieldKey::ConfigurationFingerprint,
                    format!(
                        "configuration_fingerprint must be \"sha256:\" followed by 64 lowercase \
                         hex digits (got {}); leave it empty to record none",
                        quoted_preview(fingerprint)
                    ),
                ));
            }
        }

        check_range(
            &mut errors,
            FieldKey::MaxModelLen,
            MAX_MODEL_LEN_BOUNDS,
            self.max_model_len,
        );
        check_range(&mut errors, FieldKey::Margin, MARGIN_BOUNDS, self.margin);
        let reserved = self.max_tokens.saturating_add(self.margin);
        if self.max_model_len != 0 && self.max_model_len <= reserved {
            errors.push(ConfigError::new(
                FieldKey::MaxModelLen,
                format!(
                    "max_model_len must exceed max_tokens plus the context margin ({} + {} = \
                     {reserved}, got {}); raise max_model_len, lower max_tokens or margin, \
                     or set max_model_len to 0 to discover it from /models",
                    self.max_tokens, self.margin, self.max_model_len
                ),
            ));
        }

        if let Some(temperature) = self.temperature {
            if !TEMPERATURE_BOUNDS.admits(temperature) {
                errors.push(ConfigError::new(
                    FieldKey::Temperature,
                    format!(
                        "temperature must be a number from {} to {} (got {temperature}); \
                         leave it empty to send 0.0",
                        TEMPERATURE_BOUNDS.min, TEMPERATURE_BOUNDS.max
                    ),
                ));
            }
        }
        if let Some(top_p) = self.top_p {
            if !TOP_P_BOUNDS.admits(top_p) {
                errors.push(ConfigError::new(
                    FieldKey::TopP,
                    format!(
                        "top_p must be above {} and at most {} (got {top_p}); \
                         leave it empty to not send it",
                        TOP_P_BOUNDS.min, TOP_P_BOUNDS.max
                    ),
                ));
            }
        }
        if let Some(effort) = self.reasoning_effort {
            if self.thinking_mode != ThinkingMode::Default {
                errors.push(ConfigError::new(
                    FieldKey::ReasoningEffort,
                    format!(
                        "reasoning_effort cannot be combined with thinking_mode {} (got \
                         reasoning_effort {effort}); set thinking_mode to default or clear \
                         reasoning_effort",
                        self.thinking_mode
                    ),
                ));
            }
        }
        self.check_endpoint_pool(&mut errors);
        self.check_server_metrics(&mut errors);
        self.check_prefix_cache_reset(&mut errors);
        self.load.check(self.burst, &mut errors);
        self.workload.check(&mut errors);
        if !TIMEOUT_S_BOUNDS.admits(self.timeout_s) {
            errors.push(ConfigError::new(
                FieldKey::TimeoutS,
                format!(
                    "timeout_s must be above {} and at most {} seconds (got {})",
                    TIMEOUT_S_BOUNDS.min, TIMEOUT_S_BOUNDS.max, self.timeout_s
                ),
            ));
        }

        if errors.is_empty() {
            Ok(())
        } else {
            Err(errors)
        }
    }

    /// `POST` target of the benchmark requests: `base_url` without trailing `/`, then
    /// `/chat/completions` or `/completions` by [`endpoint`](Self::endpoint).
    pub fn request_url(&self) -> String {
        self.url_at(&self.base_url)
    }

    /// The request path of [`endpoint`](Self::endpoint) on `base`.
    fn url_at(&self, base: &str) -> String {
        let path = match self.endpoint {
            ApiEndpoint::Chat => "chat/completions",
            ApiEndpoint::Completions => "completions",
        };
        format!("{}/{path}", base.trim_end_matches('/'))
    }

    /// Every base URL the run sends to: `base_url`, then the endpoint pool, in order.
    pub fn endpoints(&self) -> Vec<&str> {
        std::iter::once(self.base_url.as_str())
            .chain(self.client.endpoint_pool.iter().map(String::as_str))
            .collect()
    }

    /// The `POST` target of every endpoint of [`endpoints`](Self::endpoints), in order.
    pub fn request_urls(&self) -> Vec<String> {
        self.endpoints()
            .into_iter()
            .map(|base| self.url_at(base))
            .collect()
    }

    /// `server_metrics` is `auto`, `off` or an http(s) URL that carries no credential (it is
    /// written into the artifact), and its interval is 100–60,000 ms.
    fn check_server_metrics(&self, errors: &mut Vec<ConfigError>) {
        let setting = self.client.server_metrics.trim();
        if ![SERVER_METRICS_AUTO, SERVER_METRICS_OFF].contains(&setting) {
            if url_origin(setting).is_none() {
                errors.push(ConfigError::new(
                    FieldKey::ServerMetrics,
                    format!(
                        "server_metrics must be auto, off, or the metrics URL like \
                         http://gpu-box:8000/metrics (got {})",
                        quoted_preview(setting)
                    ),
                ));
            } else if let Some(what) = credential_in_url(setting) {
                errors.push(ConfigError::new(
                    FieldKey::ServerMetrics,
                    format!(
                        "the metrics URL carries {what}, which would be written into the \
                         artifact: give it without"
                    ),
                ));
            }
        }
        let interval = self.client.server_metrics_interval_ms;
        let bounds = SERVER_METRICS_INTERVAL_MS_BOUNDS;
        if !bounds.admits(interval) {
            errors.push(ConfigError::new(
                FieldKey::ServerMetricsIntervalMs,
                format!(
                    "server_metrics_interval_ms must be from {} to {} ms (got {interval})",
                    bounds.min, bounds.max
                ),
            ));
        }
    }

    /// The request that empties the server's prefix cache before a run: `None` when
    /// `reset_prefix_cache` is off, else the engine's route on the base URL's origin (or the
    /// URL given), or why there is none.
    pub fn prefix_cache_reset_route(&self) -> Option<Result<ResetRoute, NoResetRoute>> {
        if self.client.reset_prefix_cache == PrefixCacheReset::Off {
            return None;
        }
        Some(reset_route(
            self.engine.as_deref().unwrap_or_default(),
            &self.base_url,
            self.client.reset_prefix_cache_url.as_deref(),
        ))
    }

    /// `reset_prefix_cache_url`, when given, is an http(s) URL without a credential (it is
    /// written into the artifact); with a reset asked for, the engine has a reset route. An
    /// engine not named yet is the engine field's error, not this one's.
    fn check_prefix_cache_reset(&self, errors: &mut Vec<ConfigError>) {
        if let Some(url) = &self.client.reset_prefix_cache_url {
            if url_origin(url).is_none() {
                errors.push(ConfigError::new(
                    FieldKey::ResetPrefixCacheUrl,
                    format!(
                        "reset_prefix_cache_url must be the reset's URL like \
                         http://gpu-box:8000/reset_prefix_cache, or empty for the engine's own \
                         route (got {})",
                        quoted_preview(url)
                    ),
                ));
            } else if let Some(what) = credential_in_url(url) {
                errors.push(ConfigError::new(
                    FieldKey::ResetPrefixCacheUrl,
                    format!(
                        "the reset URL carries {what}, which would be written into the \
                         artifact: give it without (the API key is sent in its header)"
                    ),
                ));
            }
        }
        if self.engine.is_none() {
            return;
        }
        match self.prefix_cache_reset_route() {
            Some(Err(NoResetRoute::NoOrigin)) | Some(Ok(_)) | None => {}
            Some(Err(reason)) => errors.push(ConfigError::new(
                FieldKey::ResetPrefixCache,
                reason.to_string(),
            )),
        }
    }

    /// The pool's rules: at most [`MAX_ENDPOINTS`] base URLs in all, each a valid base URL on
    /// an origin of its own (two URLs on one origin would share its connections, which is
    /// what the pool is there to avoid).
    fn check_endpoint_pool(&self, errors: &mut Vec<ConfigError>) {
        let pool = &self.client.endpoint_pool;
        if pool.is_empty() {
            return;
        }
        if pool.len() + 1 > MAX_ENDPOINTS {
            errors.push(ConfigError::new(
                FieldKey::Pool,
                format!(
                    "the endpoint pool may hold at most {} base URLs besides base_url (got {}); \
                     {} origins already carry {} HTTP/1.1 connections",
                    MAX_ENDPOINTS - 1,
                    pool.len(),
                    MAX_ENDPOINTS,
                    MAX_ENDPOINTS as u64 * BROWSER_HTTP1_CONNECTIONS_PER_HOST
                ),
            ));
            return;
        }
        let mut origins: Vec<String> = url_origin(&self.base_url).into_iter().collect();
        for url in pool {
            if !is_valid_base_url(url) {
                errors.push(ConfigError::new(
                    FieldKey::Pool,
                    format!(
                        "every pool entry must be a base URL like http://127.0.0.1:8001/v1 \
                         (got {}); separate entries with spaces or commas",
                        quoted_preview(url)
                    ),
                ));
                continue;
            }
            match url_origin(url) {
                Some(origin) if origins.contains(&origin) => errors.push(ConfigError::new(
                    FieldKey::Pool,
                    format!(
                        "{} is on origin {origin}, which base_url or another pool entry already \
                         uses; each endpoint needs its own port or host name, or it shares that \
                         origin's six connections",
                        quoted_preview(url)
                    ),
                )),
                Some(origin) => origins.push(origin),
                None => {}
            }
        }
    }

    /// `GET` target of `max_model_len` discovery: `base_url` without trailing `/` + `/models`.
    pub fn models_url(&self) -> String {
        format!("{}/models", self.base_url.trim_end_matches('/'))
    }

    /// The URL of an engine's own endpoint at `path` below the server's root: the base URL
    /// without its trailing `/v1` (`http://host:11434/v1` → `http://host:11434/api/ps`).
    pub fn server_url(&self, path: &str) -> String {
        let base = self.base_url.trim_end_matches('/');
        let root = base.strip_suffix("/v1").unwrap_or(base);
        format!("{root}{path}")
    }
}

#[cfg(test)]
pub(crate) mod tests;
