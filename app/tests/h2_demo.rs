//! kiln-demo over HTTP/2, through curl (built with nghttp2): h2c with prior knowledge on
//! the plain port and h2 by ALPN over TLS, the same site, static files, health check and
//! benchmark endpoints as over HTTP/1.1, and the access log saying `HTTP/2.0`.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use kiln_test_support::{Server, TempDir};

/// What curl reports after the body: the protocol version and the status.
const WRITE_OUT: &str = "\n%{http_version} %{http_code}";

/// Runs curl with `args` and returns (headers in lower case, body, version, status).
fn curl(args: &[&str]) -> (String, Vec<u8>, String, u16) {
    let out = Command::new("curl")
        .args(["-sS", "--max-time", "10", "-D", "-", "-w", WRITE_OUT])
        .args(args)
        .output()
        .expect("curl runs (Debian's curl has HTTP/2 through nghttp2)");
    assert!(out.status.success(), "curl {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    let text = out.stdout;
    let tail_at = text.iter().rposition(|&b| b == b'\n').unwrap();
    let tail = String::from_utf8_lossy(&text[tail_at + 1..]).into_owned();
    let (version, status) = tail.split_once(' ').unwrap();
    let rest = &text[..tail_at];
    let head_end = rest.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
    let head = String::from_utf8_lossy(&rest[..head_end + 2]).to_ascii_lowercase();
    (head, rest[head_end + 4..].to_vec(), version.to_owned(), status.parse().unwrap())
}

fn write_cert(dir: &Path) {
    let made = rcgen::generate_simple_self_signed(vec!["localhost".to_owned(), "127.0.0.1".to_owned()]).unwrap();
    std::fs::write(dir.join("cert.pem"), made.cert.pem()).unwrap();
    std::fs::write(dir.join("key.pem"), made.signing_key.serialize_pem()).unwrap();
}

#[test]
fn the_demo_speaks_h2c_to_curl_with_prior_knowledge_and_logs_http2() {
    let dir = TempDir::new("h2-demo");
    let log = dir.path().join("access.log");
    let database = dir.sqlite_url();
    let args = ["--workers", "1", "--database", &database, "--access-log", log.to_str().unwrap()];
    let server = Server::start(env!("CARGO_BIN_EXE_kiln-demo"), &args);
    let base = format!("http://{}", server.addr);
    let h2 =
        |path: &str, extra: &[&str]| curl(&[&["--http2-prior-knowledge", &format!("{base}{path}")], extra].concat());

    let (head, body, version, status) = h2("/pong", &[]);
    assert_eq!((version.as_str(), status, &body[..]), ("2", 200, &b"PONG"[..]), "{head}");
    assert!(head.contains("content-length: 4\r\n") && head.contains("server: kiln\r\n"), "{head}");

    // Static files: the whole file, then 304 for its ETag, then a range.
    let (head, body, _, status) = h2("/static/hello.txt", &[]);
    assert_eq!((status, body), (200, std::fs::read("public/hello.txt").unwrap()));
    let etag = head.lines().find_map(|l| l.strip_prefix("etag: ")).expect("an etag").trim().to_owned();
    let (_, body, _, status) = h2("/static/hello.txt", &["-H", &format!("if-none-match: {etag}")]);
    assert_eq!((status, body.len()), (304, 0));
    let (head, body, _, status) = h2("/static/hello.txt", &["-H", "range: bytes=0-4"]);
    assert_eq!((status, body.len()), (206, 5), "{head}");
    let (_, body, _, status) = h2("/static/1m.bin", &[]);
    assert!(status == 200 && body == std::fs::read("public/1m.bin").unwrap(), "{status}, {} bytes", body.len());

    // A page: its stylesheet announced first in a 103 (curl prints both heads).
    let (head, _, _, status) = h2("/pages/welcome", &["-H", "accept: text/html"]);
    assert_eq!(status, 200);
    let hints = head.split("http/2 200").next().unwrap();
    assert!(hints.starts_with("http/2 103"), "{head}");
    assert!(hints.contains("link: </static/site.") && hints.contains(".css>; rel=preload; as=style"), "{head}");
    let (head, _, _, _) = curl(&["--http1.1", "-H", "accept: text/html", &format!("{base}/pages/welcome")]);
    assert!(!head.contains(" 103"), "{head}");

    // The site, the health check, JSON.
    let (_, body, _, status) = h2("/pages/welcome", &[]);
    let page = String::from_utf8(body).unwrap();
    assert!(status == 200 && page.contains("<!DOCTYPE html>"), "{status}: {page}");
    assert_eq!(h2("/healthz", &[]).3, 200);
    assert_eq!(h2("/json", &[]).1, br#"{"message":"Hello, World!"}"#);
    // HTTP/1.1 still on the same port.
    assert_eq!(curl(&["--http1.1", &format!("{base}/pong")]).2, "1.1");

    // The access log, flushed once a second, names the protocol.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let written = std::fs::read_to_string(&log).unwrap_or_default();
        if written.contains("\"GET /pong HTTP/2.0\" 200 4") && written.contains("\"GET /pong HTTP/1.1\" 200 4") {
            break;
        }
        assert!(Instant::now() < deadline, "no HTTP/2.0 line in the access log: {written}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn the_demo_over_tls_gives_curl_h2_by_alpn() {
    let dir = TempDir::new("h2-demo-tls");
    write_cert(dir.path());
    let (cert, key) = (dir.path().join("cert.pem"), dir.path().join("key.pem"));
    let database = dir.sqlite_url();
    let args = [
        "--workers",
        "1",
        "--database",
        &database,
        "--tls-cert",
        cert.to_str().unwrap(),
        "--tls-key",
        key.to_str().unwrap(),
        "--hsts",
    ];
    let server = Server::start(env!("CARGO_BIN_EXE_kiln-demo"), &args);
    let url = format!("https://localhost:{}/pong", server.addr.port());
    let resolve = format!("localhost:{}:127.0.0.1", server.addr.port());
    let (head, body, version, status) = curl(&["-k", "--http2", "--resolve", &resolve, &url]);
    assert_eq!((version.as_str(), status, &body[..]), ("2", 200, &b"PONG"[..]), "{head}");
    assert!(head.contains("strict-transport-security: max-age="), "{head}");
    let (_, _, version, _) = curl(&["-k", "--http1.1", "--resolve", &resolve, &url]);
    assert_eq!(version, "1.1");
}
