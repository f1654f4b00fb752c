//! The simulator's configuration: the [`SimConfig`] a caller builds in code, and the
//! command-line flags ([`Args`]) that fill it, with the checks that keep it sane.

use std::net::{IpAddr, Ipv4Addr, ToSocketAddrs};
use std::path::PathBuf;

use clap::{Parser, ValueEnum};

use crate::faults::{parse_fault_list, Fault, UnknownFault, FAULT_MODEL_PREFIX};
use crate::model::LatencyParams;

/// Everything that shapes a running simulator.
#[derive(Debug, Clone)]
pub struct SimConfig {
    /// Address to listen on; loopback unless asked otherwise.
    pub host: IpAddr,
    /// Ports to listen on, one listener each (0 picks a free port).
    pub ports: Vec<u16>,
    /// Model ids served, listed by `/v1/models`; the first is the default.
    pub models: Vec<String>,
    /// `max_model_len` reported for every model and enforced on prompt plus `max_tokens`.
    pub max_model_len: u32,
    /// When set, `/v1/*` requires `Authorization: Bearer <api_key>`.
    pub api_key: Option<String>,
    /// Seed for everything random; the same seed and request give the same answer and timing.
    pub seed: u64,
    /// The latency model.
    pub latency: LatencyParams,
    /// Prefix-cache block size in bytes of prompt text.
    pub prefix_block_bytes: usize,
    /// Prefix-cache capacity in blocks (0 disables caching).
    pub prefix_cache_blocks: usize,
    /// Reasoning tokens per answer while thinking (0 disables reasoning).
    pub reasoning_tokens: u32,
    /// Whether the model thinks when the request does not say (`chat_template_kwargs.enable_thinking`).
    pub thinking_by_default: bool,
    /// Typical filler answer length in words when the prompt fixes none.
    pub answer_words: u32,
    /// Probability that a request gets one random fault from `fault_kinds`.
    pub fault_rate: f64,
    /// Faults `fault_rate` draws from.
    pub fault_kinds: Vec<Fault>,
    /// How long the `slow-headers` fault holds the response head back, ms.
    pub slow_headers_ms: u64,
    /// Longest a `hang` or `hold-after-done` fault keeps a connection open, ms.
    pub hang_ms: u64,
    /// Append every truth record to this JSON-lines file.
    pub truth_jsonl: Option<PathBuf>,
    /// Truth records kept in memory.
    pub truth_capacity: usize,
    /// Request headers recorded in `client_headers`, lowercase, besides [`TRUTH_HEADERS`].
    pub truth_headers: Vec<String>,
    /// Whether truth records keep the request's `messages` or `prompt` as received.
    pub truth_prompts: bool,
    /// Largest accepted request body in bytes.
    pub max_body_bytes: usize,
    /// Whether `/metrics` answers with CORS headers, as every other route does. Off, a page
    /// of another origin cannot read it while it still reads `/v1`: a server (or a proxy in
    /// front of one) that keeps a page out of its metrics.
    pub metrics_cors: bool,
    /// How long `/reset_prefix_cache` and `/flush_cache` hold a reset before doing it and
    /// answering, ms: a slow reset to cancel a run during.
    pub reset_delay_ms: u64,
}

/// The default port, which strobe's default endpoint points at.
pub const DEFAULT_PORT: u16 = 8011;
/// The default model id.
pub const DEFAULT_MODEL: &str = "strobe-sim-1";
/// Request headers every truth record keeps the values of (`client_headers`), when present:
/// the ones load generators use to tie requests to sessions and runs.
pub const TRUTH_HEADERS: [&str; 3] = ["x-session-id", "x-correlation-id", "x-request-id"];

impl Default for SimConfig {
    fn default() -> Self {
        Self {
            host: IpAddr::V4(Ipv4Addr::LOCALHOST),
            ports: vec![DEFAULT_PORT],
            models: vec![DEFAULT_MODEL.to_string()],
            max_model_len: 32_768,
            api_key: None,
            seed: 0,
            latency: LatencyParams::default(),
            prefix_block_bytes: 256,
            prefix_cache_blocks: 65_536,
            reasoning_tokens: 8,
            thinking_by_default: true,
            answer_words: 48,
            fault_rate: 0.0,
            fault_kinds: Fault::ALL
                .into_iter()
                .filter(|fault| !matches!(fault, Fault::Hang | Fault::HoldAfterDone))
                .collect(),
            slow_headers_ms: 2_000,
            hang_ms: 600_000,
            truth_jsonl: None,
            truth_capacity: 10_000,
            truth_headers: Vec::new(),
            truth_prompts: false,
            max_body_bytes: 32 * 1024 * 1024,
            metrics_cors: true,
            reset_delay_ms: 0,
        }
    }
}

