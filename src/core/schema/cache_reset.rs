//! The `prefix_cache_reset` block strobe adds to the artifact of a run asked to start from an
//! empty prefix cache (docs/guide/telemetry.md, *A clean prefix cache*): the reset sent before it,
//! what the server answered, the server's prefix-cache counters around it, and what the rows
//! say of it. Every v1 reader that does not know the key ignores it; a run without resets has
//! no block.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::core::config::choices::PrefixCacheReset;

/// The `prefix_cache_reset` block.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PrefixCacheResetBlock {
    /// When resets were asked for: `before_run` or `before_each_step`.
    pub policy: PrefixCacheReset,
    /// The reset sent before this run; null when the policy sent none before it (the later
    /// runs of `before_run`).
    pub reset: Option<ResetRecord>,
    /// What the rows and the counters say of the cache this run started with.
    pub check: ResetCheck,
}

/// One reset, answered with a success (a failed reset stops the run, so no artifact records
/// one).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ResetRecord {
    /// Whose route was called: `vllm`, `sglang`, `strobe-sim`, or `given` (the URL of the
    /// `reset_prefix_cache_url` setting).
    pub engine: String,
    /// The method sent, `POST`.
    pub method: String,
    /// The URL called; never with credentials (the API key goes in its header only).
    pub url: String,
    /// The status of the answer that counted (a 2xx).
    pub status: u16,
    /// How many times it was sent (SGLang refuses while requests run, and is asked again).
    pub attempts: u32,
    /// When the answer that counted was asked for, on the run's clock (ms; before the run
    /// starts, so below 0).
    pub t_ms: f64,
    /// From sending it to its answer, ms.
    pub latency_ms: f64,
    /// The server's prefix-cache series just before the reset, by common name
    /// (`prefix_cache_queries`, `prefix_cache_hits`, `kv_cache_use`, `prefix_cache_hit_rate`);
    /// absent when the server's metrics are not scraped or did not answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counters_before: Option<BTreeMap<String, f64>>,
    /// The same series just after it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counters_after: Option<BTreeMap<String, f64>>,
}

/// Whether the run shows that it started from an empty prefix cache.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ResetVerdict {
    /// The rows (or, failing them, the counters) show an empty cache at the start.
    Emptied,
    /// The rows show the shared prefix already cached at the start.
    NotEmptied,
    /// Nothing in the run can tell (unique prompts, no `cached_tokens` in the usage, no reset
    /// before this run).
    Unchecked,
}

/// What the run says of the cache it started with.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ResetCheck {
    /// The verdict.
    pub verdict: ResetVerdict,
    /// The fewest `cached_tokens` among the first requests sent (as many as run at once): the
    /// first of them to reach a freshly emptied cache finds none of the shared prefix there.
    /// Null when those rows carry no `cached_tokens`.
    pub first_wave_min_cached_tokens: Option<u64>,
    /// Why, in words.
    pub reason: String,
}

impl PrefixCacheResetBlock {
    /// The first float that is NaN or infinite, with its place.
    pub fn first_non_finite(&self) -> Option<(String, f64)> {
        let reset = self.reset.as_ref()?;
        let mut floats = vec![
            ("prefix_cache_reset.reset.t_ms".to_owned(), reset.t_ms),
            (
                "prefix_cache_reset.reset.latency_ms".to_owned(),
                reset.latency_ms,
            ),
        ];
        for (side, counters) in [
            ("counters_before", &reset.counters_before),
            ("counters_after", &reset.counters_after),
        ] {
            for (name, value) in counters.iter().flatten() {
                floats.push((format!("prefix_cache_reset.reset.{side}.{name}"), *value));
            }
        }
        floats.into_iter().find(|(_, value)| !value.is_finite())
    }
}
