//! What the hand-over tests share: the server role (the test binary itself, started
//! again with `KILN_TEST_ROLE` set: the hand-over starts its own executable with the
//! same arguments and environment, so the new process runs the same test in the same
//! role), its process group, and signals.

#![allow(dead_code, unreachable_pub)]

use std::io::{BufRead, BufReader, Read};
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use kiln_http::{Server, service_fn};
use nix::sys::signal::{Signal, kill, killpg};
use nix::unistd::Pid;

pub const ROLE: &str = "KILN_TEST_ROLE";
/// What the server prints once it serves, with its address.
pub const LISTENING: &str = "kiln-test-listening ";
/// Every wait in these tests ends by this, so that a broken hand-over fails rather than hangs.
pub const LIMIT: Duration = Duration::from_secs(60);

/// The server role: one pid-reporting service, SIGUSR2 hand-over, until SIGTERM.
pub fn serve_if_asked() -> bool {
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
pub struct Group {
    pub first: Child,
    lines: mpsc::Receiver<String>,
}

impl Group {
    pub fn start(test: &str, shell_prefix: Option<String>) -> Group {
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
    pub fn line(&self, needle: &str) -> String {
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

    pub fn addr(&self) -> SocketAddr {
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

pub fn signal(sig: Signal, pid: u32) {
    kill(Pid::from_raw(pid as i32), sig).unwrap();
}

pub fn gone(pid: u32) -> bool {
    // A zombie still has a /proc entry; its state says it has exited.
    std::fs::read_to_string(format!("/proc/{pid}/stat")).map_or(true, |s| s.contains(") Z "))
}

/// Waits, up to [`LIMIT`], until `done`; `what` names it in the failure.
pub fn wait_for(what: &str, done: &dyn Fn() -> bool) {
    let deadline = Instant::now() + LIMIT;
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Under the load counted in `ok`: waits for it to start, then hands the listeners over
/// twice (SIGUSR2), each time waiting for the old process to exit and for 500 more
/// answers. Returns the pid of the process serving at the end.
pub fn hand_over_twice(group: &Group, ok: &AtomicU64) -> u32 {
    let served = |n: u64| ok.load(Ordering::Relaxed) >= n;
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
        let after = ok.load(Ordering::Relaxed) + 500;
        wait_for(&format!("requests served after hand-over {round}"), &|| served(after));
    }
    pid
}
