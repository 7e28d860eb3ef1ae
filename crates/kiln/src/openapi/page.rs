//! The reference page for people: the document rendered with `kiln::html!`, read from
//! the document's JSON alone, so that the page says what the contract says.
//!
//! Operations are grouped by their first tag, else by path; each lists its
//! parameters, request body, responses and security. The schemas follow, each with its
//! properties (nested objects inline), required marks, constraints and examples.

use serde_json::{Map, Value};

use crate::markup::{Document, ExternalUrl, Flow, Fragment, PreEscaped};

/// Spliced unescaped: it holds no `<`, so it cannot close the `<style>` element.
const CSS: &str = "body{font-family:system-ui,sans-serif;max-width:72rem;margin:0 auto;padding:1rem;color:#222}\
code,pre{font-family:ui-monospace,monospace}pre{background:#f5f5f5;padding:.5rem;overflow:auto}\
table{border-collapse:collapse;width:100%;margin:.5rem 0}th,td{border:1px solid #ddd;padding:.3rem .5rem;\
text-align:left;vertical-align:top}article{border-top:1px solid #ccc;padding:.5rem 0}\
.method{font-weight:bold;text-transform:uppercase}.required{color:#b00;font-size:.8em}\
.constraints{margin:0;padding-left:1rem;font-size:.9em;color:#555}";

/// An operation of the document, where it is.
struct Op<'d> {
    method: &'d str,
    path: &'d str,
    object: &'d Value,
}

