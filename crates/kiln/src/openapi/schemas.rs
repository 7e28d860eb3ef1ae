//! The schemas of the types an app's operations name, from schemars: one generator
//! for what requests carry (serde's deserialize side), one for what responses carry
//! (the serialize side), merged into one `components.schemas` at the end.

use std::collections::BTreeMap;

use schemars::generate::{Contract, SchemaSettings};
use schemars::{JsonSchema, SchemaGenerator};
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
        self.input.subschema_for::<T>().to_value()
    }

    /// `T`'s schema as responses carry it.
    pub(crate) fn output<T: JsonSchema + ?Sized>(&mut self) -> Value {
        self.output.subschema_for::<T>().to_value()
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
        .into_generator()
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
