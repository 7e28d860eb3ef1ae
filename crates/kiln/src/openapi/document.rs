//! The document: every registered route's operation, the schemas they name and the
//! security schemes they use, as an OpenAPI 3.1 Document Object.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use kiln_http::Method;
use serde_json::{Map, Value, json};

use crate::app::App;
use crate::problem::Problems;

use super::describe::Describer;
use super::operation::{Operation, Security, object};
use super::problem;
use super::schemas::{Schemas, rewrite_refs};

/// The OpenAPI version the document follows.
pub const OPENAPI_VERSION: &str = "3.1.1";

/// The JSON Schema dialect of its schemas, schemars' (draft 2020-12).
const DIALECT: &str = "https://json-schema.org/draft/2020-12/schema";

/// An app's OpenAPI 3.1 document, from [`App::openapi`], with the check of what it
/// could not describe exactly ([`undescribed`](Self::undescribed)).
#[derive(Debug, Clone)]
pub struct Document {
    json: Value,
    undescribed: Vec<Undescribed>,
}

/// An operation the document describes only in part, and why: the check that lets its
/// author make it precise.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Undescribed {
    /// `METHOD /path/{template}`.
    pub operation: String,
    /// The route type's name.
    pub route: String,
    /// What is not described.
    pub reasons: Vec<&'static str>,
}

impl fmt::Display for Undescribed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({}): {}", self.operation, self.route, self.reasons.join("; "))
    }
}

impl Document {
    /// The document as JSON.
    pub fn json(&self) -> &Value {
        &self.json
    }

    /// The document as JSON, owned.
    pub fn into_json(self) -> Value {
        self.json
    }

    /// The document as pretty-printed JSON, ending with a newline: what to commit.
    pub fn to_pretty_string(&self) -> String {
        let mut text = serde_json::to_string_pretty(&self.json).expect("a JSON value serialises");
        text.push('\n');
        text
    }

    /// Sets the API's title and version (`info`); by default `kiln app` and `0.0.0`.
    pub fn info(mut self, title: &str, version: &str) -> Self {
        self.json["info"]["title"] = title.into();
        self.json["info"]["version"] = version.into();
        self
    }

    /// The operations described only in part: each handler registered with
    /// [`App::route`] (its route is described, not its arguments and output), and
    /// each whose types leave something to run time (a `StatusCode` returned, a
    /// `Typed` content type).
    pub fn undescribed(&self) -> &[Undescribed] {
        &self.undescribed
    }
}

impl<S: 'static> App<S> {
    /// The app's API contract: an OpenAPI 3.1 document of its routes, derived from
    /// their types (feature `openapi`; the design is `docs/openapi.md`). Routes given
    /// with [`api`](Self::api) are described from their arguments and output; those
    /// given with [`route`](Self::route), from their route type only, and listed by
    /// [`Document::undescribed`]. Built when called, never per request.
    ///
    /// ```
    /// use kiln::{App, Route};
    ///
    /// /// A page of the wiki.
    /// #[derive(Route)]
    /// #[route("/pages/{slug}")]
    /// struct Page { slug: String, rev: Option<u32> }
    ///
    /// async fn page(route: Page) -> String { route.slug }
    ///
    /// let doc = App::new(|_| ()).route(page).openapi().info("Wiki", "1.0");
    /// let json = doc.json();
    /// assert_eq!(json["openapi"], "3.1.1");
    /// let get = &json["paths"]["/pages/{slug}"]["get"];
    /// assert_eq!(get["summary"], "A page of the wiki.");
    /// assert_eq!(get["parameters"][0]["name"], "slug");
    /// assert_eq!(get["parameters"][1]["schema"]["type"], "integer");
    /// assert_eq!(doc.undescribed()[0].operation, "GET /pages/{slug}");
    /// ```
    pub fn openapi(&self) -> Document {
        build(self.described_routes(), self.public_url_str(), self.problems())
    }
}

