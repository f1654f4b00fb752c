//! The latency model: how long a simulated inference server takes, on a virtual clock.
//!
//! This module is pure. It never reads a clock or sleeps; every time is a number of milliseconds
//! passed in by the caller. The HTTP layer drives the same pieces against the real clock, and
//! [`simulate`] drives them against a virtual one, so the model can be tested exactly.
//!
//! The model, in the words a serving engineer would use:
//! - **Admission**: at most `max_num_seqs` sequences run at once; later requests wait in a FIFO
//!   queue ([`Admission`]).
//! - **Prefill**: one prefill runs at a time ([`PrefillLane`]), at `prefill_tok_s` over the prompt
//!   tokens the prefix cache did not hold. Prefill produces the first output token.
//! - **Decode**: every further token follows the previous one after
//!   `decode_interval_ms × (1 + decode_slowdown_per_seq × (active − 1))`, optionally scaled by a
//!   jitter factor in `1 ± jitter`.
//! - **Tokens**: a prompt of `c` characters is `ceil(c / chars_per_token)` tokens.

use std::collections::VecDeque;

/// The parameters of the latency model; every one is a command-line flag.
#[derive(Debug, Clone, PartialEq)]
pub struct LatencyParams {
    /// Most sequences admitted at once (`--max-num-seqs`); more wait in a FIFO queue.
    pub max_num_seqs: usize,
    /// Prefill throughput over uncached prompt tokens, tokens per second (`--prefill-tok-s`).
    pub prefill_tok_s: f64,
    /// Time between output tokens with one active sequence, ms (`--decode-interval-ms`).
    pub decode_interval_ms: f64,
    /// Fractional slowdown of the decode interval per extra active sequence
    /// (`--decode-slowdown-per-seq`; 0.03 means +3 % per sequence beyond the first).
    pub decode_slowdown_per_seq: f64,
    /// Relative jitter on every decode interval, `0..1` (`--jitter`; 0.1 means ±10 %).
    pub jitter: f64,
    /// Characters per prompt token used to estimate token counts (`--chars-per-token`).
    pub chars_per_token: f64,
}

impl Default for LatencyParams {
    fn default() -> Self {
        Self {
            max_num_seqs: 16,
            prefill_tok_s: 20_000.0,
            decode_interval_ms: 8.0,
            decode_slowdown_per_seq: 0.03,
            jitter: 0.0,
            chars_per_token: 3.15,
        }
    }
}

impl LatencyParams {
    /// Milliseconds a prefill of `uncached_tokens` takes once it has the prefill lane.
    pub fn prefill_ms(&self, uncached_tokens: u32) -> f64 {
        if self.prefill_tok_s.is_finite() && self.prefill_tok_s > 0.0 {
            f64::from(uncached_tokens) * 1000.0 / self.prefill_tok_s
        } else {
            0.0
        }
    }

    /// Milliseconds between two output tokens while `active_sequences` sequences are admitted.
    ///
    /// `jitter_draw` is a uniform draw in `[0, 1)`; it maps to a factor in `1 ± jitter`, so a
    /// draw of 0.5 means no jitter. The result is never negative.
    pub fn decode_interval_ms(&self, active_sequences: usize, jitter_draw: f64) -> f64 {
        let extra_sequences = active_sequences.saturating_sub(1) as f64;
        let contended =
            self.decode_interval_ms * (1.0 + self.decode_slowdown_per_seq * extra_sequences);
        let jitter_factor = 1.0 + self.jitter * (2.0 * jitter_draw - 1.0);
        (contended * jitter_factor).max(0.0)
    }

    /// Prompt tokens for a prompt of `chars` characters: `ceil(chars / chars_per_token)`, at least 1.
    pub fn prompt_tokens(&self, chars: usize) -> u32 {
        let tokens = (chars as f64 / self.chars_per_token).ceil();
        (tokens.min(f64::from(u32::MAX)) as u32).max(1)
    }

    /// Prompt tokens served from the prefix cache when `matched_chars` leading characters hit.
    ///
    /// Like vLLM, the last prompt token is always recomputed, so a fully cached prompt still has
    /// one uncached token.
    pub fn cached_tokens(&self, matched_chars: usize, prompt_tokens: u32) -> u32 {
        let cached = (matched_chars as f64 / self.chars_per_token).floor();
        (cached.min(f64::from(u32::MAX)) as u32).min(prompt_tokens.saturating_sub(1))
    }
}

