//! A stream's request as the service sees it: method, target and headers written into
//! the stream's own buffer, and a [`Head`] of ranges over it, the same view an
//! HTTP/1.1 request gives of its read buffer.

use std::ops::Range;

use http::request::Parts;
use http::{Method, StatusCode, header};

use crate::head::{Head, HeaderSpan, Version};
use crate::rejection::Rejection;

const TOO_MANY_HEADERS: Rejection =
    Rejection { status: StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE, reason: "too many header fields" };

/// Writes the request's method, target and headers into `buf` and points `head` at
/// them. `:authority` reads as `host` (RFC 9113 §8.3.1, its `Host` fields then
/// left out); `cookie` fields, which HTTP/2 may split, are joined into one with "; "
/// (§8.2.3). The `h2` crate has checked the fields (§8.2) and the list's size.
pub(super) fn build(parts: &Parts, buf: &mut Vec<u8>, head: &mut Head, max_headers: usize) -> Result<(), Rejection> {
    buf.clear();
    head.headers.clear();
    head.version = Some(Version::Http2);
    head.method = push(buf, parts.method.as_str().as_bytes());
    let authority = parts.uri.authority().map(|a| a.as_str());
    // RFC 9113 §8.5: CONNECT names its authority, and has no path.
    let target = match (&parts.method, authority) {
        (&Method::CONNECT, Some(authority)) => authority,
        _ => parts.uri.path_and_query().map_or("/", |pq| pq.as_str()),
    };
    head.target = push(buf, target.as_bytes());
    if let Some(authority) = authority {
        add(buf, head, b"host", authority.as_bytes());
    }
    let mut cookies = parts.headers.get_all(header::COOKIE).iter();
    if let Some(first) = cookies.next() {
        let name = push(buf, b"cookie");
        let start = buf.len();
        buf.extend_from_slice(first.as_bytes());
        for more in cookies {
            buf.extend_from_slice(b"; ");
            buf.extend_from_slice(more.as_bytes());
        }
        head.headers.push(HeaderSpan { name, value: start as u32..buf.len() as u32 });
    }
    for (name, value) in &parts.headers {
        if name == header::COOKIE || (name == header::HOST && authority.is_some()) {
            continue;
        }
        add(buf, head, name.as_str().as_bytes(), value.as_bytes());
    }
    if head.headers.len() > max_headers {
        return Err(TOO_MANY_HEADERS);
    }
    Ok(())
}

fn push(buf: &mut Vec<u8>, bytes: &[u8]) -> Range<u32> {
    let start = buf.len();
    buf.extend_from_slice(bytes);
    start as u32..buf.len() as u32
}

fn add(buf: &mut Vec<u8>, head: &mut Head, name: &[u8], value: &[u8]) {
    let name = push(buf, name);
    let value = push(buf, value);
    head.headers.push(HeaderSpan { name, value });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::Request;

    fn built(req: http::Request<()>) -> (Vec<u8>, Head) {
        let (parts, ()) = req.into_parts();
        let (mut buf, mut head) = (Vec::new(), Head::default());
        build(&parts, &mut buf, &mut head, 100).unwrap();
        (buf, head)
    }

    #[test]
    fn a_stream_reads_as_an_http1_request_with_its_authority_as_host_and_cookies_joined() {
        let req = http::Request::builder()
            .method("POST")
            .uri("https://example.com/a/b?x=1")
            .header("user-agent", "t/1")
            .header("cookie", "a=1")
            .header("cookie", "b=2")
            .header("host", "ignored.example")
            .body(())
            .unwrap();
        let (buf, head) = built(req);
        let req = Request { buf: &buf, head: &head, body: b"", stream: None, peer: "127.0.0.1:1".parse().unwrap() };
        assert_eq!((req.method(), req.target(), req.path(), req.query()), ("POST", "/a/b?x=1", "/a/b", Some("x=1")));
        assert_eq!(req.version(), Version::Http2);
        assert_eq!(req.header_str("Host"), Some("example.com"));
        assert_eq!(req.header_str("cookie"), Some("a=1; b=2"));
        assert_eq!(req.header_str("user-agent"), Some("t/1"));
        assert_eq!(req.headers().filter(|(n, _)| *n == "host").count(), 1);
    }

    #[test]
    fn more_header_fields_than_allowed_are_refused_with_431() {
        let mut req = http::Request::builder().uri("http://a/");
        for i in 0..5 {
            req = req.header(format!("x-{i}"), "v");
        }
        let (parts, ()) = req.body(()).unwrap().into_parts();
        let err = build(&parts, &mut Vec::new(), &mut Head::default(), 4).unwrap_err();
        assert_eq!(err.status, StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE);
    }
}