/// A flag value the simulator cannot run with.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ConfigError {
    /// A number outside its range.
    #[error("{flag} must be {rule}, got {value}")]
    OutOfRange {
        /// The flag, e.g. `--fault-rate`.
        flag: &'static str,
        /// The allowed range in words.
        rule: &'static str,
        /// The value given.
        value: String,
    },
    /// A model id that collides with the fault ids.
    #[error(
        "--model `{0}` starts with `sim-fault-`, which selects faults; choose another model id"
    )]
    ReservedModel(String),
    /// A `--truth-headers` item that is no HTTP header name.
    #[error("--truth-headers: `{0}` is not an HTTP header name; give names such as x-session-id, separated by commas")]
    BadHeaderName(String),
    /// An unknown fault name in `--fault-kinds`.
    #[error("--fault-kinds: {0}")]
    UnknownFault(#[from] UnknownFault),
    /// A `--host` that is no IP address and no name this machine resolves.
    #[error(
        "--host `{host}` does not resolve to an address ({reason}); give an IP address \
         (127.0.0.1, or 0.0.0.0 to listen everywhere) or a name this machine resolves, such as \
         localhost"
    )]
    UnknownHost {
        /// The host as given.
        host: String,
        /// The resolver's reason.
        reason: String,
    },
}

/// The address `host` names: an IP address as written (`[::1]` too), else the name resolved,
/// its first IPv4 address preferred (strobe's default endpoint is 127.0.0.1, and `localhost`
/// resolves to both families).
pub fn resolve_host(host: &str) -> Result<IpAddr, ConfigError> {
    let bare = host
        .strip_prefix('[')
        .and_then(|rest| rest.strip_suffix(']'))
        .unwrap_or(host);
    if let Ok(address) = bare.parse::<IpAddr>() {
        return Ok(address);
    }
    let unknown = |reason: String| ConfigError::UnknownHost {
        host: host.to_owned(),
        reason,
    };
    let addresses: Vec<IpAddr> = (bare, 0)
        .to_socket_addrs()
        .map_err(|error| unknown(error.to_string()))?
        .map(|address| address.ip())
        .collect();
    addresses
        .iter()
        .find(|address| address.is_ipv4())
        .or(addresses.first())
        .copied()
        .ok_or_else(|| unknown("no address".to_owned()))
}

impl SimConfig {
    /// Checks every value; the error names the flag to fix.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let out_of_range =
            |flag, rule, value: String| ConfigError::OutOfRange { flag, rule, value };
        if self.ports.is_empty() {
            return Err(out_of_range("--port", "given at least once", "none".into()));
        }
        if self.models.is_empty() {
            return Err(out_of_range(
                "--model",
                "given at least once",
                "none".into(),
            ));
        }
        if let Some(model) = self
            .models
            .iter()
            .find(|model| model.starts_with(FAULT_MODEL_PREFIX))
        {
            return Err(ConfigError::ReservedModel(model.clone()));
        }
        if self.max_model_len == 0 {
            return Err(out_of_range("--max-model-len", "at least 1", "0".into()));
        }
        let latency = &self.latency;
        if latency.max_num_seqs == 0 {
            return Err(out_of_range("--max-num-seqs", "at least 1", "0".into()));
        }
        if latency.prefill_tok_s.is_nan() || latency.prefill_tok_s <= 0.0 {
            return Err(out_of_range(
                "--prefill-tok-s",
                "a positive number",
                latency.prefill_tok_s.to_string(),
            ));
        }
        if !(latency.decode_interval_ms.is_finite() && latency.decode_interval_ms >= 0.0) {
            return Err(out_of_range(
                "--decode-interval-ms",
                "a finite number ≥ 0",
                latency.decode_interval_ms.to_string(),
            ));
        }
        if !(latency.decode_slowdown_per_seq.is_finite() && latency.decode_slowdown_per_seq >= 0.0)
        {
            return Err(out_of_range(
                "--decode-slowdown-per-seq",
                "a finite number ≥ 0",
                latency.decode_slowdown_per_seq.to_string(),
            ));
        }
        if !(0.0..=1.0).contains(&latency.jitter) {
            return Err(out_of_range(
                "--jitter",
                "between 0 and 1",
                latency.jitter.to_string(),
            ));
        }
        if !(latency.chars_per_token.is_finite() && latency.chars_per_token > 0.0) {
            return Err(out_of_range(
                "--chars-per-token",
                "a positive number",
                latency.chars_per_token.to_string(),
            ));
        }
        if !(0.0..=1.0).contains(&self.fault_rate) {
            return Err(out_of_range(
                "--fault-rate",
                "between 0 and 1",
                self.fault_rate.to_string(),
            ));
        }
        if self.fault_rate > 0.0 && self.fault_kinds.is_empty() {
            return Err(out_of_range(
                "--fault-kinds",
                "non-empty when --fault-rate is above 0",
                "empty".into(),
            ));
        }
        Ok(())
    }
}

