//! The request line (RFC 9112 §3): one without an HTTP version is no HTTP/1.x request,
//! and is answered `400` before the close, not closed in silence.

mod support;

use kiln_http::Limits;
use support::TestServer;

#[test]
fn a_request_line_without_a_version_gets_400_then_a_close() {
    let server = TestServer::start(Limits::default());
    for raw in [&b"GET / \r\n\r\n"[..], b"GET /\r\n\r\n", b"GET / \r\nHost: a\r\n\r\n"] {
        let resps = server.exchange(raw);
        let shown = String::from_utf8_lossy(raw);
        assert_eq!(resps.len(), 1, "{shown:?}: one response, then close; got {resps:?}");
        assert_eq!(resps[0].status, 400, "{shown:?}: {:?}", resps[0].body_str());
        assert_eq!(resps[0].header("connection"), Some("close"), "{shown:?}");
    }
}
