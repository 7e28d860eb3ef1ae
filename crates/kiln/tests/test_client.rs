//! The in-process `TestClient`: it answers as the server does (a panic is a `500`, each
//! request a task of its own), and keeps cookies when asked to.

use kiln::test::TestClient;
use kiln::{App, Key, Route, Session, SessionCookies};

#[derive(Route)]
#[route(POST, "/login")]
struct Login;

#[derive(Route)]
#[route(POST, "/logout")]
struct Logout;

#[derive(Route)]
#[route("/me")]
struct Me;

#[derive(Route)]
#[route("/boom")]
struct Boom;

#[derive(Route)]
#[route("/task")]
struct Task;

async fn login(_: Login, session: Session) -> (SessionCookies, &'static str) {
    (session.start("ada"), "in")
}

async fn logout(_: Logout, session: Session) -> (SessionCookies, &'static str) {
    (session.end(), "out")
}

async fn me(_: Me, session: Session) -> String {
    session.user().unwrap_or("nobody").to_owned()
}

async fn boom(_: Boom) -> &'static str {
    panic!("a handler's bug")
}

async fn task(_: Task) -> &'static str {
    if tokio::task::try_id().is_some() { "a task" } else { "no task" }
}

fn app() -> App<()> {
    App::new(|_| ())
        .secret_key(Key::new([7u8; 32]).unwrap())
        .route(login)
        .route(logout)
        .route(me)
        .route(boom)
        .route(task)
}

#[test]
fn a_panicking_handler_is_a_500_and_the_client_goes_on() {
    // The audit: the test itself panicked, so the server's 500 could not be tested.
    let mut c = TestClient::new(app());
    let res = c.get(&Boom);
    assert_eq!(res.status(), 500);
    assert_eq!(res.text(), "internal server error\n");
    assert_eq!(res.header("content-type"), Some("text/plain; charset=utf-8"));
    assert_eq!(c.get(&Me).text(), "nobody");
}

#[test]
fn a_panicking_handlers_500_is_rendered_by_the_apps_on_rejection() {
    // As every other refusal: the site's own error page, not the engine's plain text.
    let app = app().on_rejection(|rejection, res| {
        res.set_status(rejection.status());
        res.set_content_type("text/html; charset=utf-8");
        res.body_mut().extend_from_slice(format!("<h1>{}</h1>", rejection.status().as_u16()).as_bytes());
    });
    let mut c = TestClient::new(app);
    let res = c.get(&Boom);
    assert_eq!((res.status().as_u16(), res.text()), (500, "<h1>500</h1>".to_owned()));
    assert_eq!(res.header("content-type"), Some("text/html; charset=utf-8"));
}

#[test]
fn each_request_runs_as_a_task_of_its_own() {
    assert_eq!(TestClient::new(app()).get(&Task).text(), "a task");
}

#[test]
fn cookies_are_the_tests_to_send_unless_the_client_keeps_them() {
    let mut plain = TestClient::new(app());
    assert!(plain.request("POST", &Login).send().header("set-cookie").is_some());
    assert_eq!(plain.get(&Me).text(), "nobody");
    assert_eq!(plain.cookie("kiln_session"), None);

    let mut browser = TestClient::new(app()).keep_cookies();
    browser.request("POST", &Login).send();
    assert_eq!(browser.get(&Me).text(), "ada");
    assert!(browser.cookie("kiln_session").is_some() && browser.cookie("kiln_csrf").is_some());
    // A request's own `Cookie` header is sent instead of the jar.
    assert_eq!(browser.request("GET", &Me).header("Cookie", "kiln_session=forged").send().text(), "nobody");
    assert_eq!(browser.get(&Me).text(), "ada");
    // A cookie cleared by the server (`Max-Age=0`) leaves the jar.
    browser.request("POST", &Logout).send();
    assert_eq!((browser.cookie("kiln_session"), browser.cookie("kiln_csrf")), (None, None));
    assert_eq!(browser.get(&Me).text(), "nobody");
}

#[derive(Route)]
#[route(POST, "/upload")]
struct Upload;

async fn upload(_: Upload, body: kiln::Bytes) -> String {
    format!("{} bytes", body.len())
}

#[test]
fn a_body_over_the_limit_is_the_servers_413_not_a_panic() {
    // Issue 25: a body over the engine's 1 MiB default panicked the test with
    // `malformed test request: 413 …` instead of answering as the server does.
    let mut c = TestClient::new(App::new(|_| ()).route(upload));
    let limit = kiln::http::MAX_BODY_BYTES;
    assert_eq!(c.request("POST", &Upload).body(vec![b'x'; limit]).send().text(), format!("{limit} bytes"));
    let res = c.request("POST", &Upload).body(vec![b'x'; limit + 1]).send();
    assert_eq!(res.status(), 413);
    assert!(res.text().starts_with("request body too large: over the 1 MiB"), "{}", res.text());
    assert_eq!(res.header("connection"), Some("close"));
    // The client goes on, as a new connection would.
    assert_eq!(c.request("POST", &Upload).body("ok").send().text(), "2 bytes");
}

#[test]
fn the_servers_own_limits_apply_when_given() {
    let limits = kiln::http::Limits { max_body_bytes: 4 * 1024 * 1024, max_headers: 4, ..Default::default() };
    let mut c = TestClient::new(App::new(|_| ()).route(upload)).limits(limits);
    let big = 2 * 1024 * 1024;
    assert_eq!(c.request("POST", &Upload).body(vec![b'x'; big]).send().text(), format!("{big} bytes"));
    let mut req = c.request("POST", &Upload);
    for i in 0..5 {
        req = req.header(&format!("X-{i}"), "1");
    }
    assert_eq!(req.send().status(), 431);
}

/// The body of a streamed route, as a handler reads it.
struct BodyStream(kiln::http::IncomingBody);

impl<S> kiln::FromRequest<S> for BodyStream {
    fn from_request(cx: &kiln::RequestContext<'_, S>) -> Result<Self, kiln::rejection::Rejection> {
        cx.request()
            .body_stream()
            .map(BodyStream)
            .ok_or_else(|| kiln::rejection::InvalidBody::new("not streamed").into())
    }
}

#[derive(Route)]
#[route(POST, "/chunks")]
struct Chunks;

/// Answers with each chunk's length, as read.
async fn chunks(_: Chunks, BodyStream(mut body): BodyStream) -> String {
    let mut lens = Vec::new();
    while let Ok(Some(chunk)) = body.chunk().await {
        lens.push(chunk.len().to_string());
    }
    lens.join(",")
}

#[test]
fn a_streamed_request_body_reaches_the_handler_in_the_chunks_given() {
    let app = App::new(|_| ()).route(chunks).stream_body::<Chunks>(1024);
    let mut c = TestClient::new(app);
    let res = c.request("POST", &Chunks).body_chunks([&b"abc"[..], b"de", b"fghij"]).send();
    assert_eq!(res.text(), "3,2,5");
    // One body, one chunk, as before.
    assert_eq!(c.request("POST", &Chunks).body("abcdefghij").send().text(), "10");
}
