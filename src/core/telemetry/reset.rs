//! A prefix-cache reset as the core sees it (docs/guide/telemetry.md, *A clean prefix cache*): what
//! an engine's answer means ([`judge_answer`]: done, ask again, or stopped with what to do),
//! the prefix-cache series read from a `/metrics` answer around it ([`cache_counters`]), and
//! the artifact's `prefix_cache_reset` block with what the rows say of the cache the run
//! started with ([`reset_block`]). The page sends the request; nothing here does IO.

use std::collections::BTreeMap;

use thiserror::Error;

use crate::core::config::cache_reset::{ResetEngine, ResetRoute};
use crate::core::config::choices::{PrefixCacheReset, PromptCacheMode};
use crate::core::schema::cache_reset::{
    PrefixCacheResetBlock, ResetCheck, ResetRecord, ResetVerdict,
};
use crate::core::schema::rows::RequestTiming;
use crate::core::schema::ArtifactV1;
use crate::core::telemetry::engines::{CommonSeries, Family};
use crate::core::telemetry::exposition::read_exposition;

/// How long the page waits for a reset's answer, ms.
pub const RESET_TIMEOUT_MS: f64 = 30_000.0;
/// How many times a reset SGLang refused while requests ran is sent in all.
pub const MOST_ATTEMPTS: u32 = 5;
/// The wait before asking SGLang again, ms.
pub const RETRY_AFTER_MS: f64 = 1_000.0;

/// What came back from a reset request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ResetAnswer {
    /// An answer with this status.
    Status(u16),
    /// No answer the page could read: the server is down, or CORS hid it.
    Unreadable,
    /// No answer within [`RESET_TIMEOUT_MS`].
    TimedOut,
}

/// What the page does after an answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ResetStep {
    /// The reset is done (a 2xx).
    Done,
    /// Ask again after [`RETRY_AFTER_MS`] (SGLang refused while requests ran).
    AskAgain,
    /// Stop the run before it measures, for this reason.
    Stop(ResetFailed),
}

/// A reset that failed, with what to do: the run stops before it measures.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[error("the prefix-cache reset failed, so nothing was measured: {0}")]
pub struct ResetFailed(pub String);

/// What `answer` to the `attempt`-th (from 1) request of `route` means.
pub fn judge_answer(route: &ResetRoute, answer: ResetAnswer, attempt: u32) -> ResetStep {
    let call = format!("{} {}", route.method, route.url);
    let off = "or set reset_prefix_cache to off to run without it";
    let engine = route.engine.name();
    let message = match answer {
        ResetAnswer::Status(status) if (200..300).contains(&status) => return ResetStep::Done,
        ResetAnswer::Status(400) if route.engine == ResetEngine::Sglang => {
            if attempt < MOST_ATTEMPTS {
                return ResetStep::AskAgain;
            }
            format!(
                "SGLang refused to flush its cache {attempt} times (400 to {call}): it does not \
                 while requests run or wait; let other clients' requests finish and press Run \
                 again, {off}"
            )
        }
        ResetAnswer::Status(status @ (404 | 405)) => match route.engine {
            ResetEngine::Vllm | ResetEngine::StrobeSim => format!(
                "{engine} answered {status} to {call}: vLLM serves that route only in its dev \
                 mode; start vLLM with VLLM_SERVER_DEV_MODE=1 in its environment, {off}"
            ),
            ResetEngine::Sglang => format!(
                "SGLang answered {status} to {call}: check that the base URL is SGLang's and \
                 that this version has /flush_cache, {off}"
            ),
            ResetEngine::Given => format!(
                "the server answered {status} to {call}: check reset_prefix_cache_url, {off}"
            ),
        },
        ResetAnswer::Status(status @ (401 | 403)) => format!(
            "{engine} answered {status} to {call}: it wants a key; enter the server's key in \
             API key (it is sent with the reset as with every request), {off}"
        ),
        ResetAnswer::Status(status) => {
            format!("{engine} answered {status} to {call}, so its cache was not emptied; {off}")
        }
        ResetAnswer::Unreadable => format!(
            "{call} got no answer the page could read: the server is down, or it does not let \
             this page's origin read that route (CORS); check the server, {off}"
        ),
        ResetAnswer::TimedOut => format!(
            "{call} got no answer within {} s; check the server, {off}",
            RESET_TIMEOUT_MS / 1000.0
        ),
    };
    ResetStep::Stop(ResetFailed(message))
}

/// The series that show a prefix cache, read from one `/metrics` answer by their common names
/// (`prefix_cache_queries`, `prefix_cache_hits`, `kv_cache_use`, `prefix_cache_hit_rate`);
/// `None` when the answer holds none of them.
pub fn cache_counters(body: &[u8]) -> Option<BTreeMap<String, f64>> {
    let values = read_exposition(body).values;
    let family = Family::detect(values.keys().map(String::as_str));
    let counters: BTreeMap<String, f64> = [
        CommonSeries::PrefixCacheQueries,
        CommonSeries::PrefixCacheHits,
        CommonSeries::KvCacheUse,
        CommonSeries::PrefixCacheHitRate,
    ]
    .into_iter()
    .filter_map(|series| {
        let name = series.name_in(family, |key| values.contains_key(key))?;
        Some((series.key().to_owned(), values[name]))
    })
    .collect();
    (!counters.is_empty()).then_some(counters)
}

