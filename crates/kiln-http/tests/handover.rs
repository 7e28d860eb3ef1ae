//! Restart without dropping: listeners inherited by systemd socket activation
//! (`LISTEN_FDS`), and handed over to a new process on SIGUSR2 under load.
//! The server under test is this test binary itself (see `handover_support`); the
//! same over HTTP/2 is in `handover_h2.rs`.

mod handover_support;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use handover_support::{Group, LIMIT, hand_over_twice, serve_if_asked, signal};
use nix::sys::signal::Signal;

/// Reads one response with a `Content-Length` body: its status and body, or `None`
/// when the connection closed before a complete response.
fn read_response(s: &mut TcpStream) -> Option<(u16, String, bool)> {
    let mut raw = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        if let Some(end) = raw.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&raw[..end]).to_ascii_lowercase();
            let len: usize = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(0);
            if raw.len() >= end + 4 + len {
                let status = head.get(9..12)?.parse().ok()?;
                let body = String::from_utf8_lossy(&raw[end + 4..end + 4 + len]).into_owned();
                return Some((status, body, head.contains("connection: close")));
            }
        }
        match s.read(&mut buf) {
            Ok(0) | Err(_) => return None,
            Ok(n) => raw.extend_from_slice(&buf[..n]),
        }
    }
}

#[derive(Default)]
struct Tally {
    ok: AtomicU64,
    failed: AtomicU64,
    /// Requests sent on a kept-alive connection that the server closed as they were
    /// sent, with no byte of an answer: sent again on a new connection, as RFC 9112
    /// §9.3.1 lets a client do for an idempotent request.
    retried: AtomicU64,
    pids: Mutex<std::collections::BTreeSet<String>>,
    errors: Mutex<Vec<String>>,
}

impl Tally {
    fn fail(&self, why: String) {
        self.failed.fetch_add(1, Ordering::Relaxed);
        self.errors.lock().unwrap().push(why);
    }

    fn answered(&self, status: u16, pid: String) {
        if status == 200 {
            self.ok.fetch_add(1, Ordering::Relaxed);
            self.pids.lock().unwrap().insert(pid);
        } else {
            self.fail(format!("status {status}"));
        }
    }
}

fn connect(addr: SocketAddr) -> std::io::Result<TcpStream> {
    let s = TcpStream::connect_timeout(&addr, Duration::from_secs(10))?;
    s.set_read_timeout(Some(Duration::from_secs(10)))?;
    s.set_nodelay(true)?;
    Ok(s)
}

/// One client: a new connection per request (`keep_alive == false`, no retry ever), or
/// one kept-alive connection, renewed when the server closes it.
fn client(addr: SocketAddr, keep_alive: bool, stop: &AtomicBool, tally: &Tally) {
    let deadline = Instant::now() + LIMIT;
    let mut conn: Option<TcpStream> = None;
    while !stop.load(Ordering::Relaxed) && Instant::now() < deadline {
        if !keep_alive {
            let mut s = match connect(addr) {
                Ok(s) => s,
                Err(e) => return tally.fail(format!("connect: {e}")),
            };
            let sent = s.write_all(b"GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n");
            match (sent, read_response(&mut s)) {
                (Ok(()), Some((status, pid, _))) => tally.answered(status, pid),
                (sent, _) => tally.fail(format!("new connection, no answer (send: {sent:?})")),
            }
            continue;
        }
        let reused = conn.is_some();
        let mut s = match conn.take().map_or_else(|| connect(addr), Ok) {
            Ok(s) => s,
            Err(e) => return tally.fail(format!("connect: {e}")),
        };
        let sent = s.write_all(b"GET / HTTP/1.1\r\nHost: a\r\n\r\n");
        match (sent, read_response(&mut s)) {
            (Ok(()), Some((status, pid, close))) => {
                tally.answered(status, pid);
                if !close {
                    conn = Some(s);
                }
            }
            _ if reused => {
                tally.retried.fetch_add(1, Ordering::Relaxed);
            }
            (sent, _) => tally.fail(format!("kept-alive connection, first request unanswered (send: {sent:?})")),
        }
    }
}

#[test]
fn handover_on_sigusr2_twice_under_100_connections_loses_no_request() {
    if serve_if_asked() {
        return;
    }
    let group = Group::start("handover_on_sigusr2_twice_under_100_connections_loses_no_request", None);
    let addr = group.addr();
    let stop = Arc::new(AtomicBool::new(false));
    let tally = Arc::new(Tally::default());
    let clients: Vec<_> = (0..100)
        .map(|i| {
            let (stop, tally) = (Arc::clone(&stop), Arc::clone(&tally));
            std::thread::spawn(move || client(addr, i % 2 == 0, &stop, &tally))
        })
        .collect();
    let pid = hand_over_twice(&group, &tally.ok);
    stop.store(true, Ordering::Relaxed);
    for c in clients {
        c.join().unwrap();
    }
    signal(Signal::SIGTERM, pid);

    let failed = tally.failed.load(Ordering::Relaxed);
    let errors = tally.errors.lock().unwrap();
    let pids = tally.pids.lock().unwrap();
    eprintln!(
        "hand-over under load: {} answered, {failed} failed, {} kept-alive requests sent again, served by pids {pids:?}",
        tally.ok.load(Ordering::Relaxed),
        tally.retried.load(Ordering::Relaxed),
    );
    assert_eq!(failed, 0, "failed requests: {:?}", &errors[..errors.len().min(10)]);
    assert_eq!(pids.len(), 3, "three processes served in turn: {pids:?}");
}

#[test]
fn listeners_passed_by_socket_activation_are_adopted_with_their_queue() {
    if serve_if_asked() {
        return;
    }
    // The socket systemd would bind: here, bound by the test and passed as fd 3.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let socket = socket2::Socket::from(listener);
    socket.set_cloexec(false).unwrap();
    use std::os::fd::AsRawFd;
    // A connection waiting in the queue before the server even starts.
    let mut early = connect(addr).unwrap();
    early.write_all(b"GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n").unwrap();

    let script = format!("export LISTEN_PID=$$ LISTEN_FDS=1; exec \"$0\" \"$@\" 3<&{}", socket.as_raw_fd());
    let group = Group::start("listeners_passed_by_socket_activation_are_adopted_with_their_queue", Some(script));
    drop(socket);
    let said = group.addr();
    assert_eq!(said, addr, "the server reports the inherited socket's address, not the one it was told");
    let (status, pid, _) = read_response(&mut early).expect("the queued connection was answered");
    assert_eq!((status, pid), (200, group.first.id().to_string()));
    let mut late = connect(addr).unwrap();
    late.write_all(b"GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n").unwrap();
    assert_eq!(read_response(&mut late).map(|r| r.0), Some(200));
    signal(Signal::SIGTERM, group.first.id());
}
