//! The running engine: the pure latency model's admission gate, prefill lane and prefix cache
//! behind one lock, with the async waiting that the real clock needs.
//!
//! A queued request waits on a oneshot channel that the finishing request's [`AdmissionSlot`]
//! fires, so admission is FIFO and costs nothing while waiting. The running totals `/metrics`
//! reports ([`ServerCounters`]) sit under the same lock, so one snapshot is one moment.

use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use tokio::sync::oneshot;

use crate::metrics::{MetricsSnapshot, ServerCounters};
use crate::model::{Admission, Arrival, LatencyParams, PrefillLane, PrefillSlot};
use crate::prefix_cache::PrefixCache;

struct EngineState {
    admission: Admission,
    waiters: HashMap<u64, oneshot::Sender<()>>,
    lane: PrefillLane,
    cache: PrefixCache,
    counters: ServerCounters,
}

/// Admission, prefill and cache state shared by all requests of one server.
pub struct Engine {
    params: LatencyParams,
    state: Mutex<EngineState>,
    active: AtomicUsize,
    peak_active: AtomicUsize,
}

/// A request that got a running slot.
pub struct Admitted {
    /// Holds the slot; dropping it finishes the sequence and admits the next one.
    pub slot: AdmissionSlot,
    /// Requests that were waiting ahead of this one when it arrived.
    pub queued_behind: usize,
    /// Active sequences just after admission, this one included.
    pub active_at_admission: usize,
}

/// The client went away while the request waited in the queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Abandoned;

/// Where one request's prefill sits and how much of it the cache saved.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PrefillPlan {
    /// Prompt tokens the prefix cache held.
    pub cached_tokens: u32,
    /// When the prefill runs, ms since server start.
    pub slot: PrefillSlot,
}

impl Engine {
    /// An idle engine with an empty cache.
    pub fn new(params: LatencyParams, cache: PrefixCache) -> Self {
        Self {
            state: Mutex::new(EngineState {
                admission: Admission::new(params.max_num_seqs),
                waiters: HashMap::new(),
                lane: PrefillLane::default(),
                cache,
                counters: ServerCounters::default(),
            }),
            params,
            active: AtomicUsize::new(0),
            peak_active: AtomicUsize::new(0),
        }
    }

    /// The latency parameters.
    pub fn params(&self) -> &LatencyParams {
        &self.params
    }

    fn state(&self) -> MutexGuard<'_, EngineState> {
        // Every update under this lock is a few field writes that cannot panic halfway.
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Sequences admitted and not yet finished.
    pub fn active(&self) -> usize {
        self.active.load(Ordering::Relaxed)
    }

    /// The most sequences that were ever active at once.
    pub fn peak_active(&self) -> usize {
        self.peak_active.load(Ordering::Relaxed)
    }

    fn publish_active(&self, state: &EngineState) -> usize {
        let active = state.admission.active();
        self.active.store(active, Ordering::Relaxed);
        self.peak_active.fetch_max(active, Ordering::Relaxed);
        active
    }

    /// Waits for a running slot for request `id`, in arrival order; gives up with [`Abandoned`]
    /// if `client_gone` resolves first.
    pub async fn admit(
        self: &Arc<Self>,
        id: u64,
        client_gone: impl Future<Output = ()>,
    ) -> Result<Admitted, Abandoned> {
        let (queued_behind, admitted) = {
            let mut state = self.state();
            match state.admission.arrive(id) {
                Arrival::Admitted => {
                    let active = self.publish_active(&state);
                    return Ok(Admitted {
                        slot: AdmissionSlot {
                            engine: Arc::clone(self),
                        },
                        queued_behind: 0,
                        active_at_admission: active,
                    });
                }
                Arrival::Queued { ahead } => {
                    let (sender, receiver) = oneshot::channel();
                    state.waiters.insert(id, sender);
                    (ahead, receiver)
                }
            }
        };
        let woken = tokio::select! {
            woken = admitted => woken.is_ok(),
            () = client_gone => false,
        };
        let mut state = self.state();
        if !woken && state.waiters.remove(&id).is_some() {
            state.admission.withdraw(id);
            return Err(Abandoned);
        }
        // Either woken, or admitted in the instant the client left: the slot is ours either way.
        let slot = AdmissionSlot {
            engine: Arc::clone(self),
        };
        if !woken {
            drop(state);
            drop(slot);
            return Err(Abandoned);
        }
        Ok(Admitted {
            slot,
            queued_behind,
            active_at_admission: state.admission.active(),
        })
    }

