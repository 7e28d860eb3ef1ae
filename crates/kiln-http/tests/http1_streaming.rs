//! Streamed responses over a real socket: each chunk leaves when it is produced, the
//! stream is polled only while the client reads, and shutdown ends or cuts streams.

mod support;

use std::collections::VecDeque;
use std::future::Future;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use futures_core::Stream;
use kiln_http::{Bytes, Drain, Limits, Request, Response, Server, ServerHandle, Service, draining};
use tokio::sync::mpsc;

/// What the tests share with the service on its worker thread.
#[derive(Default, Clone)]
struct Shared {
    /// The chunks of each `/live` stream, one receiver per request, in order.
    live: Arc<Mutex<VecDeque<mpsc::UnboundedReceiver<Bytes>>>>,
    /// Bytes `/flood` has produced.
    produced: Arc<AtomicUsize>,
    /// Streams dropped (ended, cut, or abandoned by their client).
    dropped: Arc<AtomicUsize>,
    /// Times any stream was polled.
    polls: Arc<AtomicUsize>,
}

struct StreamService(Shared);

impl Service for StreamService {
    async fn call<'a>(&'a self, req: Request<'a>, res: &'a mut Response) {
        let shared = self.0.clone();
        let body: Box<dyn Stream<Item = std::io::Result<Bytes>>> = match req.path() {
            "/live" => {
                let rx = shared.live.lock().unwrap().pop_front().expect("a /live stream was prepared");
                Box::new(Live(rx))
            }
            "/flood" => Box::new(Flood(shared.produced.clone())),
            "/until-drain" => Box::new(FirstThen { first: true, drain: Some(draining()) }),
            "/hang" => Box::new(FirstThen { first: true, drain: None }),
            "/long-poll" => {
                draining().await;
                res.set_body_static(b"drained, come back");
                return;
            }
            "/forever" => std::future::pending().await,
            _ => {
                res.set_body_static(b"plain");
                return;
            }
        };
        res.set_content_type("text/plain");
        res.set_body_stream(Box::pin(Counted(Box::into_pin(body), shared.dropped, shared.polls)));
    }
}

/// The chunks a test sends, until it drops its sender.
struct Live(mpsc::UnboundedReceiver<Bytes>);
impl Stream for Live {
    type Item = std::io::Result<Bytes>;
    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.0.poll_recv(cx).map(|c| c.map(Ok))
    }
}

/// What `/flood` sends: 100 MiB, always ready, 64 KiB at a time.
const FLOOD_BYTES: usize = 100 * 1024 * 1024;

/// Always ready with another 64 KiB, until `FLOOD_BYTES` are out.
struct Flood(Arc<AtomicUsize>);
impl Stream for Flood {
    type Item = std::io::Result<Bytes>;
    fn poll_next(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        if self.0.fetch_add(64 * 1024, Ordering::SeqCst) >= FLOOD_BYTES {
            return Poll::Ready(None);
        }
        Poll::Ready(Some(Ok(Bytes::from(vec![b'f'; 64 * 1024]))))
    }
}

/// Yields `first`, then waits: for the drain signal (and ends), or forever.
struct FirstThen {
    first: bool,
    drain: Option<Drain>,
}
impl Stream for FirstThen {
    type Item = std::io::Result<Bytes>;
    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        if std::mem::take(&mut self.first) {
            return Poll::Ready(Some(Ok(Bytes::from_static(b"first"))));
        }
        match &mut self.drain {
            Some(drain) => Pin::new(drain).poll(cx).map(|()| None),
            None => Poll::Pending,
        }
    }
}

/// Counts its polls and its drop, so that a test sees how often the engine polled a
/// stream and when it let go of it.
struct Counted(Pin<Box<dyn Stream<Item = std::io::Result<Bytes>>>>, Arc<AtomicUsize>, Arc<AtomicUsize>);
impl Stream for Counted {
    type Item = std::io::Result<Bytes>;
    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.2.fetch_add(1, Ordering::SeqCst);
        self.0.as_mut().poll_next(cx)
    }
}
impl Drop for Counted {
    fn drop(&mut self) {
        self.1.fetch_add(1, Ordering::SeqCst);
    }
}

fn start(server: Server) -> (ServerHandle, Shared) {
    let shared = Shared::default();
    let for_workers = shared.clone();
    let handle = server.listen("127.0.0.1:0").serve(move |_| StreamService(for_workers.clone())).unwrap();
    (handle, shared)
}

fn connect(handle: &ServerHandle) -> TcpStream {
    let s = TcpStream::connect(handle.local_addr()).unwrap();
    s.set_read_timeout(Some(support::CLIENT_TIMEOUT)).unwrap();
    s
}

