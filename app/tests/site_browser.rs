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

use std::time::Duration;

use kiln_test_support::poll_until;
use kiln_test_support::{Browser, shots_dir};
use site_support::{PASSWORD, Site};

#[test]
#[ignore = "needs Chromium and chromedriver: run by scripts/test (scripts/browser installs them)"]
fn a_visitor_and_the_editor_in_a_real_browser() {
    let site = Site::sqlite("browser", &[]);
    let base = format!("http://{}", site.server.addr);
    let browser = Browser::start(shots_dir(), &[]);

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

    // A comment posted through the form, over the page's socket once it is live, then
    // seen on the page, without a reload.
    let page = format!("{base}/pages/tour");
    let connected = poll_until(Duration::from_secs(10), || {
        Some(()).filter(|()| browser.execute("return !!document.querySelector('.kiln-connected');") == true)
    });
    assert!(connected.is_some(), "the page's live view did not connect");
    browser.clear_and_type("#author", "Browser <test>");
    browser.clear_and_type("#body", "Posted from headless Chromium.");
    browser.click("form.comment button[type='submit']");
    let posted = poll_until(Duration::from_secs(10), || {
        Some(browser.text_of("ol.comments li:last-child strong")).filter(|author| author == "Browser <test>")
    });
    assert!(posted.is_some(), "the comment did not appear");
    assert_eq!(browser.url(), page, "no reload");
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
    assert_eq!(browser.url(), page, "no reload");
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
