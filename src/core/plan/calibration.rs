//! Context calibration (`context_calibration=on`): two unmeasured probe prompts of the benchmark's
//! own filler measure how many of the server's tokens a character takes, and the plan's prompt
//! budgets are rescaled so every prompt lands on its planned context in the server's tokens
//! instead of strobe's estimate of [`CHARS_PER_TOKEN`] characters per token
//! (docs/guide/metrics.md, *Context calibration*).
//!
//! The server's count is modelled as `prompt_tokens = overhead + characters / chars_per_token`:
//! the overhead is what the chat template adds around the message (role markers, a BOS token),
//! the slope is the tokenizer's rate on the filler. Two probes of different sizes fix both.

use serde_json::Value;
use thiserror::Error;

use crate::core::plan::tokens::CHARS_PER_TOKEN;
use crate::core::schema::calibration::{CalibrationProbe, ContextCalibration};

/// The first probe's budget in estimated tokens (192 characters): small enough to fit any
/// context window a run can plan for, large enough that the filler dominates the template.
pub const FIRST_PROBE_BUDGET_TOKENS: u64 = 64;

/// The most server tokens the second probe aims at: enough characters to measure the rate to a
/// fraction of a percent, little prefill work for the server.
pub const SECOND_PROBE_MOST_TOKENS: u64 = 4_096;

/// The second probe is at least this many times the first's size, so the two points are far
/// enough apart for the slope.
pub const SECOND_PROBE_LEAST_FACTOR: u64 = 4;

/// The range of characters per token a real tokenizer gives on ASCII code-like text; a
/// measurement outside it means the server's count is not a token count.
pub const PLAUSIBLE_CHARS_PER_TOKEN: (f64, f64) = (0.5, 16.0);

/// Why a calibration could not be made. The run does not start: the user asked for prompts
/// in the server's tokens and would otherwise get strobe's estimate without knowing.
#[derive(Clone, Debug, PartialEq, Error)]
pub enum CalibrationError {
    /// A probe request failed.
    #[error(
        "context calibration failed: probe {probe} ({prompt_chars} characters, max_tokens 1) \
         failed: {reason}. Fix the server or turn context_calibration off"
    )]
    ProbeFailed {
        /// 1 or 2.
        probe: u64,
        /// The probe's length.
        prompt_chars: u64,
        /// The request's failure, as a row would record it.
        reason: String,
    },
    /// The answer carried no usable `usage.prompt_tokens`.
    #[error(
        "context calibration failed: the server's answer to probe {probe} has no \
         usage.prompt_tokens, so its tokens cannot be counted. Turn context_calibration off: \
         prompts are then sized at strobe's estimate of 3 characters per token"
    )]
    NoUsage {
        /// 1 or 2.
        probe: u64,
    },
    /// The count did not grow with the prompt.
    #[error(
        "context calibration failed: the server counted {} prompt tokens for {} characters and \
         {} for {} characters; a count that does not grow with the prompt cannot size one. Turn \
         context_calibration off",
        .first.prompt_tokens, .first.prompt_chars, .second.prompt_tokens, .second.prompt_chars
    )]
    NotGrowing {
        /// The smaller probe.
        first: CalibrationProbe,
        /// The larger probe.
        second: CalibrationProbe,
    },
    /// The rate is outside what any tokenizer gives.
    #[error(
        "context calibration failed: the server's counts ({} tokens for {} characters, {} for \
         {}) mean {chars_per_token:.2} characters per token, outside the {}–{} any tokenizer \
         gives on this text; its usage.prompt_tokens is not a token count. Turn \
         context_calibration off",
        .first.prompt_tokens, .first.prompt_chars, .second.prompt_tokens, .second.prompt_chars,
        PLAUSIBLE_CHARS_PER_TOKEN.0, PLAUSIBLE_CHARS_PER_TOKEN.1
    )]
    Implausible {
        /// The smaller probe.
        first: CalibrationProbe,
        /// The larger probe.
        second: CalibrationProbe,
        /// What the two imply.
        chars_per_token: f64,
    },
}

/// The server's `usage.prompt_tokens` in a probe's answer (the stream's last `usage`).
pub fn probe_prompt_tokens(probe: u64, usage: Option<&Value>) -> Result<u64, CalibrationError> {
    usage
        .and_then(|usage| usage.get("prompt_tokens"))
        .and_then(Value::as_u64)
        .filter(|&tokens| tokens > 0)
        .ok_or(CalibrationError::NoUsage { probe })
}

