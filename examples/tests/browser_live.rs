//! The live counter in a real browser (headless Chromium over WebDriver): a click
//! updates the page without a reload; when the server closes the socket (it stops,
//! and another starts on the same address with the same key) the page shows it is
//! disconnected, reconnects and re-mounts; with JavaScript off the page still reads.
//!
//! Ignored by a plain `cargo test`, since it needs Chromium:
//! `KILN_CHROMEDRIVER=$(scripts/browser) cargo test -p kiln-examples --test browser_live -- --ignored`.

// The WebDriver client the site's browser tests use, shared rather than copied.
#[path = "../../app/tests/browser_support/mod.rs"]
mod browser_support;
#[allow(dead_code)]
#[path = "../live_counter.rs"]
mod live_counter;

use std::net::SocketAddr;
use std::time::Duration;

use browser_support::{Browser, shots_dir};
use kiln::http::Server;
use kiln::{Key, Serving};
use kiln_test_support::poll_until;

/// How long the browser gets to do anything the test waits for (a reconnection
/// backs off up to a few seconds).
const BROWSER_WAIT: Duration = Duration::from_secs(20);

fn serve(key: &Key, addr: &str) -> Serving {
    let server = Server::new().listen(addr).workers(1);
    kiln::serve(live_counter::app(key.clone()), server).expect("the counter serves")
}

/// The view's container's classes.
fn classes(browser: &Browser) -> String {
    let value = browser.execute("return document.querySelector('[data-kiln-live]').className;");
    value.as_str().unwrap_or_default().to_owned()
}

fn wait_for_class(browser: &Browser, class: &str) {
    let found = poll_until(BROWSER_WAIT, || Some(()).filter(|()| classes(browser).split(' ').any(|c| c == class)));
    assert!(found.is_some(), "never {class}: {:?}", classes(browser));
}

fn wait_for_count(browser: &Browser, count: i64) {
    let want = format!("Count: {count}");
    let found = poll_until(BROWSER_WAIT, || Some(()).filter(|()| browser.text_of("#count") == want));
    assert!(found.is_some(), "never {want:?}: {:?}", browser.text_of("#count"));
}

#[test]
#[ignore = "needs Chromium and chromedriver: KILN_CHROMEDRIVER=$(scripts/browser) cargo test -p kiln-examples --test browser_live -- --ignored"]
fn live_counter_clicks_without_reload_and_reconnects_after_the_server_closes() {
    let key = Key::generate();
    let first = serve(&key, "127.0.0.1:0");
    let addr: SocketAddr = first.local_addr();
    let browser = Browser::start(shots_dir(), &[]);
    browser.open(&format!("http://{addr}/counter"));
    wait_for_class(&browser, "kiln-connected");
    // A reload would forget it.
    browser.execute("window.kilnTestMark = 'same page';");

    browser.click("#up");
    wait_for_count(&browser, 1);
    browser.click("#up");
    wait_for_count(&browser, 2);
    browser.click("#reset");
    wait_for_count(&browser, 0);
    browser.click("#down");
    wait_for_count(&browser, -1);
    assert_eq!(browser.execute("return window.kilnTestMark;"), "same page", "the page was reloaded");
    // (Not after the restart: Chromium logs each refused reconnection as an error.)
    browser.assert_no_console_errors("live counter");

    // The server closes the socket (1001, as it stops); the page waits, then another
    // server on the same address takes the reconnection and mounts the view afresh.
    first.shutdown();
    first.wait().expect("the first server stops");
    wait_for_class(&browser, "kiln-disconnected");
    let second = serve(&key, &addr.to_string());
    wait_for_class(&browser, "kiln-connected");
    wait_for_count(&browser, 0);
    browser.click("#up");
    wait_for_count(&browser, 1);
    assert_eq!(browser.execute("return window.kilnTestMark;"), "same page", "the page was reloaded");
    second.shutdown();
}

#[test]
#[ignore = "needs Chromium and chromedriver: KILN_CHROMEDRIVER=$(scripts/browser) cargo test -p kiln-examples --test browser_live -- --ignored"]
fn live_counter_reads_with_javascript_off() {
    let serving = serve(&Key::generate(), "127.0.0.1:0");
    let browser = Browser::start(shots_dir(), &["--blink-settings=scriptEnabled=false"]);
    browser.open(&format!("http://{}/counter", serving.local_addr()));
    assert_eq!(browser.text_of("#count"), "Count: 0");
    assert_eq!(browser.text_of("h1"), "Live counter");
    assert!(!classes(&browser).contains("kiln-connected"), "no script ran: {:?}", classes(&browser));
    serving.shutdown();
}
