//! Dates and timestamps as `chrono` or `time` values (features of those names).
//! PostgreSQL sends them as `timestamp`/`timestamptz`/`date`; SQLite stores them as
//! the text its date functions read, which is what these write.

#[cfg(test)]
use crate::value::civil_from_days;
use crate::value::{MICROS_PER_DAY, Value, mismatch};

/// The day number of a civil date, by Howard Hinnant's `days_from_civil`.
pub(crate) fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let m = i64::from(month);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Reads `YYYY-MM-DD[ T]HH:MM[:SS[.ffffff]][Z|+00:00]` (what SQLite's `datetime()`
/// and `timestamp_text` write) as microseconds since the epoch, UTC.
pub(crate) fn parse_timestamp(text: &str) -> Option<i64> {
    let days = parse_date(text.get(..10)?)?;
    let rest = text.get(10..)?;
    if rest.is_empty() {
        return Some(i64::from(days) * MICROS_PER_DAY);
    }
    let rest = rest.strip_prefix([' ', 'T'])?;
    let rest = rest.strip_suffix('Z').or_else(|| rest.strip_suffix("+00:00")).unwrap_or(rest);
    let number = |s: &str| s.parse::<i64>().ok().filter(|_| s.bytes().all(|b| b.is_ascii_digit()));
    let (clock, fraction) = rest.split_once('.').unwrap_or((rest, ""));
    let mut parts = clock.split(':');
    let (h, m) = (number(parts.next()?)?, number(parts.next()?)?);
    let s = parts.next().map_or(Some(0), number)?;
    if parts.next().is_some() || h > 23 || m > 59 || s > 60 || fraction.len() > 9 {
        return None;
    }
    let micros = if fraction.is_empty() { 0 } else { number(&format!("{fraction:0<6}")[..6])? };
    Some(i64::from(days) * MICROS_PER_DAY + ((h * 60 + m) * 60 + s) * 1_000_000 + micros)
}

/// Reads `YYYY-MM-DD` as days since the epoch.
pub(crate) fn parse_date(text: &str) -> Option<i32> {
    let b = text.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return None;
    }
    let y: i64 = text[..4].parse().ok()?;
    let m: u32 = text[5..7].parse().ok()?;
    let d: u32 = text[8..].parse().ok()?;
    if !(1..=12).contains(&m) || !(1..=31).contains(&d) {
        return None;
    }
    i32::try_from(days_from_civil(y, m, d)).ok()
}

/// A timestamp column, whichever way the backend stored it.
pub(crate) fn timestamp_of(value: Value<'_>) -> Result<i64, String> {
    match value {
        Value::Timestamp(micros) => Ok(micros),
        Value::Date(days) => Ok(i64::from(days) * MICROS_PER_DAY),
        Value::Text(text) => parse_timestamp(text).ok_or_else(|| format!("{text:?} is not a timestamp")),
        // SQLite's `unixepoch()`.
        Value::Int(secs) => secs.checked_mul(1_000_000).ok_or_else(|| format!("{secs} is out of range")),
        other => Err(mismatch("a timestamp", other)),
    }
}

/// A date column, whichever way the backend stored it.
pub(crate) fn date_of(value: Value<'_>) -> Result<i32, String> {
    match value {
        Value::Date(days) => Ok(days),
        Value::Text(text) => {
            parse_date(text.get(..10).unwrap_or(text)).ok_or_else(|| format!("{text:?} is not a date"))
        }
        other => Err(mismatch("a date", other)),
    }
}

#[cfg(feature = "chrono")]
mod with_chrono {
    use chrono::{DateTime, NaiveDate, NaiveDateTime, Utc};

    use super::{date_of, timestamp_of};
    use crate::value::{FromValue, MICROS_PER_DAY, ToParam, Value};

    /// Days from 0001-01-01 (chrono's day 1) to 1970-01-01.
    const EPOCH_FROM_CE: i32 = 719_163;