/// The prefill engine: one prefill at a time, in the order they were scheduled.
#[derive(Debug, Clone, Default)]
pub struct PrefillLane {
    free_at_ms: f64,
}

/// When one prefill runs on the [`PrefillLane`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PrefillSlot {
    /// When the prefill starts, ms on the caller's clock.
    pub start_ms: f64,
    /// When it finishes and the first output token is ready, ms on the caller's clock.
    pub end_ms: f64,
}

impl PrefillLane {
    /// Books the lane for `duration_ms` starting no earlier than `now_ms`.
    pub fn schedule(&mut self, now_ms: f64, duration_ms: f64) -> PrefillSlot {
        let start_ms = now_ms.max(self.free_at_ms);
        let end_ms = start_ms + duration_ms.max(0.0);
        self.free_at_ms = end_ms;
        PrefillSlot { start_ms, end_ms }
    }
}

/// What happened to a request on arrival at [`Admission`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arrival {
    /// It runs now.
    Admitted,
    /// It waits; `ahead` requests are queued before it.
    Queued {
        /// Requests ahead of this one in the queue.
        ahead: usize,
    },
}

/// The admission gate: at most `limit` running sequences, the rest in a FIFO queue of ids.
#[derive(Debug, Clone)]
pub struct Admission {
    limit: usize,
    active: usize,
    waiting: VecDeque<u64>,
}

impl Admission {
    /// A gate admitting at most `limit` sequences (a limit of 0 is treated as 1).
    pub fn new(limit: usize) -> Self {
        Self {
            limit: limit.max(1),
            active: 0,
            waiting: VecDeque::new(),
        }
    }

    /// Sequences currently admitted.
    pub fn active(&self) -> usize {
        self.active
    }

    /// Requests currently waiting.
    pub fn queued(&self) -> usize {
        self.waiting.len()
    }

    /// Request `id` arrives: it is admitted if a slot is free and nobody waits, else queued.
    pub fn arrive(&mut self, id: u64) -> Arrival {
        if self.active < self.limit && self.waiting.is_empty() {
            self.active += 1;
            Arrival::Admitted
        } else {
            let ahead = self.waiting.len();
            self.waiting.push_back(id);
            Arrival::Queued { ahead }
        }
    }

    /// A queued request gave up before it was admitted.
    pub fn withdraw(&mut self, id: u64) {
        self.waiting.retain(|waiting| *waiting != id);
    }

    /// An admitted sequence finished; returns the queued request admitted in its place, if any.
    pub fn finish(&mut self) -> Option<u64> {
        self.active = self.active.saturating_sub(1);
        if self.active < self.limit {
            let next = self.waiting.pop_front()?;
            self.active += 1;
            Some(next)
        } else {
            None
        }
    }
}

/// One request for [`simulate`]: when it arrives and how much work it is.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct VirtualRequest {
    /// Arrival time, ms.
    pub arrival_ms: f64,
    /// Prompt tokens.
    pub prompt_tokens: u32,
    /// Prompt tokens the prefix cache holds.
    pub cached_tokens: u32,
    /// Output tokens (reasoning and content); at least one is produced by prefill.
    pub output_tokens: u32,
}

/// What [`simulate`] predicts for one request, all in ms on the virtual clock.
#[derive(Debug, Clone, PartialEq)]
pub struct VirtualTimeline {
    /// When it was admitted.
    pub admitted_ms: f64,
    /// When its prefill started and ended (the first token is ready at the end).
    pub prefill: PrefillSlot,
    /// When each output token was produced.
    pub token_ms: Vec<f64>,
    /// When it finished and left the running set.
    pub finished_ms: f64,
}

/// The two kinds of event in [`simulate`]; at equal times arrivals are handled first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Step {
    Arrive,
    Token,
}

