//! One operation as it is being described: what its route, extractors and output add,
//! collected before it is written out as an OpenAPI Operation Object.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde_json::{Map, Value, json};

use super::schemas::Schemas;

/// Where a parameter is read from (OpenAPI's `in`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParamIn {
    /// A capture of the path template.
    Path,
    /// A key of the query string.
    Query,
    /// A request header.
    Header,
    /// A cookie.
    Cookie,
}

impl ParamIn {
    fn as_str(self) -> &'static str {
        match self {
            ParamIn::Path => "path",
            ParamIn::Query => "query",
            ParamIn::Header => "header",
            ParamIn::Cookie => "cookie",
        }
    }
}

/// A way of proving who the caller is, as kiln's extractors check it; each becomes a
/// security scheme of the document (`components.securitySchemes`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Security {
    /// `Authorization: Bearer <token>` ([`BearerToken`](crate::BearerToken)): scheme `bearer`.
    Bearer,
    /// The session cookie ([`Session`](crate::Session)): scheme `session`.
    Session,
    /// The CSRF token in `x-csrf-token` (or the form field `csrf_token`) matching the
    /// signed CSRF cookie ([`CsrfGuard`](crate::CsrfGuard)): schemes `csrf` and `csrf_cookie`.
    CsrfToken,
}

impl Security {
    /// The names of its schemes, required together.
    pub(crate) fn schemes(self) -> &'static [&'static str] {
        match self {
            Security::Bearer => &["bearer"],
            Security::Session => &["session"],
            Security::CsrfToken => &["csrf", "csrf_cookie"],
        }
    }
}

/// An operation being described: [`Describe`](super::Describe) and
/// [`DescribeResponse`](super::DescribeResponse) impls add to it what their type
/// contributes.
///
/// ```
/// use kiln::openapi::{Describe, Operation, ParamIn, Security};
///
/// /// The caller, as an API key looked up in the database names them.
/// struct Caller;
///
/// impl Describe for Caller {
///     fn describe(op: &mut Operation<'_>) {
///         op.parameter(ParamIn::Header, "x-api-key", true, serde_json::json!({ "type": "string" }));
///         op.response("401", "the API key is missing or unknown");
///     }
/// }
/// ```
pub struct Operation<'a> {
    pub(crate) schemas: &'a mut Schemas,
    pub(crate) parts: Parts,
}

/// What an operation's description holds so far.
#[derive(Default)]
pub(crate) struct Parts {
    /// The route type's name and doc comment.
    pub(crate) route: Option<(&'static str, &'static str)>,
    pub(crate) parameters: Vec<Parameter>,
    pub(crate) body: Option<Body>,
    /// By status key: `"200"`, `"4XX"`, `"default"`.
    pub(crate) responses: BTreeMap<String, Response>,
    /// Schemes the request must satisfy together.
    pub(crate) security: Vec<Security>,
    /// Schemes the request may satisfy (`Option<BearerToken>`, `Session`): it is
    /// answered without them too.
    pub(crate) optional_security: Vec<Security>,
    /// Why the description is not exact, for [`Document::undescribed`](super::Document::undescribed).
    pub(crate) imprecise: Vec<&'static str>,
    /// Sentences added to the operation's description: inputs it reads that the
    /// document cannot list ([`Operation::unlisted`]).
    pub(crate) notes: Vec<&'static str>,
}

pub(crate) struct Parameter {
    pub(crate) location: ParamIn,
    pub(crate) name: String,
    pub(crate) required: bool,
    pub(crate) schema: Value,
    pub(crate) description: Option<String>,
    /// Set for an object parameter whose properties are the query's keys.
    pub(crate) exploded: bool,
}

pub(crate) struct Body {
    pub(crate) required: bool,
    /// By content type.
    pub(crate) content: BTreeMap<String, Value>,
}

#[derive(Default)]
pub(crate) struct Response {
    pub(crate) descriptions: Vec<String>,
    pub(crate) content: BTreeMap<String, Value>,
    pub(crate) headers: BTreeMap<&'static str, &'static str>,
}

impl<'a> Operation<'a> {
    pub(crate) fn new(schemas: &'a mut Schemas) -> Self {
        Operation { schemas, parts: Parts::default() }
    }

    /// The schema of `T` as a request carries it (serde's deserialize side): a `$ref`
    /// into `components.schemas`, or the schema itself for a type schemars inlines.
    pub fn input_schema<T: JsonSchema + ?Sized>(&mut self) -> Value {
        self.schemas.input::<T>()
    }

