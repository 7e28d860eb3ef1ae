//! Server-Sent Events over HTTP/2, against the demo process: many event streams on
//! one h2c connection (prior knowledge, `h2`'s client), each receiving a comment's
//! event as it is posted; on SIGTERM every stream ends cleanly (END_STREAM, no reset)
//! and the process exits.

mod site_support;

use std::time::Duration;

use bytes::Bytes;
use kiln_test_support::{TempDir, poll_until};
use site_support::Visitor;

/// Streams on the one connection (below the server's concurrent-stream limit).
const STREAMS: usize = 50;
/// How long the test waits on anything before it fails instead of hanging.
const CLIENT_TIMEOUT: Duration = Duration::from_secs(20);

/// Reads `body` until what came holds `needle`, releasing flow-control capacity as it goes.
async fn read_until(body: &mut h2::RecvStream, needle: &str) -> String {
    let mut got = Vec::new();
    while !String::from_utf8_lossy(&got).contains(needle) {
        let piece = body.data().await.unwrap_or_else(|| panic!("ended before {needle:?}")).expect("data");
        let _ = body.flow_control().release_capacity(piece.len());
        got.extend_from_slice(&piece);
    }
    String::from_utf8_lossy(&got).into_owned()
}

#[tokio::test]
async fn many_event_streams_on_one_h2_connection_each_get_events_and_end_cleanly_on_sigterm() {
    let dir = TempDir::new("h2-sse");
    let mut server = site_support::start(&dir.sqlite_url(), &["--drain-delay", "0"]);
    let addr = server.addr;
    let tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
    let (client, connection) = tokio::time::timeout(CLIENT_TIMEOUT, h2::client::handshake(tcp)).await.unwrap().unwrap();
    let connection = tokio::spawn(connection);

    let mut bodies = Vec::new();
    for _ in 0..STREAMS {
        let req = http::Request::get("http://127.0.0.1/pages/tour/live").body(()).unwrap();
        let mut ready = client.clone().ready().await.unwrap();
        let (answer, _) = ready.send_request(req, true).unwrap();
        let answer = tokio::time::timeout(CLIENT_TIMEOUT, answer).await.expect("a head in time").unwrap();
        assert_eq!(answer.status(), 200);
        assert_eq!(answer.headers()["content-type"], "text/event-stream");
        bodies.push(answer.into_body());
    }

    // A comment posted over HTTP/1.1 reaches every stream of the h2 connection.
    let post = tokio::task::spawn_blocking(move || {
        let mut visitor = Visitor { addr, cookies: Default::default() };
        let token = visitor.token("/pages/tour");
        let fields = [("csrf_token", token.as_str()), ("author", "h2"), ("body", "to every h2 stream")];
        visitor.post("/pages/tour/comments", &fields).status
    });
    assert_eq!(post.await.unwrap(), 303);
    for body in &mut bodies {
        let event = tokio::time::timeout(CLIENT_TIMEOUT, read_until(body, "to every h2 stream")).await.expect("event");
        assert!(event.contains("id: ") && event.contains("data: <ol><li id=\"c"), "{event}");
    }

    let pid = nix::unistd::Pid::from_raw(server.child.id() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
    for body in &mut bodies {
        let end = tokio::time::timeout(CLIENT_TIMEOUT, async {
            while let Some(piece) = body.data().await {
                let piece: Bytes = piece.expect("an ended stream, not a reset");
                let _ = body.flow_control().release_capacity(piece.len());
            }
        });
        end.await.expect("every stream ends on SIGTERM");
        assert!(body.is_end_stream());
    }
    let exited = poll_until(CLIENT_TIMEOUT, || server.child.try_wait().unwrap());
    assert!(exited.is_some_and(|s| s.success()), "the process did not exit cleanly: {exited:?}");
    // The server said GOAWAY and closed; the client's connection ends without error.
    let closed = tokio::time::timeout(CLIENT_TIMEOUT, connection).await.expect("the connection ends");
    assert!(matches!(closed, Ok(Ok(()))), "{closed:?}");
}
