//! Middleware: before/after hooks, short-circuits, and the request-id and
//! server-timing examples.

use kiln::http::{Request, Response};
use kiln::middleware::{Flow, Middleware, RequestId, ServerTiming};
use kiln::test::TestClient;
use kiln::{App, MakeService, Route, StatusCode};

#[derive(Route)]
#[route("/secret")]
struct Secret;

async fn secret(_: Secret) -> &'static str {
    "the secret"
}

/// Refuses requests without `Authorization`, and marks the ones it let through.
struct Guard;

impl Middleware for Guard {
    type Carry = ();

    fn before(&self, req: &Request<'_>, res: &mut Response) -> Flow<()> {
        if req.header("authorization").is_some() {
            return Flow::Continue(());
        }
        res.set_status(StatusCode::UNAUTHORIZED);
        res.set_body_static(b"who are you?");
        Flow::Respond
    }

    fn after(&self, _: &Request<'_>, res: &mut Response, _: ()) {
        res.append_header_unchecked(b"X-Guarded", b"yes");
    }
}

fn app() -> kiln::AppFactory<()> {
    App::new(|_| ()).route(secret).build().unwrap()
}

#[test]
fn a_middleware_can_short_circuit_or_wrap() {
    let mut client = TestClient::new(app().wrap(|_| Guard));
    let res = client.get(&Secret);
    assert_eq!(res.status(), 401);
    assert_eq!(res.text(), "who are you?");
    assert_eq!(res.header("x-guarded"), None, "after does not run when before answered");

    let res = client.request("GET", &Secret).header("Authorization", "Bearer x").send();
    assert_eq!(res.text(), "the secret");
    assert_eq!(res.header("x-guarded"), Some("yes"));
}

#[test]
fn request_ids_count_per_worker_or_echo_the_client() {
    let mut client = TestClient::new(app().wrap(RequestId::new));
    assert_eq!(client.get(&Secret).header("x-request-id"), Some("0-1"));
    assert_eq!(client.get(&Secret).header("x-request-id"), Some("0-2"));
    let res = client.request("GET", &Secret).header("X-Request-Id", "abc-123").send();
    assert_eq!(res.header("x-request-id"), Some("abc-123"));
}

#[test]
fn middlewares_compose() {
    let mut client = TestClient::new(app().wrap(|_| ServerTiming).wrap(RequestId::new));
    let res = client.get(&Secret);
    assert_eq!(res.text(), "the secret");
    let timing = res.header("server-timing").unwrap();
    assert!(timing.starts_with("app;dur="), "{timing}");
    assert_eq!(res.header("x-request-id"), Some("0-1"));
}

#[test]
fn secure_headers_keep_pages_out_of_other_sites_frames() {
    use kiln::middleware::SecureHeaders;

    #[derive(Route)]
    #[route("/page")]
    struct Page;
    #[derive(Route)]
    #[route("/framable")]
    struct Framable;
    #[derive(Route)]
    #[route("/text")]
    struct Text;
    #[derive(Route)]
    #[route("/bench/pong")]
    struct Pong;

    async fn page(_: Page) -> kiln::markup::Fragment<kiln::markup::Flow> {
        kiln::html! { p { "hi" } }
    }
    async fn framable(_: Framable) -> ([(&'static str, &'static str); 1], kiln::markup::Fragment<kiln::markup::Flow>) {
        ([("Content-Security-Policy", "frame-ancestors https://partner.example")], kiln::html! { p { "hi" } })
    }
    async fn text(_: Text) -> &'static str {
        "plain"
    }
    async fn pong(_: Pong) -> &'static str {
        "PONG"
    }
    let app = App::new(|_| ()).route(page).route(framable).route(text).route(pong).build().unwrap();
    let app = app.wrap(|_| SecureHeaders::new().except(|path| path.starts_with("/bench/")));
    let mut c = TestClient::new(app);

    let res = c.get(&Page);
    assert_eq!(res.header("x-frame-options"), Some("DENY"));
    assert_eq!(res.header("content-security-policy"), Some("frame-ancestors 'none'"));
    assert_eq!(res.header("referrer-policy"), Some("strict-origin-when-cross-origin"));
    assert_eq!(res.header("x-content-type-options"), Some("nosniff"));
    // The app's own policy stands, once.
    let res = c.get(&Framable);
    assert_eq!(
        res.header_all("content-security-policy").collect::<Vec<_>>(),
        ["frame-ancestors https://partner.example"]
    );
    // Not HTML: only nosniff. An excepted path: nothing.
    let res = c.get(&Text);
    assert_eq!((res.header("x-content-type-options"), res.header("x-frame-options")), (Some("nosniff"), None));
    let res = c.get(&Pong);
    assert_eq!((res.header("x-content-type-options"), res.text()), (None, "PONG".to_owned()));
}
