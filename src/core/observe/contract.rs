//! The output contract (ARTIFACT.md §6.1): the request canary (did the response begin with its
//! own marker, and name no other request's) and controlled output (exactly W `code` words).

use crate::core::config::choices::ControlledOutputPolicy;
use crate::core::schema::rows::{ControlledOutput, RequestCanary};
use crate::core::stream::sse::is_python_space;

/// The word a controlled-output prompt asks the model to repeat.
pub const CONTROLLED_OUTPUT_WORD: &str = "code";

const MARKER_PREFIX: &str = "ANVIL_REQ_";
const MARKER_INDEX_DIGITS: usize = 5;

/// `marker_at_start`: `visible` begins with `marker`, and the marker is followed by nothing or by
/// a character Python's `str.isspace` accepts.
pub fn marker_at_start(visible: &str, marker: &str) -> bool {
    visible
        .strip_prefix(marker)
        .is_some_and(|rest| rest.chars().next().is_none_or(is_python_space))
}

/// All non-overlapping matches, left to right, of the Python regex
/// `ANVIL_REQ_-?[0-9]+_[0-9]{5}\b` (the pattern is deterministic, so no backtracking is needed).
///
/// `\b` after the last digit needs the next character to be a non-word character or the end.
/// Python's word characters are `str.isalnum()` or `_`. This uses `char::is_alphanumeric`, which
/// agrees on letters and digits of every script, but also counts as word characters the ~1,400
/// combining signs Unicode marks Other_Alphabetic (e.g. Devanagari vowel signs) and characters
/// newer than CPython 3.11's Unicode 14 tables: a marker glued to one of those is not counted
/// here where CPython would count it.
pub fn find_marker_matches(text: &str) -> Vec<&str> {
    let mut matches = Vec::new();
    let mut search_from = 0;
    while let Some(offset) = text[search_from..].find(MARKER_PREFIX) {
        let start = search_from + offset;
        match marker_end(text, start + MARKER_PREFIX.len()) {
            Some(end) => {
                matches.push(&text[start..end]);
                search_from = end;
            }
            // The prefix starts with an ASCII byte, so start + 1 is a character boundary.
            None => search_from = start + 1,
        }
    }
    matches
}

fn marker_end(text: &str, after_prefix: usize) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut at = after_prefix;
    if bytes.get(at) == Some(&b'-') {
        at += 1;
    }
    let seed_start = at;
    while bytes.get(at).is_some_and(u8::is_ascii_digit) {
        at += 1;
    }
    if at == seed_start || bytes.get(at) != Some(&b'_') {
        return None;
    }
    at += 1;
    let index_digits = bytes.get(at..at + MARKER_INDEX_DIGITS)?;
    if !index_digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let end = at + MARKER_INDEX_DIGITS;
    let next = text[end..].chars().next();
    if next.is_some_and(is_regex_word_char) {
        return None;
    }
    Some(end)
}

fn is_regex_word_char(c: char) -> bool {
    c == '_' || c.is_alphanumeric()
}

/// The `request_canary` object (§6.1) for the captured visible content.
pub fn observe_canary(visible: &str, expected_marker: &str, truncated: bool) -> RequestCanary {
    let marker_at_start = marker_at_start(visible, expected_marker);
    let matches = find_marker_matches(visible);
    let foreign_marker_count = matches.iter().filter(|m| **m != expected_marker).count() as u64;
    let capture_complete = !truncated;
    RequestCanary {
        marker: expected_marker.to_owned(),
        marker_at_start,
        observed_marker_count: matches.len() as u64,
        foreign_marker_count,
        capture_complete,
        passed: marker_at_start && foreign_marker_count == 0 && capture_complete,
    }
}

