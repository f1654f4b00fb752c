//! The benchmark prompt and the chat-completions request body (ARTIFACT.md §2, §3).
//!
//! Prompts are synthetic code-like filler sized to a token budget at 3 characters per token,
//! with a per-request tail (and, with canaries, a marker the response must start with). The
//! bytes must match the original tool exactly: published prompt hashes pin them.
//!
//! Every piece of a prompt is ASCII (digits, a sign, fixed English text), so byte lengths equal
//! the Python character counts the rules are written in, and byte-index truncation is always on
//! a character boundary.

use std::fmt;
use std::fmt::Write as _;
use std::sync::Arc;

use serde::Serialize;
use thiserror::Error;

use crate::core::config::choices::{ApiEndpoint, PromptCacheMode, ReasoningEffort, ThinkingMode};
use crate::core::config::settings::RunConfig;
use crate::core::plan::{canary_marker, RunPlan};

pub use crate::core::plan::tokens::CHARS_PER_TOKEN;

pub mod export;
pub mod session;
pub mod workload;

/// Prompt length in characters for `tokens` estimated tokens (`int(tokens × 3.0)`).
fn chars_for_tokens(tokens: u64) -> usize {
    usize::try_from(tokens.saturating_mul(CHARS_PER_TOKEN)).unwrap_or(usize::MAX)
}

/// The filler: lines `def helper_{offset + k}():\n    return compute({k})  # routine specialist
/// context\n` for k = 0, 1, …, stopping as soon as the text is at least `char_budget` long.
///
/// The result usually overshoots; callers truncate it to the budget. The size must come from a
/// validated plan: this allocates `char_budget` bytes.
pub fn fill(char_budget: usize, offset: u64) -> String {
    // The longest line for realistic offsets is well under 100 bytes.
    let mut filler = String::with_capacity(char_budget.saturating_add(100));
    let mut k: u64 = 0;
    while filler.len() < char_budget {
        // u128 keeps `offset + k` exact for any u64 offset, as Python's ints are.
        let helper_number = u128::from(offset) + u128::from(k);
        // Writing into a String cannot fail.
        let _ = write!(
            filler,
            "def helper_{helper_number}():\n    return compute({k})  # routine specialist context\n"
        );
        k += 1;
    }
    filler
}

/// The shared prefix of a shared-mode run: `fill(T_s, 0)` cut to `T_s = shared_prefix_tokens × 3`
/// characters; empty for 0 tokens. Build it once per run and share it (it can be 800 KB).
pub fn shared_prefix(shared_prefix_tokens: u64) -> String {
    if shared_prefix_tokens == 0 {
        return String::new();
    }
    let target_chars = chars_for_tokens(shared_prefix_tokens);
    let mut prefix = fill(target_chars, 0);
    prefix.truncate(target_chars);
    prefix
}

/// Why one request's prompt cannot be built. It becomes a `request_error` failure of that
/// request, not a run error.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum PromptError {
    /// The budget leaves no room beyond the fixed tail text. The message is the original tool's
    /// exact text (it is recorded in the artifact's failure row); the fields give the numbers
    /// and the smallest budget that works.
    #[error("context target is too small for the benchmark prompt envelope")]
    ContextTooSmall {
        /// The request whose prompt was asked for.
        request_index: usize,
        /// The token budget given.
        budget_tokens: u64,
        /// `budget_tokens × 3`.
        target_chars: usize,
        /// Length of the request's tail (instruction) text, which the target must exceed.
        tail_chars: usize,
        /// The smallest budget that would fit: raise context_tokens (or max_model_len) to it.
        min_budget_tokens: u64,
    },
}

/// Everything a prompt depends on besides the request index and budget, with the shared prefix
/// built once and shared between requests (cloning a spec does not copy the prefix).
#[derive(Clone)]
pub struct PromptSpec {
    prompt_cache_mode: PromptCacheMode,
    /// Empty in unique mode.
    shared_prefix: Arc<str>,
    request_canaries: bool,
    context_seed: i64,
    response_words: u64,
}

impl fmt::Debug for PromptSpec {
    // The prefix can be 800 KB; its length is what a reader of a failure needs.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PromptSpec")
            .field("prompt_cache_mode", &self.prompt_cache_mode)
            .field("shared_prefix_chars", &self.shared_prefix.len())
            .field("request_canaries", &self.request_canaries)
            .field("context_seed", &self.context_seed)
            .field("response_words", &self.response_words)
            .finish()
    }
}

