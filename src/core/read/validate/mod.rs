//! Reading-side validation of `anvil-serving.benchmark/v1` artifacts (ARTIFACT.md §9, §10).
//!
//! This module owns the answer to "may strobe trust this file?": it detects which of the four
//! artifact generations a file belongs to, applies every §9 rule that the file's generation makes
//! applicable, and returns **all** violations with a JSON path and a rule id, never just the
//! first. It works on raw text (so it can report NaN tokens, nesting depth and syntax errors with
//! a line and column) and on `serde_json::Value` (so it does not depend on the typed artifact
//! structs). Input is treated as hostile: nothing here panics, recurses without bound or does
//! more than linear work in the size of the input.
//!
//! [`text`] reads the raw text, `values` holds the small value readers, and `checks` the
//! rules by §9 group. ISO-8601 labels are read by [`crate::core::python::time`].

use std::collections::HashSet;

use serde_json::Value;

mod checks;
pub mod report;
pub mod text;
mod values;

use crate::core::read::validate::values::as_int;
use crate::core::read::validate::values::as_number;
use crate::core::read::validate::values::show_opt;
pub use checks::is_converted;
use checks::run_checks;
pub use report::{
    detect_generation, Generation, Report, RuleId, Verdict, Violation, COMBINER_MATCHED_FIELDS,
    MAX_NESTING_DEPTH, SCHEMA, WALL_TOLERANCE_MIN_MS, WALL_TOLERANCE_RELATIVE,
};
use text::{
    find_non_finite_tokens, locate_sentinels, parse_error_violation, replace_tokens_with_sentinels,
};
pub use values::{is_clock_domain_id, is_configuration_fingerprint};

/// Validates artifact text: syntax, nesting depth and NaN/±Infinity tokens (reported with line
/// and column), then every §9 rule on the parsed value.
pub fn validate_artifact_text(text: &str) -> Report {
    let mut text_violations = Vec::new();
    let text = match text.strip_prefix('\u{feff}') {
        Some(rest) => {
            text_violations.push(Violation {
                path: "$".to_string(),
                rule: RuleId::InvalidJson,
                message: "the file starts with a UTF-8 byte-order mark, which JSON readers \
                          reject; save it without a BOM"
                    .to_string(),
            });
            rest
        }
        None => text,
    };
    if text.trim().is_empty() {
        // serde's "EOF while parsing" would read as a file cut short; it holds nothing at all.
        text_violations.push(Violation {
            path: "$".to_string(),
            rule: RuleId::InvalidJson,
            message: format!(
                "the file is empty{}: an artifact is one JSON object; check that the run that \
                 wrote it finished, or pick the artifact file itself",
                if text.is_empty() {
                    ""
                } else {
                    " (only whitespace)"
                }
            ),
        });
        return Report::from_violations(Generation::Unknown, text_violations);
    }
    let tokens = find_non_finite_tokens(text);
    let parse_text = if tokens.is_empty() {
        None
    } else {
        Some(replace_tokens_with_sentinels(text, &tokens))
    };
    let parsed: Result<Value, serde_json::Error> =
        serde_json::from_str(parse_text.as_deref().unwrap_or(text));
    let value = match parsed {
        Ok(value) => value,
        Err(error) => {
            for token in &tokens {
                text_violations.push(token.violation("$".to_string()));
            }
            text_violations.push(parse_error_violation(&error));
            return Report::from_violations(Generation::Unknown, text_violations);
        }
    };
    let token_paths = if tokens.is_empty() {
        Vec::new()
    } else {
        locate_sentinels(&value, tokens.len())
    };
    let suppressed: HashSet<String> = token_paths.iter().filter_map(|path| path.clone()).collect();
    for (token, path) in tokens.iter().zip(token_paths.iter()) {
        let path = path.clone().unwrap_or_else(|| "$".to_string());
        text_violations.push(token.violation(path));
    }
    let mut report = run_checks(&value, &suppressed);
    text_violations.append(&mut report.violations);
    Report::from_violations(report.generation, text_violations)
}