/// Whether the model thinks by default.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Thinking {
    /// Reason before answering unless `enable_thinking: false`.
    On,
    /// Answer at once unless `enable_thinking: true`.
    Off,
}

/// A behaviour turned on or off.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Switch {
    /// On.
    On,
    /// Off.
    Off,
}

/// What `strobe-sim --help` says after its flags: what a first request streams by default.
const AFTER_HELP: &str = "\
By default the model thinks: every answer starts with 8 reasoning tokens
(delta.reasoning_content) before any content, so a request with max_tokens 8 or less streams no
content at all. For content first, start it with --reasoning-tokens 0 or --thinking-default off,
or send \"chat_template_kwargs\": {\"enable_thinking\": false} in the request.

Exit codes: 0 stopped by Ctrl-C or SIGTERM, 1 the server could not start (e.g. the port is
taken), 2 an invalid flag.";

/// `strobe-sim`: an OpenAI-compatible streaming endpoint with a known latency model and a truth log.
#[derive(Debug, Clone, Parser)]
#[command(name = "strobe-sim", version, about, long_about = None, after_help = AFTER_HELP)]
pub struct Args {
    /// Address or host name to listen on (a name resolves, IPv4 first: localhost is 127.0.0.1).
    /// Loopback by default; say 0.0.0.0 explicitly to listen everywhere.
    #[arg(long, default_value = "127.0.0.1")]
    pub host: String,
    /// Port to listen on; repeat for several listeners sharing one server (0 picks a free port).
    #[arg(long = "port", default_values_t = [DEFAULT_PORT])]
    pub ports: Vec<u16>,
    /// Model id to serve; repeat for several. The first is the default.
    #[arg(long = "model", default_value = DEFAULT_MODEL)]
    pub models: Vec<String>,
    /// max_model_len reported by /v1/models and enforced on prompt tokens + max_tokens.
    #[arg(long, default_value_t = 32_768)]
    pub max_model_len: u32,
    /// Require `Authorization: Bearer <KEY>` on /v1/* (401 otherwise).
    #[arg(long, value_name = "KEY")]
    pub api_key: Option<String>,
    /// Seed for filler text, answer lengths, jitter and random faults.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Most sequences running at once; later requests queue (FIFO).
    #[arg(long, default_value_t = 16)]
    pub max_num_seqs: usize,
    /// Prefill throughput over uncached prompt tokens, tokens/s (one prefill at a time).
    #[arg(long, default_value_t = 20_000.0)]
    pub prefill_tok_s: f64,
    /// Time between output tokens with one active sequence, ms (0 = as fast as possible).
    #[arg(long, default_value_t = 8.0)]
    pub decode_interval_ms: f64,
    /// Decode slowdown per extra active sequence (0.03 = +3 % each).
    #[arg(long, default_value_t = 0.03)]
    pub decode_slowdown_per_seq: f64,
    /// Relative jitter on each decode interval, 0..1 (0.1 = ±10 %).
    #[arg(long, default_value_t = 0.0)]
    pub jitter: f64,
    /// Characters per prompt token for token estimates.
    #[arg(long, default_value_t = 3.15)]
    pub chars_per_token: f64,
    /// Prefix-cache block size, bytes of prompt text.
    #[arg(long, default_value_t = 256)]
    pub prefix_block_bytes: usize,
    /// Prefix-cache capacity in blocks, least recently used evicted (0 disables the cache).
    #[arg(long, default_value_t = 65_536)]
    pub prefix_cache_blocks: usize,
    /// Reasoning tokens each answer starts with while thinking, before any content: a request
    /// with max_tokens at most this streams no content (0 disables reasoning).
    #[arg(long, default_value_t = 8)]
    pub reasoning_tokens: u32,
    /// Whether the model thinks when the request does not set chat_template_kwargs.enable_thinking.
    #[arg(long, value_enum, default_value_t = Thinking::On)]
    pub thinking_default: Thinking,
    /// Typical filler answer length in words (each answer draws 75–125 % of it).
    #[arg(long, default_value_t = 48)]
    pub answer_words: u32,
    /// Probability (0..1) that a request gets one random fault from --fault-kinds.
    #[arg(long, default_value_t = 0.0)]
    pub fault_rate: f64,
    /// Comma-separated faults --fault-rate draws from (default: all but hang and hold-after-done).
    #[arg(long)]
    pub fault_kinds: Option<String>,
    /// How long the slow-headers fault holds the response head back, ms.
    #[arg(long, default_value_t = 2_000)]
    pub slow_headers_ms: u64,
    /// Longest a hang or hold-after-done fault keeps a connection open, ms.
    #[arg(long, default_value_t = 600_000)]
    pub hang_ms: u64,
    /// Also append every truth record to this JSON-lines file.
    #[arg(long, value_name = "FILE")]
    pub jsonl: Option<PathBuf>,
    /// Truth records kept in memory for GET /sim/truth, oldest dropped first (each keeps up to
    /// 8 KiB of content; strobe runs at most 10,000 requests).
    #[arg(long, default_value_t = 10_000)]
    pub truth_capacity: usize,
    /// Comma-separated request header names whose values truth records also keep in
    /// client_headers (x-session-id, x-correlation-id and x-request-id always are).
    #[arg(long, value_name = "NAME,NAME")]
    pub truth_headers: Option<String>,
    /// Keep each request's messages (chat) or prompt (completions) in its truth record, exactly
    /// as received. Off by default: prompts may be private.
    #[arg(long)]
    pub truth_prompts: bool,
    /// Largest accepted request body, bytes.
    #[arg(long, default_value_t = 32 * 1024 * 1024)]
    pub max_body_bytes: usize,
    /// Whether /metrics answers with CORS headers like every other route; off keeps a page of
    /// another origin out of the metrics while it still reads /v1.
    #[arg(long, value_enum, default_value_t = Switch::On)]
    pub metrics_cors: Switch,
    /// Hold each prefix-cache reset (/reset_prefix_cache, /flush_cache) this long before doing
    /// it and answering, ms.
    #[arg(long, default_value_t = 0)]
    pub reset_delay_ms: u64,
}

