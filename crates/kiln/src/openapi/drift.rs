//! The drift check: an app's document against a committed copy, each difference
//! classified as breaking (an old client or caller may fail) or additive.

use std::path::Path;

use serde_json::{Map, Value};

use super::change::{Change, ChangeKind};
use super::document::Document;
use super::schema_diff::{Direction, SchemaDiff};

/// The environment variable that makes [`assert_matches`] rewrite the committed copy
/// instead of comparing with it.
pub const UPDATE_ENV: &str = "KILN_OPENAPI_UPDATE";

/// Every difference between the `old` document and the `new` one, breaking ones first.
///
/// ```
/// use kiln::openapi::{ChangeKind, compare};
/// use serde_json::json;
///
/// let old = json!({ "paths": { "/a": { "get": { "responses": {} } } } });
/// let new = json!({ "paths": {} });
/// let changes = compare(&old, &new);
/// assert_eq!(changes[0].kind, ChangeKind::Breaking);
/// assert_eq!(changes[0].to_string(), "breaking: GET /a: the operation is removed");
/// ```
pub fn compare(old: &Value, new: &Value) -> Vec<Change> {
    let mut diff = SchemaDiff::new(old, new);
    let empty = Map::new();
    let paths = |doc: &'_ Value| doc.get("paths").and_then(Value::as_object).cloned().unwrap_or_default();
    let (old_paths, new_paths) = (paths(old), paths(new));
    for (path, old_item) in &old_paths {
        let new_item = new_paths.get(path).and_then(Value::as_object).unwrap_or(&empty);
        for (method, old_op) in old_item.as_object().unwrap_or(&empty) {
            let at = format!("{} {path}", method.to_ascii_uppercase());
            match new_item.get(method) {
                Some(new_op) => operation(&mut diff, &at, old_op, new_op),
                None => diff.push(ChangeKind::Breaking, &at, "the operation is removed".into()),
            }
        }
    }
    for (path, new_item) in &new_paths {
        let old_item = old_paths.get(path).and_then(Value::as_object).unwrap_or(&empty);
        for method in new_item.as_object().unwrap_or(&empty).keys() {
            if !old_item.contains_key(method) {
                let at = format!("{} {path}", method.to_ascii_uppercase());
                diff.push(ChangeKind::Additive, &at, "the operation is new".into());
            }
        }
    }
    let mut changes = diff.into_changes();
    changes.sort_by_key(|c| c.kind);
    changes
}

fn operation(diff: &mut SchemaDiff<'_>, at: &str, old: &Value, new: &Value) {
    parameters(diff, at, old, new);
    request_body(diff, at, old.get("requestBody"), new.get("requestBody"));
    responses(diff, at, old, new);
    let security = |op: &Value| op.get("security").cloned().unwrap_or(Value::Array(Vec::new()));
    let (old_security, new_security) = (security(old), security(new));
    if old_security != new_security {
        // Each requirement is an alternative: one the client used that is gone breaks it.
        let old_alts = old_security.as_array().cloned().unwrap_or_default();
        let new_alts = new_security.as_array().cloned().unwrap_or_default();
        let lost = (!old_alts.is_empty() && new_alts.is_empty()) || old_alts.iter().any(|a| !new_alts.contains(a));
        let (kind, what) = if lost {
            (ChangeKind::Breaking, format!("security changed from {old_security} to {new_security}"))
        } else {
            (ChangeKind::Additive, format!("security loosened from {old_security} to {new_security}"))
        };
        diff.push(kind, at, what);
    }
}

fn parameters(diff: &mut SchemaDiff<'_>, at: &str, old: &Value, new: &Value) {
    let list =
        |op: &Value| -> Vec<Value> { op.get("parameters").and_then(Value::as_array).cloned().unwrap_or_default() };
    let key = |p: &Value| (p["in"].as_str().unwrap_or("").to_owned(), p["name"].as_str().unwrap_or("").to_owned());
    let (old_params, new_params) = (list(old), list(new));
    for old_p in &old_params {
        let (place, name) = key(old_p);
        let here = format!("{at} {place} parameter `{name}`");
        match new_params.iter().find(|p| key(p) == key(old_p)) {
            None => diff.push(ChangeKind::Breaking, &here, "the parameter is removed".into()),
            Some(new_p) => {
                let required = |p: &Value| p["required"].as_bool().unwrap_or(false);
                if !required(old_p) && required(new_p) {
                    diff.push(ChangeKind::Breaking, &here, "the parameter is now required".into());
                } else if required(old_p) && !required(new_p) {
                    diff.push(ChangeKind::Additive, &here, "the parameter is now optional".into());
                }
                diff.schema(&here, Direction::Input, &old_p["schema"], &new_p["schema"]);
            }
        }
    }
    for new_p in &new_params {
        if !old_params.iter().any(|p| key(p) == key(new_p)) {
            let (place, name) = key(new_p);
            let here = format!("{at} {place} parameter `{name}`");
            if new_p["required"].as_bool().unwrap_or(false) {
                diff.push(ChangeKind::Breaking, &here, "a new required parameter".into());
            } else {
                diff.push(ChangeKind::Additive, &here, "a new optional parameter".into());
            }
        }
    }
}

