//! Live comments over a socket, against the real `kiln-demo` binary: a wiki page is
//! a live view, and a comment posted on it (by the plain form, or over a page's own
//! socket) reaches every open copy of it as a keyed insert, rendered as the page
//! lists it, and to the page's event stream (`/pages/{slug}/live`, Server-Sent
//! Events, for other clients); on SQLite within the process, on PostgreSQL through
//! the bus that crosses processes (`KILN_PG_URL`; under CI it must be set), also when
//! the copies are served by two processes.

mod site_support;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use kiln_test_support::{Streaming, pg_url};
use site_support::{Site, Visitor};

/// A hang guard only: every read ends as soon as its message arrives.
const WAIT: Duration = Duration::from_secs(20);

/// An open copy of a page: its live view's socket, as the client script opens it.
struct OpenPage {
    stream: TcpStream,
}

impl OpenPage {
    /// Opens `/pages/{slug}` as a browser would: the page, then its socket with the
    /// page's token and the visitor's cookies; reads the mount message.
    fn open(addr: SocketAddr, slug: &str) -> (OpenPage, String) {
        let mut visitor = Visitor { addr, cookies: Default::default() };
        let path = format!("/pages/{slug}");
        let html = visitor.get(&path).text().to_owned();
        let token = html.split("data-kiln-token=\"").nth(1).and_then(|t| t.split('"').next()).expect("a live page");
        let cookies: Vec<String> = visitor.cookies.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let raw = format!(
            "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
             Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\
             Sec-WebSocket-Protocol: kiln-live, {token}\r\nCookie: {}\r\n\r\n",
            cookies.join("; ")
        );
        let mut stream = TcpStream::connect(addr).expect("connect");
        stream.set_read_timeout(Some(WAIT)).unwrap();
        stream.write_all(raw.as_bytes()).unwrap();
        let mut head = Vec::new();
        while !head.ends_with(b"\r\n\r\n") {
            let mut byte = [0];
            stream.read_exact(&mut byte).expect("the handshake's answer");
            head.push(byte[0]);
        }
        let head = String::from_utf8_lossy(&head);
        assert!(head.starts_with("HTTP/1.1 101"), "{head}");
        let mut page = OpenPage { stream };
        let mount = page.recv();
        (page, mount)
    }

    /// The next text message (RFC 6455 §5.2; the server's frames are not masked).
    fn recv(&mut self) -> String {
        loop {
            let mut head = [0; 2];
            self.stream.read_exact(&mut head).expect("a frame in time");
            let len = match head[1] & 0x7f {
                126 => {
                    let mut n = [0; 2];
                    self.stream.read_exact(&mut n).unwrap();
                    u64::from(u16::from_be_bytes(n))
                }
                127 => {
                    let mut n = [0; 8];
                    self.stream.read_exact(&mut n).unwrap();
                    u64::from_be_bytes(n)
                }
                n => u64::from(n),
            };
            let mut payload = vec![0; usize::try_from(len).unwrap()];
            self.stream.read_exact(&mut payload).unwrap();
            match head[0] & 0x0f {
                0x1 => return String::from_utf8(payload).expect("text"),
                0x8 => panic!("the socket closed: {payload:?}"),
                _ => {}
            }
        }
    }

    /// Reads messages until one holds `needle` (others' comments may come first:
    /// tests on one PostgreSQL share its notifications).
    fn recv_with(&mut self, needle: &str) -> String {
        loop {
            let message = self.recv();
            if message.contains(needle) {
                return message;
            }
        }
    }

    /// Sends a text message, masked as a client must (RFC 6455 §5.3).
    fn send(&mut self, text: &str) {
        let mask = [0x12, 0x34, 0x56, 0x78];
        let mut frame = vec![0x81];
        match text.len() {
            n if n < 126 => frame.push(0x80 | n as u8),
            n => {
                frame.push(0x80 | 126);
                frame.extend_from_slice(&u16::try_from(n).unwrap().to_be_bytes());
            }
        }
        frame.extend_from_slice(&mask);
        frame.extend(text.bytes().enumerate().map(|(i, b)| b ^ mask[i % 4]));
        self.stream.write_all(&frame).unwrap();
    }
}

