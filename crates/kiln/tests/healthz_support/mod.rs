//! What the two SIGTERM tests (`healthz.rs`, `sigterm_right_after_first_answer.rs`)
//! share: each is alone in its binary, as it signals its own process.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

/// `/healthz`'s status, or `None` when the server does not answer.
pub(crate) fn status(addr: SocketAddr) -> Option<u16> {
    let mut s = TcpStream::connect(addr).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(10))).ok()?;
    s.write_all(b"GET /healthz HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n").ok()?;
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    std::str::from_utf8(out.get(9..12)?).ok()?.parse().ok()
}

/// Waits until `done` holds, failing the test after 20 s.
pub(crate) fn poll(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}
