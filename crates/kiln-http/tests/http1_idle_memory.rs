//! What an idle connection costs, measured as the growth of this process's resident
//! memory (its own binary, and one test at a time, so that nothing else allocates
//! meanwhile).

mod support;

use std::io::Read;
use std::sync::Mutex;
use std::time::Duration;

use kiln_http::Limits;
use support::TestServer;

/// Connections opened; with the test's own sockets that is twice as many descriptors.
const CONNECTIONS: usize = 400;

/// Held by each test while it measures: the tests of one binary run in parallel.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

#[test]
fn a_connection_that_never_sends_a_byte_holds_no_buffers() {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
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

#[test]
fn regression_a_quiet_stream_kept_its_connections_whole_task_and_buffers() {
    // Issue 23: a quiet SSE subscriber cost 4.5 KB where an idle WebSocket costs 1.7:
    // it kept the HTTP connection's task, sized for HTTP's largest state (~2.6 KB), and
    // its box of buffers. Now the stream goes on in a task of its own and gives the
    // buffers back to the worker's pool between chunks. (Here, a debug build with a
    // one-chunk stream: 2.3 KB before, 1.3 KB after.)
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let server = TestServer::start(Limits::default());
    let open = |n: usize| -> Vec<_> {
        (0..n)
            .map(|_| {
                let mut s = server.connect();
                std::io::Write::write_all(&mut s, b"GET /quiet HTTP/1.1\r\nHost: a\r\n\r\n").unwrap();
                let mut got = Vec::new();
                let mut byte = [0u8; 256];
                while !got.windows(5).any(|w| w == b"first") {
                    let n = s.read(&mut byte).unwrap();
                    assert!(n > 0, "the stream ended early: {:?}", String::from_utf8_lossy(&got));
                    got.extend_from_slice(&byte[..n]);
                }
                s
            })
            .collect()
    };
    // The worker's buffer pool and the allocator's arenas warmed up first.
    drop(open(CONNECTIONS / 4));
    std::thread::sleep(Duration::from_millis(300));
    let before = support::resident_bytes();
    let quiet = open(CONNECTIONS);
    std::thread::sleep(Duration::from_millis(500));
    let per_connection = support::resident_bytes().saturating_sub(before) / CONNECTIONS;
    assert!(per_connection <= 1792, "{per_connection} bytes per quiet stream");
    drop(quiet);
}