impl PromptSpec {
    /// A spec from explicit settings; builds the shared prefix in shared mode (and ignores
    /// `shared_prefix_tokens` in unique mode, which has none).
    pub fn new(
        prompt_cache_mode: PromptCacheMode,
        shared_prefix_tokens: u64,
        request_canaries: bool,
        context_seed: i64,
        response_words: u64,
    ) -> Self {
        let shared_prefix = match prompt_cache_mode {
            PromptCacheMode::Shared => shared_prefix(shared_prefix_tokens),
            PromptCacheMode::Unique => String::new(),
        };
        Self {
            prompt_cache_mode,
            shared_prefix: Arc::from(shared_prefix),
            request_canaries,
            context_seed,
            response_words,
        }
    }

    /// The spec of a planned run (its shared prefix rescaled when the plan is calibrated).
    pub fn for_plan(plan: &RunPlan) -> Self {
        let config = plan.config();
        Self::new(
            plan.prompt_cache_mode(),
            plan.shared_prefix_budget_tokens(),
            config.request_canaries,
            config.context_seed,
            config.response_words,
        )
    }

    /// The shared prefix every shared-mode prompt starts with (empty in unique mode).
    pub fn shared_prefix(&self) -> &Arc<str> {
        &self.shared_prefix
    }

    /// The marker request `request_index` must begin its response with, when canaries are on.
    pub fn marker(&self, request_index: usize) -> Option<String> {
        self.request_canaries
            .then(|| canary_marker(self.context_seed, request_index))
    }

    /// The instruction closing request `request_index`'s prompt (it starts with a newline).
    pub fn tail(&self, request_index: usize) -> String {
        let marker_instruction = match self.marker(request_index) {
            // The ", followed by one space." wording is the hash-verified one; the older
            // " Begin with the exact marker {marker}." does not reproduce published prompts.
            Some(marker) => {
                format!(" Begin with the exact marker {marker}, followed by one space.")
            }
            None => String::new(),
        };
        let words = self.response_words;
        if words > 0 {
            format!(
                "\n# request {request_index}:{marker_instruction} Then emit exactly {words} \
                 repetitions of the lowercase word code, separated by single spaces. Do not add \
                 other text and do not stop early."
            )
        } else if self.request_canaries {
            format!(
                "\n# request {request_index}:{marker_instruction} Summarize the above in one line."
            )
        } else {
            // Legacy lower-case text, kept byte for byte.
            format!("\n# request {request_index}: summarize the above in one line.")
        }
    }

    /// The header opening a unique-mode prompt; empty in shared mode.
    fn unique_header(&self, request_index: usize) -> String {
        match self.prompt_cache_mode {
            PromptCacheMode::Shared => String::new(),
            PromptCacheMode::Unique => match self.marker(request_index) {
                Some(marker) => format!("# unique benchmark request {marker}\n"),
                None => format!("# unique benchmark request {request_index}\n"),
            },
        }
    }

    /// Request `request_index`'s prompt for a budget of `budget_tokens` (its clamped planned
    /// context). It is exactly `budget_tokens × 3` characters unless the prefix alone is
    /// longer than the budget allows, in which case the prefix is cut.
    pub fn build(&self, request_index: usize, budget_tokens: u64) -> Result<String, PromptError> {
        let tail = self.tail(request_index);
        let target_chars = chars_for_tokens(budget_tokens);
        if target_chars <= tail.len() {
            return Err(PromptError::ContextTooSmall {
                request_index,
                budget_tokens,
                target_chars,
                tail_chars: tail.len(),
                min_budget_tokens: tail.len() as u64 / CHARS_PER_TOKEN + 1,
            });
        }
        let header = self.unique_header(request_index);
        let shared: &str = &self.shared_prefix;
        let prefix_chars = header.len() + shared.len();

        let mut prompt = String::with_capacity(target_chars.max(prefix_chars + tail.len()));
        prompt.push_str(&header);
        prompt.push_str(shared);
        match target_chars.checked_sub(prefix_chars + tail.len() + 1) {
            Some(filler_chars) if filler_chars > 0 => {
                prompt.push('\n');
                let filler = fill(filler_chars, request_index as u64);
                prompt.push_str(&filler[..filler_chars]);
            }
            // No room for filler: cut the prefix so that prefix + tail fits the target (Python's
            // `prefix[:max(0, T - len(tail))]`, which never extends the prefix).
            _ => prompt.truncate(target_chars - tail.len()),
        }
        prompt.push_str(&tail);
        Ok(prompt)
    }
}

