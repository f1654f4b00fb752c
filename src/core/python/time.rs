//! Calendar time as the reference producer's Python writes and reads it: Unix nanoseconds to
//! the UTC second of `started_at` / `run_id` labels (§8.1, §11.6), and ISO-8601 labels read the
//! way `datetime.fromisoformat` reads them (§11.6). Pure integer arithmetic, no clock.

// ---------------------------------------------------------------------------------------------
// Time labels (§8.1, §11.6)
// ---------------------------------------------------------------------------------------------

/// A UTC calendar time to the second.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UtcSecond {
    /// Proleptic Gregorian year.
    pub year: i64,
    /// 1..=12.
    pub month: u32,
    /// 1..=31.
    pub day: u32,
    /// 0..=23.
    pub hour: u32,
    /// 0..=59.
    pub minute: u32,
    /// 0..=59.
    pub second: u32,
}

impl UtcSecond {
    /// The second containing `unix_ns`, by integer floor division (so a time 0.1 µs before a
    /// second boundary stays in the earlier second, which is what readers check, §11.6).
    pub fn from_unix_ns(unix_ns: i64) -> Self {
        let seconds = unix_ns.div_euclid(1_000_000_000);
        let days = seconds.div_euclid(86_400);
        // 0..86_400, so the narrowing below cannot lose anything.
        let second_of_day = seconds.rem_euclid(86_400) as u32;
        let (year, month, day) = civil_from_days(days);
        Self {
            year,
            month,
            day,
            hour: second_of_day / 3_600,
            minute: second_of_day / 60 % 60,
            second: second_of_day % 60,
        }
    }

    /// `%Y-%m-%dT%H:%M:%SZ`, the `started_at` / `finished_at` label.
    pub fn iso_label(&self) -> String {
        format!(
            "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z",
            self.year, self.month, self.day, self.hour, self.minute, self.second
        )
    }

    /// `benchmark-%Y%m%dT%H%M%SZ`, the `run_id`.
    pub fn run_id(&self) -> String {
        format!(
            "benchmark-{:04}{:02}{:02}T{:02}{:02}{:02}Z",
            self.year, self.month, self.day, self.hour, self.minute, self.second
        )
    }
}

/// The proleptic Gregorian (year, month, day) of a day count since 1970-01-01 (Howard
/// Hinnant's `civil_from_days`; shifting the year to start in March puts the leap day last).
pub fn civil_from_days(days_since_epoch: i64) -> (i64, u32, u32) {
    let shifted = days_since_epoch + 719_468;
    let era = shifted.div_euclid(146_097);
    let day_of_era = shifted.rem_euclid(146_097);
    let year_of_era =
        (day_of_era - day_of_era / 1_460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_from_march = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_from_march + 2) / 5 + 1;
    let month = if month_from_march < 10 {
        month_from_march + 3
    } else {
        month_from_march - 9
    };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    // Both are small and positive by construction (1..=31, 1..=12).
    (year, month as u32, day as u32)
}

// ---------------------------------------------------------------------------------------------
// ISO-8601 labels.
// ---------------------------------------------------------------------------------------------

/// Why an ISO-8601 label could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IsoLabelError {
    /// The text does not have the `YYYY-MM-DDTHH:MM[:SS[.f]][Z|±HH[:MM]]` shape.
    #[error(
        "{label:?} is not an ISO-8601 date-time ({reason}); write it like 2026-10-05T11:42:24Z"
    )]
    Malformed {
        /// The offending label.
        label: String,
        /// Which part could not be read.
        reason: &'static str,
    },
    /// A field is out of its calendar range (month 13, 24:00, February 30…).
    #[error("{label:?} has an out-of-range {field}; check the date and time")]
    OutOfRange {
        /// The offending label.
        label: String,
        /// The field that is out of range.
        field: &'static str,
    },
}

/// An ISO-8601 date-time as Python's `datetime.fromisoformat` reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IsoLabel {
    /// The written civil date-time as seconds since 1970-01-01T00:00:00, ignoring any offset.
    pub civil_seconds: i64,
    /// The UTC offset in seconds, or `None` for a naive label without a timezone.
    pub utc_offset_seconds: Option<i64>,
    /// Microseconds of the written fraction (digits beyond the sixth are ignored, as in Python).
    pub microsecond: u32,
}

