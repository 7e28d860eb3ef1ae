//! Streams the peer resets (RFC 9113 §6.4): a handler still running for a reset stream
//! is dropped, and resets beyond `Limits::h2_max_pending_accept_reset_streams` (beyond
//! one per answered stream) close the connection with `GOAWAY(ENHANCE_YOUR_CALM)`.

mod h2_support;

use std::io::Write;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use h2_support::*;
use kiln_http::{Limits, Request, Response, Server, ServerHandle, Service};

/// Counts handlers started and handlers dropped (finished or cancelled).
#[derive(Clone, Default)]
struct Counts {
    started: Arc<AtomicUsize>,
    dropped: Arc<AtomicUsize>,
}

/// Notes its drop: the handler's future was dropped with it in scope.
struct OnDrop(Arc<AtomicUsize>);

impl Drop for OnDrop {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

/// `/hang` never answers; anything else answers `pong`.
struct Hang(Counts);

impl Service for Hang {
    async fn call<'a>(&'a self, req: Request<'a>, res: &'a mut Response) {
        if req.path() == "/hang" {
            let _noted = OnDrop(Arc::clone(&self.0.dropped));
            self.0.started.fetch_add(1, Ordering::SeqCst);
            std::future::pending::<()>().await;
        }
        res.set_body_static(b"pong");
    }
}

fn start(limits: Limits) -> (ServerHandle, Counts) {
    let counts = Counts::default();
    let theirs = counts.clone();
    let server =
        Server::new().workers(1).limits(limits).listen("127.0.0.1:0").serve(move |_| Hang(theirs.clone())).unwrap();
    (server, counts)
}

/// Waits (at most ten seconds) until `n` reaches `want`.
fn wait_for(n: &AtomicUsize, want: usize) -> usize {
    let deadline = Instant::now() + Duration::from_secs(10);
    while n.load(Ordering::SeqCst) < want && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    n.load(Ordering::SeqCst)
}

fn get(id: u32, path: &str) -> Vec<u8> {
    frame(HEADERS, END_STREAM | END_HEADERS, id, &get_block("GET", path))
}

/// Reads frames until stream `id` ends; its DATA as text.
fn answer(s: &mut std::net::TcpStream, id: u32) -> String {
    let mut body = Vec::new();
    loop {
        let f = read_frame(s).expect("the connection stays open");
        assert_ne!(f.kind, GOAWAY, "{f:?}");
        if f.stream == id && f.kind == DATA {
            body.extend_from_slice(&f.payload);
        }
        if f.stream == id && f.flags & END_STREAM != 0 && matches!(f.kind, DATA | HEADERS) {
            return String::from_utf8(body).unwrap();
        }
    }
}

#[test]
fn a_reset_stream_s_running_handler_is_dropped() {
    // Bug: the handler of a stream the client had reset ran on to its end (here, for
    // ever), its answer thrown away.
    let (server, counts) = start(Limits::default());
    let mut s = raw(server.local_addr());
    s.write_all(&get(1, "/hang")).unwrap();
    assert_eq!(wait_for(&counts.started, 1), 1, "the handler started");
    assert_eq!(counts.dropped.load(Ordering::SeqCst), 0);
    s.write_all(&rst_stream(1, CANCEL)).unwrap();
    assert_eq!(wait_for(&counts.dropped, 1), 1, "the reset stream's handler was dropped");
    // The connection goes on.
    s.write_all(&get(3, "/pong")).unwrap();
    assert_eq!(answer(&mut s, 3), "pong");
    drop(s);
    server.shutdown();
    server.wait().unwrap();
}

fn resets_then_request(addr: SocketAddr, resets: u32) -> std::net::TcpStream {
    let mut s = raw(addr);
    let mut burst = Vec::new();
    for i in 0..resets {
        let id = 2 * i + 1;
        burst.extend(get(id, "/hang"));
        burst.extend(rst_stream(id, CANCEL));
    }
    burst.extend(get(2 * resets + 1, "/pong"));
    s.write_all(&burst).unwrap();
    s
}

#[test]
fn resets_beyond_h2_max_pending_accept_reset_streams_get_goaway_enhance_your_calm() {
    // Bug: the limit was in `Limits` but nothing read it.
    let (server, _) = start(Limits { h2_max_pending_accept_reset_streams: 3, ..Limits::default() });
    let mut s = resets_then_request(server.local_addr(), 3);
    assert_eq!(answer(&mut s, 7), "pong", "three resets are allowed");
    let mut s = resets_then_request(server.local_addr(), 5);
    assert_eq!(until_goaway(&mut s).expect("a GOAWAY").code(), ENHANCE_YOUR_CALM);
    server.shutdown();
    server.wait().unwrap();
}
