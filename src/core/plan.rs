//! The run plan: everything fixed before the first request is sent, from a valid
//! [`RunConfig`] and the discovered context window ([`RunPlan`]): request count, concurrency,
//! context length and prompt budget cap, the planned context of every request, canary markers,
//! the warm-up and endpoint of each slot, and the `sampling` / `serve_flags` blocks the artifact
//! records (ARTIFACT.md §1.2, §3).

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::{json, Value};
use thiserror::Error;

use crate::core::config::choices::{PromptCacheMode, ReasoningEffort};
use crate::core::config::error::ConfigError;
use crate::core::config::models::{ContextWindow, CONTEXT_WINDOW_KEYS, PROBE_WINDOW_KEYS};
use crate::core::config::settings::SAMPLED_CONTEXT_TABLE;
use crate::core::config::settings::{
    RunConfig, BROWSER_HTTP1_CONNECTIONS_PER_HOST, MAX_AGGREGATE_PLANNED_TOKENS,
    SAMPLED_CONTEXT_CEILING_TOKENS, WARMUP_CHECK_ROUNDS,
};
use crate::core::format::format_count;
use crate::core::load::schedule::arrival_times_ms;
use crate::core::python::random::PyRandom;

pub mod calibration;
pub mod tokens;
pub mod workload;