impl PromptSpec {
    /// A context calibration probe ([`crate::core::plan::calibration`]) shaped like request
    /// `like_request`'s unique-mode prompt for `budget_tokens` — its filler line numbers, its
    /// instruction, its length — so the server's tokenizer counts it at the rate it counts the
    /// measured prompts. Only the first line differs (`# context calibration probe N`), so the
    /// probe shares no prefix with a measured prompt and warms no cache for one. A budget too
    /// small for the instruction gives the header and the instruction alone.
    pub fn calibration_probe(&self, probe: u64, like_request: usize, budget_tokens: u64) -> String {
        let header = format!("# context calibration probe {probe}\n");
        let tail = self.tail(like_request);
        let target_chars = chars_for_tokens(budget_tokens);
        let filler_chars = target_chars.saturating_sub(header.len() + 1 + tail.len());
        let mut prompt = String::with_capacity(target_chars.max(header.len() + tail.len() + 1));
        prompt.push_str(&header);
        prompt.push('\n');
        prompt.push_str(&fill(filler_chars, like_request as u64)[..filler_chars]);
        prompt.push_str(&tail);
        prompt
    }
}

/// Probe `probe`'s message for a budget of `budget_tokens` estimated tokens: the plan's median
/// request's prompt in unique mode with a first line of its own
/// ([`PromptSpec::calibration_probe`]; see [`crate::core::plan::calibration`]). Unique mode in every plan: a probe carrying a shared
/// prefix would put it in the server's cache before the first measured request.
pub fn calibration_probe_prompt(plan: &RunPlan, probe: u64, budget_tokens: u64) -> String {
    let config = plan.config();
    let spec = PromptSpec::new(
        PromptCacheMode::Unique,
        0,
        config.request_canaries,
        config.context_seed,
        config.response_words,
    );
    let median_request = (plan.requests() / 2) as usize;
    spec.calibration_probe(probe, median_request, budget_tokens)
}

/// Request `request_index`'s prompt (same as [`PromptSpec::build`]).
pub fn build_prompt(
    spec: &PromptSpec,
    request_index: usize,
    budget_tokens: u64,
) -> Result<String, PromptError> {
    spec.build(request_index, budget_tokens)
}

/// One chat message of the request body.
#[derive(Serialize)]
pub(crate) struct ChatMessage<'a> {
    pub(crate) role: &'static str,
    pub(crate) content: &'a str,
}

/// `stream_options` of the request body.
#[derive(Serialize)]
struct StreamOptions {
    include_usage: bool,
}

/// `chat_template_kwargs` of the request body.
#[derive(Serialize)]
struct ChatTemplateKwargs {
    enable_thinking: bool,
}

/// The request body; field order is the documented key order (serde keeps declaration order).
#[derive(Serialize)]
struct ChatCompletionBody<'a, M: Serialize> {
    model: &'a str,
    messages: M,
    max_tokens: u64,
    temperature: f64,
    stream: bool,
    stream_options: StreamOptions,
    #[serde(skip_serializing_if = "Option::is_none")]
    chat_template_kwargs: Option<ChatTemplateKwargs>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reasoning_effort: Option<ReasoningEffort>,
    #[serde(skip_serializing_if = "Option::is_none")]
    top_p: Option<f64>,
}

/// A completions request's body (`endpoint=completions`): the chat body's keys with `prompt`
/// for `messages`, and no chat template controls (the completions API has no template).
#[derive(Serialize)]
struct CompletionBody<'a> {
    model: &'a str,
    prompt: &'a str,
    max_tokens: u64,
    temperature: f64,
    stream: bool,
    stream_options: StreamOptions,
    #[serde(skip_serializing_if = "Option::is_none")]
    top_p: Option<f64>,
}

/// The JSON body of a streaming chat-completions request (ARTIFACT.md §3), keys in order
/// `model, messages, max_tokens, temperature, stream, stream_options`, then
/// `chat_template_kwargs` (thinking mode enabled/disabled only), `reasoning_effort` (when set)
/// and `top_p` (when requested). Temperature is always sent, 0.0 unless requested.
///
/// The original escapes non-ASCII characters and uses Python's `", "`/`": "` separators; this
/// writes compact UTF-8 JSON instead. Servers parse both the same and the artifact does not
/// record the body, so only the values and key order are kept.
pub fn request_body(config: &RunConfig, prompt: &str) -> String {
    chat_body(config, prompt, config.max_tokens)
}

/// The prompt of a warm-up request: a few words, with no canary marker and no word contract, so
/// the server does almost no work and nothing in it can be mistaken for a measured request.
pub const WARMUP_PROMPT: &str = "Reply with one word.";

