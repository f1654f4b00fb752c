//! From a request's times and counts to its `request_timings[]` row (ARTIFACT.md §5): the no-row
//! rules, and the derived values in the producer's exact operation order, in seconds.

use crate::core::schema::rows::{
    ControlledOutput, OutputTokenSource, RequestCanary, RequestTiming,
};

/// Everything a row is built from, with times in seconds (§5).
#[derive(Clone, Debug, PartialEq)]
pub struct RowInputs {
    /// Request index i.
    pub request_index: u64,
    /// The clamped planned context of request i.
    pub planned_context_tokens: u64,
    /// Time to first output, seconds.
    pub ttfo_s: Option<f64>,
    /// Time to first content, seconds.
    pub ttft_s: Option<f64>,
    /// End to end, seconds.
    pub e2e_s: f64,
    /// `usage.prompt_tokens` when exact.
    pub prompt_tokens: Option<u64>,
    /// Output tokens as counted by the stream.
    pub out_toks: Option<u64>,
    /// Where `out_toks` came from; `None` is the older producers' "unknown" (treated as exact).
    pub output_token_source: Option<OutputTokenSource>,
    /// Reasoning deltas seen.
    pub reasoning_chunks: u64,
    /// Content deltas seen.
    pub content_chunks: u64,
    /// Canary observation, if computed.
    pub request_canary: Option<RequestCanary>,
    /// Controlled-output observation, if computed.
    pub controlled_output: Option<ControlledOutput>,
    /// The visible capture was cut.
    pub visible_content_truncated: bool,
    /// See [`RequestTiming::cached_tokens`].
    pub cached_tokens: Option<Option<u64>>,
    /// See [`RequestTiming::started_at_ms`].
    pub started_at_ms: Option<f64>,
    /// See [`RequestTiming::chunk_arrivals_ms`].
    pub chunk_arrivals_ms: Option<Vec<f64>>,
}

/// The five values a row derives from its times and token counts (§5), computed in seconds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DerivedTimings {
    /// (E2E − TTFO) × 1000.
    pub generation_ms: f64,
    /// (E2E − TTFT) × 1000.
    pub visible_generation_ms: f64,
    /// prompt_tokens / TTFO.
    pub effective_prefill_tok_s: Option<f64>,
    /// decode tokens / generation.
    pub decode_tok_s: Option<f64>,
    /// generation × 1000 / decode tokens (the value of all three TPOT keys).
    pub tpot_ms: Option<f64>,
}

impl DerivedTimings {
    /// Derives from seconds in the producer's exact operation order (`decode_tokens` is
    /// `max(out − 1, 0)` when the output count is exact, else `None`).
    pub fn from_seconds(
        ttfo_s: f64,
        ttft_s: f64,
        e2e_s: f64,
        prompt_tokens: Option<u64>,
        decode_tokens: Option<u64>,
    ) -> Self {
        let generation_s = e2e_s - ttfo_s;
        let visible_generation_s = e2e_s - ttft_s;
        let decode = decode_tokens.filter(|&tokens| tokens > 0 && generation_s > 0.0);
        Self {
            generation_ms: generation_s * 1000.0,
            visible_generation_ms: visible_generation_s * 1000.0,
            effective_prefill_tok_s: prompt_tokens
                .filter(|_| ttfo_s > 0.0)
                .map(|tokens| tokens as f64 / ttfo_s),
            decode_tok_s: decode.map(|tokens| tokens as f64 / generation_s),
            tpot_ms: decode.map(|tokens| generation_s * 1000.0 / tokens as f64),
        }
    }
}

