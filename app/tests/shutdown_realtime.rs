//! Shutdown of the real demo process with a thousand WebSockets and a thousand event
//! streams open: on SIGTERM, once the drain delay has passed, every WebSocket gets a
//! close frame with 1001 (going away) and every event stream its last chunk, and the
//! process exits on its own, long before the shutdown grace; nothing hangs.

mod site_support;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use kiln_test_support::{Server, TempDir, poll_until};
use site_support::Visitor;

/// Of each kind.
const SOCKETS: usize = 1000;
/// The grace a shutdown that waited for the sockets would show; the test allows half.
const GRACE_SECONDS: u64 = 120;
/// How long a client waits for anything before the test fails instead of hanging.
const CLIENT_TIMEOUT: Duration = Duration::from_secs(30);

/// Both ends of every socket are in this machine's processes: raise the open-file
/// limit to its hard limit (the server, started after, inherits it) and check it
/// allows the test.
fn raise_open_file_limit(needed: u64) {
    use nix::sys::resource::{Resource, getrlimit, setrlimit};
    let (soft, hard) = getrlimit(Resource::RLIMIT_NOFILE).expect("getrlimit");
    if soft < hard {
        setrlimit(Resource::RLIMIT_NOFILE, hard, hard).expect("setrlimit");
    }
    assert!(hard >= needed, "the open-file limit ({hard}) is below the {needed} this test needs");
}

fn connect(addr: SocketAddr, request: &str) -> (TcpStream, String) {
    let mut s = TcpStream::connect_timeout(&addr, CLIENT_TIMEOUT).expect("connect");
    s.set_read_timeout(Some(CLIENT_TIMEOUT)).unwrap();
    s.write_all(request.as_bytes()).unwrap();
    let mut head = Vec::new();
    let mut byte = [0u8];
    while !head.ends_with(b"\r\n\r\n") {
        assert_eq!(s.read(&mut byte).expect("a head"), 1, "closed: {:?}", String::from_utf8_lossy(&head));
        head.push(byte[0]);
    }
    (s, String::from_utf8(head).unwrap())
}

fn websocket(addr: SocketAddr) -> TcpStream {
    let (s, head) = connect(
        addr,
        "GET /ws/echo HTTP/1.1\r\nHost: a\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
         Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n",
    );
    assert!(head.starts_with("HTTP/1.1 101 "), "{head}");
    s
}

fn event_stream(addr: SocketAddr) -> TcpStream {
    let (s, head) = connect(addr, "GET /pages/tour/live HTTP/1.1\r\nHost: a\r\n\r\n");
    assert!(head.starts_with("HTTP/1.1 200 ") && head.contains("text/event-stream"), "{head}");
    s
}

/// Sends one masked frame (RFC 6455 §5.2).
fn send_frame(s: &mut TcpStream, opcode: u8, payload: &[u8]) {
    assert!(payload.len() < 126);
    let mask = [0x1f, 0x2e, 0x3d, 0x4c];
    let mut frame = vec![0x80 | opcode, 0x80 | payload.len() as u8];
    frame.extend_from_slice(&mask);
    frame.extend(payload.iter().zip(mask.iter().cycle()).map(|(b, m)| b ^ m));
    s.write_all(&frame).unwrap();
}

/// Reads one frame from the server (unmasked, short): (opcode, payload).
fn read_frame(s: &mut TcpStream) -> (u8, Vec<u8>) {
    let mut head = [0u8; 2];
    s.read_exact(&mut head).expect("a frame");
    let mut len = usize::from(head[1] & 0x7f);
    if len == 126 {
        let mut ext = [0u8; 2];
        s.read_exact(&mut ext).unwrap();
        len = usize::from(u16::from_be_bytes(ext));
    }
    let mut payload = vec![0; len];
    s.read_exact(&mut payload).unwrap();
    (head[0] & 0x0f, payload)
}

/// Reads until the server closes; a reset counts as a close.
fn read_to_close(s: &mut TcpStream) -> Vec<u8> {
    let mut rest = Vec::new();
    match s.read_to_end(&mut rest) {
        Ok(_) => rest,
        Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => rest,
        Err(e) => panic!("waiting for the close after {:?}: {e}", String::from_utf8_lossy(&rest)),
    }
}

#[test]
fn a_thousand_websockets_and_a_thousand_event_streams_end_cleanly_on_sigterm_and_the_process_exits() {
    raise_open_file_limit(2 * 2 * SOCKETS as u64 + 200);
    let dir = TempDir::new("shutdown-realtime");
    let grace = GRACE_SECONDS.to_string();
    let server: Server = site_support::start(&dir.sqlite_url(), &["--drain-delay", "0.2", "--shutdown-grace", &grace]);
    let addr = server.addr;
    let mut sockets: Vec<TcpStream> = (0..SOCKETS).map(|_| websocket(addr)).collect();
    let mut streams: Vec<TcpStream> = (0..SOCKETS).map(|_| event_stream(addr)).collect();

    // All of them are live: an echo on each socket, a comment's event on each stream.
    for s in &mut sockets {
        send_frame(s, 0x1, b"alive?");
        assert_eq!(read_frame(s), (0x1, b"alive?".to_vec()));
    }
    let mut visitor = Visitor { addr, cookies: Default::default() };
    let token = visitor.token("/pages/tour");
    let fields = [("csrf_token", token.as_str()), ("author", "Shutdown"), ("body", "to every stream")];
    assert_eq!(visitor.post("/pages/tour/comments", &fields).status, 303);
    for s in &mut streams {
        let mut got = Vec::new();
        let mut buf = [0u8; 4096];
        while !String::from_utf8_lossy(&got).contains("to every stream") {
            let n = s.read(&mut buf).expect("the comment's event");
            assert!(n > 0, "closed before the event");
            got.extend_from_slice(&buf[..n]);
        }
    }

    let started = Instant::now();
    let mut child = server;
    let pid = nix::unistd::Pid::from_raw(child.child.id() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
    for s in &mut sockets {
        // Pings of the heartbeat may come first.
        let (opcode, payload) = std::iter::repeat_with(|| read_frame(s)).find(|f| f.0 != 0x9).unwrap();
        assert_eq!(opcode, 0x8, "a close frame");
        assert_eq!(u16::from_be_bytes([payload[0], payload[1]]), 1001, "going away");
        send_frame(s, 0x8, &payload[..2]);
        assert!(read_to_close(s).is_empty(), "nothing after the close frame");
    }
    for s in &mut streams {
        let rest = read_to_close(s);
        // The last chunk: the stream was ended, not cut.
        assert!(rest.ends_with(b"0\r\n\r\n"), "{:?}", String::from_utf8_lossy(&rest));
    }
    let exited = poll_until(Duration::from_secs(GRACE_SECONDS / 2), || child.child.try_wait().unwrap());
    let status = exited.unwrap_or_else(|| panic!("still running {:?} after SIGTERM", started.elapsed()));
    assert!(status.success(), "{status}");
    eprintln!(
        "{SOCKETS} WebSockets and {SOCKETS} event streams closed, process exited {:?} after SIGTERM",
        started.elapsed()
    );
}