    /// Looks `prompt` up in the prefix cache (caching it) and books the prefill lane at `now_ms`.
    ///
    /// Booking and caching happen together under one lock: any prefill booked later starts after
    /// this one ends, by which time these blocks really are computed.
    pub fn schedule_prefill(
        &self,
        namespace: &str,
        prompt: &[u8],
        prompt_tokens: u32,
        now_ms: f64,
    ) -> PrefillPlan {
        let mut state = self.state();
        let matched = state.cache.lookup_and_insert(namespace, prompt);
        let cached_tokens = self.params.cached_tokens(matched, prompt_tokens);
        let uncached = prompt_tokens.saturating_sub(cached_tokens);
        let slot = state
            .lane
            .schedule(now_ms, self.params.prefill_ms(uncached));
        state.counters.prefill_booked(prompt_tokens, cached_tokens);
        PrefillPlan {
            cached_tokens,
            slot,
        }
    }

    /// A request ended having sent `generated` tokens, its first `ttft_s` after receipt.
    pub fn request_ended(&self, generated: u32, ttft_s: Option<f64>) {
        self.state().counters.request_ended(generated, ttft_s);
    }

    /// What `/metrics` answers now: queue, batch, cache and totals read at one moment.
    pub fn metrics(&self) -> MetricsSnapshot {
        let state = self.state();
        let capacity = state.cache.capacity_blocks();
        MetricsSnapshot {
            num_requests_running: state.admission.active(),
            num_requests_waiting: state.admission.queued(),
            kv_cache_usage_perc: if capacity == 0 {
                0.0
            } else {
                state.cache.len() as f64 / capacity as f64
            },
            prefix_cache_queries: state.counters.prefix_cache_queries,
            prefix_cache_hits: state.counters.prefix_cache_hits,
            num_preemptions: 0,
            prompt_tokens: state.counters.prompt_tokens,
            generation_tokens: state.counters.generation_tokens,
            time_to_first_token_seconds: state.counters.ttft(),
        }
    }

    /// Forgets every cached prefix block (vLLM's `POST /reset_prefix_cache`); returns how
    /// many blocks were dropped. Prefills already booked keep their plan.
    pub fn reset_prefix_cache(&self) -> usize {
        let mut state = self.state();
        let dropped = state.cache.len();
        state.cache.clear();
        dropped
    }

    /// SGLang's `/flush_cache`: empties the prefix cache unless requests run or wait, as SGLang
    /// refuses then; returns how many blocks were dropped, or `None` when it refused.
    pub fn flush_cache(&self) -> Option<usize> {
        let mut state = self.state();
        if state.admission.active() > 0 || state.admission.queued() > 0 {
            return None;
        }
        let dropped = state.cache.len();
        state.cache.clear();
        Some(dropped)
    }

    fn release(&self) {
        let mut state = self.state();
        // Hand the slot to the next waiter still listening; skip those whose task is gone.
        while let Some(next) = state.admission.finish() {
            let handed_over = state
                .waiters
                .remove(&next)
                .is_some_and(|waiter| waiter.send(()).is_ok());
            if handed_over {
                break;
            }
        }
        self.publish_active(&state);
    }
}

/// A running sequence's place in the engine; dropping it finishes the sequence.
pub struct AdmissionSlot {
    engine: Arc<Engine>,
}