/// The second probe's budget in estimated tokens, from the first probe: aimed at the plan's
/// largest context (at most [`SECOND_PROBE_MOST_TOKENS`]) in the server's tokens, at least
/// [`SECOND_PROBE_LEAST_FACTOR`] times the first. The first probe's own ratio counts the
/// template's tokens as the text's, so it overstates the tokens per character and the second
/// probe does not overshoot its aim.
pub fn second_probe_budget(first: CalibrationProbe, largest_context_tokens: u64) -> u64 {
    let aim_tokens = largest_context_tokens.min(SECOND_PROBE_MOST_TOKENS) as f64;
    let chars_per_token_at_least = first.prompt_chars as f64 / first.prompt_tokens.max(1) as f64;
    let budget = (aim_tokens * chars_per_token_at_least / CHARS_PER_TOKEN as f64).floor() as u64;
    budget.max(SECOND_PROBE_LEAST_FACTOR * FIRST_PROBE_BUDGET_TOKENS)
}

impl ContextCalibration {
    /// The line through the two probes, checked.
    pub fn fit(
        first: CalibrationProbe,
        second: CalibrationProbe,
    ) -> Result<Self, CalibrationError> {
        let (first, second) = if first.prompt_chars <= second.prompt_chars {
            (first, second)
        } else {
            (second, first)
        };
        if second.prompt_chars == first.prompt_chars || second.prompt_tokens <= first.prompt_tokens
        {
            return Err(CalibrationError::NotGrowing { first, second });
        }
        let tokens_per_char = (second.prompt_tokens - first.prompt_tokens) as f64
            / (second.prompt_chars - first.prompt_chars) as f64;
        let chars_per_token = 1.0 / tokens_per_char;
        let (least, most) = PLAUSIBLE_CHARS_PER_TOKEN;
        if !(least..=most).contains(&chars_per_token) {
            return Err(CalibrationError::Implausible {
                first,
                second,
                chars_per_token,
            });
        }
        let overhead_tokens =
            first.prompt_tokens as f64 - first.prompt_chars as f64 * tokens_per_char;
        Ok(Self {
            estimated_chars_per_token: CHARS_PER_TOKEN,
            chars_per_token,
            overhead_tokens,
            probes: vec![first, second],
        })
    }

    /// The budget, in strobe's estimated tokens, whose prompt the server counts as
    /// `context_tokens` tokens: `(context − overhead) × chars_per_token / 3`, rounded; at least
    /// 1 (a budget too small for the request's text fails that request with the reason, as an
    /// uncalibrated one does).
    pub fn prompt_budget(&self, context_tokens: u64) -> u64 {
        let message_tokens = context_tokens as f64 - self.overhead_tokens;
        let chars = message_tokens * self.chars_per_token;
        let budget = (chars / self.estimated_chars_per_token.max(1) as f64).round();
        if budget.is_finite() && budget >= 1.0 {
            budget as u64
        } else {
            1
        }
    }

    /// The shared prefix's budget for `tokens` of the server's: the text's rate alone (the
    /// template's tokens belong to the whole prompt, not its prefix).
    pub fn prefix_budget(&self, tokens: u64) -> u64 {
        if tokens == 0 {
            return 0;
        }
        let chars = tokens as f64 * self.chars_per_token;
        ((chars / self.estimated_chars_per_token.max(1) as f64).round() as u64).max(1)
    }

