//! The JSON API through kiln's `TestClient`, and its document against the committed
//! `app/openapi.json`.

use std::num::NonZeroU32;

use serde_json::{Value, json};

use super::super::tests::{EDITOR_PASSWORD, app, client};
use super::routes::{ApiComments, ApiPage, ApiPages, ApiPostComment, ApiPostCommentCsrf, ApiSearch, ApiToken};

/// The API's title and version in its document.
const TITLE: &str = "kiln wiki API";
/// The API's version: the contract changes only additively within it. 2: a token asks
/// for the editor's password (a new required input).
const VERSION: &str = "2.0.0";

/// The site's document: what `app/openapi.json` holds.
pub(crate) fn document() -> kiln::openapi::Document {
    app("api-document").0.openapi().info(TITLE, VERSION)
}

#[test]
fn the_demo_document_matches_the_committed_copy() {
    let additive = kiln::openapi::assert_matches(&document(), concat!(env!("CARGO_MANIFEST_DIR"), "/openapi.json"));
    assert!(additive.is_empty(), "the API grew: run with KILN_OPENAPI_UPDATE=1 and commit it: {additive:?}");
}

/// The demo's TypeScript client, written where `KILN_TS_CLIENT` says (by
/// `scripts/api-judges`, which compiles it with `tsc --strict` and runs
/// `app/tests/api_client/client.test.ts` through it against the running demo).
#[test]
fn the_typescript_client_is_written() {
    let ts = document().typescript();
    for line in [
        "export type Page = {",
        "export async function apiPage(client: Client, params: { /** The page's address, as in `/pages/{slug}`. */ slug: string; }): Promise<ApiPageResponse>",
        "export async function apiPostComment(client: Client, params: { /** The page's address. */ slug: string; }, body: NewComment): Promise<ApiPostCommentResponse>",
        "export type ApiPageResponse = Ok<200, Page> | Err<404, Problem> | Err<409, Problem> | Err<500, Problem> | Err<503, Problem>;",
    ] {
        assert!(ts.contains(line), "{line}\n\n{ts}");
    }
    if let Some(path) = std::env::var_os("KILN_TS_CLIENT") {
        std::fs::write(&path, ts).expect("write the TypeScript client");
    }
}

#[test]
fn every_api_operation_is_described_exactly() {
    let doc = document();
    let partial: Vec<_> = doc.undescribed().iter().filter(|u| u.operation.contains(" /api/")).collect();
    assert!(partial.is_empty(), "{partial:?}");
    let paths = &doc.json()["paths"];
    let post = &paths["/api/pages/{slug}/comments"]["post"];
    assert_eq!(post["security"], json!([{ "bearer": [] }]));
    assert!(post["responses"]["401"].is_object());
    assert_eq!(paths["/api/search"]["get"]["parameters"][0]["required"], true);
}

#[test]
fn the_api_lists_gets_and_searches_pages() {
    let (mut c, _dir) = client("api-read");
    let list = c.get(ApiPages { page: None });
    assert_eq!(list.status(), 200);
    assert_eq!(list.header("content-type"), Some("application/json"));
    let list: Value = list.json();
    let slugs: Vec<&str> = list["pages"].as_array().expect("pages").iter().filter_map(|p| p["slug"].as_str()).collect();
    assert!(slugs.contains(&"tour") && slugs.contains(&"welcome"), "{slugs:?}");
    assert_eq!(list["next_page"], Value::Null);
    assert_eq!(c.get("/api/pages?page=0").status(), 400);
    assert_eq!(c.get(ApiPages { page: NonZeroU32::new(9) }).json::<Value>()["pages"], json!([]));

    let page: Value = c.get(ApiPage { slug: "tour".into() }).json();
    assert_eq!(page["slug"], "tour");
    assert!(page["markdown"].as_str().is_some_and(|m| !m.is_empty()));
    let missing = c.get(ApiPage { slug: "nowhere".into() });
    assert_eq!(missing.status(), 404);
    assert_eq!(missing.header("content-type"), Some("application/problem+json"));
    assert_eq!(missing.json::<Value>()["status"], 404);

    let found: Value = c.get(ApiSearch { q: "TOUR".into() }).json();
    assert!(found.as_array().expect("array").iter().any(|p| p["slug"] == "tour"), "{found}");
    let none: Value = c.get(ApiSearch { q: "%_no such text_%".into() }).json();
    assert_eq!(none, json!([]));
    assert_eq!(c.get("/api/search").status(), 400);
}

