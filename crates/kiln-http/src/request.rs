//! The request as a service sees it: a view into the connection's read buffer.

use std::net::SocketAddr;
use std::ops::Range;

use crate::body::{BodyLimit, IncomingBody};
use crate::head::{Head, Version};

/// One request: method, target, version, headers and the whole body.
///
/// Every accessor borrows from the connection's buffers; nothing is copied unless the
/// caller copies it. The body has been read in full (up to the configured limit)
/// before the service is called, so a service that ignores it cannot desynchronise the
/// connection.
#[derive(Clone, Copy)]
pub struct Request<'a> {
    pub(crate) buf: &'a [u8],
    pub(crate) head: &'a Head,
    pub(crate) body: &'a [u8],
    /// The body as a stream, when the service asked for it so
    /// ([`BodyMode::Stream`](crate::BodyMode::Stream)).
    pub(crate) stream: Option<&'a IncomingBody>,
    pub(crate) peer: SocketAddr,
}

impl<'a> Request<'a> {
    fn slice(&self, r: &Range<u32>) -> &'a [u8] {
        &self.buf[r.start as usize..r.end as usize]
    }

    fn str(&self, r: &Range<u32>) -> &'a str {
        // The parser admits only visible ASCII in the method and the target.
        std::str::from_utf8(self.slice(r)).unwrap_or("")
    }

    /// The method token, as sent (`GET`, `POST`, ...).
    pub fn method(&self) -> &'a str {
        self.str(&self.head.method)
    }

    /// The request target: path and query, still percent-encoded. An absolute-form
    /// target (`http://host/a?b`, RFC 9112 §3.2.2) is given as its path and query.
    pub fn target(&self) -> &'a str {
        self.str(&self.head.target)
    }

    /// The path part of the target (before any `?`), still percent-encoded; `/` when
    /// an absolute-form target has an empty path (RFC 9110 §4.2.3).
    pub fn path(&self) -> &'a str {
        let t = self.target();
        match t.split_once('?').map_or(t, |(p, _)| p) {
            "" => "/",
            p => p,
        }
    }

    /// The query part of the target (after the first `?`), if any.
    pub fn query(&self) -> Option<&'a str> {
        self.target().split_once('?').map(|(_, q)| q)
    }

    /// The protocol version.
    pub fn version(&self) -> Version {
        self.head.version.unwrap_or(Version::Http11)
    }

    /// The protocol an HTTP/2 extended CONNECT asks to speak on its stream
    /// (`:protocol`, RFC 8441 §4: `websocket`); `None` for every other request. Such a
    /// request's method is `CONNECT` and its target the `:path`.
    pub fn protocol(&self) -> Option<&'a str> {
        Some(self.str(&self.head.protocol)).filter(|p| !p.is_empty())
    }

    /// The value of the first header named `name` (ASCII case-insensitive).
    pub fn header(&self, name: &str) -> Option<&'a [u8]> {
        // Compared as bytes: lookups run on every request (cookies, sessions, CSRF),
        // and turning each name they pass into a `&str` first cost a UTF-8 check each.
        let name = name.as_bytes();
        self.raw_headers().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, value)| value)
    }

    /// The value of the first header named `name`, if it is valid UTF-8.
    pub fn header_str(&self, name: &str) -> Option<&'a str> {
        self.header(name).and_then(|v| std::str::from_utf8(v).ok())
    }

    /// Every header in the order received, as (name, value).
    pub fn headers(&self) -> impl Iterator<Item = (&'a str, &'a [u8])> + 'a {
        // Header names are tokens, so always ASCII.
        self.raw_headers().map(|(name, value)| (std::str::from_utf8(name).unwrap_or(""), value))
    }

    /// Every header in the order received, name and value as bytes: no UTF-8 check of
    /// the names, for a caller that looks for several headers in one pass.
    pub fn raw_headers(&self) -> impl Iterator<Item = (&'a [u8], &'a [u8])> + 'a {
        let buf = self.buf;
        self.head.headers.iter().map(move |h| {
            (&buf[h.name.start as usize..h.name.end as usize], &buf[h.value.start as usize..h.value.end as usize])
        })
    }

    /// The request body, complete (decoded if it was chunked). Empty when there was none,
    /// and when the body is streamed instead (see [`body_stream`](Self::body_stream)).
    pub fn body(&self) -> &'a [u8] {
        self.body
    }

    /// The body as a stream read as it is asked for, when the service chose
    /// [`BodyMode::Stream`](crate::BodyMode::Stream) for this request; `None` when the
    /// body was read whole into [`body`](Self::body).
    pub fn body_stream(&self) -> Option<IncomingBody> {
        self.stream.cloned()
    }

    /// The address of the peer on the other end of the connection.
    pub fn peer_addr(&self) -> SocketAddr {
        self.peer
    }
}

/// A request parsed from bytes, with no connection behind it: for in-process test
/// clients such as `kiln::test::TestClient`. Not part of the stable API.
#[doc(hidden)]
#[derive(Debug)]
pub struct RequestBytes {
    bytes: Vec<u8>,
    head: Head,
    head_len: usize,
    peer: SocketAddr,
    /// The body, when the service streams it.
    stream: Option<IncomingBody>,
}

impl RequestBytes {
    /// Parses a complete request (head, then a `Content-Length` body) with the
    /// engine's own parser and default limits.
    pub fn parse(bytes: Vec<u8>, peer: SocketAddr) -> Result<Self, String> {
        Self::parse_with(bytes, peer, &crate::Limits::default()).map_err(|r| format!("{} {}", r.status, r.reason))
    }

