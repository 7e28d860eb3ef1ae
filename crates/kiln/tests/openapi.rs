//! The API document (`kiln::openapi`): what a small app's routes, extractors and
//! outputs become, asserted at JSON pointers; a 100-route app; the document dumped for
//! `scripts/openapi-check`, which validates it with openapi-spec-validator.
#![cfg(feature = "openapi")]

#[macro_use]
mod openapi_support;

use kiln::openapi::{Document, JsonSchema};
use kiln::{App, BearerToken, CsrfGuard, Form, Html, IntoResponse, Json, Key, Query, Redirect, Route};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// Shows a page.
///
/// The latest revision, unless `rev` names another.
#[derive(Route)]
#[route("/pages/{slug}")]
struct ShowPage {
    /// The page's name in its link.
    slug: String,
    rev: Option<u32>,
}

/// Lists the pages that match a search.
#[derive(Route)]
#[route("/api/pages")]
struct ListPages;

/// Creates a page.
#[derive(Route)]
#[route(POST, "/api/pages")]
struct CreatePage;

/// Comments on a page.
#[derive(Route)]
#[route(POST, "/pages/{slug}/comments")]
struct PostComment {
    slug: String,
}

#[derive(Route)]
#[route("/health")]
struct Health;

/// A search.
#[derive(Deserialize, JsonSchema)]
#[schemars(crate = "kiln::openapi::schemars")]
struct Search {
    /// Words to look for.
    q: String,
    #[serde(default)]
    page: u32,
}

/// A new page, as a client sends it.
#[derive(Deserialize, JsonSchema)]
#[schemars(crate = "kiln::openapi::schemars")]
#[allow(dead_code)] // Its fields are there to be described.
#[serde(rename_all = "camelCase")]
struct NewPage {
    #[serde(rename = "heading")]
    title: String,
    body_text: String,
    #[serde(default)]
    draft: bool,
    #[serde(skip)]
    views: u64,
    #[serde(flatten)]
    extra: Extra,
    kind: Kind,
    meta: Meta,
}

#[derive(Deserialize, JsonSchema)]
#[schemars(crate = "kiln::openapi::schemars")]
#[allow(dead_code)]
struct Extra {
    tags: Vec<String>,
}

/// What a page is.
#[derive(Deserialize, Serialize, JsonSchema)]
#[schemars(crate = "kiln::openapi::schemars")]
#[serde(tag = "type", rename_all = "lowercase")]
enum Kind {
    /// A full article in a language.
    Article { lang: String },
    /// A stub, to be written.
    Stub,
}

/// Metadata: required when sent back, `pinned` optional when sent.
#[derive(Deserialize, Serialize, JsonSchema)]
#[schemars(crate = "kiln::openapi::schemars")]
struct Meta {
    author: String,
    #[serde(default)]
    pinned: bool,
}

/// A page, as the server sends it.
#[derive(Serialize, JsonSchema)]
#[schemars(crate = "kiln::openapi::schemars")]
struct Page {
    slug: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    summary: Option<String>,
    meta: Meta,
}

#[derive(Deserialize, JsonSchema)]
#[schemars(crate = "kiln::openapi::schemars")]
#[allow(dead_code)]
struct Comment {
    body: String,
}

async fn show(route: ShowPage) -> Html<String> {
    Html(route.slug)
}

async fn list(_: ListPages, Query(search): Query<Search>) -> Json<Vec<Page>> {
    let meta = Meta { author: search.q, pinned: search.page > 0 };
    Json(vec![Page { slug: "home".into(), summary: None, meta }])
}

async fn create(_: CreatePage, _: BearerToken, Json(page): Json<NewPage>) -> Result<Json<Page>, kiln::db::Error> {
    Ok(Json(Page { slug: page.title, summary: Some(page.body_text), meta: page.meta }))
}

async fn comment(route: PostComment, _: CsrfGuard, Form(_): Form<Comment>) -> Redirect {
    Redirect::to(ShowPage { slug: route.slug, rev: None })
}

async fn health(_: Health) -> impl IntoResponse {
    "ok"
}

fn app() -> App<()> {
    App::new(|_| ()).secret_key(Key::generate()).api(show).api(list).api(create).api(comment).route(health)
}

fn document() -> Document {
    app().openapi().info("Pages", "1.0.0")
}

