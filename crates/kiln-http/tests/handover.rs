//! Restart without dropping: listeners inherited by systemd socket activation
//! (`LISTEN_FDS`), and handed over to a new process on SIGUSR2 under load.
//!
//! The server under test is this test binary itself, started again with
//! `KILN_TEST_ROLE` set: the hand-over starts its own executable with the same arguments
//! and environment, so the new process runs the same test in the same role.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

use kiln_http::{Server, service_fn};
use nix::sys::signal::{Signal, kill, killpg};
use nix::unistd::Pid;

const ROLE: &str = "KILN_TEST_ROLE";
/// What the server prints once it serves, with its address.
const LISTENING: &str = "kiln-test-listening ";
/// Every wait in these tests ends by this, so that a broken hand-over fails rather than hangs.
const LIMIT: Duration = Duration::from_secs(60);

/// The server role: one pid-reporting service, SIGUSR2 hand-over, until SIGTERM.
fn serve_if_asked() -> bool {
    if std::env::var(ROLE).is_err() {
        return false;
    }
    // The server's events (`process N took over the listeners; ...`) on stderr, bare.
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .without_time()
        .with_level(false)
        .with_target(false)
        .with_ansi(false)
        .init();
    let handle = Server::new()
        .workers(2)
        .listen("127.0.0.1:0")
        .serve(|_| {
            service_fn(|_req, res| {
                res.set_content_type("text/plain");
                res.body_mut().extend_from_slice(std::process::id().to_string().as_bytes());
            })
        })
        .expect("serve");
    println!("{LISTENING}{}", handle.local_addr());
    handle.run_until_signal().expect("run");
    std::process::exit(0);
}

/// The server process and its descendants, in their own process group, killed at the end
/// whatever happens.
struct Group {
    first: Child,
    lines: mpsc::Receiver<String>,
}

impl Group {
    fn start(test: &str, shell_prefix: Option<String>) -> Group {
        let exe = std::env::current_exe().unwrap();
        let args = ["--exact", test, "--nocapture", "--test-threads=1"];
        let mut cmd = match shell_prefix {
            Some(script) => {
                let mut c = Command::new("bash");
                c.arg("-c").arg(script).arg(&exe).args(args);
                c
            }
            None => {
                let mut c = Command::new(&exe);
                c.args(args);
                c
            }
        };
        use std::os::unix::process::CommandExt;
        let mut first =
            cmd.env(ROLE, "server").process_group(0).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
        let (tx, lines) = mpsc::channel();
        // Both streams are read to the end, by every process of the group that inherits
        // them, so that none of them ever blocks (or dies) writing.
        let out = first.stdout.take().unwrap();
        let err = first.stderr.take().unwrap();
        for stream in [Box::new(out) as Box<dyn Read + Send>, Box::new(err)] {
            let tx = tx.clone();
            std::thread::spawn(move || {
                for line in BufReader::new(stream).lines().map_while(Result::ok) {
                    let _ = tx.send(line);
                }
            });
        }
        Group { first, lines }
    }

    /// Waits for a line containing `needle`; returns it.
    fn line(&self, needle: &str) -> String {
        let deadline = Instant::now() + LIMIT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) if line.contains(needle) => return line,
                Ok(_) => {}
                Err(_) => panic!("no line with {needle:?} from the server"),
            }
        }
    }

    fn addr(&self) -> SocketAddr {
        self.line(LISTENING).split(LISTENING).nth(1).unwrap().trim().parse().unwrap()
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        // The whole group: the first process and every one that took over from it.
        let _ = killpg(Pid::from_raw(self.first.id() as i32), Signal::SIGKILL);
        let _ = self.first.wait();
    }
}

fn signal(sig: Signal, pid: u32) {
    kill(Pid::from_raw(pid as i32), sig).unwrap();
}

fn gone(pid: u32) -> bool {
    // A zombie still has a /proc entry; its state says it has exited.
    std::fs::read_to_string(format!("/proc/{pid}/stat")).map_or(true, |s| s.contains(") Z "))
}

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
    let wait_for = |what: &str, done: &dyn Fn() -> bool| {
        let deadline = Instant::now() + LIMIT;
        while !done() {
            assert!(Instant::now() < deadline, "timed out waiting for {what}");
            std::thread::sleep(Duration::from_millis(10));
        }
    };
    let served = |n: u64| tally.ok.load(Ordering::Relaxed) >= n;
    wait_for("the load to start", &|| served(500));

    let mut pid = group.first.id();
    for round in 1..=2 {
        signal(Signal::SIGUSR2, pid);
        let line = group.line("took over the listeners");
        let mut words = line.split_whitespace().skip_while(|w| *w != "process");
        let next: u32 = words.nth(1).unwrap().parse().unwrap();
        let old = pid;
        wait_for("the old process to exit", &|| gone(old));
        pid = next;
        let after = tally.ok.load(Ordering::Relaxed) + 500;
        wait_for(&format!("requests served after hand-over {round}"), &|| served(after));
    }
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
