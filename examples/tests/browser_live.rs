//! The live examples in a real browser (headless Chromium over WebDriver): a click
//! updates the counter without a reload; when the server closes the socket (it stops,
//! and another starts on the same address with the same key) the page shows it is
//! disconnected, reconnects and re-mounts; with JavaScript off the page still reads.
//! The table sorts (keyed moves applied by the client script), filters as the reader
//! types without losing the field's focus or caret, and takes pushed scores without
//! moving the rows the reader sees, each row keeping its element as it moves. Where
//! WebSocket is refused, the page falls back to an event stream and clicks still
//! update it; a page that forces the stream never asks for a WebSocket. Two browsers in one chat room see each other's lines (across two workers).
//!
//! Ignored by a plain `cargo test`, since it needs Chromium:
//! `KILN_CHROMEDRIVER=$(scripts/browser) cargo test -p kiln-examples --test browser_live -- --ignored`.

#[allow(dead_code)]
#[path = "../live_chat.rs"]
mod live_chat;
#[allow(dead_code)]
#[path = "../live_counter.rs"]
mod live_counter;
#[allow(dead_code)]
#[path = "../live_table.rs"]
mod live_table;

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use kiln::http::{Request, Response, Server};
use kiln::live::{Live, LiveSocket, LiveView};
use kiln::markup::{self, Document, Fragment};
use kiln::middleware::{Flow, Middleware};
use kiln::{App, Key, MakeService, Rejection, RequestContext, Route, Serving, StatusCode, html, live_html};
use kiln_test_support::poll_until;
use kiln_test_support::{Browser, shots_dir};
use serde::{Deserialize, Serialize};

/// How long the browser gets to do anything the test waits for (a reconnection
/// backs off up to a few seconds).
const BROWSER_WAIT: Duration = Duration::from_secs(20);

fn serve(key: &Key, addr: &str) -> Serving {
    let server = Server::new().listen(addr).workers(1);
    kiln::serve(live_counter::app(key.clone()), server).expect("the counter serves")
}

/// Polls `check` (a script returning true once the page is as wanted).
fn wait_until(browser: &Browser, what: &str, check: &str) {
    let found = poll_until(BROWSER_WAIT, || Some(()).filter(|()| browser.execute(check) == true));
    assert!(found.is_some(), "never {what}: {}", browser.execute(ROWS));
}