/// Builds the document of `routes` (pattern, method, describer).
fn build<'r>(
    routes: impl Iterator<Item = (&'r str, &'r Method, Describer)>,
    server: Option<&str>,
    problems: Option<&Problems>,
) -> Document {
    let mut schemas = Schemas::new();
    let mut paths: BTreeMap<String, Map<String, Value>> = BTreeMap::new();
    let mut undescribed = Vec::new();
    let mut used_schemes = BTreeSet::new();
    let mut operation_ids = BTreeSet::new();
    let mut uses_problems = false;
    for (pattern, method, describer) in routes {
        let mut op = Operation::new(&mut schemas);
        (describer.describe)(&mut op);
        let mut parts = op.parts;
        let template = template(pattern);
        let (route, doc) = parts.route.take().unwrap_or(("", ""));
        let mut reasons = std::mem::take(&mut parts.imprecise);
        if !describer.handler {
            reasons.insert(0, "registered with `App::route`: its body and responses are not described");
        }
        if !reasons.is_empty() {
            let operation = format!("{} {template}", method.as_str());
            undescribed.push(Undescribed { operation, route: route.to_owned(), reasons });
        }
        used_schemes.extend(parts.security.iter().chain(&parts.optional_security).copied());
        let mut object = Map::new();
        object.insert("operationId".into(), operation_id(route, &mut operation_ids).into());
        let (summary, description) = split_doc(doc);
        if !summary.is_empty() {
            object.insert("summary".into(), summary.into());
        }
        let notes = std::mem::take(&mut parts.notes);
        let description: Vec<&str> = std::iter::once(description).chain(notes).filter(|s| !s.is_empty()).collect();
        if !description.is_empty() {
            object.insert("description".into(), description.join("\n\n").into());
        }
        parts.write(&mut object);
        if problems.is_some_and(|p| p.covers_template(&template)) {
            uses_problems = true;
            if let Some(Value::Object(responses)) = object.get_mut("responses") {
                problem::add_bodies(responses);
            }
        }
        paths.entry(template).or_default().insert(method.as_str().to_ascii_lowercase(), Value::Object(object));
    }
    let (mut defs, refs) = schemas.finish();
    if uses_problems {
        problem::add_schemas(&mut defs);
    }
    let mut components = Map::new();
    if !defs.is_empty() {
        components.insert("schemas".into(), Value::Object(defs));
    }
    if !used_schemes.is_empty() {
        components.insert("securitySchemes".into(), security_schemes(&used_schemes));
    }
    let paths: Map<String, Value> = paths.into_iter().map(|(k, v)| (k, Value::Object(v))).collect();
    let info = json!({ "title": "kiln app", "version": "0.0.0" });
    let mut json = object([
        ("openapi", OPENAPI_VERSION.into()),
        ("jsonSchemaDialect", DIALECT.into()),
        ("info", info),
        ("paths", Value::Object(paths)),
    ]);
    // Without a public URL the server is the one the document is read from: `/`, the
    // default OpenAPI 3.1 §4.8.1 gives an absent `servers`, written out because
    // linters (redocly's `no-empty-servers`) take an absent list for a forgotten one.
    json["servers"] = json!([{ "url": server.unwrap_or("/") }]);
    if !components.is_empty() {
        json["components"] = Value::Object(components);
    }
    rewrite_refs(&mut json, &refs);
    Document { json, undescribed }
}

/// A matchit pattern as an OpenAPI path template: `{*rest}` is `{rest}`.
fn template(pattern: &str) -> String {
    pattern.replace("{*", "{")
}

/// The route type's name without its module path (`app::api::PutPage` is `PutPage`),
/// made unique with a number when two modules use one name.
fn operation_id(route: &str, used: &mut BTreeSet<String>) -> String {
    let short = route.rsplit("::").next().unwrap_or(route);
    let base = if short.is_empty() { "operation" } else { short };
    let mut id = base.to_owned();
    let mut n = 2;
    while !used.insert(id.clone()) {
        id = format!("{base}{n}");
        n += 1;
    }
    id
}

/// The summary (the first paragraph, on one line) and the description (the rest).
fn split_doc(doc: &str) -> (String, &str) {
    let (first, rest) = doc.split_once("\n\n").unwrap_or((doc, ""));
    let summary = first.lines().map(str::trim).collect::<Vec<_>>().join(" ");
    (summary, rest.trim())
}

fn security_schemes(used: &BTreeSet<Security>) -> Value {
    let mut schemes = Map::new();
    for scheme in used {
        match scheme {
            Security::Bearer => {
                let bearer = json!({
                    "type": "http",
                    "scheme": "bearer",
                    "description": "a token from `BearerToken::issue`, signed with the app's key",
                });
                schemes.insert("bearer".into(), bearer);
            }
            Security::Session => {
                let session = json!({
                    "type": "apiKey",
                    "in": "cookie",
                    "name": crate::SESSION_COOKIE,
                    "description": "the signed session cookie",
                });
                schemes.insert("session".into(), session);
            }
            Security::CsrfToken => {
                let header = json!({
                    "type": "apiKey",
                    "in": "header",
                    "name": crate::CSRF_HEADER,
                    "description": format!(
                        "the CSRF token, in this header or in the form field `{}`, matching the CSRF cookie",
                        crate::CSRF_FIELD
                    ),
                });
                schemes.insert("csrf".into(), header);
                let cookie = json!({
                    "type": "apiKey",
                    "in": "cookie",
                    "name": crate::CSRF_COOKIE,
                    "description": "the signed CSRF cookie the token must match",
                });
                schemes.insert("csrf_cookie".into(), cookie);
            }
        }
    }
    Value::Object(schemes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_doc_comment_splits_into_summary_and_description() {
        assert_eq!(
            split_doc("Shows a page.\nIn full.\n\nWith its history."),
            ("Shows a page. In full.".into(), "With its history.")
        );
        assert_eq!(split_doc("Shows a page."), ("Shows a page.".into(), ""));
    }

    #[test]
    fn operation_ids_are_short_and_unique() {
        let mut used = BTreeSet::new();
        assert_eq!(operation_id("app::api::PutPage", &mut used), "PutPage");
        assert_eq!(operation_id("app::pages::PutPage", &mut used), "PutPage2");
    }

    #[test]
    fn a_wildcard_is_a_template_parameter() {
        assert_eq!(template("/files/{*rest}"), "/files/{rest}");
    }
}
