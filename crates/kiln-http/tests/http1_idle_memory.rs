//! What an idle connection costs, measured as the growth of this process's resident
//! memory (its own binary, so that no other test allocates meanwhile).

mod support;

use std::time::Duration;

use kiln_http::Limits;
use support::TestServer;

/// Connections opened; with the test's own sockets that is twice as many descriptors.
const CONNECTIONS: usize = 400;

#[test]
fn a_connection_that_never_sends_a_byte_holds_no_buffers() {
    // Issue 13: right after accept the socket looks readable for a moment; the worker
    // took a connection's 8 KiB of buffers then and kept them while the read waited,
    // so a connection that never sent a byte cost 9.9 KiB.
    let server = TestServer::start(Limits::default());
    let mut warm = server.connect();
    std::io::Write::write_all(&mut warm, b"GET / HTTP/1.1\r\nHost: a\r\n\r\n").unwrap();
    support::read_responses(&mut warm, 1, false);
    std::thread::sleep(Duration::from_millis(100));
    let before = support::resident_bytes();
    let idle: Vec<_> = (0..CONNECTIONS).map(|_| server.connect()).collect();
    // Let the worker accept them all and wait on each.
    std::thread::sleep(Duration::from_millis(500));
    let per_connection = support::resident_bytes().saturating_sub(before) / CONNECTIONS;
    assert!(per_connection <= 4 * 1024, "{per_connection} bytes per never-used connection");
    drop(idle);
}
