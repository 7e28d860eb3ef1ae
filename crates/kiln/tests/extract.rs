//! Extractors, each with the rejection it raises, and the app-level rejection override.

use std::cell::Cell;

use kiln::test::TestClient;
use kiln::{App, Bytes, Cookies, Form, Headers, Json, Query, Rejection, RequestHead, Response, Route, State};
use serde::{Deserialize, Serialize};

#[derive(Route)]
#[route(POST, "/echo")]
struct Echo;

#[derive(Route)]
#[route("/info")]
struct Info;

#[derive(Deserialize, Serialize, Debug, PartialEq)]
struct Point {
    x: i32,
    y: i32,
}

fn client<A: 'static>(handler: impl kiln::RouteHandler<A, ()>) -> TestClient<kiln::AppService<()>> {
    TestClient::new(App::new(|_| ()).body_limit(64).route(handler))
}

#[test]
fn json_reads_the_body_and_writes_the_response() {
    async fn echo(_: Echo, Json(p): Json<Point>) -> Json<Point> {
        Json(Point { x: p.y, y: p.x })
    }
    let mut c = client(echo);
    let res = c.request("POST", &Echo).json(&Point { x: 1, y: 2 }).send();
    assert_eq!(res.status(), 200);
    assert_eq!(res.header("content-type"), Some("application/json"));
    assert_eq!(res.json::<Point>(), Point { x: 2, y: 1 });
    let vendor = c.request("POST", &Echo).header("Content-Type", "application/vnd.api+json").body(r#"{"x":1,"y":1}"#);
    assert_eq!(vendor.send().status(), 200);
}

#[test]
fn json_rejections_have_their_own_status() {
    async fn echo(_: Echo, Json(p): Json<Point>) -> Json<Point> {
        Json(p)
    }
    let mut c = client(echo);
    let cases: &[(&str, &str, u16, &str)] = &[
        ("text/plain", r#"{"x":1,"y":2}"#, 415, "expected `Content-Type: application/json`"),
        ("application/json", r#"{"x":1,"#, 400, "malformed JSON"),
        ("application/json", r#"{"x":1}"#, 422, "invalid JSON: missing field `y`"),
        ("application/json", r#"{"x":"a","y":2}"#, 422, "invalid JSON: invalid type"),
        (
            "application/json",
            &format!(r#"{{"x":1,"y":2,"pad":"{}"}}"#, "z".repeat(100)),
            413,
            "exceeds the limit of 64 bytes",
        ),
    ];
    for &(ctype, body, status, message) in cases {
        let res = c.request("POST", &Echo).header("Content-Type", ctype).body(body).send();
        assert_eq!(res.status(), status, "{body}: {}", res.text());
        assert!(res.text().contains(message), "{body}: {}", res.text());
    }
    let res = c.request("POST", &Echo).body(r#"{"x":1,"y":2}"#).send();
    assert_eq!(res.status(), 415, "no Content-Type at all");
}

#[test]
fn form_reads_urlencoded_bodies() {
    async fn echo(_: Echo, Form(p): Form<Point>) -> String {
        format!("{} {}", p.x, p.y)
    }
    let mut c = client(echo);
    assert_eq!(c.request("POST", &Echo).form(&Point { x: 3, y: -4 }).send().text(), "3 -4");
    let res = c.request("POST", &Echo).header("Content-Type", "application/x-www-form-urlencoded").body("x=1").send();
    assert_eq!(res.status(), 422);
    assert!(res.text().starts_with("invalid form:"), "{}", res.text());
    let res = c.request("POST", &Echo).header("Content-Type", "text/plain").body("x=1&y=2").send();
    assert_eq!(res.status(), 415);
    let long = format!("x=1&y=2&z={}", "9".repeat(80));
    let res = c.request("POST", &Echo).header("Content-Type", "application/x-www-form-urlencoded").body(long).send();
    assert_eq!(res.status(), 413);
}

#[test]
fn query_deserialises_the_query_string() {
    async fn info(_: Info, Query(p): Query<Point>) -> String {
        format!("{}", p.x + p.y)
    }
    let mut c = client(info);
    assert_eq!(c.get("/info?x=2&y=40").text(), "42");
    let res = c.get("/info?x=2");
    assert_eq!(res.status(), 400);
    assert!(res.text().starts_with("invalid query:"), "{}", res.text());
}

#[test]
fn headers_cookies_and_head_are_copied_out() {
    async fn info(_: Info, headers: Headers, cookies: Cookies, head: RequestHead) -> String {
        format!(
            "{} {:?} {:?} {} {} {:?}",
            headers.get("x-thing").unwrap_or("-"),
            cookies.get("sid"),
            cookies.get("theme"),
            head.method,
            head.path(),
            head.query(),
        )
    }
    let mut c = client(info);
    let res = c.request("GET", "/info?a=1").header("X-Thing", "yes").header("Cookie", r#"sid=42; theme="dark""#).send();
    assert_eq!(res.text(), r#"yes Some("42") Some("dark") GET /info Some("a=1")"#);
}

#[test]
fn a_missing_header_is_a_400() {
    async fn info(_: Info, headers: Headers) -> Result<String, Rejection> {
        Ok(headers.require("x-token")?.to_owned())
    }
    let mut c = client(info);
    let res = c.get("/info");
    assert_eq!(res.status(), 400);
    assert_eq!(res.text(), "header `x-token` is required\n");
    assert_eq!(c.request("GET", "/info").header("X-Token", "t").send().text(), "t");
}

#[test]
fn raw_body_as_bytes_or_text() {
    async fn bytes(_: Echo, body: Bytes) -> String {
        format!("{} bytes", body.len())
    }
    assert_eq!(client(bytes).request("POST", &Echo).body(vec![0u8, 255, 3]).send().text(), "3 bytes");
    async fn text(_: Echo, body: String) -> String {
        body.to_uppercase()
    }
    let mut c = client(text);
    assert_eq!(c.request("POST", &Echo).body("abc").send().text(), "ABC");
    let res = c.request("POST", &Echo).body(vec![0xff, 0xfe]).send();
    assert_eq!(res.status(), 400);
    assert!(res.text().starts_with("body is not UTF-8"), "{}", res.text());
}

struct Counter {
    worker: usize,
    hits: Cell<u32>,
}

#[test]
fn state_is_built_per_worker_and_may_be_not_send() {
    async fn hit(_: Info, state: State<Counter>) -> String {
        state.hits.set(state.hits.get() + 1);
        format!("worker {} hit {}", state.worker, state.hits.get())
    }
    let app = App::new(|worker| Counter { worker, hits: Cell::new(0) }).route(hit);
    let mut c = TestClient::new(app);
    assert_eq!(c.get(&Info).text(), "worker 0 hit 1");
    assert_eq!(c.get(&Info).text(), "worker 0 hit 2");
}

/// Renders every rejection as `{"status": .., "error": ..}`: an app's own `on_rejection`.
fn as_json(rejection: &Rejection, res: &mut Response) {
    res.set_status(rejection.status());
    res.set_content_type("application/json");
    let body = serde_json::json!({ "status": rejection.status().as_u16(), "error": rejection.to_string() });
    serde_json::to_writer(res.body_mut(), &body).unwrap();
}

#[test]
fn the_app_can_render_rejections_as_json() {
    async fn echo(_: Echo, Json(p): Json<Point>) -> Json<Point> {
        Json(p)
    }
    let mut c = TestClient::new(App::new(|_| ()).route(echo).on_rejection(as_json));
    let res = c.request("POST", &Echo).header("Content-Type", "application/json").body("{").send();
    assert_eq!(res.status(), 400);
    assert_eq!(res.header("content-type"), Some("application/json"));
    let body: serde_json::Value = res.json();
    assert_eq!(body["status"], 400);
    assert!(body["error"].as_str().unwrap().starts_with("malformed JSON"));

    let res = c.get("/echo");
    assert_eq!(res.status(), 405);
    assert_eq!(res.header("allow"), Some("POST"), "the override keeps Allow");
    assert_eq!(res.json::<serde_json::Value>()["status"], 405);

    let res = c.get("/missing");
    assert_eq!(res.json::<serde_json::Value>()["error"], "no route for /missing");
}

#[test]
fn a_rejection_a_handler_returns_is_rendered_by_the_apps_on_rejection() {
    // Bug: only extractors' rejections reached `on_rejection`; one a handler returned
    // was plain text, so an app's 400s looked two ways.
    async fn check(_: Echo, Json(p): Json<Point>) -> Result<Json<Point>, Rejection> {
        if p.x < 0 {
            return Err(kiln::rejection::InvalidBody::new("x must not be negative").into());
        }
        Ok(Json(p))
    }
    let post = |c: &mut TestClient<_>, body: &'static str| {
        c.request("POST", &Echo).header("Content-Type", "application/json").body(body).send()
    };
    let mut c = TestClient::new(App::new(|_| ()).route(check).on_rejection(as_json));
    let res = post(&mut c, r#"{"x":-1,"y":2}"#);
    assert_eq!((res.status().as_u16(), res.header("content-type")), (400, Some("application/json")));
    assert_eq!(res.json::<serde_json::Value>()["error"], "x must not be negative");
    assert_eq!(post(&mut c, r#"{"x":1,"y":2}"#).json::<Point>(), Point { x: 1, y: 2 });

    // Without `on_rejection`, plain text as before.
    let mut plain = TestClient::new(App::new(|_| ()).route(check));
    let res = post(&mut plain, r#"{"x":-1,"y":2}"#);
    assert_eq!((res.status().as_u16(), res.text()), (400, "x must not be negative\n".to_owned()));
}

#[test]
fn rejections_carry_their_status() {
    use kiln::rejection::*;
    let table: &[(Rejection, u16)] = &[
        (NotFound::new("x").into(), 404),
        (InvalidPathParam::new("x").into(), 404),
        (InvalidQuery::new("x").into(), 400),
        (MissingHeader::new("x").into(), 400),
        (InvalidBody::new("x").into(), 400),
        (PayloadTooLarge::new("x").into(), 413),
        (UnsupportedMediaType::new("x").into(), 415),
        (MalformedJson::new("x").into(), 400),
        (InvalidJson::new("x").into(), 422),
        (InvalidForm::new("x").into(), 422),
        (Internal::new("x").into(), 500),
        (Rejection::custom(kiln::StatusCode::FORBIDDEN, "x"), 403),
    ];
    for (rejection, status) in table {
        assert_eq!(rejection.status().as_u16(), *status, "{rejection:?}");
        assert_eq!(rejection.to_string(), "x");
    }
}

#[derive(Deserialize, Debug, PartialEq)]
struct Search {
    q: String,
    page: u32,
}

#[test]
fn an_optional_extractor_is_none_when_absent_or_bad() {
    async fn search(_: Info, query: Option<Query<Search>>) -> String {
        match query {
            Some(Query(s)) => format!("searching {} page {}", s.q, s.page),
            None => "no search".into(),
        }
    }
    let mut c = client(search);
    assert_eq!(c.get("/info?q=kiln&page=2").text(), "searching kiln page 2");
    assert_eq!(c.get("/info").text(), "no search");
    assert_eq!(c.get("/info?q=kiln&page=two").text(), "no search");
}

#[derive(Deserialize, Serialize, Debug, PartialEq)]
struct Comment {
    author: String,
    body: String,
}

/// Issue 11: a form with a missing field could not be shown again with a message.
#[test]
fn a_result_extractor_hands_the_rejection_to_the_handler() {
    async fn post(_: Echo, form: Result<Form<Comment>, Rejection>) -> (kiln::StatusCode, String) {
        match form {
            Ok(Form(c)) => (kiln::StatusCode::SEE_OTHER, format!("{} said {}", c.author, c.body)),
            Err(Rejection::InvalidForm(e)) => (kiln::StatusCode::UNPROCESSABLE_ENTITY, format!("form again: {e}")),
            Err(other) => (other.status(), other.to_string()),
        }
    }
    let mut c = client(post);
    let ok = c.request("POST", &Echo).form(&Comment { author: "ada".into(), body: "hi".into() }).send();
    assert_eq!((ok.status(), ok.text()), (kiln::StatusCode::SEE_OTHER, "ada said hi".to_owned()));
    let missing = c.request("POST", &Echo).form(&[("author", "ada")]).send();
    assert_eq!(missing.status(), 422);
    assert_eq!(missing.text(), "form again: invalid form: missing field `body`");
    let not_a_form = c.request("POST", &Echo).body("author=ada").send();
    assert_eq!(not_a_form.status(), 415, "the handler chose to answer other rejections as they are");
}

#[test]
fn a_database_error_a_handler_returns_is_rendered_by_the_apps_on_rejection() {
    // The audit: `Err(db::Error::NotFound)` from a handler was plain text whatever the
    // app's `on_rejection`, unlike a 404 from routing.
    async fn lookup(_: Echo) -> Result<&'static str, kiln::db::Error> {
        Err(kiln::db::Error::NotFound)
    }
    async fn down(_: Info) -> Result<&'static str, kiln::db::Error> {
        Err(kiln::db::Error::Timeout)
    }
    let app = || App::new(|_| ()).route(lookup).route(down);
    let mut c = TestClient::new(app().on_rejection(as_json));
    let res = c.request("POST", &Echo).send();
    assert_eq!((res.status().as_u16(), res.header("content-type")), (404, Some("application/json")));
    assert_eq!(res.json::<serde_json::Value>()["error"], "not found");
    let res = c.get(&Info);
    assert_eq!((res.status().as_u16(), res.header("retry-after")), (503, Some("1")));
    assert_eq!(res.json::<serde_json::Value>()["error"], "database unavailable, try again");

    let mut plain = TestClient::new(app());
    let res = plain.get(&Info);
    assert_eq!((res.status().as_u16(), res.text()), (503, "database unavailable, try again\n".to_owned()));
    assert_eq!(res.header("content-type"), Some("text/plain; charset=utf-8"));
}
