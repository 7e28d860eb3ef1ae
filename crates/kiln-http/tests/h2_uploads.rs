//! Streamed request bodies over HTTP/2 (h2c): the same routes as over HTTP/1.1, DATA
//! frames taken as the handler asks, the route's own limit and the body timeout.

mod h2_support;
mod support;

use std::time::Duration;

use h2_support::{connect, send};
use kiln_http::{Bytes, Limits};
use support::{TestServer, upload_sum};

#[tokio::test]
async fn a_streamed_body_above_the_global_limit_arrives_whole_over_h2() {
    let server = TestServer::start(Limits::default());
    let client = connect(server.addr()).await;
    let body: Vec<u8> = (0..3 * 1024 * 1024u32).map(|i| (i % 249) as u8).collect();
    let answer = send(&client, "POST", "/upload", &body).await.unwrap();
    assert_eq!((answer.status, answer.body_str()), (200, upload_sum(&body).as_str()));
    // The connection goes on: a buffered route still has the global limit.
    let too_big = send(&client, "POST", "/echo", &body).await.unwrap();
    assert_eq!(too_big.status, 413);
}

#[tokio::test]
async fn a_streamed_body_over_its_route_limit_gets_413_over_h2() {
    let server = TestServer::start(Limits::default());
    let client = connect(server.addr()).await;
    let body = vec![7u8; support::UPLOAD_LIMIT as usize + 1];
    let answer = send(&client, "POST", "/upload", &body).await;
    // The answer may race the reset of the rest of the upload.
    if let Ok(answer) = answer {
        assert_eq!(answer.status, 413);
    }
}

/// Regression (issue 25): a stalled upload got no answer; over HTTP/2 it gets a `408`.
#[tokio::test]
async fn a_stalled_streamed_upload_gets_408_over_h2() {
    let server = TestServer::start(Limits { body_timeout: Duration::from_millis(300), ..Limits::default() });
    let client = connect(server.addr()).await;
    let req = http::Request::builder().method("POST").uri("http://localhost/upload").body(()).unwrap();
    let mut ready = client.clone().ready().await.unwrap();
    let (answer, mut stream) = ready.send_request(req, false).unwrap();
    stream.send_data(Bytes::from_static(b"the start and then nothing"), false).unwrap();
    let answer = tokio::time::timeout(Duration::from_secs(10), answer).await.expect("an answer in time").unwrap();
    assert_eq!(answer.status(), 408);
    drop(stream);
}

/// A handler that stops reading closes the stream's window: the engine holds what the
/// window let through, not the body (bounded memory), and the answer still comes.
#[tokio::test]
async fn a_stalled_handler_holds_at_most_two_windows_of_the_body_over_h2() {
    let server = TestServer::start(Limits::default());
    let client = connect(server.addr()).await;
    let body = vec![3u8; 3 * 1024 * 1024];
    let answer = send(&client, "POST", "/upload-stall", &body).await.unwrap();
    assert_eq!(answer.status, 200);
    let received: u64 = answer.body_str().parse().unwrap();
    // The first chunk (at most one window) and the window given back for it.
    assert!(received <= 2 * u64::from(kiln_http::H2_STREAM_WINDOW), "{received} bytes taken in");
    assert!(received < body.len() as u64);
}

/// A handler that answers without reading gets its answer out; the rest of the body is
/// refused with RST_STREAM(NO_ERROR) and the connection goes on.
#[tokio::test]
async fn a_streamed_route_that_ignores_its_body_answers_and_the_connection_goes_on_over_h2() {
    let server = TestServer::start(Limits::default());
    let client = connect(server.addr()).await;
    let body = vec![5u8; 2 * 1024 * 1024];
    if let Ok(answer) = send(&client, "POST", "/upload-ignore", &body).await {
        assert_eq!((answer.status, answer.body_str()), (200, "ignored"));
    }
    let small = b"after";
    let answer = send(&client, "POST", "/upload", small).await.unwrap();
    assert_eq!((answer.status, answer.body_str()), (200, upload_sum(small).as_str()));
}

/// Regression (issue 33 item 5): over HTTP/2 the `413` said only "request body too large";
/// it names the limit that applied and how a route raises it, as over HTTP/1.1.
#[tokio::test]
async fn a_body_over_its_limit_gets_a_413_that_names_the_limit_over_h2() {
    let server = TestServer::start(Limits { max_body_bytes: 64 * 1024, ..Limits::default() });
    let client = connect(server.addr()).await;
    let body = vec![b'x'; 256 * 1024];
    // /echo reads its body whole: the 413 is answered from the engine, before the rest
    // of the body is reset (as `a_streamed_body_above_the_global_limit_arrives_whole_over_h2`).
    let answer = send(&client, "POST", "/echo", &body).await.expect("the 413 arrives");
    assert_eq!(answer.status, 413);
    let text = answer.body_str();
    assert!(text.contains("over the 64 KiB"), "{text}");
    assert!(text.contains("Limits::max_body_bytes") && text.contains("App::stream_body"), "{text}");
}