impl Drop for AdmissionSlot {
    fn drop(&mut self) {
        self.engine.release();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn engine(max_num_seqs: usize) -> Arc<Engine> {
        let params = LatencyParams {
            max_num_seqs,
            ..LatencyParams::default()
        };
        Arc::new(Engine::new(params, PrefixCache::new(4, 100)))
    }

    #[tokio::test]
    async fn queued_requests_are_admitted_in_order_as_slots_free() {
        let engine = engine(1);
        let first = engine
            .admit(1, std::future::pending())
            .await
            .expect("free slot");
        assert_eq!((first.queued_behind, first.active_at_admission), (0, 1));
        let second = tokio::spawn({
            let engine = Arc::clone(&engine);
            async move {
                engine
                    .admit(2, std::future::pending())
                    .await
                    .map(|a| a.queued_behind)
            }
        });
        tokio::task::yield_now().await;
        assert_eq!(engine.active(), 1);
        drop(first.slot);
        assert_eq!(second.await.expect("task ran"), Ok(0));
        assert_eq!(
            engine.active(),
            0,
            "the second slot was dropped with its task's result"
        );
        assert_eq!(engine.peak_active(), 1);
    }

    #[tokio::test]
    async fn a_client_leaving_the_queue_gives_its_place_up() {
        let engine = engine(1);
        let first = engine
            .admit(1, std::future::pending())
            .await
            .expect("free slot");
        let gone = engine.admit(2, std::future::ready(())).await;
        assert!(gone.is_err());
        drop(first.slot);
        assert_eq!(
            engine.active(),
            0,
            "nobody was left waiting for the freed slot"
        );
    }

    #[test]
    fn metrics_count_lookups_and_a_reset_empties_the_cache() {
        let engine = engine(4);
        engine.schedule_prefill("m", b"AAAABBBBCC", 100, 0.0);
        engine.schedule_prefill("m", b"AAAABBBBCC", 100, 0.0);
        engine.request_ended(12, Some(0.05));
        let before = engine.metrics();
        assert_eq!(
            (
                before.prefix_cache_queries,
                before.prefix_cache_hits,
                before.prompt_tokens,
                before.generation_tokens,
            ),
            (200, 2, 200, 12)
        );
        assert_eq!(before.kv_cache_usage_perc, 0.02, "2 of 100 blocks");
        assert_eq!(before.time_to_first_token_seconds.count, 1);
        assert_eq!(engine.reset_prefix_cache(), 2);
        let after = engine.metrics();
        assert_eq!(after.kv_cache_usage_perc, 0.0);
        assert_eq!(after.prefix_cache_queries, 200, "counters only grow");
        let cold = engine.schedule_prefill("m", b"AAAABBBBCC", 100, 0.0);
        assert_eq!(cold.cached_tokens, 0, "the reset prefix misses");
    }

    #[tokio::test]
    async fn a_flush_is_refused_while_a_request_runs() {
        let engine = engine(4);
        engine.schedule_prefill("m", b"AAAABBBBCC", 100, 0.0);
        let admitted = engine
            .admit(1, std::future::pending())
            .await
            .expect("free slot");
        assert_eq!(engine.flush_cache(), None, "refused while a request runs");
        assert_eq!(
            engine.metrics().kv_cache_usage_perc,
            0.02,
            "nothing dropped"
        );
        drop(admitted.slot);
        assert_eq!(engine.flush_cache(), Some(2));
        assert_eq!(engine.metrics().kv_cache_usage_perc, 0.0);
    }

    #[test]
    fn prefill_is_booked_after_the_cache_lookup() {
        let engine = engine(4);
        let cold = engine.schedule_prefill("m", b"AAAABBBBCC", 100, 0.0);
        assert_eq!(cold.cached_tokens, 0);
        assert_eq!(cold.slot.end_ms, engine.params().prefill_ms(100));
        let warm = engine.schedule_prefill("m", b"AAAABBBBCC", 100, 0.0);
        // Eight cached bytes at 3.15 chars per token.
        assert_eq!(warm.cached_tokens, 2);
        assert_eq!(
            warm.slot.start_ms, cold.slot.end_ms,
            "one prefill at a time"
        );
    }
}
