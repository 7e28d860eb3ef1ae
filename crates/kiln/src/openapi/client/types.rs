//! JSON Schema (2020-12, as schemars writes it) as TypeScript types: what the
//! generated client's `components.schemas` and operation signatures are made of.

use serde_json::{Map, Value};

/// The TypeScript type of `schema`. A `$ref` is the name of the type it points at; a
/// schema the translation does not know (`not`, `if`) is `unknown`, which is always
/// sound.
pub(super) fn ts_type(schema: &Value) -> String {
    match schema {
        Value::Bool(true) => "unknown".into(),
        Value::Bool(false) => "never".into(),
        Value::Object(object) => object_type(object),
        _ => "unknown".into(),
    }
}

fn object_type(schema: &Map<String, Value>) -> String {
    if let Some(target) = schema.get("$ref").and_then(Value::as_str) {
        return ref_name(target);
    }
    if let Some(value) = schema.get("const") {
        return literal(value);
    }
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        return union(values.iter().map(literal));
    }
    // Each keyword narrows the value: together they are an intersection.
    let mut parts = Vec::new();
    if let Some(ty) = schema.get("type") {
        let types: Vec<&str> = match ty {
            Value::String(one) => vec![one],
            Value::Array(many) => many.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        if !types.is_empty() {
            parts.push(union(types.into_iter().map(|t| primitive(t, schema))));
        }
    } else if schema.contains_key("properties") {
        parts.push(object_shape(schema));
    }
    for (keyword, join) in [("oneOf", " | "), ("anyOf", " | "), ("allOf", " & ")] {
        if let Some(alternatives) = schema.get(keyword).and_then(Value::as_array) {
            let types: Vec<String> = alternatives.iter().map(|s| format!("({})", ts_type(s))).collect();
            if !types.is_empty() {
                parts.push(types.join(join));
            }
        }
    }
    match parts.len() {
        0 => "unknown".into(),
        1 => parts.remove(0),
        _ => parts.iter().map(|p| format!("({p})")).collect::<Vec<_>>().join(" & "),
    }
}

fn primitive(ty: &str, schema: &Map<String, Value>) -> String {
    match ty {
        "string" => "string".into(),
        "integer" | "number" => "number".into(),
        "boolean" => "boolean".into(),
        "null" => "null".into(),
        "array" => match schema.get("prefixItems").and_then(Value::as_array) {
            // A tuple (schemars' `(A, B)`): exactly these items.
            Some(items) => format!("[{}]", items.iter().map(ts_type).collect::<Vec<_>>().join(", ")),
            None => format!("Array<{}>", schema.get("items").map_or_else(|| "unknown".into(), ts_type)),
        },
        "object" => object_shape(schema),
        _ => "unknown".into(),
    }
}

/// `{ name: T; other?: U }`, with `[key: string]: V` for `additionalProperties`.
fn object_shape(schema: &Map<String, Value>) -> String {
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map_or_else(Vec::new, |r| r.iter().filter_map(Value::as_str).collect());
    let mut fields = Vec::new();
    if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
        for (name, property) in properties {
            let optional = if required.contains(&name.as_str()) { "" } else { "?" };
            let doc = property.get("description").and_then(Value::as_str).map(inline_doc).unwrap_or_default();
            fields.push(format!("{doc}{}{optional}: {};", property_name(name), ts_type(property)));
        }
    }
    match schema.get("additionalProperties") {
        Some(Value::Bool(false)) => {}
        Some(extra @ Value::Object(_)) => fields.push(format!("[key: string]: {};", ts_type(extra))),
        // Other properties are allowed and unknown, unless there are named ones, whose
        // types an index signature would have to cover.
        _ if fields.is_empty() => return "Record<string, unknown>".into(),
        _ => {}
    }
    if fields.is_empty() {
        return "Record<string, never>".into();
    }
    format!("{{ {} }}", fields.join(" "))
}

/// The TypeScript name of the type a `$ref` names: its last segment, made an
/// identifier.
pub(super) fn ref_name(target: &str) -> String {
    identifier(target.rsplit('/').next().unwrap_or(target))
}

/// `name` with each character an identifier may not hold replaced by `_`.
pub(super) fn identifier(name: &str) -> String {
    let mut out: String =
        name.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '$' { c } else { '_' }).collect();
    if out.is_empty() || out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert(0, '_');
    }
    out
}

/// A property's name, quoted when it is not an identifier.
pub(super) fn property_name(name: &str) -> String {
    if identifier(name) == name { name.to_owned() } else { Value::from(name).to_string() }
}

fn literal(value: &Value) -> String {
    match value {
        Value::Array(_) | Value::Object(_) => "unknown".into(),
        other => other.to_string(),
    }
}

/// `a | b`, each once, in order; `never` when there is none.
fn union(types: impl Iterator<Item = String>) -> String {
    let mut seen: Vec<String> = Vec::new();
    for t in types {
        if !seen.contains(&t) {
            seen.push(t);
        }
    }
    if seen.is_empty() { "never".into() } else { seen.join(" | ") }
}

/// A `/** ... */` comment of `text` on one line, for a field of an inline type.
pub(super) fn inline_doc(text: &str) -> String {
    doc_comment(&text.split_whitespace().collect::<Vec<_>>().join(" "))
}

/// A `/** ... */` comment of `text`, ended so the text cannot end it early.
pub(super) fn doc_comment(text: &str) -> String {
    let text = text.replace("*/", "*\\/");
    let lines: Vec<&str> = text.lines().collect();
    if lines.len() <= 1 {
        return format!("/** {} */ ", text.trim());
    }
    let body: String = lines.iter().map(|l| format!(" * {l}\n").replace(" \n", "\n")).collect();
    format!("/**\n{body} */\n")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn json_schemas_become_typescript_types() {
        let table = [
            (json!({ "type": "string" }), "string"),
            (json!({ "type": ["integer", "null"] }), "number | null"),
            (json!({ "type": "array", "items": { "$ref": "#/components/schemas/Page" } }), "Array<Page>"),
            (json!({ "enum": ["a", "b", null] }), "\"a\" | \"b\" | null"),
            (json!({ "const": 3 }), "3"),
            (json!({ "oneOf": [{ "type": "string" }, { "type": "boolean" }] }), "(string) | (boolean)"),
            (
                json!({ "type": "object", "properties": { "a": { "type": "string" }, "b-c": { "type": "integer" } }, "required": ["a"] }),
                "{ a: string; \"b-c\"?: number; }",
            ),
            (json!({ "type": "object", "additionalProperties": { "type": "integer" } }), "{ [key: string]: number; }"),
            (json!({ "type": "object" }), "Record<string, unknown>"),
            (
                json!({ "type": "array", "prefixItems": [{ "type": "string" }, { "type": "number" }] }),
                "[string, number]",
            ),
            (json!({ "not": {} }), "unknown"),
            (json!(true), "unknown"),
        ];
        for (schema, ts) in table {
            assert_eq!(ts_type(&schema), ts, "{schema}");
        }
    }

    #[test]
    fn a_doc_comment_cannot_be_closed_by_its_text() {
        assert_eq!(doc_comment("a */ b"), "/** a *\\/ b */ ");
        assert_eq!(doc_comment("one\n\ntwo"), "/**\n * one\n *\n * two\n */\n");
    }
}
