//! §9 *Structure and types* and *Counts and population*: the schema, the objects that must be
//! objects, the counts and their sum, and the metric scalars.

use serde_json::{Map, Value};

use super::Checker;
use crate::core::read::validate::report::{RuleId, SCHEMA};
use crate::core::read::validate::values::{as_int, as_number, describe, present, show_opt};

impl Checker {
    pub(super) fn check_structure(&mut self, artifact: &Map<String, Value>) {
        match artifact.get("schema") {
            Some(Value::String(schema)) if schema == SCHEMA => {}
            other => self.push(
                "$.schema",
                RuleId::SchemaMismatch,
                format!(
                    "schema must be \"{SCHEMA}\", found {}; this is not a capacity benchmark artifact",
                    show_opt(other)
                ),
            ),
        }
        for (key, rule) in [
            ("metrics", RuleId::MetricsNotObject),
            ("serve_flags", RuleId::ServeFlagsNotObject),
        ] {
            match artifact.get(key) {
                Some(Value::Object(_)) => {}
                Some(other) => self.push(
                    format!("$.{key}"),
                    rule,
                    format!("{key} must be an object, found {}", describe(other)),
                ),
                None => self.push(
                    format!("$.{key}"),
                    rule,
                    format!("{key} is missing; every generation records it as an object"),
                ),
            }
        }
    }

    pub(super) fn check_counts(&mut self, artifact: &Map<String, Value>) {
        let requests = self.int_field(artifact, "$", "requests", 1, RuleId::CountField);
        let completed = self.int_field(artifact, "$", "completed", 0, RuleId::CountField);
        let failed = if self.generation.has_failure_counts() || artifact.contains_key("failed") {
            self.int_field(artifact, "$", "failed", 0, RuleId::CountField)
        } else {
            None
        };
        // A converted file of an open-loop run or of AIPerf's records alone knows no concurrency.
        if !(self.converted && artifact.get("concurrency") == Some(&Value::Null)) {
            self.int_field(artifact, "$", "concurrency", 1, RuleId::CountField);
        }
        if let (Some(requests), Some(completed), Some(failed)) = (requests, completed, failed) {
            if completed + failed != requests {
                self.push(
                    "$.completed",
                    RuleId::CountsAddUp,
                    format!(
                        "completed ({completed}) + failed ({failed}) = {} but requests is {requests}; \
                         every request must end as a result or a failure",
                        completed + failed
                    ),
                );
            }
        }
        if let Some(value) = present(artifact, "performance_eligible") {
            if !value.is_boolean() {
                self.push(
                    "$.performance_eligible",
                    RuleId::PerformanceEligibleType,
                    format!(
                        "performance_eligible must be true, false or null, found {}",
                        describe(value)
                    ),
                );
            }
        }
        for (key, minimum) in [
            ("context_tokens", 0),
            ("max_context_tokens", 1),
            ("max_tokens", 1),
            ("response_words", 0),
        ] {
            self.optional_int_field(artifact, "$", key, minimum, RuleId::PlanIntegerField);
        }
        if let Some(seed) = present(artifact, "context_seed") {
            if as_int(seed).is_none() {
                self.push(
                    "$.context_seed",
                    RuleId::PlanIntegerField,
                    format!(
                        "context_seed must be an integer or null, found {}",
                        describe(seed)
                    ),
                );
            }
        }
        match artifact.get("wall_clock_ms") {
            None if !self.generation.has_timings() => {}
            None => self.push(
                "$.wall_clock_ms",
                RuleId::WallClockMs,
                "wall_clock_ms is missing; artifacts with timing rows record it".to_string(),
            ),
            Some(value) => match as_number(value) {
                Some(wall) if wall >= 0.0 => {}
                _ => self.push(
                    "$.wall_clock_ms",
                    RuleId::WallClockMs,
                    format!(
                        "wall_clock_ms must be a finite number ≥ 0, found {}",
                        describe(value)
                    ),
                ),
            },
        }
    }

    pub(super) fn check_metric_scalars(&mut self, artifact: &Map<String, Value>) {
        let Some(metrics) = artifact.get("metrics").and_then(Value::as_object) else {
            return;
        };
        if let Some(value) = present(metrics, "output_tokens") {
            if as_int(value).is_none_or(|tokens| tokens < 0) {
                self.push(
                    "$.metrics.output_tokens",
                    RuleId::OutputTokensSum,
                    format!(
                        "metrics.output_tokens must be an integer ≥ 0 or null, found {}",
                        describe(value)
                    ),
                );
            }
        }
        if let Some(value) = present(metrics, "throughput_tok_s") {
            if !as_number(value).is_some_and(|rate| rate >= 0.0) {
                self.push(
                    "$.metrics.throughput_tok_s",
                    RuleId::ThroughputValue,
                    format!(
                        "throughput_tok_s must be a finite number ≥ 0 or null, found {}",
                        describe(value)
                    ),
                );
            }
        }
    }
}