    /// The schema of `T` as a response carries it (serde's serialize side).
    pub fn output_schema<T: JsonSchema + ?Sized>(&mut self) -> Value {
        self.schemas.output::<T>()
    }

    /// Adds a parameter; a second one of the same name and place replaces the first.
    /// A `description` in `schema` becomes the parameter's.
    pub fn parameter(&mut self, location: ParamIn, name: &str, required: bool, mut schema: Value) {
        let description = schema.as_object_mut().and_then(|s| s.remove("description"));
        let description = description.and_then(|d| d.as_str().map(str::to_owned));
        self.parts.parameters.retain(|p| !(p.location == location && p.name == name));
        self.parts.parameters.push(Parameter {
            location,
            name: name.to_owned(),
            required,
            schema,
            description,
            exploded: false,
        });
    }

    /// Says the request carries a body of `content_type` described by `schema`; a
    /// body given twice (two extractors reading it) accepts either content type.
    pub fn body(&mut self, content_type: &str, schema: Value, required: bool) {
        let body = self.parts.body.get_or_insert_with(|| Body { required, content: BTreeMap::new() });
        body.required &= required;
        body.content.insert(content_type.to_owned(), schema);
    }

    /// Says the operation may answer `status` (`"201"`, `"4XX"`, `"default"`) for the
    /// reason `description`, with no body described.
    pub fn response(&mut self, status: &str, description: &str) {
        let response = self.parts.responses.entry(status.to_owned()).or_default();
        if !response.descriptions.iter().any(|d| d == description) {
            response.descriptions.push(description.to_owned());
        }
    }

    /// Says the operation may answer `status` with a body of `content_type` described
    /// by `schema`; two bodies of one type under one status are either.
    pub fn response_body(&mut self, status: &str, description: &str, content_type: &str, schema: Value) {
        self.response(status, description);
        self.content(status, content_type, schema);
    }

    /// Adds a body to the response of `status`, which exists.
    fn content(&mut self, status: &str, content_type: &str, schema: Value) {
        let response = self.parts.responses.get_mut(status).expect("added before");
        match response.content.get_mut(content_type) {
            Some(existing) if *existing != schema => {
                *existing = object([("anyOf", Value::Array(vec![existing.take(), schema]))]);
            }
            Some(_) => {}
            None => {
                response.content.insert(content_type.to_owned(), schema);
            }
        }
    }

    /// Says a response of `status` carries the header `name`, described as `description`.
    pub fn response_header(&mut self, status: &str, name: &'static str, description: &'static str) {
        if let Some(response) = self.parts.responses.get_mut(status) {
            response.headers.insert(name, description);
        }
    }

    /// Says the request must prove who the caller is by `scheme`.
    pub fn security(&mut self, scheme: Security) {
        self.parts.optional_security.retain(|s| *s != scheme);
        if !self.parts.security.contains(&scheme) {
            self.parts.security.push(scheme);
        }
    }

    /// Says the request may prove who the caller is by `scheme`, and is answered
    /// without it too.
    pub fn optional_security(&mut self, scheme: Security) {
        if !self.parts.security.contains(&scheme) && !self.parts.optional_security.contains(&scheme) {
            self.parts.optional_security.push(scheme);
        }
    }

    /// Notes that the description is not exact and why; the check
    /// ([`Document::undescribed`](super::Document::undescribed)) lists the operation.
    pub fn imprecise(&mut self, reason: &'static str) {
        if !self.parts.imprecise.contains(&reason) {
            self.parts.imprecise.push(reason);
        }
    }

    /// Notes inputs the handler reads that cannot be listed (a header, cookie or form
    /// field read by a name chosen at run time): `note` is added to the operation's
    /// description, so that a reader knows, and the check
    /// ([`Document::undescribed`](super::Document::undescribed)) lists the operation
    /// with `note` as its reason.
    pub fn unlisted(&mut self, note: &'static str) {
        self.imprecise(note);
        if !self.parts.notes.contains(&note) {
            self.parts.notes.push(note);
        }
    }

