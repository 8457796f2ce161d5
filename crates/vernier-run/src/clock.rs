//! The wall clock beside the monotonic one.

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Milliseconds since the Unix epoch now (0 on a clock set before 1970).
pub fn unix_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// `unix_ms` as a UTC date and minute, `2026-12-02 23:16 UTC`, for reports and chart titles.
pub fn utc_minute(unix_ms: u64) -> String {
    let (year, month, day, hour, minute, _) = utc_parts(unix_ms);
    format!("{year:04}-{month:02}-{day:02} {hour:02}:{minute:02} UTC")
}

/// `unix_ms` as a UTC time that sorts and names a folder, `2026-12-02T23-16-21`.
pub fn utc_folder_name(unix_ms: u64) -> String {
    let (year, month, day, hour, minute, second) = utc_parts(unix_ms);
    format!("{year:04}-{month:02}-{day:02}T{hour:02}-{minute:02}-{second:02}")
}

/// Year, month, day, hour, minute and second in UTC.
fn utc_parts(unix_ms: u64) -> (i64, i64, i64, u64, u64, u64) {
    let seconds = unix_ms / 1000;
    let days = i64::try_from(seconds / 86_400).unwrap_or(i64::MAX / 2);
    let (hour, minute, second) = (
        (seconds % 86_400) / 3600,
        (seconds % 3600) / 60,
        seconds % 60,
    );
    // Days to a civil date (proleptic Gregorian), after H. Hinnant's `civil_from_days`.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z.rem_euclid(146_097);
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_index = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_index + 2) / 5 + 1;
    let month = if month_index < 10 {
        month_index + 3
    } else {
        month_index - 9
    };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day, hour, minute, second)
}

/// `unix_ms` as an RFC 3339 instant in UTC with milliseconds, `2026-12-02T23:16:21.250Z`.
pub fn rfc3339_ms(unix_ms: u64) -> String {
    let (year, month, day, hour, minute, second) = utc_parts(unix_ms);
    format!(
        "{year:04}-{month:02}-{day:02}T{hour:02}:{minute:02}:{second:02}.{:03}Z",
        unix_ms % 1000
    )
}

