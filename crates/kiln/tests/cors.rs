//! `App::cors`: preflights allowed and refused (with the reason), answered before
//! routing's 405; responses to allowed origins carry the CORS headers; `Vary: Origin`;
//! the policy covers its path prefix only.

use std::time::Duration;

use kiln::test::{TestClient, TestResponse};
use kiln::{App, AppService, Cors, Route};

#[derive(Route)]
#[route("/api/items/{id}")]
struct Item {
    id: u32,
}

#[derive(Route)]
#[route("/pages/{id}")]
struct Page {
    id: u32,
}

async fn item(route: Item) -> ([(&'static str, &'static str); 1], String) {
    ([("X-Total", "1")], format!("item {}", route.id))
}

async fn page(route: Page) -> String {
    format!("page {}", route.id)
}

fn client(cors: Cors) -> TestClient<AppService<()>> {
    TestClient::new(App::new(|_| ()).route(item).route(page).cors(cors))
}

fn api() -> Cors {
    Cors::new()
        .allow_origins(["https://app.example"])
        .allow_methods(["GET", "PUT", "DELETE"])
        .allow_headers(["Content-Type", "Authorization"])
        .expose_headers(["X-Total"])
        .max_age(Duration::from_secs(600))
        .path_prefix("/api/")
}

fn preflight(
    c: &mut TestClient<AppService<()>>,
    path: &str,
    origin: &str,
    method: &str,
    headers: &str,
) -> TestResponse {
    let mut req = c.request("OPTIONS", path).header("Origin", origin).header("Access-Control-Request-Method", method);
    if !headers.is_empty() {
        req = req.header("Access-Control-Request-Headers", headers);
    }
    req.send()
}

#[test]
fn an_allowed_preflight_is_answered_before_routing() {
    let mut c = client(api());
    // The route answers GET only: without CORS, OPTIONS would be 405.
    let res = preflight(&mut c, "/api/items/1", "https://app.example", "PUT", "content-type, authorization");
    assert_eq!(res.status(), 204);
    assert_eq!(res.header("access-control-allow-origin"), Some("https://app.example"));
    assert_eq!(res.header("access-control-allow-methods"), Some("GET, PUT, DELETE"));
    assert_eq!(res.header("access-control-allow-headers"), Some("content-type, authorization"));
    assert_eq!(res.header("access-control-max-age"), Some("600"));
    assert_eq!(res.header("access-control-allow-credentials"), None);
    assert!(res.header("vary").is_some_and(|v| v.contains("Origin")));
    assert!(res.bytes().is_empty());
}

#[test]
fn refused_preflights_say_why() {
    let mut c = client(api());
    let cases = [
        ("https://evil.example", "PUT", "", "origin https://evil.example is not allowed"),
        ("https://app.example", "PATCH", "", "method PATCH is not among the allowed methods"),
        ("https://app.example", "PUT", "x-secret", "request header `x-secret` is not among the allowed headers"),
    ];
    for (origin, method, headers, why) in cases {
        let res = preflight(&mut c, "/api/items/1", origin, method, headers);
        assert_eq!(res.status(), 403, "{why}");
        assert_eq!(res.header("access-control-allow-origin"), None, "{why}");
        assert_eq!(res.text(), format!("CORS preflight refused: {why}\n"));
    }
}

#[test]
fn responses_to_allowed_origins_carry_the_headers_and_vary_by_origin() {
    let mut c = client(api());
    let res = c.request("GET", &Item { id: 7 }).header("Origin", "https://app.example").send();
    assert_eq!(res.text(), "item 7");
    assert_eq!(res.header("access-control-allow-origin"), Some("https://app.example"));
    assert_eq!(res.header("access-control-expose-headers"), Some("X-Total"));
    assert_eq!(res.header("vary"), Some("Origin"));
    let other = c.request("GET", &Item { id: 7 }).header("Origin", "https://evil.example").send();
    assert_eq!(other.status(), 200);
    assert_eq!(other.header("access-control-allow-origin"), None);
    assert_eq!(other.header("vary"), Some("Origin"));
}

#[test]
fn the_policy_covers_its_prefix_only() {
    let mut c = client(api());
    let res = preflight(&mut c, "/pages/1", "https://app.example", "PUT", "");
    assert_eq!(res.status(), 405);
    let res = c.request("GET", &Page { id: 1 }).header("Origin", "https://app.example").send();
    assert_eq!((res.header("access-control-allow-origin"), res.header("vary")), (None, None));
}

#[test]
fn credentials_name_the_origin_and_a_predicate_decides() {
    let cors = Cors::new().allow_origin_fn(|o| o.ends_with(".example.org")).allow_credentials();
    let mut c = client(cors);
    let res = c.request("GET", &Item { id: 1 }).header("Origin", "https://a.example.org").send();
    assert_eq!(res.header("access-control-allow-origin"), Some("https://a.example.org"));
    assert_eq!(res.header("access-control-allow-credentials"), Some("true"));
    let res = preflight(&mut c, "/api/items/1", "https://example.com", "GET", "");
    assert_eq!(res.status(), 403);

    let mut any = client(Cors::new().allow_any_origin());
    let res = any.request("GET", &Item { id: 1 }).header("Origin", "https://anyone.example").send();
    assert_eq!(res.header("access-control-allow-origin"), Some("*"));
    assert_eq!(res.header("vary"), None);
}
