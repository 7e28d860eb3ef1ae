//! A test server with a service that exercises every body kind, and a raw client
//! that reads responses off the socket byte by byte, trusting nothing.

#![allow(dead_code, unreachable_pub)]

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use kiln_http::{BodyMode, Bytes, Limits, Request, Response, Server, ServerHandle, Service, StatusCode};

/// How long a test client waits on a read before the test fails instead of hanging.
pub const CLIENT_TIMEOUT: Duration = Duration::from_secs(10);

/// Records every request target the service was called for.
#[derive(Clone, Default)]
pub struct Seen(Arc<Mutex<Vec<String>>>);

impl Seen {
    pub fn targets(&self) -> Vec<String> {
        self.0.lock().unwrap().clone()
    }
}

struct TestService {
    seen: Seen,
    file: Option<std::path::PathBuf>,
}

/// The limit of the streamed routes: above the global default of 1 MiB.
pub const UPLOAD_LIMIT: u64 = 4 * 1024 * 1024;

impl Service for TestService {
    /// `/upload…` routes stream their bodies, up to [`UPLOAD_LIMIT`].
    fn body_mode(&self, req: &Request<'_>) -> BodyMode {
        match req.path().starts_with("/upload") {
            true => BodyMode::Stream { max_bytes: UPLOAD_LIMIT },
            false => BodyMode::Buffer,
        }
    }

    async fn call<'a>(&'a self, req: Request<'a>, res: &'a mut Response) {
        self.seen.0.lock().unwrap().push(req.target().to_owned());
        res.set_content_type("text/plain");
        match req.path() {
            // Reads the streamed body to its end: its length and a checksum.
            "/upload" => {
                let mut body = req.body_stream().expect("a streamed route gets a body stream");
                let (mut len, mut sum) = (0u64, 0u64);
                while let Ok(Some(chunk)) = body.chunk().await {
                    len += chunk.len() as u64;
                    sum = chunk.iter().fold(sum, |s, &b| s.wrapping_mul(31).wrapping_add(u64::from(b)));
                }
                res.body_mut().extend_from_slice(format!("{len} {sum}").as_bytes());
            }
            // Answers without reading the body.
            "/upload-ignore" => res.set_body_static(b"ignored"),
            // Takes the first chunk, then stalls: answers with how much the engine had
            // taken from the client meanwhile.
            "/upload-stall" => {
                let mut body = req.body_stream().expect("a streamed route gets a body stream");
                let _ = body.chunk().await;
                tokio::time::sleep(Duration::from_millis(500)).await;
                res.body_mut().extend_from_slice(body.received().to_string().as_bytes());
            }
            "/echo" => res.body_mut().extend_from_slice(req.body()),
            "/panic" => panic!("handler panicked on purpose"),
            "/slow" => {
                tokio::time::sleep(Duration::from_millis(300)).await;
                res.set_body_static(b"slow done");
            }
            "/big" => res.body_mut().resize(256 * 1024, b'x'),
            // `/sized?N`: a body of N bytes built in memory.
            "/sized" => {
                let n = req.query().and_then(|q| q.parse().ok()).unwrap_or(0);
                res.body_mut().resize(n, b'x');
            }
            // `/sendfile?PATH`: the whole file at PATH, with sendfile(2).
            "/sendfile" => {
                let file = std::fs::File::open(req.query().unwrap()).unwrap();
                let len = file.metadata().unwrap().len();
                res.set_body_file(file, 0, len);
            }
            "/close" => {
                res.set_close();
                res.set_body_static(b"bye");
            }
            "/stream" => {
                let chunks = ["one,", "two,", "three"].map(|s| Ok(Bytes::from_static(s.as_bytes())));
                res.set_body_stream(Box::pin(Chunks(chunks.into_iter().collect())));
            }
            "/quiet" => res.set_body_stream(Box::pin(Quiet { first: true, drain: kiln_http::draining() })),
            "/file" => {
                let file = std::fs::File::open(self.file.as_ref().unwrap()).unwrap();
                res.set_body_file(file, 2, 10);
            }
            "/no-content" => res.set_status(StatusCode::NO_CONTENT),
            "/peer" => res.body_mut().extend_from_slice(req.peer_addr().to_string().as_bytes()),
            _ => {
                let line = format!("{} {} {}", req.method(), req.target(), req.body().len());
                res.body_mut().extend_from_slice(line.as_bytes());
            }
        }
    }
}

/// A stream over a fixed list of chunks.
struct Chunks(std::collections::VecDeque<std::io::Result<Bytes>>);

impl futures_core::Stream for Chunks {
    type Item = std::io::Result<Bytes>;
    fn poll_next(
        mut self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Self::Item>> {
        std::task::Poll::Ready(self.0.pop_front())
    }
}

/// An event stream between events: one chunk, then nothing until shutdown, when it
/// ends.
struct Quiet {
    first: bool,
    drain: kiln_http::Drain,
}

impl futures_core::Stream for Quiet {
    type Item = std::io::Result<Bytes>;
    fn poll_next(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Self::Item>> {
        if std::mem::take(&mut self.first) {
            return std::task::Poll::Ready(Some(Ok(Bytes::from_static(b"first"))));
        }
        std::future::Future::poll(std::pin::Pin::new(&mut self.drain), cx).map(|()| None)
    }
}

pub struct TestServer {
    pub handle: ServerHandle,
    pub seen: Seen,
    _dir: Option<tempdir::Dir>,
}

mod tempdir {
    /// A directory removed on drop.
    pub struct Dir(pub std::path::PathBuf);
    impl Drop for Dir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

impl TestServer {
    pub fn start(limits: Limits) -> TestServer {
        Self::start_with(Server::new().workers(1).limits(limits))
    }

