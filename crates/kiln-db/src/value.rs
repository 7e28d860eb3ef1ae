//! Values crossing between the app and either backend: parameters going in
//! ([`ToParam`]) and columns coming out ([`FromValue`]), both through one
//! backend-neutral [`Value`], so one app type works on SQLite and PostgreSQL alike.

/// A value as both backends understand it, borrowed from the app or from a row.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub enum Value<'a> {
    /// SQL `NULL`.
    Null,
    /// A boolean (SQLite stores it as 0 or 1).
    Bool(bool),
    /// Any integer column or parameter, widened.
    Int(i64),
    /// Any floating-point column or parameter, widened.
    Float(f64),
    /// Text (PostgreSQL: also every type kiln reads in text form, like `numeric` or `uuid`).
    Text(&'a str),
    /// Bytes (`BLOB`, `bytea`).
    Bytes(&'a [u8]),
    /// A point in time, in microseconds since 1970-01-01 00:00:00 UTC
    /// (PostgreSQL `timestamp`/`timestamptz`; SQLite stores it as text).
    Timestamp(i64),
    /// A calendar date, in days since 1970-01-01 (PostgreSQL `date`; SQLite: text).
    Date(i32),
    /// An array of `int4` (PostgreSQL only).
    Int4Array(&'a [i32]),
    /// An array of `int8` (PostgreSQL only).
    Int8Array(&'a [i64]),
}

impl Value<'_> {
    /// What the value is, for error messages.
    pub fn kind(&self) -> &'static str {
        match self {
            Value::Null => "NULL",
            Value::Bool(_) => "a boolean",
            Value::Int(_) => "an integer",
            Value::Float(_) => "a float",
            Value::Text(_) => "text",
            Value::Bytes(_) => "bytes",
            Value::Timestamp(_) => "a timestamp",
            Value::Date(_) => "a date",
            Value::Int4Array(_) | Value::Int8Array(_) => "an array",
        }
    }
}

/// A type that can be bound as a statement parameter (`$1`, `$2`, ...).
///
/// Implemented for integers, floats, `bool`, `str`/`String`, byte slices and
/// vectors, `Option<T>` (`None` is `NULL`), references, integer slices (PostgreSQL
/// arrays), and the `chrono`/`time` date types behind the features of those names.
pub trait ToParam {
    /// The value to bind.
    fn to_param(&self) -> Value<'_>;
}

/// A type a column can be decoded into.
///
/// The message of an `Err` is wrapped into [`Error::Decode`](crate::Error::Decode)
/// naming the column.
pub trait FromValue: Sized {
    /// Decodes `value`, or says why it cannot.
    fn from_value(value: Value<'_>) -> Result<Self, String>;
}

pub(crate) fn mismatch(expected: &str, found: Value<'_>) -> String {
    format!("expected {expected}, found {}", found.kind())
}

impl<T: ToParam + ?Sized> ToParam for &T {
    fn to_param(&self) -> Value<'_> {
        (**self).to_param()
    }
}

impl<T: ToParam> ToParam for Option<T> {
    fn to_param(&self) -> Value<'_> {
        self.as_ref().map_or(Value::Null, T::to_param)
    }
}

impl<T: FromValue> FromValue for Option<T> {
    fn from_value(value: Value<'_>) -> Result<Self, String> {
        match value {
            Value::Null => Ok(None),
            value => T::from_value(value).map(Some),
        }
    }
}

macro_rules! integers {
    ($($t:ty),*) => {$(
        impl ToParam for $t {
            fn to_param(&self) -> Value<'_> {
                Value::Int(i64::from(*self))
            }
        }
        impl FromValue for $t {
            fn from_value(value: Value<'_>) -> Result<Self, String> {
                match value {
                    Value::Int(v) => <$t>::try_from(v)
                        .map_err(|_| format!("{v} does not fit in {}", stringify!($t))),
                    other => Err(mismatch("an integer", other)),
                }
            }
        }
    )*};
}
integers!(i8, i16, i32, i64, u8, u16, u32);

impl ToParam for bool {
    fn to_param(&self) -> Value<'_> {
        Value::Bool(*self)
    }
}