impl IsoLabel {
    /// Whole Unix seconds (floor), or `None` for a naive label.
    pub fn unix_seconds(&self) -> Option<i64> {
        self.utc_offset_seconds
            .map(|offset| self.civil_seconds - offset)
    }
}

/// Days from 1970-01-01 to the given proleptic Gregorian date (Howard Hinnant's algorithm).
pub fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let month = i64::from(month);
    let shifted_month = if month > 2 { month - 3 } else { month + 9 };
    let day_of_year = (153 * shifted_month + 2) / 5 + i64::from(day) - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

fn days_in_month(year: i64, month: u32) -> u32 {
    match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        _ if (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 => 29,
        _ => 28,
    }
}

/// Reads an ISO-8601 date-time: `YYYY-MM-DD`, then `T` or a space, `HH:MM[:SS[.fraction]]`,
/// then optionally `Z` or `±HH[:MM[:SS]]` / `±HHMM`. This is the subset of Python 3.11's
/// `fromisoformat` that artifact writers produce.
pub fn parse_iso8601(label: &str) -> Result<IsoLabel, IsoLabelError> {
    let malformed = |reason| IsoLabelError::Malformed {
        label: label.to_string(),
        reason,
    };
    let out_of_range = |field| IsoLabelError::OutOfRange {
        label: label.to_string(),
        field,
    };
    let bytes = label.as_bytes();
    let mut cursor = Cursor { bytes, position: 0 };
    let year = cursor
        .digits(4)
        .ok_or_else(|| malformed("expected a four-digit year"))?;
    cursor
        .expect(b'-')
        .ok_or_else(|| malformed("expected '-' after the year"))?;
    let month = cursor
        .digits(2)
        .ok_or_else(|| malformed("expected a two-digit month"))?;
    cursor
        .expect(b'-')
        .ok_or_else(|| malformed("expected '-' after the month"))?;
    let day = cursor
        .digits(2)
        .ok_or_else(|| malformed("expected a two-digit day"))?;
    if !matches!(cursor.next(), Some(b'T' | b' ')) {
        return Err(malformed("expected 'T' between the date and the time"));
    }
    let hour = cursor
        .digits(2)
        .ok_or_else(|| malformed("expected a two-digit hour"))?;
    cursor
        .expect(b':')
        .ok_or_else(|| malformed("expected ':' after the hour"))?;
    let minute = cursor
        .digits(2)
        .ok_or_else(|| malformed("expected two-digit minutes"))?;
    let mut second = 0;
    let mut microsecond = 0;
    if cursor.peek() == Some(b':') {
        cursor.position += 1;
        second = cursor
            .digits(2)
            .ok_or_else(|| malformed("expected two-digit seconds"))?;
        if matches!(cursor.peek(), Some(b'.' | b',')) {
            cursor.position += 1;
            let start = cursor.position;
            while cursor.peek().is_some_and(|byte| byte.is_ascii_digit()) {
                cursor.position += 1;
            }
            let fraction = &bytes[start..cursor.position];
            if fraction.is_empty() {
                return Err(malformed("expected digits after the decimal point"));
            }
            for place in 0..6 {
                let digit = fraction.get(place).map_or(0, |byte| u32::from(byte - b'0'));
                microsecond = microsecond * 10 + digit;
            }
        }
    }
    let utc_offset_seconds = match cursor.next() {
        None => None,
        Some(b'Z') => Some(0),
        Some(sign @ (b'+' | b'-')) => {
            let hours = cursor
                .digits(2)
                .ok_or_else(|| malformed("expected a two-digit offset hour"))?;
            let mut minutes = 0;
            let mut seconds = 0;
            if cursor.peek() == Some(b':') {
                cursor.position += 1;
                minutes = cursor
                    .digits(2)
                    .ok_or_else(|| malformed("expected two-digit offset minutes"))?;
                if cursor.peek() == Some(b':') {
                    cursor.position += 1;
                    seconds = cursor
                        .digits(2)
                        .ok_or_else(|| malformed("expected two-digit offset seconds"))?;
                }
            } else if cursor.peek().is_some_and(|byte| byte.is_ascii_digit()) {
                minutes = cursor
                    .digits(2)
                    .ok_or_else(|| malformed("expected two-digit offset minutes"))?;
            }
            if minutes > 59 || seconds > 59 {
                return Err(out_of_range("UTC offset"));
            }
            let total = hours * 3600 + minutes * 60 + seconds;
            if total >= 86_400 {
                return Err(out_of_range("UTC offset"));
            }
            Some(if sign == b'-' { -total } else { total })
        }
        Some(_) => return Err(malformed("unexpected text after the time")),
    };
    if cursor.peek().is_some() {
        return Err(malformed("unexpected text after the timezone"));
    }
    if year < 1 {
        return Err(out_of_range("year"));
    }
    let month = u32::try_from(month)
        .ok()
        .filter(|m| (1..=12).contains(m))
        .ok_or_else(|| out_of_range("month"))?;
    let day = u32::try_from(day)
        .ok()
        .filter(|d| *d >= 1 && *d <= days_in_month(year, month))
        .ok_or_else(|| out_of_range("day"))?;
    if hour > 23 {
        return Err(out_of_range("hour"));
    }
    if minute > 59 {
        return Err(out_of_range("minute"));
    }
    if second > 59 {
        return Err(out_of_range("second"));
    }
    let civil_seconds =
        days_from_civil(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second;
    Ok(IsoLabel {
        civil_seconds,
        utc_offset_seconds,
        microsecond,
    })
}

struct Cursor<'a> {
    bytes: &'a [u8],
    position: usize,
}

