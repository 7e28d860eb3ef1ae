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
