//! The schemas of the types an app's operations name, from schemars: one generator
//! for what requests carry (serde's deserialize side), one for what responses carry
//! (the serialize side), merged into one `components.schemas` at the end.

use std::collections::BTreeMap;

use schemars::generate::{Contract, SchemaSettings};
use schemars::transform::{RecursiveTransform, Transform};
use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde_json::{Map, Value};

/// Where the input generator puts its definitions: the document's own.
const SCHEMAS: &str = "#/components/schemas/";
/// Where the output generator puts its definitions until [`Schemas::finish`] moves
/// them, so that its `$ref`s can be told from the input's.
const OUTPUTS: &str = "#/components/x-kiln-outputs/";

pub(crate) struct Schemas {
    input: SchemaGenerator,
    output: SchemaGenerator,
}

impl Schemas {
    pub(crate) fn new() -> Self {
        Schemas { input: generator(SCHEMAS, Contract::Deserialize), output: generator(OUTPUTS, Contract::Serialize) }
    }

    /// `T`'s schema as requests carry it.
    pub(crate) fn input<T: JsonSchema + ?Sized>(&mut self) -> Value {
        bounded(self.input.subschema_for::<T>())
    }

    /// `T`'s schema as responses carry it.
    pub(crate) fn output<T: JsonSchema + ?Sized>(&mut self) -> Value {
        bounded(self.output.subschema_for::<T>())
    }

    /// The input generator, for a route parameter's own schema.
    pub(crate) fn input_generator(&mut self) -> &mut SchemaGenerator {
        &mut self.input
    }

    /// The input definition a `$ref` names, if it names one.
    pub(crate) fn resolve<'s>(&'s self, schema: &'s Value) -> &'s Value {
        let name = schema.get("$ref").and_then(Value::as_str).and_then(|r| r.strip_prefix(SCHEMAS));
        name.and_then(|name| self.input.definitions().get(name)).unwrap_or(schema)
    }

    /// `components.schemas`, and a renaming to apply to every `$ref` of the document
    /// ([`rewrite_refs`]): an output schema equal to the input one of its name
    /// becomes that one; one that differs is kept as `NameOutput`.
    pub(crate) fn finish(mut self) -> (Map<String, Value>, BTreeMap<String, String>) {
        let mut defs = self.input.take_definitions(true);
        let outputs = self.output.take_definitions(true);
        // Which output names must be renamed grows until stable: a type whose schema
        // names a renamed one differs too.
        let mut renamed: BTreeMap<String, String> = BTreeMap::new();
        loop {
            let refs = refs_map(&outputs, &renamed);
            let mut changed = false;
            for (name, schema) in &outputs {
                if renamed.contains_key(name) {
                    continue;
                }
                let Some(input) = defs.get(name) else { continue };
                let mut schema = schema.clone();
                rewrite_refs(&mut schema, &refs);
                if *input != schema {
                    renamed.insert(name.clone(), unused_name(&defs, &outputs, name));
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
        let refs = refs_map(&outputs, &renamed);
        for (name, mut schema) in outputs {
            rewrite_refs(&mut schema, &refs);
            let name = renamed.get(&name).cloned().unwrap_or(name);
            defs.entry(name).or_insert(schema);
        }
        (defs, refs)
    }
}

fn generator(path: &'static str, contract: Contract) -> SchemaGenerator {
    SchemaSettings::draft2020_12()
        .with(|s| {
            s.definitions_path = path.trim_end_matches('/').into();
            // The document names its dialect once (`jsonSchemaDialect`), not each schema.
            s.meta_schema = None;
            s.contract = contract;
        })
        .with_transform(RecursiveTransform(integer_bounds))
        .into_generator()
}

/// A schema written inline rather than among the definitions, which the generators'
/// transforms do not visit, with [`integer_bounds`] applied.
pub(crate) fn bounded(mut schema: Schema) -> Value {
    RecursiveTransform(integer_bounds).transform(&mut schema);
    schema.to_value()
}

/// Gives a fixed-width integer its range. schemars names the width by `format` only
/// (`uint32`), which JSON Schema leaves to the reader: without `maximum` a client, or a
/// fuzzer such as schemathesis, sends a number the type refuses.
fn integer_bounds(schema: &mut Schema) {
    let Some(object) = schema.as_object_mut() else { return };
    let (min, max): (Value, Value) = match object.get("format").and_then(Value::as_str) {
        Some("int8") => (i8::MIN.into(), i8::MAX.into()),
        Some("int16") => (i16::MIN.into(), i16::MAX.into()),
        Some("int32") => (i32::MIN.into(), i32::MAX.into()),
        Some("int64") => (i64::MIN.into(), i64::MAX.into()),
        Some("uint8") => (0.into(), u8::MAX.into()),
        Some("uint16") => (0.into(), u16::MAX.into()),
        Some("uint32") => (0.into(), u32::MAX.into()),
        Some("uint64") => (0.into(), u64::MAX.into()),
        _ => return,
    };
    object.entry("minimum").or_insert(min);
    object.entry("maximum").or_insert(max);
}

/// `NameOutput` (or `NameOutput2`, ...), a name neither generator used.
fn unused_name(defs: &Map<String, Value>, outputs: &Map<String, Value>, name: &str) -> String {
    let base = format!("{name}Output");
    let mut candidate = base.clone();
    let mut n = 2;
    while defs.contains_key(&candidate) || outputs.contains_key(&candidate) {
        candidate = format!("{base}{n}");
        n += 1;
    }
    candidate
}

/// Every output `$ref` to its final target.
fn refs_map(outputs: &Map<String, Value>, renamed: &BTreeMap<String, String>) -> BTreeMap<String, String> {
    outputs
        .keys()
        .map(|name| {
            let target = renamed.get(name).unwrap_or(name);
            (format!("{OUTPUTS}{name}"), format!("{SCHEMAS}{target}"))
        })
        .collect()
}

/// Replaces each `$ref` found in `refs` by its target, anywhere in `value`.
pub(crate) fn rewrite_refs(value: &mut Value, refs: &BTreeMap<String, String>) {
    match value {
        Value::Object(map) => {
            for (key, v) in map.iter_mut() {
                match v {
                    Value::String(s) if key == "$ref" => {
                        if let Some(target) = refs.get(s.as_str()) {
                            *s = target.clone();
                        }
                    }
                    _ => rewrite_refs(v, refs),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| rewrite_refs(v, refs)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use std::num::NonZeroU32;

    use serde_json::json;

    use super::Schemas;

    #[test]
    fn a_fixed_width_integer_has_its_range() {
        let mut schemas = Schemas::new();
        let u32_max = u32::MAX;
        assert_eq!(
            schemas.input::<u32>(),
            json!({ "type": "integer", "format": "uint32", "minimum": 0, "maximum": u32_max })
        );
        assert_eq!(schemas.input::<NonZeroU32>()["minimum"], 1);
        assert_eq!(schemas.output::<i8>()["minimum"], -128);
        assert_eq!(schemas.input::<f64>().get("maximum"), None);
    }
}