/// Validates a parsed artifact against every §9 rule that its generation makes applicable.
pub fn validate_artifact(value: &Value) -> Report {
    run_checks(value, &HashSet::new())
}

/// Reasons this run may not be combined with replicas (§9 "Combiner-only admission"). Empty
/// means admissible. This is not validity: a valid artifact with failures is still readable.
pub fn combiner_admission(value: &Value) -> Vec<String> {
    let mut reasons = Vec::new();
    let Some(artifact) = value.as_object() else {
        return vec!["the artifact is not a JSON object".to_string()];
    };
    let requests = artifact.get("requests").and_then(as_int);
    let completed = artifact.get("completed").and_then(as_int);
    let failed = artifact.get("failed").and_then(as_int);
    match failed {
        Some(0) => {}
        Some(count) => reasons.push(format!("the run has {count} failed requests; only zero-failure runs can be combined")),
        None => reasons.push("`failed` is missing or not an integer; only runs that record zero failures can be combined".to_string()),
    }
    if requests.is_none() || completed != requests {
        reasons.push(format!(
            "completed ({}) must equal requests ({})",
            show_opt(artifact.get("completed")),
            show_opt(artifact.get("requests"))
        ));
    }
    if artifact.get("performance_eligible") == Some(&Value::Bool(false)) {
        reasons.push("performance_eligible is false".to_string());
    }
    match artifact.get("request_timings").and_then(Value::as_array) {
        None => reasons.push(
            "there are no request_timings rows to combine (G1/G2 artifacts cannot be combined)"
                .to_string(),
        ),
        Some(rows) => {
            for (position, row) in rows.iter().enumerate() {
                let source = row.get("output_token_source");
                if !matches!(source, None | Some(Value::Null))
                    && source.and_then(Value::as_str) != Some("usage")
                {
                    reasons.push(format!(
                        "request_timings[{position}].output_token_source is {}; the combiner needs exact usage counts",
                        show_opt(source)
                    ));
                }
                if row.get("prompt_tokens").and_then(as_int).is_none() {
                    reasons.push(format!(
                        "request_timings[{position}].prompt_tokens is not an integer; the combiner needs it"
                    ));
                }
                if row
                    .get("time_to_first_output_ms")
                    .and_then(as_number)
                    .is_none()
                {
                    reasons.push(format!(
                        "request_timings[{position}].time_to_first_output_ms is missing; the combiner needs it"
                    ));
                }
            }
        }
    }
    reasons
}

/// Fields from [`COMBINER_MATCHED_FIELDS`] whose values differ between two replicas.
pub fn combiner_field_mismatches(first: &Value, other: &Value) -> Vec<String> {
    COMBINER_MATCHED_FIELDS
        .iter()
        .filter(|field| first.get(**field) != other.get(**field))
        .map(|field| {
            format!(
                "{field} differs: {} versus {}",
                show_opt(first.get(*field)),
                show_opt(other.get(*field))
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn garbage_never_panics() {
        for text in [
            "",
            "{",
            "}",
            "[",
            "null",
            "0",
            "\"x\"",
            "-",
            "NaN",
            "{\"schema\":",
            "\u{feff}",
        ] {
            let report = validate_artifact_text(text);
            assert_eq!(report.verdict, Verdict::Invalid, "{text:?}");
        }
    }

    #[test]
    fn an_empty_file_is_called_empty_not_truncated() {
        for (text, expected) in [
            ("", "the file is empty: "),
            (" \n\t", "the file is empty (only whitespace): "),
            ("\u{feff}", "the file is empty: "),
        ] {
            let report = validate_artifact_text(text);
            let last = report.violations.last().expect("a violation");
            assert_eq!(last.rule, RuleId::InvalidJson);
            assert!(
                last.message.starts_with(expected),
                "{text:?}: {}",
                last.message
            );
            assert!(!last.message.contains("truncated"), "{}", last.message);
        }
        // A file cut short is still told apart.
        let cut = validate_artifact_text("{\"schema\": ");
        assert!(
            cut.violations[0].message.contains("truncated"),
            "{:?}",
            cut.violations
        );
    }
}
