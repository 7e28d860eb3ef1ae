//! The demo site in a real browser: Debian's headless Chromium driven over WebDriver
//! (plain HTTP and JSON to `chromedriver` on 127.0.0.1). Opens the home page, follows
//! a link, posts a comment and sees it, sees another visitor's comment appear without
//! a reload, logs in, edits a page with a preview and sees the change; saves a
//! screenshot of each step in `target/browser-test/`, and fails on any message the
//! browser's console logs at error level.
//!
//! Ignored by a plain `cargo test`, since it needs Chromium: `scripts/test` installs it
//! (`scripts/browser`) and runs this test with `--ignored`. `KILN_CHROMEDRIVER` names
//! the driver (default: `chromedriver` on the `PATH`).

mod site_support;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use kiln_test_support::poll_until;
use serde_json::{Value, json};
use site_support::{PASSWORD, Site};

/// The W3C WebDriver key of an element reference.
const ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";

/// A `chromedriver` process and one browser session in it, both ended on drop.
struct Browser {
    driver: Child,
    addr: SocketAddr,
    session: String,
    shots: PathBuf,
}

impl Browser {
    fn start(shots: PathBuf) -> Browser {
        let port = TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).expect("a free port").port();
        let program = std::env::var("KILN_CHROMEDRIVER").unwrap_or_else(|_| "chromedriver".into());
        let driver = Command::new(&program)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("start {program} (scripts/browser installs it): {e}"));
        let addr = SocketAddr::from(([127, 0, 0, 1], port));
        let mut browser = Browser { driver, addr, session: String::new(), shots };
        let ready =
            poll_until(Duration::from_secs(20), || exchange(addr, "GET", "/status", "").ok().filter(|r| r.0 == 200));
        assert!(ready.is_some(), "chromedriver did not answer on {addr}");
        let capabilities = json!({"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {"args": [
                "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--window-size=1100,900", "--no-first-run", "--disable-extensions",
            ]},
            "goog:loggingPrefs": {"browser": "ALL"},
        }}});
        let value = browser.call("POST", "/session", Some(capabilities));
        browser.session = value["sessionId"].as_str().expect("a session id").to_owned();
        // Finding an element waits for it up to five seconds: a page may still be loading.
        browser.call("POST", "/timeouts", Some(json!({"implicit": 5000})));
        browser
    }

    /// One WebDriver command; its `value`, or a panic naming the error.
    fn call(&self, method: &str, path: &str, body: Option<Value>) -> Value {
        let path = if path == "/session" { path.to_owned() } else { format!("/session/{}{path}", self.session) };
        let body = body.map(|b| b.to_string()).unwrap_or_default();
        let (status, reply) =
            exchange(self.addr, method, &path, &body).unwrap_or_else(|e| panic!("WebDriver {method} {path}: {e}"));
        let answer: Value = serde_json::from_slice(&reply).unwrap_or_else(|e| panic!("{path}: {e}"));
        assert_eq!(status, 200, "WebDriver {method} {path}: {answer}");
        answer["value"].clone()
    }

    fn open(&self, url: &str) {
        self.call("POST", "/url", Some(json!({"url": url})));
    }

    fn find(&self, css: &str) -> String {
        let value = self.call("POST", "/element", Some(json!({"using": "css selector", "value": css})));
        value[ELEMENT].as_str().unwrap_or_else(|| panic!("no element {css}")).to_owned()
    }

    fn click(&self, css: &str) {
        let element = self.find(css);
        self.call("POST", &format!("/element/{element}/click"), Some(json!({})));
    }

    fn clear_and_type(&self, css: &str, text: &str) {
        let element = self.find(css);
        self.call("POST", &format!("/element/{element}/clear"), Some(json!({})));
        self.call("POST", &format!("/element/{element}/value"), Some(json!({"text": text})));
    }

    fn url(&self) -> String {
        self.call("GET", "/url", None).as_str().expect("url").to_owned()
    }

    /// Waits (at most ten seconds) for a page whose URL `fits`: a click's navigation
    /// may still be under way when the click returns.
    fn wait_for(&self, what: &str, fits: impl Fn(&str) -> bool) -> String {
        poll_until(Duration::from_secs(10), || Some(self.url()).filter(|url| fits(url)))
            .unwrap_or_else(|| panic!("never reached {what}: still at {}", self.url()))
    }

    /// Waits for the page at exactly `url`.
    fn wait_for_url(&self, url: &str) {
        self.wait_for(url, |at| at == url);
    }

    fn source(&self) -> String {
        self.call("GET", "/source", None).as_str().expect("source").to_owned()
    }

    fn text_of(&self, css: &str) -> String {
        let element = self.find(css);
        self.call("GET", &format!("/element/{element}/text"), None).as_str().expect("text").to_owned()
    }

    /// Saves a screenshot as `name.png`, and returns its path.
    fn screenshot(&self, name: &str) -> PathBuf {
        let png = base64(self.call("GET", "/screenshot", None).as_str().expect("base64"));
        assert!(png.starts_with(b"\x89PNG"), "a PNG");
        let path = self.shots.join(format!("{name}.png"));
        std::fs::write(&path, png).expect("write the screenshot");
        path
    }

    /// Fails on any message the console logged at error level since the last call.
    fn assert_no_console_errors(&self, step: &str) {
        let logs = self.call("POST", "/se/log", Some(json!({"type": "browser"})));
        let errors: Vec<&Value> =
            logs.as_array().expect("log entries").iter().filter(|e| e["level"] == "SEVERE").collect();
        assert!(errors.is_empty(), "{step}: the console logged errors: {errors:?}");
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        if !self.session.is_empty() {
            let _ = exchange(self.addr, "DELETE", &format!("/session/{}", self.session), "");
        }
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}

