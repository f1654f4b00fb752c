//! Small readers of JSON values the rules share: integers told from floats, paths that quote
//! odd keys, bounded renderings of values for messages.

use serde_json::{Map, Value};

/// A non-bool JSON integer (Python `int`, not `float`), widened so u64 and i64 both fit.
pub(super) fn as_int(value: &Value) -> Option<i128> {
    match value {
        Value::Number(number) => number
            .as_i64()
            .map(i128::from)
            .or_else(|| number.as_u64().map(i128::from)),
        _ => None,
    }
}

/// A non-bool JSON number as f64 (serde_json never holds a non-finite one).
pub(super) fn as_number(value: &Value) -> Option<f64> {
    match value {
        Value::Number(number) => number.as_f64(),
        _ => None,
    }
}

/// Present and not null.
pub(super) fn present<'a>(map: &'a Map<String, Value>, key: &str) -> Option<&'a Value> {
    map.get(key).filter(|value| !value.is_null())
}

pub(super) fn describe(value: &Value) -> String {
    match value {
        Value::Null => "null".to_string(),
        Value::Bool(flag) => format!("the boolean {flag}"),
        Value::Number(number) => {
            if number.is_f64() {
                format!("the float {number}")
            } else {
                format!("the integer {number}")
            }
        }
        Value::String(_) => format!("the string {}", show(value)),
        Value::Array(items) => format!("an array of {} items", items.len()),
        Value::Object(map) => format!("an object with {} keys", map.len()),
    }
}

/// A short rendering of a value for messages; long strings and containers are abbreviated so
/// hostile input cannot blow up a report.
pub(super) fn show(value: &Value) -> String {
    const LIMIT: usize = 60;
    match value {
        Value::String(text) => {
            if text.chars().count() > LIMIT {
                let head: String = text.chars().take(LIMIT).collect();
                format!("{}… ({} chars)", Value::String(head), text.chars().count())
            } else {
                Value::String(text.clone()).to_string()
            }
        }
        Value::Array(items) => format!("[…{} items]", items.len()),
        Value::Object(map) => format!("{{…{} keys}}", map.len()),
        other => other.to_string(),
    }
}

pub(super) fn show_opt(value: Option<&Value>) -> String {
    value.map_or_else(|| "missing".to_string(), show)
}

pub(super) fn is_identifier(key: &str) -> bool {
    let mut chars = key.chars();
    matches!(chars.next(), Some(first) if first.is_ascii_alphabetic() || first == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

pub(super) fn child_path(parent: &str, key: &str) -> String {
    if is_identifier(key) {
        format!("{parent}.{key}")
    } else {
        format!("{parent}[{}]", Value::String(key.to_string()))
    }
}

pub(super) fn index_path(parent: &str, index: usize) -> String {
    format!("{parent}[{index}]")
}

/// `[A-Za-z0-9._-]{1,64}`, the public-safe clock domain syntax.
pub fn is_clock_domain_id(text: &str) -> bool {
    (1..=64).contains(&text.len())
        && text
            .bytes()
            .all(|byte| byte.is_ascii_alphanumeric() || matches!(byte, b'.' | b'_' | b'-'))
}

/// `sha256:` followed by exactly 64 lowercase hex digits.
pub fn is_configuration_fingerprint(text: &str) -> bool {
    text.strip_prefix("sha256:").is_some_and(|hex| {
        hex.len() == 64
            && hex
                .bytes()
                .all(|byte| matches!(byte, b'0'..=b'9' | b'a'..=b'f'))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn paths_quote_keys_that_are_not_identifiers() {
        assert_eq!(child_path("$", "ttft_ms"), "$.ttft_ms");
        assert_eq!(
            child_path("$.context_distribution", "65536"),
            "$.context_distribution[\"65536\"]"
        );
        assert_eq!(child_path("$", "a \"b\""), "$[\"a \\\"b\\\"\"]");
        assert_eq!(index_path("$.request_timings", 3), "$.request_timings[3]");
    }

    #[test]
    fn shown_values_are_bounded() {
        let long = Value::String("x".repeat(10_000));
        let shown = show(&long);
        assert!(shown.len() < 100, "{shown}");
        assert!(shown.ends_with("(10000 chars)"));
        assert_eq!(show(&json!([1, 2, 3])), "[…3 items]");
        assert_eq!(describe(&json!(1.0)), "the float 1.0");
        assert_eq!(describe(&json!(true)), "the boolean true");
    }

    #[test]
    fn integers_and_floats_are_told_apart() {
        assert_eq!(as_int(&json!(5)), Some(5));
        assert_eq!(as_int(&json!(u64::MAX)), Some(i128::from(u64::MAX)));
        assert_eq!(as_int(&json!(5.0)), None);
        assert_eq!(as_int(&json!(true)), None);
        assert_eq!(as_number(&json!(false)), None);
    }

    #[test]
    fn identifier_patterns() {
        assert!(is_clock_domain_id("lab-a.rack_2"));
        assert!(!is_clock_domain_id(""));
        assert!(!is_clock_domain_id("é"));
        assert!(is_configuration_fingerprint(&format!(
            "sha256:{}",
            "a".repeat(64)
        )));
        assert!(!is_configuration_fingerprint(&format!(
            "sha256:{}",
            "a".repeat(63)
        )));
        assert!(!is_configuration_fingerprint(&format!(
            "sha256:{}g",
            "a".repeat(63)
        )));
    }
}