/// Days from 1970-01-01 to a civil date (proleptic Gregorian), after H. Hinnant's
/// `days_from_civil`.
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let month_index = if month > 2 { month - 3 } else { month + 9 };
    let day_of_year = (153 * month_index + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

/// An RFC 3339 instant (`2026-12-04T18:00:00Z`, `2026-12-04T19:00:00.5+01:00`; `T` or a space
/// between date and time, fractions to the millisecond) in milliseconds since the Unix epoch;
/// the error says what is wrong with `text`.
pub fn parse_rfc3339_ms(text: &str) -> Result<u64, String> {
    let bad = |why: &str| {
        format!("{text:?} is not an RFC 3339 instant ({why}); give e.g. 2026-12-04T18:00:00Z")
    };
    let bytes = text.trim().as_bytes();
    let number = |from: usize, len: usize| -> Result<i64, String> {
        let part = bytes
            .get(from..from + len)
            .ok_or_else(|| bad("too short"))?;
        if !part.iter().all(u8::is_ascii_digit) {
            return Err(bad("a digit is missing"));
        }
        std::str::from_utf8(part)
            .ok()
            .and_then(|digits| digits.parse::<i64>().ok())
            .ok_or_else(|| bad("a digit is missing"))
    };
    let separator = |at: usize, allowed: &[u8]| -> Result<(), String> {
        match bytes.get(at) {
            Some(found) if allowed.contains(found) => Ok(()),
            _ => Err(bad("a separator is missing")),
        }
    };
    let (year, month, day) = (number(0, 4)?, number(5, 2)?, number(8, 2)?);
    separator(4, b"-")?;
    separator(7, b"-")?;
    separator(10, b"Tt ")?;
    let (hour, minute, second) = (number(11, 2)?, number(14, 2)?, number(17, 2)?);
    separator(13, b":")?;
    separator(16, b":")?;
    let days_in_month = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) => 29,
        2 => 28,
        _ => return Err(bad("the month is not 01 to 12")),
    };
    if !(1..=days_in_month).contains(&day) || hour > 23 || minute > 59 || second > 60 {
        return Err(bad("a field is out of range"));
    }
    let mut at = 19;
    let mut millis = 0;
    if bytes.get(at) == Some(&b'.') {
        at += 1;
        let digits = bytes[at..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count();
        if digits == 0 {
            return Err(bad("a fraction has no digits"));
        }
        for (place, scale) in [100, 10, 1].into_iter().enumerate() {
            if place < digits {
                millis += (i64::from(bytes[at + place]) - i64::from(b'0')) * scale;
            }
        }
        at += digits;
    }
    let offset_minutes = match bytes.get(at) {
        Some(b'Z' | b'z') if at + 1 == bytes.len() => 0,
        Some(sign @ (b'+' | b'-')) if at + 6 == bytes.len() => {
            separator(at + 3, b":")?;
            let minutes = number(at + 1, 2)? * 60 + number(at + 4, 2)?;
            if *sign == b'+' { minutes } else { -minutes }
        }
        _ => return Err(bad("it needs a zone: Z or an offset such as +01:00")),
    };
    let seconds =
        days_from_civil(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second.min(59)
            - offset_minutes * 60;
    u64::try_from(seconds * 1000 + millis).map_err(|_| bad("it is before 1970"))
}

/// One reading of the monotonic and the wall clock together, so that every instant of a run
/// maps to the wall clock by the same offset (differences stay exact durations).
#[derive(Debug, Clone, Copy)]
pub struct ClockAnchor {
    instant: Instant,
    unix_ns: u64,
}

impl ClockAnchor {
    /// Reads both clocks now.
    pub fn now() -> Self {
        let unix_ns = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX));
        Self {
            instant: Instant::now(),
            unix_ns,
        }
    }

    /// `at` in nanoseconds since the Unix epoch.
    pub fn unix_ns(&self, at: Instant) -> u64 {
        let nanos = |d: Duration| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
        if at >= self.instant {
            self.unix_ns.saturating_add(nanos(at - self.instant))
        } else {
            self.unix_ns.saturating_sub(nanos(self.instant - at))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utc_minutes_agree_with_gnu_date() {
        // Golden values from GNU coreutils: `date -u -d @SECONDS '+%Y-%m-%d %H:%M UTC'`.
        assert_eq!(utc_minute(1_796_253_381_000), "2026-12-02 23:16 UTC");
        // A leap day in a year divisible by 400.
        assert_eq!(utc_minute(951_782_400_000), "2000-02-29 00:00 UTC");
        assert_eq!(utc_minute(0), "1970-01-01 00:00 UTC");
        assert_eq!(utc_folder_name(1_796_253_381_000), "2026-12-02T23-16-21");
    }

    #[test]
    fn rfc3339_instants_agree_with_gnu_date() {
        // Golden values from GNU coreutils: `date -u -d '2026-12-02T23:16:21Z' +%s` and
        // `date -u -d '2000-02-29T12:00:00+02:30' +%s`.
        assert_eq!(
            parse_rfc3339_ms("2026-12-02T23:16:21Z"),
            Ok(1_796_253_381_000)
        );
        assert_eq!(
            parse_rfc3339_ms("2026-12-02 23:16:21.25z"),
            Ok(1_796_253_381_250)
        );
        assert_eq!(
            parse_rfc3339_ms("2000-02-29T12:00:00+02:30"),
            Ok(951_816_600_000)
        );
        assert_eq!(parse_rfc3339_ms("1970-01-01T00:00:00.123456Z"), Ok(123));
        assert_eq!(rfc3339_ms(1_796_253_381_250), "2026-12-02T23:16:21.250Z");
        for bad in [
            "2026-12-02T23:16:21",
            "2026-13-02T23:16:21Z",
            "2025-02-29T00:00:00Z",
            "tomorrow",
            "2026-12-02T23:16Z",
            "1969-12-31T23:59:59Z",
        ] {
            let error = parse_rfc3339_ms(bad).expect_err(bad);
            assert!(error.contains("2026-12-04T18:00:00Z"), "{error}");
        }
    }

    #[test]
    fn instants_keep_their_distances_on_the_wall_clock() {
        let anchor = ClockAnchor::now();
        let base = Instant::now();
        let later = base + Duration::from_millis(1500);
        assert_eq!(anchor.unix_ns(later) - anchor.unix_ns(base), 1_500_000_000);
        if let Some(earlier) = base.checked_sub(Duration::from_millis(2)) {
            assert_eq!(anchor.unix_ns(base) - anchor.unix_ns(earlier), 2_000_000);
        }
    }
}

/// The longest wait, timeout or duration a flag may give: seven days.
pub const MAX_SECONDS: f64 = 7.0 * 24.0 * 3600.0;

/// An instant `flag` gives (ms since the Unix epoch), checked against the clock: at most
/// seven days ([`MAX_SECONDS`]) ahead of `now_ms`, so a wrong year or unit is refused rather
/// than waited for.
pub fn instant_ahead(flag: &str, at_ms: u64, now_ms: u64) -> Result<u64, crate::RunError> {
    const MAX_AHEAD_MS: u64 = 7 * 24 * 3600 * 1000;
    let limit_ms = now_ms.saturating_add(MAX_AHEAD_MS);
    if at_ms > limit_ms {
        return Err(crate::RunError::invalid(
            flag,
            format!(
                "{} is more than 7 days ahead (the latest this run waits for is {}); give an instant within the week, e.g. a few minutes from now",
                rfc3339_ms(at_ms),
                rfc3339_ms(limit_ms)
            ),
        ));
    }
    Ok(at_ms)
}

/// `value` seconds given by `flag`, checked the one way every engine checks them: a number
/// above 0 (or from 0 when `zero_allowed`) and at most seven days ([`MAX_SECONDS`]); anything
/// else, NaN and infinities included, is a refused flag.
pub fn seconds(flag: &str, value: f64, zero_allowed: bool) -> Result<Duration, crate::RunError> {
    let low_ok = if zero_allowed {
        value >= 0.0
    } else {
        value > 0.0
    };
    if !(low_ok && value <= MAX_SECONDS) {
        return Err(crate::RunError::invalid(
            flag,
            format!(
                "{value} is not a number of seconds {} 604800 (7 days)",
                if zero_allowed {
                    "from 0 to"
                } else {
                    "above 0, at most"
                }
            ),
        ));
    }
    Duration::try_from_secs_f64(value)
        .map_err(|error| crate::RunError::invalid(flag, error.to_string()))
}

#[cfg(test)]
mod seconds_tests {
    use super::*;

    #[test]
    fn an_instant_years_ahead_is_refused_naming_the_limit() {
        let now = 1_800_000_000_000;
        assert_eq!(
            instant_ahead("--start-at", now + 60_000, now).ok(),
            Some(now + 60_000)
        );
        assert_eq!(
            instant_ahead("--start-at", now - 60_000, now).ok(),
            Some(now - 60_000)
        );
        let year_2099 = parse_rfc3339_ms("2099-01-01T00:00:00Z").expect("an instant");
        let error = instant_ahead("--start-at", year_2099, now).expect_err("years ahead");
        let text = error.to_string();
        assert!(
            text.starts_with("use --start-at: 2099-01-01T00:00:00"),
            "{text}"
        );
        assert!(text.contains("more than 7 days ahead"), "{text}");
        assert_eq!(vernier_cli::Failure::exit_code(&error), 2);
    }

    #[test]
    fn seconds_beyond_seven_days_or_below_the_floor_are_refused() {
        assert!(seconds("--idle-timeout-s", 1e20, false).is_err());
        assert!(seconds("--idle-timeout-s", 0.0, false).is_err());
        assert!(seconds("--idle-timeout-s", f64::NAN, false).is_err());
        assert!(seconds("--busy-wait-cap-s", f64::INFINITY, true).is_err());
        assert!(seconds("--grace", -1.0, true).is_err());
        assert_eq!(
            seconds("--idle-timeout-s", 604_800.0, false).ok(),
            Some(Duration::from_secs(604_800))
        );
        assert_eq!(seconds("--grace", 0.0, true).ok(), Some(Duration::ZERO));
        let error = seconds("--timeout", 1e9, true).expect_err("too long");
        assert_eq!(vernier_cli::Failure::exit_code(&error), 2);
        assert!(error.to_string().starts_with("use --timeout: "), "{error}");
    }
}
