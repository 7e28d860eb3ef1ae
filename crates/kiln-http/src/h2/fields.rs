//! A request's header block (RFC 9113 §8.2, §8.3) decoded ([`hpack`](super::hpack)) straight
//! into the stream's request buffer: method, target and fields written one after the
//! other, and a [`Head`] of ranges over them, the same view an HTTP/1.1 request gives
//! of its read buffer. `:authority` reads as `host` (§8.3.1, a `host` field then left
//! out); `cookie` fields, which HTTP/2 may split, are joined with "; " (§8.2.3).

use std::ops::Range;

use super::hpack::Decoder;

use crate::head::{Head, HeaderSpan, Version};

/// How much larger than the header list limit a block may decode before it counts as
/// an attack (an HPACK bomb: a small block naming a large table entry again and again)
/// rather than an oversized request that deserves its `431`.
const BOMB_FACTOR: usize = 16;

/// Why a header block was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Bad {
    /// Malformed (§8.1.1): a stream error of type PROTOCOL_ERROR.
    Malformed,
    /// Larger than SETTINGS_MAX_HEADER_LIST_SIZE or the field count: answered `431`.
    TooLarge,
    /// Decodes to many times the limit: the connection is closed (ENHANCE_YOUR_CALM).
    Bomb,
    /// Not valid HPACK: a connection error of type COMPRESSION_ERROR (§4.3).
    Compression,
}

/// What the engine needs of a request's fields beyond the view.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Facts {
    /// The `content-length`, to check against the DATA received (§8.1.1).
    pub(crate) content_length: Option<u64>,
    /// `HEAD`: the response goes without its body.
    pub(crate) is_head: bool,
    /// A CONNECT (RFC 9113 §8.5), extended (RFC 8441 §4) or not: the service is called
    /// at once, its stream a tunnel once answered `2xx` with an upgrade.
    pub(crate) tunnel: bool,
}

/// The limits a header block is decoded under.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Bounds {
    /// SETTINGS_MAX_HEADER_LIST_SIZE (§6.5.2: names, values and 32 per field).
    pub(crate) list: usize,
    /// Most fields one request may carry.
    pub(crate) fields: usize,
    /// `:protocol` is accepted: SETTINGS_ENABLE_CONNECT_PROTOCOL was sent (RFC 8441 §3;
    /// without it the field is malformed, as for a server that never heard of it).
    pub(crate) connect_protocol: bool,
}

/// The decoding's state, kept by the callback, which cannot stop the decoder.
struct Build<'a> {
    buf: &'a mut Vec<u8>,
    head: &'a mut Head,
    bounds: Bounds,
    size: usize,
    bad: Option<Bad>,
    regular_seen: bool,
    method: Option<Range<u32>>,
    path: Option<Range<u32>>,
    authority: Option<Range<u32>>,
    protocol: Option<Range<u32>>,
    scheme: bool,
    cookies: Vec<Range<u32>>,
    facts: Facts,
    trailers: bool,
}

/// Decodes a request's header block into `buf` and `head`.
pub(crate) fn request(
    decoder: &mut Decoder,
    block: &[u8],
    buf: &mut Vec<u8>,
    head: &mut Head,
    bounds: Bounds,
) -> Result<Facts, Bad> {
    buf.clear();
    head.headers.clear();
    head.protocol = 0..0;
    head.version = Some(Version::Http2);
    let mut b = Build::new(buf, head, bounds, false);
    decoder.decode(block, |name, value| b.field(name, value)).map_err(|_| Bad::Compression)?;
    b.finish()
}

/// Decodes a trailer block (§8.1): checked like any block, its fields then dropped
/// (the service sees the body, not trailers).
pub(crate) fn trailers(decoder: &mut Decoder, block: &[u8], bounds: Bounds) -> Result<(), Bad> {
    let (mut buf, mut head) = (Vec::new(), Head::default());
    let mut b = Build::new(&mut buf, &mut head, bounds, true);
    decoder.decode(block, |name, value| b.field(name, value)).map_err(|_| Bad::Compression)?;
    b.bad.map_or(Ok(()), Err)
}