/// One HTTP/1.1 request to chromedriver and its response, read by `Content-Length`
/// (chromedriver keeps connections open whatever `Connection` says).
fn exchange(addr: SocketAddr, method: &str, path: &str, body: &str) -> std::io::Result<(u16, Vec<u8>)> {
    let timeout = Some(Duration::from_secs(60));
    let mut stream = TcpStream::connect_timeout(&addr, Duration::from_secs(5))?;
    stream.set_read_timeout(timeout)?;
    stream.set_write_timeout(timeout)?;
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )?;
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    reader.read_line(&mut line)?;
    let status =
        line.split(' ').nth(1).and_then(|s| s.parse().ok()).ok_or_else(|| std::io::Error::other(line.clone()))?;
    let mut length = 0;
    loop {
        line.clear();
        reader.read_line(&mut line)?;
        if line.trim().is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':') {
            if name.eq_ignore_ascii_case("content-length") {
                length = value.trim().parse().map_err(std::io::Error::other)?;
            }
        }
    }
    let mut reply = vec![0; length];
    reader.read_exact(&mut reply)?;
    Ok((status, reply))
}

/// Standard base64, as WebDriver sends screenshots.
fn base64(text: &str) -> Vec<u8> {
    let digit = |c: u8| match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        b'/' => 63,
        _ => panic!("not base64: {c}"),
    };
    let clean: Vec<u8> = text.bytes().filter(|&c| c != b'=' && !c.is_ascii_whitespace()).collect();
    let mut out = Vec::with_capacity(clean.len() * 3 / 4);
    for chunk in clean.chunks(4) {
        let n = chunk.iter().enumerate().fold(0u32, |n, (i, &c)| n | u32::from(digit(c)) << (18 - 6 * i));
        out.extend_from_slice(&n.to_be_bytes()[1..chunk.len()]);
    }
    out
}

/// Where the screenshots go: `target/browser-test/`.
fn shots_dir() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).parent().expect("the target dir").join("browser-test");
    std::fs::create_dir_all(&dir).expect("the screenshots' folder");
    dir
}

