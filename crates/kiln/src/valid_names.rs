//! A failing field's path in the names the client sent: garde reports a field by its
//! Rust name (`full_name`), while the client sent, and the schema shows, its serde
//! name (`fullName` under `rename_all = "camelCase"`, `e-mail` under `rename`). Only a
//! refusal pays for this: the input is read again once a check has failed.
//!
//! Each of the path's fields is looked up among the keys the client sent at that
//! depth: the same name, else the one key that spells it alike but for case, `_` and
//! `-` (every `rename_all` convention does only that). A field absent from the input,
//! or renamed to an unrelated word (`#[serde(rename = "value")] val`), keeps the name
//! garde gives it; `#[garde(rename = "value")]` gives it the serde name there.

use serde_json::Value;

/// Where a validated extractor's input comes from.
#[doc(hidden)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// A JSON body.
    Json,
    /// A URL-encoded body.
    Form,
    /// The query string.
    Query,
}

/// The input as the client sent it, as JSON: the body, or the URL-encoded pairs as one
/// object. `Value::Null` when it cannot be read (it was, to be validated at all).
pub(crate) fn received(source: Source, req: &kiln_http::Request<'_>) -> Value {
    let pairs = |bytes: &[u8]| -> Value {
        let pairs: Vec<(String, String)> = serde_urlencoded::from_bytes(bytes).unwrap_or_default();
        Value::Object(pairs.into_iter().map(|(k, v)| (k, Value::String(v))).collect())
    };
    match source {
        Source::Json => serde_json::from_slice(req.body()).unwrap_or(Value::Null),
        Source::Form => pairs(req.body()),
        Source::Query => pairs(req.query().unwrap_or("").as_bytes()),
    }
}

/// `path` (garde's: `author.full_name`, `tags[2]`) in the names of `input`.
pub(crate) fn as_sent(path: &str, input: &Value) -> String {
    let mut out = String::with_capacity(path.len());
    let mut at = Some(input);
    for segment in segments(path) {
        match segment {
            Segment::Index(index) => {
                out.push('[');
                out.push_str(index);
                out.push(']');
                at = at.and_then(|v| v.get(index.parse::<usize>().ok()?));
            }
            Segment::Field(name) => {
                let key = at.and_then(Value::as_object).and_then(|object| sent_key(object, name));
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(key.unwrap_or(name));
                at = key.and_then(|key| at?.get(key));
            }
        }
    }
    out
}

/// The key of `object` that names the field garde calls `name`.
fn sent_key<'v>(object: &'v serde_json::Map<String, Value>, name: &str) -> Option<&'v str> {
    if let Some((key, _)) = object.get_key_value(name) {
        return Some(key);
    }
    let mut alike = object.keys().filter(|key| spelled_alike(key, name));
    match (alike.next(), alike.next()) {
        (Some(key), None) => Some(key),
        _ => None,
    }
}

/// Equal but for ASCII case, `_` and `-`.
fn spelled_alike(a: &str, b: &str) -> bool {
    fn letters(s: &str) -> impl Iterator<Item = u8> + '_ {
        s.bytes().filter(|b| !matches!(b, b'_' | b'-')).map(|b| b.to_ascii_lowercase())
    }
    letters(a).eq(letters(b))
}

enum Segment<'p> {
    Field(&'p str),
    Index(&'p str),
}

/// garde's path, split: `a.b[2].c` is `a`, `b`, `[2]`, `c`.
fn segments(path: &str) -> impl Iterator<Item = Segment<'_>> {
    path.split('.').filter(|s| !s.is_empty()).flat_map(|part| {
        let (field, indexes) = part.split_once('[').map_or((part, ""), |(f, rest)| (f, rest));
        let field = (!field.is_empty()).then_some(Segment::Field(field));
        let indexes = indexes.split('[').filter(|i| !i.is_empty()).map(|i| Segment::Index(i.trim_end_matches(']')));
        field.into_iter().chain(indexes)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_path_takes_the_names_the_client_sent_at_every_depth() {
        let input = json!({ "fullName": "a", "home-address": { "ZIP_CODE": "1" }, "tags": ["x", { "tagName": "" }] });
        assert_eq!(as_sent("full_name", &input), "fullName");
        assert_eq!(as_sent("home_address.zip_code", &input), "home-address.ZIP_CODE");
        assert_eq!(as_sent("tags[1].tag_name", &input), "tags[1].tagName");
        assert_eq!(as_sent("missing_field", &input), "missing_field", "absent: garde's name");
        assert_eq!(as_sent("", &input), "");
    }

    #[test]
    fn two_keys_spelled_alike_leave_the_name_as_it_was() {
        let input = json!({ "fullName": "a", "full-name": "b" });
        assert_eq!(as_sent("full_name", &input), "full_name");
    }
}
