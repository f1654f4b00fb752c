//! Artifact serialization byte-identical to the reference producer's Python.
//!
//! Owns `repr(float)` and `json.dumps(value, indent=2, sort_keys=True, ensure_ascii=True,
//! allow_nan=False)` (ARTIFACT.md §8.4): two-space indent, `","` + newline between items,
//! `": "` after keys, keys sorted by code point at every level, `[]`/`{}` for empty containers,
//! every non-ASCII character escaped as `\uXXXX` (surrogate pairs above U+FFFF), integers as
//! integers and floats in Python's shortest round-trip layout.

use num_bigint::BigUint;
use serde_json::{Number, Value};
use std::fmt::Write as _;

/// Why a value cannot be written as the producer would write it.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PyJsonError {
    /// JSON has no NaN or Infinity and the producer refuses them (`allow_nan=False`).
    #[error(
        "cannot write {value} into the artifact: JSON has no NaN or Infinity; \
         a statistic overflowed or was computed from non-finite input, so check the request rows"
    )]
    NonFiniteFloat {
        /// The offending value.
        value: f64,
    },
    /// A `serde_json` number that is neither an integer nor an `f64` (possible only when some
    /// crate enables serde_json's `arbitrary_precision` feature).
    #[error(
        "cannot write the number {text} into the artifact: it is neither a 64-bit integer nor a \
         float; disable serde_json's arbitrary_precision feature"
    )]
    UnrepresentableNumber {
        /// The number as serde_json prints it.
        text: String,
    },
}

/// Python's `repr(x)` for a finite float: the shortest digits that round-trip, laid out in
/// fixed notation when the decimal exponent is in `-4..16` (`519.0`, `0.0001`,
/// `123456789012345.6`) and in exponent notation otherwise (`1e-05`, `1e+16`,
/// `1.2345678901234567e+19`). The sign of `-0.0` is kept.
pub fn python_float_repr(value: f64) -> Result<String, PyJsonError> {
    if !value.is_finite() {
        return Err(PyJsonError::NonFiniteFloat { value });
    }
    let (digits, exponent) = shortest_digits(value);
    let mut repr = String::with_capacity(digits.len() + 8);
    if value.is_sign_negative() {
        repr.push('-');
    }
    if (-4..16).contains(&exponent) {
        if exponent < 0 {
            repr.push_str("0.");
            repr.extend(std::iter::repeat_n('0', (-exponent - 1) as usize));
            repr.push_str(&digits);
        } else {
            let integer_len = exponent as usize + 1;
            if digits.len() > integer_len {
                repr.push_str(&digits[..integer_len]);
                repr.push('.');
                repr.push_str(&digits[integer_len..]);
            } else {
                repr.push_str(&digits);
                repr.extend(std::iter::repeat_n('0', integer_len - digits.len()));
                repr.push_str(".0");
            }
        }
    } else {
        repr.push_str(&digits[..1]);
        if digits.len() > 1 {
            repr.push('.');
            repr.push_str(&digits[1..]);
        }
        let sign = if exponent < 0 { '-' } else { '+' };
        let _ = write!(repr, "e{sign}{:02}", exponent.unsigned_abs());
    }
    Ok(repr)
}

