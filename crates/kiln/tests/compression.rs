//! `App::compression`: the coding chosen from `Accept-Encoding` (q-values, `identity`,
//! `*`), what is left alone, `HEAD` and `304` consistent with `GET`; and bodies,
//! buffered and streamed, decoded by a real client (curl `--compressed`).

use std::collections::VecDeque;
use std::io;
use std::pin::Pin;
use std::process::Command;
use std::task::{Context, Poll};

use futures_core::Stream;
use kiln::http::Server;
use kiln::test::{TestClient, TestResponse};
use kiln::{App, AppService, Bytes, Compression, Encoding, Route, StatusCode};

#[derive(Route)]
#[route("/page/{kind}")]
struct Page {
    kind: String,
}

#[derive(Route)]
#[route("/stream")]
struct Streamed;

/// A page of `n` repeated lines: compresses well.
fn text(n: usize) -> String {
    (0..n).map(|i| format!("<p>line {i} of a page that repeats itself</p>\n")).collect()
}

async fn page(route: Page) -> kiln::Response {
    use kiln::IntoResponse;
    let mut res = kiln::Response::new();
    let big = text(100);
    match route.kind.as_str() {
        "html" => kiln::Html(big).into_response(&mut res),
        "small" => kiln::Html("<p>hi</p>").into_response(&mut res),
        "png" => kiln::Typed("image/png", big.into_bytes()).into_response(&mut res),
        "events" => kiln::Typed("text/event-stream", big.into_bytes()).into_response(&mut res),
        "encoded" => ([("Content-Encoding", "gzip")], kiln::Html(big)).into_response(&mut res),
        "ranged" => {
            (StatusCode::PARTIAL_CONTENT, [("Content-Range", "bytes 0-9/100")], kiln::Html(big)).into_response(&mut res)
        }
        "no-transform" => ([("Cache-Control", "no-transform")], kiln::Html(big)).into_response(&mut res),
        "strong-etag" => ([("ETag", "\"abc\"")], kiln::Html(big)).into_response(&mut res),
        "weak-etag" => ([("ETag", "W/\"abc\"")], kiln::Html(big)).into_response(&mut res),
        "not-modified" => StatusCode::NOT_MODIFIED.into_response(&mut res),
        "not-modified-strong" => (StatusCode::NOT_MODIFIED, [("ETag", "\"abc\"")], "").into_response(&mut res),
        _ => StatusCode::NOT_FOUND.into_response(&mut res),
    }
    res
}

/// The chunks of a streamed body, one per poll.
struct Chunks(VecDeque<String>);

impl Stream for Chunks {
    type Item = io::Result<Bytes>;
    fn poll_next(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        Poll::Ready(self.0.pop_front().map(|c| Ok(Bytes::from(c))))
    }
}

async fn streamed(_: Streamed) -> kiln::Response {
    let mut res = kiln::Response::new();
    res.set_content_type("text/plain; charset=utf-8");
    res.set_body_stream(Box::pin(Chunks((0..50).map(|i| format!("chunk {i}: {}\n", "x".repeat(i))).collect())));
    res
}

fn app() -> App<()> {
    App::new(|_| ()).route(page).route(streamed).compression(Compression::new())
}

fn get(c: &mut TestClient<AppService<()>>, kind: &str, accept: Option<&str>) -> TestResponse {
    let mut req = c.request("GET", Page { kind: kind.into() });
    if let Some(accept) = accept {
        req = req.header("Accept-Encoding", accept);
    }
    req.send()
}

#[test]
fn the_coding_follows_accept_encoding() {
    let mut c = TestClient::new(app());
    let table: &[(Option<&str>, Option<&str>)] = &[
        (None, None),
        (Some(""), None),
        (Some("identity"), None),
        (Some("gzip"), Some("gzip")),
        (Some("gzip, deflate, br, zstd"), Some("br")),
        (Some("br;q=0.5, zstd;q=0.9, gzip;q=0.1"), Some("zstd")),
        (Some("br;q=0, gzip"), Some("gzip")),
        (Some("gzip;q=0"), None),
        (Some("*"), Some("br")),
        (Some("*;q=0"), None),
        (Some("*;q=0.3, br;q=0"), Some("zstd")),
        (Some("identity, *;q=0"), None),
    ];
    for (accept, want) in table {
        let res = get(&mut c, "html", *accept);
        assert_eq!(res.status(), 200);
        assert_eq!(res.header("content-encoding"), *want, "{accept:?}");
        assert_eq!(res.header("vary"), Some("Accept-Encoding"), "{accept:?}");
        if want.is_none() {
            assert_eq!(res.text(), text(100), "{accept:?}");
        } else {
            assert!(res.bytes().len() < text(100).len() / 4, "{accept:?}: {} bytes", res.bytes().len());
        }
    }
}