    /// Parses a complete request under `limits`, as a server with them would: a
    /// request it would refuse is the [`Refusal`] it would answer with.
    pub fn parse_with(bytes: Vec<u8>, peer: SocketAddr, limits: &crate::Limits) -> Result<Self, Refusal> {
        Self::parse_for(bytes, peer, limits, |_| crate::BodyMode::Buffer)
    }

    /// Like [`parse_with`](Self::parse_with), asking `mode` how to hand over the body
    /// as the engine asks a service ([`Service::body_mode`](crate::Service::body_mode)):
    /// a streamed body may exceed the global limit up to its own, and reaches the
    /// service as a [`Request::body_stream`].
    pub fn parse_for(
        bytes: Vec<u8>,
        peer: SocketAddr,
        limits: &crate::Limits,
        mode: impl FnOnce(&Request<'_>) -> crate::BodyMode,
    ) -> Result<Self, Refusal> {
        let refusal = |r: crate::rejection::Rejection| Refusal { status: r.status, reason: r.reason, limit: None };
        let mut head = Head::default();
        let parsed = crate::h1::parse::parse_head(&bytes, limits, &mut head).map_err(refusal)?.ok_or(Refusal {
            status: http::StatusCode::BAD_REQUEST,
            reason: "incomplete request head",
            limit: None,
        })?;
        let head_only = Request { buf: &bytes[..parsed.len], head: &head, body: b"", stream: None, peer };
        let mode = match parsed.framing {
            crate::h1::parse::Framing::Empty => crate::BodyMode::Buffer,
            _ => mode(&head_only),
        };
        let (limit, stream) = match mode {
            crate::BodyMode::Buffer => (BodyLimit::Whole(limits.max_body_bytes as u64), None),
            crate::BodyMode::Stream { max_bytes } => {
                let body = bytes::Bytes::copy_from_slice(&bytes[parsed.len..]);
                (BodyLimit::Streamed(max_bytes), Some(IncomingBody::from_bytes(body)))
            }
        };
        let max = match limit {
            BodyLimit::Whole(max) | BodyLimit::Streamed(max) => max,
        };
        // A body over its limit is answered as the engine answers it: naming the limit.
        crate::h1::parse::check_body_len(&parsed, max).map_err(|r| Refusal { limit: Some(limit), ..refusal(r) })?;
        Ok(RequestBytes { head_len: parsed.len, bytes, head, peer, stream })
    }

    /// Hands a streamed body to the service in chunks of these lengths (the rest, if
    /// they fall short, as one more), as a connection would deliver it over several
    /// reads. No effect on a buffered body.
    pub fn stream_in_chunks(&mut self, lens: &[usize]) {
        if self.stream.is_none() {
            return;
        }
        let body = bytes::Bytes::copy_from_slice(&self.bytes[self.head_len..]);
        let mut at = 0;
        let mut chunks = Vec::with_capacity(lens.len() + 1);
        for &len in lens {
            let end = (at + len).min(body.len());
            chunks.push(body.slice(at..end));
            at = end;
        }
        chunks.push(body.slice(at..));
        self.stream = Some(IncomingBody::from_chunks(chunks));
    }

    /// The request, as a service would see it.
    pub fn request(&self) -> Request<'_> {
        match &self.stream {
            Some(stream) => {
                Request { buf: &self.bytes, head: &self.head, body: b"", stream: Some(stream), peer: self.peer }
            }
            None => Request {
                buf: &self.bytes,
                head: &self.head,
                body: &self.bytes[self.head_len..],
                stream: None,
                peer: self.peer,
            },
        }
    }
}

/// A request the engine refuses before any service sees it, and so answers itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Refusal {
    status: http::StatusCode,
    reason: &'static str,
    /// For a body over its limit: the limit, which the answer names.
    limit: Option<BodyLimit>,
}

impl Refusal {
    /// The status it is answered with (`400`, `413`, `431`, ...).
    pub fn status(&self) -> http::StatusCode {
        self.status
    }

    /// The reason in short; the body sent ([`render`](Self::render)) may say more: for
    /// a body over its limit, which limit applied and how a route raises it.
    pub fn reason(&self) -> &'static str {
        self.reason
    }

    /// Fills `res` as the server answers the refusal; the server then closes the
    /// connection.
    pub fn render(&self, res: &mut crate::Response) {
        match self.limit {
            Some(limit) if self.status == http::StatusCode::PAYLOAD_TOO_LARGE => limit.render(res),
            _ => crate::rejection::error_response(res, self.status, self.reason),
        }
        res.set_close();
    }
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.limit {
            Some(limit) if self.status == http::StatusCode::PAYLOAD_TOO_LARGE => write!(f, "{} {limit}", self.status),
            _ => write!(f, "{} {}", self.status, self.reason),
        }
    }
}

impl std::fmt::Debug for Request<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Request")
            .field("method", &self.method())
            .field("target", &self.target())
            .field("version", &self.version())
            .field("body_len", &self.body.len())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::RequestBytes;

    #[test]
    fn a_header_is_found_by_name_in_any_case_and_the_first_of_repeats_wins() {
        let raw = b"GET / HTTP/1.1\r\nHost: a\r\nuser-AGENT: x/1\r\nCookie: a=1\r\ncookie: b=2\r\n\r\n".to_vec();
        let parsed = RequestBytes::parse(raw, "127.0.0.1:1".parse().unwrap()).unwrap();
        let req = parsed.request();
        assert_eq!(req.header("User-Agent"), Some(&b"x/1"[..]));
        assert_eq!(req.header("cookie"), Some(&b"a=1"[..]));
        assert_eq!(req.header("referer"), None);
        assert_eq!(req.header("user-agen"), None);
    }
}