impl<'a> Build<'a> {
    /// A block's checker: a trailer block allows no pseudo-header, as if a regular
    /// field had been seen already.
    fn new(buf: &'a mut Vec<u8>, head: &'a mut Head, bounds: Bounds, trailers: bool) -> Self {
        Build {
            buf,
            head,
            bounds,
            size: 0,
            bad: None,
            regular_seen: trailers,
            method: None,
            path: None,
            authority: None,
            protocol: None,
            scheme: false,
            cookies: Vec::new(),
            facts: Facts::default(),
            trailers,
        }
    }

    fn fail(&mut self, bad: Bad) {
        // A bomb outranks whatever else is wrong: the connection goes.
        if self.bad.is_none() || bad == Bad::Bomb {
            self.bad = Some(bad);
        }
    }

    fn field(&mut self, name: &[u8], value: &[u8]) {
        self.size += name.len() + value.len() + 32;
        if self.size > self.bounds.list {
            let bad = if self.size > self.bounds.list.saturating_mul(BOMB_FACTOR) { Bad::Bomb } else { Bad::TooLarge };
            return self.fail(bad);
        }
        if self.bad.is_some() {
            return;
        }
        // §8.2.1: a value must not hold NUL, CR or LF, nor start or end with whitespace.
        let value_ok = !value.iter().any(|&b| b == 0 || b == b'\r' || b == b'\n')
            && !value.first().is_some_and(|b| matches!(b, b' ' | b'\t'))
            && !value.last().is_some_and(|b| matches!(b, b' ' | b'\t'));
        if !value_ok {
            return self.fail(Bad::Malformed);
        }
        if let Some(pseudo) = name.strip_prefix(b":") {
            return self.pseudo(pseudo, value);
        }
        self.regular_seen = true;
        // §8.2: names are lower-case tokens; §8.2.2: no connection-specific fields.
        if name.is_empty() || !name.iter().all(|&b| crate::response::is_token(b) && !b.is_ascii_uppercase()) {
            return self.fail(Bad::Malformed);
        }
        match name {
            b"connection" | b"keep-alive" | b"proxy-connection" | b"transfer-encoding" | b"upgrade" => {
                return self.fail(Bad::Malformed);
            }
            b"te" if value != b"trailers" => return self.fail(Bad::Malformed),
            b"content-length" if !self.trailers => {
                let n = std::str::from_utf8(value).ok().and_then(|v| v.parse::<u64>().ok());
                match (n, self.facts.content_length) {
                    (Some(n), None) => self.facts.content_length = Some(n),
                    (Some(n), Some(m)) if n == m => {}
                    _ => return self.fail(Bad::Malformed),
                }
            }
            b"host" if self.authority.is_some() => return,
            b"cookie" => {
                let value = self.push(value);
                self.cookies.push(value);
                return;
            }
            _ => {}
        }
        self.add(name, value);
    }

    /// §8.3: request pseudo-header fields, each once, before every regular field.
    fn pseudo(&mut self, pseudo: &[u8], value: &[u8]) {
        if self.regular_seen {
            return self.fail(Bad::Malformed);
        }
        let range = self.push(value);
        let slot = match pseudo {
            b"method" => &mut self.method,
            b"path" => &mut self.path,
            b"authority" => &mut self.authority,
            b"protocol" if self.bounds.connect_protocol => &mut self.protocol,
            b"scheme" if !self.scheme => {
                self.scheme = true;
                return;
            }
            _ => return self.fail(Bad::Malformed),
        };
        if slot.replace(range).is_some() {
            self.fail(Bad::Malformed);
        }
    }