    /// Describes with `f` into a scratch operation over the same schemas and returns
    /// what it added: how `Option<T>` makes `T`'s inputs optional.
    pub(crate) fn scratch(&mut self, f: impl FnOnce(&mut Operation<'_>)) -> Parts {
        let mut scratch = Operation::new(&mut *self.schemas);
        f(&mut scratch);
        scratch.parts
    }

    /// Adds the responses of `parts` (from [`scratch`](Self::scratch)).
    pub(crate) fn add_responses(&mut self, parts: Parts) {
        for (status, response) in parts.responses {
            for description in &response.descriptions {
                self.response(&status, description);
            }
            for (content_type, schema) in response.content {
                self.content(&status, &content_type, schema);
            }
            let target = self.parts.responses.get_mut(&status).expect("added above");
            target.headers.extend(response.headers);
        }
        for reason in parts.imprecise {
            self.imprecise(reason);
        }
        for note in parts.notes {
            self.unlisted(note);
        }
    }

    /// Adds the inputs of `parts` as optional ones, dropping its responses: the
    /// extractor's refusal is the handler's to answer (`Option<T>`, `Result<T, Rejection>`).
    pub(crate) fn add_optional(&mut self, parts: Parts) {
        for mut p in parts.parameters {
            p.required &= p.location == ParamIn::Path;
            self.parts.parameters.retain(|q| !(q.location == p.location && q.name == p.name));
            self.parts.parameters.push(p);
        }
        if let Some(body) = parts.body {
            for (content_type, schema) in body.content {
                self.body(&content_type, schema, false);
            }
        }
        for scheme in parts.security.into_iter().chain(parts.optional_security) {
            self.optional_security(scheme);
        }
        for reason in parts.imprecise {
            self.imprecise(reason);
        }
        for note in parts.notes {
            self.unlisted(note);
        }
    }
}

impl Parts {
    /// The Operation Object's fields other than `operationId`, `summary` and
    /// `description`.
    pub(crate) fn write(self, op: &mut Map<String, Value>) {
        if !self.parameters.is_empty() {
            let params = self.parameters.into_iter().map(Parameter::into_json).collect();
            op.insert("parameters".into(), Value::Array(params));
        }
        if let Some(body) = self.body {
            let content: Map<String, Value> =
                body.content.into_iter().map(|(ct, schema)| (ct, object([("schema", schema)]))).collect();
            op.insert(
                "requestBody".into(),
                object([("required", body.required.into()), ("content", Value::Object(content))]),
            );
        }
        let mut responses = Map::new();
        for (status, response) in self.responses {
            responses.insert(status, response.into_json());
        }
        if responses.is_empty() {
            responses.insert("default".into(), json!({ "description": "not described" }));
        }
        op.insert("responses".into(), Value::Object(responses));
        // Security Requirement Objects are alternatives, each a set of schemes required
        // together: with the optional ones, and without them.
        let requirement = |schemes: &[Security]| {
            let names = schemes.iter().flat_map(|s| s.schemes()).map(|name| ((*name).to_owned(), json!([])));
            Value::Object(names.collect())
        };
        if !self.security.is_empty() || !self.optional_security.is_empty() {
            let all: Vec<Security> = self.security.iter().chain(&self.optional_security).copied().collect();
            let mut alternatives = vec![requirement(&all)];
            if !self.optional_security.is_empty() {
                alternatives.push(requirement(&self.security));
            }
            op.insert("security".into(), Value::Array(alternatives));
        } else {
            // Said rather than left out: an empty list is "no security" (OpenAPI 3.1
            // §4.8.10.2), where an absent one defers to a document-wide default, and
            // linters (redocly's `security-defined`) ask each operation to say which.
            op.insert("security".into(), json!([]));
        }
    }
}

impl Parameter {
    fn into_json(self) -> Value {
        let mut p = object([
            ("name", self.name.into()),
            ("in", self.location.as_str().into()),
            ("required", self.required.into()),
            ("schema", self.schema),
        ]);
        if let Some(description) = self.description {
            p["description"] = description.into();
        }
        if self.exploded {
            p["style"] = "form".into();
            p["explode"] = true.into();
        }
        p
    }
}

impl Response {
    fn into_json(self) -> Value {
        let mut r = object([("description", self.descriptions.join("; ").into())]);
        if !self.content.is_empty() {
            let content: Map<String, Value> =
                self.content.into_iter().map(|(ct, schema)| (ct, object([("schema", schema)]))).collect();
            r["content"] = Value::Object(content);
        }
        if !self.headers.is_empty() {
            let headers: Map<String, Value> = self
                .headers
                .into_iter()
                .map(|(name, description)| {
                    (name.to_owned(), json!({ "description": description, "schema": { "type": "string" } }))
                })
                .collect();
            r["headers"] = Value::Object(headers);
        }
        r
    }
}

/// A JSON object of these members, moved in: `json!` would copy each `Value` it is
/// given (it serialises them), which for a document of a hundred operations is most
/// of the time it takes to build.
pub(crate) fn object<const N: usize>(members: [(&str, Value); N]) -> Value {
    Value::Object(members.into_iter().map(|(key, value)| (key.to_owned(), value)).collect())
}
