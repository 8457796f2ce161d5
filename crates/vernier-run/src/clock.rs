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
        assert_eq!(error.exit_code(), 2);
        assert!(error.to_string().starts_with("use --timeout: "), "{error}");
    }
}
