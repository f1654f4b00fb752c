//! How many characters strobe takes a token to be, before any calibration: the rule that turns
//! token budgets into prompt lengths, shared by the plan's parts (a workload's budgets, the
//! calibration's probes) and the prompts written from it, so it sits below all of them.

/// Characters per estimated token, the rule that turns token budgets into prompt lengths.
/// Budgets are integers far below 2^51, so `int(tokens × 3.0)` is exactly `tokens × 3`.
pub const CHARS_PER_TOKEN: u64 = 3;
