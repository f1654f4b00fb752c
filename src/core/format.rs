//! Leaf text helpers every layer shares: numbers and counts as labels write them, a quoted
//! preview of hostile text for error messages, and safe file-name stems for downloads.
//!
//! Nothing here imports another core module, so any module may use it without closing a circle.

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
