//! PostgreSQL's wire formats for the layer's [`Value`]s: parameters are sent in
//! binary when kiln knows the pair of value and type, and in text otherwise (the
//! server then parses them as it parses a literal, so `"42"` binds to an `int4`);
//! columns of the common types come back in binary, the rest as text.

use bytes::BytesMut;
use postgres_protocol::IsNull;
use postgres_protocol::types as wire;

use crate::value::Value;

pub(crate) const BOOL: u32 = 16;
pub(crate) const BYTEA: u32 = 17;
pub(crate) const INT8: u32 = 20;
pub(crate) const INT2: u32 = 21;
pub(crate) const INT4: u32 = 23;
pub(crate) const OID: u32 = 26;
pub(crate) const FLOAT4: u32 = 700;
pub(crate) const FLOAT8: u32 = 701;
pub(crate) const INT4_ARRAY: u32 = 1007;
pub(crate) const INT8_ARRAY: u32 = 1016;
pub(crate) const DATE: u32 = 1082;
pub(crate) const TIMESTAMP: u32 = 1114;
pub(crate) const TIMESTAMPTZ: u32 = 1184;

/// Microseconds from 1970-01-01 (the layer's epoch) to 2000-01-01 (PostgreSQL's).
const PG_EPOCH_MICROS: i64 = 946_684_800_000_000;
/// Days from 1970-01-01 to 2000-01-01.
const PG_EPOCH_DAYS: i32 = 10_957;

/// The format a column of type `oid` is asked in: binary for what [`decode`] reads.
pub(crate) fn result_format(oid: u32) -> i16 {
    match oid {
        BOOL | BYTEA | INT8 | INT2 | INT4 | OID | FLOAT4 | FLOAT8 | DATE | TIMESTAMP | TIMESTAMPTZ => 1,
        _ => 0,
    }
}

/// Whether `value` goes to a parameter of type `oid` in binary.
fn binary(value: Value<'_>, oid: u32) -> bool {
    matches!(
        (value, oid),
        (Value::Null | Value::Bytes(_) | Value::Int4Array(_) | Value::Int8Array(_), _)
            | (Value::Bool(_), BOOL)
            | (Value::Int(_), INT2 | INT4 | INT8 | OID | FLOAT4 | FLOAT8)
            | (Value::Float(_), FLOAT4 | FLOAT8)
            | (Value::Timestamp(_), TIMESTAMP | TIMESTAMPTZ | DATE)
            | (Value::Date(_), DATE | TIMESTAMP | TIMESTAMPTZ)
    )
}

/// The format code of a parameter: 1 binary, 0 text.
pub(crate) fn param_format(value: Value<'_>, oid: u32) -> i16 {
    i16::from(binary(value, oid))
}

fn out_of_range(v: impl std::fmt::Display, ty: &str) -> String {
    format!("{v} is out of range for {ty}")
}

/// Writes `value` for a parameter of type `oid`, in the format [`param_format`] chose.
pub(crate) fn encode(value: Value<'_>, oid: u32, buf: &mut BytesMut) -> Result<IsNull, String> {
    if !binary(value, oid) {
        let text = match value {
            Value::Text(s) => s.to_owned(),
            Value::Bool(b) => (if b { "t" } else { "f" }).to_owned(),
            Value::Int(v) => v.to_string(),
            Value::Float(v) => v.to_string(),
            Value::Timestamp(micros) => crate::value::timestamp_text(micros),
            Value::Date(days) => crate::value::date_text(days),
            other => return Err(format!("{} cannot be sent as type oid {oid}", other.kind())),
        };
        buf.extend_from_slice(text.as_bytes());
        return Ok(IsNull::No);
    }
    match (value, oid) {
        (Value::Null, _) => return Ok(IsNull::Yes),
        (Value::Bool(b), _) => wire::bool_to_sql(b, buf),
        (Value::Int(v), INT2) => wire::int2_to_sql(i16::try_from(v).map_err(|_| out_of_range(v, "int2"))?, buf),
        (Value::Int(v), INT4) => wire::int4_to_sql(i32::try_from(v).map_err(|_| out_of_range(v, "int4"))?, buf),
        (Value::Int(v), OID) => wire::oid_to_sql(u32::try_from(v).map_err(|_| out_of_range(v, "oid"))?, buf),
        (Value::Int(v), INT8) => wire::int8_to_sql(v, buf),
        (Value::Int(v), FLOAT4) => wire::float4_to_sql(v as f32, buf),
        (Value::Int(v), _) => wire::float8_to_sql(v as f64, buf),
        (Value::Float(v), FLOAT4) => wire::float4_to_sql(v as f32, buf),
        (Value::Float(v), _) => wire::float8_to_sql(v, buf),
        (Value::Bytes(b), BYTEA) => wire::bytea_to_sql(b, buf),
        (Value::Timestamp(micros), DATE) => {
            wire::date_to_sql(days_of(micros.div_euclid(crate::value::MICROS_PER_DAY))?, buf);
        }
        (Value::Timestamp(micros), _) => wire::timestamp_to_sql(micros - PG_EPOCH_MICROS, buf),
        (Value::Date(days), DATE) => wire::date_to_sql(days - PG_EPOCH_DAYS, buf),
        (Value::Date(days), _) => {
            wire::timestamp_to_sql(i64::from(days) * crate::value::MICROS_PER_DAY - PG_EPOCH_MICROS, buf);
        }
        (Value::Int4Array(values), INT4_ARRAY) => array(values, INT4, |v, buf| wire::int4_to_sql(*v, buf), buf)?,
        (Value::Int8Array(values), INT8_ARRAY) => array(values, INT8, |v, buf| wire::int8_to_sql(*v, buf), buf)?,
        (value, oid) => return Err(format!("{} cannot be sent as type oid {oid}", value.kind())),
    }
    Ok(IsNull::No)
}