/// The value at `pointer`, or a failure naming it.
fn at<'v>(doc: &'v Value, pointer: &str) -> &'v Value {
    doc.pointer(pointer).unwrap_or_else(|| panic!("nothing at {pointer} in {doc:#}"))
}

/// The keys of the object at `pointer`, in order.
fn keys(doc: &Value, pointer: &str) -> Vec<String> {
    at(doc, pointer).as_object().expect("an object").keys().cloned().collect()
}

#[test]
fn the_document_is_openapi_3_1_with_every_route() {
    let doc = document().into_json();
    assert_eq!(doc["openapi"], "3.1.1");
    assert_eq!(doc["info"], json!({ "title": "Pages", "version": "1.0.0" }));
    assert_eq!(keys(&doc, "/paths"), ["/api/pages", "/health", "/pages/{slug}", "/pages/{slug}/comments"]);
    assert_eq!(keys(&doc, "/paths/~1api~1pages"), ["get", "post"]);
}

#[test]
fn a_path_parameter_and_the_route_s_query_field_are_typed_parameters() {
    let doc = document().into_json();
    let op = at(&doc, "/paths/~1pages~1{slug}/get");
    assert_eq!(op["operationId"], "ShowPage");
    assert_eq!(op["summary"], "Shows a page.");
    assert_eq!(op["description"], "The latest revision, unless `rev` names another.");
    let slug = json!({
        "name": "slug",
        "in": "path",
        "required": true,
        "description": "The page's name in its link.",
        "schema": { "type": "string" },
    });
    assert_eq!(op["parameters"][0], slug, "the field's doc comment describes the parameter");
    assert_eq!(op["parameters"][1]["name"], "rev");
    assert_eq!(op["parameters"][1]["in"], "query");
    assert_eq!(op["parameters"][1]["required"], false);
    assert_eq!(
        op["parameters"][1]["schema"],
        json!({ "type": "integer", "format": "uint32", "minimum": 0, "maximum": u32::MAX })
    );
    assert_eq!(keys(op, "/responses"), ["200", "400", "404"]);
    assert_eq!(op["responses"]["200"]["content"]["text/html"]["schema"], json!({ "type": "string" }));
}

#[test]
fn a_query_struct_is_one_parameter_per_field() {
    let doc = document().into_json();
    let params = at(&doc, "/paths/~1api~1pages/get/parameters");
    assert_eq!(params[0]["name"], "page");
    assert_eq!(params[0]["in"], "query");
    assert_eq!(params[0]["required"], false, "a `#[serde(default)]` field is optional");
    assert_eq!(params[1]["name"], "q");
    assert_eq!(params[1]["required"], true);
    assert_eq!(params[1]["description"], "Words to look for.");
    assert_eq!(params[1]["schema"], json!({ "type": "string" }));
    assert_eq!(keys(&doc, "/paths/~1api~1pages/get/responses"), ["200", "400"]);
    let list = at(&doc, "/paths/~1api~1pages/get/responses/200/content/application~1json/schema");
    assert_eq!(list, &json!({ "type": "array", "items": { "$ref": "#/components/schemas/Page" } }));
}