impl RequestTiming {
    /// Builds a row, or `None` under the §5 no-row rules: TTFT or E2E missing or non-finite,
    /// TTFT < 0, E2E < TTFT, or (after TTFO falls back to TTFT) TTFO < 0 or TTFO > TTFT.
    pub fn from_seconds(inputs: RowInputs) -> Option<Self> {
        let ttft_s = inputs.ttft_s.filter(|t| t.is_finite())?;
        let e2e_s = Some(inputs.e2e_s).filter(|t| t.is_finite())?;
        if ttft_s < 0.0 || e2e_s < ttft_s {
            return None;
        }
        // The reference treats a non-finite TTFO like a missing one.
        let ttfo_s = inputs.ttfo_s.filter(|t| t.is_finite()).unwrap_or(ttft_s);
        if ttfo_s < 0.0 || ttfo_s > ttft_s {
            return None;
        }
        let exact = matches!(
            inputs.output_token_source,
            None | Some(OutputTokenSource::Usage)
        );
        let decode_tokens = inputs
            .out_toks
            .filter(|_| exact)
            .map(|tokens| tokens.saturating_sub(1));
        let derived = DerivedTimings::from_seconds(
            ttfo_s,
            ttft_s,
            e2e_s,
            inputs.prompt_tokens,
            decode_tokens,
        );
        Some(Self {
            request_index: inputs.request_index,
            planned_context_tokens: inputs.planned_context_tokens,
            prompt_tokens: inputs.prompt_tokens,
            output_tokens: inputs.out_toks.filter(|_| exact),
            output_token_source: inputs
                .output_token_source
                .map_or("unknown", OutputTokenSource::as_str)
                .to_owned(),
            time_to_first_output_ms: ttfo_s * 1000.0,
            ttft_ms: ttft_s * 1000.0,
            generation_ms: derived.generation_ms,
            visible_generation_ms: derived.visible_generation_ms,
            e2e_ms: e2e_s * 1000.0,
            effective_prefill_tok_s: derived.effective_prefill_tok_s,
            decode_tok_s: derived.decode_tok_s,
            mean_inter_token_latency_ms: derived.tpot_ms,
            mean_time_per_output_token_ms: derived.tpot_ms,
            tpot_ms: derived.tpot_ms,
            reasoning_chunks: inputs.reasoning_chunks,
            content_chunks: inputs.content_chunks,
            request_canary: inputs.request_canary,
            controlled_output: inputs.controlled_output,
            visible_content_truncated: inputs.visible_content_truncated,
            cached_tokens: inputs.cached_tokens,
            started_at_ms: inputs.started_at_ms,
            chunk_arrivals_ms: inputs.chunk_arrivals_ms,
            // Transport facts come from the browser after the run: `set_transport`.
            new_connection: None,
            preflight: None,
            client_queue_ms: None,
            ttfo_from_wire_ms: None,
            ttft_from_wire_ms: None,
            e2e_from_wire_ms: None,
            http_protocol: None,
            scheduled_ms: None,
            dispatch_lag_ms: None,
            cap_wait_ms: None,
            buffered_stream: None,
            workload: None,
        })
    }

    /// This row with generation, visible generation, prefill, decode and the three TPOT keys
    /// recomputed from its ms fields the way the producer computed them: each ms value is
    /// inverted to the seconds the producer held ([`seconds_from_ms`]) and the arithmetic is
    /// redone in seconds. Decode uses `output_tokens` when the source is `usage` or `unknown`.
    pub fn recompute_derived(&self) -> Self {
        let ttfo_s = seconds_from_ms(self.time_to_first_output_ms);
        let ttft_s = seconds_from_ms(self.ttft_ms);
        let e2e_s = seconds_from_ms(self.e2e_ms);
        let exact = matches!(self.output_token_source.as_str(), "usage" | "unknown");
        let decode_tokens = self
            .output_tokens
            .filter(|_| exact)
            .map(|tokens| tokens.saturating_sub(1));
        let derived =
            DerivedTimings::from_seconds(ttfo_s, ttft_s, e2e_s, self.prompt_tokens, decode_tokens);
        Self {
            generation_ms: derived.generation_ms,
            visible_generation_ms: derived.visible_generation_ms,
            effective_prefill_tok_s: derived.effective_prefill_tok_s,
            decode_tok_s: derived.decode_tok_s,
            mean_inter_token_latency_ms: derived.tpot_ms,
            mean_time_per_output_token_ms: derived.tpot_ms,
            tpot_ms: derived.tpot_ms,
            ..self.clone()
        }
    }
}