/// The shortest decimal digits that round-trip to `value` and the decimal exponent of the
/// first one (`value ≈ 0.d₁d₂… × 10^(exponent + 1)`), chosen as Python's `dtoa` mode 0 chooses.
///
/// Rust's `{:e}` yields shortest round-trip digits, and the closest such; it differs from
/// Python only when the value lies exactly halfway between two shortest candidates (e.g.
/// `1311483651380522.25`), where Rust rounds the last digit away from zero and Python to even.
fn shortest_digits(value: f64) -> (String, i32) {
    let scientific = format!("{:e}", value.abs());
    let (mantissa, exponent) = scientific
        .split_once('e')
        .and_then(|(mantissa, exponent)| Some((mantissa, exponent.parse::<i32>().ok()?)))
        .unwrap_or(("0", 0));
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let Ok(significand) = digits.parse::<u64>() else {
        return (digits, exponent);
    };
    if significand % 2 == 0 {
        return (digits, exponent);
    }
    // Scale of the last digit: value ≈ significand × 10^last_digit_exponent.
    let last_digit_exponent = exponent - (digits.len() as i32 - 1);
    for neighbour in [significand - 1, significand + 1] {
        if is_exact_midpoint(value.abs(), significand + neighbour, last_digit_exponent) {
            let candidate = format!("{neighbour}e{last_digit_exponent}");
            if candidate.parse::<f64>().ok() == Some(value.abs()) {
                return normalized_digits(neighbour, last_digit_exponent);
            }
        }
    }
    (digits, exponent)
}

/// Whether `value` (finite, non-negative) equals exactly `twice_midpoint / 2 × 10^scale`.
fn is_exact_midpoint(value: f64, twice_midpoint: u64, scale: i32) -> bool {
    let bits = value.to_bits();
    let biased_exponent = ((bits >> 52) & 0x7ff) as i32;
    let fraction = bits & ((1_u64 << 52) - 1);
    let (mantissa, binary_exponent) = if biased_exponent == 0 {
        (fraction, -1074)
    } else {
        (fraction | (1_u64 << 52), biased_exponent - 1075)
    };
    // mantissa × 2^(binary_exponent + 1) == twice_midpoint × 2^scale × 5^scale, in integers.
    let mut left = BigUint::from(mantissa);
    let mut right = BigUint::from(twice_midpoint);
    let power_of_two = binary_exponent + 1 - scale;
    if power_of_two >= 0 {
        left <<= power_of_two as u32;
    } else {
        right <<= power_of_two.unsigned_abs();
    }
    let power_of_five = BigUint::from(5_u8).pow(scale.unsigned_abs());
    if scale >= 0 {
        right *= power_of_five;
    } else {
        left *= power_of_five;
    }
    left == right
}

/// `significand × 10^scale` as (digits without trailing zeros, exponent of the first digit).
fn normalized_digits(significand: u64, scale: i32) -> (String, i32) {
    let text = significand.to_string();
    let trimmed = text.trim_end_matches('0');
    let digits = if trimmed.is_empty() { "0" } else { trimmed };
    (digits.to_string(), scale + text.len() as i32 - 1)
}

/// Python's `json.dumps(value, indent=2, sort_keys=True, ensure_ascii=True, allow_nan=False)`,
/// without a trailing newline.
pub fn dumps_sorted(value: &Value) -> Result<String, PyJsonError> {
    let mut out = String::new();
    write_value(&mut out, value, 0)?;
    Ok(out)
}

/// The artifact file's exact bytes: [`dumps_sorted`] plus the one `\n` the producer appends.
pub fn dumps_artifact(value: &Value) -> Result<String, PyJsonError> {
    let mut out = dumps_sorted(value)?;
    out.push('\n');
    Ok(out)
}

/// Python's `json.encoder.encode_basestring_ascii`: the quoted, ASCII-only JSON literal of
/// `text`. `/` is not escaped; hex digits are lowercase.
pub fn python_string_literal(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    write_string(&mut out, text);
    out
}

