//! Machine-readable errors (issue 32 item 4): under a prefix the app names with
//! `App::problem_json`, every rejection is RFC 9457 `application/problem+json`;
//! elsewhere rejections render as before; the API document says so.
#![cfg(all(feature = "openapi", feature = "validate"))]

use kiln::openapi::JsonSchema;
use kiln::test::{TestClient, TestResponse};
use kiln::{App, BearerToken, CsrfGuard, Json, Key, RateLimit, Rejection, Route, StatusCode, Valid};
use serde::Deserialize;
use serde_json::{Value, json};

#[derive(Route)]
#[route(POST, "/api/pages")]
struct PostPage;

#[derive(Route)]
#[route("/api/me")]
struct Me;

#[derive(Route)]
#[route(POST, "/api/comments")]
struct PostComment;

#[derive(Route)]
#[route("/api/gone/{id}")]
struct Gone {
    id: u32,
}

#[derive(Route)]
#[route(POST, "/pages")]
struct PostPageForm;

#[derive(Route)]
#[route("/limited")]
struct Limited;

#[derive(Route)]
#[route("/api/limited")]
struct ApiLimited;

#[derive(Deserialize, JsonSchema, garde::Validate)]
#[schemars(crate = "kiln::openapi::schemars")]
struct NewPage {
    #[garde(length(min = 3))]
    title: String,
    #[garde(range(max = 10))]
    rank: u8,
    #[garde(dive)]
    tags: Vec<Tag>,
}

#[derive(Deserialize, JsonSchema, garde::Validate)]
#[schemars(crate = "kiln::openapi::schemars")]
struct Tag {
    #[garde(length(min = 1))]
    name: String,
}

async fn post_page(_: PostPage, Valid(Json(page)): Valid<Json<NewPage>>) -> String {
    page.title
}

async fn me(_: Me, token: BearerToken) -> String {
    token.subject().to_owned()
}

async fn post_comment(_: PostComment, _: CsrfGuard) -> &'static str {
    "saved"
}

async fn gone(route: Gone) -> Result<String, Rejection> {
    Err(Rejection::custom(StatusCode::GONE, format!("page {} was deleted", route.id)))
}

async fn post_page_form(_: PostPageForm, Json(page): Json<Value>) -> String {
    page.to_string()
}

async fn limited(_: Limited) -> &'static str {
    "ok"
}

async fn api_limited(_: ApiLimited) -> &'static str {
    "ok"
}

fn app() -> App<()> {
    App::new(|_| ())
        .secret_key(Key::new([7u8; 32]).unwrap())
        .api(post_page)
        .api(me)
        .api(post_comment)
        .route(gone)
        .api(post_page_form)
        .route(limited)
        .route(api_limited)
        .rate_limit(RateLimit::per_minute(1).route::<Limited>())
        .rate_limit(RateLimit::per_minute(1).route::<ApiLimited>())
        .body_limit(64)
        // Pages keep an HTML renderer; the API prefix overrides it.
        .on_rejection(|rejection, res| {
            res.set_status(rejection.status());
            res.set_content_type("text/html; charset=utf-8");
            res.body_mut().extend_from_slice(format!("<p>{rejection}</p>").as_bytes());
        })
        .problem_json("/api")
}

/// The body of a problem details response, after checking its media type and members.
fn problem(res: &TestResponse, status: u16) -> Value {
    assert_eq!(res.status(), status, "{}", res.text());
    assert_eq!(res.header("content-type"), Some("application/problem+json"));
    let problem: Value = res.json();
    assert_eq!(problem["type"], "about:blank");
    assert_eq!(problem["status"], status);
    assert_eq!(problem["title"], StatusCode::from_u16(status).unwrap().canonical_reason().unwrap());
    assert!(problem["detail"].is_string(), "{problem}");
    problem
}

fn assert_html(res: &TestResponse, status: u16) {
    assert_eq!(res.status(), status);
    assert_eq!(res.header("content-type"), Some("text/html; charset=utf-8"));
    assert!(res.text().starts_with("<p>"), "{}", res.text());
}

#[test]
fn a_rejection_under_a_problem_json_prefix_is_problem_json() {
    let mut client = TestClient::new(app());
    // 404: no route.
    let res = client.get("/api/nothing");
    assert_eq!(problem(&res, 404)["instance"], "/api/nothing");
    // 404: a capture that does not parse.
    assert_eq!(problem(&client.get("/api/gone/x"), 404)["instance"], "/api/gone/x");
    // 405, with its Allow header kept.
    let res = client.request("DELETE", "/api/me").send();
    problem(&res, 405);
    assert_eq!(res.header("allow"), Some("GET, HEAD"));
    // 401, with its challenge kept.
    let res = client.get("/api/me");
    problem(&res, 401);
    assert_eq!(res.header("www-authenticate"), Some("Bearer"));
    // 403: no CSRF token.
    problem(&client.request("POST", "/api/comments").send(), 403);
    // 400 and 415 of `Json`.
    let res = client.request("POST", "/api/pages").header("content-type", "application/json").body("{").send();
    problem(&res, 400);
    problem(&client.request("POST", "/api/pages").body("{}").send(), 415);
    // 413: over the body limit.
    let big = json!({ "title": "x".repeat(100), "rank": 1, "tags": [] });
    problem(&client.request("POST", "/api/pages").json(&big).send(), 413);
    // 429, with Retry-After kept.
    assert_eq!(client.get("/api/limited").status(), 200);
    let res = client.get("/api/limited");
    problem(&res, 429);
    assert!(res.header("retry-after").is_some());
    // A rejection the handler returns.
    let res = client.get("/api/gone/7");
    assert_eq!(problem(&res, 410)["detail"], "page 7 was deleted");
    assert_eq!(problem(&res, 410)["instance"], "/api/gone/7");
}