/// The body of a context calibration probe (crate::core::plan::calibration): the measured
/// requests' body around the probe's prompt, with `max_tokens: 1`.
pub fn calibration_request_body(config: &RunConfig, prompt: &str) -> String {
    chat_body(config, prompt, 1)
}

/// The body of an unmeasured warm-up request: [`request_body`] with [`WARMUP_PROMPT`] and
/// `max_tokens: 1`. Everything else (model, sampling, thinking control, streaming with usage)
/// is the measured requests', so the server and the browser treat both alike: the same URL and
/// headers need the same CORS preflight, and the same model is loaded.
pub fn warmup_request_body(config: &RunConfig) -> String {
    chat_body(config, WARMUP_PROMPT, 1)
}

/// `max_tokens` of a warm-up check request: enough tokens that the requests of one check round,
/// sent at the same moment, are still streaming together when the last of them is sent (a
/// one-token answer can end before the next request leaves, and then the round shows nothing).
pub const WARMUP_CHECK_MAX_TOKENS: u64 = 8;

/// The body of a warm-up check request: [`warmup_request_body`] with
/// [`WARMUP_CHECK_MAX_TOKENS`].
pub fn warmup_check_request_body(config: &RunConfig) -> String {
    chat_body(config, WARMUP_PROMPT, WARMUP_CHECK_MAX_TOKENS)
}

/// The body of a request whose whole input is `prompt`: one user message (chat) or the prompt
/// string (completions), by the run's endpoint.
fn chat_body(config: &RunConfig, prompt: &str, max_tokens: u64) -> String {
    match config.endpoint {
        ApiEndpoint::Chat => messages_body(
            config,
            [ChatMessage {
                role: "user",
                content: prompt,
            }],
            max_tokens,
        ),
        ApiEndpoint::Completions => completion_body(config, prompt, max_tokens),
    }
}

/// A chat-completions body carrying `messages` (anything that serializes as the list).
pub(crate) fn messages_body<M: Serialize>(
    config: &RunConfig,
    messages: M,
    max_tokens: u64,
) -> String {
    let enable_thinking = match config.thinking_mode {
        ThinkingMode::Enabled => Some(true),
        ThinkingMode::Disabled => Some(false),
        ThinkingMode::Default | ThinkingMode::Unsupported => None,
    };
    let body = ChatCompletionBody {
        model: &config.model,
        messages,
        max_tokens,
        temperature: config.temperature.unwrap_or(0.0),
        stream: true,
        stream_options: StreamOptions {
            include_usage: true,
        },
        chat_template_kwargs: enable_thinking
            .map(|enable_thinking| ChatTemplateKwargs { enable_thinking }),
        reasoning_effort: config.reasoning_effort,
        top_p: config.top_p,
    };
    // Strings, integers, booleans, floats and JSON values always serialize (a non-finite
    // float, which validation rejects, would become `null`), so this cannot fail.
    serde_json::to_string(&body).expect("a body of plain strings and numbers always serializes")
}