fn write_value(out: &mut String, value: &Value, level: usize) -> Result<(), PyJsonError> {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(true) => out.push_str("true"),
        Value::Bool(false) => out.push_str("false"),
        Value::Number(number) => write_number(out, number)?,
        Value::String(text) => write_string(out, text),
        Value::Array(items) => {
            if items.is_empty() {
                out.push_str("[]");
                return Ok(());
            }
            out.push('[');
            for (index, item) in items.iter().enumerate() {
                if index > 0 {
                    out.push(',');
                }
                newline_indent(out, level + 1);
                write_value(out, item, level + 1)?;
            }
            newline_indent(out, level);
            out.push(']');
        }
        Value::Object(members) => {
            if members.is_empty() {
                out.push_str("{}");
                return Ok(());
            }
            // Sorted explicitly: serde_json's map order depends on whether some crate in the
            // build enables `preserve_order`. `str` order is UTF-8 byte order, which is code
            // point order, which is what Python's `sorted` uses on `str` keys.
            let mut sorted: Vec<(&String, &Value)> = members.iter().collect();
            sorted.sort_by_key(|&(key, _)| key);
            out.push('{');
            for (index, (key, member)) in sorted.into_iter().enumerate() {
                if index > 0 {
                    out.push(',');
                }
                newline_indent(out, level + 1);
                write_string(out, key);
                out.push_str(": ");
                write_value(out, member, level + 1)?;
            }
            newline_indent(out, level);
            out.push('}');
        }
    }
    Ok(())
}

fn newline_indent(out: &mut String, level: usize) {
    out.push('\n');
    out.extend(std::iter::repeat_n(' ', 2 * level));
}

fn write_number(out: &mut String, number: &Number) -> Result<(), PyJsonError> {
    if let Some(integer) = number.as_u64() {
        let _ = write!(out, "{integer}");
    } else if let Some(integer) = number.as_i64() {
        let _ = write!(out, "{integer}");
    } else if let Some(float) = number.as_f64() {
        out.push_str(&python_float_repr(float)?);
    } else {
        return Err(PyJsonError::UnrepresentableNumber {
            text: number.to_string(),
        });
    }
    Ok(())
}