/// Reads until what was read ends with `end`; fails the test on a close or a timeout.
fn read_until(s: &mut TcpStream, got: &mut Vec<u8>, end: &[u8]) {
    let mut buf = [0u8; 4096];
    while !got.ends_with(end) {
        let n = s.read(&mut buf).unwrap_or_else(|e| panic!("waiting for {end:?} after {got:?}: {e}"));
        assert!(n > 0, "closed while waiting for {:?}; got {:?}", end, String::from_utf8_lossy(got));
        got.extend_from_slice(&buf[..n]);
    }
}

/// Opens a `/live` stream fed by the returned sender and reads its head (left in the
/// returned buffer).
fn open_live(handle: &ServerHandle, shared: &Shared) -> (mpsc::UnboundedSender<Bytes>, TcpStream, Vec<u8>) {
    let (tx, rx) = mpsc::unbounded_channel();
    shared.live.lock().unwrap().push_back(rx);
    let mut s = connect(handle);
    s.write_all(b"GET /live HTTP/1.1\r\nHost: a\r\n\r\n").unwrap();
    let mut got = Vec::new();
    read_until(&mut s, &mut got, b"\r\n\r\n");
    (tx, s, got)
}

fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !done() {
        assert!(Instant::now() < deadline, "{what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn regression_a_streamed_response_sends_its_head_and_each_chunk_as_produced() {
    // Issue 23: a stream was held back until 64 KiB had gathered, so an event stream
    // sent nothing, not even its head.
    let (handle, shared) = start(Server::new().workers(1));
    let (tx, mut s, mut got) = open_live(&handle, &shared);
    let head = String::from_utf8_lossy(&got).into_owned();
    assert!(head.starts_with("HTTP/1.1 200 OK\r\n"), "{head}");
    assert!(head.contains("Transfer-Encoding: chunked\r\n"), "{head}");
    for (chunk, framed) in [("one", "3\r\none\r\n"), ("twenty-two chars long.", "16\r\ntwenty-two chars long.\r\n")] {
        got.clear();
        tx.send(Bytes::from_static(chunk.as_bytes())).unwrap();
        read_until(&mut s, &mut got, framed.as_bytes());
        assert_eq!(got, framed.as_bytes());
    }
    got.clear();
    drop(tx);
    read_until(&mut s, &mut got, b"0\r\n\r\n");
    assert_eq!(got, b"0\r\n\r\n");
    // The connection goes on after a stream that ended.
    s.write_all(b"GET / HTTP/1.1\r\nHost: a\r\n\r\n").unwrap();
    got.clear();
    read_until(&mut s, &mut got, b"plain");
    handle.shutdown();
    handle.wait().unwrap();
}

#[test]
fn regression_a_quiet_stream_is_polled_twice_per_chunk_not_three_times() {
    // Issue 23's fan-out: after each chunk went out the stream was polled once more only
    // to learn that it was still pending, once per subscriber per event. Its pending
    // answer before the write already registered the task.
    let (handle, shared) = start(Server::new().workers(1));
    let (tx, mut s, mut got) = open_live(&handle, &shared);
    const CHUNKS: usize = 10;
    for _ in 0..CHUNKS {
        got.clear();
        tx.send(Bytes::from_static(b"event")).unwrap();
        read_until(&mut s, &mut got, b"5\r\nevent\r\n");
    }
    // Once before the head went out, then per chunk: it, and the pending after it.
    let polls = shared.polls.load(Ordering::SeqCst);
    assert!(polls <= 1 + 2 * CHUNKS, "{polls} polls for {CHUNKS} chunks");
    drop(tx);
    read_until(&mut s, &mut got, b"0\r\n\r\n");
    handle.shutdown();
    handle.wait().unwrap();
}

#[test]
fn a_client_that_never_reads_a_100_mib_stream_pins_little_memory_is_cut_and_others_are_served() {
    let limits = Limits { body_timeout: Duration::from_millis(300), ..Limits::default() };
    let (handle, shared) = start(Server::new().workers(1).limits(limits));
    let socket = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
    socket.set_recv_buffer_size(16 * 1024).unwrap();
    socket.connect(&handle.local_addr().into()).unwrap();
    let mut stalled: TcpStream = socket.into();
    stalled.write_all(b"GET /flood HTTP/1.1\r\nHost: a\r\n\r\n").unwrap();
    // While the stream waits for a client that reads nothing, the worker serves others.
    wait_for("the stream never started", || shared.produced.load(Ordering::SeqCst) > 0);
    let mut other = connect(&handle);
    other.write_all(b"GET / HTTP/1.1\r\nHost: a\r\n\r\n").unwrap();
    read_until(&mut other, &mut Vec::new(), b"plain");
    // The stream is let go of once the client has not read for the send timeout.
    wait_for("the stalled stream was never cut", || shared.dropped.load(Ordering::SeqCst) == 1);
    // What it produced is what the socket buffers took (a few MiB), not the 100 MiB
    // an always-ready stream would have had buffered for a client that reads nothing.
    let produced = shared.produced.load(Ordering::SeqCst);
    assert!(produced < 16 * 1024 * 1024, "{produced} bytes produced for a client that never read");
    // Cut, not ended: the client never sees the last chunk.
    stalled.set_read_timeout(Some(support::CLIENT_TIMEOUT)).unwrap();
    let got = support::read_to_close(&mut stalled);
    assert!(!got.ends_with(b"0\r\n\r\n"));
    handle.shutdown();
    handle.wait().unwrap();
}

#[test]
fn a_stream_that_waits_on_drain_ends_cleanly_at_shutdown_and_the_server_exits_at_once() {
    let (handle, _) = start(Server::new().workers(2).shutdown_grace(Duration::from_secs(60)));
    let mut s = connect(&handle);
    s.write_all(b"GET /until-drain HTTP/1.1\r\nHost: a\r\n\r\n").unwrap();
    let mut got = Vec::new();
    read_until(&mut s, &mut got, b"5\r\nfirst\r\n");
    let started = Instant::now();
    handle.shutdown();
    read_until(&mut s, &mut got, b"0\r\n\r\n");
    assert!(String::from_utf8_lossy(&got).contains("Connection: close\r\n") || got.ends_with(b"0\r\n\r\n"));
    assert_eq!(support::read_to_close(&mut s), b"");
    handle.wait().unwrap();
    assert!(started.elapsed() < Duration::from_secs(30), "the stream held the shutdown grace");
}

#[test]
fn a_stream_that_ignores_drain_is_cut_when_the_grace_passes_not_ended_as_if_whole() {
    let (handle, shared) = start(Server::new().workers(1).shutdown_grace(Duration::from_millis(200)));
    let mut s = connect(&handle);
    s.write_all(b"GET /hang HTTP/1.1\r\nHost: a\r\n\r\n").unwrap();
    let mut got = Vec::new();
    read_until(&mut s, &mut got, b"5\r\nfirst\r\n");
    handle.shutdown();
    got.extend(support::read_to_close(&mut s));
    assert!(got.ends_with(b"5\r\nfirst\r\n"), "{:?}", String::from_utf8_lossy(&got));
    handle.wait().unwrap();
    assert_eq!(shared.dropped.load(Ordering::SeqCst), 1);
}

#[test]
fn regression_a_pending_long_poll_does_not_hold_exit_past_the_grace() {
    // Issue 23: a pending long poll held every shutdown for the whole grace period and
    // got no answer. One that waits on `draining()` is answered at once; one that
    // waits forever is dropped when the grace runs out.
    let (handle, _) = start(Server::new().workers(1).shutdown_grace(Duration::from_millis(300)));
    let mut polite = connect(&handle);
    polite.write_all(b"GET /long-poll HTTP/1.1\r\nHost: a\r\n\r\n").unwrap();
    let mut stuck = connect(&handle);
    stuck.write_all(b"GET /forever HTTP/1.1\r\nHost: a\r\n\r\n").unwrap();
    // Both requests reach the service before shutdown (a request read after it
    // began would not be a long poll cut short).
    std::thread::sleep(Duration::from_millis(100));
    let started = Instant::now();
    handle.shutdown();
    let answer = support::parse_all(&support::read_to_close(&mut polite), false);
    assert_eq!(answer.len(), 1);
    assert_eq!((answer[0].status, answer[0].body_str()), (200, "drained, come back"));
    assert_eq!(answer[0].header("connection"), Some("close"));
    assert_eq!(support::read_to_close(&mut stuck), b"");
    handle.wait().unwrap();
    assert!(started.elapsed() < Duration::from_secs(5), "exit waited past the grace");
}

#[test]
fn a_client_that_closes_ends_a_quiet_stream() {
    let (handle, shared) = start(Server::new().workers(1));
    let mut s = connect(&handle);
    s.write_all(b"GET /hang HTTP/1.1\r\nHost: a\r\n\r\n").unwrap();
    read_until(&mut s, &mut Vec::new(), b"5\r\nfirst\r\n");
    drop(s);
    wait_for("the server kept a stream whose client left", || shared.dropped.load(Ordering::SeqCst) == 1);
    handle.shutdown();
    handle.wait().unwrap();
}
