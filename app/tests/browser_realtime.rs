//! Real time in a real browser (headless Chromium over WebDriver): an `EventSource`
//! receives the demo's live comments, reconnects by itself after the server restarts
//! and resumes with `Last-Event-ID`, the new server replaying from its bus's window
//! the comment posted while the browser was away; a browser `WebSocket` round-trips
//! text and binary messages through `/ws/echo`.
//!
//! Ignored by a plain `cargo test`, since it needs Chromium: `scripts/test` installs it
//! (`scripts/browser`) and runs this test with `--ignored`.

mod browser_support;
mod site_support;

use std::time::Duration;

use browser_support::relay::Relay;
use browser_support::{Browser, shots_dir};
use kiln_test_support::{Server, TempDir, poll_until};
use site_support::Visitor;

/// How long the browser gets to do anything the test waits for. Chromium's
/// `EventSource` waits about 3 s before it reconnects.
const BROWSER_WAIT: Duration = Duration::from_secs(20);

/// Listens to the tour's live comments, recording each event and each (re)open.
const LISTEN: &str = r#"
    window.live = { opens: 0, errors: 0, got: [] };
    const source = new EventSource('/pages/tour/live');
    source.onopen = () => { window.live.opens += 1; };
    source.onerror = () => { window.live.errors += 1; };
    source.onmessage = (e) => { window.live.got.push({ id: e.lastEventId, data: e.data }); };
    window.liveSource = source;
"#;

/// The events received so far: `(id, data)`, and how often the stream opened.
fn live(browser: &Browser) -> (Vec<(String, String)>, u64) {
    let value = browser.execute("return window.live;");
    let got = value["got"].as_array().expect("events").iter();
    let events = got.map(|e| (e["id"].as_str().unwrap().to_owned(), e["data"].as_str().unwrap().to_owned())).collect();
    (events, value["opens"].as_u64().expect("opens"))
}

/// Waits for an event whose data holds `needle`; returns its id.
fn event_with(browser: &Browser, needle: &str) -> String {
    let found = poll_until(BROWSER_WAIT, || live(browser).0.into_iter().find(|(_, data)| data.contains(needle)));
    found.unwrap_or_else(|| panic!("no event with {needle:?}: {:?}", live(browser))).0
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
fn an_event_source_resumes_with_last_event_id_after_the_server_restarts() {
    let dir = TempDir::new("browser-realtime");
    let database = dir.sqlite_url();
    // No drain delay: SIGTERM ends the event streams at once.
    let args = ["--drain-delay", "0"];
    let first = site_support::start(&database, &args);
    let relay = Relay::start(first.addr);
    let browser = Browser::start(shots_dir(), &[]);
    browser.open(&format!("http://{}/static/hello.txt", relay.addr));
    browser.execute(LISTEN);
    assert!(poll_until(BROWSER_WAIT, || Some(()).filter(|()| live(&browser).1 == 1)).is_some(), "never opened");

    post_comment(&first, "before the restart");
    let before = event_with(&browser, "before the restart");

    // The server restarts; the browser's reconnection waits at the relay until the
    // new server runs and a comment was posted there, so that only a replay from the
    // window can bring it.
    relay.hold();
    stop(first);
    let waiting = poll_until(BROWSER_WAIT, || Some(()).filter(|()| relay.held() > 0));
    assert!(waiting.is_some(), "the browser did not reconnect after the stream ended");
    let second = site_support::start(&database, &args);
    post_comment(&second, "while the browser was away");
    relay.forward_to(second.addr);

    let missed = event_with(&browser, "while the browser was away");
    assert!(missed.parse::<u64>().unwrap() > before.parse::<u64>().unwrap(), "ids grow: {before}, {missed}");
    let resumed = relay.requests().iter().any(|r| {
        r.starts_with("GET /pages/tour/live ")
            && r.to_ascii_lowercase().contains(&format!("last-event-id: {before}\r\n"))
    });
    assert!(resumed, "no reconnection with Last-Event-ID {before}: {:?}", relay.requests());
    let (events, opens) = live(&browser);
    assert_eq!(opens, 2, "{events:?}");
    assert_eq!(events.len(), 2, "each comment once: {events:?}");
    browser.assert_no_console_errors("event source");
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
