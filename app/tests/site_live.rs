//! Live comments over a socket, against the real `kiln-demo` binary: a comment posted
//! on a page reaches every open copy of it as a Server-Sent Event, rendered as the
//! page lists it; on SQLite within the process, on PostgreSQL through the bus that
//! crosses processes (`KILN_PG_URL`; under CI it must be set).

mod site_support;

use kiln_test_support::{Streaming, pg_url};
use site_support::Site;

/// Opens the page's event stream and reads its head.
fn listen(site: &Site, slug: &str) -> Streaming {
    let raw = format!("GET /pages/{slug}/live HTTP/1.1\r\nHost: a\r\n\r\n");
    let mut stream = Streaming::open(site.server.addr, &raw);
    let head = stream.read_until("\r\n\r\n");
    assert!(head.starts_with("HTTP/1.1 200 OK\r\n"), "{head}");
    assert!(head.contains("Content-Type: text/event-stream\r\n"), "{head}");
    stream
}

/// Reads events until one holds `needle` (others' comments may come first: tests on
/// one PostgreSQL share its notifications).
fn event_with(stream: &mut Streaming, needle: &str) -> String {
    loop {
        let event = stream.read_until("\n\n");
        if event.contains(needle) {
            return event;
        }
    }
}

fn a_comment_reaches_every_open_copy_of_the_page(site: &Site, author: &str) {
    let mut copies = [listen(site, "comments"), listen(site, "comments")];
    let mut visitor = site.visitor();
    let page = visitor.get("/pages/comments");
    assert!(page.text().contains("<script src=\"/static/live-comments."), "{}", page.text());
    let token = visitor.token("/pages/comments");
    let fields = [("csrf_token", token.as_str()), ("author", author), ("body", "live <b>now</b>\nand more")];
    let posted = visitor.post("/pages/comments/comments", &fields);
    assert_eq!(posted.status, 303, "{}", posted.text());
    let id = posted.header("Location").and_then(|l| l.split("#c").nth(1)).expect("the comment's anchor").to_owned();
    for copy in &mut copies {
        let event = event_with(copy, author);
        assert!(event.contains(&format!("data: <ol><li id=\"c{id}\">")), "{event}");
        assert!(event.contains("live &lt;b&gt;now&lt;/b&gt;"), "escaped: {event}");
    }
    // The script is served, and a page that does not exist has no stream.
    let script = page.text().split("<script src=\"").nth(1).and_then(|s| s.split('"').next()).expect("src").to_owned();
    let js = site.server.get(&script);
    assert_eq!(js.status, 200);
    assert!(js.text().contains("EventSource"));
    assert_eq!(site.server.get("/pages/nope/live").status, 404);
}

#[test]
fn sqlite_live_comments() {
    a_comment_reaches_every_open_copy_of_the_page(&Site::sqlite("live", &[]), "Live Ann");
}

#[test]
fn postgres_live_comments() {
    let Some(base) = pg_url("site_live::postgres_live_comments") else { return };
    let author = format!("Live Bo {}", std::process::id());
    a_comment_reaches_every_open_copy_of_the_page(&Site::postgres(&base, "live", &[]), &author);
}
