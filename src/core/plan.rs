//! The run plan: the settings a user chooses ([`RunConfig`]), their validation, and everything
//! that is fixed before the first request is sent ([`RunPlan`]): request count, concurrency,
//! context length and prompt budget cap, the planned context of every request, canary markers,
//! and the `sampling` / `serve_flags` blocks the artifact records (ARTIFACT.md §1.1, §1.2, §3).
//!
//! It also reads an already fetched `/models` body to discover `max_model_len`; fetching it is
//! the web layer's job.

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use thiserror::Error;

use super::pyrandom::PyRandom;

/// Largest `requests` value (`--requests` is 1..=10000).
pub const MAX_REQUESTS: u64 = 10_000;
/// Largest `concurrency` and `burst` value.
pub const MAX_CONCURRENCY: u64 = 256;
/// Largest `shared_prefix_tokens` value.
pub const MAX_SHARED_PREFIX_TOKENS: u64 = 262_144;
/// Largest value of the token-count settings `context_tokens`, `max_model_len` and `margin`.
pub const MAX_CONTEXT_SETTING_TOKENS: u64 = 1_048_576;
/// Smallest nonzero `context_tokens` value.
pub const MIN_FIXED_CONTEXT_TOKENS: u64 = 32;
/// Largest `max_tokens` and `response_words` value.
pub const MAX_OUTPUT_SETTING: u64 = 65_536;
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
/// Smallest `max_tokens` when request canaries are on (the marker itself needs room).
pub const MIN_MAX_TOKENS_WITH_CANARIES: u64 = 16;
/// Largest `timeout_s` value, in seconds.
pub const MAX_TIMEOUT_S: f64 = 3_600.0;
/// Largest `temperature` value.
pub const MAX_TEMPERATURE: f64 = 2.0;
/// The context a sampled plan assumes per request when no cap is known, and the largest
/// sampled context (the aggregate guard's "planned" value in sampled mode).
pub const SAMPLED_CONTEXT_CEILING_TOKENS: u64 = 262_144;
/// The aggregate guard: `requests × planned tokens per request` may not exceed this.
pub const MAX_AGGREGATE_PLANNED_TOKENS: u64 = 67_108_864;

/// `sample_ctx`'s table: a draw `u` maps to the first row with `u <= bound` (inclusive).
const SAMPLED_CONTEXT_TABLE: [(f64, u64); 5] = [
    (0.218, 16_000),
    (0.602, 32_768),
    (0.906, 65_536),
    (0.995, 131_072),
    (1.0, 262_144),
];

/// A string that is not one of a setting's allowed spellings.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[error("{field} must be one of {} (got {got:?})", .allowed.join(", "))]
pub struct ParseChoiceError {
    /// The setting (artifact field / query key), e.g. `"thinking_mode"`.
    pub field: &'static str,
    /// The rejected text.
    pub got: String,
    /// The accepted spellings.
    pub allowed: &'static [&'static str],
}