    impl ToParam for DateTime<Utc> {
        fn to_param(&self) -> Value<'_> {
            Value::Timestamp(self.timestamp_micros())
        }
    }

    impl FromValue for DateTime<Utc> {
        fn from_value(value: Value<'_>) -> Result<Self, String> {
            let micros = timestamp_of(value)?;
            DateTime::from_timestamp_micros(micros).ok_or_else(|| format!("{micros} µs is out of range"))
        }
    }

    impl ToParam for NaiveDateTime {
        fn to_param(&self) -> Value<'_> {
            Value::Timestamp(self.and_utc().timestamp_micros())
        }
    }

    impl FromValue for NaiveDateTime {
        fn from_value(value: Value<'_>) -> Result<Self, String> {
            DateTime::<Utc>::from_value(value).map(|t| t.naive_utc())
        }
    }

    impl ToParam for NaiveDate {
        fn to_param(&self) -> Value<'_> {
            use chrono::Datelike;
            Value::Date(self.num_days_from_ce() - EPOCH_FROM_CE)
        }
    }

    impl FromValue for NaiveDate {
        fn from_value(value: Value<'_>) -> Result<Self, String> {
            let days = match value {
                Value::Timestamp(micros) => {
                    i32::try_from(micros.div_euclid(MICROS_PER_DAY)).map_err(|e| e.to_string())?
                }
                other => date_of(other)?,
            };
            NaiveDate::from_num_days_from_ce_opt(days + EPOCH_FROM_CE)
                .ok_or_else(|| format!("day {days} is out of range"))
        }
    }
}

#[cfg(feature = "time")]
mod with_time {
    use time::{Date, OffsetDateTime, PrimitiveDateTime};

    use super::{date_of, timestamp_of};
    use crate::value::{FromValue, ToParam, Value};

    /// 1970-01-01 as a Julian day number, `time`'s day count.
    const EPOCH_JULIAN_DAY: i32 = 2_440_588;

    impl ToParam for OffsetDateTime {
        fn to_param(&self) -> Value<'_> {
            Value::Timestamp((self.unix_timestamp_nanos() / 1000) as i64)
        }
    }

    impl FromValue for OffsetDateTime {
        fn from_value(value: Value<'_>) -> Result<Self, String> {
            let micros = timestamp_of(value)?;
            OffsetDateTime::from_unix_timestamp_nanos(i128::from(micros) * 1000).map_err(|e| e.to_string())
        }
    }

    impl ToParam for PrimitiveDateTime {
        fn to_param(&self) -> Value<'_> {
            Value::Timestamp((self.assume_utc().unix_timestamp_nanos() / 1000) as i64)
        }
    }

    impl FromValue for PrimitiveDateTime {
        fn from_value(value: Value<'_>) -> Result<Self, String> {
            OffsetDateTime::from_value(value).map(|t| PrimitiveDateTime::new(t.date(), t.time()))
        }
    }

    impl ToParam for Date {
        fn to_param(&self) -> Value<'_> {
            Value::Date(self.to_julian_day() - EPOCH_JULIAN_DAY)
        }
    }

    impl FromValue for Date {
        fn from_value(value: Value<'_>) -> Result<Self, String> {
            let days = date_of(value)?;
            Date::from_julian_day(days + EPOCH_JULIAN_DAY).map_err(|e| e.to_string())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::timestamp_text;

    #[test]
    fn civil_dates_round_trip() {
        for days in [-719_468, -1, 0, 1, 10_957, 19_000, 2_932_896] {
            let (y, m, d) = civil_from_days(days);
            assert_eq!(days_from_civil(y, m, d), days, "{y}-{m}-{d}");
        }
        assert_eq!(civil_from_days(10_957), (2000, 1, 1));
    }

    #[test]
    fn timestamps_read_what_they_write() {
        let t = 1_700_000_000_123_456;
        assert_eq!(timestamp_text(t), "2023-11-14 22:13:20.123456");
        assert_eq!(parse_timestamp(&timestamp_text(t)), Some(t));
        assert_eq!(parse_timestamp("2023-11-14T22:13:20Z"), Some(1_700_000_000_000_000));
        assert_eq!(parse_timestamp("2023-11-14 22:13"), Some(1_699_999_980_000_000));
        for bad in ["2023-13-01 00:00:00", "2023-11-14 25:00:00", "yesterday", "2023-11-14 1a:00"] {
            assert_eq!(parse_timestamp(bad), None, "{bad}");
        }
    }
}