#[test]
#[ignore = "needs Chromium and chromedriver: run by scripts/test (scripts/browser installs them)"]
fn a_visitor_and_the_editor_in_a_real_browser() {
    let site = Site::sqlite("browser", &[]);
    let base = format!("http://{}", site.server.addr);
    let browser = Browser::start(shots_dir());

    // The home page, and a link followed.
    browser.open(&format!("{base}/"));
    assert_eq!(browser.text_of("main h1"), "Pages");
    let home = browser.screenshot("1-home");
    browser.assert_no_console_errors("home");
    browser.click("a[href='/pages/tour']");
    browser.wait_for_url(&format!("{base}/pages/tour"));
    assert_eq!(browser.text_of("article h1"), "A tour of kiln");
    browser.screenshot("2-page");
    browser.assert_no_console_errors("page");

    // A comment posted through the form, then seen on the page.
    browser.clear_and_type("#author", "Browser <test>");
    browser.clear_and_type("#body", "Posted from headless Chromium.");
    browser.click("form.comment button[type='submit']");
    let commented = format!("{base}/pages/tour#c");
    browser.wait_for(&commented, |url| url.starts_with(&commented));
    assert_eq!(browser.text_of("ol.comments li:last-child strong"), "Browser <test>");
    assert_eq!(browser.text_of("ol.comments li:last-child p.text"), "Posted from headless Chromium.");
    browser.screenshot("3-commented");
    browser.assert_no_console_errors("comment");

    // Live: a comment another visitor posts appears on the open page without a reload.
    let mut other = site.visitor();
    let token = other.token("/pages/tour");
    let fields = [("csrf_token", token.as_str()), ("author", "Live visitor"), ("body", "Seen without a reload.")];
    assert_eq!(other.post("/pages/tour/comments", &fields).status, 303);
    let live = poll_until(Duration::from_secs(10), || {
        Some(browser.text_of("ol.comments li:last-child strong")).filter(|author| author == "Live visitor")
    });
    assert!(live.is_some(), "the comment did not appear on the open page");
    assert_eq!(browser.text_of("#comments h2"), "Comments (22)");
    assert!(browser.url().starts_with(&commented), "no reload: {}", browser.url());
    browser.screenshot("3b-live");
    browser.assert_no_console_errors("live comment");

    // The editor: log in, edit a page with a preview, see the change.
    browser.click("header.site a[href='/editor']");
    browser.wait_for_url(&format!("{base}/login"));
    browser.clear_and_type("#password", PASSWORD);
    browser.click("form button[type='submit']");
    browser.wait_for_url(&format!("{base}/editor"));
    browser.click("a[href='/editor/pages/welcome']");
    browser.clear_and_type("#title", "Welcome, edited in a browser");
    browser.clear_and_type("#body", "This page was **edited** in headless Chromium.");
    browser.click("button[value='preview']");
    assert_eq!(browser.text_of("#preview strong"), "edited");
    browser.screenshot("4-preview");
    browser.click("button[value='save']");
    browser.wait_for_url(&format!("{base}/pages/welcome"));
    assert_eq!(browser.text_of("article h1"), "Welcome, edited in a browser");
    assert!(browser.source().contains("<strong>edited</strong>"));
    browser.screenshot("5-edited");
    browser.open(&format!("{base}/"));
    assert!(browser.source().contains("Welcome, edited in a browser"));
    browser.assert_no_console_errors("editor");

    // Logged out, the editor is behind the login again.
    browser.open(&format!("{base}/editor"));
    browser.click("form.inline button[type='submit']");
    browser.wait_for_url(&format!("{base}/"));
    browser.open(&format!("{base}/editor"));
    browser.wait_for_url(&format!("{base}/login"));
    browser.assert_no_console_errors("logout");
    eprintln!("screenshots in {} (the home page: {})", browser.shots.display(), home.display());
}
