//! Strict framing (RFC 9112) over a real socket: every malformed request gets its
//! status, the connection closes, and nothing smuggled behind it is ever answered.

mod support;

use kiln_http::Limits;
use support::TestServer;

const BAD_REQUESTS: &[(&str, &[u8], u16)] = &[
    (
        "CL with TE",
        b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
        400,
    ),
    ("TE not ending in chunked", b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip\r\n\r\n", 400),
    ("unknown TE", b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: rot13\r\n\r\n", 501),
    ("unknown TE before chunked", b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: rot13, chunked\r\n\r\n", 501),
    ("TE on HTTP/1.0", b"POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400),
    ("CL plus", b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: +5\r\n\r\nhello", 400),
    ("CL minus", b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: -1\r\n\r\n", 400),
    ("CL hex", b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 0x10\r\n\r\n", 400),
    ("CL with space", b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5 0\r\n\r\n", 400),
    ("CL empty", b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length:\r\n\r\n", 400),
    ("CL overflow", b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 184467440737095516160\r\n\r\n", 400),
    ("CL differing", b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab", 400),
    ("no Host", b"GET / HTTP/1.1\r\n\r\n", 400),
    ("two Hosts", b"GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400),
    ("space before colon", b"GET / HTTP/1.1\r\nHost : a\r\n\r\n", 400),
    ("obs-fold", b"GET / HTTP/1.1\r\nHost: a\r\nX-Long: one\r\n two\r\n\r\n", 400),
    ("bare CR", b"GET / HTTP/1.1\r\nHost: a\r\nX: a\rb\r\n\r\n", 400),
    ("NUL in value", b"GET / HTTP/1.1\r\nHost: a\r\nX: a\0b\r\n\r\n", 400),
    ("empty header name", b"GET / HTTP/1.1\r\nHost: a\r\n: empty\r\n\r\n", 400),
    (
        "chunk size 0x",
        b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n0x5\r\nhello\r\n0\r\n\r\n",
        400,
    ),
    (
        "chunk size plus",
        b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n+5\r\nhello\r\n0\r\n\r\n",
        400,
    ),
    (
        "chunk size minus",
        b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n-5\r\nhello\r\n0\r\n\r\n",
        400,
    ),
    (
        "chunk size space",
        b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5 \r\nhello\r\n0\r\n\r\n",
        400,
    ),
    (
        "chunk size empty",
        b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n\r\nhello\r\n0\r\n\r\n",
        400,
    ),
    (
        "chunk size overflow",
        b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n10000000000000000\r\nx\r\n0\r\n\r\n",
        400,
    ),
    (
        "chunk without CRLF",
        b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhelloXY0\r\n\r\n",
        400,
    ),
    ("bad method", b"G\x01T / HTTP/1.1\r\nHost: a\r\n\r\n", 400),
    ("method with paren", b"GE(T / HTTP/1.1\r\nHost: a\r\n\r\n", 400),
    ("HTTP/9.9", b"GET / HTTP/9.9\r\nHost: a\r\n\r\n", 505),
    ("HTTP/2.0", b"GET / HTTP/2.0\r\nHost: a\r\n\r\n", 505),
    ("garbage version", b"GET / HTTX/1.1\r\nHost: a\r\n\r\n", 400),
    ("NUL in target", b"GET /a\0b HTTP/1.1\r\nHost: a\r\n\r\n", 400),
    ("space in target", b"GET /a b HTTP/1.1\r\nHost: a\r\n\r\n", 400),
    ("control in target", b"GET /a\x7fb HTTP/1.1\r\nHost: a\r\n\r\n", 400),
    ("tab in target", b"GET /a\tb HTTP/1.1\r\nHost: a\r\n\r\n", 400),
    ("unknown expectation", b"GET / HTTP/1.1\r\nHost: a\r\nExpect: teapot\r\n\r\n", 417),
    ("Host with userinfo", b"GET / HTTP/1.1\r\nHost: a@x\r\n\r\n", 400),
    ("Host with space", b"GET / HTTP/1.1\r\nHost: a b\r\n\r\n", 400),
    ("Host with slash", b"GET / HTTP/1.1\r\nHost: x/y\r\n\r\n", 400),
    ("Host port too big", b"GET / HTTP/1.1\r\nHost: x:99999\r\n\r\n", 400),
    ("absolute-form, not http", b"GET ftp://x/a HTTP/1.1\r\nHost: x\r\n\r\n", 400),
];

#[test]
fn every_malformed_request_gets_its_status_and_a_close() {
    let server = TestServer::start(Limits::default());
    for (name, raw, want) in BAD_REQUESTS {
        // A valid request pipelined behind the bad one must never be answered.
        let smuggled = b"GET /smuggled HTTP/1.1\r\nHost: a\r\n\r\n";
        let resps = server.exchange(&[*raw, &smuggled[..]].concat());
        assert_eq!(resps.len(), 1, "{name}: exactly one response, then close; got {resps:?}");
        assert_eq!(resps[0].status, *want, "{name}: {:?}", resps[0].body_str());
        assert_eq!(resps[0].header("connection"), Some("close"), "{name}");
        assert!(!resps[0].body.is_empty(), "{name}: a refusal says why");
    }
    assert!(
        !server.seen.targets().iter().any(|t| t == "/smuggled"),
        "a request smuggled behind a rejected one was answered: {:?}",
        server.seen.targets()
    );
}

#[test]
fn cl_te_smuggling_attempt_is_refused_before_the_service_runs() {
    let server = TestServer::start(Limits::default());
    let raw = b"POST /victim HTTP/1.1\r\nHost: a\r\nContent-Length: 6\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: a\r\n\r\n";
    let resps = server.exchange(raw);
    assert_eq!(resps.len(), 1);
    assert_eq!(resps[0].status, 400);
    assert!(server.seen.targets().is_empty(), "{:?}", server.seen.targets());
}

#[test]
fn valid_bodies_by_length_and_chunked_are_delivered_whole() {
    let server = TestServer::start(Limits::default());
    let cases: &[(&[u8], &str)] = &[
        (b"POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello", "hello"),
        (
            b"POST /echo HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n5\r\nhello\r\n1;ext=1\r\n!\r\n0\r\nTrailer: x\r\n\r\n",
            "hello!",
        ),
        (b"POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nContent-Length: 3\r\nConnection: close\r\n\r\nabc", "abc"),
    ];
    for (raw, body) in cases {
        let resps = server.exchange(raw);
        assert_eq!(resps.len(), 1);
        assert_eq!(resps[0].status, 200);
        assert_eq!(resps[0].body_str(), *body);
    }
}

#[test]
fn chunk_extensions_over_the_limit_are_refused() {
    let server = TestServer::start(Limits::default());
    let mut raw = b"POST /echo HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n1;".to_vec();
    raw.extend(std::iter::repeat_n(b'e', kiln_http::MAX_CHUNK_EXTENSIONS + 10));
    raw.extend_from_slice(b"\r\nx\r\n0\r\n\r\n");
    let resps = server.exchange(&raw);
    assert_eq!(resps.len(), 1);
    assert_eq!(resps[0].status, 400);
}

#[test]
fn host_values_that_are_not_an_authority_get_400_and_valid_ones_are_served() {
    // Issue 13: `a@x`, `a b`, `x/y` and `x:99999` got 200 (RFC 9112 §3.2, RFC 3986 §3.2).
    let server = TestServer::start(Limits::default());
    for host in ["a@x", "a b", "x/y", "x:99999", "[::1"] {
        let resps = server.exchange(format!("GET / HTTP/1.1\r\nHost: {host}\r\n\r\n").as_bytes());
        assert_eq!((resps.len(), resps[0].status), (1, 400), "Host: {host}");
    }
    for host in ["example.com:8080", "[::1]:80", "127.0.0.1", ""] {
        let resps = server.exchange(format!("GET / HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n").as_bytes());
        assert_eq!(resps[0].status, 200, "Host: {host}");
    }
}

#[test]
fn an_absolute_form_target_is_routed_by_its_path() {
    // Issue 13: `GET http://x/hello` got `404 no route for http://x/hello` (RFC 9112 §3.2.2).
    let server = TestServer::start(Limits::default());
    let resps = server.exchange(b"GET http://x/hello?q=1 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    assert_eq!((resps[0].status, resps[0].body_str()), (200, "GET /hello?q=1 0"));
    let resps = server
        .exchange(b"POST HTTP://x:80/echo HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nConnection: close\r\n\r\nhi");
    assert_eq!((resps[0].status, resps[0].body_str()), (200, "hi"));
}

#[test]
fn a_refused_head_request_gets_no_body() {
    // Issue 13: the 400 to a `HEAD` still carried its text (RFC 9110 §9.3.2).
    let server = TestServer::start(Limits::default());
    let mut s = server.connect();
    std::io::Write::write_all(&mut s, b"HEAD / HTTP/1.1\r\nHost: a b\r\n\r\n").unwrap();
    let raw = support::read_to_close(&mut s);
    let resps = support::parse_all(&raw, true);
    assert_eq!((resps.len(), resps[0].status), (1, 400));
    assert!(raw.ends_with(b"\r\n\r\n"), "a body followed the head: {}", String::from_utf8_lossy(&raw));
}

#[test]
fn a_refused_head_request_after_empty_lines_gets_no_body() {
    // Issue 25: with an empty line before the request line (which RFC 9112 §2.2 lets a
    // client send), `HEAD /x HTTP/1.Q` got its 400 with `Content-Length: 23` and a body.
    let server = TestServer::start(Limits::default());
    for raw in [
        &b"\r\nHEAD /x HTTP/1.Q\r\nHost: a\r\n\r\n"[..],
        b"\r\n\r\nHEAD /x HTTP/1.Q\r\n\r\n",
        b"\nHEAD /x HTTP/1.Q\r\n\r\n",
    ] {
        let mut s = server.connect();
        std::io::Write::write_all(&mut s, raw).unwrap();
        let raw_reply = support::read_to_close(&mut s);
        let resps = support::parse_all(&raw_reply, true);
        assert_eq!((resps.len(), resps[0].status), (1, 400), "{}", String::from_utf8_lossy(&raw_reply));
        assert!(raw_reply.ends_with(b"\r\n\r\n"), "a body followed the head: {}", String::from_utf8_lossy(&raw_reply));
    }
}

#[test]
fn valid_chunk_syntax_with_leading_zeros_and_whitespace_before_a_semicolon_is_accepted() {
    // Issue 13: `00000000000000000000` as a size and BWS before `;` (RFC 9112 §7.1,
    // §7.1.1) were refused.
    let server = TestServer::start(Limits::default());
    let bodies: [&[u8]; 3] = [
        b"00000000000000000005\r\nhello\r\n00000000000000000000\r\n\r\n",
        b"5 ;name=value\r\nhello\r\n0\r\n\r\n",
        b"5\t ; a\r\nhello\r\n0 ;last\r\n\r\n",
    ];
    for body in bodies {
        let raw =
            [&b"POST /echo HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"[..], body]
                .concat();
        let resps = server.exchange(&raw);
        assert_eq!((resps[0].status, resps[0].body_str()), (200, "hello"), "{}", String::from_utf8_lossy(body));
    }
}

#[test]
fn http_1_2_is_answered_as_http_1_1() {
    // Issue 13: `HTTP/1.2` got 505; RFC 9112 §2.3 says to treat it as 1.1.
    let server = TestServer::start(Limits::default());
    let mut s = server.connect();
    std::io::Write::write_all(
        &mut s,
        b"GET /v HTTP/1.2\r\nHost: a\r\n\r\nGET /w HTTP/1.2\r\nHost: a\r\nConnection: close\r\n\r\n",
    )
    .unwrap();
    let raw = support::read_to_close(&mut s);
    let resps = support::parse_all(&raw, false);
    assert_eq!(
        resps.iter().map(|r| (r.status, r.body_str())).collect::<Vec<_>>(),
        [(200, "GET /v 0"), (200, "GET /w 0")]
    );
    assert!(raw.starts_with(b"HTTP/1.1 200 OK\r\n"));
}