/// The float seconds `s` a producer held when it wrote `ms = s * 1000.0`: `ms / 1000.0`.
///
/// For every `ms` that is such a product, `(ms / 1000.0) * 1000.0 == ms` (checked on 5·10⁷ random
/// products over 30 decades, and on every reference row), so this is a valid inverse; the
/// arithmetic redone from it reproduces the producer's derived values bit for bit on the
/// reference artifact. It need not be the only inverse: about 2% of products have a neighbouring
/// `s` that maps to the same `ms`, and which one the producer held is unknowable from the file;
/// a recomputation can then differ from the producer's value in the last bit.
pub fn seconds_from_ms(ms: f64) -> f64 {
    ms / 1000.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::observe::test_support::*;
    use serde_json::json;
    use serde_json::Value;

    #[test]
    fn row_formulas() {
        let row = RequestTiming::from_seconds(row_inputs()).expect("valid times");
        assert_eq!(row.time_to_first_output_ms, 500.0);
        assert_eq!(row.generation_ms, 1500.0);
        assert_eq!(row.visible_generation_ms, 1000.0);
        assert_eq!(row.effective_prefill_tok_s, Some(200.0));
        assert_eq!(row.decode_tok_s, Some(10.0 / 1.5));
        assert_eq!(row.tpot_ms, Some(150.0));
        assert_eq!(row.mean_inter_token_latency_ms, row.tpot_ms);
        assert_eq!(row.mean_time_per_output_token_ms, row.tpot_ms);
        assert_eq!(row.output_tokens, Some(11));
    }

    #[test]
    fn no_row_when_times_are_impossible() {
        let cases = [
            RowInputs {
                ttft_s: None,
                ..row_inputs()
            },
            RowInputs {
                ttft_s: Some(f64::NAN),
                ..row_inputs()
            },
            RowInputs {
                e2e_s: f64::INFINITY,
                ..row_inputs()
            },
            RowInputs {
                ttft_s: Some(-0.1),
                ttfo_s: None,
                ..row_inputs()
            },
            RowInputs {
                e2e_s: 0.9,
                ..row_inputs()
            },
            RowInputs {
                ttfo_s: Some(1.5),
                ..row_inputs()
            },
            RowInputs {
                ttfo_s: Some(-0.5),
                ..row_inputs()
            },
        ];
        for inputs in cases {
            assert_eq!(
                RequestTiming::from_seconds(inputs.clone()),
                None,
                "{inputs:?}"
            );
        }
    }

    #[test]
    fn ttfo_falls_back_to_ttft() {
        let row = RequestTiming::from_seconds(RowInputs {
            ttfo_s: None,
            ..row_inputs()
        })
        .expect("valid times");
        assert_eq!(row.time_to_first_output_ms, row.ttft_ms);
    }

    #[test]
    fn inexact_counts_and_zero_times_leave_rates_null() {
        let chunks = RequestTiming::from_seconds(RowInputs {
            output_token_source: Some(OutputTokenSource::ContentChunks),
            ..row_inputs()
        })
        .expect("valid times");
        assert_eq!(chunks.output_tokens, None);
        assert_eq!(chunks.output_token_source, "content_chunks");
        assert_eq!((chunks.decode_tok_s, chunks.tpot_ms), (None, None));

        let unknown = RequestTiming::from_seconds(RowInputs {
            output_token_source: None,
            ..row_inputs()
        })
        .expect("valid times");
        assert_eq!(unknown.output_token_source, "unknown");
        assert_eq!(unknown.output_tokens, Some(11), "unknown counts as exact");

        let one_token = RequestTiming::from_seconds(RowInputs {
            out_toks: Some(1),
            ..row_inputs()
        })
        .expect("valid times");
        assert_eq!((one_token.decode_tok_s, one_token.tpot_ms), (None, None));

        let instant = RequestTiming::from_seconds(RowInputs {
            ttfo_s: Some(0.0),
            ttft_s: Some(0.0),
            e2e_s: 0.0,
            ..row_inputs()
        })
        .expect("valid times");
        assert_eq!(instant.effective_prefill_tok_s, None);
        assert_eq!(instant.decode_tok_s, None);
    }

    #[test]
    fn plain_rows_omit_strobe_keys_and_strobe_rows_write_null_cached_tokens() {
        let plain =
            serde_json::to_value(RequestTiming::from_seconds(row_inputs())).expect("serializable");
        assert!(plain.get("cached_tokens").is_none());
        assert!(plain.get("started_at_ms").is_none());
        let strobe = serde_json::to_value(RequestTiming::from_seconds(RowInputs {
            cached_tokens: Some(None),
            started_at_ms: Some(12.5),
            ..row_inputs()
        }))
        .expect("serializable");
        assert_eq!(strobe["cached_tokens"], Value::Null);
        assert_eq!(strobe["started_at_ms"], json!(12.5));
        let back: RequestTiming = serde_json::from_value(strobe).expect("deserializable");
        assert_eq!(back.cached_tokens, Some(None));
    }

    #[test]
    fn generation_is_computed_in_seconds_like_the_producer() {
        // CPython: ttfo = (t1 - start) / 1000; e2e = (end - start) / 1000;
        // (e2e - ttfo) * 1000.0 == 7953.983720001313, while the ms difference
        // e2e * 1000.0 - ttfo * 1000.0 == 7953.9837200013135.
        let (start, t1, end) = (62667.26779408049, 70087.71981679519, 78041.7035367965);
        let stream = observe(
            start,
            &[(t1, vec![content("a"), finish_reason("stop")])],
            end,
        );
        let row = RequestTiming::from_seconds(RowInputs {
            ttfo_s: stream.ttfo_s,
            ttft_s: stream.ttft_s,
            e2e_s: stream.e2e_s,
            ..row_inputs()
        })
        .expect("valid times");
        assert_eq!(row.generation_ms, 7953.983720001313);
    }

    #[test]
    fn seconds_from_ms_inverts_producer_products() {
        // 29.016414840733052 s was written as 29016.414840733054 ms; CPython shows that
        // 29.016414840733056 maps to the same ms, so either is a valid inverse.
        let ms = 29.016414840733052_f64 * 1000.0;
        assert_eq!(ms, 29016.414840733054);
        assert_eq!(seconds_from_ms(ms) * 1000.0, ms);
    }
}
