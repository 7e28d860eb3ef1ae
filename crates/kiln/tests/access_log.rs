//! The access log over a real socket: lines parsed back field by field in both
//! formats, flushed within a second, reopened on request and on SIGHUP, and a log that
//! cannot be written never stops the server.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use kiln::access_log::{AccessLog, LogFormat, LogTarget, Logged};
use kiln::http::{Request, Response, Server, ServerHandle, StatusCode, service_fn};

fn temp_dir() -> PathBuf {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("kiln-access-log-{}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn app(req: Request<'_>, res: &mut Response) {
    match req.path() {
        "/pong" => {
            res.set_content_type("text/plain");
            res.set_body_static(b"PONG");
        }
        _ => {
            res.set_status(StatusCode::NOT_FOUND);
            res.body_mut().extend_from_slice(b"not found\n");
        }
    }
}

fn start(log: Option<&AccessLog>) -> ServerHandle {
    let log = log.cloned();
    Server::new()
        .listen(SocketAddr::from(([127, 0, 0, 1], 0)))
        .workers(1)
        .serve(move |_| Logged::new(service_fn(app), log.as_ref()))
        .unwrap()
}

/// Sends one raw request and returns the status of the answer.
fn request(addr: SocketAddr, raw: &str) -> u16 {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    stream.write_all(raw.as_bytes()).unwrap();
    let mut bytes = Vec::new();
    let _ = stream.read_to_end(&mut bytes);
    String::from_utf8_lossy(&bytes[9..12]).parse().unwrap()
}

fn get(addr: SocketAddr, target: &str) -> u16 {
    request(addr, &format!("GET {target} HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n"))
}

/// Retries `f` until it holds, for at most ten seconds.
fn poll(what: &str, mut f: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !f() {
        assert!(Instant::now() < deadline, "{what}: not before the deadline");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

/// One Combined Log Format line, fields unescaped.
#[derive(Debug, PartialEq)]
struct Clf {
    remote: String,
    ident: String,
    user: String,
    time: String,
    request: String,
    status: u16,
    bytes: String,
    referer: String,
    user_agent: String,
    micros: u64,
}

fn parse_clf(line: &str) -> Clf {
    let mut rest = line;
    let mut word = || {
        let (w, r) = rest.split_once(' ').unwrap_or((rest, ""));
        rest = r;
        w.to_owned()
    };
    let (remote, ident, user) = (word(), word(), word());
    let (time, r) = rest.strip_prefix('[').unwrap().split_once("] ").unwrap();
    let (request, r) = quoted(r);
    let mut fields = r.trim_start().splitn(3, ' ');
    let status = fields.next().unwrap().parse().unwrap();
    let bytes = fields.next().unwrap().to_owned();
    let (referer, r) = quoted(fields.next().unwrap());
    let (user_agent, r) = quoted(r.trim_start());
    let micros = r.trim().parse().unwrap();
    Clf { remote, ident, user, time: time.to_owned(), request, status, bytes, referer, user_agent, micros }
}

/// A `"..."` field with `\"`, `\\` and `\xHH` escapes; returns it and what follows.
fn quoted(s: &str) -> (String, &str) {
    let body = s.strip_prefix('"').expect("a quoted field");
    let (mut out, mut chars) = (Vec::new(), body.char_indices());
    while let Some((i, c)) = chars.next() {
        match c {
            '"' => return (String::from_utf8_lossy(&out).into_owned(), &body[i + 1..]),
            '\\' => match chars.next().unwrap().1 {
                'x' => {
                    let hex: String = [chars.next().unwrap().1, chars.next().unwrap().1].iter().collect();
                    out.push(u8::from_str_radix(&hex, 16).unwrap());
                }
                c => out.push(c as u8),
            },
            c => out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes()),
        }
    }
    panic!("unterminated field in {s}");
}

#[test]
fn combined_lines_parse_back_field_by_field() {
    let dir = temp_dir();
    let path = dir.join("access.log");
    let log = AccessLog::open(LogTarget::File(path.clone()), LogFormat::Combined);
    let server = start(Some(&log));
    let addr = server.local_addr();
    request(
        addr,
        "GET /pong?x=1 HTTP/1.1\r\nHost: t\r\nReferer: http://a.example/\"q\"\r\nUser-Agent: tester/1.0 (\"quoted\")\r\nConnection: close\r\n\r\n",
    );
    request(addr, "HEAD /pong HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n");
    request(addr, "GET /missing HTTP/1.0\r\n\r\n");
    server.shutdown();
    server.wait().unwrap();
    log.shutdown();

    let text = read(&path);
    let lines: Vec<Clf> = text.lines().map(parse_clf).collect();
    assert_eq!(lines.len(), 3, "{text}");
    let first = &lines[0];
    assert_eq!((first.remote.as_str(), first.ident.as_str(), first.user.as_str()), ("127.0.0.1", "-", "-"));
    assert_eq!(first.request, "GET /pong?x=1 HTTP/1.1");
    assert_eq!((first.status, first.bytes.as_str()), (200, "4"));
    assert_eq!(first.referer, "http://a.example/\"q\"");
    assert_eq!(first.user_agent, "tester/1.0 (\"quoted\")");
    assert!(first.micros < 10_000_000);
    // `10/Oct/2000:13:55:36 +0000`
    let t = first.time.as_bytes();
    assert_eq!((t.len(), t[2], t[6], t[11], &first.time[20..]), (26, b'/', b'/', b':', " +0000"), "{}", first.time);
    let head = &lines[1];
    assert_eq!((head.request.as_str(), head.status, head.bytes.as_str()), ("HEAD /pong HTTP/1.1", 200, "-"));
    let missing = &lines[2];
    assert_eq!(
        (missing.request.as_str(), missing.status, missing.bytes.as_str()),
        ("GET /missing HTTP/1.0", 404, "10")
    );
    assert_eq!((missing.referer.as_str(), missing.user_agent.as_str()), ("-", "-"));
    assert_eq!((log.written_lines(), log.dropped_lines()), (3, 0));
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn json_lines_parse_back_field_by_field() {
    let dir = temp_dir();
    let path = dir.join("access.jsonl");
    let log = AccessLog::open(LogTarget::File(path.clone()), LogFormat::Json);
    let server = start(Some(&log));
    request(
        server.local_addr(),
        "GET /pong HTTP/1.1\r\nHost: t\r\nUser-Agent: café \"x\"\r\nConnection: close\r\n\r\n",
    );
    server.shutdown();
    server.wait().unwrap();
    log.shutdown();

    let text = read(&path);
    let v: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    assert_eq!(v["remote"], "127.0.0.1");
    assert_eq!(v["method"], "GET");
    assert_eq!(v["target"], "/pong");
    assert_eq!(v["version"], "HTTP/1.1");
    assert_eq!(v["status"], 200);
    assert_eq!(v["bytes"], 4);
    assert_eq!(v["referer"], serde_json::Value::Null);
    assert_eq!(v["user_agent"], "café \"x\"");
    assert!(v["duration_us"].is_u64());
    let time = v["time"].as_str().unwrap();
    assert!(time.len() == 20 && time.ends_with('Z') && &time[10..11] == "T", "{time}");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn lines_reach_the_file_within_a_second_without_shutdown() {
    let dir = temp_dir();
    let path = dir.join("access.log");
    let log = AccessLog::open(LogTarget::File(path.clone()), LogFormat::Combined);
    let server = start(Some(&log));
    get(server.local_addr(), "/pong?first");
    poll("the line is written while the server idles", || read(&path).contains("/pong?first"));
    drop(server);
    log.shutdown();
    let _ = std::fs::remove_dir_all(dir);
}

/// Rotates the file as logrotate does (rename, then signal) and checks that the old
/// lines stay in the renamed file and new ones go to a new file.
fn rotate(signal: impl FnOnce(&AccessLog)) {
    let dir = temp_dir();
    let (path, rotated) = (dir.join("access.log"), dir.join("access.log.1"));
    let log = AccessLog::open(LogTarget::File(path.clone()), LogFormat::Combined);
    let server = start(Some(&log));
    let addr = server.local_addr();
    get(addr, "/pong?before");
    poll("first line written", || read(&path).contains("/pong?before"));
    std::fs::rename(&path, &rotated).unwrap();
    signal(&log);
    poll("a new file is opened", || path.exists());
    get(addr, "/pong?after");
    poll("second line written to the new file", || read(&path).contains("/pong?after"));
    assert!(!read(&rotated).contains("/pong?after"));
    assert!(!read(&path).contains("/pong?before"));
    drop(server);
    log.shutdown();
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn reopen_starts_a_new_file() {
    rotate(AccessLog::reopen);
}

#[test]
fn sighup_reopens_the_file() {
    rotate(|log| {
        log.reopen_on_sighup().unwrap();
        // The handler replaced SIGHUP's default action (ending the process), so this
        // is safe for every test in this binary.
        let status = std::process::Command::new("kill").args(["-HUP", &std::process::id().to_string()]).status();
        assert!(status.unwrap().success());
    });
}

#[test]
fn an_unwritable_log_never_stops_the_server() {
    let dir = temp_dir();
    for target in [PathBuf::from("/dev/full"), dir.join("no/such/folder/access.log")] {
        let log = AccessLog::open(LogTarget::File(target.clone()), LogFormat::Combined);
        let server = start(Some(&log));
        for _ in 0..50 {
            assert_eq!(get(server.local_addr(), "/pong"), 200, "{}", target.display());
        }
        poll("the lines are counted as dropped", || log.dropped_lines() > 0);
        assert_eq!(log.written_lines(), 0);
        drop(server);
        log.shutdown();
    }
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_log_switched_off_serves_alike() {
    let server = start(None);
    assert_eq!(get(server.local_addr(), "/pong"), 200);
    assert_eq!(get(server.local_addr(), "/nope"), 404);
}

/// Issue 11: the access log as an `App` layer, flushed and stopped by the handle that
/// `kiln::serve` returns, with no `MakeService`, closure or manual `shutdown()`.
#[test]
fn an_app_layer_flushed_by_the_serving_handle() {
    #[derive(kiln::Route)]
    #[route("/pong")]
    struct Pong;

    async fn pong(_: Pong) -> &'static str {
        "PONG"
    }

    let dir = temp_dir();
    let path = dir.join("app.log");
    let log = AccessLog::open(LogTarget::File(path.clone()), LogFormat::Combined);
    let app = kiln::App::new(|_| ()).access_log(log).route(pong);
    let server = Server::new().listen(SocketAddr::from(([127, 0, 0, 1], 0))).workers(2);
    let serving = kiln::serve(app, server).unwrap();
    let addr = serving.local_addr();
    assert_eq!(get(addr, "/pong"), 200);
    assert_eq!(get(addr, "/nowhere"), 404);
    serving.shutdown();
    serving.wait().unwrap();
    // Written by the time `wait` returns, well before the once-a-second flush.
    let text = read(&path);
    // Each worker hands over its own buffer, so the order across workers is free.
    let mut lines: Vec<(String, u16)> = text.lines().map(parse_clf).map(|l| (l.request, l.status)).collect();
    lines.sort();
    assert_eq!(lines, [("GET /nowhere HTTP/1.1".to_owned(), 404), ("GET /pong HTTP/1.1".to_owned(), 200)], "{text}");
}