    fn finish(mut self) -> Result<Facts, Bad> {
        if let Some(bad) = self.bad {
            return Err(bad);
        }
        let Some(method) = self.method.clone() else { return Err(Bad::Malformed) };
        let is_connect = self.slice(&method) == b"CONNECT";
        let target = if let Some(protocol) = self.protocol.clone() {
            // RFC 8441 §4: `:protocol` only on a CONNECT, which then carries `:scheme`
            // and `:path` (its target) beside `:authority`, as any request does.
            match (&self.authority, &self.path) {
                (Some(_), Some(path)) if is_connect && self.scheme && !path.is_empty() && !protocol.is_empty() => {
                    self.head.protocol = protocol;
                    self.facts.tunnel = true;
                    path.clone()
                }
                _ => return Err(Bad::Malformed),
            }
        } else if is_connect {
            // RFC 9113 §8.5: CONNECT names its authority, and has neither scheme nor path.
            match (&self.authority, &self.path, self.scheme) {
                (Some(authority), None, false) => {
                    self.facts.tunnel = true;
                    authority.clone()
                }
                _ => return Err(Bad::Malformed),
            }
        } else {
            match &self.path {
                Some(path) if self.scheme && !path.is_empty() => path.clone(),
                _ => return Err(Bad::Malformed),
            }
        };
        self.facts.is_head = self.slice(&method) == b"HEAD";
        self.head.method = method;
        self.head.target = target;
        if let Some(authority) = self.authority.clone() {
            let name = self.push(b"host");
            self.head.headers.insert(0, HeaderSpan { name, value: authority });
        }
        match self.cookies.len() {
            0 => {}
            1 => {
                let name = self.push(b"cookie");
                self.head.headers.push(HeaderSpan { name, value: self.cookies[0].clone() });
            }
            _ => {
                let name = self.push(b"cookie");
                let start = self.buf.len();
                for (i, c) in self.cookies.clone().iter().enumerate() {
                    if i > 0 {
                        self.buf.extend_from_slice(b"; ");
                    }
                    self.buf.extend_from_within(c.start as usize..c.end as usize);
                }
                self.head.headers.push(HeaderSpan { name, value: start as u32..self.buf.len() as u32 });
            }
        }
        if self.head.headers.len() > self.bounds.fields {
            return Err(Bad::TooLarge);
        }
        Ok(self.facts)
    }

    fn slice(&self, r: &Range<u32>) -> &[u8] {
        &self.buf[r.start as usize..r.end as usize]
    }

    fn push(&mut self, bytes: &[u8]) -> Range<u32> {
        let start = self.buf.len();
        self.buf.extend_from_slice(bytes);
        start as u32..self.buf.len() as u32
    }

    fn add(&mut self, name: &[u8], value: &[u8]) {
        let name = self.push(name);
        let value = self.push(value);
        self.head.headers.push(HeaderSpan { name, value });
    }
}

#[cfg(test)]
mod tests {
    use loona_hpack::Encoder;

    use super::*;
    use crate::request::Request;

    const BOUNDS: Bounds = Bounds { list: 16 * 1024, fields: 100, connect_protocol: true };

    fn decode(fields: &[(&[u8], &[u8])]) -> Result<(Vec<u8>, Head, Facts), Bad> {
        let block = Encoder::new().encode(fields.iter().copied());
        let (mut buf, mut head) = (Vec::new(), Head::default());
        let facts = request(&mut Decoder::new(4096), &block, &mut buf, &mut head, BOUNDS)?;
        Ok((buf, head, facts))
    }

    #[test]
    fn a_stream_reads_as_an_http1_request_with_its_authority_as_host_and_cookies_joined() {
        let (buf, head, facts) = decode(&[
            (b":method", b"POST"),
            (b":scheme", b"https"),
            (b":authority", b"example.com"),
            (b":path", b"/a/b?x=1"),
            (b"user-agent", b"t/1"),
            (b"cookie", b"a=1"),
            (b"host", b"ignored.example"),
            (b"cookie", b"b=2"),
            (b"content-length", b"3"),
        ])
        .unwrap();
        assert_eq!(facts.content_length, Some(3));
        let req = Request { buf: &buf, head: &head, body: b"", stream: None, peer: "127.0.0.1:1".parse().unwrap() };
        assert_eq!((req.method(), req.target(), req.path(), req.query()), ("POST", "/a/b?x=1", "/a/b", Some("x=1")));
        assert_eq!(req.version(), Version::Http2);
        assert_eq!(req.header_str("Host"), Some("example.com"));
        assert_eq!(req.header_str("cookie"), Some("a=1; b=2"));
        assert_eq!(req.header_str("user-agent"), Some("t/1"));
        assert_eq!(req.headers().filter(|(n, _)| *n == "host").count(), 1);
    }