/// The page for the document `doc` (an OpenAPI 3.1 document as JSON).
pub(crate) fn render(doc: &Value) -> Fragment<Document> {
    let info = &doc["info"];
    let title = text(&info["title"]).unwrap_or("API");
    let version = text(&info["version"]).unwrap_or("");
    let groups = groups(doc);
    let schemas = doc["components"]["schemas"].as_object().map(|s| s.iter().collect::<Vec<_>>()).unwrap_or_default();
    crate::html! {
        html lang="en" {
            head {
                meta charset="utf-8";
                title { (title) " " (version) }
                style { (PreEscaped(CSS)) }
            }
            body {
                header {
                    h1 { (title) }
                    p { "Version " (version) ", OpenAPI " (text(&doc["openapi"]).unwrap_or("")) }
                    @if let Some(description) = text(&info["description"]) { p { (description) } }
                }
                nav {
                    h2 { "Operations" }
                    ul {
                        @for (_, ops) in &groups {
                            @for op in ops {
                                li { a href=(anchor("op", op_id(op))) { code { (op.method.to_uppercase()) " " (op.path) } } }
                            }
                        }
                    }
                }
                main {
                    @for (group, ops) in &groups {
                        section {
                            h2 { (group) }
                            @for op in ops { (operation(op)) }
                        }
                    }
                    @if !schemas.is_empty() {
                        section #schemas {
                            h2 { "Schemas" }
                            @for (name, schema) in &schemas {
                                article id=(format!("schema-{name}")) {
                                    h3 { (name) }
                                    (schema_view(schema))
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// The operations by group: first tag, else path, in the document's order.
fn groups(doc: &Value) -> Vec<(String, Vec<Op<'_>>)> {
    let mut groups: Vec<(String, Vec<Op<'_>>)> = Vec::new();
    let paths = doc["paths"].as_object().into_iter().flatten();
    for (path, item) in paths {
        for (method, object) in item.as_object().into_iter().flatten() {
            let group = object["tags"][0].as_str().unwrap_or(path).to_owned();
            let op = Op { method, path, object };
            match groups.iter_mut().find(|(name, _)| *name == group) {
                Some((_, ops)) => ops.push(op),
                None => groups.push((group, vec![op])),
            }
        }
    }
    groups
}

fn op_id<'d>(op: &Op<'d>) -> &'d str {
    text(&op.object["operationId"]).unwrap_or(op.path)
}

/// A link within the page; `href` takes a string only as an `ExternalUrl`.
fn anchor(kind: &str, name: &str) -> ExternalUrl<String> {
    ExternalUrl(format!("#{kind}-{name}"))
}

fn text(value: &Value) -> Option<&str> {
    value.as_str().filter(|s| !s.is_empty())
}

fn operation(op: &Op<'_>) -> Fragment<Flow> {
    let o = op.object;
    let parameters = o["parameters"].as_array().map(Vec::as_slice).unwrap_or_default();
    let body = o.get("requestBody");
    let responses = o["responses"].as_object().map(|r| r.iter().collect::<Vec<_>>()).unwrap_or_default();
    let security = security(&o["security"]);
    crate::html! {
        article id=(format!("op-{}", op_id(op))) {
            h3 { span.method { (op.method) } " " code { (op.path) } }
            @if let Some(summary) = text(&o["summary"]) { p { strong { (summary) } } }
            @if let Some(description) = text(&o["description"]) { p { (description) } }
            p { "Operation " code { (op_id(op)) } }
            @if let Some(security) = security { p { "Security: " (security) } }
            @if !parameters.is_empty() {
                h4 { "Parameters" }
                table {
                    thead { tr { th { "Name" } th { "In" } th { "Type" } th { "Description" } } }
                    tbody {
                        @for p in parameters {
                            tr {
                                td {
                                    code { (text(&p["name"]).unwrap_or("")) }
                                    @if p["required"] == true { " " span.required { "required" } }
                                }
                                td { (text(&p["in"]).unwrap_or("")) }
                                td { (schema_view(&p["schema"])) }
                                td { (text(&p["description"]).unwrap_or("")) }
                            }
                        }
                    }
                }
            }
            @if let Some(body) = body {
                h4 { "Request body" @if body["required"] == true { " " span.required { "required" } } }
                @for (content_type, media) in body["content"].as_object().into_iter().flatten() {
                    p { code { (content_type) } }
                    (schema_view(&media["schema"]))
                }
            }
            h4 { "Responses" }
            table {
                thead { tr { th { "Status" } th { "Description" } th { "Body" } } }
                tbody {
                    @for (status, response) in &responses {
                        tr {
                            td { code { (status) } }
                            td {
                                (text(&response["description"]).unwrap_or(""))
                                @for (header, _) in response["headers"].as_object().into_iter().flatten() {
                                    br; "Header " code { (header) }
                                }
                            }
                            td {
                                @for (content_type, media) in response["content"].as_object().into_iter().flatten() {
                                    div { code { (content_type) } (schema_view(&media["schema"])) }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// The Security Requirement Objects as text: alternatives joined by "or", schemes
/// required together by "and".
fn security(requirements: &Value) -> Option<String> {
    let alternatives: Vec<String> = requirements
        .as_array()?
        .iter()
        .map(|r| {
            let schemes: Vec<&str> = r.as_object().into_iter().flatten().map(|(k, _)| k.as_str()).collect();
            if schemes.is_empty() { "none".to_owned() } else { schemes.join(" and ") }
        })
        .collect();
    (!alternatives.is_empty()).then(|| alternatives.join(", or "))
}

/// A schema: its type (linked when it names a component), constraints, description,
/// examples, and its properties as a nested table.
fn schema_view(schema: &Value) -> Fragment<Flow> {
    let properties = schema["properties"].as_object().or_else(|| schema["items"]["properties"].as_object());
    let required = required(schema);
    let constraints = constraints(schema);
    let examples: Vec<String> = match (&schema["examples"], &schema["example"]) {
        (Value::Array(examples), _) => examples.iter().map(pretty).collect(),
        (_, Value::Null) => Vec::new(),
        (_, example) => vec![pretty(example)],
    };
    let alternatives = ["oneOf", "anyOf", "allOf"].into_iter().find_map(|k| Some((k, schema[k].as_array()?)));
    crate::html! {
        div {
            code { @for part in type_parts(schema) { @match part { Part::Text(t) => { (t) } Part::Ref(name) => { a href=(anchor("schema", &name)) { (name) } } } } }
            @if let Some(description) = text(&schema["description"]) { " — " (description) }
            @if !constraints.is_empty() { ul.constraints { @for c in &constraints { li { (c) } } } }
            @if let Some((keyword, list)) = alternatives {
                @if list.iter().any(|s| s.get("properties").is_some()) {
                    p { (keyword) ":" }
                    ul { @for s in list { li { (schema_view(s)) } } }
                }
            }
            @if let Some(properties) = properties { (properties_table(properties, &required)) }
            @for example in &examples { p { "Example:" } pre { code { (example) } } }
        }
    }
}

fn properties_table(properties: &Map<String, Value>, required: &[&str]) -> Fragment<Flow> {
    crate::html! {
        table {
            thead { tr { th { "Field" } th { "Schema" } } }
            tbody {
                @for (name, property) in properties {
                    tr {
                        td {
                            code { (name) }
                            @if required.contains(&name.as_str()) { " " span.required { "required" } }
                        }
                        td { (schema_view(property)) }
                    }
                }
            }
        }
    }
}

fn required(schema: &Value) -> Vec<&str> {
    let list = schema["required"].as_array().or_else(|| schema["items"]["required"].as_array());
    list.into_iter().flatten().filter_map(Value::as_str).collect()
}

fn pretty(value: &Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_default()
}

/// A piece of a type's name: text, or a component's name to link to.
enum Part {
    Text(String),
    Ref(String),
}

/// `string`, `integer or null`, `array of Page`, `Page or null`, `object`, `any`.
fn type_parts(schema: &Value) -> Vec<Part> {
    if let Some(target) = schema["$ref"].as_str() {
        return vec![Part::Ref(target.rsplit('/').next().unwrap_or(target).to_owned())];
    }
    if let Some(list) = ["oneOf", "anyOf"].iter().find_map(|k| schema[k].as_array()) {
        let mut parts = Vec::new();
        for (i, s) in list.iter().enumerate() {
            if i > 0 {
                parts.push(Part::Text(" or ".into()));
            }
            parts.extend(type_parts(s));
        }
        return parts;
    }
    let types: Vec<&str> = match &schema["type"] {
        Value::String(t) => vec![t.as_str()],
        Value::Array(ts) => ts.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    let mut parts = Vec::new();
    for (i, t) in types.iter().enumerate() {
        if i > 0 {
            parts.push(Part::Text(" or ".into()));
        }
        if *t == "array" && schema.get("items").is_some() {
            parts.push(Part::Text("array of ".into()));
            parts.extend(type_parts(&schema["items"]));
        } else {
            parts.push(Part::Text((*t).to_owned()));
        }
    }
    if parts.is_empty() {
        let kind = if schema.get("const").is_some() || schema.get("enum").is_some() { "value" } else { "any" };
        parts.push(Part::Text(kind.into()));
    }
    parts
}

/// The keywords that narrow a schema, as text: `minLength: 3`, `one of: "a", "b"`.
fn constraints(schema: &Value) -> Vec<String> {
    const KEYWORDS: [&str; 13] = [
        "format",
        "pattern",
        "minLength",
        "maxLength",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "minItems",
        "maxItems",
        "uniqueItems",
        "default",
    ];
    let mut found: Vec<String> =
        KEYWORDS.iter().filter_map(|k| Some(format!("{k}: {}", schema.get(*k)?))).map(unquote).collect();
    if let Some(values) = schema["enum"].as_array() {
        let values: Vec<String> = values.iter().map(Value::to_string).collect();
        found.push(format!("one of: {}", values.join(", ")));
    }
    if let Some(value) = schema.get("const") {
        found.push(format!("always: {value}"));
    }
    if schema["deprecated"] == true {
        found.push("deprecated".into());
    }
    found
}

/// `format: "email"` reads better as `format: email`.
fn unquote(constraint: String) -> String {
    match constraint.split_once(": \"") {
        Some((keyword, rest)) if rest.ends_with('"') && !rest[..rest.len() - 1].contains('"') => {
            format!("{keyword}: {}", &rest[..rest.len() - 1])
        }
        _ => constraint,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_type_names_its_components_and_alternatives() {
        let names = |schema: Value| {
            type_parts(&schema)
                .into_iter()
                .map(|p| match p {
                    Part::Text(t) => t,
                    Part::Ref(n) => format!("[{n}]"),
                })
                .collect::<String>()
        };
        assert_eq!(names(json!({ "type": ["string", "null"] })), "string or null");
        assert_eq!(
            names(json!({ "type": "array", "items": { "$ref": "#/components/schemas/Tag" } })),
            "array of [Tag]"
        );
        assert_eq!(
            names(json!({ "anyOf": [{ "$ref": "#/components/schemas/Page" }, { "type": "null" }] })),
            "[Page] or null"
        );
        assert_eq!(names(json!({})), "any");
    }

    #[test]
    fn constraints_read_as_text() {
        let schema = json!({ "type": "string", "format": "email", "minLength": 3, "enum": ["a", "b"] });
        assert_eq!(constraints(&schema), ["format: email", "minLength: 3", "one of: \"a\", \"b\""]);
    }
}