impl FromValue for bool {
    fn from_value(value: Value<'_>) -> Result<Self, String> {
        match value {
            Value::Bool(b) => Ok(b),
            // SQLite has no boolean type: it stores 0 and 1.
            Value::Int(0) => Ok(false),
            Value::Int(1) => Ok(true),
            other => Err(mismatch("a boolean", other)),
        }
    }
}

impl ToParam for f64 {
    fn to_param(&self) -> Value<'_> {
        Value::Float(*self)
    }
}

impl ToParam for f32 {
    fn to_param(&self) -> Value<'_> {
        Value::Float(f64::from(*self))
    }
}

impl FromValue for f64 {
    fn from_value(value: Value<'_>) -> Result<Self, String> {
        match value {
            Value::Float(v) => Ok(v),
            // SQLite returns a REAL column's whole numbers as integers when stored so.
            Value::Int(v) => Ok(v as f64),
            other => Err(mismatch("a float", other)),
        }
    }
}

impl FromValue for f32 {
    fn from_value(value: Value<'_>) -> Result<Self, String> {
        f64::from_value(value).map(|v| v as f32)
    }
}

impl ToParam for str {
    fn to_param(&self) -> Value<'_> {
        Value::Text(self)
    }
}

impl ToParam for String {
    fn to_param(&self) -> Value<'_> {
        Value::Text(self)
    }
}

impl FromValue for String {
    fn from_value(value: Value<'_>) -> Result<Self, String> {
        match value {
            Value::Text(s) => Ok(s.to_owned()),
            other => Err(mismatch("text", other)),
        }
    }
}

impl ToParam for [u8] {
    fn to_param(&self) -> Value<'_> {
        Value::Bytes(self)
    }
}

impl ToParam for Vec<u8> {
    fn to_param(&self) -> Value<'_> {
        Value::Bytes(self)
    }
}

impl FromValue for Vec<u8> {
    fn from_value(value: Value<'_>) -> Result<Self, String> {
        match value {
            Value::Bytes(b) => Ok(b.to_vec()),
            other => Err(mismatch("bytes", other)),
        }
    }
}

impl ToParam for [i32] {
    fn to_param(&self) -> Value<'_> {
        Value::Int4Array(self)
    }
}

impl ToParam for Vec<i32> {
    fn to_param(&self) -> Value<'_> {
        Value::Int4Array(self)
    }
}

impl ToParam for [i64] {
    fn to_param(&self) -> Value<'_> {
        Value::Int8Array(self)
    }
}

impl ToParam for Vec<i64> {
    fn to_param(&self) -> Value<'_> {
        Value::Int8Array(self)
    }
}

/// Microseconds in a day.
pub(crate) const MICROS_PER_DAY: i64 = 86_400_000_000;

/// The civil date of a day number (days since 1970-01-01), by Howard Hinnant's
/// `civil_from_days`.
pub(crate) fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(month <= 2), month, day)
}

/// `YYYY-MM-DD HH:MM:SS.ffffff`, the text form SQLite's date functions read.
pub(crate) fn timestamp_text(micros: i64) -> String {
    let (days, rest) = (micros.div_euclid(MICROS_PER_DAY), micros.rem_euclid(MICROS_PER_DAY));
    let (y, mo, d) = civil_from_days(days);
    let secs = rest / 1_000_000;
    format!("{y:04}-{mo:02}-{d:02} {:02}:{:02}:{:02}.{:06}", secs / 3600, secs / 60 % 60, secs % 60, rest % 1_000_000)
}

/// `YYYY-MM-DD`.
pub(crate) fn date_text(days: i32) -> String {
    let (y, m, d) = civil_from_days(i64::from(days));
    format!("{y:04}-{m:02}-{d:02}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_refuse_what_does_not_fit() {
        assert_eq!(i32::from_value(Value::Int(7)), Ok(7));
        assert!(i32::from_value(Value::Int(1 << 40)).unwrap_err().contains("does not fit"));
        assert_eq!(i32::from_value(Value::Text("7")), Err("expected an integer, found text".into()));
        assert_eq!(Option::<i32>::from_value(Value::Null), Ok(None));
    }
}