impl Cursor<'_> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.position).copied()
    }

    fn next(&mut self) -> Option<u8> {
        let byte = self.peek()?;
        self.position += 1;
        Some(byte)
    }

    fn expect(&mut self, wanted: u8) -> Option<()> {
        (self.next()? == wanted).then_some(())
    }

    /// Exactly `count` ASCII digits as a number.
    fn digits(&mut self, count: usize) -> Option<i64> {
        let slice = self.bytes.get(self.position..self.position + count)?;
        if !slice.iter().all(u8::is_ascii_digit) {
            return None;
        }
        self.position += count;
        Some(
            slice
                .iter()
                .fold(0, |total, byte| total * 10 + i64::from(byte - b'0')),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Expected day counts from Python: `(date(y, m, d) - date(1970, 1, 1)).days`.
    #[test]
    fn days_from_civil_matches_python() {
        let vectors = [
            ((1970, 1, 1), 0),
            ((1969, 12, 31), -1),
            ((2000, 2, 29), 11_016),
            ((2026, 10, 5), 20_731),
            ((1, 1, 1), -719_162),
            ((9999, 12, 31), 2_932_896),
            ((2024, 3, 1), 19_783),
            ((1600, 2, 29), -135_081),
        ];
        for ((year, month, day), days) in vectors {
            assert_eq!(
                days_from_civil(year, month, day),
                days,
                "{year}-{month}-{day}"
            );
        }
    }

    /// Expected seconds and microseconds from Python 3.11:
    /// `datetime.fromisoformat(s.replace("Z", "+00:00"))`, then `.timestamp()` / `.microsecond`.
    #[test]
    fn iso_labels_parse_like_python_fromisoformat() {
        let vectors = [
            ("2026-10-05T11:42:24Z", 1_791_200_544, 0),
            ("2026-10-05T11:42:24+00:00", 1_791_200_544, 0),
            ("2026-10-05 13:42:24.000+02:00", 1_791_200_544, 0),
            ("2026-10-05T06:12:24-0530", 1_791_200_544, 0),
            ("2026-10-05T11:42:24.5Z", 1_791_200_544, 500_000),
            ("2026-10-05T11:42:24.1234567Z", 1_791_200_544, 123_456),
            ("2026-10-05T11:42Z", 1_791_200_520, 0),
            ("2026-10-05T11:42:24+05", 1_791_182_544, 0),
        ];
        for (label, seconds, microsecond) in vectors {
            let parsed = parse_iso8601(label).unwrap_or_else(|error| panic!("{label}: {error}"));
            assert_eq!(parsed.unix_seconds(), Some(seconds), "{label}");
            assert_eq!(parsed.microsecond, microsecond, "{label}");
        }
    }

    #[test]
    fn iso_labels_without_timezone_are_naive() {
        let parsed = parse_iso8601("2026-10-05T11:42:24").expect("parses");
        assert_eq!(parsed.utc_offset_seconds, None);
        assert_eq!(parsed.unix_seconds(), None);
    }

    #[test]
    fn malformed_or_out_of_range_iso_labels_are_errors() {
        for label in [
            "",
            "yesterday",
            "2026-10-05",
            "2026-10-05T11",
            "2026-1-05T11:42:24Z",
            "2026-10-05T11:42:24.Z",
            "2026-10-05T11:42:24Zjunk",
            "2026-10-05T11:42:24 UTC",
            "२०२६-10-05T11:42:24Z",
        ] {
            assert!(
                matches!(parse_iso8601(label), Err(IsoLabelError::Malformed { .. })),
                "{label:?} should be malformed"
            );
        }
        for label in [
            "2026-13-05T11:42:24Z",
            "2026-02-29T11:42:24Z",
            "2026-10-05T24:00:00Z",
            "2026-10-05T11:60:00Z",
            "2026-10-05T11:42:60Z",
            "0000-01-01T00:00:00Z",
            "2026-10-05T11:42:24+24:00",
        ] {
            assert!(
                matches!(parse_iso8601(label), Err(IsoLabelError::OutOfRange { .. })),
                "{label:?} should be out of range"
            );
        }
        assert!(
            parse_iso8601("2024-02-29T00:00:00Z").is_ok(),
            "2024 is a leap year"
        );
    }

    #[test]
    fn civil_from_days_inverts_days_from_civil() {
        // Every day from 1600-01-01 to 2400-01-01, against the validator's own inverse.
        for days in -135_140..157_800 {
            let (year, month, day) = civil_from_days(days);
            assert_eq!(
                days_from_civil(year, month, day),
                days,
                "{year}-{month}-{day}"
            );
        }
    }

    #[test]
    fn labels_floor_to_the_second_and_know_leap_years() {
        // Expected labels from CPython 3.11: datetime(1970, 1, 1, tzinfo=utc)
        // + timedelta(seconds=ns // 10**9), formatted with strftime.
        let cases: [(i64, &str); 17] = [
            (0, "1970-01-01T00:00:00Z"),
            (999_999_999, "1970-01-01T00:00:00Z"),
            (1_000_000_000, "1970-01-01T00:00:01Z"),
            (-1, "1969-12-31T23:59:59Z"),
            (-1_000_000_000, "1969-12-31T23:59:59Z"),
            (-1_000_000_001, "1969-12-31T23:59:58Z"),
            (951_782_400_000_000_000, "2000-02-29T00:00:00Z"),
            (951_868_799_999_999_999, "2000-02-29T23:59:59Z"),
            (951_868_800_000_000_000, "2000-03-01T00:00:00Z"),
            (1_709_164_800_000_000_000, "2024-02-29T00:00:00Z"),
            (1_709_251_199_999_999_999, "2024-02-29T23:59:59Z"),
            (1_735_689_599_999_999_999, "2024-12-31T23:59:59Z"),
            (1_735_689_600_000_000_000, "2025-01-01T00:00:00Z"),
            (4_107_542_399_000_000_000, "2100-02-28T23:59:59Z"),
            (4_107_542_400_000_000_000, "2100-03-01T00:00:00Z"),
            (i64::MAX, "2262-04-11T23:47:16Z"),
            (i64::MIN, "1677-09-21T00:12:43Z"),
        ];
        for (unix_ns, label) in cases {
            assert_eq!(
                UtcSecond::from_unix_ns(unix_ns).iso_label(),
                label,
                "{unix_ns}"
            );
        }
        // Float seconds (ns / 1e9) would round this up to :25; readers check ns // 1e9.
        let near_boundary = UtcSecond::from_unix_ns(1_791_200_544_999_999_999);
        assert_eq!(near_boundary.run_id(), "benchmark-20261005T114224Z");
    }
}