    pub fn start_with(server: Server) -> TestServer {
        let seen = Seen::default();
        let dir = std::env::temp_dir().join(format!("kiln-http-test-{}-{}", std::process::id(), unique()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("file.txt");
        std::fs::write(&file, b"0123456789abcdefghij").unwrap();
        let seen2 = seen.clone();
        let handle = server
            .listen("127.0.0.1:0")
            .serve(move |_| TestService { seen: seen2.clone(), file: Some(file.clone()) })
            .unwrap();
        TestServer { handle, seen, _dir: Some(tempdir::Dir(dir)) }
    }

    pub fn addr(&self) -> SocketAddr {
        self.handle.local_addr()
    }

    pub fn connect(&self) -> TcpStream {
        let s = TcpStream::connect(self.addr()).unwrap();
        s.set_read_timeout(Some(CLIENT_TIMEOUT)).unwrap();
        s
    }

    /// Sends `raw` on a fresh connection and returns every response until the server
    /// closes it.
    pub fn exchange(&self, raw: &[u8]) -> Vec<Resp> {
        let mut s = self.connect();
        s.write_all(raw).unwrap();
        parse_all(&read_to_close(&mut s), false)
    }
}

fn unique() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    N.fetch_add(1, Ordering::Relaxed)
}

#[derive(Debug, Clone)]
pub struct Resp {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Resp {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    pub fn body_str(&self) -> &str {
        std::str::from_utf8(&self.body).unwrap()
    }
}

/// Reads until the server closes the connection (or the client timeout fails the test).
pub fn read_to_close(s: &mut TcpStream) -> Vec<u8> {
    let mut out = Vec::new();
    let mut buf = [0u8; 16 * 1024];
    loop {
        match s.read(&mut buf) {
            Ok(0) => return out,
            Ok(n) => out.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => return out,
            Err(e) => panic!("read failed after {} bytes: {e}", out.len()),
        }
    }
}

/// Reads exactly `n` responses (the connection stays open).
pub fn read_responses(s: &mut TcpStream, n: usize, head_only: bool) -> Vec<Resp> {
    let mut raw = Vec::new();
    let mut buf = [0u8; 16 * 1024];
    loop {
        if let Some(resps) = try_parse(&raw, n, head_only) {
            return resps;
        }
        let got = s.read(&mut buf).expect("read");
        assert!(got > 0, "connection closed after {} bytes: {:?}", raw.len(), String::from_utf8_lossy(&raw));
        raw.extend_from_slice(&buf[..got]);
    }
}

/// Parses every response in `raw`, which must hold only complete responses.
pub fn parse_all(raw: &[u8], head_only: bool) -> Vec<Resp> {
    let mut out = Vec::new();
    let mut at = 0;
    while at < raw.len() {
        let (resp, used) = parse_one(&raw[at..], head_only)
            .unwrap_or_else(|| panic!("incomplete response: {:?}", String::from_utf8_lossy(&raw[at..])));
        out.push(resp);
        at += used;
    }
    out
}

fn try_parse(raw: &[u8], n: usize, head_only: bool) -> Option<Vec<Resp>> {
    let mut out = Vec::new();
    let mut at = 0;
    while out.len() < n {
        let (resp, used) = parse_one(&raw[at..], head_only)?;
        out.push(resp);
        at += used;
    }
    Some(out)
}

fn parse_one(raw: &[u8], head_only: bool) -> Option<(Resp, usize)> {
    let mut headers = [httparse::EMPTY_HEADER; 64];
    let mut r = httparse::Response::new(&mut headers);
    let head_len = match r.parse(raw).expect("server sent a malformed response") {
        httparse::Status::Complete(n) => n,
        httparse::Status::Partial => return None,
    };
    let status = r.code.unwrap();
    let headers: Vec<(String, String)> =
        r.headers.iter().map(|h| (h.name.to_owned(), String::from_utf8_lossy(h.value).into_owned())).collect();
    let resp = Resp { status, headers, body: Vec::new() };
    let rest = &raw[head_len..];
    if head_only || status < 200 || status == 204 || status == 304 {
        return Some((resp, head_len));
    }
    if let Some(len) = resp.header("content-length") {
        let len: usize = len.parse().unwrap();
        if rest.len() < len {
            return None;
        }
        return Some((Resp { body: rest[..len].to_vec(), ..resp }, head_len + len));
    }
    if resp.header("transfer-encoding") == Some("chunked") {
        let mut body = Vec::new();
        let mut at = 0;
        loop {
            let line_end = rest[at..].windows(2).position(|w| w == b"\r\n")? + at;
            let size = usize::from_str_radix(std::str::from_utf8(&rest[at..line_end]).unwrap(), 16).unwrap();
            at = line_end + 2;
            if rest.len() < at + size + 2 {
                return None;
            }
            body.extend_from_slice(&rest[at..at + size]);
            at += size + 2;
            if size == 0 {
                return Some((Resp { body, ..resp }, head_len + at));
            }
        }
    }
    // Delimited by close.
    Some((Resp { body: rest.to_vec(), ..resp }, raw.len()))
}

/// The checksum `/upload` answers with for `body`.
pub fn upload_sum(body: &[u8]) -> String {
    let sum = body.iter().fold(0u64, |s, &b| s.wrapping_mul(31).wrapping_add(u64::from(b)));
    format!("{} {sum}", body.len())
}

/// This process's resident memory (`VmRSS`), in bytes.
pub fn resident_bytes() -> usize {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let kib: usize = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .unwrap()
        .trim()
        .trim_end_matches(" kB")
        .trim()
        .parse()
        .unwrap();
    kib * 1024
}
