//! The demo's live views in a real browser (headless Chromium over WebDriver): the
//! editor's preview follows the author's typing, rendered on the server, while the
//! textarea keeps its text and caret; two browsers on one wiki page count each other
//! as readers and see each other's comment within a second, also when each is served
//! by its own process and the two share PostgreSQL (`KILN_PG_URL`).
//!
//! Ignored by a plain `cargo test`, since it needs Chromium:
//! `KILN_CHROMEDRIVER=$(scripts/browser) cargo test -p kiln-demo --test browser_live_site -- --ignored`.

mod site_support;

use std::net::SocketAddr;
use std::time::Duration;

use kiln_test_support::{Browser, shots_dir};
use kiln_test_support::{pg_url, poll_until};
use site_support::{PASSWORD, Site};

/// A hang guard only: every wait ends as soon as the page shows what it waits for.
const BROWSER_WAIT: Duration = Duration::from_secs(20);

/// Waits until the page's live view is connected.
fn wait_connected(browser: &Browser) {
    let connected = poll_until(BROWSER_WAIT, || {
        Some(()).filter(|()| browser.execute("return !!document.querySelector('.kiln-connected');") == true)
    });
    assert!(connected.is_some(), "the page's live view did not connect");
}

/// Waits until `script` (a function body) returns something other than `null`.
fn wait_for(browser: &Browser, what: &str, script: &str) -> serde_json::Value {
    let found = poll_until(BROWSER_WAIT, || Some(browser.execute(script)).filter(|v| !v.is_null()));
    found.unwrap_or_else(|| panic!("{what}: never happened"))
}

#[test]
#[ignore = "needs Chromium and chromedriver: run by scripts/test (scripts/browser installs them)"]
fn typing_in_the_editor_updates_the_preview_and_the_textarea_keeps_its_caret() {
    let site = Site::sqlite("browser-preview", &[]);
    let base = format!("http://{}", site.server.addr);
    let browser = Browser::start(shots_dir(), &[]);
    browser.open(&format!("{base}/login"));
    browser.clear_and_type("#password", PASSWORD);
    browser.click("form button[type='submit']");
    browser.wait_for_url(&format!("{base}/editor"));
    browser.open(&format!("{base}/editor/pages/welcome"));
    wait_connected(&browser);
    assert_eq!(browser.execute("return document.getElementById('preview');"), serde_json::Value::Null);

    // Typed as keys: each an `input` event; the preview follows, rendered on the server.
    let typed = "Live **preview** here";
    browser.clear_and_type("#body", typed);
    wait_for(
        &browser,
        "the preview",
        "const b = document.querySelector('#preview strong'); return b && b.textContent === 'preview' ? true : null;",
    );
    let state = browser.execute(
        "const t = document.getElementById('body'); \
         return { focused: document.activeElement === t, value: t.value, caret: t.selectionStart };",
    );
    assert_eq!(state["focused"], true, "{state}");
    assert_eq!(state["value"], typed, "the server never writes the textarea: {state}");
    assert_eq!(state["caret"], typed.len(), "{state}");

    // The caret placed mid-text, then more typed: the patch leaves it where it was.
    browser.execute(
        "const t = document.getElementById('body'); t.focus(); t.value += ' and _more_'; t.setSelectionRange(4, 4); \
         t.dispatchEvent(new Event('input', { bubbles: true }));",
    );
    wait_for(
        &browser,
        "the second preview",
        "const e = document.querySelector('#preview em'); return e && e.textContent === 'more' ? true : null;",
    );
    let state = browser.execute(
        "const t = document.getElementById('body'); \
         return { focused: document.activeElement === t, value: t.value, start: t.selectionStart, end: t.selectionEnd };",
    );
    assert_eq!(state["focused"], true, "{state}");
    assert_eq!(state["value"], format!("{typed} and _more_"), "{state}");
    assert_eq!((state["start"].as_u64(), state["end"].as_u64()), (Some(4), Some(4)), "the caret stays: {state}");
    browser.screenshot("live-preview");

    // Saved as before: the preview saved nothing, Save does.
    browser.click("button[value='save']");
    browser.wait_for_url(&format!("{base}/pages/welcome"));
    assert_eq!(browser.text_of("article strong"), "preview");
    browser.assert_no_console_errors("live preview");
}

/// Two browsers on `/pages/comments`, the first served by `first`, the second by
/// `second`: each counts two readers, and a comment posted in one shows in the other
/// within a second of the click.
fn two_browsers_see_each_others_comment(first: SocketAddr, second: SocketAddr, author: &str) {
    let (one, two) = (Browser::start(shots_dir(), &[]), Browser::start(shots_dir(), &[]));
    one.open(&format!("http://{first}/pages/comments"));
    two.open(&format!("http://{second}/pages/comments"));
    wait_connected(&one);
    wait_connected(&two);
    for browser in [&one, &two] {
        let readers = "const p = document.querySelector('p.readers'); \
                       return p && p.textContent.startsWith('2 readers') ? p.textContent : null;";
        wait_for(browser, "two readers counted", readers);
    }

    // The second page notes when the comment shows (one clock: one machine).
    two.execute(&format!(
        "window.seen = null; new MutationObserver(() => {{ \
           if (window.seen === null && document.querySelector('ol.comments').textContent.includes({author:?})) \
             window.seen = Date.now(); \
         }}).observe(document.getElementById('comments'), {{ childList: true, subtree: true, characterData: true }});"
    ));
    one.clear_and_type("#author", author);
    one.clear_and_type("#body", "Seen by the other reader at once.");
    let clicked = one.execute("document.querySelector('form.comment button[type=submit]').click(); return Date.now();");
    let seen = wait_for(&two, "the comment in the other browser", "return window.seen;");
    let latency = seen.as_i64().unwrap() - clicked.as_i64().unwrap();
    eprintln!("a comment reached the other browser {latency} ms after the click");
    assert!(latency < 1000, "within a second: {latency} ms");
    let mine = "const s = document.querySelector('ol.comments li:last-child strong'); return s ? s.textContent : null;";
    assert_eq!(wait_for(&one, "the comment in its own page", mine), author);
    assert_eq!(one.execute("return document.getElementById('author').value;"), "", "the form is emptied once sent");
    two.screenshot("live-comment");
    one.assert_no_console_errors("comment sent");
    two.assert_no_console_errors("comment seen");

    // One reader goes: the other counts one.
    drop(one);
    let alone = "const p = document.querySelector('p.readers'); \
                 return p && p.textContent.startsWith('1 reader ') ? true : null;";
    wait_for(&two, "one reader left", alone);
}

#[test]
#[ignore = "needs Chromium and chromedriver: run by scripts/test (scripts/browser installs them)"]
fn two_browsers_on_one_wiki_page_see_each_others_comment_within_a_second() {
    let site = Site::sqlite("browser-live-comments", &[]);
    two_browsers_see_each_others_comment(site.server.addr, site.server.addr, "First reader");
}

#[test]
#[ignore = "needs Chromium and chromedriver: run by scripts/test (scripts/browser installs them)"]
fn two_browsers_served_by_two_processes_sharing_postgres_see_each_others_comment() {
    let Some(base) = pg_url("browser_live_site::two_processes") else { return };
    let site = Site::postgres(&base, "browser_live", &[]);
    let other = site_support::start(&site.database, &[]);
    two_browsers_see_each_others_comment(site.server.addr, other.addr, "Reader on another process");
}