#[test]
fn what_must_not_be_compressed_is_left_alone() {
    let mut c = TestClient::new(app());
    for kind in ["small", "png", "events", "encoded", "ranged", "no-transform"] {
        let res = get(&mut c, kind, Some("gzip, br, zstd"));
        let encoding = res.header("content-encoding");
        assert!(encoding.is_none() || kind == "encoded", "{kind}: {encoding:?}");
        assert_eq!(res.header_all("content-encoding").count(), usize::from(kind == "encoded"), "{kind}");
    }
    let weak = get(&mut c, "weak-etag", Some("gzip"));
    assert_eq!((weak.header("content-encoding"), weak.header("etag")), (Some("gzip"), Some("W/\"abc\"")));
    // A strong tag names the uncompressed bytes: the compressed response's is weak.
    let strong = get(&mut c, "strong-etag", Some("gzip"));
    assert_eq!((strong.header("content-encoding"), strong.header("etag")), (Some("gzip"), Some("W/\"abc\"")));
    let uncompressed = get(&mut c, "strong-etag", None);
    assert_eq!((uncompressed.header("content-encoding"), uncompressed.header("etag")), (None, Some("\"abc\"")));
}

#[test]
fn head_and_304_are_consistent_with_get() {
    let mut c = TestClient::new(app());
    let get = c.request("GET", Page { kind: "html".into() }).header("Accept-Encoding", "br").send();
    let head = c.request("HEAD", Page { kind: "html".into() }).header("Accept-Encoding", "br").send();
    assert_eq!(head.status(), 200);
    assert!(head.bytes().is_empty());
    for name in ["content-encoding", "vary", "content-length", "content-type"] {
        assert_eq!(head.header(name), get.header(name), "{name}");
    }
    let not_modified = c.request("GET", Page { kind: "not-modified".into() }).header("Accept-Encoding", "br").send();
    assert_eq!(not_modified.status(), 304);
    assert_eq!(not_modified.header("vary"), Some("Accept-Encoding"));
    assert_eq!(not_modified.header("content-encoding"), None);
    // A strong validator's 200 may be compressed too (its tag then weak): its 304 varies.
    let strong_304 =
        c.request("GET", Page { kind: "not-modified-strong".into() }).header("Accept-Encoding", "br").send();
    assert_eq!((strong_304.status().as_u16(), strong_304.header("vary")), (304, Some("Accept-Encoding")));
    assert_eq!(strong_304.header("etag"), Some("\"abc\""), "revalidating an uncompressed copy");
}

#[test]
fn only_the_codings_offered_are_used() {
    let app = App::new(|_| ()).route(page).compression(Compression::new().encodings(&[Encoding::Gzip]));
    let mut c = TestClient::new(app);
    assert_eq!(get(&mut c, "html", Some("br, zstd, gzip;q=0.1")).header("content-encoding"), Some("gzip"));
    assert_eq!(get(&mut c, "html", Some("br")).header("content-encoding"), None);
}

/// `curl --compressed` with `Accept-Encoding: <coding>`: the response's coding and the
/// body as curl decoded it.
fn curl(url: &str, coding: &str) -> (String, String) {
    let out = Command::new("curl")
        .args(["-s", "--compressed", "-H", &format!("Accept-Encoding: {coding}"), "-D", "-", url])
        .output()
        .expect("curl runs");
    assert!(out.status.success(), "curl failed: {}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).expect("decoded text");
    let (head, body) = text.split_once("\r\n\r\n").expect("a head");
    let encoding = head
        .lines()
        .find_map(|l| l.strip_prefix("content-encoding: ").or_else(|| l.strip_prefix("Content-Encoding: ")))
        .unwrap_or("")
        .to_owned();
    (encoding, body.to_owned())
}

#[test]
fn a_real_client_decodes_buffered_and_streamed_bodies() {
    let serving = kiln::serve(app(), Server::new().listen("127.0.0.1:0").workers(1)).unwrap();
    let addr = serving.local_addr();
    let streamed_text: String = (0..50).map(|i| format!("chunk {i}: {}\n", "x".repeat(i))).collect();
    for coding in ["gzip", "br", "zstd"] {
        let (encoding, body) = curl(&format!("http://{addr}/page/html"), coding);
        assert_eq!((encoding.as_str(), body), (coding, text(100)));
        let (encoding, body) = curl(&format!("http://{addr}/stream"), coding);
        assert_eq!((encoding.as_str(), body), (coding, streamed_text.clone()), "streamed {coding}");
    }
    serving.shutdown();
    serving.wait().unwrap();
}
