//! Leaf text helpers every layer shares: numbers and counts as labels write them, the dash a
//! missing figure shows, a quoted preview of hostile text for error messages, and safe file-name
//! stems for downloads.
//!
//! Nothing here imports another core module, so any module may use it without closing a circle.

/// What a table cell, card or line shows for a figure there is none of (the file does not say
/// it, or no request gave it): an en dash, the same everywhere on the page and in the report.
pub const MISSING: &str = "–";

/// How many characters of a value [`quoted_preview`] shows before cutting it off with `…`.
pub const QUOTED_PREVIEW_CHARS: usize = 40;

/// Longest file stem [`file_stem`] makes, in characters.
pub const FILE_STEM_MAX_CHARS: usize = 120;

/// A file name stem for downloads made from outside text (a run id, a file name, a chart
/// title): characters outside `[A-Za-z0-9._-]` become `_`, at most [`FILE_STEM_MAX_CHARS`],
/// and `prefix` goes first when the result would be empty or start with a dot (a hidden file,
/// or a bare extension).
pub fn file_stem(text: &str, prefix: &str) -> String {
    let stem: String = text
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .take(FILE_STEM_MAX_CHARS)
        .collect();
    if stem.is_empty() || stem.starts_with('.') {
        format!("{prefix}{stem}")
    } else {
        stem
    }
}

/// A count with thousands separators (10000 → "10,000"), as subtitles write counts.
pub fn format_count(count: usize) -> String {
    let digits = count.to_string();
    let mut grouped = String::with_capacity(digits.len() + digits.len() / 3);
    for (position, digit) in digits.chars().enumerate() {
        if position > 0 && (digits.len() - position) % 3 == 0 {
            grouped.push(',');
        }
        grouped.push(digit);
    }
    grouped
}

/// A number for labels: whole numbers without decimals, else fewer decimals as magnitude grows
/// (1234.5 → 1235, 12.35 → 12.3, 4.3109 → 4.31, 0.3333 → 0.333).
pub fn format_number(value: f64) -> String {
    if !value.is_finite() {
        return "n/a".to_owned();
    }
    let magnitude = value.abs();
    if magnitude >= 100.0 || (value.fract() == 0.0 && magnitude < 1e15) {
        format!("{value:.0}")
    } else if magnitude >= 10.0 {
        format!("{value:.1}")
    } else if magnitude >= 1.0 {
        format!("{value:.2}")
    } else {
        format!("{value:.3}")
    }
}

/// A rate or statistic for labels and cards: a whole number with thousands separators from
/// 1,000 up (12,346), else [`format_number`]'s digits (412, 3.46).
pub fn format_grouped_number(value: f64) -> String {
    grouped_whole(value).unwrap_or_else(|| format_number(value))
}

/// A statistic for a table cell: two decimals (4.31, 412.35), a whole number with thousands
/// separators from 1,000 up (13,418, not 13417.65), and [`MISSING`] when there is none.
pub fn format_table_number(value: Option<f64>) -> String {
    value.map_or_else(
        || MISSING.to_owned(),
        |value| grouped_whole(value).unwrap_or_else(|| format!("{value:.2}")),
    )
}

/// `value` to one decimal with its unit after a space ("12.3 ms", or "12.3" when `unit` is
/// empty), and [`MISSING`] when there is none: the live figures and the sweep's columns.
pub fn format_tenths(value: Option<f64>, unit: &str) -> String {
    match value {
        None => MISSING.to_owned(),
        Some(value) if unit.is_empty() => format!("{value:.1}"),
        Some(value) => format!("{value:.1} {unit}"),
    }
}

/// `text`, or [`MISSING`] when there is none.
pub fn or_missing(text: Option<String>) -> String {
    text.unwrap_or_else(|| MISSING.to_owned())
}

/// A finite `value` of magnitude 1,000 or more rounded to a whole number with thousands
/// separators (-1,500, 13,418); `None` below that, where decimals still say something.
fn grouped_whole(value: f64) -> Option<String> {
    if !value.is_finite() || value.abs() < 1_000.0 {
        return None;
    }
    let whole = format_count(value.abs().round() as usize);
    Some(if value < 0.0 {
        format!("-{whole}")
    } else {
        whole
    })
}

/// `count` and the noun, plural when it is not 1, the count with thousands separators:
/// `counted(1, "endpoint", "endpoints")` → "1 endpoint", `counted(1200, …)` → "1,200 endpoints".
pub fn counted(count: u64, one: &str, many: &str) -> String {
    let noun = if count == 1 { one } else { many };
    format!(
        "{} {noun}",
        format_count(usize::try_from(count).unwrap_or(usize::MAX))
    )
}

/// A short time for people, in the unit that suits it, three significant digits at most:
/// 0.004999999888 ms → "5 µs", 0.1 → "100 µs", 1.25 → "1.25 ms", 20 → "20 ms", 1500 → "1.5 s".
pub fn format_duration_ms(ms: f64) -> String {
    if !ms.is_finite() {
        return "n/a".to_owned();
    }
    let (value, unit) = if ms.abs() < 1.0 {
        (ms * 1000.0, "µs")
    } else if ms.abs() < 1000.0 {
        (ms, "ms")
    } else {
        (ms / 1000.0, "s")
    };
    format!("{} {unit}", significant(value, 3))
}

/// `value` to `digits` significant digits, without trailing zeros (4.99999 → "5", 1.2345 → "1.23").
fn significant(value: f64, digits: i32) -> String {
    if value == 0.0 {
        return "0".to_owned();
    }
    let magnitude = value.abs().log10().floor() as i32;
    let decimals = (digits - 1 - magnitude).max(0) as usize;
    let text = format!("{value:.decimals$}");
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_owned()
    } else {
        text
    }
}

