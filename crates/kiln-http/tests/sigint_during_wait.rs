//! Regression: the signal listeners exist from `Server::serve` on, so a program that only
//! calls `ServerHandle::wait` (never `until_signal`) had its Ctrl-C swallowed and never
//! stopped. `wait` acts on the signals itself. In a file of its own: it raises SIGINT in
//! the test process.

mod support;

use std::io::Write;
use std::sync::mpsc;
use std::time::Duration;

use kiln_http::Server;
use nix::sys::signal::{Signal, raise};
use support::TestServer;

#[test]
fn sigint_during_wait_stops_the_server_gracefully() {
    let server = TestServer::start_with(Server::new().workers(1));
    let addr = server.addr();
    let mut client = server.connect();
    client.write_all(b"GET / HTTP/1.1\r\nHost: a\r\n\r\n").unwrap();
    assert_eq!(support::read_responses(&mut client, 1, false).len(), 1, "the server answers");

    // Raised before `wait` starts listening: the listener made at `serve` keeps it.
    raise(Signal::SIGINT).expect("raise SIGINT");
    let TestServer { handle, .. } = server;
    let (done, waited) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = done.send(handle.wait());
    });
    let outcome = waited.recv_timeout(Duration::from_secs(30)).expect("wait returned after SIGINT");
    outcome.expect("a graceful stop");
    assert!(std::net::TcpStream::connect(addr).is_err(), "no longer accepting");
}
