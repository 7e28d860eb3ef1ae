//! Graceful shutdown: stop accepting, finish what was read, close idle connections.

mod support;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use kiln_http::{Limits, Server};
use support::{TestServer, parse_all, read_responses, read_to_close};

#[test]
fn shutdown_finishes_an_in_flight_request_and_closes_idle_connections() {
    let server = TestServer::start_with(Server::new().workers(2).limits(Limits::default()));
    let addr = server.addr();
    let mut idle = server.connect();
    idle.write_all(b"GET / HTTP/1.1\r\nHost: a\r\n\r\n").unwrap();
    let _ = support::read_responses(&mut idle, 1, false);

    let mut busy = server.connect();
    busy.write_all(b"GET /slow HTTP/1.1\r\nHost: a\r\n\r\n").unwrap();
    // Wait until the service has started on the slow request, then shut down.
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while !server.seen.targets().iter().any(|t| t == "/slow") {
        assert!(std::time::Instant::now() < deadline, "the slow request never started");
        std::thread::sleep(Duration::from_millis(5));
    }
    server.handle.shutdown();

    let resps = parse_all(&read_to_close(&mut busy), false);
    assert_eq!(resps.len(), 1);
    assert_eq!((resps[0].status, resps[0].body_str()), (200, "slow done"));
    assert_eq!(resps[0].header("connection"), Some("close"));
    assert!(read_to_close(&mut idle).is_empty(), "the idle connection was closed without an answer");

    let TestServer { handle, .. } = server;
    handle.wait().unwrap();
    assert!(TcpStream::connect(addr).is_err(), "no longer accepting");
}

#[test]
fn the_grace_period_bounds_a_request_that_never_finishes() {
    let server = TestServer::start_with(Server::new().workers(1).shutdown_grace(Duration::from_millis(50)));
    let mut busy = server.connect();
    // A head that never completes keeps the connection busy until the grace runs out.
    busy.write_all(b"GET /never HTTP/1.1\r\n").unwrap();
    std::thread::sleep(Duration::from_millis(20));
    let started = std::time::Instant::now();
    let TestServer { handle, .. } = server;
    handle.shutdown();
    handle.wait().unwrap();
    assert!(started.elapsed() < Duration::from_secs(5), "the worker waited past its grace period");
}

#[test]
fn shutdown_under_load_answers_every_request_already_sent_and_says_connection_close() {
    // Issue 13: with 100 keep-alive connections looping, SIGTERM lost the request each
    // had just written (EOF or reset), and no response said `Connection: close`.
    const CLIENTS: usize = 20;
    let server = TestServer::start_with(Server::new().workers(1));
    let answered = Arc::new(AtomicUsize::new(0));
    let clients: Vec<_> = (0..CLIENTS)
        .map(|_| {
            let mut s = server.connect();
            let answered = Arc::clone(&answered);
            std::thread::spawn(move || {
                // Bounded in count and time; ends at the first `Connection: close`.
                let until = Instant::now() + Duration::from_secs(20);
                for _ in 0..1_000_000 {
                    if Instant::now() > until {
                        return "never told to close";
                    }
                    if s.write_all(b"GET /loop HTTP/1.1\r\nHost: a\r\n\r\n").is_err() {
                        return "request lost: write failed";
                    }
                    match read_one(&mut s) {
                        None => return "request lost: closed without an answer",
                        Some(head) if head.contains("Connection: close") => return "closed",
                        Some(_) => answered.fetch_add(1, Ordering::Relaxed),
                    };
                }
                "never told to close"
            })
        })
        .collect();
    let deadline = Instant::now() + Duration::from_secs(10);
    while answered.load(Ordering::Relaxed) < 20 * CLIENTS && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    server.handle.shutdown();
    let outcomes: Vec<&str> = clients.into_iter().map(|c| c.join().unwrap()).collect();
    assert!(outcomes.iter().all(|&o| o == "closed"), "{outcomes:?}");
    let TestServer { handle, .. } = server;
    handle.wait().unwrap();
}

/// Reads one response head (the loop's responses are short and have a fixed body),
/// `None` if the connection ends first.
fn read_one(s: &mut TcpStream) -> Option<String> {
    let mut raw = Vec::new();
    let mut byte = [0u8; 1];
    while !raw.ends_with(b"\r\n\r\n") {
        match s.read(&mut byte) {
            Ok(1) => raw.push(byte[0]),
            _ => return None,
        }
    }
    let head = String::from_utf8(raw).unwrap();
    let len: usize = head.lines().find_map(|l| l.strip_prefix("Content-Length: ")).unwrap().parse().unwrap();
    let mut body = vec![0u8; len];
    s.read_exact(&mut body).ok()?;
    Some(head)
}

#[test]
fn a_request_sent_on_an_idle_connection_just_after_shutdown_begins_is_answered_with_close() {
    // Issue 13: idle keep-alive connections were dropped at exit, losing a request the
    // client sent as shutdown began; it is answered, and told to close.
    let server = TestServer::start_with(Server::new().workers(1));
    let mut s = server.connect();
    s.write_all(b"GET /first HTTP/1.1\r\nHost: a\r\n\r\n").unwrap();
    assert_eq!(read_responses(&mut s, 1, false)[0].header("connection"), None);
    server.handle.shutdown();
    std::thread::sleep(Duration::from_millis(100));
    s.write_all(b"GET /second HTTP/1.1\r\nHost: a\r\n\r\n").unwrap();
    let resps = parse_all(&read_to_close(&mut s), false);
    assert_eq!(resps.len(), 1);
    assert_eq!((resps[0].status, resps[0].header("connection")), (200, Some("close")));
    let TestServer { handle, .. } = server;
    handle.wait().unwrap();
}