/// Runs the latency model on a virtual clock with jitter fixed at its midpoint.
///
/// This is the reference for what the server does on the real clock: requests are admitted in
/// arrival order (ties by index), prefill is booked at admission, token `k > 0` follows token
/// `k − 1` by the decode interval for the number of sequences active just after token `k − 1`,
/// and a request leaves the running set at its last token, admitting the next queued request at
/// that instant.
pub fn simulate(params: &LatencyParams, requests: &[VirtualRequest]) -> Vec<VirtualTimeline> {
    let mut admission = Admission::new(params.max_num_seqs);
    let mut lane = PrefillLane::default();
    let mut timelines: Vec<Option<VirtualTimeline>> = vec![None; requests.len()];
    // Pending events as (time, kind, request index); see `next_event` for the processing order,
    // which makes the result a pure function of the input.
    let mut pending: Vec<(f64, Step, usize)> = requests
        .iter()
        .enumerate()
        .map(|(index, request)| (request.arrival_ms, Step::Arrive, index))
        .collect();

    let start = |index: usize,
                 now_ms: f64,
                 lane: &mut PrefillLane,
                 timelines: &mut [Option<VirtualTimeline>],
                 pending: &mut Vec<(f64, Step, usize)>| {
        let request = requests[index];
        let uncached = request
            .prompt_tokens
            .saturating_sub(request.cached_tokens)
            .max(1);
        let prefill = lane.schedule(now_ms, params.prefill_ms(uncached));
        timelines[index] = Some(VirtualTimeline {
            admitted_ms: now_ms,
            prefill,
            token_ms: Vec::new(),
            finished_ms: f64::NAN,
        });
        pending.push((prefill.end_ms, Step::Token, index));
    };

    while let Some(position) = next_event(&pending) {
        let (now_ms, step, index) = pending.swap_remove(position);
        match step {
            Step::Arrive => {
                if admission.arrive(index as u64) == Arrival::Admitted {
                    start(index, now_ms, &mut lane, &mut timelines, &mut pending);
                }
            }
            Step::Token => {
                let wanted = requests[index].output_tokens.max(1) as usize;
                let Some(timeline) = timelines[index].as_mut() else {
                    continue;
                };
                timeline.token_ms.push(now_ms);
                if timeline.token_ms.len() < wanted {
                    let interval = params.decode_interval_ms(admission.active(), 0.5);
                    pending.push((now_ms + interval, Step::Token, index));
                } else {
                    timeline.finished_ms = now_ms;
                    if let Some(next) = admission.finish() {
                        start(
                            next as usize,
                            now_ms,
                            &mut lane,
                            &mut timelines,
                            &mut pending,
                        );
                    }
                }
            }
        }
    }
    timelines.into_iter().flatten().collect()
}