#[test]
fn a_json_body_honours_serde_s_attributes() {
    let doc = document().into_json();
    let body = at(&doc, "/paths/~1api~1pages/post/requestBody");
    assert_eq!(body["required"], true);
    assert_eq!(body["content"]["application/json"]["schema"], json!({ "$ref": "#/components/schemas/NewPage" }));
    let new_page = at(&doc, "/components/schemas/NewPage");
    assert_eq!(new_page["description"], "A new page, as a client sends it.");
    // `rename`, `rename_all`, `skip` (no `views`) and `flatten` (`tags` from `Extra`).
    assert_eq!(keys(new_page, "/properties"), ["bodyText", "draft", "heading", "kind", "meta", "tags"]);
    let mut required: Vec<&str> =
        new_page["required"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
    required.sort_unstable();
    // `default` makes `draft` optional.
    assert_eq!(required, ["bodyText", "heading", "kind", "meta", "tags"]);
    // `tag = "type"`: each variant names itself in `type`, with its doc comment.
    let kind = at(&doc, "/components/schemas/Kind");
    let variants = kind["oneOf"].as_array().expect("a tagged enum is oneOf its variants");
    assert_eq!(variants[0]["properties"]["type"], json!({ "type": "string", "const": "article" }));
    assert_eq!(variants[0]["description"], "A full article in a language.");
    assert_eq!(variants[1]["properties"]["type"], json!({ "type": "string", "const": "stub" }));
}

#[test]
fn a_type_read_and_written_differently_has_an_input_and_an_output_schema() {
    let doc = document().into_json();
    assert_eq!(at(&doc, "/components/schemas/Meta/required"), &json!(["author"]));
    assert_eq!(at(&doc, "/components/schemas/MetaOutput/required"), &json!(["author", "pinned"]));
    assert_eq!(
        at(&doc, "/components/schemas/Page/properties/meta"),
        &json!({ "$ref": "#/components/schemas/MetaOutput" })
    );
    assert_eq!(
        at(&doc, "/components/schemas/NewPage/properties/meta"),
        &json!({ "$ref": "#/components/schemas/Meta" })
    );
    // One read and written alike is there once.
    assert!(doc["components"]["schemas"].get("KindOutput").is_none());
    let refs = doc.to_string();
    assert!(!refs.contains("x-kiln-outputs"), "every output $ref points into components.schemas");
}

#[test]
fn a_bearer_protected_route_returning_a_result_lists_every_status() {
    let doc = document().into_json();
    let op = at(&doc, "/paths/~1api~1pages/post");
    assert_eq!(op["security"], json!([{ "bearer": [] }]));
    assert_eq!(at(&doc, "/components/securitySchemes/bearer/scheme"), "bearer");
    // 200 from `Json<Page>`; 400/413/415/422 from `Json<NewPage>`; 401 from
    // `BearerToken`; 404/409/500/503 from `kiln::db::Error`.
    assert_eq!(keys(op, "/responses"), ["200", "400", "401", "404", "409", "413", "415", "422", "500", "503"]);
    assert_eq!(op["responses"]["200"]["content"]["application/json"]["schema"]["$ref"], "#/components/schemas/Page");
    assert!(op["responses"]["401"]["headers"]["WWW-Authenticate"].is_object());
    assert_eq!(op["responses"]["415"]["description"], "the body is not `application/json`");
}

#[test]
fn a_form_behind_a_csrf_guard_is_urlencoded_and_needs_the_token() {
    let doc = document().into_json();
    let op = at(&doc, "/paths/~1pages~1{slug}~1comments/post");
    let form = at(op, "/requestBody/content/application~1x-www-form-urlencoded/schema");
    assert_eq!(form, &json!({ "$ref": "#/components/schemas/Comment" }));
    assert_eq!(op["security"], json!([{ "csrf": [], "csrf_cookie": [] }]));
    assert_eq!(at(&doc, "/components/securitySchemes/csrf/name"), "x-csrf-token");
    assert_eq!(at(&doc, "/components/securitySchemes/csrf_cookie/in"), "cookie");
    assert_eq!(keys(op, "/responses"), ["3XX", "403", "404", "413", "415", "422"]);
    assert!(op["responses"]["3XX"]["headers"]["Location"].is_object());
}

#[test]
fn a_route_registered_without_its_types_is_listed_by_the_check() {
    let doc = document();
    let op = &doc.json()["paths"]["/health"]["get"];
    assert_eq!(op["responses"], json!({ "default": { "description": "not described" } }));
    let undescribed: Vec<String> = doc.undescribed().iter().map(ToString::to_string).collect();
    assert_eq!(
        undescribed,
        ["GET /health (openapi::Health): registered with `App::route`: its body and responses are not described"]
    );
}

#[test]
fn an_optional_extractor_makes_its_inputs_and_security_optional() {
    #[derive(Route)]
    #[route("/feed")]
    struct Feed;

    async fn feed(_: Feed, _: Option<BearerToken>, _: Option<Query<Search>>) -> &'static str {
        "feed"
    }

    let doc = App::new(|_| ()).secret_key(Key::generate()).api(feed).openapi().into_json();
    let op = at(&doc, "/paths/~1feed/get");
    assert_eq!(op["security"], json!([{ "bearer": [] }, {}]));
    assert_eq!(op["parameters"][1]["name"], "q");
    assert_eq!(op["parameters"][1]["required"], false);
    assert_eq!(keys(op, "/responses"), ["200"], "the refusals are the handler's");
}

