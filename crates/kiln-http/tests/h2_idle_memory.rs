//! What an idle HTTP/2 connection costs, measured as the growth of this process's
//! resident memory (its own binary, so that no other test allocates meanwhile).

mod h2_support;
mod support;

use std::io::Write;
use std::time::Duration;

use kiln_http::Limits;
use support::TestServer;

/// Connections opened; with the test's own sockets that is twice as many descriptors.
const CONNECTIONS: usize = 200;

#[test]
fn an_idle_h2_connection_after_a_request_costs_little() {
    let server = TestServer::start(Limits::default());
    let request = |id: u32| {
        h2_support::frame(
            h2_support::HEADERS,
            h2_support::END_STREAM | h2_support::END_HEADERS,
            id,
            &h2_support::get_block("GET", "/pong"),
        )
    };
    // Warm up the worker's pools with a first connection.
    let mut warm = h2_support::raw(server.addr());
    warm.write_all(&request(1)).unwrap();
    while h2_support::read_frame(&mut warm).is_some_and(|f| f.kind != h2_support::DATA) {}
    std::thread::sleep(Duration::from_millis(100));
    let before = support::resident_bytes();
    let idle: Vec<_> = (0..CONNECTIONS)
        .map(|_| {
            let mut s = h2_support::raw(server.addr());
            s.write_all(&request(1)).unwrap();
            while h2_support::read_frame(&mut s).is_some_and(|f| f.kind != h2_support::DATA) {}
            s
        })
        .collect();
    std::thread::sleep(Duration::from_millis(500));
    let per_connection = support::resident_bytes().saturating_sub(before) / CONNECTIONS;
    eprintln!("{per_connection} bytes per idle HTTP/2 connection");
    // About 26 KiB when HTTP/2 ran on the `h2` crate, whose write buffer, read codec buffer and HPACK
    // tables stayed for the connection's life; kiln's own engine hands its read and
    // write buffers back while idle and keeps only the HPACK table the peer filled.
    assert!(per_connection <= 16 * 1024, "{per_connection} bytes per idle HTTP/2 connection");
    drop(idle);
}