fn a_comment_reaches_every_open_copy_of_the_page(first: SocketAddr, second: SocketAddr, author: &str) {
    let (mut one, mount) = OpenPage::open(first, "comments");
    assert!(mount.contains("Comments ("), "the mount message is the discussion: {mount}");
    let (mut two, _) = OpenPage::open(second, "comments");
    let mut copies = [&mut one, &mut two];
    let mut stream = Streaming::open(second, "GET /pages/comments/live HTTP/1.1\r\nHost: a\r\n\r\n");
    let head = stream.read_until("\r\n\r\n");
    assert!(head.starts_with("HTTP/1.1 200 OK\r\n") && head.contains("Content-Type: text/event-stream\r\n"), "{head}");

    // Posted by the plain form, as without JavaScript.
    let mut visitor = Visitor { addr: first, cookies: Default::default() };
    let page = visitor.get("/pages/comments");
    assert!(page.text().contains("<script src=\"/_kiln/live."), "the live views' script: {}", page.text());
    assert!(!page.text().contains("live-comments"), "the old script is gone");
    let token = visitor.token("/pages/comments");
    let fields = [("csrf_token", token.as_str()), ("author", author), ("body", "live <b>now</b>\nand more")];
    let posted = visitor.post("/pages/comments/comments", &fields);
    assert_eq!(posted.status, 303, "{}", posted.text());
    let id = posted.header("Location").and_then(|l| l.split("#c").nth(1)).expect("the comment's anchor").to_owned();
    for copy in &mut copies {
        let diff = copy.recv_with(author);
        assert!(diff.contains(&format!("[\"i\",\"{id}\"")), "a keyed insert: {diff}");
        assert!(diff.contains(&format!("\"c{id}\"")), "its anchor: {diff}");
        assert!(diff.contains("live &lt;b&gt;now&lt;/b&gt;\\nand more"), "escaped: {diff}");
    }
    let event = loop {
        let event = stream.read_until("\n\n");
        if event.contains(author) {
            break event;
        }
    };
    assert!(event.contains(&format!("data: <ol><li id=\"c{id}\">")), "{event}");
    assert!(event.contains("live &lt;b&gt;now&lt;/b&gt;"), "escaped: {event}");

    // Posted over an open copy's socket: every copy, the sender's too, is sent it.
    let said = format!("{author} over the socket");
    let form = format!("author={}&body=hello+from+the+socket", said.replace(' ', "+"));
    copies[1].send(&serde_json::json!({ "event": "Post", "form": form }).to_string());
    for copy in &mut copies {
        let diff = copy.recv_with(&said);
        assert!(diff.contains("hello from the socket"), "{diff}");
    }

    // A page that does not exist is a 404, and has no stream.
    let mut visitor = Visitor { addr: first, cookies: Default::default() };
    assert_eq!(visitor.get("/pages/nope").status, 404);
    assert_eq!(visitor.get("/pages/nope/live").status, 404);
}

#[test]
fn sqlite_live_comments() {
    let site = Site::sqlite("live", &[]);
    a_comment_reaches_every_open_copy_of_the_page(site.server.addr, site.server.addr, "Live Ann");
}

#[test]
fn postgres_live_comments() {
    let Some(base) = pg_url("site_live::postgres_live_comments") else { return };
    let author = format!("Live Bo {}", std::process::id());
    let site = Site::postgres(&base, "live", &[]);
    a_comment_reaches_every_open_copy_of_the_page(site.server.addr, site.server.addr, &author);
}

#[test]
fn postgres_live_comments_across_two_processes() {
    let Some(base) = pg_url("site_live::postgres_live_comments_across_two_processes") else { return };
    let author = format!("Live Cy {}", std::process::id());
    let site = Site::postgres(&base, "live_two", &[]);
    let other = site_support::start(&site.database, &[]);
    a_comment_reaches_every_open_copy_of_the_page(site.server.addr, other.addr, &author);
}

#[test]
fn a_comment_over_the_socket_is_checked_and_rate_limited_as_the_plain_form_is() {
    let site = Site::sqlite("live-limits", &["--comments-per-minute", "1"]);
    let (mut page, _) = OpenPage::open(site.server.addr, "comments");
    page.send(r#"{"event":"Post","form":"author=&body=no+name"}"#);
    assert!(page.recv_with("Please give your name.").contains("no name"), "what was typed comes back");
    page.send(r#"{"event":"Post","form":"author=Ann&body=the+first"}"#);
    page.recv_with("the first");
    page.send(r#"{"event":"Post","form":"author=Ann&body=the+second"}"#);
    let refused = page.recv_with("Too many comments from your address");
    assert!(refused.contains("the second"), "the form keeps it: {refused}");
    // The plain form shares the count.
    let mut visitor = Visitor { addr: site.server.addr, cookies: Default::default() };
    let token = visitor.token("/pages/comments");
    let fields = [("csrf_token", token.as_str()), ("author", "Ann"), ("body", "by the form")];
    assert_eq!(visitor.post("/pages/comments/comments", &fields).status, 429);
}