/// Declares a setting whose values are fixed lowercase strings in the artifact, with serde,
/// `as_str`, `Display`, `FromStr` and the list of all values agreeing on one spelling table.
macro_rules! choice_enum {
    (
        $(#[$meta:meta])*
        $name:ident for $field:literal {
            $( $(#[$variant_meta:meta])* $variant:ident => $text:literal, )+
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
        pub enum $name {
            $( $(#[$variant_meta])* #[serde(rename = $text)] $variant, )+
        }

        impl $name {
            /// Every value, in the order the spec lists them (for pickers).
            pub const ALL: &'static [Self] = &[$(Self::$variant),+];

            /// The spelling the artifact and the CLI use.
            pub fn as_str(self) -> &'static str {
                match self {
                    $( Self::$variant => $text, )+
                }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl FromStr for $name {
            type Err = ParseChoiceError;

            fn from_str(text: &str) -> Result<Self, Self::Err> {
                match text {
                    $( $text => Ok(Self::$variant), )+
                    _ => Err(ParseChoiceError {
                        field: $field,
                        got: text.to_owned(),
                        allowed: &[$($text),+],
                    }),
                }
            }
        }
    };
}

choice_enum! {
    /// Whether requests share one long prefix (exercising the server's prefix cache) or each
    /// carries its own content (`prompt_cache_mode`).
    #[derive(Default)]
    PromptCacheMode for "prompt_cache_mode" {
        /// One shared prefix of `shared_prefix_tokens` before each request's own filler.
        #[default]
        Shared => "shared",
        /// No shared prefix; each prompt opens with a per-request header.
        Unique => "unique",
    }
}

choice_enum! {
    /// What a response that misses the `response_words` contract does to the request
    /// (`controlled_output_policy`).
    #[derive(Default)]
    ControlledOutputPolicy for "controlled_output_policy" {
        /// Record adherence, keep the request (historical behaviour).
        #[default]
        Observe => "observe",
        /// Reject non-exact or truncated completions as failures.
        Strict => "strict",
    }
}

choice_enum! {
    /// How the request controls the model's thinking (`serve_flags.thinking_mode`).
    #[derive(Default)]
    ThinkingMode for "thinking_mode" {
        /// Send no thinking control; the server's template decides.
        #[default]
        Default => "default",
        /// Send `chat_template_kwargs.enable_thinking = true`.
        Enabled => "enabled",
        /// Send `chat_template_kwargs.enable_thinking = false`.
        Disabled => "disabled",
        /// The model has no thinking control; send none and record that.
        Unsupported => "unsupported",
    }
}

choice_enum! {
    /// The `reasoning_effort` request field.
    ReasoningEffort for "reasoning_effort" {
        /// `"none"`: ask for no reasoning.
        None => "none",
        /// `"minimal"`.
        Minimal => "minimal",
        /// `"low"`.
        Low => "low",
        /// `"medium"`.
        Medium => "medium",
        /// `"high"`.
        High => "high",
        /// `"max"`.
        Max => "max",
        /// `"xhigh"`.
        Xhigh => "xhigh",
    }
}

choice_enum! {
    /// Which thread of the browser takes the measurements (the `measurement` link key).
    #[derive(Default)]
    MeasurementThread for "measurement" {
        /// A dedicated Web Worker runs the transport, the clock and the stream decoding; the
        /// page's thread only renders, so drawing, layout and garbage collection there cannot
        /// delay a read's timestamp.
        #[default]
        Worker => "worker",
        /// The page's own thread, shared with rendering: kept to compare against.
        Main => "main",
    }
}

choice_enum! {
    /// When the page shows a run's progress (the `live_view` link key).
    #[derive(Default)]
    LiveView for "live_view" {
        /// Counters and running medians four times a second, charts too when asked for.
        #[default]
        During => "during",
        /// Nothing new until the run ends: no page work competes with the measurement (on
        /// the page's own thread, drawing shares the thread that stamps the reads).
        End => "end",
    }
}

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
    /// How strobe's browser client carries the plan out (warm-up, traces). Not a setting of the
    /// reference tool, and never recorded as one: see [`ClientOptions`].
    pub client: ClientOptions,
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
    /// measured `fetch()` (default on; see [`RunPlan::warmup_requests`]). Off measures a cold
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
    /// ([`RunPlan::endpoint_of_slot`]), so a browser's six HTTP/1.1 connections per origin
    /// become six per endpoint. Empty: every request goes to `base_url`.
    pub endpoint_pool: Vec<String>,
}

impl Default for ClientOptions {
    fn default() -> Self {
        Self {
            warmup: true,
            chunk_traces: false,
            measurement: MeasurementThread::Worker,
            live_view: LiveView::During,
            endpoint_pool: Vec::new(),
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
            client: ClientOptions::default(),
        }
    }
}

/// One setting that is out of bounds, with a message saying what is allowed.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[error("{message}")]
pub struct ConfigError {
    /// The artifact field / query key to fix, e.g. `"max_tokens"`.
    pub field: &'static str,
    /// What is allowed, what was given, and what to change.
    pub message: String,
}

impl ConfigError {
    fn new(field: &'static str, message: impl Into<String>) -> Self {
        Self {
            field,
            message: message.into(),
        }
    }
}

/// A short, escaped rendering of user text for error messages (pasted text can be huge).
fn quoted_preview(text: &str) -> String {
    const MAX_CHARS: usize = 40;
    if text.chars().count() <= MAX_CHARS {
        format!("{text:?}")
    } else {
        let head: String = text.chars().take(MAX_CHARS).collect();
        format!("{head:?}…")
    }
}

/// Pushes an error unless `min <= value <= max`.
fn check_range(errors: &mut Vec<ConfigError>, field: &'static str, value: u64, min: u64, max: u64) {
    if value < min || value > max {
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
                "base_url",
                format!(
                    "base_url must start with http:// or https:// followed by a host, \
                     e.g. http://127.0.0.1:8000/v1 (got {})",
                    quoted_preview(&self.base_url)
                ),
            ));
        }
        if self.model.trim().is_empty() {
            errors.push(ConfigError::new(
                "model",
                "model must not be empty; enter the model id the server serves (see its /models list)",
            ));
        }

        check_range(&mut errors, "requests", self.requests, 1, MAX_REQUESTS);
        check_range(
            &mut errors,
            "concurrency",
            self.concurrency,
            1,
            MAX_CONCURRENCY,
        );
        check_range(&mut errors, "burst", self.burst, 0, MAX_CONCURRENCY);
        if self.burst > 0 && self.prompt_cache_mode != PromptCacheMode::Shared {
            errors.push(ConfigError::new(
                "burst",
                format!(
                    "burst needs prompt_cache_mode shared (got burst {} with {}); \
                     set burst to 0 or switch to shared",
                    self.burst, self.prompt_cache_mode
                ),
            ));
        }
        check_range(
            &mut errors,
            "shared_prefix_tokens",
            self.shared_prefix_tokens,
            0,
            MAX_SHARED_PREFIX_TOKENS,
        );
        if self.context_tokens > MAX_CONTEXT_SETTING_TOKENS
            || (self.context_tokens != 0 && self.context_tokens < MIN_FIXED_CONTEXT_TOKENS)
        {
            errors.push(ConfigError::new(
                "context_tokens",
                format!(
                    "context_tokens must be 0 (sample the distribution) or between \
                     {MIN_FIXED_CONTEXT_TOKENS} and {MAX_CONTEXT_SETTING_TOKENS} (got {})",
                    self.context_tokens
                ),
            ));
        }

        check_range(
            &mut errors,
            "max_tokens",
            self.max_tokens,
            1,
            MAX_OUTPUT_SETTING,
        );
        if self.request_canaries && self.max_tokens < MIN_MAX_TOKENS_WITH_CANARIES {
            errors.push(ConfigError::new(
                "max_tokens",
                format!(
                    "max_tokens must be at least {MIN_MAX_TOKENS_WITH_CANARIES} when \
                     request_canaries is on (got {}); raise max_tokens or turn canaries off",
                    self.max_tokens
                ),
            ));
        }
        check_range(
            &mut errors,
            "response_words",
            self.response_words,
            0,
            MAX_OUTPUT_SETTING,
        );
        if self.controlled_output_policy == ControlledOutputPolicy::Strict
            && self.response_words == 0
        {
            errors.push(ConfigError::new(
                "controlled_output_policy",
                "controlled_output_policy strict needs response_words above 0 (got 0); \
                 set response_words or choose observe",
            ));
        }

        if let Some(id) = &self.clock_domain_id {
            if !is_valid_clock_domain_id(id) {
                errors.push(ConfigError::new(
                    "clock_domain_id",
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
                    "configuration_fingerprint",
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
            "max_model_len",
            self.max_model_len,
            0,
            MAX_CONTEXT_SETTING_TOKENS,
        );
        check_range(
            &mut errors,
            "margin",
            self.margin,
            0,
            MAX_CONTEXT_SETTING_TOKENS,
        );
        let reserved = self.max_tokens.saturating_add(self.margin);
        if self.max_model_len != 0 && self.max_model_len <= reserved {
            errors.push(ConfigError::new(
                "max_model_len",
                format!(
                    "max_model_len must exceed max_tokens plus the context margin ({} + {} = \
                     {reserved}, got {}); raise max_model_len, lower max_tokens or margin, \
                     or set max_model_len to 0 to discover it from /models",
                    self.max_tokens, self.margin, self.max_model_len
                ),
            ));
        }

        if let Some(temperature) = self.temperature {
            if !temperature.is_finite() || !(0.0..=MAX_TEMPERATURE).contains(&temperature) {
                errors.push(ConfigError::new(
                    "temperature",
                    format!(
                        "temperature must be a number from 0 to 2 (got {temperature}); \
                         leave it empty to send 0.0"
                    ),
                ));
            }
        }
        if let Some(top_p) = self.top_p {
            if !top_p.is_finite() || top_p <= 0.0 || top_p > 1.0 {
                errors.push(ConfigError::new(
                    "top_p",
                    format!(
                        "top_p must be above 0 and at most 1 (got {top_p}); \
                         leave it empty to not send it"
                    ),
                ));
            }
        }
        if let Some(effort) = self.reasoning_effort {
            if self.thinking_mode != ThinkingMode::Default {
                errors.push(ConfigError::new(
                    "reasoning_effort",
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
        if !self.timeout_s.is_finite() || self.timeout_s <= 0.0 || self.timeout_s > MAX_TIMEOUT_S {
            errors.push(ConfigError::new(
                "timeout_s",
                format!(
                    "timeout_s must be above 0 and at most 3600 seconds (got {})",
                    self.timeout_s
                ),
            ));
        }

        if errors.is_empty() {
            Ok(())
        } else {
            Err(errors)
        }
    }

    /// `POST` target of the benchmark requests: `base_url` without trailing `/` + `/chat/completions`.
    pub fn chat_completions_url(&self) -> String {
        format!("{}/chat/completions", self.base_url.trim_end_matches('/'))
    }

    /// Every base URL the run sends to: `base_url`, then the endpoint pool, in order.
    pub fn endpoints(&self) -> Vec<&str> {
        std::iter::once(self.base_url.as_str())
            .chain(self.client.endpoint_pool.iter().map(String::as_str))
            .collect()
    }

    /// The `POST` target of every endpoint of [`endpoints`](Self::endpoints), in order.
    pub fn chat_completions_urls(&self) -> Vec<String> {
        self.endpoints()
            .into_iter()
            .map(|base| format!("{}/chat/completions", base.trim_end_matches('/')))
            .collect()
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
                "pool",
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
                    "pool",
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
                    "pool",
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
}

/// Why a run cannot be planned. Each is a usage error: no request is sent.
#[derive(Clone, Debug, PartialEq, Error)]
pub enum PlanError {
    /// Settings out of bounds; every violation is listed.
    #[error("the run settings are invalid: {}", join_messages(.0))]
    InvalidConfig(Vec<ConfigError>),
    /// `max_model_len − max_tokens − margin` leaves no room for a prompt.
    #[error(
        "max_model_len must exceed max_tokens plus the context margin (max_model_len \
         {max_model_len}, max_tokens {max_tokens}, margin {margin}); lower max_tokens or margin, \
         or serve the model with a longer context"
    )]
    PromptCapNotPositive {
        /// The resolved context length (explicit or discovered).
        max_model_len: u64,
        /// The `max_tokens` setting.
        max_tokens: u64,
        /// The `margin` setting.
        margin: u64,
    },
    /// The plan would send more prompt tokens in total than the aggregate guard allows.
    #[error(
        "the plan would send {requests} requests × {planned_tokens_per_request} planned tokens \
         = {total_tokens} prompt tokens, above the limit of 67108864; lower requests (or burst) \
         or context_tokens"
    )]
    AggregateTooLarge {
        /// `n` (burst or requests).
        requests: u64,
        /// `context_tokens`, or the cap-bounded sampled ceiling in sampled mode.
        planned_tokens_per_request: u64,
        /// Their product.
        total_tokens: u64,
    },
    /// A draw outside `0..=1` was given to [`sample_ctx`].
    #[error("a context sample needs a draw between 0 and 1 (got {0})")]
    DrawOutOfRange(f64),
}

fn join_messages(errors: &[ConfigError]) -> String {
    errors
        .iter()
        .map(|error| error.message.as_str())
        .collect::<Vec<_>>()
        .join("; ")
}

/// Maps a uniform draw to a planned context size by the inclusive table of ARTIFACT.md §1.2.
pub fn sample_ctx(u: f64) -> Result<u64, PlanError> {
    if !(0.0..=1.0).contains(&u) {
        return Err(PlanError::DrawOutOfRange(u));
    }
    SAMPLED_CONTEXT_TABLE
        .iter()
        .find(|(bound, _)| u <= *bound)
        .map(|(_, tokens)| *tokens)
        .ok_or(PlanError::DrawOutOfRange(u))
}

/// The canary marker of request `index` in a run seeded with `seed`: `ANVIL_REQ_{seed}_{index:05}`.
pub fn canary_marker(seed: i64, index: usize) -> String {
    format!("ANVIL_REQ_{seed}_{index:05}")
}

/// Everything about a run that is decided before the first request: derived from a valid
/// [`RunConfig`] and the discovered context length (ARTIFACT.md §1.2).
#[derive(Clone, Debug, PartialEq)]
pub struct RunPlan {
    config: RunConfig,
    requests: u64,
    concurrency: u64,
    max_model_len: Option<u64>,
    prompt_budget_cap: Option<u64>,
    planned_context_tokens: Vec<u64>,
}

impl RunPlan {
    /// Validates `config` and fixes the plan.
    ///
    /// `discovered_max_model_len` is what [`parse_models_response`] found (None when the probe
    /// failed or was skipped); an explicit `config.max_model_len` wins over it.
    pub fn new(
        config: &RunConfig,
        discovered_max_model_len: Option<u64>,
    ) -> Result<Self, PlanError> {
        config.validate().map_err(PlanError::InvalidConfig)?;

        let (requests, concurrency) = if config.burst > 0 {
            (config.burst, config.burst)
        } else {
            (config.requests, config.concurrency)
        };

        let max_model_len = if config.max_model_len != 0 {
            Some(config.max_model_len)
        } else {
            discovered_max_model_len.filter(|&tokens| tokens > 0)
        };
        let prompt_budget_cap = match max_model_len {
            None => None,
            Some(max_model_len) => {
                let reserved = config.max_tokens.saturating_add(config.margin);
                if max_model_len <= reserved {
                    return Err(PlanError::PromptCapNotPositive {
                        max_model_len,
                        max_tokens: config.max_tokens,
                        margin: config.margin,
                    });
                }
                Some(max_model_len - reserved)
            }
        };

        let planned_tokens_per_request = if config.context_tokens != 0 {
            config.context_tokens
        } else {
            prompt_budget_cap
                .unwrap_or(SAMPLED_CONTEXT_CEILING_TOKENS)
                .min(SAMPLED_CONTEXT_CEILING_TOKENS)
        };
        let total_tokens = requests.saturating_mul(planned_tokens_per_request);
        if total_tokens > MAX_AGGREGATE_PLANNED_TOKENS {
            return Err(PlanError::AggregateTooLarge {
                requests,
                planned_tokens_per_request,
                total_tokens,
            });
        }

        // The generator is consumed only in sampled mode, one draw per request in index order,
        // so a plan is reproducible from (seed, n) alone.
        let mut sampler = PyRandom::new(config.context_seed);
        let mut planned_context_tokens = Vec::new();
        for _ in 0..requests {
            let tokens = if config.context_tokens != 0 {
                config.context_tokens
            } else {
                sample_ctx(sampler.random())?
            };
            planned_context_tokens.push(match prompt_budget_cap {
                Some(cap) => tokens.min(cap),
                None => tokens,
            });
        }

        Ok(Self {
            config: config.clone(),
            requests,
            concurrency,
            max_model_len,
            prompt_budget_cap,
            planned_context_tokens,
        })
    }

    /// The settings this plan was made from.
    pub fn config(&self) -> &RunConfig {
        &self.config
    }

    /// `n`: `burst` when nonzero, else `requests` (artifact `requests`).
    pub fn requests(&self) -> u64 {
        self.requests
    }

    /// `conc`: `burst` when nonzero, else `concurrency` (artifact `concurrency`).
    pub fn concurrency(&self) -> u64 {
        self.concurrency
    }

    /// How many unmeasured warm-up requests precede the run: none when the warm-up is off,
    /// else two for every connection the run's slots can use (`2 × min(concurrency, 6)`: more
    /// than [`BROWSER_HTTP1_CONNECTIONS_PER_HOST`] cannot be open to one HTTP/1.1 origin, and
    /// one HTTP/2 connection carries every slot).
    ///
    /// Two, not one, per slot: a browser hands the connection of a warm-up that has just ended
    /// to a warm-up still waiting for one and drops the connection it was opening for it. A
    /// one-token answer can end before a new connection is up (strobe-sim answers in ~1 ms),
    /// and then one request per slot leaves fewer connections than slots: in Chromium 156
    /// against strobe-sim at concurrency 4, 2 runs of 10 started a measured request on a new
    /// connection; with two per slot enough requests are still waiting while the connections
    /// open, and none did in 24 runs at concurrency 1, 4 and 6.
    ///
    /// With an endpoint pool the rule holds per endpoint, for the slots that send to it
    /// ([`warmup_requests_per_endpoint`](Self::warmup_requests_per_endpoint)); this is their sum.
    pub fn warmup_requests(&self) -> u64 {
        self.warmup_requests_per_endpoint().iter().sum()
    }

    /// Warm-up requests per endpoint of [`RunConfig::endpoints`]: `2 × min(slots, 6)` for the
    /// concurrency slots that send to it, none when the warm-up is off.
    pub fn warmup_requests_per_endpoint(&self) -> Vec<u64> {
        self.slots_per_endpoint()
            .into_iter()
            .map(|slots| {
                if self.config.client.warmup {
                    2 * slots.min(BROWSER_HTTP1_CONNECTIONS_PER_HOST)
                } else {
                    0
                }
            })
            .collect()
    }

    /// Requests per endpoint in one warm-up check round: one per connection its slots can use
    /// (`min(slots, 6)`), none when the warm-up is off. See [`WARMUP_CHECK_ROUNDS`].
    pub fn warmup_check_requests_per_endpoint(&self) -> Vec<u64> {
        self.warmup_requests_per_endpoint()
            .into_iter()
            .map(|priming| priming / 2)
            .collect()
    }

    /// The most warm-up requests a run can send: the priming round and every check round.
    pub fn most_warmup_requests(&self) -> u64 {
        let check: u64 = self.warmup_check_requests_per_endpoint().iter().sum();
        self.warmup_requests() + WARMUP_CHECK_ROUNDS * check
    }

    /// How many base URLs the run sends to (1 without an endpoint pool).
    pub fn endpoint_count(&self) -> usize {
        1 + self.config.client.endpoint_pool.len()
    }

    /// The endpoint (index into [`RunConfig::endpoints`]) that concurrency slot `slot` sends
    /// every one of its requests to: round-robin over the slots, so no endpoint ever carries
    /// more than `⌈concurrency / endpoints⌉` requests at once.
    pub fn endpoint_of_slot(&self, slot: u64) -> usize {
        (slot % self.endpoint_count() as u64) as usize
    }

    /// Concurrency slots per endpoint, in endpoint order.
    pub fn slots_per_endpoint(&self) -> Vec<u64> {
        let endpoints = self.endpoint_count() as u64;
        (0..endpoints)
            .map(|endpoint| {
                self.concurrency / endpoints + u64::from(endpoint < self.concurrency % endpoints)
            })
            .collect()
    }

    /// The resolved context length: explicit setting, else discovered, else None
    /// (artifact `max_context_tokens`).
    pub fn max_context_tokens(&self) -> Option<u64> {
        self.max_model_len
    }

    /// The prompt budget cap `max_model_len − max_tokens − margin`, None when the context
    /// length is unknown (then prompts are not clamped).
    pub fn prompt_budget_cap(&self) -> Option<u64> {
        self.prompt_budget_cap
    }

    /// The clamped planned context of every request, in index order. Request `i`'s prompt
    /// budget is `planned_context_tokens()[i]`.
    pub fn planned_context_tokens(&self) -> &[u64] {
        &self.planned_context_tokens
    }

    /// Counts of the clamped planned contexts keyed by their decimal string
    /// (artifact `context_distribution`; the map's order is the artifact's sorted-key order).
    pub fn context_distribution(&self) -> BTreeMap<String, u64> {
        let mut counts = BTreeMap::new();
        for tokens in &self.planned_context_tokens {
            *counts.entry(tokens.to_string()).or_insert(0) += 1;
        }
        counts
    }

    /// The fixed context setting before clamping, or None when sampled
    /// (artifact `context_tokens`).
    pub fn context_tokens_field(&self) -> Option<u64> {
        Some(self.config.context_tokens).filter(|&tokens| tokens != 0)
    }

    /// The sampler seed, recorded even for a fixed context (artifact `context_seed`).
    pub fn context_seed(&self) -> i64 {
        self.config.context_seed
    }

    /// Request `index`'s canary marker, e.g. `ANVIL_REQ_1717_00000`.
    pub fn marker(&self, index: usize) -> String {
        canary_marker(self.config.context_seed, index)
    }

    /// The cache mode (artifact `prompt_cache_mode`).
    pub fn prompt_cache_mode(&self) -> PromptCacheMode {
        self.config.prompt_cache_mode
    }

    /// The shared prefix size as recorded: the setting in shared mode, 0 in unique mode
    /// (artifact `shared_prefix_tokens`).
    pub fn shared_prefix_tokens(&self) -> u64 {
        match self.config.prompt_cache_mode {
            PromptCacheMode::Shared => self.config.shared_prefix_tokens,
            PromptCacheMode::Unique => 0,
        }
    }

    /// Whether this is a shared-prefix burst (artifact `serve_flags.shared_prefix_burst`).
    pub fn is_burst(&self) -> bool {
        self.config.burst > 0
    }

    /// The artifact's `sampling` block: what was requested, what the request carried, and
    /// whether it was sent (temperature always is, 0.0 unless requested; top_p only when
    /// requested).
    pub fn sampling_block(&self) -> Value {
        let temperature = self.config.temperature;
        let top_p = self.config.top_p;
        json!({
            "temperature": {
                "effective_request": temperature.unwrap_or(0.0),
                "requested": temperature,
                "sent": true,
            },
            "top_p": {
                "effective_request": top_p,
                "requested": top_p,
                "sent": top_p.is_some(),
            },
        })
    }

    /// The artifact's `serve_flags` block.
    ///
    /// `no_thinking` is always false: it records the reference CLI's `--no-thinking` alias,
    /// which strobe does not have, and the reference writes false for `--thinking-mode
    /// disabled` (real artifacts show `thinking_mode: "disabled"` with `no_thinking: false`).
    /// The combiner compares `serve_flags` across replicas, so a strobe run with thinking
    /// disabled must record exactly what the reference tool records for the same setting;
    /// `thinking_mode` carries the setting.
    pub fn serve_flags(&self) -> Value {
        json!({
            "no_thinking": false,
            "reasoning_effort": self.config.reasoning_effort.map(ReasoningEffort::as_str),
            "shared_prefix_burst": self.is_burst(),
            "thinking_mode": self.config.thinking_mode.as_str(),
        })
    }
}

/// The `data[]` entries of a `/models` body that are JSON objects, in order.
fn model_entries(models_body: &Value) -> impl Iterator<Item = &serde_json::Map<String, Value>> {
    models_body
        .get("data")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_object)
}

/// Discovers `max_model_len` from an already fetched `GET /models` body (ARTIFACT.md §1.2).
///
/// Uses the first `data[]` object whose `id` equals `model`, else the first object at all (the
/// original's fallback, kept so plans match it); from it, the first of `max_model_len`,
/// `max_context_length`, `context_length` that is an integer above 0. Unlike the original, a
/// JSON `true` is not taken as 1 (Python's `bool` passes its int check); floats are skipped as
/// there. Anything unexpected gives None, which means "unknown, do not clamp".
pub fn parse_models_response(models_body: &Value, model: &str) -> Option<u64> {
    let entry = model_entries(models_body)
        .find(|entry| entry.get("id").and_then(Value::as_str) == Some(model))
        .or_else(|| model_entries(models_body).next())?;
    ["max_model_len", "max_context_length", "context_length"]
        .iter()
        .filter_map(|key| entry.get(*key))
        // `as_u64` is None for booleans, floats, negatives and strings.
        .filter_map(Value::as_u64)
        .find(|&tokens| tokens > 0)
}

/// The string `id`s of a `/models` body's `data[]` entries, in order (for a model picker).
pub fn list_model_ids(models_body: &Value) -> Vec<String> {
    model_entries(models_body)
        .filter_map(|entry| entry.get("id").and_then(Value::as_str))
        .map(str::to_owned)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

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

    fn pooled(concurrency: u64, pool: &[&str]) -> RunConfig {
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
            plan.config().chat_completions_urls(),
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
            Err(errors) => errors.iter().map(|error| error.field).collect(),
        }
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
                "endpoint_pool": []
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
        let cold: Option<RunConfig> =
            serde_json::from_value(json!({"client": {"warmup": false}})).ok();
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
        let fields: Vec<&str> = errors.iter().map(|error| error.field).collect();
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
                    65536, 65536, 32768, 32768, 32768, 32768, 65536, 32768, 32768, 32768, 131072,
                    32768,
                ],
            ),
            (
                1717,
                [
                    65536, 32768, 131072, 16000, 32768, 65536, 32768, 32768, 32768, 65536, 32768,
                    65536,
                ],
            ),
            (
                1,
                [
                    16000, 65536, 65536, 32768, 32768, 32768, 65536, 65536, 16000, 16000, 65536,
                    32768,
                ],
            ),
            (
                42,
                [
                    65536, 16000, 32768, 32768, 65536, 65536, 65536, 16000, 32768, 16000, 32768,
                    32768,
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
            Err(PlanError::InvalidConfig(errors)) if errors.len() == 1 && errors[0].field == "requests"
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
    fn models_response_prefers_the_matching_id() {
        let body = json!({"object": "list", "data": [
            {"id": "other", "max_model_len": 4096},
            {"id": "mine", "max_model_len": 131072},
        ]});
        assert_eq!(parse_models_response(&body, "mine"), Some(131_072));
        assert_eq!(list_model_ids(&body), ["other", "mine"]);
    }

    #[test]
    fn models_response_falls_back_to_the_first_object() {
        let body = json!({"data": ["not an object", {"id": "other", "context_length": 8192}]});
        assert_eq!(parse_models_response(&body, "missing"), Some(8_192));
        assert_eq!(list_model_ids(&body), ["other"]);
    }

    #[test]
    fn models_response_takes_the_first_positive_integer_key() {
        let entry = |fields: Value| json!({"data": [fields]});
        let cases = [
            (
                json!({"id": "m", "max_model_len": 0, "max_context_length": 2048}),
                Some(2_048),
            ),
            (
                json!({"id": "m", "max_model_len": 4096, "context_length": 2048}),
                Some(4_096),
            ),
            (
                json!({"id": "m", "max_model_len": true, "context_length": 1024}),
                Some(1_024),
            ),
            (json!({"id": "m", "max_model_len": true}), None),
            (json!({"id": "m", "max_model_len": 4096.0}), None),
            (json!({"id": "m", "max_model_len": "4096"}), None),
            (json!({"id": "m", "max_model_len": -1}), None),
            (json!({"id": "m"}), None),
        ];
        for (fields, expected) in cases {
            assert_eq!(
                parse_models_response(&entry(fields.clone()), "m"),
                expected,
                "{fields}"
            );
        }
    }

    #[test]
    fn models_response_with_unexpected_shape_is_unknown() {
        for body in [
            json!(null),
            json!({}),
            json!({"data": {}}),
            json!({"data": []}),
            json!([1]),
        ] {
            assert_eq!(parse_models_response(&body, "m"), None, "{body}");
            assert!(list_model_ids(&body).is_empty());
        }
        // The matching entry without a usable length does not fall back to another entry.
        let body = json!({"data": [{"id": "a", "max_model_len": 4096}, {"id": "m"}]});
        assert_eq!(parse_models_response(&body, "m"), None);
    }

    #[test]
    fn urls_drop_trailing_slashes() {
        let config = RunConfig {
            base_url: "http://h:8000/v1//".to_owned(),
            ..valid_config()
        };
        assert_eq!(
            config.chat_completions_url(),
            "http://h:8000/v1/chat/completions"
        );
        assert_eq!(config.models_url(), "http://h:8000/v1/models");
    }
}
