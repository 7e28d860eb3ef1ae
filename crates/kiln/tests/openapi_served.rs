//! The document served (issue 32 item 2): `App::openapi_routes` answers the same
//! document as `App::openapi` at one path and a reference page for people, rendered by
//! `kiln::html!`, at another.
#![cfg(all(feature = "openapi", feature = "validate"))]

use kiln::openapi::JsonSchema;
use kiln::test::TestClient;
use kiln::{App, BearerToken, Json, Route, Valid};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Creates or replaces a page.
///
/// The old text is kept in the page's history.
#[derive(Route)]
#[route(PUT, "/api/pages/{slug}")]
struct PutPage {
    /// The page's name in its URL.
    slug: String,
}

/// Lists the pages.
#[derive(Route)]
#[route("/api/pages")]
struct ListPages {
    /// How many to skip.
    offset: Option<u32>,
}

/// A page as a client writes it.
#[expect(dead_code, reason = "only the title is read; the rest is for the document")]
#[derive(Deserialize, JsonSchema, garde::Validate)]
#[schemars(crate = "kiln::openapi::schemars")]
struct NewPage {
    /// The page's title.
    #[garde(length(min = 3, max = 80))]
    #[schemars(example = &"Getting started")]
    title: String,
    #[garde(skip)]
    status: Status,
    #[garde(skip)]
    author: Author,
    #[garde(skip)]
    #[serde(default)]
    draft: bool,
}

/// Whether readers see it.
#[derive(Deserialize, Serialize, JsonSchema)]
#[schemars(crate = "kiln::openapi::schemars")]
#[serde(rename_all = "lowercase")]
enum Status {
    Published,
    Hidden,
}

/// Who wrote it.
#[expect(dead_code, reason = "described in the document, not read")]
#[derive(Deserialize, JsonSchema)]
#[schemars(crate = "kiln::openapi::schemars")]
struct Author {
    /// Their display name.
    name: String,
    #[schemars(range(min = 1900))]
    born: Option<u16>,
}

/// A page as the server stores it.
#[derive(Serialize, JsonSchema)]
#[schemars(crate = "kiln::openapi::schemars")]
struct Page {
    slug: String,
    title: String,
    revision: u32,
}

async fn put_page(route: PutPage, _: BearerToken, Valid(Json(page)): Valid<Json<NewPage>>) -> Json<Page> {
    Json(Page { slug: route.slug, title: page.title, revision: 1 })
}

async fn list_pages(_: ListPages) -> Json<Vec<Page>> {
    Json(Vec::new())
}

fn app() -> App<()> {
    App::new(|_| ())
        .secret_key(kiln::Key::new([5u8; 32]).unwrap())
        .openapi_routes("/api/openapi.json", "/api/docs", |doc| doc.info("Wiki", "2.1"))
        .api(put_page)
        .api(list_pages)
}

#[test]
fn the_json_route_serves_the_same_document_as_app_openapi() {
    let expected = app().openapi().info("Wiki", "2.1").into_json();
    let mut client = TestClient::new(app());
    let res = client.get("/api/openapi.json");
    assert_eq!(res.status(), 200);
    assert_eq!(res.header("content-type"), Some("application/json"));
    let served: Value = res.json();
    assert_eq!(served, expected);
    // The document's own routes are not operations of it.
    assert!(served["paths"].get("/api/openapi.json").is_none());
    assert!(served["paths"].get("/api/docs").is_none());
    assert_eq!(client.request("HEAD", "/api/openapi.json").send().status(), 200);
}