/// What a run says of the cache it started with, from the artifact's own fields.
pub struct RunFacts<'a> {
    /// The rows, in any order.
    pub rows: &'a [RequestTiming],
    /// Requests in flight at once: the size of the first wave.
    pub concurrency: u64,
    /// Whether the prompts share a prefix.
    pub prompt_cache_mode: PromptCacheMode,
    /// Its length, tokens.
    pub shared_prefix_tokens: u64,
}

impl<'a> RunFacts<'a> {
    /// The facts of a finished run's artifact.
    pub fn of(artifact: &'a ArtifactV1) -> Self {
        Self {
            rows: &artifact.request_timings,
            concurrency: artifact.concurrency,
            prompt_cache_mode: artifact.prompt_cache_mode,
            shared_prefix_tokens: artifact.shared_prefix_tokens,
        }
    }
}

/// The `prefix_cache_reset` block of a run under `policy`, with the reset sent before it (if
/// one was) and the check of the run's first requests ([`check_reset`]).
pub fn reset_block(
    policy: PrefixCacheReset,
    reset: Option<ResetRecord>,
    facts: &RunFacts<'_>,
) -> PrefixCacheResetBlock {
    let check = check_reset(reset.as_ref(), facts);
    PrefixCacheResetBlock {
        policy,
        reset,
        check,
    }
}

/// Whether the run started from an empty prefix cache.
///
/// With a shared prefix, the first request to reach an emptied cache finds none of it there
/// (`cached_tokens` 0), while every request of a warm cache finds it: so the fewest cached
/// tokens among the first wave (the first `concurrency` rows sent) says which. Without a shared
/// prefix or without `cached_tokens` in the usage the rows cannot tell; a KV-cache use that
/// fell to 0 across the reset still can.
pub fn check_reset(reset: Option<&ResetRecord>, facts: &RunFacts<'_>) -> ResetCheck {
    let first_wave_min = first_wave_min_cached_tokens(facts);
    let check = |verdict, reason: String| ResetCheck {
        verdict,
        first_wave_min_cached_tokens: first_wave_min,
        reason,
    };
    let Some(reset) = reset else {
        return check(
            ResetVerdict::Unchecked,
            "no reset was sent before this run: before_run resets only before the first".to_owned(),
        );
    };
    let shared =
        facts.prompt_cache_mode == PromptCacheMode::Shared && facts.shared_prefix_tokens > 0;
    match first_wave_min {
        Some(0) if shared => {
            return check(
                ResetVerdict::Emptied,
                "the first requests found none of the shared prefix in the cache \
                 (cached_tokens 0)"
                    .to_owned(),
            )
        }
        Some(tokens) if shared => {
            return check(
                ResetVerdict::NotEmptied,
                format!(
                    "every one of the first requests found at least {tokens} tokens in the \
                     cache: the reset did not empty it, or another client filled it first"
                ),
            )
        }
        _ => {}
    }
    let kv = |counters: &Option<BTreeMap<String, f64>>| {
        counters
            .as_ref()
            .and_then(|counters| counters.get(CommonSeries::KvCacheUse.key()).copied())
    };
    if let (Some(before), Some(after)) = (kv(&reset.counters_before), kv(&reset.counters_after)) {
        if before > 0.0 && after <= 0.0 {
            return check(
                ResetVerdict::Emptied,
                format!("the server's KV-cache use fell from {before} to 0 across the reset"),
            );
        }
    }
    let why = if !shared {
        "the prompts share no prefix, so no request shows what the cache held"
    } else {
        "the server's usage carries no cached_tokens (vLLM: --enable-prompt-tokens-details, \
         SGLang: --enable-cache-report), so no request shows what the cache held"
    };
    check(ResetVerdict::Unchecked, why.to_owned())
}

/// The fewest `cached_tokens` among the first `concurrency` rows by start, over those that
/// carry it.
fn first_wave_min_cached_tokens(facts: &RunFacts<'_>) -> Option<u64> {
    let mut rows: Vec<&RequestTiming> = facts.rows.iter().collect();
    rows.sort_by(|a, b| {
        let start = |row: &RequestTiming| row.started_at_ms.unwrap_or(f64::INFINITY);
        start(a)
            .total_cmp(&start(b))
            .then(a.request_index.cmp(&b.request_index))
    });
    let wave = usize::try_from(facts.concurrency.max(1)).unwrap_or(usize::MAX);
    rows.iter()
        .take(wave)
        .filter_map(|row| row.cached_tokens.flatten())
        .min()
}

#[cfg(test)]
mod tests;