/// A completions body carrying `prompt`.
pub(crate) fn completion_body(config: &RunConfig, prompt: &str, max_tokens: u64) -> String {
    let body = CompletionBody {
        model: &config.model,
        prompt,
        max_tokens,
        temperature: config.temperature.unwrap_or(0.0),
        stream: true,
        stream_options: StreamOptions {
            include_usage: true,
        },
        top_p: config.top_p,
    };
    serde_json::to_string(&body).expect("a body of plain strings and numbers always serializes")
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILLER_LINE_0: &str =
        "def helper_0():\n    return compute(0)  # routine specialist context\n";

    #[test]
    fn fill_stops_at_the_first_line_reaching_the_budget() {
        assert_eq!(fill(0, 0), "");
        assert_eq!(fill(1, 0), FILLER_LINE_0);
        assert_eq!(fill(FILLER_LINE_0.len(), 0), FILLER_LINE_0);
        let two_lines = fill(FILLER_LINE_0.len() + 1, 7);
        assert_eq!(
            two_lines,
            "def helper_7():\n    return compute(0)  # routine specialist context\n\
             def helper_8():\n    return compute(1)  # routine specialist context\n"
        );
    }

    #[test]
    fn shared_prefix_is_cut_to_three_chars_per_token() {
        assert_eq!(shared_prefix(0), "");
        let prefix = shared_prefix(8_000);
        assert_eq!(prefix.len(), 24_000);
        assert!(prefix.starts_with(FILLER_LINE_0));
        assert_eq!(prefix, fill(24_000, 0)[..24_000]);
    }

    #[test]
    fn unique_mode_ignores_shared_prefix_tokens() {
        let spec = PromptSpec::new(PromptCacheMode::Unique, 8_000, false, 0, 0);
        assert!(spec.shared_prefix().is_empty());
    }

    #[test]
    fn tail_variants() {
        let with_marker = PromptSpec::new(PromptCacheMode::Unique, 0, true, -5, 0);
        assert_eq!(
            with_marker.tail(3),
            "\n# request 3: Begin with the exact marker ANVIL_REQ_-5_00003, followed by one space. \
             Summarize the above in one line."
        );
        let plain = PromptSpec::new(PromptCacheMode::Unique, 0, false, -5, 0);
        assert_eq!(
            plain.tail(3),
            "\n# request 3: summarize the above in one line."
        );
        let words_only = PromptSpec::new(PromptCacheMode::Unique, 0, false, -5, 7);
        assert_eq!(
            words_only.tail(3),
            "\n# request 3: Then emit exactly 7 repetitions of the lowercase word code, separated \
             by single spaces. Do not add other text and do not stop early."
        );
    }

    #[test]
    fn prompt_without_room_for_filler_cuts_the_prefix() {
        // T = 300, tail 48 chars, prefix 24000: keep prefix[..252] + tail.
        let spec = PromptSpec::new(PromptCacheMode::Shared, 8_000, false, 5, 0);
        let prompt = spec.build(3, 100);
        let tail = spec.tail(3);
        let expected = format!("{}{tail}", &spec.shared_prefix()[..300 - tail.len()]);
        assert_eq!(prompt, Ok(expected));
    }

    #[test]
    fn prompt_near_the_envelope_edge() {
        // Expected values from the Python reference rules. Unique, no canaries: header
        // "# unique benchmark request 0\n" (29 chars), tail 46 chars.
        let spec = PromptSpec::new(PromptCacheMode::Unique, 0, false, 0, 0);
        // T = 75: char_budget = -1, so prefix[..29] (all of it) + tail; no newline, no filler.
        assert_eq!(
            spec.build(0, 25),
            Ok(
                "# unique benchmark request 0\n\n# request 0: summarize the above in one line."
                    .to_owned()
            )
        );
        // T = 78: char_budget = 2, so the filler is cut to "de".
        assert_eq!(
            spec.build(0, 26),
            Ok(
                "# unique benchmark request 0\n\nde\n# request 0: summarize the above in one line."
                    .to_owned()
            )
        );
    }

    #[test]
    fn too_small_budget_is_a_request_error_with_the_original_text() {
        let spec = PromptSpec::new(PromptCacheMode::Unique, 0, true, 1_717, 0);
        let tail_chars = spec.tail(0).len();
        let result = spec.build(0, 32);
        assert_eq!(
            result,
            Err(PromptError::ContextTooSmall {
                request_index: 0,
                budget_tokens: 32,
                target_chars: 96,
                tail_chars,
                min_budget_tokens: tail_chars as u64 / 3 + 1,
            })
        );
        assert_eq!(
            result.err().map(|e| e.to_string()),
            Some("context target is too small for the benchmark prompt envelope".to_owned())
        );
        // The advertised minimum really is the smallest budget that works.
        let min_budget = tail_chars as u64 / 3 + 1;
        assert!(spec.build(0, min_budget).is_ok());
        assert!(spec.build(0, min_budget - 1).is_err());
    }

    #[test]
    fn warmup_body_is_the_measured_body_with_one_token_and_no_marker() {
        let config = RunConfig {
            model: "m".to_owned(),
            max_tokens: 512,
            request_canaries: true,
            response_words: 16,
            temperature: Some(0.5),
            thinking_mode: ThinkingMode::Enabled,
            ..RunConfig::default()
        };
        assert_eq!(
            warmup_request_body(&config),
            r#"{"model":"m","messages":[{"role":"user","content":"Reply with one word."}],"max_tokens":1,"temperature":0.5,"stream":true,"stream_options":{"include_usage":true},"chat_template_kwargs":{"enable_thinking":true}}"#
        );
        // Apart from the prompt and max_tokens it is exactly what a measured request sends.
        assert_eq!(
            warmup_request_body(&config),
            request_body(
                &RunConfig {
                    max_tokens: 1,
                    ..config.clone()
                },
                WARMUP_PROMPT
            )
        );
        assert!(!WARMUP_PROMPT.contains("ANVIL_REQ_"));
    }
}
