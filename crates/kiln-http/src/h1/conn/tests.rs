//! The size of what a connection keeps while it streams a body.

use std::rc::Rc;
use std::task::Poll;
use std::time::Duration;

use tokio::net::TcpStream;

use super::*;
use crate::request::Request;

/// Answers nothing: only the engine's own share of a future is measured.
struct Nothing;

impl Service for Nothing {
    async fn call<'a>(&'a self, _: Request<'a>, _: &'a mut crate::response::Response) {}
}

/// A body that ends at once.
struct Ended;

impl futures_core::Stream for Ended {
    type Item = io::Result<bytes::Bytes>;
    fn poll_next(self: Pin<&mut Self>, _: &mut std::task::Context<'_>) -> Poll<Option<Self::Item>> {
        Poll::Ready(None)
    }
}

async fn accepted(listener: &tokio::net::TcpListener) -> (TcpStream, SocketAddr, std::net::TcpStream) {
    let client = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
    let (stream, peer) = listener.accept().await.unwrap();
    (stream, peer, client)
}

#[tokio::test]
async fn regression_a_streamed_body_kept_the_whole_http_connection_future() {
    // Issue 23: a quiet SSE subscriber kept the task of `serve`, whose future is sized
    // for HTTP's largest state (more than a kilobyte here, 2.6 KB with the demo's
    // service). The stream now goes on in a task of its own, which stays small: rare
    // states (the close, the wait for a slow reader) are boxed when they happen.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let worker = Rc::new(Worker::new(crate::config::Limits::default()));
    let (stream, peer, _client) = accepted(&listener).await;
    let http = serve(stream, peer, Rc::new(Nothing), Rc::clone(&worker), 0);
    let (stream, peer, _client) = accepted(&listener).await;
    let idle_timer = Box::pin(tokio::time::sleep(Duration::from_secs(1)));
    let conn = Conn {
        stream,
        peer,
        worker,
        bufs: Bufs::default(),
        start: 0,
        served: 0,
        idle_timer,
        slot: 0,
        held: 0,
        lowat: false,
        turn_spent: false,
        streaming: None,
    };
    let streaming = Streaming { body: Box::pin(Ended), chunked: true, keep_alive: true };
    let stream_phase = serve_stream(conn, Rc::new(Nothing), streaming);
    let (http, stream_phase) = (std::mem::size_of_val(&http), std::mem::size_of_val(&stream_phase));
    assert!(stream_phase <= 640, "the stream's task holds {stream_phase} bytes");
    assert!(stream_phase * 2 < http, "the stream's task {stream_phase} bytes, HTTP's {http}");
}