/// A quoted, escaped, shortened rendering of user text for messages (pasted text can be huge).
pub fn quoted_preview(text: &str) -> String {
    let mut chars = text.chars();
    let head: String = chars.by_ref().take(QUOTED_PREVIEW_CHARS).collect();
    if chars.next().is_some() {
        format!("{head:?}…")
    } else {
        format!("{head:?}")
    }
}

/// A size for people: "812 B", "12.3 KB", "4.1 MB" (powers of 1,024).
pub fn format_bytes(bytes: usize) -> String {
    const KB: f64 = 1024.0;
    let value = bytes as f64;
    if value < KB {
        format!("{bytes} B")
    } else if value < KB * KB {
        format!("{:.1} KB", value / KB)
    } else {
        format!("{:.1} MB", value / (KB * KB))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_in_bytes_kb_and_mb() {
        assert_eq!(format_bytes(812), "812 B");
        assert_eq!(format_bytes(12_595), "12.3 KB");
        assert_eq!(format_bytes(4_300_000), "4.1 MB");
    }

    #[test]
    fn file_stems_are_safe_whatever_the_text() {
        assert_eq!(
            file_stem("benchmark-20261129T220721Z", "x"),
            "benchmark-20261129T220721Z"
        );
        assert_eq!(file_stem("run/../é id:1", "x"), "run_..___id_1");
        assert_eq!(
            file_stem("TTFT CDF <img src=x>", "x"),
            "TTFT_CDF__img_src_x_"
        );
        assert_eq!(file_stem("", "strobe-run"), "strobe-run");
        assert_eq!(file_stem(".hidden", "strobe-run"), "strobe-run.hidden");
        assert_eq!(file_stem(&"a".repeat(500), "x").len(), FILE_STEM_MAX_CHARS);
    }

    #[test]
    fn counted_nouns_agree_with_their_count() {
        assert_eq!(counted(1, "endpoint", "endpoints"), "1 endpoint");
        assert_eq!(counted(0, "request", "requests"), "0 requests");
        assert_eq!(counted(4, "request", "requests"), "4 requests");
        assert_eq!(counted(12_000, "request", "requests"), "12,000 requests");
    }

    #[test]
    fn durations_take_the_unit_that_suits_them() {
        assert_eq!(format_duration_ms(0.004999999888241291), "5 µs");
        assert_eq!(format_duration_ms(0.1), "100 µs");
        assert_eq!(format_duration_ms(0.0125), "12.5 µs");
        assert_eq!(format_duration_ms(1.25), "1.25 ms");
        assert_eq!(format_duration_ms(1.23456), "1.23 ms");
        assert_eq!(format_duration_ms(20.0), "20 ms");
        assert_eq!(format_duration_ms(999.4), "999 ms");
        assert_eq!(format_duration_ms(1500.0), "1.5 s");
        assert_eq!(format_duration_ms(0.0), "0 µs");
        assert_eq!(format_duration_ms(f64::NAN), "n/a");
    }

    #[test]
    fn counts_get_thousands_separators() {
        assert_eq!(format_count(0), "0");
        assert_eq!(format_count(999), "999");
        assert_eq!(format_count(1_000), "1,000");
        assert_eq!(format_count(10_000), "10,000");
        assert_eq!(format_count(1_234_567), "1,234,567");
    }

    #[test]
    fn grouped_numbers_group_from_a_thousand_up() {
        assert_eq!(format_grouped_number(12_345.6), "12,346");
        assert_eq!(format_grouped_number(1_000.0), "1,000");
        assert_eq!(format_grouped_number(999.6), "1000");
        assert_eq!(format_grouped_number(3.456), "3.46");
        assert_eq!(format_grouped_number(-2_500.4), "-2,500");
        assert_eq!(format_grouped_number(f64::INFINITY), "n/a");
    }

    #[test]
    fn table_numbers_keep_two_decimals_below_a_thousand() {
        assert_eq!(format_table_number(Some(13_417.65)), "13,418");
        assert_eq!(format_table_number(Some(1_234_567.0)), "1,234,567");
        assert_eq!(format_table_number(Some(999.994)), "999.99");
        assert_eq!(format_table_number(Some(4.3109)), "4.31");
        assert_eq!(format_table_number(Some(0.004)), "0.00");
        assert_eq!(format_table_number(Some(-1_500.0)), "-1,500");
        assert_eq!(format_table_number(Some(f64::NAN)), "NaN");
        assert_eq!(format_table_number(None), MISSING);
    }

    #[test]
    fn tenths_carry_their_unit_or_the_dash() {
        assert_eq!(format_tenths(Some(12.345), "ms"), "12.3 ms");
        assert_eq!(format_tenths(Some(1_234.56), "tok/s"), "1234.6 tok/s");
        assert_eq!(format_tenths(Some(0.04), ""), "0.0");
        assert_eq!(format_tenths(None, "ms"), "–");
        assert_eq!(or_missing(Some("412 ms".to_owned())), "412 ms");
        assert_eq!(or_missing(None), "–");
    }

    #[test]
    fn numbers_lose_decimals_as_they_grow() {
        assert_eq!(format_number(12345.678), "12346");
        assert_eq!(format_number(42.25), "42.2");
        assert_eq!(format_number(4.3109), "4.31");
        assert_eq!(format_number(0.33330124), "0.333");
        assert_eq!(format_number(-0.5), "-0.500");
        assert_eq!(format_number(0.0), "0");
        assert_eq!(format_number(4.0), "4");
        assert_eq!(format_number(f64::NAN), "n/a");
    }
}
