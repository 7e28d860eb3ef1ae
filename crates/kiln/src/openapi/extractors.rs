//! What each of kiln's extractors reads, and the statuses of its rejections (those of
//! the rejection types in [`crate::rejection`]).

use std::borrow::Cow;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde_json::{Value, json};

use crate::client_addr::ClientAddr;
use crate::cookie::Cookies;
use crate::csrf::{Csrf, CsrfGuard};
use crate::extract::{Headers, RequestHead, State};
use crate::fields::{CookieFields, HeaderFields};
use crate::form::{Form, Query};
use crate::json::Json;
use crate::key::Key;
use crate::link::PublicUrl;
use crate::multipart::{FileField, Multipart, MultipartFields};
use crate::realtime::LastEventId;
use crate::rejection::Rejection;
use crate::security::BearerToken;
use crate::session::Session;
use crate::signed::SignedCookies;
use crate::ws::WebSocketUpgrade;
use kiln_http::{Bytes, Method};

use super::describe::Describe;
use super::operation::{Operation, ParamIn, Parameter, Security};

const TOO_LARGE: &str = "the body is larger than the app's body limit";

/// `application/json`, `T`'s schema.
impl<T: JsonSchema> Describe for Json<T> {
    fn describe(op: &mut Operation<'_>) {
        let schema = op.input_schema::<T>();
        op.body("application/json", schema, true);
        op.response("400", "the body is not well-formed JSON");
        op.response("413", TOO_LARGE);
        op.response("415", "the body is not `application/json`");
        op.response("422", "the JSON body has the wrong shape");
    }
}

/// `application/x-www-form-urlencoded`, `T`'s schema.
impl<T: JsonSchema> Describe for Form<T> {
    fn describe(op: &mut Operation<'_>) {
        let schema = op.input_schema::<T>();
        op.body("application/x-www-form-urlencoded", schema, true);
        op.response("413", TOO_LARGE);
        op.response("415", "the body is not `application/x-www-form-urlencoded`");
        op.response("422", "the form does not fit its fields");
    }
}

/// One query parameter per property of `T`'s schema; a schema that is not a plain
/// object (an enum, a flattened one) is one parameter whose properties are the keys.
impl<T: JsonSchema> Describe for Query<T> {
    fn describe(op: &mut Operation<'_>) {
        let schema = op.input_schema::<T>();
        if !parameters_of(op, &schema, ParamIn::Query) {
            let name = std::any::type_name::<T>().rsplit("::").next().unwrap_or("query").to_owned();
            op.parts.parameters.push(Parameter {
                location: ParamIn::Query,
                name,
                required: false,
                schema,
                description: None,
                exploded: true,
            });
        }
        op.response("400", "the query does not fit its parameters");
    }
}

/// One header parameter per property of `T`'s schema.
impl<T: JsonSchema> Describe for HeaderFields<T> {
    fn describe(op: &mut Operation<'_>) {
        let schema = op.input_schema::<T>();
        if !parameters_of(op, &schema, ParamIn::Header) {
            op.imprecise("`HeaderFields<T>` whose `T` is not a plain struct: its headers are not listed");
        }
        op.response("400", "a header is missing or does not parse");
    }
}

/// One cookie parameter per property of `T`'s schema.
impl<T: JsonSchema> Describe for CookieFields<T> {
    fn describe(op: &mut Operation<'_>) {
        let schema = op.input_schema::<T>();
        if !parameters_of(op, &schema, ParamIn::Cookie) {
            op.imprecise("`CookieFields<T>` whose `T` is not a plain struct: its cookies are not listed");
        }
        op.response("400", "a cookie is missing or does not parse");
    }
}

/// Adds a parameter at `location` for each property of `schema` (a plain object,
/// after resolving its `$ref`), required as the schema says; `false` if it is not
/// one (an enum, a flattened or open map), adding nothing.
fn parameters_of(op: &mut Operation<'_>, schema: &Value, location: ParamIn) -> bool {
    let resolved = op.schemas.resolve(schema);
    let plain = resolved.get("type") == Some(&json!("object"))
        && !["allOf", "anyOf", "oneOf", "additionalProperties"].iter().any(|k| resolved.get(k).is_some());
    let Some(properties) = resolved.get("properties").and_then(Value::as_object).filter(|_| plain) else {
        return false;
    };
    let required: Vec<&str> = resolved
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let params: Vec<(String, bool, Value)> = properties
        .iter()
        .map(|(name, schema)| (name.clone(), required.contains(&name.as_str()), schema.clone()))
        .collect();
    for (name, required, schema) in params {
        op.parameter(location, &name, required, schema);
    }
    true
}

/// `multipart/form-data`; its fields are read by the handler by name at run time, so
/// not listed (the operation says so): [`MultipartFields<T>`] lists them.
impl Describe for Multipart {
    fn describe(op: &mut Operation<'_>) {
        op.body("multipart/form-data", json!({ "type": "object" }), true);
        op.unlisted(
            "The multipart form's fields are read by name as the body streams in (`Multipart`): \
             they are not listed. `MultipartFields<T>` would list them.",
        );
        op.response("400", "the multipart body is malformed");
        op.response("413", "a field or the body is larger than its limit");
        op.response("415", "the body is not `multipart/form-data`");
    }
}

