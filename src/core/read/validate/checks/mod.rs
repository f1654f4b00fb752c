//! The §9 rules as one [`Checker`] walking a parsed artifact; each group of rules lives in a
//! file of its own, in the spec's order, and [`Checker::check_artifact`] runs them in that order.

use std::collections::HashSet;

use serde_json::{Map, Value};

use crate::core::read::validate::report::{
    detect_generation, Generation, Report, RuleId, Violation,
};
use crate::core::read::validate::values::{as_int, child_path, describe, present, show_opt};

mod additions;
mod contract;
mod distributions;
mod modern;
mod rows;
mod server_metrics;
mod structure;
mod time;
mod workload;

pub(super) fn run_checks(value: &Value, suppressed: &HashSet<String>) -> Report {
    let generation = detect_generation(value);
    let mut checker = Checker {
        generation,
        converted: is_converted(value),
        violations: Vec::new(),
    };
    match value.as_object() {
        Some(artifact) => checker.check_artifact(artifact),
        None => checker.push(
            "$",
            RuleId::NotAnObject,
            format!(
                "an artifact must be a JSON object, but this is {}",
                describe(value)
            ),
        ),
    }
    let mut violations = checker.violations;
    if !suppressed.is_empty() {
        // A NaN token already has its own violation; a type error at the same spot is noise.
        violations.retain(|violation| !suppressed.contains(&violation.path));
    }
    Report::from_violations(generation, violations)
}

/// Top-level facts the row checks need, read once.
struct RowContext {
    canaries: Option<bool>,
    policy: Option<String>,
    policy_valid: bool,
    response_words: Option<i128>,
}

struct Checker {
    generation: Generation,
    /// A file `strobe-artifact convert` wrote from another tool's results: what that tool
    /// cannot know (engine, prompt cache mode, sampling, each row's planned context and chunk
    /// counts, and a TTFT it did not record) may be null (docs/spec/converted.md).
    converted: bool,
    violations: Vec<Violation>,
}

pub use crate::core::schema::generation::is_converted;

pub(super) const TIMING_MS_FIELDS: [&str; 10] = [
    "time_to_first_output_ms",
    "ttft_ms",
    "generation_ms",
    "visible_generation_ms",
    "e2e_ms",
    "effective_prefill_tok_s",
    "decode_tok_s",
    "mean_inter_token_latency_ms",
    "mean_time_per_output_token_ms",
    "tpot_ms",
];

pub(super) const FAILURE_CLASSES: [&str; 5] = [
    "request_error",
    "stream_validation_failed",
    "request_canary_failed",
    "controlled_output_failed",
    "runner_error",
];

/// Distribution families checked by report.py, with their unit suffix (§7.1 key naming).
pub(super) const DISTRIBUTION_FAMILIES: [(&str, &str); 7] = [
    ("ttft", "_ms"),
    ("e2e", "_ms"),
    ("tpot", "_ms"),
    ("decode_tok_s", ""),
    ("effective_prefill_tok_s", ""),
    ("prompt_tokens", ""),
    ("completion_tokens", ""),
];

pub(super) const ORDERED_STATISTICS: [&str; 8] =
    ["min", "p25", "p50", "p75", "p90", "p95", "p99", "max"];

impl Checker {
    pub(super) fn push(&mut self, path: impl Into<String>, rule: RuleId, message: String) {
        self.violations.push(Violation {
            path: path.into(),
            rule,
            message,
        });
    }

    pub(super) fn check_artifact(&mut self, artifact: &Map<String, Value>) {
        self.check_structure(artifact);
        self.check_counts(artifact);
        if self.generation == Generation::Modern {
            self.check_modern_fields(artifact);
        }
        match artifact.get("sampling") {
            Some(Value::Null) if self.converted => {}
            Some(sampling) => self.check_sampling(sampling),
            None => {}
        }
        // Also checks controlled_output_policy, for every generation.
        let context = self.row_context(artifact);
        let rows = self.check_timing_rows(artifact, &context);
        let failure_indexes = self.check_failures(artifact);
        if let Some(rows) = rows {
            self.check_index_coverage(artifact, rows, &failure_indexes);
            self.check_output_token_sum(artifact, rows);
        }
        self.check_metric_scalars(artifact);
        self.check_time(artifact);
        self.check_identifiers(artifact);
        self.check_repeat(artifact);
        self.check_workload(artifact);
        self.check_server_metrics(artifact);
        self.check_prefix_cache_reset(artifact);
        self.check_distributions(artifact);
        self.check_context_within_max(artifact);
    }

    /// Checks an integer field with a minimum; returns its value when well-formed.
    pub(super) fn int_field(
        &mut self,
        map: &Map<String, Value>,
        base: &str,
        key: &str,
        minimum: i128,
        rule: RuleId,
    ) -> Option<i128> {
        let path = child_path(base, key);
        match map.get(key) {
            None => {
                self.push(
                    path,
                    rule,
                    format!("{key} is missing; it must be an integer ≥ {minimum}"),
                );
                None
            }
            Some(value) => match as_int(value) {
                Some(number) if number >= minimum => Some(number),
                Some(number) => {
                    self.push(
                        path,
                        rule,
                        format!("{key} must be ≥ {minimum}, found {number}"),
                    );
                    None
                }
                None => {
                    self.push(
                        path,
                        rule,
                        format!(
                            "{key} must be an integer ≥ {minimum}, found {}",
                            describe(value)
                        ),
                    );
                    None
                }
            },
        }
    }

    /// Like [`Checker::int_field`] but absent and null are allowed.
    pub(super) fn optional_int_field(
        &mut self,
        map: &Map<String, Value>,
        base: &str,
        key: &str,
        minimum: i128,
        rule: RuleId,
    ) -> Option<i128> {
        present(map, key)?;
        self.int_field(map, base, key, minimum, rule)
    }

    /// A bool field of a controlled-output object; `Some(None)` is an allowed null.
    pub(super) fn bool_field(
        &mut self,
        map: &Map<String, Value>,
        base: &str,
        key: &str,
        nullable: bool,
    ) -> Option<Option<bool>> {
        match map.get(key) {
            Some(Value::Bool(flag)) => Some(Some(*flag)),
            Some(Value::Null) if nullable => Some(None),
            other => {
                let allowed = if nullable {
                    "true, false or null"
                } else {
                    "true or false"
                };
                self.push(
                    child_path(base, key),
                    RuleId::ControlledOutputShape,
                    format!("{key} must be {allowed}, found {}", show_opt(other)),
                );
                None
            }
        }
    }
}