impl Args {
    /// The configuration these flags describe, checked.
    pub fn into_config(self) -> Result<SimConfig, ConfigError> {
        let defaults = SimConfig::default();
        let fault_kinds = match &self.fault_kinds {
            Some(list) => parse_fault_list(list, ',')?,
            None => defaults.fault_kinds,
        };
        let config = SimConfig {
            host: resolve_host(&self.host)?,
            ports: self.ports,
            models: self.models,
            max_model_len: self.max_model_len,
            api_key: self.api_key,
            seed: self.seed,
            latency: LatencyParams {
                max_num_seqs: self.max_num_seqs,
                prefill_tok_s: self.prefill_tok_s,
                decode_interval_ms: self.decode_interval_ms,
                decode_slowdown_per_seq: self.decode_slowdown_per_seq,
                jitter: self.jitter,
                chars_per_token: self.chars_per_token,
            },
            prefix_block_bytes: self.prefix_block_bytes,
            prefix_cache_blocks: self.prefix_cache_blocks,
            reasoning_tokens: self.reasoning_tokens,
            thinking_by_default: self.thinking_default == Thinking::On,
            answer_words: self.answer_words,
            fault_rate: self.fault_rate,
            fault_kinds,
            slow_headers_ms: self.slow_headers_ms,
            hang_ms: self.hang_ms,
            truth_jsonl: self.jsonl,
            truth_capacity: self.truth_capacity,
            truth_headers: parse_header_names(self.truth_headers.as_deref().unwrap_or(""))?,
            truth_prompts: self.truth_prompts,
            max_body_bytes: self.max_body_bytes,
            metrics_cors: self.metrics_cors == Switch::On,
            reset_delay_ms: self.reset_delay_ms,
        };
        config.validate()?;
        Ok(config)
    }
}

