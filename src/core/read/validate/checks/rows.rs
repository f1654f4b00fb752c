//! §9 *Timing rows*: every row's types, order of times and counts; the failures; index coverage
//! of rows and failures; the output-token sum.

use std::collections::HashMap;

use serde_json::{Map, Value};

use super::{Checker, RowContext};
use crate::core::read::validate::checks::FAILURE_CLASSES;
use crate::core::read::validate::checks::TIMING_MS_FIELDS;
use crate::core::read::validate::report::{Generation, RuleId};
use crate::core::read::validate::values::{
    as_int, as_number, child_path, describe, index_path, present, show, show_opt,
};

impl Checker {
    /// Reads (and checks) the top-level fields that govern row canaries and controlled output.
    pub(super) fn row_context(&mut self, artifact: &Map<String, Value>) -> RowContext {
        let policy_value = artifact.get("controlled_output_policy");
        let (policy, policy_valid) = match policy_value {
            None | Some(Value::Null) => (None, true),
            Some(Value::String(text)) if text == "observe" || text == "strict" => {
                (Some(text.clone()), true)
            }
            Some(other) => {
                self.push(
                    "$.controlled_output_policy",
                    RuleId::ControlledOutputPolicy,
                    format!("controlled_output_policy must be null, \"observe\" or \"strict\", found {}", show(other)),
                );
                (None, false)
            }
        };
        let response_words = match present(artifact, "response_words") {
            None => Some(0),
            Some(value) => as_int(value).filter(|words| *words >= 0),
        };
        let canaries = match artifact.get("request_canaries") {
            None | Some(Value::Null) => Some(false),
            Some(Value::Bool(flag)) => Some(*flag),
            Some(_) => None,
        };
        RowContext {
            canaries,
            policy,
            policy_valid,
            response_words,
        }
    }

