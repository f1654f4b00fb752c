//! `client.context_calibration`: what the two probes of context calibration measured (the
//! calibration itself is made by [`crate::core::plan::calibration`]).

use serde::{Deserialize, Serialize};

/// One probe: the prompt's length and what the server counted for it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CalibrationProbe {
    /// Characters (bytes: the prompt is ASCII) of the probe's message.
    pub prompt_chars: u64,
    /// The server's `usage.prompt_tokens` for it.
    pub prompt_tokens: u64,
}

/// What the probes measured, as the artifact records it (`client.context_calibration`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ContextCalibration {
    /// strobe's estimate the plan would otherwise use ([`CHARS_PER_TOKEN`](crate::core::plan::tokens::CHARS_PER_TOKEN)).
    pub estimated_chars_per_token: u64,
    /// The server's characters per token on the benchmark's filler (the fit's slope, inverted).
    pub chars_per_token: f64,
    /// Tokens the server counts beyond the message's own (the chat template), from the fit's
    /// intercept; can be slightly negative when the tokenizer merges across the boundary.
    pub overhead_tokens: f64,
    /// The two probes the fit is made from.
    pub probes: Vec<CalibrationProbe>,
}
