//! Error responses as problem details: on the paths whose rejections the app renders
//! as `application/problem+json` ([`App::problem_json`](crate::App::problem_json)),
//! each error response without a body of its own gets the `Problem` schema.

use serde_json::{Map, Value, json};

use crate::problem::PROBLEM_JSON;

use super::operation::object;

/// The schemas' names in `components.schemas`.
const PROBLEM: &str = "Problem";
const FIELD: &str = "ProblemField";

/// Gives each error response (`4XX`, `5XX`, `404`, ...) of `responses` that has no
/// content the problem details body.
pub(crate) fn add_bodies(responses: &mut Map<String, Value>) {
    for (status, response) in responses.iter_mut() {
        if !(status.starts_with('4') || status.starts_with('5')) || response.get("content").is_some() {
            continue;
        }
        let reference = object([("$ref", format!("#/components/schemas/{PROBLEM}").into())]);
        response["content"] = object([(PROBLEM_JSON, object([("schema", reference)]))]);
    }
}

/// Adds the `Problem` and `ProblemField` schemas (RFC 9457 §3) to `schemas`.
pub(crate) fn add_schemas(schemas: &mut Map<String, Value>) {
    let problem = json!({
        "description": "Why the request was refused: an RFC 9457 problem details object.",
        "type": "object",
        "properties": {
            "type": {
                "description": "What kind of problem: `about:blank` when the status says it all.",
                "type": "string",
                "format": "uri-reference",
            },
            "title": { "description": "The status's phrase.", "type": "string" },
            "status": { "description": "The status code.", "type": "integer", "minimum": 400, "maximum": 599 },
            "detail": { "description": "What was wrong with this request.", "type": "string" },
            "instance": {
                "description": "The path of the request refused.",
                "type": "string",
                "format": "uri-reference",
            },
            "errors": {
                "description": "For an input that breaks its constraints (422): every failing field.",
                "type": "array",
                "items": { "$ref": format!("#/components/schemas/{FIELD}") },
            },
        },
        "required": ["type", "title", "status"],
    });
    let field = json!({
        "description": "A field of the input that breaks its constraints.",
        "type": "object",
        "properties": {
            "pointer": { "description": "The field as a JSON Pointer (RFC 6901): `/address/zip`.", "type": "string" },
            "path": { "description": "The field in dotted notation, named as sent: `address.zip`, `tags[2]`.", "type": "string" },
            "detail": { "description": "Why it fails.", "type": "string" },
        },
        "required": ["pointer", "path", "detail"],
    });
    schemas.insert(PROBLEM.into(), problem);
    schemas.insert(FIELD.into(), field);
}
