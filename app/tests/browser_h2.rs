//! The demo over HTTPS in headless Chromium: the browser negotiates HTTP/2 by ALPN
//! (`nextHopProtocol` is `h2`), and a page's `103 Early Hints` arrive and are acted on
//! (the navigation has a first interim response, and the stylesheet the hint names
//! is fetched by the hint: its resource entry's `initiatorType` is `early-hints`).
//!
//! Chromium acts on Early Hints only over a connection it trusts, so the test's
//! self-signed certificate is trusted by its key's hash
//! (`--ignore-certificate-errors-spki-list`) rather than with errors ignored.
//!
//! A page's WebSocket goes over the same HTTP/2 connection (RFC 8441): the server
//! offers extended CONNECT, Chromium opens the socket as a stream, and the demo's
//! access log shows it as `CONNECT /ws/echo HTTP/2.0`, where an HTTP/1.1 upgrade would
//! be a `GET` on a connection of its own.
//!
//! Ignored by a plain `cargo test`, since it needs Chromium: `scripts/test` installs it
//! (`scripts/browser`) and runs this test with `--ignored`.

mod site_support;

use base64::Engine;
use kiln_test_support::TempDir;
use kiln_test_support::{Browser, shots_dir};
use rcgen::PublicKeyData;
use sha2::{Digest, Sha256};

/// What Chromium measured of the page and what it loaded, as JSON.
const TIMINGS: &str = r#"
    const nav = performance.getEntriesByType('navigation')[0];
    return {
        first: performance.getEntries()[0].nextHopProtocol,
        protocol: nav.nextHopProtocol,
        interim: nav.firstInterimResponseStart,
        resources: performance.getEntriesByType('resource').map((r) => ({
            name: new URL(r.name).pathname, initiator: r.initiatorType, protocol: r.nextHopProtocol,
        })),
    };
"#;

/// Opens a WebSocket to the page's own origin, sends a message and hands back the echo.
const WEBSOCKET_ECHO: &str = r#"
    const done = arguments[arguments.length - 1];
    const socket = new WebSocket(`wss://${location.host}/ws/echo`);
    socket.onopen = () => socket.send('over h2');
    socket.onmessage = (e) => { done({ echo: e.data, extensions: socket.extensions }); socket.close(); };
    socket.onerror = () => done({ error: 'the socket failed' });
"#;

/// The demo over HTTPS with a self-signed certificate, its access log in `dir`, and
/// Chromium trusting the certificate's key.
fn demo_and_chromium(dir: &TempDir) -> (kiln_test_support::Server, Browser) {
    let made = rcgen::generate_simple_self_signed(vec!["localhost".to_owned()]).unwrap();
    let (cert, key) = (dir.path().join("cert.pem"), dir.path().join("key.pem"));
    std::fs::write(&cert, made.cert.pem()).unwrap();
    std::fs::write(&key, made.signing_key.serialize_pem()).unwrap();
    // The SubjectPublicKeyInfo's SHA-256, in base64: what Chromium's flag takes.
    let spki =
        base64::engine::general_purpose::STANDARD.encode(Sha256::digest(made.signing_key.subject_public_key_info()));
    let log = dir.path().join("access.log");
    let args = [
        "--tls-cert",
        cert.to_str().unwrap(),
        "--tls-key",
        key.to_str().unwrap(),
        "--access-log",
        log.to_str().unwrap(),
    ];
    let server = site_support::start(&dir.sqlite_url(), &args);
    let trust = format!("--ignore-certificate-errors-spki-list={spki}");
    (server, Browser::start(shots_dir(), &[&trust]))
}

#[test]
#[ignore = "needs Chromium and chromedriver: run by scripts/test (scripts/browser installs them)"]
fn chromium_opens_the_page_s_websocket_over_h2() {
    let dir = TempDir::new("browser-h2-websocket");
    let (server, browser) = demo_and_chromium(&dir);
    browser.open(&format!("https://localhost:{}/pages/welcome", server.addr.port()));
    assert_eq!(browser.execute(TIMINGS)["protocol"], "h2");
    let seen = browser.execute_async(WEBSOCKET_ECHO);
    assert_eq!(seen["echo"], "over h2", "{seen}");
    assert!(seen["extensions"].as_str().unwrap_or_default().contains("permessage-deflate"), "{seen}");
    // The access log is written by a worker's tick: a second or so.
    let log = dir.path().join("access.log");
    let started = std::time::Instant::now();
    let lines = loop {
        let lines = std::fs::read_to_string(&log).unwrap_or_default();
        if lines.contains("/ws/echo") || started.elapsed() > std::time::Duration::from_secs(10) {
            break lines;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    };
    let socket = lines.lines().find(|l| l.contains("/ws/echo")).unwrap_or_else(|| panic!("no socket logged: {lines}"));
    assert!(socket.contains("\"CONNECT /ws/echo HTTP/2.0\" 200 "), "the socket did not come over h2: {socket}");
    browser.assert_no_console_errors("h2 websocket");
}

#[test]
#[ignore = "needs Chromium and chromedriver: run by scripts/test (scripts/browser installs them)"]
fn chromium_gets_the_demo_over_h2_and_acts_on_its_early_hints() {
    let dir = TempDir::new("browser-h2");
    let (server, browser) = demo_and_chromium(&dir);

    browser.open(&format!("https://localhost:{}/pages/welcome", server.addr.port()));
    assert_eq!(browser.text_of("article h1"), "Welcome to the kiln wiki");
    let seen = browser.execute(TIMINGS);
    assert_eq!(seen["first"], "h2", "{seen}");
    assert_eq!(seen["protocol"], "h2", "{seen}");
    assert!(seen["interim"].as_f64().is_some_and(|t| t > 0.0), "no 103 before the page: {seen}");
    let resources = seen["resources"].as_array().expect("resources");
    let stylesheet = resources.iter().find(|r| r["name"].as_str().unwrap().starts_with("/static/site."));
    let stylesheet = stylesheet.unwrap_or_else(|| panic!("the stylesheet was not loaded: {seen}"));
    assert_eq!(stylesheet["initiator"], "early-hints", "the hint did not fetch the stylesheet: {seen}");
    assert_eq!(stylesheet["protocol"], "h2", "{seen}");
    browser.screenshot("h2-welcome");
    browser.assert_no_console_errors("h2");
}