/// `--truth-headers`: comma-separated HTTP header names, lowercased; empty items are skipped.
fn parse_header_names(list: &str) -> Result<Vec<String>, ConfigError> {
    let mut names = Vec::new();
    for name in list
        .split(',')
        .map(str::trim)
        .filter(|name| !name.is_empty())
    {
        let is_token = name
            .bytes()
            .all(|byte| byte.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&byte));
        if !is_token {
            return Err(ConfigError::BadHeaderName(name.to_string()));
        }
        let name = name.to_ascii_lowercase();
        if !names.contains(&name) {
            names.push(name);
        }
    }
    Ok(names)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(flags: &[&str]) -> Result<SimConfig, ConfigError> {
        let argv = std::iter::once("strobe-sim").chain(flags.iter().copied());
        Args::try_parse_from(argv)
            .expect("flags parse")
            .into_config()
    }

    #[test]
    fn no_flags_give_the_documented_defaults() {
        let config = parse(&[]).expect("defaults are valid");
        let defaults = SimConfig::default();
        assert_eq!(config.host, IpAddr::V4(Ipv4Addr::LOCALHOST));
        assert_eq!(config.ports, vec![8011]);
        assert_eq!(config.models, vec!["strobe-sim-1".to_string()]);
        assert_eq!(config.latency, defaults.latency);
        assert_eq!(config.fault_kinds, defaults.fault_kinds);
        assert!(!config.fault_kinds.contains(&Fault::Hang));
        assert!(!config.fault_kinds.contains(&Fault::HoldAfterDone));
        assert_eq!(
            (
                config.reasoning_tokens,
                config.thinking_by_default,
                config.answer_words
            ),
            (
                defaults.reasoning_tokens,
                defaults.thinking_by_default,
                defaults.answer_words
            )
        );
    }

    #[test]
    fn hosts_are_addresses_or_names_that_resolve() {
        assert_eq!(
            parse(&["--host", "localhost"]).map(|config| config.host),
            Ok(IpAddr::V4(Ipv4Addr::LOCALHOST))
        );
        assert_eq!(
            resolve_host("[::1]"),
            Ok(IpAddr::V6(std::net::Ipv6Addr::LOCALHOST))
        );
        assert_eq!(
            resolve_host("0.0.0.0"),
            Ok(IpAddr::V4(Ipv4Addr::UNSPECIFIED))
        );
        let error = parse(&["--host", "no-such-host.invalid"]).expect_err("no such host");
        let message = error.to_string();
        assert!(
            message.starts_with("--host `no-such-host.invalid` does not resolve"),
            "{message}"
        );
        assert!(message.contains("give an IP address"), "{message}");
    }

    #[test]
    fn ports_and_models_repeat() {
        let config = parse(&[
            "--port", "0", "--port", "9000", "--model", "a", "--model", "b",
        ])
        .expect("valid flags");
        assert_eq!(config.ports, vec![0, 9000]);
        assert_eq!(config.models, vec!["a".to_string(), "b".to_string()]);
    }

    #[test]
    fn bad_values_name_the_flag_to_fix() {
        let error = parse(&["--fault-rate", "1.5"]).expect_err("out of range");
        assert!(error
            .to_string()
            .starts_with("--fault-rate must be between 0 and 1"));
        let error = parse(&["--model", "sim-fault-x"]).expect_err("reserved");
        assert!(error.to_string().contains("--model `sim-fault-x`"));
        let error = parse(&["--fault-kinds", "crlf,bogus"]).expect_err("unknown fault");
        assert!(error.to_string().contains("unknown fault `bogus`"));
        let error = parse(&["--prefill-tok-s", "0"]).expect_err("zero rate");
        assert!(error.to_string().starts_with("--prefill-tok-s"));
        let config =
            parse(&["--fault-kinds", "hang,crlf", "--thinking-default", "off"]).expect("valid");
        assert_eq!(config.fault_kinds, vec![Fault::Hang, Fault::Crlf]);
        assert!(!config.thinking_by_default);
        let error = parse(&["--truth-headers", "x-run,bad name"]).expect_err("a space");
        assert!(error
            .to_string()
            .contains("`bad name` is not an HTTP header name"));
    }

    #[test]
    fn truth_headers_are_lowercased_and_prompts_stay_out_by_default() {
        let config = parse(&[]).expect("defaults");
        assert!(config.truth_headers.is_empty());
        assert!(!config.truth_prompts);
        let config = parse(&[
            "--truth-headers",
            "X-Run-ID, x-tenant,,x-run-id",
            "--truth-prompts",
        ])
        .expect("valid");
        assert_eq!(config.truth_headers, vec!["x-run-id", "x-tenant"]);
        assert!(config.truth_prompts);
    }
}