#[test]
fn a_rejection_outside_the_prefix_renders_as_before() {
    let mut client = TestClient::new(app());
    assert_html(&client.get("/nothing"), 404);
    assert_html(&client.get("/apiary"), 404);
    assert_html(&client.request("DELETE", "/limited").send(), 405);
    assert_html(&client.request("POST", "/pages").body("{}").send(), 415);
    assert_eq!(client.get("/limited").status(), 200);
    assert_html(&client.get("/limited"), 429);
    // Without `problem_json`, the default stays plain text.
    let mut plain = TestClient::new(App::new(|_| ()).route(gone));
    let res = plain.get("/api/gone/7");
    assert_eq!(res.status(), 410);
    assert_eq!(res.header("content-type"), Some("text/plain; charset=utf-8"));
    assert_eq!(res.text(), "page 7 was deleted\n");
}

#[test]
fn a_validation_failure_lists_every_field_as_problem_json() {
    let mut client = TestClient::new(app());
    let page = json!({ "title": "ab", "rank": 11, "tags": [{ "name": "ok" }, { "name": "" }] });
    let res = client.request("POST", "/api/pages").json(&page).send();
    let problem = problem(&res, 422);
    assert_eq!(problem["instance"], "/api/pages");
    let mut errors: Vec<(String, String)> = problem["errors"]
        .as_array()
        .expect("an errors member")
        .iter()
        .map(|e| {
            assert!(e["detail"].as_str().is_some_and(|d| !d.is_empty()), "{e}");
            (e["pointer"].as_str().unwrap().to_owned(), e["path"].as_str().unwrap().to_owned())
        })
        .collect();
    errors.sort();
    let expected = [("/rank", "rank"), ("/tags/1/name", "tags[1].name"), ("/title", "title")];
    assert_eq!(errors, expected.map(|(p, q)| (p.to_owned(), q.to_owned())));
}

#[test]
fn a_validation_failure_outside_the_prefix_stays_text() {
    let mut client = TestClient::new(App::new(|_| ()).route(post_page));
    let page = json!({ "title": "ab", "rank": 11, "tags": [] });
    let res = client.request("POST", "/api/pages").json(&page).send();
    assert_eq!(res.status(), 422);
    assert_eq!(res.text(), "invalid input:\nrank: greater than 10\ntitle: length is lower than 3\n");
}

#[test]
fn the_document_describes_problem_json_errors_where_the_app_asked() {
    let doc = app().openapi();
    let json = doc.json();
    let problem_ref = json!({ "$ref": "#/components/schemas/Problem" });
    let api = &json["paths"]["/api/pages"]["post"]["responses"];
    for status in ["400", "413", "415", "422"] {
        assert_eq!(api[status]["content"]["application/problem+json"]["schema"], problem_ref, "{status}");
    }
    assert_eq!(
        json["paths"]["/api/me"]["get"]["responses"]["401"]["content"]["application/problem+json"]["schema"],
        problem_ref
    );
    // The success keeps its own body.
    assert!(api["200"]["content"].get("application/problem+json").is_none());
    // Outside the prefix, errors have no body described.
    assert!(json["paths"]["/pages"]["post"]["responses"]["415"].get("content").is_none());
    let schemas = &json["components"]["schemas"];
    assert_eq!(schemas["Problem"]["required"], json!(["type", "title", "status"]));
    assert_eq!(schemas["Problem"]["properties"]["errors"]["items"]["$ref"], "#/components/schemas/ProblemField");
    assert_eq!(schemas["ProblemField"]["required"], json!(["pointer", "path", "detail"]));
    // An app that did not ask has no Problem schema.
    let plain = App::new(|_| ()).api(post_page).openapi();
    assert!(plain.json()["components"]["schemas"].get("Problem").is_none());
}

/// The decision of issue 32 ("problem+json `type` is always `about:blank`"): kiln's own
/// rejections keep `about:blank` on purpose (RFC 9457 §4.2.1: the status says what went
/// wrong, and the title is its phrase), so a client dispatches on `status`; only a
/// handler's own type would name a problem type. Every member is one RFC 9457 §3.1
/// defines, but the `errors` extension of an invalid input.
#[test]
fn kilns_own_rejections_keep_about_blank_deliberately() {
    let mut client = TestClient::new(app());
    let answers = [
        client.get("/api/nowhere"),
        client.request("DELETE", &Me).send(),
        client.get(&Me),
        client.request("POST", &PostPage).header("content-type", "text/plain").body("x").send(),
        client.request("POST", &PostPage).json(&json!({ "title": "no", "rank": 1, "tags": [] })).send(),
        client.get(&ApiLimited),
        client.get(&ApiLimited),
    ];
    let statuses: Vec<u16> = answers.iter().map(|res| res.status().as_u16()).collect();
    assert_eq!(statuses, [404, 405, 401, 415, 422, 200, 429]);
    for res in answers.iter().filter(|res| res.status() != 200) {
        let problem = problem(res, res.status().as_u16());
        let mut members: Vec<&str> = problem.as_object().unwrap().keys().map(String::as_str).collect();
        members.retain(|m| !["type", "title", "status", "detail", "instance"].contains(m));
        let expected: &[&str] = if res.status() == 422 { &["errors"] } else { &[] };
        assert_eq!(members, expected, "{problem}");
    }
}
