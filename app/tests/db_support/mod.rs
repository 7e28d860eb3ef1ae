//! Shared by the database tests of the real `kiln-demo` binary: spawning it, a
//! minimal HTTP client, and throwaway PostgreSQL clusters.

// Each test binary uses only some of these.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How long one request may take before the test calls it a hang.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(15);

/// A running `kiln-demo`, killed when dropped.
pub(crate) struct Server {
    pub(crate) child: Child,
    pub(crate) addr: SocketAddr,
}

impl Server {
    pub(crate) fn start(database: &str, extra: &[&str]) -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_kiln-demo"))
            .args(["--listen", "127.0.0.1:0", "--workers", "2", "--database", database])
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn kiln-demo");
        let stdout = child.stdout.take().expect("stdout");
        let mut lines = BufReader::new(stdout).lines();
        let addr = loop {
            let line = match lines.next() {
                Some(Ok(line)) => line,
                _ => {
                    let status = child.wait().expect("wait");
                    panic!("kiln-demo exited before listening: {status}");
                }
            };
            if let Some(addr) = line.split("listening on http://").nth(1) {
                break addr.trim().parse().expect("address");
            }
        };
        // Keep draining stdout so the server never blocks on a full pipe.
        std::thread::spawn(move || lines.for_each(drop));
        Server { child, addr }
    }

    pub(crate) fn get(&self, target: &str) -> Reply {
        get(self.addr, target).unwrap_or_else(|e| panic!("GET {target}: {e}"))
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A whole response.
#[derive(Debug)]
pub(crate) struct Reply {
    pub(crate) status: u16,
    pub(crate) head: String,
    pub(crate) body: Vec<u8>,
}

impl Reply {
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.head.lines().skip(1).find_map(|l| {
            let (n, v) = l.split_once(':')?;
            n.eq_ignore_ascii_case(name).then(|| v.trim())
        })
    }

    pub(crate) fn text(&self) -> &str {
        std::str::from_utf8(&self.body).expect("UTF-8 body")
    }

    pub(crate) fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| panic!("bad JSON ({e}): {}", self.text()))
    }
}

/// `GET target` on a fresh connection that closes after the response.
pub(crate) fn get(addr: SocketAddr, target: &str) -> std::io::Result<Reply> {
    let mut stream = TcpStream::connect_timeout(&addr, REQUEST_TIMEOUT)?;
    stream.set_read_timeout(Some(REQUEST_TIMEOUT))?;
    stream.set_write_timeout(Some(REQUEST_TIMEOUT))?;
    write!(stream, "GET {target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")?;
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw)?;
    let split = raw.windows(4).position(|w| w == b"\r\n\r\n").ok_or_else(|| std::io::Error::other("no head"))?;
    let head = String::from_utf8_lossy(&raw[..split]).into_owned();
    let status = head.split(' ').nth(1).and_then(|s| s.parse().ok()).ok_or_else(|| std::io::Error::other("status"))?;
    Ok(Reply { status, head, body: raw[split + 4..].to_vec() })
}

/// Calls `f` every 100 ms until it returns `Some`, for at most `deadline`.
pub(crate) fn poll_until<T>(deadline: Duration, mut f: impl FnMut() -> Option<T>) -> Option<T> {
    let end = Instant::now() + deadline;
    while Instant::now() < end {
        if let Some(v) = f() {
            return Some(v);
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    None
}

/// A fresh directory under the system temp dir, removed on drop.
pub(crate) struct TempDir(pub(crate) PathBuf);

impl TempDir {
    pub(crate) fn new(name: &str) -> TempDir {
        let dir = std::env::temp_dir().join(format!("kiln-demo-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("temp dir");
        TempDir(dir)
    }

    pub(crate) fn sqlite_url(&self) -> String {
        format!("sqlite://{}", self.0.join("kiln.sqlite").display())
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// `KILN_PG_URL`, or `None` after saying loudly on stderr that `test` was skipped.
pub(crate) fn pg_url(test: &str) -> Option<String> {
    match std::env::var("KILN_PG_URL") {
        Ok(url) if !url.is_empty() => Some(url),
        _ => {
            eprintln!(
                "\n!!! SKIPPED {test}: KILN_PG_URL is not set, so this PostgreSQL test did NOT run.\n\
                 !!! Start a throwaway server with `eval \"$(scripts/pg start)\"` and run again.\n"
            );
            None
        }
    }
}

/// A PostgreSQL cluster of the test's own (`scripts/pg`), removed on drop.
pub(crate) struct Cluster {
    pub(crate) dir: String,
    pub(crate) url: String,
}

impl Cluster {
    fn script() -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../scripts/pg")
    }

    pub(crate) fn start() -> Cluster {
        let out = Command::new(Self::script()).arg("start").output().expect("run scripts/pg start");
        assert!(out.status.success(), "scripts/pg start failed: {}", String::from_utf8_lossy(&out.stderr));
        let text = String::from_utf8(out.stdout).expect("utf-8");
        let var = |name: &str| {
            text.lines()
                .find_map(|l| l.strip_prefix(&format!("export {name}=")).map(str::to_owned))
                .unwrap_or_else(|| panic!("no {name} in {text}"))
        };
        Cluster { dir: var("KILN_PG_DIR"), url: var("KILN_PG_URL") }
    }

    pub(crate) fn run(&self, command: &str) {
        let status = Command::new(Self::script()).args([command, &self.dir]).status().expect("run scripts/pg");
        assert!(status.success(), "scripts/pg {command} failed");
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = Command::new(Self::script()).args(["stop", &self.dir]).status();
    }
}