    /// How much longer (above 1) or shorter the calibrated prompts are than estimated ones.
    pub fn scale(&self) -> f64 {
        self.chars_per_token / self.estimated_chars_per_token.max(1) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::config::choices::PromptCacheMode;
    use crate::core::config::settings::RunConfig;
    use crate::core::plan::RunPlan;
    use crate::core::prompt::{calibration_probe_prompt, PromptSpec};
    use serde_json::json;

    fn probe(prompt_chars: u64, prompt_tokens: u64) -> CalibrationProbe {
        CalibrationProbe {
            prompt_chars,
            prompt_tokens,
        }
    }

    #[test]
    fn probes_look_like_the_median_request_but_share_no_prefix_with_any() {
        let config = RunConfig {
            base_url: "http://127.0.0.1:8000/v1".to_owned(),
            model: "m".to_owned(),
            requests: 41,
            context_tokens: 1_024,
            prompt_cache_mode: PromptCacheMode::Shared,
            shared_prefix_tokens: 300,
            ..RunConfig::default()
        };
        let plan = RunPlan::new(&config, None).unwrap();
        let spec = PromptSpec::for_plan(&plan);
        for (index, budget) in [(1, 64), (2, 1_000)] {
            let probe = calibration_probe_prompt(&plan, index, budget);
            assert_eq!(probe.len() as u64, budget * 3);
            assert!(probe.is_ascii());
            let header = format!("# context calibration probe {index}\n");
            assert!(probe.starts_with(&header));
            // The median request's filler and instruction, without the shared prefix.
            assert!(
                probe[header.len()..].starts_with("\ndef helper_20():"),
                "{probe}"
            );
            assert!(probe.ends_with(&spec.tail(20)));
            let measured = spec.build(20, budget).unwrap();
            assert!(
                !measured.starts_with('#'),
                "a shared-mode prompt opens with the prefix"
            );
        }
        // A budget smaller than the instruction still gives header and instruction.
        let config = RunConfig {
            response_words: 64,
            ..config
        };
        let plan = RunPlan::new(&config, None).unwrap();
        let tiny = calibration_probe_prompt(&plan, 1, 10);
        assert!(tiny.len() > 30 && tiny.contains("repetitions of the lowercase word code"));
    }

    #[test]
    fn a_line_through_two_probes_gives_the_rate_and_the_template() {
        // 1.5 characters per token plus 10 tokens of template: 192 → 138, 1536 → 1034.
        let calibration = ContextCalibration::fit(probe(1536, 1034), probe(192, 138)).unwrap();
        assert_eq!(calibration.probes, [probe(192, 138), probe(1536, 1034)]);
        assert!((calibration.chars_per_token - 1.5).abs() < 1e-12);
        assert!((calibration.overhead_tokens - 10.0).abs() < 1e-9);
        assert_eq!(calibration.estimated_chars_per_token, 3);
        assert!((calibration.scale() - 0.5).abs() < 1e-12);
        // 1024 server tokens: (1024 − 10) × 1.5 = 1521 characters = 507 estimated tokens.
        assert_eq!(calibration.prompt_budget(1024), 507);
        // The prefix is text alone: 300 tokens × 1.5 / 3.
        assert_eq!(calibration.prefix_budget(300), 150);
        assert_eq!(calibration.prefix_budget(0), 0);
        // A context smaller than the template still asks for a prompt (which then fails as
        // too small, with the reason).
        assert_eq!(calibration.prompt_budget(5), 1);
    }

    #[test]
    fn a_count_that_does_not_grow_or_is_not_a_token_count_is_refused() {
        let error = ContextCalibration::fit(probe(192, 50), probe(1536, 50)).unwrap_err();
        assert!(matches!(error, CalibrationError::NotGrowing { .. }));
        let message = error.to_string();
        assert!(
            message.contains("50 prompt tokens for 192 characters"),
            "{message}"
        );
        assert!(
            message.contains("Turn context_calibration off"),
            "{message}"
        );
        assert!(matches!(
            ContextCalibration::fit(probe(192, 60), probe(192, 60)),
            Err(CalibrationError::NotGrowing { .. })
        ));
        // One token per 100 characters is no tokenizer.
        let error = ContextCalibration::fit(probe(200, 2), probe(2_200, 22)).unwrap_err();
        let CalibrationError::Implausible {
            chars_per_token, ..
        } = error
        else {
            panic!("{error:?}");
        };
        assert!((chars_per_token - 100.0).abs() < 1e-9);
        assert!(error.to_string().contains("100.00 characters per token"));
        // Four tokens per character neither.
        assert!(matches!(
            ContextCalibration::fit(probe(100, 400), probe(200, 800)),
            Err(CalibrationError::Implausible { .. })
        ));
    }

    #[test]
    fn the_probe_answer_must_count_prompt_tokens() {
        assert_eq!(
            probe_prompt_tokens(
                1,
                Some(&json!({"prompt_tokens": 138, "completion_tokens": 1}))
            ),
            Ok(138)
        );
        for usage in [
            None,
            Some(json!({"completion_tokens": 1})),
            Some(json!({"prompt_tokens": 0})),
            Some(json!({"prompt_tokens": "138"})),
            Some(json!({"prompt_tokens": -3})),
            Some(json!({"prompt_tokens": 12.5})),
        ] {
            assert_eq!(
                probe_prompt_tokens(2, usage.as_ref()),
                Err(CalibrationError::NoUsage { probe: 2 }),
                "{usage:?}"
            );
        }
        assert!(CalibrationError::NoUsage { probe: 2 }
            .to_string()
            .contains("3 characters per token"));
    }

    #[test]
    fn the_second_probe_aims_at_the_largest_context_without_overshooting() {
        // 192 characters counted as 138 tokens: at most 1.39 characters per token.
        let first = probe(192, 138);
        // 1024 tokens × 192/138 / 3 = 474.9 → 474 estimated tokens, 1422 characters; at the
        // true 1.5 per token plus 10 that is 958 tokens, under the aim.
        assert_eq!(second_probe_budget(first, 1_024), 474);
        // Aimed at most at SECOND_PROBE_MOST_TOKENS.
        assert_eq!(
            second_probe_budget(first, 100_000),
            second_probe_budget(first, SECOND_PROBE_MOST_TOKENS)
        );
        // A small plan still gets a probe four times the first.
        assert_eq!(second_probe_budget(first, 40), 256);
        // strobe's estimate exactly: aims at the context itself.
        assert_eq!(second_probe_budget(probe(192, 64), 2_048), 2_048);
    }

    #[test]
    fn a_calibration_round_trips_through_json() {
        let calibration = ContextCalibration::fit(probe(192, 138), probe(1536, 1034)).unwrap();
        let text = serde_json::to_string(&calibration).unwrap();
        assert!(text.contains("\"chars_per_token\":1.5"), "{text}");
        assert_eq!(
            serde_json::from_str::<ContextCalibration>(&text).unwrap(),
            calibration
        );
    }
}
