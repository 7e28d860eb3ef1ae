//! What the browser tests share: Debian's headless Chromium driven over WebDriver
//! (plain HTTP and JSON to `chromedriver` on 127.0.0.1), and where screenshots go.
//!
//! The tests that use it are ignored by a plain `cargo test`, since they need
//! Chromium: `scripts/test` installs it (`scripts/browser`) and runs them with
//! `--ignored`. `KILN_CHROMEDRIVER` names the driver (default: `chromedriver` on the
//! `PATH`). [`Relay`](relay::Relay) sits between a browser and the server under test.

pub(crate) mod relay;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use crate::poll_until;
use serde_json::{Value, json};

/// The W3C WebDriver key of an element reference.
const ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";

/// A `chromedriver` process and one browser session in it, both ended on drop.
pub struct Browser {
    driver: Child,
    addr: SocketAddr,
    session: String,
    /// Where its screenshots go.
    pub shots: PathBuf,
}

impl Browser {
    /// Starts the driver and a session; `args` go to Chromium after the defaults.
    pub fn start(shots: PathBuf, args: &[&str]) -> Browser {
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
        let defaults = [
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--window-size=1100,900",
            "--no-first-run",
            "--disable-extensions",
        ];
        let chromium_args: Vec<&str> = defaults.iter().chain(args).copied().collect();
        let capabilities = json!({"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {"args": chromium_args},
            "goog:loggingPrefs": {"browser": "ALL"},
        }}});
        let value = browser.call("POST", "/session", Some(capabilities));
        browser.session = value["sessionId"].as_str().expect("a session id").to_owned();
        // Finding an element waits for it up to five seconds: a page may still be loading.
        browser.call("POST", "/timeouts", Some(json!({"implicit": 5000})));
        browser
    }

    /// One WebDriver command; its `value`, or a panic naming the error.
    pub fn call(&self, method: &str, path: &str, body: Option<Value>) -> Value {
        let path = if path == "/session" { path.to_owned() } else { format!("/session/{}{path}", self.session) };
        let body = body.map(|b| b.to_string()).unwrap_or_default();
        let (status, reply) =
            exchange(self.addr, method, &path, &body).unwrap_or_else(|e| panic!("WebDriver {method} {path}: {e}"));
        let answer: Value = serde_json::from_slice(&reply).unwrap_or_else(|e| panic!("{path}: {e}"));
        assert_eq!(status, 200, "WebDriver {method} {path}: {answer}");
        answer["value"].clone()
    }

    /// Navigates to `url`.
    pub fn open(&self, url: &str) {
        self.call("POST", "/url", Some(json!({"url": url})));
    }

    /// The element matching `css` (its WebDriver reference); panics if none.
    pub fn find(&self, css: &str) -> String {
        let value = self.call("POST", "/element", Some(json!({"using": "css selector", "value": css})));
        value[ELEMENT].as_str().unwrap_or_else(|| panic!("no element {css}")).to_owned()
    }

    /// Clicks the element matching `css`.
    pub fn click(&self, css: &str) {
        let element = self.find(css);
        self.call("POST", &format!("/element/{element}/click"), Some(json!({})));
    }

    /// Empties the field matching `css` and types `text` into it, key by key.
    pub fn clear_and_type(&self, css: &str, text: &str) {
        let element = self.find(css);
        self.call("POST", &format!("/element/{element}/clear"), Some(json!({})));
        self.call("POST", &format!("/element/{element}/value"), Some(json!({"text": text})));
    }

    /// The page's URL now.
    pub fn url(&self) -> String {
        self.call("GET", "/url", None).as_str().expect("url").to_owned()
    }

    /// Waits (at most ten seconds) for a page whose URL `fits`: a click's navigation
    /// may still be under way when the click returns.
    pub fn wait_for(&self, what: &str, fits: impl Fn(&str) -> bool) -> String {
        poll_until(Duration::from_secs(10), || Some(self.url()).filter(|url| fits(url)))
            .unwrap_or_else(|| panic!("never reached {what}: still at {}", self.url()))
    }

    /// Waits for the page at exactly `url`.
    pub fn wait_for_url(&self, url: &str) {
        self.wait_for(url, |at| at == url);
    }

    /// The page's HTML as the browser now has it.
    pub fn source(&self) -> String {
        self.call("GET", "/source", None).as_str().expect("source").to_owned()
    }

    /// The text of the element matching `css`.
    pub fn text_of(&self, css: &str) -> String {
        let element = self.find(css);
        self.call("GET", &format!("/element/{element}/text"), None).as_str().expect("text").to_owned()
    }

    /// Saves a screenshot as `name.png`, and returns its path.
    pub fn screenshot(&self, name: &str) -> PathBuf {
        let png = base64(self.call("GET", "/screenshot", None).as_str().expect("base64"));
        assert!(png.starts_with(b"\x89PNG"), "a PNG");
        let path = self.shots.join(format!("{name}.png"));
        std::fs::write(&path, png).expect("write the screenshot");
        path
    }

    /// Runs `script` (a function body; `return` gives the result) in the page.
    pub fn execute(&self, script: &str) -> Value {
        self.call("POST", "/execute/sync", Some(json!({"script": script, "args": []})))
    }

    /// Runs `script` in the page and waits for it to call its last argument (the
    /// callback `arguments[arguments.length - 1]`) with the result; at most the
    /// driver's script timeout (30 s by default).
    pub fn execute_async(&self, script: &str) -> Value {
        self.call("POST", "/execute/async", Some(json!({"script": script, "args": []})))
    }

    /// Fails on any message the console logged at error level since the last call.
    pub fn assert_no_console_errors(&self, step: &str) {
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

/// Where the screenshots go: `target/browser-test/`, beside the test binary's
/// `target/debug/deps/`.
pub fn shots_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary's path");
    let dir = exe.ancestors().nth(3).expect("the target dir").join("browser-test");
    std::fs::create_dir_all(&dir).expect("the screenshots' folder");
    dir
}
