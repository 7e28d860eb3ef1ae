//! 103 Early Hints (RFC 8297): a service's hints go out on HTTP/2 before it answers,
//! and never on HTTP/1.1.

mod h2_support;

use std::future::poll_fn;
use std::io::{Read, Write};
use std::time::Duration;

use kiln_http::{Request, Response, Server, Service};

const HINTS: &[u8] = b"Link: </static/site.css>; rel=preload; as=style\r\n";

/// Hints for pages (`accept: text/html`); each answer comes 200 ms after the request,
/// so that the hints visibly arrive first.
struct Pages;

impl Service for Pages {
    async fn call<'a>(&'a self, _req: Request<'a>, res: &'a mut Response) {
        tokio::time::sleep(Duration::from_millis(200)).await;
        res.set_content_type("text/html");
        res.set_body_static(b"<!DOCTYPE html><title>t</title>");
    }

    fn early_hints<'a>(&'a self, req: &Request<'_>) -> Option<&'a [u8]> {
        req.header_str("accept").is_some_and(|a| a.contains("text/html")).then_some(HINTS)
    }
}

#[tokio::test]
async fn hints_arrive_before_the_answer_on_http2_and_only_for_those_asking() {
    let server = Server::new().workers(1).listen("127.0.0.1:0").serve(|_| Pages).unwrap();
    let mut client = h2_support::connect(server.local_addr()).await.ready().await.unwrap();
    let page = http::Request::get("http://localhost/").header("accept", "text/html").body(()).unwrap();
    let (mut answer, _) = client.send_request(page, true).unwrap();
    let hints = tokio::time::timeout(h2_support::CLIENT_TIMEOUT, poll_fn(|cx| answer.poll_informational(cx)))
        .await
        .expect("hints in time")
        .expect("an informational response")
        .unwrap();
    assert_eq!(hints.status(), 103);
    assert_eq!(hints.headers()["link"], "</static/site.css>; rel=preload; as=style");
    let done = answer.await.unwrap();
    assert_eq!(done.status(), 200);
    assert!(done.headers().get("link").is_none());

    // A request that is not for a page gets none.
    let mut client = client.ready().await.unwrap();
    let data = http::Request::get("http://localhost/data").body(()).unwrap();
    let (mut answer, _) = client.send_request(data, true).unwrap();
    let informational = poll_fn(|cx| answer.poll_informational(cx)).await;
    assert!(informational.is_none(), "{informational:?}");
    assert_eq!(answer.await.unwrap().status(), 200);

    // HTTP/1.1 never sees a 1xx it did not ask for.
    let mut s = std::net::TcpStream::connect(server.local_addr()).unwrap();
    s.set_read_timeout(Some(h2_support::CLIENT_TIMEOUT)).unwrap();
    s.write_all(b"GET / HTTP/1.1\r\nHost: a\r\nAccept: text/html\r\nConnection: close\r\n\r\n").unwrap();
    let mut answer = String::new();
    s.read_to_string(&mut answer).unwrap();
    assert!(answer.starts_with("HTTP/1.1 200 OK\r\n"), "{answer}");
    server.shutdown();
    tokio::task::spawn_blocking(move || server.wait().unwrap()).await.unwrap();
}