/// The `controlled_output` object (§6.1), or `None` when `response_words` is 0.
///
/// Words are counted after the expected marker (and the whitespace after it) when the marker is
/// at the start; otherwise in the whole content, so a misplaced marker counts as an extra word.
pub fn observe_controlled_output(
    visible: &str,
    expected_marker: Option<&str>,
    response_words: u64,
    policy: ControlledOutputPolicy,
    truncated: bool,
) -> Option<ControlledOutput> {
    if response_words == 0 {
        return None;
    }
    let body = match expected_marker {
        Some(marker) if marker_at_start(visible, marker) => {
            visible[marker.len()..].trim_start_matches(is_python_space)
        }
        _ => visible,
    };
    let mut code_words = 0;
    let mut extra_words = 0;
    for word in body.split(is_python_space).filter(|word| !word.is_empty()) {
        if word == CONTROLLED_OUTPUT_WORD {
            code_words += 1;
        } else {
            extra_words += 1;
        }
    }
    let capture_complete = !truncated;
    let exact_adherence =
        capture_complete.then_some(code_words == response_words && extra_words == 0);
    let passed = match policy {
        ControlledOutputPolicy::Strict => exact_adherence == Some(true),
        ControlledOutputPolicy::Observe => true,
    };
    Some(ControlledOutput {
        policy,
        requested_words: response_words,
        observed_code_words: code_words,
        observed_extra_words: extra_words,
        capture_complete,
        exact_adherence,
        passed,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn canary_examples_from_the_spec() {
        let marker = "ANVIL_REQ_0_00000";
        let passing = observe_canary("ANVIL_REQ_0_00000 summary", marker, false);
        assert_eq!(
            passing,
            RequestCanary {
                marker: marker.to_owned(),
                marker_at_start: true,
                observed_marker_count: 1,
                foreign_marker_count: 0,
                capture_complete: true,
                passed: true,
            }
        );
        let colon = observe_canary("ANVIL_REQ_0_00000: summary", marker, false);
        assert!(!colon.marker_at_start && !colon.passed);
        assert_eq!(colon.observed_marker_count, 1);
        let late = observe_canary("\n\nANVIL_REQ_0_00000 summary", marker, false);
        assert!(!late.marker_at_start && !late.passed);
        let truncated = observe_canary("ANVIL_REQ_0_00000 summary", marker, true);
        assert!(truncated.marker_at_start && !truncated.capture_complete && !truncated.passed);
        let foreign = observe_canary("ANVIL_REQ_0_00000 and ANVIL_REQ_0_00001.", marker, false);
        assert_eq!(
            (foreign.observed_marker_count, foreign.foreign_marker_count),
            (2, 1)
        );
        assert!(!foreign.passed);
        let repeated = observe_canary("ANVIL_REQ_0_00000 ANVIL_REQ_0_00000", marker, false);
        assert_eq!(repeated.observed_marker_count, 2);
        assert!(repeated.passed);
    }

    #[test]
    fn marker_at_start_accepts_python_whitespace_and_the_end() {
        let marker = "ANVIL_REQ_7_00001";
        assert!(marker_at_start(marker, marker));
        for follower in ["\t", "\n", "\u{1c}", "\u{85}", "\u{a0}", "\u{3000}"] {
            assert!(
                marker_at_start(&format!("{marker}{follower}x"), marker),
                "{follower:?}"
            );
        }
        for follower in [".", ":", "x", "0", "\u{200b}"] {
            assert!(
                !marker_at_start(&format!("{marker}{follower}"), marker),
                "{follower:?}"
            );
        }
        assert!(!marker_at_start("ANVIL_REQ_7_0000", marker));
    }

    #[test]
    fn marker_regex_matches_python_re() {
        // Expected lists from CPython 3.11.7:
        // re.compile(r"ANVIL_REQ_-?[0-9]+_[0-9]{5}\b").findall(text)
        let cases: [(&str, &[&str]); 23] = [
            ("ANVIL_REQ_1_00000x", &[]),
            ("ANVIL_REQ_1_00000é", &[]),
            ("ANVIL_REQ_1_00000 ", &["ANVIL_REQ_1_00000"]),
            ("ANVIL_REQ_1_00000.", &["ANVIL_REQ_1_00000"]),
            ("ANVIL_REQ_1_000001", &[]),
            ("ANVIL_REQ_-5_00000", &["ANVIL_REQ_-5_00000"]),
            ("ANVIL_REQ_-_00000", &[]),
            ("ANVIL_REQ__00000", &[]),
            ("ANVIL_REQ_1_0000", &[]),
            ("ANVIL_REQ_1_00000ANVIL_REQ_2_00001", &["ANVIL_REQ_2_00001"]),
            ("xANVIL_REQ_1_00000 ", &["ANVIL_REQ_1_00000"]),
            ("ANVIL_REQ_1_00000_", &[]),
            ("ANVIL_REQ_1_00000世", &[]),
            ("ANVIL_REQ_1_00000🎉", &["ANVIL_REQ_1_00000"]),
            ("ANVIL_REQ_1_00000-", &["ANVIL_REQ_1_00000"]),
            (
                "ANVIL_REQ_12_34567,ANVIL_REQ_12_34568",
                &["ANVIL_REQ_12_34567", "ANVIL_REQ_12_34568"],
            ),
            ("ANVIL_REQ_1_2_00000", &[]),
            ("ANVIL_REQ_ANVIL_REQ_3_00003", &["ANVIL_REQ_3_00003"]),
            ("ANVIL_REQ_1_00000٣", &[]),
            ("ANVIL_REQ_1_00000²", &[]),
            ("ANVIL_REQ_1_00000\u{a0}", &["ANVIL_REQ_1_00000"]),
            ("ANVIL_REQ_--1_00000", &[]),
            ("ANVIL_REQ_１_00000", &[]),
        ];
        for (text, expected) in cases {
            assert_eq!(find_marker_matches(text), expected, "{text:?}");
        }
    }

    #[test]
    fn controlled_output_counts_words_after_the_marker() {
        let marker = Some("ANVIL_REQ_1_00000");
        let exact = observe_controlled_output(
            "ANVIL_REQ_1_00000 \u{1c}code code\ncode",
            marker,
            3,
            ControlledOutputPolicy::Strict,
            false,
        )
        .expect("W > 0");
        assert_eq!(
            exact,
            ControlledOutput {
                policy: ControlledOutputPolicy::Strict,
                requested_words: 3,
                observed_code_words: 3,
                observed_extra_words: 0,
                capture_complete: true,
                exact_adherence: Some(true),
                passed: true,
            }
        );
        // A misplaced marker is an extra word; `code,` and `Code` are extra words.
        let misplaced = observe_controlled_output(
            "ANVIL_REQ_1_00000: code, Code code",
            marker,
            3,
            ControlledOutputPolicy::Strict,
            false,
        )
        .expect("W > 0");
        assert_eq!(
            (
                misplaced.observed_code_words,
                misplaced.observed_extra_words
            ),
            (1, 3)
        );
        assert_eq!(misplaced.exact_adherence, Some(false));
        assert!(!misplaced.passed);
        let no_canary =
            observe_controlled_output("code code", None, 3, ControlledOutputPolicy::Observe, false)
                .expect("W > 0");
        assert_eq!(no_canary.exact_adherence, Some(false));
        assert!(no_canary.passed, "observe never fails");
    }

    #[test]
    fn controlled_output_is_unobservable_when_truncated() {
        let strict =
            observe_controlled_output("code", None, 1, ControlledOutputPolicy::Strict, true)
                .expect("W > 0");
        assert_eq!(strict.exact_adherence, None);
        assert!(!strict.passed);
        let observe =
            observe_controlled_output("code", None, 1, ControlledOutputPolicy::Observe, true)
                .expect("W > 0");
        assert_eq!(observe.exact_adherence, None);
        assert!(observe.passed);
        assert_eq!(
            observe_controlled_output("code", None, 0, ControlledOutputPolicy::Strict, false),
            None
        );
    }

    #[test]
    fn controlled_output_serializes_null_adherence() {
        let value = serde_json::to_value(
            observe_controlled_output("", None, 2, ControlledOutputPolicy::Observe, true)
                .expect("W > 0"),
        )
        .expect("serializable");
        assert_eq!(
            value,
            json!({"policy": "observe", "requested_words": 2, "observed_code_words": 0,
                   "observed_extra_words": 0, "capture_complete": false,
                   "exact_adherence": null, "passed": true})
        );
    }
}