fn days_of(days: i64) -> Result<i32, String> {
    i32::try_from(days - i64::from(PG_EPOCH_DAYS)).map_err(|_| out_of_range(days, "date"))
}

fn array<T>(values: &[T], element: u32, write: impl Fn(&T, &mut BytesMut), buf: &mut BytesMut) -> Result<(), String> {
    let len = i32::try_from(values.len()).map_err(|_| out_of_range(values.len(), "an array"))?;
    wire::array_to_sql(
        [wire::ArrayDimension { len, lower_bound: 1 }],
        element,
        values,
        |v, buf| {
            write(v, buf);
            Ok(IsNull::No)
        },
        buf,
    )
    .map_err(|e| e.to_string())
}

/// A column's value from its bytes (`None` is `NULL`) in the format
/// [`result_format`] asked for.
pub(crate) fn decode(oid: u32, format: i16, raw: Option<&[u8]>) -> Result<Value<'_>, String> {
    let Some(raw) = raw else { return Ok(Value::Null) };
    let bad = |e: Box<dyn std::error::Error + Sync + Send>| format!("malformed from the server: {e}");
    if format == 0 {
        return std::str::from_utf8(raw).map(Value::Text).map_err(|e| format!("text that is not UTF-8: {e}"));
    }
    Ok(match oid {
        BOOL => Value::Bool(wire::bool_from_sql(raw).map_err(bad)?),
        BYTEA => Value::Bytes(wire::bytea_from_sql(raw)),
        INT2 => Value::Int(i64::from(wire::int2_from_sql(raw).map_err(bad)?)),
        INT4 => Value::Int(i64::from(wire::int4_from_sql(raw).map_err(bad)?)),
        OID => Value::Int(i64::from(wire::oid_from_sql(raw).map_err(bad)?)),
        INT8 => Value::Int(wire::int8_from_sql(raw).map_err(bad)?),
        FLOAT4 => Value::Float(f64::from(wire::float4_from_sql(raw).map_err(bad)?)),
        FLOAT8 => Value::Float(wire::float8_from_sql(raw).map_err(bad)?),
        DATE => Value::Date(wire::date_from_sql(raw).map_err(bad)?.saturating_add(PG_EPOCH_DAYS)),
        TIMESTAMP | TIMESTAMPTZ => {
            Value::Timestamp(wire::timestamp_from_sql(raw).map_err(bad)?.saturating_add(PG_EPOCH_MICROS))
        }
        _ => return Err(format!("type oid {oid} arrived in binary, which kiln does not read")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(value: Value<'_>, oid: u32) -> Value<'static> {
        let mut buf = BytesMut::new();
        assert!(matches!(encode(value, oid, &mut buf), Ok(IsNull::No)));
        let bytes: &'static [u8] = Box::leak(buf.to_vec().into_boxed_slice());
        decode(oid, result_format(oid), Some(bytes)).expect("decodes")
    }

    #[test]
    fn binary_values_round_trip() {
        assert_eq!(round_trip(Value::Int(-7), INT2), Value::Int(-7));
        assert_eq!(round_trip(Value::Int(1 << 40), INT8), Value::Int(1 << 40));
        assert_eq!(round_trip(Value::Float(0.5), FLOAT8), Value::Float(0.5));
        assert_eq!(round_trip(Value::Bool(true), BOOL), Value::Bool(true));
        let t = 1_700_000_000_123_456;
        assert_eq!(round_trip(Value::Timestamp(t), TIMESTAMPTZ), Value::Timestamp(t));
        assert_eq!(round_trip(Value::Date(19_000), DATE), Value::Date(19_000));
    }

    #[test]
    fn an_integer_too_big_for_its_column_is_refused() {
        let Err(e) = encode(Value::Int(1 << 40), INT4, &mut BytesMut::new()) else { panic!("encoded") };
        assert!(e.contains("out of range for int4"), "{e}");
    }

    #[test]
    fn values_kiln_does_not_send_in_binary_go_as_text() {
        const NUMERIC: u32 = 1700;
        assert_eq!(param_format(Value::Int(42), NUMERIC), 0);
        let mut buf = BytesMut::new();
        encode(Value::Int(42), NUMERIC, &mut buf).unwrap();
        assert_eq!(&buf[..], b"42");
        assert_eq!(param_format(Value::Text("42"), INT4), 0);
        assert!(encode(Value::Bytes(b"x"), INT4, &mut BytesMut::new()).is_err());
    }
}