use crate::core::schema::calibration::ContextCalibration;
use workload::{WorkloadPlanError, WorkloadRequests};

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
    /// The workload cannot be sent with these settings.
    #[error(transparent)]
    Workload(#[from] WorkloadPlanError),
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

/// The context length a plan caps prompts by: the explicit setting, else what `/models`
/// reported, else unknown.
fn resolved_max_model_len(config: &RunConfig, discovered: Option<u64>) -> Option<u64> {
    if config.max_model_len != 0 {
        Some(config.max_model_len)
    } else {
        discovered.filter(|&tokens| tokens > 0)
    }
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
    /// When each request is due, ms from the run's start, in an open-loop (`load: rate`) run.
    arrival_times_ms: Option<Vec<f64>>,
    /// What the server's own token counts said, when the run calibrates its context.
    calibration: Option<ContextCalibration>,
    /// A workload file's requests, when the run sends them instead of synthetic prompts.
    workload: Option<Arc<WorkloadRequests>>,
}

impl RunPlan {
    /// Validates `config` and fixes the plan.
    ///
    /// `discovered_max_model_len` is what [`parse_models_response`](crate::core::config::models::parse_models_response) found (None when the probe
    /// failed or was skipped); an explicit `config.max_model_len` wins over it.
    pub fn new(
        config: &RunConfig,
        discovered_max_model_len: Option<u64>,
    ) -> Result<Self, PlanError> {
        config.validate().map_err(PlanError::InvalidConfig)?;

        let (mut requests, concurrency) = if config.burst > 0 {
            (config.burst, config.burst)
        } else {
            (config.requests, config.concurrency)
        };
        // An open-loop run is drawn up front; with a duration, it has the requests due before
        // the duration ends (at most `requests`).
        let arrival_times_ms = config.load.is_open_loop().then(|| {
            arrival_times_ms(
                &config.load,
                config.load.seed(config.context_seed),
                requests,
            )
        });
        if let Some(times) = &arrival_times_ms {
            requests = times.len() as u64;
        }

        let max_model_len = resolved_max_model_len(config, discovered_max_model_len);
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
            arrival_times_ms,
            calibration: None,
            workload: None,
        })
    }

    /// The plan of a run that sends `workload`'s requests, or synthetic prompts without one.
    ///
    /// With a workload, the requests are its planned turns, their planned contexts their
    /// inputs' estimated sizes (never cut: a file's prompt is sent as given), and a trace's
    /// requests are due at its timestamps divided by `trace_speed`; an untimed workload at
    /// `load=rate` is scheduled like synthetic prompts. The synthetic prompt's settings do not
    /// apply and are recorded as such: unique prompts, no shared prefix, no fixed context, no
    /// word contract.
    pub fn for_run(
        config: &RunConfig,
        discovered_max_model_len: Option<u64>,
        workload: Option<Arc<WorkloadRequests>>,
    ) -> Result<Self, PlanError> {
        let Some(workload) = workload else {
            return Self::new(config, discovered_max_model_len);
        };
        config.validate().map_err(PlanError::InvalidConfig)?;
        let mut config = config.clone();
        config.requests = workload.requests();
        config.burst = 0;
        config.prompt_cache_mode = PromptCacheMode::Unique;
        config.shared_prefix_tokens = 0;
        config.context_tokens = 0;
        config.response_words = 0;
        let mut requests = workload.requests();

        let arrival_times_ms = match workload.arrival_times_ms(config.workload.trace_speed) {
            Some(times) => Some(times),
            None => config.load.is_open_loop().then(|| {
                arrival_times_ms(
                    &config.load,
                    config.load.seed(config.context_seed),
                    requests,
                )
            }),
        };
        if let Some(times) = &arrival_times_ms {
            // A duration cuts an open-loop schedule: the requests due before it ends.
            requests = requests.min(times.len() as u64);
        }
        let max_model_len = resolved_max_model_len(&config, discovered_max_model_len);
        let reserved = workload.largest_max_tokens().saturating_add(config.margin);
        let prompt_budget_cap = max_model_len
            .filter(|&len| len > reserved)
            .map(|len| len - reserved);
        let planned_context_tokens = (0..requests)
            .map(|index| workload.turn(index).map_or(0, |turn| turn.input_tokens))
            .collect();
        Ok(Self {
            requests,
            concurrency: config.concurrency,
            max_model_len,
            prompt_budget_cap,
            planned_context_tokens,
            arrival_times_ms,
            calibration: None,
            workload: Some(workload),
            config,
        })
    }

    /// The workload's requests, when the run sends a workload file.
    pub fn workload(&self) -> Option<&Arc<WorkloadRequests>> {
        self.workload.as_ref()
    }

    /// `max_tokens` of request `index`: its workload turn's, else the setting.
    pub fn max_tokens_of(&self, index: u64) -> u64 {
        self.workload
            .as_ref()
            .and_then(|workload| workload.turn(index))
            .map_or(self.config.max_tokens, |turn| turn.max_tokens)
    }

    /// This plan with its prompts sized in the server's tokens by `calibration`
    /// (docs/guide/metrics.md, *Context calibration*): each request's planned context stays what it
    /// is (and what its row records); the budget its prompt is built from is rescaled.
    pub fn with_calibration(self, calibration: ContextCalibration) -> Self {
        Self {
            calibration: Some(calibration),
            ..self
        }
    }

    /// The calibration the prompts are sized by, if any (artifact `client.context_calibration`).
    pub fn calibration(&self) -> Option<&ContextCalibration> {
        self.calibration.as_ref()
    }

    /// The budget request `index`'s prompt is built from, in strobe's estimated tokens: its
    /// planned context, rescaled when the plan is calibrated (0 past the plan's end).
    pub fn prompt_budget_tokens(&self, index: usize) -> u64 {
        let planned = self
            .planned_context_tokens
            .get(index)
            .copied()
            .unwrap_or_default();
        match &self.calibration {
            Some(calibration) => calibration.prompt_budget(planned),
            None => planned,
        }
    }

    /// The shared prefix's budget in strobe's estimated tokens: [`Self::shared_prefix_tokens`],
    /// rescaled when the plan is calibrated.
    pub fn shared_prefix_budget_tokens(&self) -> u64 {
        let tokens = self.shared_prefix_tokens();
        match &self.calibration {
            Some(calibration) => calibration.prefix_budget(tokens),
            None => tokens,
        }
    }

    /// The largest planned context of any request (0 for an empty plan).
    pub fn largest_planned_context_tokens(&self) -> u64 {
        self.planned_context_tokens
            .iter()
            .copied()
            .max()
            .unwrap_or_default()
    }

    /// When each request is due, ms from the run's start (request `i` at index `i`), in an
    /// open-loop run; `None` in a closed-loop one.
    pub fn arrival_times_ms(&self) -> Option<&[f64]> {
        self.arrival_times_ms.as_deref()
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

/// What the page says, before a run, about the context window a server reported (`window`) for
/// the run `config` asks for: the window and where it came from, and how it caps the prompts —
/// so a plan too large for the server is shown capped before anything is sent.
pub fn context_window_note(config: &RunConfig, window: ContextWindow) -> String {
    let count = |tokens: u64| format_count(tokens as usize);
    let source = CONTEXT_WINDOW_KEYS
        .iter()
        .chain(PROBE_WINDOW_KEYS.iter())
        .find(|(key, _)| *key == window.key)
        .map_or(String::new(), |(key, engines)| {
            format!(" ({key}: {engines})")
        });
    let mut note = format!("Context window: {} tokens{source}.", count(window.tokens));
    if config.max_model_len != 0 {
        note.push_str(&format!(
            " The form's max_model_len ({}) is used instead.",
            count(config.max_model_len)
        ));
        return note;
    }
    let reserved = config.max_tokens + config.margin;
    let Some(cap) = window.tokens.checked_sub(reserved).filter(|cap| *cap > 0) else {
        note.push_str(&format!(
            " It leaves no room for a prompt after max_tokens {} and margin {}: lower them.",
            count(config.max_tokens),
            count(config.margin)
        ));
        return note;
    };
    let arithmetic = format!(
        "{} − max_tokens {} − margin {}",
        count(window.tokens),
        count(config.max_tokens),
        count(config.margin)
    );
    if config.context_tokens == 0 {
        note.push_str(&format!(
            " Sampled contexts above {} tokens are capped at {} to fit it ({arithmetic}).",
            count(cap),
            count(cap)
        ));
    } else if config.context_tokens > cap {
        note.push_str(&format!(
            " Prompts are capped at {} tokens to fit it ({arithmetic}); context_tokens asks for {}.",
            count(cap),
            count(config.context_tokens)
        ));
    } else {
        note.push_str(&format!(
            " Prompts of {} tokens fit (at most {}: {arithmetic}).",
            count(config.context_tokens),
            count(cap)
        ));
    }
    note
}

#[cfg(test)]
mod tests;
