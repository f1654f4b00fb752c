//! The text level of validation: non-finite number tokens (NaN, ±Infinity) found where JSON
//! has none, swapped for sentinels so the rest still parses, and parse errors with a line and
//! column.

use serde_json::Value;

use crate::core::read::validate::report::{RuleId, Violation, MAX_NESTING_DEPTH};
use crate::core::read::validate::values::{child_path, index_path};

/// Prefix of the placeholder strings that stand in for NaN/Infinity tokens while parsing, so
/// the rest of the artifact can still be validated and each token located by JSON path.
/// U+0001 cannot appear raw in JSON text, so only an escaped copy could collide, and
/// [`locate_sentinels`] refuses to trust an ambiguous result.
pub(super) const SENTINEL_PREFIX: &str = "\u{1}strobe-non-finite-token:";

/// A bare `NaN`, `Infinity` or `-Infinity` outside any string.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct NonFiniteToken {
    byte_offset: usize,
    token: &'static str,
    line: usize,
    column: usize,
}

impl NonFiniteToken {
    pub(crate) fn violation(&self, path: String) -> Violation {
        Violation {
            path,
            rule: RuleId::NonFiniteNumber,
            message: format!(
                "`{}` at line {}, column {} is not valid JSON; artifacts must hold only finite numbers \
                 (the writer should have refused to serialize it)",
                self.token, self.line, self.column
            ),
        }
    }
}

/// Scans for NaN/±Infinity tokens outside strings, with 1-based line and column (in chars).
pub(super) fn find_non_finite_tokens(text: &str) -> Vec<NonFiniteToken> {
    const TOKENS: [&str; 3] = ["-Infinity", "Infinity", "NaN"];
    let bytes = text.as_bytes();
    let mut found = Vec::new();
    let mut in_string = false;
    let mut escaped = false;
    let mut line = 1;
    let mut line_start = 0;
    let mut position = 0;
    while position < bytes.len() {
        let byte = bytes[position];
        if in_string {
            if escaped {
                escaped = false;
            } else if byte == b'\\' {
                escaped = true;
            } else if byte == b'"' {
                in_string = false;
            } else if byte == b'\n' {
                line += 1;
                line_start = position + 1;
            }
            position += 1;
            continue;
        }
        match byte {
            b'"' => in_string = true,
            b'\n' => {
                line += 1;
                line_start = position + 1;
            }
            b'-' | b'I' | b'N' => {
                let preceded_by_word = position > 0 && is_word_byte(bytes[position - 1]);
                let hit = TOKENS.iter().find(|token| {
                    bytes[position..].starts_with(token.as_bytes())
                        && !bytes
                            .get(position + token.len())
                            .is_some_and(|next| is_word_byte(*next))
                });
                if let (Some(token), false) = (hit, preceded_by_word) {
                    let column = text[line_start..position].chars().count() + 1;
                    found.push(NonFiniteToken {
                        byte_offset: position,
                        token,
                        line,
                        column,
                    });
                    position += token.len();
                    continue;
                }
            }
            _ => {}
        }
        position += 1;
    }
    found
}

pub(super) fn is_word_byte(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || byte == b'_' || byte == b'.'
}

pub(super) fn replace_tokens_with_sentinels(text: &str, tokens: &[NonFiniteToken]) -> String {
    let mut out = String::with_capacity(text.len() + tokens.len() * 40);
    let mut copied_up_to = 0;
    for (number, token) in tokens.iter().enumerate() {
        out.push_str(&text[copied_up_to..token.byte_offset]);
        out.push_str(&format!("\"\\u0001strobe-non-finite-token:{number}\""));
        copied_up_to = token.byte_offset + token.token.len();
    }
    out.push_str(&text[copied_up_to..]);
    out
}

