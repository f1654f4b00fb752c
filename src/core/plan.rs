//! The run plan: everything fixed before the first request is sent, from a valid
//! [`RunConfig`] and the discovered context window ([`RunPlan`]): request count, concurrency,
//! context length and prompt budget cap, the planned context of every request, canary markers,
//! the warm-up and endpoint of each slot, and the `sampling` / `serve_flags` blocks the artifact
//! records (ARTIFACT.md §1.2, §3).

use std::collections::BTreeMap;

use serde_json::{json, Value};
use thiserror::Error;

use crate::core::config::choices::*;
use crate::core::config::error::ConfigError;
use crate::core::config::settings::SAMPLED_CONTEXT_TABLE;
use crate::core::config::settings::*;
use crate::core::load::schedule::arrival_times_ms;
use crate::core::python::random::PyRandom;

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
    /// When each request is due, ms from the run's start, in an open-loop (`load: rate`) run.
    arrival_times_ms: Option<Vec<f64>>,
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
            arrival_times_ms,
        })
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::config::settings::tests::pooled;

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
}
