//! A route parameter's schema: its type's own (`JsonSchema`), or one inferred from
//! the type's name, since a capture need only implement `FromStr`.

use schemars::JsonSchema;
use serde_json::{Value, json};

use crate::route::__private::{ParamType, Probe, ProbeSchema};

use super::schemas::Schemas;

/// The probe's choice for a type with a schema of its own (see
/// [`Probe`](crate::route::__private::Probe)).
impl<T: JsonSchema + ?Sized> ProbeSchema for Probe<T> {
    fn param_type(&self) -> ParamType {
        ParamType { name: std::any::type_name::<T>, schema: Some(|g| g.subschema_for::<T>()) }
    }
}

/// The parameter's schema.
pub(crate) fn schema(ty: &ParamType, schemas: &mut Schemas) -> Value {
    match ty.schema {
        Some(schema) => schema(schemas.input_generator()).to_value(),
        None => by_name((ty.name)()),
    }
}

/// A schema for a type known by its name only: numbers and booleans by theirs,
/// anything else a string (what `FromStr` parses).
fn by_name(name: &str) -> Value {
    match name {
        "u8" | "u16" | "u32" | "u64" | "u128" | "usize" => json!({ "type": "integer", "minimum": 0 }),
        "i8" | "i16" | "i32" | "i64" | "i128" | "isize" => json!({ "type": "integer" }),
        "f32" | "f64" => json!({ "type": "number" }),
        "bool" => json!({ "type": "boolean" }),
        _ => json!({ "type": "string" }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_type_without_a_schema_is_described_by_its_name() {
        assert_eq!(by_name("u32"), json!({ "type": "integer", "minimum": 0 }));
        assert_eq!(by_name("i64"), json!({ "type": "integer" }));
        assert_eq!(by_name("f64"), json!({ "type": "number" }));
        assert_eq!(by_name("bool"), json!({ "type": "boolean" }));
        assert_eq!(by_name("app::Slug"), json!({ "type": "string" }));
    }
}