#[test]
fn the_api_posts_a_comment_with_a_bearer_token_and_refuses_one_without() {
    let (mut c, _dir) = client("api-comment");
    let route = ApiPostComment { slug: "tour".into() };
    let refused = c.request("POST", &route).json(&json!({ "body": "hello" })).send();
    assert_eq!(refused.status(), 401);
    assert!(refused.header("www-authenticate").is_some_and(|h| h.starts_with("Bearer")));
    let forged =
        c.request("POST", &route).header("authorization", "Bearer forged").json(&json!({ "body": "x" })).send();
    assert_eq!(forged.status(), 401);

    assert_eq!(
        c.request("POST", ApiToken).json(&json!({ "author": "  ", "password": EDITOR_PASSWORD })).send().status(),
        422
    );
    let token: Value =
        c.request("POST", ApiToken).json(&json!({ "author": "Ada", "password": EDITOR_PASSWORD })).send().json();
    let bearer = format!("Bearer {}", token["token"].as_str().expect("token"));
    assert_eq!(token["expires_in"], 3600);

    let posted =
        c.request("POST", &route).header("authorization", &bearer).json(&json!({ "body": " Nice tour. " })).send();
    assert_eq!(posted.status(), 200, "{}", posted.text());
    let posted: Value = posted.json();
    assert_eq!((posted["author"].as_str(), posted["body"].as_str()), (Some("Ada"), Some("Nice tour.")));

    let comments: Value = c.get(ApiComments { slug: "tour".into() }).json();
    assert_eq!(comments.as_array().and_then(|a| a.last()), Some(&posted));
    assert_eq!(c.get(ApiComments { slug: "nowhere".into() }).status(), 404);

    let empty = c.request("POST", &route).header("authorization", &bearer).json(&json!({ "body": "" })).send();
    assert_eq!(empty.status(), 422);
    let elsewhere = ApiPostComment { slug: "nowhere".into() };
    let missing = c.request("POST", &elsewhere).header("authorization", &bearer).json(&json!({ "body": "x" })).send();
    assert_eq!(missing.status(), 404);
    let wrong = c.request("POST", &route).header("authorization", &bearer).json(&json!({ "text": "x" })).send();
    assert_eq!(wrong.status(), 422);
    let plain = c.request("POST", &route).header("authorization", &bearer).body("x").send();
    assert_eq!(plain.status(), 415);
}

#[test]
fn the_api_counts_comments_against_the_site_s_limit() {
    let (mut c, _dir) = client("api-limit");
    let token: Value =
        c.request("POST", ApiToken).json(&json!({ "author": "Ada", "password": EDITOR_PASSWORD })).send().json();
    let bearer = format!("Bearer {}", token["token"].as_str().expect("token"));
    let route = ApiPostComment { slug: "tour".into() };
    let statuses: Vec<u16> = (0..6)
        .map(|i| {
            let body = json!({ "body": format!("comment {i}") });
            c.request("POST", &route).header("authorization", &bearer).json(&body).send().status().as_u16()
        })
        .collect();
    // The test app allows five a minute (`--comments-per-minute`'s default).
    assert_eq!(statuses, [200, 200, 200, 200, 200, 429]);
    let refused = c.request("POST", &route).header("authorization", &bearer).json(&json!({ "body": "x" })).send();
    assert!(refused.header("retry-after").is_some_and(|s| s.parse::<u64>().is_ok()));
}

#[test]
fn the_site_s_pages_post_a_comment_with_their_csrf_token_and_a_forged_one_is_refused() {
    let (mut c, _dir) = client("api-csrf");
    let page = c.get("/pages/tour");
    let cookie = page.header("set-cookie").expect("a CSRF cookie").split(';').next().expect("pair").to_owned();
    let text = page.text();
    let token = text.split("name=\"csrf_token\" value=\"").nth(1).and_then(|t| t.split('"').next()).expect("token");
    let route = ApiPostCommentCsrf { slug: "tour".into() };
    let comment = json!({ "author": "Tess", "body": "From the page's script." });

    let forged = c.request("POST", &route).header("cookie", &cookie).json(&comment).send();
    assert_eq!(forged.status(), 403);
    assert_eq!(forged.header("content-type"), Some("application/problem+json"));
    let posted =
        c.request("POST", &route).header("cookie", &cookie).header("x-csrf-token", token).json(&comment).send();
    assert_eq!(posted.status(), 200, "{}", posted.text());
    assert_eq!(posted.json::<Value>()["author"], "Tess");
    let nameless = json!({ "author": " ", "body": "x" });
    let refused =
        c.request("POST", &route).header("cookie", &cookie).header("x-csrf-token", token).json(&nameless).send();
    assert_eq!(refused.status(), 422);
}

#[test]
fn a_token_is_issued_to_the_editor_only() {
    let (mut c, _dir) = client("api-token");
    let ask = |c: &mut kiln::test::TestClient<_>, body: Value| c.request("POST", ApiToken).json(&body).send();
    let anyone = ask(&mut c, json!({ "author": "Mallory" }));
    assert_eq!(anyone.status(), 422, "no password: {}", anyone.text());
    let wrong = ask(&mut c, json!({ "author": "Mallory", "password": "guess" }));
    assert_eq!(wrong.status(), 403);
    assert_eq!(wrong.header("content-type"), Some("application/problem+json"));
    let issued = ask(&mut c, json!({ "author": "Ada", "password": EDITOR_PASSWORD }));
    assert_eq!(issued.status(), 200, "{}", issued.text());
    // Guessing counts against the login's limit (10 a minute in the test app).
    let statuses: Vec<u16> =
        (0..10).map(|_| ask(&mut c, json!({ "author": "M", "password": "guess" })).status().as_u16()).collect();
    assert_eq!(statuses[..7], [403; 7], "{statuses:?}");
    assert_eq!(statuses[7..], [429; 3], "{statuses:?}");
}
