//! The engine's own refusals under a problem+json prefix (issue 32): a body over its
//! limit is refused by `kiln-http` before the app is called, but the engine has read the
//! request's head, so the app renders the refusal as problem details when its path is
//! under a prefix that asked for them; elsewhere it stays the engine's plain text.
#![cfg(feature = "openapi")]

use kiln::http::Bytes;
use kiln::test::TestClient;
use kiln::{App, Route};
use serde_json::Value;

#[derive(Route)]
#[route(POST, "/api/uploads")]
struct ApiUpload;

#[derive(Route)]
#[route(POST, "/api/streamed")]
struct ApiStreamed;

#[derive(Route)]
#[route(POST, "/uploads")]
struct PageUpload;

async fn api_upload(_: ApiUpload, body: Bytes) -> String {
    format!("{} bytes", body.len())
}

async fn api_streamed(_: ApiStreamed, body: Bytes) -> String {
    format!("{} bytes", body.len())
}

async fn page_upload(_: PageUpload, body: Bytes) -> String {
    format!("{} bytes", body.len())
}

fn app() -> App<()> {
    App::new(|_| ())
        .route(api_upload)
        .route(api_streamed)
        .route(page_upload)
        .stream_body::<ApiStreamed>(64 * 1024)
        .problem_json("/api")
}

#[test]
fn an_engine_refusal_under_a_problem_json_prefix_is_problem_json() {
    let mut client = TestClient::new(app());
    let too_large = vec![b'x'; 2 * 1024 * 1024];
    for (path, limit) in [("/api/uploads", "Limits::max_body_bytes"), ("/api/streamed", "this route's 64 KiB")] {
        let res = client.request("POST", path).body(too_large.clone()).send();
        assert_eq!(res.status(), 413, "{path}");
        assert_eq!(res.header("content-type"), Some("application/problem+json"), "{path}");
        let problem: Value = res.json();
        assert_eq!((problem["status"].as_u64(), problem["instance"].as_str()), (Some(413), Some(path)));
        assert_eq!(problem["title"], "Payload Too Large");
        assert!(problem["detail"].as_str().is_some_and(|d| d.contains(limit)), "{problem}");
    }
    let res = client.request("POST", &PageUpload).body(too_large).send();
    assert_eq!(res.status(), 413);
    assert_eq!(res.header("content-type"), Some("text/plain; charset=utf-8"), "outside the prefix: as before");
}

/// The same through a server: the engine refuses the head's announced length before
/// reading the body, and the app renders the refusal.
#[test]
fn a_server_s_413_under_a_problem_json_prefix_is_problem_json() {
    let serving = kiln::serve(app(), kiln::http::Server::new().listen("127.0.0.1:0").workers(1)).expect("serve");
    let head = |path: &str| {
        format!("POST {path} HTTP/1.1\r\nHost: test\r\nContent-Length: 2000000000\r\nContent-Type: text/plain\r\n\r\n")
    };
    let res = kiln_test_support::request(serving.local_addr(), &head("/api/uploads")).expect("answer");
    assert_eq!(res.status, 413, "{}", res.text());
    assert_eq!(res.header("content-type"), Some("application/problem+json"));
    assert_eq!(res.json()["instance"], "/api/uploads");
    let res = kiln_test_support::request(serving.local_addr(), &head("/uploads")).expect("answer");
    assert_eq!((res.status, res.header("content-type")), (413, Some("text/plain; charset=utf-8")));
    // Before a head is read there is no path: the engine's own text.
    let res = kiln_test_support::request(serving.local_addr(), "POST /api/uploads HTTP/1.1\r\nNo colon\r\n\r\n")
        .expect("answer");
    assert_eq!((res.status, res.header("content-type")), (400, Some("text/plain; charset=utf-8")));
}