    #[test]
    fn malformed_requests_are_stream_errors() {
        let base: [(&[u8], &[u8]); 3] = [(b":method", b"GET"), (b":scheme", b"http"), (b":path", b"/")];
        let with = |extra: &[(&'static [u8], &'static [u8])]| {
            let mut v = base.to_vec();
            v.extend_from_slice(extra);
            decode(&v).err()
        };
        assert_eq!(with(&[]), None);
        assert_eq!(with(&[(b"Upper", b"x")]), Some(Bad::Malformed));
        assert_eq!(with(&[(b"connection", b"close")]), Some(Bad::Malformed));
        assert_eq!(with(&[(b"te", b"gzip")]), Some(Bad::Malformed));
        assert_eq!(with(&[(b"te", b"trailers")]), None);
        assert_eq!(with(&[(b"x", b"a"), (b":path", b"/")]), Some(Bad::Malformed));
        assert_eq!(with(&[(b":status", b"200")]), Some(Bad::Malformed));
        assert_eq!(with(&[(b":method", b"GET")]), Some(Bad::Malformed));
        assert_eq!(decode(&[(b":method", b"GET"), (b":path", b"/")]).err(), Some(Bad::Malformed));
        assert_eq!(decode(&[(b":method", b"GET"), (b":scheme", b"http"), (b":path", b"")]).err(), Some(Bad::Malformed));
    }

    #[test]
    fn an_extended_connect_reads_as_a_connect_to_its_path_with_its_protocol() {
        let websocket: [(&[u8], &[u8]); 5] = [
            (b":method", b"CONNECT"),
            (b":protocol", b"websocket"),
            (b":scheme", b"https"),
            (b":authority", b"example.com"),
            (b":path", b"/ws?room=1"),
        ];
        let (buf, head, facts) = decode(&websocket).unwrap();
        assert!(facts.tunnel);
        let req = Request { buf: &buf, head: &head, body: b"", stream: None, peer: "127.0.0.1:1".parse().unwrap() };
        assert_eq!((req.method(), req.path(), req.protocol()), ("CONNECT", "/ws", Some("websocket")));
        // RFC 8441 §4: `:scheme` and `:path` with `:protocol`; only on a CONNECT.
        for left_out in [2, 3, 4] {
            let fields: Vec<_> =
                websocket.iter().enumerate().filter(|(i, _)| *i != left_out).map(|(_, f)| *f).collect();
            assert_eq!(decode(&fields).err(), Some(Bad::Malformed), "without {:?}", websocket[left_out].0);
        }
        let mut get = websocket;
        get[0].1 = b"GET";
        assert_eq!(decode(&get).err(), Some(Bad::Malformed));
        // Not offered (RFC 8441 §3): malformed, as for a server that never heard of it.
        let block = Encoder::new().encode(websocket.iter().copied());
        let (mut buf, mut head) = (Vec::new(), Head::default());
        let bounds = Bounds { connect_protocol: false, ..BOUNDS };
        assert_eq!(request(&mut Decoder::new(4096), &block, &mut buf, &mut head, bounds).err(), Some(Bad::Malformed));
        // A plain CONNECT (RFC 9113 §8.5) has no protocol.
        let (buf, head, facts) = decode(&[(b":method", b"CONNECT"), (b":authority", b"example.com:443")]).unwrap();
        let req = Request { buf: &buf, head: &head, body: b"", stream: None, peer: "127.0.0.1:1".parse().unwrap() };
        assert_eq!((req.method(), req.protocol(), facts.tunnel), ("CONNECT", None, true));
    }

    #[test]
    fn more_header_fields_than_allowed_are_too_large_and_a_bomb_is_a_bomb() {
        let mut v: Vec<(&[u8], &[u8])> = vec![(b":method", b"GET"), (b":scheme", b"http"), (b":path", b"/")];
        let big = vec![b'b'; 4000];
        v.extend(std::iter::repeat_n((&b"x-a"[..], &big[..]), 5));
        assert_eq!(decode(&v).err(), Some(Bad::TooLarge));
        v.extend(std::iter::repeat_n((&b"x-a"[..], &big[..]), 100));
        assert_eq!(decode(&v).err(), Some(Bad::Bomb));
    }
}
