//! Graceful shutdown: stop accepting, finish what was read, close idle connections.

mod support;

use std::io::Write;
use std::net::TcpStream;
use std::time::Duration;

use kiln_http::{Limits, Server};
use support::{TestServer, parse_all, read_to_close};

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