/// Position of the event to process next: earliest time, then arrivals before tokens, then the
/// lowest request index.
fn next_event(pending: &[(f64, Step, usize)]) -> Option<usize> {
    pending
        .iter()
        .enumerate()
        .min_by(|(_, a), (_, b)| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)))
        .map(|(position, _)| position)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(actual: f64, expected: f64) -> bool {
        (actual - expected).abs() < 1e-9
    }

    #[test]
    fn prefill_time_is_uncached_tokens_over_the_rate() {
        let params = LatencyParams::default();
        assert!(close(params.prefill_ms(2_000), 100.0));
        assert!(close(params.prefill_ms(0), 0.0));
        let unbounded = LatencyParams {
            prefill_tok_s: f64::INFINITY,
            ..LatencyParams::default()
        };
        assert!(close(unbounded.prefill_ms(1_000_000), 0.0));
    }

    #[test]
    fn decode_interval_grows_with_active_sequences_and_jitter_is_centred() {
        let params = LatencyParams::default();
        assert!(close(params.decode_interval_ms(1, 0.5), 8.0));
        assert!(close(params.decode_interval_ms(0, 0.5), 8.0));
        assert!(close(
            params.decode_interval_ms(5, 0.5),
            8.0 * (1.0 + 0.03 * 4.0)
        ));
        let jittery = LatencyParams {
            jitter: 0.1,
            ..LatencyParams::default()
        };
        assert!(close(jittery.decode_interval_ms(1, 0.0), 8.0 * 0.9));
        assert!(close(jittery.decode_interval_ms(1, 0.5), 8.0));
        let wild = LatencyParams {
            jitter: 5.0,
            ..LatencyParams::default()
        };
        assert_eq!(wild.decode_interval_ms(1, 0.0), 0.0, "never negative");
    }

    #[test]
    fn prompt_tokens_round_up_and_cache_never_covers_the_last_token() {
        let params = LatencyParams::default();
        // The reference artifact's 196,608-char prompts: 196608 / 3.15 = 62415.24 -> 62416.
        assert_eq!(params.prompt_tokens(196_608), 62_416);
        assert_eq!(params.prompt_tokens(0), 1);
        assert_eq!(params.prompt_tokens(3), 1);
        assert_eq!(params.cached_tokens(3_150, 2_000), 1_000);
        assert_eq!(params.cached_tokens(10_000, 2_000), 1_999);
        assert_eq!(params.cached_tokens(0, 1), 0);
    }

    #[test]
    fn the_prefill_lane_runs_one_prefill_at_a_time() {
        let mut lane = PrefillLane::default();
        assert_eq!(
            lane.schedule(10.0, 5.0),
            PrefillSlot {
                start_ms: 10.0,
                end_ms: 15.0
            }
        );
        // Booked while the first runs: starts when it ends.
        assert_eq!(
            lane.schedule(12.0, 5.0),
            PrefillSlot {
                start_ms: 15.0,
                end_ms: 20.0
            }
        );
        // Booked after the lane went idle: starts at once.
        assert_eq!(lane.schedule(30.0, 0.0).start_ms, 30.0);
    }

    #[test]
    fn admission_queues_beyond_the_limit_in_arrival_order() {
        let mut admission = Admission::new(2);
        assert_eq!(admission.arrive(1), Arrival::Admitted);
        assert_eq!(admission.arrive(2), Arrival::Admitted);
        assert_eq!(admission.arrive(3), Arrival::Queued { ahead: 0 });
        assert_eq!(admission.arrive(4), Arrival::Queued { ahead: 1 });
        assert_eq!(admission.arrive(5), Arrival::Queued { ahead: 2 });
        assert_eq!((admission.active(), admission.queued()), (2, 3));
        admission.withdraw(4);
        assert_eq!(admission.finish(), Some(3));
        assert_eq!(admission.finish(), Some(5));
        assert_eq!(admission.finish(), None);
        assert_eq!(admission.finish(), None);
        assert_eq!((admission.active(), admission.queued()), (0, 0));
        assert_eq!(
            Admission::new(0).arrive(1),
            Arrival::Admitted,
            "limit 0 acts as 1"
        );
    }

    #[test]
    fn a_lone_request_prefills_then_decodes_at_the_base_interval() {
        let params = LatencyParams::default();
        let timelines = simulate(
            &params,
            &[VirtualRequest {
                arrival_ms: 5.0,
                prompt_tokens: 2_000,
                cached_tokens: 0,
                output_tokens: 4,
            }],
        );
        let timeline = &timelines[0];
        assert_eq!(timeline.admitted_ms, 5.0);
        assert!(close(timeline.prefill.end_ms, 5.0 + 100.0));
        let expected: Vec<f64> = (0..4).map(|k| 105.0 + 8.0 * f64::from(k)).collect();
        assert_eq!(timeline.token_ms.len(), expected.len());
        for (actual, wanted) in timeline.token_ms.iter().zip(&expected) {
            assert!(close(*actual, *wanted), "{actual} vs {wanted}");
        }
        assert!(close(timeline.finished_ms, expected[3]));
    }

    #[test]
    fn requests_beyond_max_num_seqs_wait_for_a_finish() {
        let params = LatencyParams {
            max_num_seqs: 1,
            ..LatencyParams::default()
        };
        let request = VirtualRequest {
            arrival_ms: 0.0,
            prompt_tokens: 200,
            cached_tokens: 0,
            output_tokens: 3,
        };
        let timelines = simulate(&params, &[request, request]);
        let first_finish = timelines[0].finished_ms;
        // 10 ms prefill + 2 intervals of 8 ms.
        assert!(close(first_finish, 10.0 + 16.0));
        assert_eq!(timelines[1].admitted_ms, first_finish);
        assert!(close(timelines[1].prefill.end_ms, first_finish + 10.0));
    }

    #[test]
    fn concurrent_requests_share_the_prefill_lane_and_slow_each_other_down() {
        let params = LatencyParams::default();
        let request = VirtualRequest {
            arrival_ms: 0.0,
            prompt_tokens: 2_000,
            cached_tokens: 1_000,
            output_tokens: 2,
        };
        let timelines = simulate(&params, &[request, request]);
        // Each prefill covers 1000 uncached tokens: 50 ms, one after the other.
        assert!(close(timelines[0].prefill.end_ms, 50.0));
        assert!(close(timelines[1].prefill.start_ms, 50.0));
        assert!(close(timelines[1].prefill.end_ms, 100.0));
        // While both are admitted, each interval is 3 % longer.
        let contended = params.decode_interval_ms(2, 0.5);
        assert!(close(
            timelines[0].token_ms[1] - timelines[0].token_ms[0],
            contended
        ));
    }
}
