//! Static files over a real socket: headers, validators and `304`, ranges, `HEAD`,
//! precompressed siblings, cache invalidation, and a table of hostile paths sent as
//! raw bytes (so no client normalises them), none of which may escape the root.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use kiln::http::{Request, Response, Server, ServerHandle, Service, StatusCode};
use kiln::static_files::{StaticDir, StaticFile};

const HELLO: &[u8] = b"Hello, World!";
/// Above the default in-memory threshold, so it is sent with `sendfile`.
const LARGE_LEN: usize = 200 * 1024;
/// Placed next to the root, never inside it: no response may contain it.
const SECRET: &str = "TOP-SECRET-OUTSIDE-THE-ROOT";

/// A fresh folder per test: `root/` is served, `secret.txt` lies beside it.
struct Fixture {
    dir: PathBuf,
}

impl Fixture {
    fn new() -> Fixture {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("kiln-static-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("root/sub")).unwrap();
        std::fs::write(dir.join("secret.txt"), SECRET).unwrap();
        std::fs::write(dir.join("root/hello.txt"), HELLO).unwrap();
        std::fs::write(dir.join("root/sub/page.html"), "<p>hi</p>").unwrap();
        std::fs::write(dir.join("root/.env"), SECRET).unwrap();
        std::fs::write(dir.join("root/large.bin"), large()).unwrap();
        Fixture { dir }
    }

    fn root(&self) -> PathBuf {
        self.dir.join("root")
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn large() -> Vec<u8> {
    (0..LARGE_LEN).map(|i| (i % 251) as u8).collect()
}

/// `/static/*` from a folder, `/favicon.txt` from one file.
struct Site {
    dir: StaticDir,
    file: StaticFile,
}

impl Service for Site {
    async fn call<'a>(&'a self, req: Request<'a>, res: &'a mut Response) {
        if let Some(rest) = req.path().strip_prefix("/static/") {
            self.dir.serve(&req, rest, res).await;
        } else if req.path() == "/favicon.txt" {
            self.file.serve(&req, res).await;
        } else {
            res.set_status(StatusCode::NOT_FOUND);
        }
    }
}

fn start(root: &Path, configure: fn(StaticDir) -> StaticDir) -> ServerHandle {
    let root = root.to_path_buf();
    Server::new()
        .listen(SocketAddr::from(([127, 0, 0, 1], 0)))
        .workers(1)
        .serve(move |_| Site {
            dir: configure(StaticDir::new(&root).unwrap()),
            file: StaticFile::new(root.join("hello.txt")).unwrap(),
        })
        .unwrap()
}

#[derive(Debug)]
struct Reply {
    status: u16,
    head: String,
    body: Vec<u8>,
}

impl Reply {
    fn header(&self, name: &str) -> Option<&str> {
        self.head.lines().skip(1).find_map(|line| {
            let (n, v) = line.split_once(':')?;
            n.eq_ignore_ascii_case(name).then(|| v.trim())
        })
    }
}

/// Sends `raw` as is and reads the one response until the server closes.
fn send(addr: SocketAddr, raw: &[u8]) -> Reply {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    stream.write_all(raw).unwrap();
    let mut bytes = Vec::new();
    let _ = stream.read_to_end(&mut bytes);
    let split = bytes.windows(4).position(|w| w == b"\r\n\r\n").expect("a complete head");
    let head = String::from_utf8(bytes[..split].to_vec()).unwrap();
    let status = head[9..12].parse().unwrap();
    Reply { status, head, body: bytes[split + 4..].to_vec() }
}

/// A `GET` of `target` with extra header lines, closing after the response.
fn get(addr: SocketAddr, target: &str, headers: &str) -> Reply {
    send(addr, format!("GET {target} HTTP/1.1\r\nHost: t\r\nConnection: close\r\n{headers}\r\n").as_bytes())
}

#[test]
fn small_file_with_all_headers() {
    let fx = Fixture::new();
    let server = start(&fx.root(), |d| d.cache_control("public, max-age=60"));
    let r = get(server.local_addr(), "/static/hello.txt", "");
    assert_eq!(r.status, 200);
    assert_eq!(r.body, HELLO);
    assert_eq!(r.header("Content-Type"), Some("text/plain; charset=utf-8"));
    assert_eq!(r.header("Content-Length"), Some("13"));
    assert_eq!(r.header("Accept-Ranges"), Some("bytes"));
    assert_eq!(r.header("Cache-Control"), Some("public, max-age=60"));
    assert!(r.header("ETag").unwrap().starts_with('"'));
    assert!(r.header("Last-Modified").unwrap().ends_with(" GMT"));
    assert_eq!(r.header("Vary"), None, "no siblings, nothing to vary on");
    let html = get(server.local_addr(), "/static/sub/page.html", "");
    assert_eq!((html.status, html.header("Content-Type")), (200, Some("text/html; charset=utf-8")));
}

#[test]
fn head_has_the_headers_and_no_body() {
    let fx = Fixture::new();
    let server = start(&fx.root(), |d| d);
    for target in ["/static/hello.txt", "/static/large.bin"] {
        let r = send(
            server.local_addr(),
            format!("HEAD {target} HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n").as_bytes(),
        );
        assert_eq!(r.status, 200);
        assert!(r.body.is_empty(), "{target}");
        let want = if target.ends_with("txt") { HELLO.len() } else { LARGE_LEN };
        assert_eq!(r.header("Content-Length"), Some(want.to_string().as_str()));
    }
}

#[test]
fn large_file_is_sent_whole_and_in_ranges() {
    let fx = Fixture::new();
    let server = start(&fx.root(), |d| d);
    let r = get(server.local_addr(), "/static/large.bin", "");
    assert_eq!(r.status, 200);
    assert_eq!(r.body, large());
    assert_eq!(r.header("Content-Type"), Some("application/octet-stream"));
    let r = get(server.local_addr(), "/static/large.bin", "Range: bytes=100000-100099\r\n");
    assert_eq!(r.status, 206);
    assert_eq!(r.header("Content-Range"), Some(format!("bytes 100000-100099/{LARGE_LEN}").as_str()));
    assert_eq!(r.body, &large()[100_000..100_100]);
}

#[test]
fn validators_give_304_and_412() {
    let fx = Fixture::new();
    let server = start(&fx.root(), |d| d.cache_control("no-cache"));
    let addr = server.local_addr();
    let first = get(addr, "/static/hello.txt", "");
    let (etag, modified) = (first.header("ETag").unwrap(), first.header("Last-Modified").unwrap());

    for cond in [
        format!("If-None-Match: {etag}"),
        format!("If-None-Match: W/{etag}"),
        format!("If-None-Match: \"x\", {etag}"),
        "If-None-Match: *".to_owned(),
        format!("If-Modified-Since: {modified}"),
    ] {
        let r = get(addr, "/static/hello.txt", &format!("{cond}\r\n"));
        assert_eq!(r.status, 304, "{cond}");
        assert!(r.body.is_empty());
        assert_eq!(r.header("Content-Length"), None);
        assert_eq!(r.header("ETag"), Some(etag), "RFC 9110 §15.4.5 wants the ETag again");
        assert_eq!(r.header("Cache-Control"), Some("no-cache"));
    }
    for cond in [
        "If-None-Match: \"other\"".to_owned(),
        "If-Modified-Since: Thu, 01 Jan 1970 00:00:01 GMT".to_owned(),
        format!("If-None-Match: \"other\"\r\nIf-Modified-Since: {modified}"),
        "If-Modified-Since: yesterday".to_owned(),
    ] {
        let r = get(addr, "/static/hello.txt", &format!("{cond}\r\n"));
        assert_eq!((r.status, &r.body[..]), (200, HELLO), "{cond}");
    }
    for cond in ["If-Match: \"other\"", "If-Unmodified-Since: Thu, 01 Jan 1970 00:00:01 GMT"] {
        assert_eq!(get(addr, "/static/hello.txt", &format!("{cond}\r\n")).status, 412, "{cond}");
    }
    assert_eq!(get(addr, "/static/hello.txt", &format!("If-Match: {etag}\r\n")).status, 200);
}

#[test]
fn ranges_partial_unsatisfiable_and_never_amplified() {
    let fx = Fixture::new();
    let server = start(&fx.root(), |d| d);
    let addr = server.local_addr();
    let etag = get(addr, "/static/hello.txt", "").header("ETag").unwrap().to_owned();
    let cases: &[(&str, u16, Option<&str>, &[u8])] = &[
        ("bytes=0-4", 206, Some("bytes 0-4/13"), b"Hello"),
        ("bytes=7-", 206, Some("bytes 7-12/13"), &HELLO[7..]),
        ("bytes=-6", 206, Some("bytes 7-12/13"), &HELLO[7..]),
        ("bytes=0-999", 206, Some("bytes 0-12/13"), HELLO),
        ("bytes=13-", 416, Some("bytes */13"), b""),
        ("bytes=-0", 416, Some("bytes */13"), b""),
        ("bytes=0-1,3-4", 200, None, HELLO),
        ("bytes=0-12,0-12,0-12,0-12,0-12,0-12", 200, None, HELLO),
        ("bytes=0-,1-,2-,3-", 200, None, HELLO),
        ("bytes=5-1", 200, None, HELLO),
        ("lines=0-1", 200, None, HELLO),
    ];
    for &(range, status, content_range, body) in cases {
        let r = get(addr, "/static/hello.txt", &format!("Range: {range}\r\n"));
        assert_eq!(r.status, status, "{range}");
        assert_eq!(r.header("Content-Range"), content_range, "{range}");
        assert_eq!(r.body, body, "{range}");
        assert!(r.body.len() <= HELLO.len(), "{range}: a response never exceeds the file");
    }
    let r = get(addr, "/static/hello.txt", &format!("Range: bytes=0-4\r\nIf-Range: {etag}\r\n"));
    assert_eq!((r.status, &r.body[..]), (206, &b"Hello"[..]));
    let r = get(addr, "/static/hello.txt", "Range: bytes=0-4\r\nIf-Range: \"stale\"\r\n");
    assert_eq!((r.status, &r.body[..]), (200, HELLO));
    let r = send(addr, b"HEAD /static/hello.txt HTTP/1.1\r\nHost: t\r\nRange: bytes=0-4\r\nConnection: close\r\n\r\n");
    assert_eq!(r.status, 200, "RFC 9110 §14.2: Range is for GET only");
}

#[test]
fn precompressed_siblings_follow_accept_encoding() {
    let fx = Fixture::new();
    let root = fx.root();
    std::fs::write(root.join("app.js"), "identity").unwrap();
    std::fs::write(root.join("app.js.gz"), "gzip-bytes").unwrap();
    std::fs::write(root.join("app.js.br"), "brotli-bytes").unwrap();
    std::fs::write(root.join("only-gz.css"), "identity").unwrap();
    std::fs::write(root.join("only-gz.css.gz"), "gzip-bytes").unwrap();
    let server = start(&root, |d| d);
    let addr = server.local_addr();
    let cases: &[(&str, &str, &str, Option<&str>)] = &[
        ("app.js", "", "identity", None),
        ("app.js", "Accept-Encoding: gzip, deflate, br\r\n", "brotli-bytes", Some("br")),
        ("app.js", "Accept-Encoding: gzip\r\n", "gzip-bytes", Some("gzip")),
        ("app.js", "Accept-Encoding: br;q=0, gzip\r\n", "gzip-bytes", Some("gzip")),
        ("app.js", "Accept-Encoding: deflate\r\n", "identity", None),
        ("only-gz.css", "Accept-Encoding: br, gzip\r\n", "gzip-bytes", Some("gzip")),
        ("only-gz.css", "Accept-Encoding: br\r\n", "identity", None),
    ];
    let mut etags = Vec::new();
    for &(file, accept, body, coding) in cases {
        let r = get(addr, &format!("/static/{file}"), accept);
        assert_eq!((r.status, String::from_utf8_lossy(&r.body).as_ref()), (200, body), "{file} {accept}");
        assert_eq!(r.header("Content-Encoding"), coding, "{file} {accept}");
        assert_eq!(r.header("Vary"), Some("Accept-Encoding"), "{file} {accept}");
        assert_eq!(r.header("Content-Type"), get(addr, &format!("/static/{file}"), "").header("Content-Type"));
        etags.push(r.header("ETag").unwrap().to_owned());
    }
    assert_ne!(etags[0], etags[1], "each coding has its own ETag");
    assert_ne!(etags[1], etags[2]);
    assert!(get(addr, "/static/hello.txt", "Accept-Encoding: br, gzip\r\n").header("Vary").is_none());
}

#[test]
fn a_changed_file_is_served_anew() {
    let fx = Fixture::new();
    let server = start(&fx.root(), |d| d);
    let addr = server.local_addr();
    let path = fx.root().join("hello.txt");
    let before = get(addr, "/static/hello.txt", "");
    assert_eq!(before.body, HELLO);
    // Replaced whole (write, then rename), so no request sees it half-written.
    std::fs::write(fx.dir.join("next.txt"), "Changed content, longer").unwrap();
    std::fs::rename(fx.dir.join("next.txt"), &path).unwrap();
    let after = poll(|| Some(get(addr, "/static/hello.txt", "")).filter(|r| r.body != HELLO));
    assert_eq!(after.body, b"Changed content, longer");
    assert_ne!(after.header("ETag"), before.header("ETag"));
    std::fs::remove_file(&path).unwrap();
    poll(|| Some(()).filter(|_| get(addr, "/static/hello.txt", "").status == 404));
    // A new sibling is noticed as well.
    std::fs::write(fx.root().join("sub/page.html.gz"), "gz").unwrap();
    poll(|| Some(()).filter(|_| get(addr, "/static/sub/page.html", "Accept-Encoding: gzip\r\n").body == b"gz"));
}

#[test]
fn with_revalidation_on_every_request_a_modified_replaced_or_deleted_file_is_served_fresh_at_once() {
    let fx = Fixture::new();
    let server = start(&fx.root(), |d| d.revalidate_every(Duration::ZERO));
    let addr = server.local_addr();
    let path = fx.root().join("hello.txt");
    assert_eq!(get(addr, "/static/hello.txt", "").body, HELLO);
    // Modified in place: the same inode, another length.
    std::fs::write(&path, "Hello again, modified").unwrap();
    assert_eq!(get(addr, "/static/hello.txt", "").body, b"Hello again, modified");
    // Replaced whole by a rename: another inode.
    std::fs::write(fx.dir.join("next.txt"), "Replaced").unwrap();
    std::fs::rename(fx.dir.join("next.txt"), &path).unwrap();
    assert_eq!(get(addr, "/static/hello.txt", "").body, b"Replaced");
    std::fs::remove_file(&path).unwrap();
    assert_eq!(get(addr, "/static/hello.txt", "").status, 404);
}

#[test]
fn within_the_revalidation_interval_the_cached_file_is_trusted() {
    let fx = Fixture::new();
    let server = start(&fx.root(), |d| d.revalidate_every(Duration::from_secs(3600)));
    let addr = server.local_addr();
    assert_eq!(get(addr, "/static/hello.txt", "").body, HELLO);
    std::fs::write(fx.root().join("hello.txt"), "Changed, not looked at yet").unwrap();
    assert_eq!(get(addr, "/static/hello.txt", "").body, HELLO, "the interval is an hour");
    // A path never cached is looked up, and still never outside the root.
    assert_eq!(get(addr, "/static/../secret.txt", "").status / 100, 4);
}

/// Retries `f` until it gives a value, for at most ten seconds (the cache revalidates
/// once a second).
fn poll<T>(mut f: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if let Some(v) = f() {
            return v;
        }
        assert!(Instant::now() < deadline, "condition not met before the deadline");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn symlinks_out_of_the_root_are_refused() {
    let fx = Fixture::new();
    let root = fx.root();
    std::os::unix::fs::symlink(fx.dir.join("secret.txt"), root.join("escape.txt")).unwrap();
    std::os::unix::fs::symlink(&fx.dir, root.join("parent")).unwrap();
    std::os::unix::fs::symlink(root.join("hello.txt"), root.join("inside.txt")).unwrap();
    let server = start(&root, |d| d);
    let addr = server.local_addr();
    for target in ["/static/escape.txt", "/static/parent/secret.txt"] {
        let r = get(addr, target, "");
        assert_eq!(r.status, 404, "{target}");
        assert!(!String::from_utf8_lossy(&r.body).contains(SECRET));
    }
    assert_eq!(get(addr, "/static/inside.txt", "").body, HELLO, "links within the root are fine");
    let open = start(&root, |d| d.follow_symlinks_out(true));
    assert_eq!(get(open.local_addr(), "/static/escape.txt", "").body, SECRET.as_bytes());
}

#[test]
fn a_symlink_inside_the_root_that_points_at_a_dotfile_is_not_served() {
    // Issue 13: the dotfile rule looked at the requested name only, so
    // `public/innocent.txt -> .env` served the dotfile.
    let fx = Fixture::new();
    let root = fx.root();
    std::fs::create_dir(root.join(".git")).unwrap();
    std::fs::write(root.join(".git/config"), SECRET).unwrap();
    std::os::unix::fs::symlink(root.join(".env"), root.join("innocent.txt")).unwrap();
    std::os::unix::fs::symlink(root.join(".git"), root.join("repo")).unwrap();
    std::os::unix::fs::symlink(".env", root.join("relative.txt")).unwrap();
    let server = start(&root, |d| d);
    for target in ["/static/innocent.txt", "/static/repo/config", "/static/relative.txt"] {
        let r = get(server.local_addr(), target, "");
        assert_eq!(r.status, 404, "{target}");
        assert!(!String::from_utf8_lossy(&r.body).contains(SECRET), "{target} leaked the dotfile");
    }
    let dotted = start(&root, |d| d.allow_dotfiles(true));
    assert_eq!(
        get(dotted.local_addr(), "/static/innocent.txt", "").body,
        SECRET.as_bytes(),
        "unless dotfiles are allowed"
    );
}

/// Set in the child process that `an_existing_file_answers_503_not_404_when_file_descriptors_run_out` starts.
const EMFILE_CHILD: &str = "KILN_TEST_EMFILE_CHILD";

#[test]
fn an_existing_file_answers_503_not_404_when_file_descriptors_run_out() {
    // Issue 13: with no descriptor left, an existing file answered 404, which a proxy
    // may cache. The descriptor limit is the process's, so the check runs in a child
    // process of this test binary with a low `ulimit -n`.
    if std::env::var_os(EMFILE_CHILD).is_some() {
        return emfile_child();
    }
    let exe = std::env::current_exe().unwrap();
    let name = "an_existing_file_answers_503_not_404_when_file_descriptors_run_out";
    let out = std::process::Command::new("sh")
        .args(["-c", "ulimit -n 256 && exec \"$0\" --exact \"$1\" --nocapture --test-threads=1"])
        .arg(&exe)
        .arg(name)
        .env(EMFILE_CHILD, "1")
        .output()
        .unwrap();
    let log = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "the child failed:\n{log}");
    assert!(log.contains("1 passed"), "the child ran no test:\n{log}");
}

fn emfile_child() {
    let fx = Fixture::new();
    let server = start(&fx.root(), |d| d);
    let addr = server.local_addr();
    // One answer first, so that the worker's runtime has its descriptors (an epoll
    // instance) before none are left; another file, so that `hello.txt` is not cached.
    assert_eq!(get(addr, "/static/sub/page.html", "").status, 200);
    let mut held = Vec::new();
    loop {
        match std::fs::File::open("/dev/null") {
            Ok(f) => held.push(f),
            Err(e) => {
                assert_eq!(e.raw_os_error(), Some(24), "expected EMFILE, got {e}");
                break;
            }
        }
    }
    // Room for exactly the client's socket and the server's accepted one: the file
    // itself cannot be opened.
    held.truncate(held.len() - 2);
    let r = get(addr, "/static/hello.txt", "");
    drop(held);
    assert_eq!((r.status, r.header("Retry-After")), (503, Some("1")), "{}", r.head);
    assert_eq!(get(addr, "/static/hello.txt", "").body, HELLO, "served again once descriptors are back");
}

#[test]
fn folders_dotfiles_and_other_methods() {
    let fx = Fixture::new();
    let server = start(&fx.root(), |d| d);
    let addr = server.local_addr();
    for target in ["/static/", "/static/sub", "/static/sub/", "/static/.env", "/static/missing.txt"] {
        assert_eq!(get(addr, target, "").status, 404, "{target}");
    }
    let r = send(addr, b"POST /static/hello.txt HTTP/1.1\r\nHost: t\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
    assert_eq!((r.status, r.header("Allow")), (405, Some("GET, HEAD")));
    let dotted = start(&fx.root(), |d| d.allow_dotfiles(true));
    assert_eq!(get(dotted.local_addr(), "/static/.env", "").status, 200);
}

#[test]
fn a_single_file_route() {
    let fx = Fixture::new();
    let server = start(&fx.root(), |d| d);
    let r = get(server.local_addr(), "/favicon.txt", "");
    assert_eq!((r.status, &r.body[..]), (200, HELLO));
    let etag = r.header("ETag").unwrap();
    assert_eq!(get(server.local_addr(), "/favicon.txt", &format!("If-None-Match: {etag}\r\n")).status, 304);
}

/// Paths below `/static/`, each an attempt to reach `secret.txt` beside the root, a
/// dotfile, or to confuse the decoder.
const HOSTILE: &[&str] = &[
    "../secret.txt",
    "sub/../../secret.txt",
    "%2e%2e/secret.txt",
    "%2E%2E/secret.txt",
    ".%2e/secret.txt",
    "%2e./secret.txt",
    "%252e%252e/secret.txt",
    "%25%32%65%25%32%65/secret.txt",
    "%c0%ae%c0%ae/secret.txt",
    "%c0%2e%c0%2e/secret.txt",
    "%e0%80%ae%e0%80%ae/secret.txt",
    "%c1%9c%c1%9c/secret.txt",
    "..%2fsecret.txt",
    "%2e%2e%2fsecret.txt",
    "..%5csecret.txt",
    "%2e%2e%5csecret.txt",
    "..\\secret.txt",
    "sub\\..\\..\\secret.txt",
    "..%255csecret.txt",
    "/../secret.txt",
    "//etc/passwd",
    "%2fetc%2fpasswd",
    "/etc/passwd",
    "sub//../../secret.txt",
    "./hello.txt",
    "hello.txt%00",
    "hello.txt%00.png",
    "%00",
    "C:/Windows/win.ini",
    "c%3a%5cwindows%5cwin.ini",
    "C%3A/secret.txt",
    "hello.txt::$DATA",
    ".env",
    "%2eenv",
    ".git/config",
    "sub/%2e%2e/%2e%2e/secret.txt",
    "%",
    "%zz",
    "%2",
    "hello.txt%0d%0aX-Injected:%20yes",
    "%ff%fe%fd",
    "....//secret.txt",
    "..;/secret.txt",
    "sub/..;/..;/secret.txt",
];

#[test]
fn hostile_paths_are_refused_over_the_socket() {
    assert!(HOSTILE.len() >= 30);
    let fx = Fixture::new();
    let server = start(&fx.root(), |d| d);
    for path in HOSTILE {
        let r = send(
            server.local_addr(),
            format!("GET /static/{path} HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n").as_bytes(),
        );
        assert!(r.status == 400 || r.status == 404, "{path}: {}", r.status);
        assert!(!String::from_utf8_lossy(&r.body).contains(SECRET), "{path} leaked the secret");
        assert!(r.header("X-Injected").is_none(), "{path} split the response");
    }
}

#[test]
fn hostile_bytes_the_parser_may_refuse_first() {
    let fx = Fixture::new();
    let server = start(&fx.root(), |d| d);
    for raw in [
        &b"GET /static/..\0/secret.txt HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n"[..],
        b"GET /static/hello.txt\0 HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n",
        b"GET /static/\xc0\xae\xc0\xae/secret.txt HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n",
        b"GET /static/..\\secret.txt HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n",
        b"GET /static/\t../secret.txt HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n",
    ] {
        let r = send(server.local_addr(), raw);
        assert!(r.status == 400 || r.status == 404, "{:?}: {}", String::from_utf8_lossy(raw), r.status);
        assert!(!String::from_utf8_lossy(&r.body).contains(SECRET));
    }
}

#[test]
fn static_refusals_are_rendered_by_the_apps_on_rejection() {
    // They were always plain text, whatever the app's renderer.
    let fx = Fixture::new();
    let app = kiln::App::new(|_worker| ())
        .static_dir("/static", fx.root())
        .static_file("/gone.txt", fx.root().join("missing.txt"))
        .on_rejection(|rejection, res| {
            res.set_status(rejection.status());
            res.set_content_type("application/json");
            res.body_mut().extend_from_slice(format!("{{\"error\":\"{rejection}\"}}").as_bytes());
        });
    let server = kiln::serve(app, Server::new().listen("127.0.0.1:0").workers(1)).unwrap();
    let addr = server.local_addr();
    for (target, status, message) in [
        ("/static/missing.txt", 404, "not found"),
        ("/static/.env", 404, "not found"),
        ("/gone.txt", 404, "not found"),
        ("/static/%2e%2e/secret.txt", 400, "dot segment in path"),
    ] {
        let r = get(addr, target, "");
        assert_eq!((r.status, r.header("Content-Type")), (status, Some("application/json")), "{target}");
        assert_eq!(String::from_utf8_lossy(&r.body), format!("{{\"error\":\"{message}\"}}"), "{target}");
    }
}

#[test]
fn an_app_serves_a_folder_and_a_file() {
    let fx = Fixture::new();
    let app = kiln::App::new(|_worker| ())
        .static_dir("/static", fx.root())
        .static_file("/favicon.txt", fx.root().join("hello.txt"));
    let server = kiln::serve(app, Server::new().listen(SocketAddr::from(([127, 0, 0, 1], 0))).workers(1)).unwrap();
    let addr = server.local_addr();
    assert_eq!(get(addr, "/static/hello.txt", "").body, HELLO);
    assert_eq!(get(addr, "/static/sub/page.html", "").body, b"<p>hi</p>");
    assert_eq!(get(addr, "/static/large.bin", "").body, large());
    assert_eq!(get(addr, "/favicon.txt", "").body, HELLO);
    let head = send(addr, b"HEAD /static/hello.txt HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n");
    assert_eq!((head.status, head.header("Content-Length"), head.body.len()), (200, Some("13"), 0));
    let post =
        send(addr, b"POST /static/hello.txt HTTP/1.1\r\nHost: t\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
    assert_eq!(post.status, 405);
    for path in HOSTILE {
        let r = get(addr, &format!("/static/{path}"), "");
        assert!(r.status == 400 || r.status == 404, "{path}: {}", r.status);
        assert!(!String::from_utf8_lossy(&r.body).contains(SECRET), "{path} leaked the secret");
    }
}
