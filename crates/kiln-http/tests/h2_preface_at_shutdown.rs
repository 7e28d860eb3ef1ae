//! Regression test for a bug the HTTP/2 hand-over test found: an h2c connection
//! accepted but silent when shutdown began was handed to HTTP/1.1 for its last call,
//! so a preface arriving within that call was answered `HTTP/1.1 400`, which the h2c
//! client read as a broken frame (FRAME_SIZE_ERROR) and its requests were lost. The
//! preface must still be answered in HTTP/2: SETTINGS, then a graceful GOAWAY.

mod h2_support;
mod support;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use h2_support::{CLIENT_TIMEOUT, GOAWAY, NO_ERROR, SETTINGS, opening, until_goaway};
use kiln_http::Limits;
use support::TestServer;

#[test]
fn a_preface_sent_in_shutdown_s_last_call_is_answered_in_http2_not_http1() {
    let server = TestServer::start(Limits::default());
    let mut s = TcpStream::connect(server.addr()).unwrap();
    s.set_read_timeout(Some(CLIENT_TIMEOUT)).unwrap();
    // Accepted and silent, then shutdown; the preface comes within the last call (1 s).
    std::thread::sleep(Duration::from_millis(100));
    let TestServer { handle, .. } = server;
    handle.shutdown();
    std::thread::sleep(Duration::from_millis(200));
    s.write_all(&opening()).unwrap();

    let mut head = [0u8; 9];
    s.read_exact(&mut head).expect("an answer, not a close");
    assert!(!head.starts_with(b"HTTP/"), "answered in HTTP/1.1: {:?}", String::from_utf8_lossy(&head));
    assert_eq!(head[3], SETTINGS, "HTTP/2's SETTINGS first: {head:?}");
    let length = usize::from(head[0]) << 16 | usize::from(head[1]) << 8 | usize::from(head[2]);
    s.read_exact(&mut vec![0; length]).unwrap();
    let goaway = until_goaway(&mut s).expect("a GOAWAY before the close");
    assert_eq!((goaway.kind, goaway.code()), (GOAWAY, NO_ERROR));
    handle.wait().unwrap();
}