/// Finds the JSON path of each sentinel string. Returns `None` for a token whose path cannot
/// be trusted (a sentinel missing or occurring twice, which only hostile input can cause).
pub(super) fn locate_sentinels(value: &Value, count: usize) -> Vec<Option<String>> {
    let mut paths: Vec<Vec<String>> = vec![Vec::new(); count];
    let mut stray = false;
    // An explicit stack: parsed input is at most 128 deep, but a stack costs nothing here.
    let mut stack: Vec<(&Value, String)> = vec![(value, "$".to_string())];
    while let Some((node, path)) = stack.pop() {
        match node {
            Value::String(text) => {
                if let Some(number) = text.strip_prefix(SENTINEL_PREFIX) {
                    match number.parse::<usize>().ok().filter(|n| *n < count) {
                        Some(n) => paths[n].push(path),
                        None => stray = true,
                    }
                }
            }
            Value::Array(items) => {
                for (index, item) in items.iter().enumerate() {
                    stack.push((item, index_path(&path, index)));
                }
            }
            Value::Object(map) => {
                for (key, item) in map {
                    stack.push((item, child_path(&path, key)));
                }
            }
            _ => {}
        }
    }
    paths
        .into_iter()
        .map(|mut found| {
            if found.len() == 1 && !stray {
                found.pop()
            } else {
                None
            }
        })
        .collect()
}

pub(super) fn parse_error_violation(error: &serde_json::Error) -> Violation {
    let (line, column) = (error.line(), error.column());
    // serde_json appends " at line L column C"; the position is restated in our own words.
    let full = error.to_string();
    let suffix = format!(" at line {line} column {column}");
    let detail = full.strip_suffix(&suffix).unwrap_or(&full);
    if detail.contains("recursion limit exceeded") {
        Violation {
            path: "$".to_string(),
            rule: RuleId::NestingTooDeep,
            message: format!(
                "the JSON nests deeper than {MAX_NESTING_DEPTH} levels (line {line}, column {column}); \
                 a real artifact nests at most a handful of levels, so this is not an artifact"
            ),
        }
    } else if detail.contains("number out of range") {
        Violation {
            path: "$".to_string(),
            rule: RuleId::NonFiniteNumber,
            message: format!(
                "a number at line {line}, column {column} is too large for a double (it would read \
                 as infinity); artifacts must hold only finite numbers"
            ),
        }
    } else {
        Violation {
            path: "$".to_string(),
            rule: RuleId::InvalidJson,
            message: format!(
                "the file is not valid JSON: {detail} at line {line}, column {column}; check that \
                 it is an artifact written by anvil-serving or strobe and was not truncated"
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::read::validate::validate_artifact_text;

    #[test]
    fn non_finite_tokens_are_found_outside_strings_only() {
        // Columns count characters, so the two-byte é is one column.
        let text = "{\"a\": NaN,\n \"b\": \"NaN \\\" Infinity\",\n  \"é\": [-Infinity, Infinity]}";
        let tokens = find_non_finite_tokens(text);
        let found: Vec<_> = tokens.iter().map(|t| (t.token, t.line, t.column)).collect();
        assert_eq!(
            found,
            vec![("NaN", 1, 7), ("-Infinity", 3, 9), ("Infinity", 3, 20)]
        );
        assert!(find_non_finite_tokens("{\"x\": NaNo, \"y\": xNaN}").is_empty());
    }

    #[test]
    fn sentinel_substitution_keeps_the_rest_of_the_document() {
        let text = "{\"a\": [1, NaN], \"b\": -Infinity}";
        let tokens = find_non_finite_tokens(text);
        let replaced = replace_tokens_with_sentinels(text, &tokens);
        let value: Value = serde_json::from_str(&replaced).expect("parses");
        assert_eq!(
            locate_sentinels(&value, tokens.len()),
            vec![Some("$.a[1]".to_string()), Some("$.b".to_string())]
        );
    }

    #[test]
    fn a_literal_sentinel_in_hostile_input_is_not_trusted() {
        let text = "{\"a\": NaN, \"b\": \"\\u0001strobe-non-finite-token:0\"}";
        let report = validate_artifact_text(text);
        assert!(
            report.has_violation(RuleId::NonFiniteNumber, "$"),
            "{report}"
        );
    }
}
