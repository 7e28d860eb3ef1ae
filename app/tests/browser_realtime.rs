//! Real time in a real browser (headless Chromium over WebDriver): a wiki page's live
//! view reconnects by itself after the server restarts and re-mounts on the new
//! server, showing the comment posted while the browser was away, without a reload;
//! a browser `WebSocket` round-trips text and binary messages through `/ws/echo`.
//!
//! Ignored by a plain `cargo test`, since it needs Chromium: `scripts/test` installs it
//! (`scripts/browser`) and runs this test with `--ignored`.

mod site_support;

use std::time::Duration;

use kiln_test_support::Relay;
use kiln_test_support::{Browser, shots_dir};
use kiln_test_support::{Server, TempDir, poll_until};
use site_support::Visitor;

/// How long the browser gets to do anything the test waits for (a hang guard).
const BROWSER_WAIT: Duration = Duration::from_secs(20);

/// The authors of the comments the page lists, in order.
fn authors(browser: &Browser) -> Vec<String> {
    let value = browser
        .execute("return Array.from(document.querySelectorAll('ol.comments li p.text')).map((p) => p.textContent);");
    value.as_array().expect("texts").iter().map(|t| t.as_str().unwrap().to_owned()).collect()
}

/// Waits until the page lists a comment reading `text`.
fn comment_shown(browser: &Browser, text: &str) {
    let shown = poll_until(BROWSER_WAIT, || Some(()).filter(|()| authors(browser).iter().any(|t| t == text)));
    assert!(shown.is_some(), "no comment {text:?} on the page: {:?}", authors(browser));
}

/// Whether the page's live view is connected.
fn connected(browser: &Browser) -> bool {
    browser.execute("return !!document.querySelector('.kiln-connected');") == true
}

fn post_comment(server: &Server, body: &str) {
    let mut visitor = Visitor { addr: server.addr, cookies: Default::default() };
    let token = visitor.token("/pages/tour");
    let fields = [("csrf_token", token.as_str()), ("author", "Chromium test"), ("body", body)];
    assert_eq!(visitor.post("/pages/tour/comments", &fields).status, 303);
}

/// SIGTERM, and the process's exit (within the test's bound).
fn stop(mut server: Server) {
    let pid = nix::unistd::Pid::from_raw(server.child.id() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
    let exited = poll_until(BROWSER_WAIT, || server.child.try_wait().unwrap());
    assert!(exited.is_some_and(|s| s.success()), "the server did not stop cleanly: {exited:?}");
}

#[test]
#[ignore = "needs Chromium and chromedriver: run by scripts/test (scripts/browser installs them)"]
fn a_live_page_reconnects_after_the_server_restarts_and_shows_what_it_missed() {
    let dir = TempDir::new("browser-realtime");
    let database = dir.sqlite_url();
    // No drain delay: SIGTERM closes the sockets at once. One key for both servers, as
    // a deployment keeps it: the page's token holds on the new one.
    let args = ["--drain-delay", "0", "--secret-key", "a secret of the browser test, 32 bytes or more"];
    let first = site_support::start(&database, &args);
    let relay = Relay::start(first.addr);
    let browser = Browser::start(shots_dir(), &[]);
    browser.open(&format!("http://{}/pages/tour", relay.addr));
    assert!(poll_until(BROWSER_WAIT, || Some(()).filter(|()| connected(&browser))).is_some(), "never connected");
    // Gone if the page reloads.
    browser.execute("window.notReloaded = true;");

    post_comment(&first, "before the restart");
    comment_shown(&browser, "before the restart");

    // The server restarts; the browser's reconnection waits at the relay until the
    // new server runs and a comment was posted there, so that only the view mounted
    // again on the new server can show it.
    relay.hold();
    stop(first);
    let waiting = poll_until(BROWSER_WAIT, || Some(()).filter(|()| relay.held() > 0));
    assert!(waiting.is_some(), "the browser did not reconnect after the socket closed");
    assert!(!connected(&browser), "the page shows it is disconnected");
    let second = site_support::start(&database, &args);
    post_comment(&second, "while the browser was away");
    relay.forward_to(second.addr);

    comment_shown(&browser, "while the browser was away");
    assert!(poll_until(BROWSER_WAIT, || Some(()).filter(|()| connected(&browser))).is_some(), "connected again");
    assert_eq!(browser.execute("return window.notReloaded === true;"), true, "no reload");
    let shown = authors(&browser);
    assert_eq!(shown.iter().filter(|t| *t == "before the restart").count(), 1, "each comment once: {shown:?}");
    let reconnected = relay.requests().iter().filter(|r| r.starts_with("GET /pages/tour ")).count();
    assert!(reconnected >= 2, "the page, then its sockets: {:?}", relay.requests());
    browser.assert_no_console_errors("live view");
}

/// Sends a text and a binary message (a large one too, which Chromium compresses with
/// permessage-deflate) and reports what came back, and how.
const ECHO: &str = r#"
    const done = arguments[arguments.length - 1];
    const ws = new WebSocket(arguments[0]);
    ws.binaryType = 'arraybuffer';
    const big = 'kiln '.repeat(6000);
    const sent = ['héllo, wörld ✓', new Uint8Array([0, 1, 2, 127, 128, 254, 255]), big];
    const got = [];
    ws.onopen = () => sent.forEach((m) => ws.send(m));
    ws.onmessage = (e) => {
        got.push(typeof e.data === 'string' ? { text: e.data } : { binary: Array.from(new Uint8Array(e.data)) });
        if (got.length === sent.length) {
            ws.close(1000);
        }
    };
    ws.onclose = (e) => done({ got, code: e.code, clean: e.wasClean, extensions: ws.extensions, big: big });
    ws.onerror = () => done({ error: true, got });
"#;

#[test]
#[ignore = "needs Chromium and chromedriver: run by scripts/test (scripts/browser installs them)"]
fn a_browser_websocket_round_trips_text_and_binary() {
    let dir = TempDir::new("browser-websocket");
    let server = site_support::start(&dir.sqlite_url(), &[]);
    let browser = Browser::start(shots_dir(), &[]);
    browser.open(&format!("http://{}/static/hello.txt", server.addr));
    let script = ECHO.replacen("arguments[0]", &format!("'ws://{}/ws/echo'", server.addr), 1);
    let result = browser.execute_async(&script);
    assert!(result["error"].is_null(), "{result}");
    let got = result["got"].as_array().expect("messages");
    assert_eq!(got.len(), 3, "{result}");
    assert_eq!(got[0], serde_json::json!({"text": "héllo, wörld ✓"}));
    assert_eq!(got[1], serde_json::json!({"binary": [0, 1, 2, 127, 128, 254, 255]}));
    assert_eq!(got[2]["text"], result["big"], "the large message whole");
    assert_eq!((result["code"].as_u64(), result["clean"].as_bool()), (Some(1000), Some(true)), "{result}");
    let extensions = result["extensions"].as_str().unwrap_or_default();
    assert!(extensions.starts_with("permessage-deflate"), "negotiated: {extensions:?}");
    browser.assert_no_console_errors("websocket");
}