fn request_body(diff: &mut SchemaDiff<'_>, at: &str, old: Option<&Value>, new: Option<&Value>) {
    let here = format!("{at} request body");
    let required = |b: Option<&Value>| b.and_then(|b| b["required"].as_bool()).unwrap_or(false);
    match (old, new) {
        (None, None) => return,
        (Some(_), None) => return diff.push(ChangeKind::Breaking, &here, "the request body is removed".into()),
        (None, Some(_)) if required(new) => {
            return diff.push(ChangeKind::Breaking, &here, "a new required request body".into());
        }
        (None, Some(_)) => return diff.push(ChangeKind::Additive, &here, "a new optional request body".into()),
        (Some(_), Some(_)) if !required(old) && required(new) => {
            diff.push(ChangeKind::Breaking, &here, "the request body is now required".into());
        }
        _ => {}
    }
    content(diff, &here, Direction::Input, old, new);
}

fn responses(diff: &mut SchemaDiff<'_>, at: &str, old: &Value, new: &Value) {
    let empty = Map::new();
    let old_responses = old.get("responses").and_then(Value::as_object).unwrap_or(&empty);
    let new_responses = new.get("responses").and_then(Value::as_object).unwrap_or(&empty);
    for (status, old_r) in old_responses {
        let here = format!("{at} response {status}");
        match new_responses.get(status) {
            None => diff.push(ChangeKind::Breaking, &here, "the response is removed".into()),
            Some(new_r) => content(diff, &here, Direction::Output, Some(old_r), Some(new_r)),
        }
    }
    for status in new_responses.keys().filter(|s| !old_responses.contains_key(*s)) {
        diff.push(ChangeKind::Additive, &format!("{at} response {status}"), "a new response".into());
    }
}

/// The bodies of a request body or a response, by content type.
fn content(diff: &mut SchemaDiff<'_>, at: &str, direction: Direction, old: Option<&Value>, new: Option<&Value>) {
    let of = |v: Option<&Value>| v.and_then(|v| v.get("content")).and_then(Value::as_object).cloned();
    let (old_content, new_content) = (of(old).unwrap_or_default(), of(new).unwrap_or_default());
    for (content_type, old_media) in &old_content {
        let here = format!("{at} {content_type}");
        match new_content.get(content_type) {
            None => diff.push(ChangeKind::Breaking, &here, "the content type is no longer used".into()),
            Some(new_media) => diff.schema(&here, direction, &old_media["schema"], &new_media["schema"]),
        }
    }
    for content_type in new_content.keys().filter(|c| !old_content.contains_key(*c)) {
        let what = "a new content type".to_owned();
        diff.push(ChangeKind::Additive, &format!("{at} {content_type}"), what);
    }
}

/// Compares `doc` with the committed copy at `committed` and panics, with every
/// difference listed, when a change is breaking; returns the additive ones, which a
/// client written against the copy survives. With `KILN_OPENAPI_UPDATE=1` in the
/// environment it writes `doc` to `committed` instead, and a missing copy is an error
/// that says so.
///
/// ```no_run
/// # fn app() -> kiln::App<()> { kiln::App::new(|_| ()) }
/// // tests/api_contract.rs
/// let additive = kiln::openapi::assert_matches(&app().openapi(), "openapi.json");
/// assert!(additive.is_empty(), "the API grew: commit the new document ({additive:?})");
/// ```
#[track_caller]
pub fn assert_matches(doc: &Document, committed: impl AsRef<Path>) -> Vec<Change> {
    let path = committed.as_ref();
    if std::env::var_os(UPDATE_ENV).is_some_and(|v| v == "1") {
        if let Err(e) = std::fs::write(path, doc.to_pretty_string()) {
            panic!("the API document could not be written to {}: {e}", path.display());
        }
        return Vec::new();
    }
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) => {
            panic!("the committed API document {} cannot be read ({e}); write it with {UPDATE_ENV}=1", path.display())
        }
    };
    let old: Value = match serde_json::from_str(&text) {
        Ok(old) => old,
        Err(e) => panic!("the committed API document {} is not JSON: {e}", path.display()),
    };
    let changes = compare(&old, doc.json());
    if changes.iter().any(|c| c.kind == ChangeKind::Breaking) {
        let list: Vec<String> = changes.iter().map(|c| format!("  {c}")).collect();
        panic!(
            "the API breaks its committed contract {}:\n{}\nIf that is intended, rewrite the copy with {UPDATE_ENV}=1 and commit it.",
            path.display(),
            list.join("\n")
        );
    }
    changes
}