/// A hundred routes, each with a path parameter, a JSON body and a JSON response.
macro_rules! hundred_routes {
    ($($path:literal),*) => {
        fn hundred_routes() -> App<()> {
            let app = App::new(|_| ());
            $(
                let app = {
                    #[derive(Route)]
                    #[route(PUT, $path)]
                    struct R { id: u64 }
                    async fn handler(_: R, Json(page): Json<Meta>) -> Json<Page> {
                        Json(Page { slug: String::new(), summary: None, meta: page })
                    }
                    app.api(handler)
                };
            )*
            app
        }
    };
}

with_hundred_paths!(hundred_routes);

#[test]
fn a_hundred_routes_document_builds() {
    let app = hundred_routes();
    let doc = app.openapi().into_json();
    assert_eq!(doc["paths"].as_object().unwrap().len(), 100);
    assert_eq!(at(&doc, "/paths/~1r42~1{id}/put/parameters/0/name"), "id");
    // The operations share one route type name: each id is made unique.
    assert_eq!(at(&doc, "/paths/~1r00~1{id}/put/operationId"), "R");
    assert_eq!(at(&doc, "/paths/~1r01~1{id}/put/operationId"), "R2");
}

/// Writes the test app's document to `$KILN_OPENAPI_DUMP` when it is set, for
/// `scripts/openapi-check`; otherwise checks only that it serialises.
#[test]
fn dump_document() {
    let doc = document();
    let text = doc.to_pretty_string();
    assert!(text.ends_with("}\n"));
    if let Some(path) = std::env::var_os("KILN_OPENAPI_DUMP") {
        std::fs::write(path, text).expect("the dump is written");
    }
}

#[test]
fn an_extractor_of_the_app_s_own_describes_itself() {
    use kiln::openapi::{Describe, Operation, ParamIn};
    use kiln::rejection::Rejection;
    use kiln::{FromRequest, RequestContext};

    /// The caller, named by an API key.
    struct ApiKey;

    impl<S> FromRequest<S> for ApiKey {
        fn from_request(cx: &RequestContext<'_, S>) -> Result<Self, Rejection> {
            match cx.request().header_str("x-api-key") {
                Some(_) => Ok(ApiKey),
                None => Err(Rejection::custom(kiln::StatusCode::UNAUTHORIZED, "an API key is required")),
            }
        }
    }

    impl Describe for ApiKey {
        fn describe(op: &mut Operation<'_>) {
            op.parameter(ParamIn::Header, "x-api-key", true, json!({ "type": "string" }));
            op.response("401", "the API key is missing");
        }
    }

    #[derive(Route)]
    #[route("/me")]
    struct Me;

    async fn me(_: Me, _: ApiKey) -> &'static str {
        "me"
    }

    let doc = App::new(|_| ()).public_url("https://example.org/wiki").api(me).openapi().into_json();
    assert_eq!(doc["servers"], json!([{ "url": "https://example.org/wiki" }]));
    let op = at(&doc, "/paths/~1me/get");
    assert_eq!(
        op["parameters"][0],
        json!({ "name": "x-api-key", "in": "header", "required": true, "schema": { "type": "string" } })
    );
    assert_eq!(keys(op, "/responses"), ["200", "401"]);
}

#[test]
fn a_status_chosen_at_run_time_is_described_as_default_and_listed() {
    #[derive(Route)]
    #[route(PUT, "/notes/{id}")]
    struct PutNote {
        id: u64,
    }

    async fn put(route: PutNote, body: Option<Json<Meta>>) -> (kiln::StatusCode, Json<Meta>) {
        let meta = body.map_or(Meta { author: route.id.to_string(), pinned: false }, |Json(m)| m);
        (kiln::StatusCode::CREATED, Json(meta))
    }

    let doc = App::new(|_| ()).api(put).openapi();
    let json = doc.json();
    let op = at(json, "/paths/~1notes~1{id}/put");
    assert_eq!(op["requestBody"]["required"], false, "an `Option<Json<_>>` body may be left out");
    assert_eq!(keys(op, "/responses"), ["404", "default"]);
    assert_eq!(
        op["responses"]["default"]["content"]["application/json"]["schema"]["$ref"],
        "#/components/schemas/MetaOutput"
    );
    let reasons: Vec<String> = doc.undescribed().iter().map(ToString::to_string).collect();
    assert_eq!(
        reasons,
        [
            "PUT /notes/{id} (openapi::a_status_chosen_at_run_time_is_described_as_default_and_listed::PutNote): a response tuple sets a status chosen at run time"
        ]
    );
}