/// `multipart/form-data` with `T`'s schema, each [`FileField`] a binary string.
impl<T: JsonSchema> Describe for MultipartFields<T> {
    fn describe(op: &mut Operation<'_>) {
        let schema = op.input_schema::<T>();
        op.body("multipart/form-data", schema, true);
        op.response("400", "the multipart body is malformed");
        op.response("403", "the CSRF field is missing, wrong or not first");
        op.response("413", "a field or the body is larger than its limit");
        op.response("415", "the body is not `multipart/form-data`");
        op.response("422", "the form's fields do not fit");
    }
}

/// A file in a form: OpenAPI 3.1 describes one as a string of bytes with a
/// `contentMediaType` (3.0's `format: binary`).
impl JsonSchema for FileField {
    fn schema_name() -> Cow<'static, str> {
        "FileField".into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "type": "string",
            "contentMediaType": "application/octet-stream",
            "description": "a file",
        })
    }
}

/// The raw body, any bytes.
impl Describe for Bytes {
    fn describe(op: &mut Operation<'_>) {
        op.body("application/octet-stream", json!({}), false);
    }
}

/// The body as text.
impl Describe for String {
    fn describe(op: &mut Operation<'_>) {
        op.body("text/plain", json!({ "type": "string" }), false);
        op.response("400", "the body is not UTF-8");
    }
}

impl Describe for BearerToken {
    fn describe(op: &mut Operation<'_>) {
        op.security(Security::Bearer);
        op.response("401", "the bearer token is missing, forged, malformed or expired");
        op.response_header("401", "WWW-Authenticate", "the `Bearer` challenge (RFC 6750 §3)");
    }
}

/// A visitor without a session has an empty one: the cookie is optional.
impl Describe for Session {
    fn describe(op: &mut Operation<'_>) {
        op.optional_security(Security::Session);
    }
}

impl Describe for CsrfGuard {
    fn describe(op: &mut Operation<'_>) {
        op.security(Security::CsrfToken);
        op.response("403", "the CSRF token is missing or wrong");
    }
}

/// The upgrade's own response (`101`) is the handler's output's.
impl Describe for WebSocketUpgrade {
    fn describe(op: &mut Operation<'_>) {
        op.response("400", "the WebSocket handshake breaks RFC 6455 §4.2.1");
        op.response("426", "the WebSocket version is not 13");
    }
}

impl Describe for LastEventId {
    fn describe(op: &mut Operation<'_>) {
        op.parameter(ParamIn::Header, "Last-Event-ID", false, json!({ "type": "string" }));
    }
}

/// Extractors that read what every request has, or nothing the document describes.
macro_rules! describes_nothing {
    ($($ty:ty),*) => {
        $(impl Describe for $ty {})*
    };
}

/// Any header, read by a name chosen at run time: they cannot be listed.
impl Describe for Headers {
    fn describe(op: &mut Operation<'_>) {
        op.unlisted(
            "Request headers are read by name at run time (`Headers`): they are not listed. \
             `HeaderFields<T>` would list them.",
        );
    }
}

/// Any cookie, read by a name chosen at run time: they cannot be listed.
impl Describe for Cookies {
    fn describe(op: &mut Operation<'_>) {
        op.unlisted(
            "Cookies are read by name at run time (`Cookies`): they are not listed. \
             `CookieFields<T>` would list them.",
        );
    }
}

/// Any signed cookie, read by a name chosen at run time.
impl Describe for SignedCookies {
    fn describe(op: &mut Operation<'_>) {
        op.unlisted("Signed cookies are read by name at run time (`SignedCookies`): they are not listed.");
    }
}

describes_nothing!(Csrf, RequestHead, Method, ClientAddr, PublicUrl, Key);

impl<S> Describe for State<S> {}

/// `T`'s inputs, optional; its refusals become `None`.
impl<T: Describe> Describe for Option<T> {
    fn describe(op: &mut Operation<'_>) {
        let parts = op.scratch(T::describe);
        op.add_optional(parts);
    }
}

/// `T`'s inputs, optional; its refusals are the handler's to answer.
impl<T: Describe> Describe for Result<T, Rejection> {
    fn describe(op: &mut Operation<'_>) {
        let parts = op.scratch(T::describe);
        op.add_optional(parts);
        op.imprecise("an extractor's refusal is handed to the handler, which answers it its own way");
    }
}

/// `E`'s inputs, whose schemas carry the constraints (schemars reads `#[garde(..)]`),
/// and the `422` of a value that breaks them.
#[cfg(feature = "validate")]
impl<E: Describe> Describe for crate::valid::Valid<E> {
    fn describe(op: &mut Operation<'_>) {
        E::describe(op);
        op.response("422", "the input breaks its constraints: every failing field is listed");
    }
}