    /// Checks `request_timings`; returns the rows when it is an array.
    pub(super) fn check_timing_rows<'a>(
        &mut self,
        artifact: &'a Map<String, Value>,
        context: &RowContext,
    ) -> Option<&'a [Value]> {
        let rows = match artifact.get("request_timings") {
            None => {
                if self.generation == Generation::Modern {
                    self.push(
                        "$.request_timings",
                        RuleId::TimingRowsShape,
                        "request_timings is missing; modern artifacts always record it (an empty array when nothing completed)".to_string(),
                    );
                }
                return None;
            }
            Some(Value::Array(rows)) => rows.as_slice(),
            Some(other) => {
                self.push(
                    "$.request_timings",
                    RuleId::TimingRowsShape,
                    format!(
                        "request_timings must be an array, found {}",
                        describe(other)
                    ),
                );
                return None;
            }
        };
        if let Some(completed) = artifact.get("completed").and_then(as_int) {
            if rows.len() as i128 != completed {
                self.push(
                    "$.request_timings",
                    RuleId::TimingRowCount,
                    format!(
                        "request_timings has {} rows but completed is {completed}; every completed request needs exactly one row",
                        rows.len()
                    ),
                );
            }
        }
        for (position, row) in rows.iter().enumerate() {
            let path = index_path("$.request_timings", position);
            match row.as_object() {
                Some(fields) => {
                    self.check_row(&path, fields);
                    self.check_row_canary(&path, fields, context);
                    self.check_row_controlled_output(&path, fields, context);
                }
                None => self.push(
                    path,
                    RuleId::TimingRowsShape,
                    format!("each timing row must be an object, found {}", describe(row)),
                ),
            }
        }
        Some(rows)
    }

    pub(super) fn check_row(&mut self, path: &str, row: &Map<String, Value>) {
        let modern = self.generation == Generation::Modern;
        self.int_field(row, path, "request_index", 0, RuleId::RowIntegerField);
        match row.get("prompt_tokens") {
            None => self.push(
                child_path(path, "prompt_tokens"),
                RuleId::RowIntegerField,
                "prompt_tokens is missing; it must be an integer ≥ 0 (or null when the server reported no usage)".to_string(),
            ),
            Some(Value::Null) => {}
            Some(_) => {
                self.int_field(row, path, "prompt_tokens", 0, RuleId::RowIntegerField);
            }
        }
        for key in [
            "planned_context_tokens",
            "content_chunks",
            "reasoning_chunks",
        ] {
            if (modern && !self.converted) || present(row, key).is_some() {
                self.int_field(row, path, key, 0, RuleId::RowIntegerField);
            }
        }
        self.check_row_output_tokens(path, row);

        // A converted file's TTFT may be null: the tool did not record one (vLLM).
        let mut required = if self.converted {
            vec!["e2e_ms"]
        } else {
            vec!["ttft_ms", "e2e_ms"]
        };
        if modern {
            required.push("time_to_first_output_ms");
        }
        let mut values: HashMap<&str, f64> = HashMap::new();
        for key in TIMING_MS_FIELDS {
            let field_path = child_path(path, key);
            match row.get(key) {
                None | Some(Value::Null) => {
                    if required.contains(&key) {
                        self.push(
                            field_path,
                            RuleId::RowTimingValue,
                            format!(
                                "{key} is {}; it must be a finite number ≥ 0",
                                show_opt(row.get(key))
                            ),
                        );
                    }
                }
                Some(value) => match as_number(value) {
                    Some(number) if number >= 0.0 => {
                        values.insert(key, number);
                    }
                    _ => self.push(
                        field_path,
                        RuleId::RowTimingValue,
                        format!(
                            "{key} must be a finite number ≥ 0, found {}",
                            describe(value)
                        ),
                    ),
                },
            }
        }
        let ttft = values.get("ttft_ms").copied();
        let e2e = values.get("e2e_ms").copied();
        if let (Some(ttfo), Some(ttft)) = (values.get("time_to_first_output_ms").copied(), ttft) {
            if ttfo > ttft {
                self.push(
                    child_path(path, "time_to_first_output_ms"),
                    RuleId::TimingOrder,
                    format!("time_to_first_output_ms ({ttfo}) exceeds ttft_ms ({ttft}); the first output cannot come after the first content"),
                );
            }
        }
        // Without a TTFT (a converted file's vLLM rows), the first output still precedes the end.
        if let (None, Some(ttfo), Some(e2e)) =
            (ttft, values.get("time_to_first_output_ms").copied(), e2e)
        {
            if ttfo > e2e {
                self.push(
                    child_path(path, "time_to_first_output_ms"),
                    RuleId::TimingOrder,
                    format!("time_to_first_output_ms ({ttfo}) exceeds e2e_ms ({e2e}); the first output cannot arrive after the response ended"),
                );
            }
        }
        if let (Some(ttft), Some(e2e)) = (ttft, e2e) {
            if ttft > e2e {
                self.push(
                    child_path(path, "ttft_ms"),
                    RuleId::TimingOrder,
                    format!("ttft_ms ({ttft}) exceeds e2e_ms ({e2e}); the first token cannot arrive after the response ended"),
                );
            }
        }
    }

    /// §5: `output_tokens` is the usage count (≥ 1 for a completed request) when the source is
    /// usage or unrecorded, and null for content-chunk or unknown sources.
    pub(super) fn check_row_output_tokens(&mut self, path: &str, row: &Map<String, Value>) {
        let source_path = child_path(path, "output_token_source");
        let tokens_path = child_path(path, "output_tokens");
        let exact = match row.get("output_token_source") {
            None | Some(Value::Null) => true,
            Some(Value::String(source)) if source == "usage" => true,
            Some(Value::String(source)) if source == "content_chunks" || source == "unknown" => {
                false
            }
            Some(other) => {
                self.push(
                    source_path,
                    RuleId::RowOutputTokens,
                    format!("output_token_source must be \"usage\", \"content_chunks\", \"unknown\" or null, found {}", show(other)),
                );
                return;
            }
        };
        let tokens = row.get("output_tokens");
        if exact {
            match tokens.and_then(as_int) {
                Some(count) if count >= 1 => {}
                _ => self.push(
                    tokens_path,
                    RuleId::RowOutputTokens,
                    format!(
                        "output_tokens must be an integer ≥ 1 for a completed request counted by usage, found {}",
                        show_opt(tokens)
                    ),
                ),
            }
        } else if !matches!(tokens, None | Some(Value::Null)) {
            self.push(
                tokens_path,
                RuleId::RowOutputTokens,
                format!(
                    "output_tokens must be null when output_token_source is {} (only usage counts are exact), found {}",
                    show_opt(row.get("output_token_source")),
                    show_opt(tokens)
                ),
            );
        }
    }

    /// Checks `failures`; returns `(position, request_index)` of every well-formed entry.
    pub(super) fn check_failures(&mut self, artifact: &Map<String, Value>) -> Vec<(usize, i128)> {
        let mut indexes = Vec::new();
        let failures = match artifact.get("failures") {
            None => return indexes,
            Some(Value::Array(failures)) => failures,
            Some(other) => {
                self.push(
                    "$.failures",
                    RuleId::FailureShape,
                    format!("failures must be an array, found {}", describe(other)),
                );
                return indexes;
            }
        };
        for (position, failure) in failures.iter().enumerate() {
            let path = index_path("$.failures", position);
            let Some(fields) = failure.as_object() else {
                self.push(
                    path,
                    RuleId::FailureShape,
                    format!(
                        "each failure must be an object, found {}",
                        describe(failure)
                    ),
                );
                continue;
            };
            if let Some(index) =
                self.int_field(fields, &path, "request_index", 0, RuleId::FailureShape)
            {
                indexes.push((position, index));
            }
            if let Some(class) = fields.get("failure_class") {
                if !class
                    .as_str()
                    .is_some_and(|text| FAILURE_CLASSES.contains(&text))
                {
                    self.push(
                        child_path(&path, "failure_class"),
                        RuleId::FailureShape,
                        format!(
                            "failure_class must be one of {}, found {}",
                            FAILURE_CLASSES.join(", "),
                            show(class)
                        ),
                    );
                }
            }
            for key in ["error_type", "error_message"] {
                if let Some(value) = fields.get(key) {
                    if !value.is_string() {
                        self.push(
                            child_path(&path, key),
                            RuleId::FailureShape,
                            format!("{key} must be a string, found {}", describe(value)),
                        );
                    }
                }
            }
            for key in ["error_message_truncated", "response_received"] {
                if let Some(value) = fields.get(key) {
                    if !value.is_boolean() {
                        self.push(
                            child_path(&path, key),
                            RuleId::FailureShape,
                            format!("{key} must be true or false, found {}", describe(value)),
                        );
                    }
                }
            }
            if let Some(value) = fields.get("performance_eligible") {
                if value != &Value::Bool(false) {
                    self.push(
                        child_path(&path, "performance_eligible"),
                        RuleId::FailureShape,
                        format!("a failure is never performance eligible; performance_eligible must be false, found {}", show(value)),
                    );
                }
            }
            if let Some(value) = fields.get("elapsed_ms") {
                if !as_number(value).is_some_and(|elapsed| elapsed >= 0.0) {
                    self.push(
                        child_path(&path, "elapsed_ms"),
                        RuleId::FailureShape,
                        format!(
                            "elapsed_ms must be a finite number ≥ 0, found {}",
                            describe(value)
                        ),
                    );
                }
            }
            if present(fields, "planned_context_tokens").is_some() {
                self.int_field(
                    fields,
                    &path,
                    "planned_context_tokens",
                    0,
                    RuleId::FailureShape,
                );
            }
            for key in ["response_timing", "response_metadata"] {
                if let Some(value) = present(fields, key) {
                    if !value.is_object() {
                        self.push(
                            child_path(&path, key),
                            RuleId::FailureShape,
                            format!("{key} must be an object or null, found {}", describe(value)),
                        );
                    }
                }
            }
        }
        indexes
    }

    pub(super) fn check_index_coverage(
        &mut self,
        artifact: &Map<String, Value>,
        rows: &[Value],
        failures: &[(usize, i128)],
    ) {
        let row_indexes: Vec<(usize, i128)> = rows
            .iter()
            .enumerate()
            .filter_map(|(position, row)| {
                row.get("request_index")
                    .and_then(as_int)
                    .filter(|i| *i >= 0)
                    .map(|i| (position, i))
            })
            .collect();
        let failed = artifact.get("failed").and_then(as_int).unwrap_or(0);
        let zero_failure_form = failures.is_empty() && failed == 0;
        let (upper, upper_name) = if zero_failure_form {
            (artifact.get("completed").and_then(as_int), "completed")
        } else {
            (artifact.get("requests").and_then(as_int), "requests")
        };
        let mut first_seen: HashMap<i128, String> =
            HashMap::with_capacity(row_indexes.len() + failures.len());
        let labelled = row_indexes
            .iter()
            .map(|(position, index)| (index_path("$.request_timings", *position), *index))
            .chain(
                failures
                    .iter()
                    .map(|(position, index)| (index_path("$.failures", *position), *index)),
            );
        for (path, index) in labelled {
            let index_field = child_path(&path, "request_index");
            if let Some(earlier) = first_seen.get(&index) {
                self.push(
                    index_field,
                    RuleId::IndexCoverage,
                    format!("request_index {index} is already used by {earlier}; each request must appear exactly once"),
                );
                continue;
            }
            if let Some(upper) = upper {
                if index >= upper {
                    let form = if zero_failure_form {
                        format!(
                            "with zero failures indexes must be exactly 0..{upper_name}−1 (0..{})",
                            upper - 1
                        )
                    } else {
                        format!("indexes must lie in 0..{upper_name}−1 (0..{})", upper - 1)
                    };
                    self.push(
                        index_field,
                        RuleId::IndexCoverage,
                        format!("request_index {index} is out of range: {form}"),
                    );
                }
            }
            first_seen.insert(index, path);
        }
        let Some(upper) = upper else { return };
        let mut seen: Vec<i128> = first_seen
            .keys()
            .copied()
            .filter(|index| *index < upper)
            .collect();
        seen.sort_unstable();
        let mut gaps: Vec<(i128, i128)> = Vec::new();
        let mut expected = 0;
        for index in seen.iter().copied().chain(std::iter::once(upper)) {
            if index > expected {
                gaps.push((expected, index - 1));
            }
            expected = index + 1;
        }
        if gaps.is_empty() {
            return;
        }
        let missing: i128 = gaps.iter().map(|(low, high)| high - low + 1).sum();
        let mut listed: Vec<String> = gaps
            .iter()
            .take(8)
            .map(|(low, high)| {
                if low == high {
                    low.to_string()
                } else {
                    format!("{low}–{high}")
                }
            })
            .collect();
        if gaps.len() > 8 {
            listed.push("…".to_string());
        }
        let message = if zero_failure_form {
            format!(
                "with zero failures the row indexes must be exactly 0..completed−1, but {missing} are missing: {}",
                listed.join(", ")
            )
        } else {
            format!(
                "row and failure indexes together must cover 0..requests−1, but {missing} requests are neither a row nor a failure: {}",
                listed.join(", ")
            )
        };
        self.push("$.request_timings", RuleId::IndexCoverage, message);
    }

    pub(super) fn check_output_token_sum(&mut self, artifact: &Map<String, Value>, rows: &[Value]) {
        let Some(recorded_value) = artifact
            .get("metrics")
            .and_then(|metrics| present(metrics.as_object()?, "output_tokens"))
        else {
            return;
        };
        let Some(recorded) = as_int(recorded_value) else {
            return; // The type error is reported by `check_metric_scalars`.
        };
        let mut sum: i128 = 0;
        let mut inexact = Vec::new();
        for (position, row) in rows.iter().enumerate() {
            match row.get("output_tokens").and_then(as_int) {
                Some(tokens) => sum += tokens,
                None => inexact.push(position),
            }
        }
        if !inexact.is_empty() {
            let listed: Vec<String> = inexact.iter().take(8).map(usize::to_string).collect();
            self.push(
                "$.metrics.output_tokens",
                RuleId::OutputTokensSum,
                format!(
                    "metrics.output_tokens is {recorded} but rows {} have no exact output_tokens; it must be null unless every row is counted by usage",
                    listed.join(", ")
                ),
            );
        } else if sum != recorded {
            self.push(
                "$.metrics.output_tokens",
                RuleId::OutputTokensSum,
                format!(
                    "metrics.output_tokens is {recorded} but the rows' output_tokens sum to {sum}"
                ),
            );
        }
    }
}