/// Posts to the app at `addr` (a score for the table).
fn post(addr: SocketAddr, target: &str) {
    let raw = format!("POST {target} HTTP/1.1\r\nHost: t\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
    assert_eq!(kiln_test_support::request(addr, &raw).expect("posted").text(), "posted");
}

/// The table's rows as `[name, score]`.
const ROWS: &str =
    "return Array.from(document.querySelectorAll('tbody tr'), (tr) => Array.from(tr.cells, (td) => td.textContent));";

/// The name in the row at the top of the window.
const IN_VIEW: &str = "return document.elementFromPoint(10, 10).closest('tr').cells[0].textContent;";

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

/// A proxy that refuses WebSocket: every upgrade is answered 403.
struct NoWebSocket;

impl Middleware for NoWebSocket {
    type Carry = ();

    fn before(&self, req: &Request<'_>, res: &mut Response) -> Flow<()> {
        if req.header("upgrade").is_none() {
            return Flow::Continue(());
        }
        res.set_status(StatusCode::FORBIDDEN);
        Flow::Respond
    }

    fn after(&self, _: &Request<'_>, _: &mut Response, _: ()) {}
}

#[test]
#[ignore = "needs Chromium and chromedriver: KILN_CHROMEDRIVER=$(scripts/browser) cargo test -p kiln-examples --test browser_live -- --ignored"]
fn live_counter_falls_back_to_an_event_stream_where_websocket_is_refused() {
    let app = live_counter::app(Key::generate()).build().expect("the counter builds").wrap(|_| NoWebSocket);
    let serving = kiln::serve(app, Server::new().listen("127.0.0.1:0").workers(2)).expect("the counter serves");
    let browser = Browser::start(shots_dir(), &[]);
    browser.open(&format!("http://{}/counter", serving.local_addr()));
    wait_for_class(&browser, "kiln-connected");
    browser.execute("window.kilnTestMark = 'same page';");
    for count in 1..=3 {
        browser.click("#up");
        wait_for_count(&browser, count);
    }
    browser.click("#reset");
    wait_for_count(&browser, 0);
    assert_eq!(browser.execute("return window.kilnTestMark;"), "same page", "the page was reloaded");
    // The posts are done (the stream, still open, is not listed yet).
    let streamed = "return performance.getEntriesByType('resource').filter((e) => e.initiatorType === 'fetch').length;";
    let fetches = browser.execute(streamed);
    assert!(fetches.as_u64().is_some_and(|n| n >= 4), "four events posted: {fetches}");
    serving.shutdown();
}

/// A counter whose page forces the event stream (`data-kiln-transport="sse"` on its
/// body), as a site known to be behind a proxy that blocks WebSocket does.
#[derive(Route)]
#[route("/forced")]
struct ForcedPage;

#[derive(Serialize, Deserialize)]
enum Up {
    Up,
}

struct Forced {
    count: u32,
}

impl LiveView for Forced {
    type AppState = ();
    type Route = ForcedPage;
    type Event = Up;

    async fn mount(_: ForcedPage, _: RequestContext<'_, ()>) -> Result<Self, Rejection> {
        Ok(Forced { count: 0 })
    }

    fn handle(&mut self, Up::Up: Up, _: &mut LiveSocket<Self>) {
        self.count += 1;
    }

    fn render(&self) -> Live<Up> {
        live_html! { p #count { "Count: " (self.count) } button #up type="button" on:click=(Up::Up) { "+1" } }
    }

    fn page(&self, view: Fragment<markup::Flow>) -> Fragment<Document> {
        html! { html lang="en" { head { meta charset="utf-8"; title { "Forced" } } body data-kiln-transport="sse" { (view) } } }
    }
}

/// Counts the WebSocket upgrades asked of the server it wraps.
struct Upgrades(Arc<AtomicUsize>);

impl Middleware for Upgrades {
    type Carry = ();

    fn before(&self, req: &Request<'_>, _: &mut Response) -> Flow<()> {
        if req.header("upgrade").is_some() {
            self.0.fetch_add(1, Ordering::Relaxed);
        }
        Flow::Continue(())
    }

    fn after(&self, _: &Request<'_>, _: &mut Response, _: ()) {}
}

#[test]
#[ignore = "needs Chromium and chromedriver: KILN_CHROMEDRIVER=$(scripts/browser) cargo test -p kiln-examples --test browser_live -- --ignored"]
fn live_view_forced_to_the_event_stream_never_asks_for_a_websocket() {
    let upgrades = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&upgrades);
    let app = App::new(|_| ()).secret_key(Key::generate()).live::<Forced>().build().expect("the view builds");
    let app = app.wrap(move |_| Upgrades(Arc::clone(&counted)));
    let serving = kiln::serve(app, Server::new().listen("127.0.0.1:0").workers(1)).expect("the view serves");
    let browser = Browser::start(shots_dir(), &[]);
    browser.open(&format!("http://{}/forced", serving.local_addr()));
    wait_for_class(&browser, "kiln-connected");
    for count in 1..=2 {
        browser.click("#up");
        wait_for_count(&browser, count);
    }
    assert_eq!(upgrades.load(Ordering::Relaxed), 0, "no WebSocket was asked for");
    serving.shutdown();
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

#[test]
#[ignore = "needs Chromium and chromedriver: KILN_CHROMEDRIVER=$(scripts/browser) cargo test -p kiln-examples --test browser_live -- --ignored"]
fn live_table_sorts_keeps_the_scroll_filters_while_typing_keeps_the_caret_and_takes_pushed_rows() {
    let server = Server::new().listen("127.0.0.1:0").workers(1);
    let serving = kiln::serve(live_table::app(Key::generate()), server).expect("the table serves");
    let addr = serving.local_addr();
    let browser = Browser::start(shots_dir(), &[]);
    browser.open(&format!("http://{addr}/players"));
    wait_for_class(&browser, "kiln-connected");

    // Keyed rows are moved, not patched in place: a row keeps its element (and what
    // the page set on it) through a sort and a push.
    let mark = |name: &str| {
        let mark = "Array.from(document.querySelectorAll('tbody tr')).find((r) => r.cells[0].textContent === NAME).kilnMark = NAME;";
        browser.execute(&mark.replace("NAME", &format!("'{name}'")));
    };
    let marked = |name: &str| {
        let find = "return Array.from(document.querySelectorAll('tbody tr')).find((r) => r.cells[0].textContent === NAME).kilnMark;";
        browser.execute(&find.replace("NAME", &format!("'{name}'")))
    };
    mark("player-01");
    browser.click("#by-score");
    let by_score =
        "const s = Array.from(document.querySelectorAll('tbody tr td:last-child'), (td) => Number(td.textContent));
        return s.length === 100 && s.every((v, i) => i === 0 || s[i - 1] >= v);";
    wait_until(&browser, "sorted by score", by_score);

    // A row pushed to the top while the reader is scrolled down: the rows in view stay put.
    browser.execute("window.scrollTo(0, 600);");
    let scrolled = browser.execute("return window.scrollY;");
    assert!(scrolled.as_f64().is_some_and(|y| y > 0.0), "the table is taller than the window: {scrolled}");
    assert_eq!(marked("player-01"), "player-01", "the sorted row is the same element");
    mark("player-07");
    // The row moves above the rows in view: the browser's scroll anchoring keeps them
    // where the reader sees them (the scroll offset grows by the row's height).
    let in_view = browser.execute(IN_VIEW);
    post(addr, "/players/7/score/100");
    wait_until(
        &browser,
        "player-07 on top",
        "return document.querySelector('tbody tr td').textContent === 'player-07';",
    );
    assert_eq!(
        browser.execute("return document.querySelector('tbody tr').kilnMark;"),
        "player-07",
        "moved, not patched"
    );
    assert_eq!(browser.execute(IN_VIEW), in_view, "the rows in view stay in view");

    browser.clear_and_type("input[name=q]", "player-4");
    wait_until(&browser, "filtered", "return document.querySelectorAll('tbody tr').length === 10;");
    let field = "const f = document.activeElement;
        return [f.name, f.value, f.selectionStart, f.selectionEnd];";
    assert_eq!(browser.execute(field), serde_json::json!(["q", "player-4", 8, 8]), "focus and caret kept");

    post(addr, "/players/42/score/99");
    wait_until(&browser, "player-42 on top", "const r = document.querySelector('tbody tr');
        return r.cells[0].textContent === 'player-42' && r.cells[1].textContent === '99' && r.cells[1].className === 'score';");
    assert_eq!(browser.execute(field), serde_json::json!(["q", "player-4", 8, 8]), "focus and caret kept");
    browser.assert_no_console_errors("live table");
    serving.shutdown();
}

#[test]
#[ignore = "needs Chromium and chromedriver: KILN_CHROMEDRIVER=$(scripts/browser) cargo test -p kiln-examples --test browser_live -- --ignored"]
fn live_chat_two_browsers_see_each_others_lines() {
    let server = Server::new().listen("127.0.0.1:0").workers(2);
    let serving = kiln::serve(live_chat::app(Key::generate()), server).expect("the chat serves");
    let page = format!("http://{}/chat/lobby", serving.local_addr());
    let (ann, bob) = (Browser::start(shots_dir(), &[]), Browser::start(shots_dir(), &[]));
    for browser in [&ann, &bob] {
        browser.open(&page);
        wait_for_class(browser, "kiln-connected");
    }
    ann.clear_and_type("input[name=text]", "hello from ann\n");
    let heard = "return Array.from(document.querySelectorAll('#lines li'), (li) => li.textContent).join('|') === 'hello from ann';";
    for browser in [&ann, &bob] {
        wait_until(browser, "the line heard", heard);
    }
    assert_eq!(ann.execute("return document.querySelector('input[name=text]').value;"), "", "the form emptied");
    bob.clear_and_type("input[name=text]", "hi ann\n");
    let both = "return Array.from(document.querySelectorAll('#lines li'), (li) => li.textContent).join('|') === 'hello from ann|hi ann';";
    wait_until(&ann, "bob's line heard", both);
    for browser in [&ann, &bob] {
        browser.assert_no_console_errors("live chat");
    }
    serving.shutdown();
}