fn write_string(out: &mut String, text: &str) {
    out.push('"');
    for character in text.chars() {
        match character {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{08}' => out.push_str("\\b"),
            '\u{0c}' => out.push_str("\\f"),
            // Printable ASCII is the only range Python leaves alone (`[^\ -~]` is escaped).
            ' '..='~' => out.push(character),
            _ => {
                let mut units = [0_u16; 2];
                for unit in character.encode_utf16(&mut units) {
                    let _ = write!(out, "\\u{unit:04x}");
                }
            }
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::python::stats::test_vectors;
    use serde_json::json;

    /// Expected strings are Python 3.11.7's `repr(x)` for the same bits.
    #[test]
    fn float_repr_matches_python_edge_cases() {
        let cases: [(u64, &str); 47] = [
            // Exactly halfway between two shortest candidates: Python rounds to even.
            (0xc312a32654ad54a9, "-1311483651380522.2"),
            (0x4274030fdd869880, "1375211477097.5312"),
            (0x0000000000000005, "2.5e-323"),
            (0x0000000000000000, "0.0"),
            (0x8000000000000000, "-0.0"),
            (0x4080380000000000, "519.0"),
            (0x3fb999999999999a, "0.1"),
            (0x3ee4f8b588e368f1, "1e-05"),
            (0x3e8421f5f40d8376, "1.5e-07"),
            (0x4341c37937e08000, "1e+16"),
            (0x430c6bf526340000, "1000000000000000.0"),
            (0x4341c37937e07fff, "9999999999999998.0"),
            (0x43e56a95319d63e1, "1.2345678901234567e+19"),
            (0x42dc12218377de66, "123456789012345.6"),
            (0x3f1a36e2eb1c432d, "0.0001"),
            (0x3f202e4b6ce5dc68, "0.00012345"),
            (0x3f1a302cee759401, "9.99e-05"),
            (0x0000000000000001, "5e-324"),
            (0x8000000000000001, "-5e-324"),
            (0x0010000000000000, "2.2250738585072014e-308"),
            (0x7fefffffffffffff, "1.7976931348623157e+308"),
            (0xffefffffffffffff, "-1.7976931348623157e+308"),
            (0x4480f0cf064dd592, "1e+22"),
            (0x44b52d02c7e14af6, "1e+23"),
            (0x4340000000000000, "9007199254740992.0"),
            (0x43e0000000000000, "9.223372036854776e+18"),
            (0x3fd5555555555555, "0.3333333333333333"),
            (0x3fe5555555555555, "0.6666666666666666"),
            (0xbff8000000000000, "-1.5"),
            (0x4059000000000000, "100.0"),
            (0x54b249ad2594c37d, "1e+100"),
            (0x2b2bff2ee48e0530, "1e-100"),
            (0x021497d2855b39d7, "1.23e-298"),
            (0x3fd3333333333334, "0.30000000000000004"),
            (0x40e4b22eab367a18, "42385.45840000006"),
            (0x404aee70a421bbca, "53.862812534781895"),
            (0xc0fe51bb33333333, "-124187.7"),
            (0x40ee6ee000000000, "62327.0"),
            (0x3e7ad7f29abcaf48, "1e-07"),
            (0x3f1a36e2eb1c432c, "9.999999999999999e-05"),
            (0x7e41eb2d66005835, "1.5e+300"),
            (0x43f0000000000000, "1.8446744073709552e+19"),
            (0x43118b54f22aeb03, "1234567890123456.8"),
            (0x4345ee2a2eb5a5c4, "1.2345678901234568e+16"),
            (0x3f0a36e2eb1c432d, "5e-05"),
            (0x3f06ce789e774eec, "4.35e-05"),
            (0x3e080d43de9cc603, "7e-10"),
        ];
        for (bits, expected) in cases {
            let value = f64::from_bits(bits);
            assert_eq!(
                python_float_repr(value).as_deref(),
                Ok(expected),
                "{bits:#018x}"
            );
        }
    }

    #[test]
    fn non_finite_floats_are_errors() {
        for value in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            assert!(matches!(
                python_float_repr(value),
                Err(PyJsonError::NonFiniteFloat { .. })
            ));
        }
    }

    /// 200,000 doubles from `test_vectors::random_double` (SplitMix64 seeded 1717): raw bit
    /// patterns across all exponents, exponents near the fixed/exponent switch, decimal
    /// fractions, scaled integers, subnormals. The digest is SHA-256 over `repr(x) + "\n"` for
    /// all of them as Python 3.11.7 printed them (`gen.py repr 200000` in `test_vectors`).
    #[test]
    fn float_repr_matches_python_on_random_doubles() {
        use sha2::{Digest, Sha256};
        let mut rng = test_vectors::SplitMix64::new(1717);
        let mut digest = Sha256::new();
        for _ in 0..200_000 {
            let value = test_vectors::random_double(&mut rng);
            let repr = python_float_repr(value).expect("finite by construction");
            digest.update(repr.as_bytes());
            digest.update(b"\n");
        }
        assert_eq!(
            test_vectors::hex(&digest.finalize()),
            "05875f312f58cc5ba09408ab593339c7490065cd7feb2357a5a80cbcc9e5e81f"
        );
    }

    /// Expected literals are Python 3.11.7's `json.dumps(s, ensure_ascii=True)`.
    #[test]
    fn string_escaping_matches_python() {
        let cases: [(&str, &str); 10] = [
            ("", r#""""#),
            ("plain ascii", r#""plain ascii""#),
            (
                "quote \" backslash \\ slash /",
                r#""quote \" backslash \\ slash /""#,
            ),
            ("\n\r\t\u{08}\u{0c}", r#""\n\r\t\b\f""#),
            ("\u{00}\u{01}\u{1f}\u{7f}", r#""\u0000\u0001\u001f\u007f""#),
            ("caf\u{e9} \u{ff} \u{100}", r#""caf\u00e9 \u00ff \u0100""#),
            (
                "\u{2028}\u{2029} \u{feff} \u{ffff}",
                r#""\u2028\u2029 \ufeff \uffff""#,
            ),
            (
                "\u{1F600} \u{10000} \u{10FFFF}",
                r#""\ud83d\ude00 \ud800\udc00 \udbff\udfff""#,
            ),
            ("\u{800}\u{d7ff}\u{e000}", r#""\u0800\ud7ff\ue000""#),
            ("<script>&'", r#""<script>&'""#),
        ];
        for (text, expected) in cases {
            assert_eq!(python_string_literal(text), expected, "{text:?}");
        }
    }

    /// 20,000 strings from `test_vectors::random_string` (SplitMix64 seeded 65536), digested as
    /// SHA-256 over `json.dumps(s, ensure_ascii=True) + "\n"` by Python 3.11.7
    /// (`gen.py strings 20000` in `test_vectors`).
    #[test]
    fn string_escaping_matches_python_on_random_strings() {
        use sha2::{Digest, Sha256};
        let mut rng = test_vectors::SplitMix64::new(65536);
        let mut digest = Sha256::new();
        for _ in 0..20_000 {
            let text = test_vectors::random_string(&mut rng);
            digest.update(python_string_literal(&text).as_bytes());
            digest.update(b"\n");
        }
        assert_eq!(
            test_vectors::hex(&digest.finalize()),
            "f7e26d5733d58d6e2b422ff11dfb166b39084f0fa12b6af72b38ded464de69dd"
        );
    }

    /// Expected text is Python 3.11.7's `json.dumps(doc, indent=2, sort_keys=True,
    /// ensure_ascii=True, allow_nan=False)` of the same document.
    #[test]
    fn document_layout_matches_python() {
        let document = json!({
            "z": [],
            "a": {},
            "\u{1F600}": 1,
            "\u{ffff}": -2,
            "B": [1, 2.5, null, true, false, "x", [], {}, [[]]],
            "é": {"y": 18446744073709551615_u64, "x": -9223372036854775808_i64},
            "m": 1e16,
        });
        let expected = concat!(
            "{\n",
            "  \"B\": [\n",
            "    1,\n",
            "    2.5,\n",
            "    null,\n",
            "    true,\n",
            "    false,\n",
            "    \"x\",\n",
            "    [],\n",
            "    {},\n",
            "    [\n",
            "      []\n",
            "    ]\n",
            "  ],\n",
            "  \"a\": {},\n",
            "  \"m\": 1e+16,\n",
            "  \"z\": [],\n",
            "  \"\\u00e9\": {\n",
            "    \"x\": -9223372036854775808,\n",
            "    \"y\": 18446744073709551615\n",
            "  },\n",
            "  \"\\uffff\": -2,\n",
            "  \"\\ud83d\\ude00\": 1\n",
            "}"
        );
        assert_eq!(dumps_sorted(&document).as_deref(), Ok(expected));
        assert_eq!(
            dumps_artifact(&document).map(|text| text.ends_with("}\n")),
            Ok(true)
        );
    }

    #[test]
    fn scalars_and_empty_containers_stand_alone() {
        assert_eq!(dumps_sorted(&json!([])).as_deref(), Ok("[]"));
        assert_eq!(dumps_sorted(&json!({})).as_deref(), Ok("{}"));
        assert_eq!(dumps_sorted(&json!(null)).as_deref(), Ok("null"));
        assert_eq!(dumps_sorted(&json!(0.5)).as_deref(), Ok("0.5"));
        assert_eq!(dumps_artifact(&json!(7)).as_deref(), Ok("7\n"));
    }

    #[test]
    fn parsed_number_kinds_survive_a_round_trip() {
        // Python keeps `62327.0` a float and `62327` an int; so must the parsed Value.
        let parsed: Value =
            serde_json::from_str("[-0.0, 62327.0, 62327, 1e-05, -12]").expect("valid JSON");
        assert_eq!(
            dumps_sorted(&parsed).as_deref(),
            Ok("[\n  -0.0,\n  62327.0,\n  62327,\n  1e-05,\n  -12\n]")
        );
    }
}