#[test]
fn the_page_renders_each_operation() {
    let mut client = TestClient::new(app());
    let res = client.get("/api/docs");
    assert_eq!(res.status(), 200);
    assert_eq!(res.header("content-type"), Some("text/html; charset=utf-8"));
    let page = res.text();
    assert!(page.starts_with("<!DOCTYPE html><html lang=\"en\">"), "{page}");
    assert!(page.contains("<title>Wiki 2.1</title>"));
    for expected in [
        // Each operation, by method and path, with its summary and description.
        "<article id=\"op-PutPage\"><h3><span class=\"method\">put</span> <code>/api/pages/{slug}</code></h3>",
        "<strong>Creates or replaces a page.</strong>",
        "The old text is kept in the page's history.",
        "<article id=\"op-ListPages\"><h3><span class=\"method\">get</span> <code>/api/pages</code></h3>",
        // Parameters with their place, required mark and description.
        "<code>slug</code> <span class=\"required\">required</span></td><td>path</td>",
        "<code>offset</code></td><td>query</td>",
        "How many to skip.",
        // The request body, linked to its schema; the security.
        "<p><code>application/json</code></p><div><code><a href=\"#schema-NewPage\">NewPage</a></code>",
        "Security: bearer",
        // Responses, with the body of a success and the validation 422.
        "<td><code>200</code></td>",
        "<code>array of <a href=\"#schema-Page\">Page</a></code>",
        "<td><code>422</code></td>",
        // The table of contents.
        "<a href=\"#op-PutPage\"><code>PUT /api/pages/{slug}</code></a>",
    ] {
        assert!(page.contains(expected), "missing {expected:?} in {page}");
    }
}

#[test]
fn the_page_renders_a_schemas_fields() {
    let mut client = TestClient::new(app());
    let page = client.get("/api/docs").text();
    let start = page.find("<article id=\"schema-NewPage\">").expect("the schema's section");
    let section = &page[start..];
    let section = &section[..section.find("</article>").unwrap()];
    for expected in [
        "<h3>NewPage</h3>",
        " — A page as a client writes it.",
        // Fields with required marks; `draft` has a default, so it is optional.
        "<code>title</code> <span class=\"required\">required</span>",
        "<code>draft</code></td>",
        "default: false",
        // Constraints from garde, the field's doc comment and its example.
        "minLength: 3",
        "maxLength: 80",
        " — The page's title.",
        "<pre>\n<code>&quot;Getting started&quot;</code></pre>",
        // A field naming another schema links to it.
        "<a href=\"#schema-Status\">Status</a>",
        "<a href=\"#schema-Author\">Author</a>",
    ] {
        assert!(section.contains(expected), "missing {expected:?} in {section}");
    }
    assert!(!section.contains("<code>draft</code> <span class=\"required\">"));
    // An enum's values and a nested object's fields, in their own sections.
    assert!(page.contains("one of: &quot;published&quot;, &quot;hidden&quot;"), "{page}");
    let author = &page[page.find("<article id=\"schema-Author\">").unwrap()..];
    assert!(author.contains("<code>name</code> <span class=\"required\">required</span>"));
    assert!(author.contains(" — Their display name."));
    assert!(author.contains("<code>integer or null</code>"));
    assert!(author.contains("minimum: 1900"));
}

#[test]
fn the_page_renders_nested_objects_inline() {
    /// A search.
    #[derive(Route)]
    #[route(POST, "/search")]
    struct Search;

    #[derive(Deserialize, JsonSchema)]
    #[schemars(crate = "kiln::openapi::schemars")]
    struct Query {
        filter: Filter,
    }

    #[derive(Deserialize, JsonSchema)]
    #[schemars(crate = "kiln::openapi::schemars", inline)]
    struct Filter {
        /// Words the page must hold.
        words: Vec<String>,
    }

    async fn search(_: Search, Json(q): Json<Query>) -> String {
        q.filter.words.join(" ")
    }

    let app = App::new(|_| ()).api(search).openapi_routes("/openapi.json", "/docs", |doc| doc);
    let page = TestClient::new(app).get("/docs").text();
    let query = &page[page.find("<article id=\"schema-Query\">").unwrap()..];
    let query = &query[..query.find("</article>").unwrap()];
    assert!(query.contains("<code>filter</code> <span class=\"required\">required</span>"), "{query}");
    assert!(query.contains("<code>words</code> <span class=\"required\">required</span>"), "{query}");
    assert!(query.contains("<code>array of string</code> — Words the page must hold."), "{query}");
}

#[test]
fn a_served_route_that_conflicts_fails_the_build() {
    #[derive(Route)]
    #[route("/docs")]
    struct Docs;

    async fn docs(_: Docs) -> &'static str {
        "mine"
    }

    let app = App::new(|_| ()).route(docs).openapi_routes("/openapi.json", "/docs", |doc| doc);
    let err = app.build().unwrap_err();
    assert!(err.to_string().contains("the OpenAPI reference page"), "{err}");
}
