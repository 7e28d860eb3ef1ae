//! Request heads: `httparse` does the tokenising, this module applies RFC 9112's
//! framing rules on top and decides how the body is delimited.

use std::mem::MaybeUninit;

use http::StatusCode;

use crate::config::Limits;
use crate::head::{Head, HeaderSpan, Version};
use crate::rejection::Rejection;

/// Header slots reserved on the stack per parse; `Limits::max_headers` is capped to it.
const HEADER_SLOTS: usize = 256;

/// How the body of a request is delimited (RFC 9112 §6.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Framing {
    /// No body.
    Empty,
    /// Exactly this many bytes follow the head.
    Length(u64),
    /// Chunked transfer coding.
    Chunked,
}

/// A complete, valid head.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Parsed {
    /// Bytes of the head, including the empty line that ends it.
    pub(crate) len: usize,
    pub(crate) framing: Framing,
    /// Whether the connection may carry another request after this one.
    pub(crate) keep_alive: bool,
    /// The client sent `Expect: 100-continue`.
    pub(crate) expect_continue: bool,
    /// The method is `HEAD`: the response carries no body.
    pub(crate) is_head: bool,
}

/// Refuses an announced body longer than `max` (`413`): checked once the body's mode is
/// known, since a streamed route may allow more than the global limit.
pub(crate) fn check_body_len(parsed: &Parsed, max: u64) -> Result<(), Rejection> {
    match parsed.framing {
        Framing::Length(n) if n > max => Err(reject(StatusCode::PAYLOAD_TOO_LARGE, "request body too large")),
        _ => Ok(()),
    }
}

const fn reject(status: StatusCode, reason: &'static str) -> Rejection {
    Rejection { status, reason }
}

const BAD: StatusCode = StatusCode::BAD_REQUEST;

/// Parses the head at the start of `buf` into `head` (offsets relative to `buf`).
/// `Ok(None)` means the head is not complete yet and is still within the limits.
pub(crate) fn parse_head(buf: &[u8], limits: &Limits, head: &mut Head) -> Result<Option<Parsed>, Rejection> {
    let mut slots = [const { MaybeUninit::<httparse::Header<'_>>::uninit() }; HEADER_SLOTS];
    let slots = &mut slots[..limits.max_headers.min(HEADER_SLOTS)];
    let mut req = httparse::Request::new(&mut []);
    let status = httparse::ParserConfig::default().parse_request_with_uninit_headers(&mut req, buf, slots);
    let len = match status {
        Ok(httparse::Status::Complete(len)) => len,
        Ok(httparse::Status::Partial) => return check_partial_head(buf, limits).map(|()| None),
        Err(e) => {
            check_request_line_length(buf, limits.max_request_line)?;
            if e == httparse::Error::Version
                && let Some(minor) = higher_minor_version(buf)
            {
                // RFC 9112 §2.3: a higher minor version of HTTP/1 is answered as 1.1.
                // httparse knows only 1.0 and 1.1, so a copy saying 1.1 is parsed; the
                // copy has the same length, so every offset holds for `buf` too.
                let mut as_11 = buf.to_vec();
                as_11[minor] = b'1';
                return parse_head(&as_11, limits, head);
            }
            return Err(rejection_for(e, buf));
        }
    };
    if len > limits.max_head_bytes {
        return Err(reject(StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE, "request head too large"));
    }

    let base = buf.as_ptr() as usize;
    let span = |s: &[u8]| {
        let start = (s.as_ptr() as usize - base) as u32;
        start..start + s.len() as u32
    };
    let method = req.method.unwrap_or_default();
    let target = req.path.unwrap_or_default();
    let version = if req.version == Some(0) { Version::Http10 } else { Version::Http11 };
    if target.is_empty() {
        return Err(reject(BAD, "empty request target"));
    }
    // The line is `method SP target SP HTTP/1.x`: its length is known without a scan.
    if target.as_ptr() as usize - buf.as_ptr() as usize + target.len() + " HTTP/1.1".len() > limits.max_request_line {
        return Err(reject(StatusCode::URI_TOO_LONG, "request line too long"));
    }
    head.method = span(method.as_bytes());
    head.target = span(origin_form(target.as_bytes())?);
    head.version = Some(version);
    head.headers.clear();
    head.protocol = 0..0;

    let mut hosts = 0u32;
    let mut content_length: Option<u64> = None;
    let mut chunked = false;
    let mut has_te = false;
    let mut unknown_coding = false;
    let mut compressed = false;
    let mut close = false;
    let mut keep_alive_token = false;
    let mut expect_continue = false;

    // httparse admits only HTAB, SP, VCHAR and obs-text in a value (no NUL, CR or LF),
    // and refuses obs-fold, so values need no second scan here.
    for h in req.headers.iter() {
        head.headers.push(HeaderSpan { name: span(h.name.as_bytes()), value: span(h.value) });
        let name = h.name.as_bytes();
        let value = h.value;
        if name.eq_ignore_ascii_case(b"host") {
            hosts += 1;
            if !is_valid_host(value) {
                return Err(reject(BAD, "invalid Host header"));
            }
        } else if name.eq_ignore_ascii_case(b"content-length") {
            let n = parse_content_length(value)?;
            if content_length.is_some_and(|prev| prev != n) {
                return Err(reject(BAD, "conflicting Content-Length headers"));
            }
            content_length = Some(n);
        } else if name.eq_ignore_ascii_case(b"transfer-encoding") {
            has_te = true;
            // RFC 9112 §6.1: chunked must be the final coding, and appear once.
            for coding in list_items(value) {
                if chunked {
                    return Err(reject(BAD, "chunked must be the final transfer coding"));
                }
                if coding.eq_ignore_ascii_case(b"chunked") {
                    chunked = true;
                } else if is_known_coding(coding) {
                    // gzip, deflate, compress: registered, but kiln does not decode them.
                    compressed = true;
                } else {
                    unknown_coding = true;
                }
            }
        } else if name.eq_ignore_ascii_case(b"connection") {
            for token in list_items(value) {
                if token.eq_ignore_ascii_case(b"close") {
                    close = true;
                } else if token.eq_ignore_ascii_case(b"keep-alive") {
                    keep_alive_token = true;
                }
            }
        } else if name.eq_ignore_ascii_case(b"expect") {
            if value.eq_ignore_ascii_case(b"100-continue") {
                expect_continue = true;
            } else {
                return Err(reject(StatusCode::EXPECTATION_FAILED, "unsupported expectation"));
            }
        }
    }

    // RFC 9112 §3.2: a 1.1 request carries exactly one Host.
    if version == Version::Http11 && hosts != 1 {
        let why = if hosts == 0 { "missing Host header" } else { "more than one Host header" };
        return Err(reject(BAD, why));
    }
    if hosts > 1 {
        return Err(reject(BAD, "more than one Host header"));
    }
    let framing = if has_te {
        // RFC 9112 §6.1: Transfer-Encoding with Content-Length is a smuggling attempt;
        // an HTTP/1.0 sender cannot use transfer codings at all.
        if content_length.is_some() {
            return Err(reject(BAD, "both Transfer-Encoding and Content-Length"));
        }
        if version == Version::Http10 {
            return Err(reject(BAD, "Transfer-Encoding in an HTTP/1.0 request"));
        }
        if unknown_coding {
            return Err(reject(StatusCode::NOT_IMPLEMENTED, "unknown transfer coding"));
        }
        if !chunked {
            // RFC 9112 §6.3: a request whose final coding is not chunked has no
            // determinable length.
            return Err(reject(BAD, "final transfer coding is not chunked"));
        }
        if compressed {
            return Err(reject(StatusCode::NOT_IMPLEMENTED, "unsupported transfer coding"));
        }
        Framing::Chunked
    } else {
        match content_length {
            None | Some(0) => Framing::Empty,
            Some(n) => Framing::Length(n),
        }
    };

    let keep_alive = match version {
        // HTTP/2 never reaches this parser; its streams have no keep-alive of their own.
        Version::Http11 | Version::Http2 => !close,
        Version::Http10 => keep_alive_token && !close,
    };
    Ok(Some(Parsed { len, framing, keep_alive, expect_continue, is_head: method == "HEAD" }))
}

/// The part of the target a server routes by. RFC 9112 §3.2.2: a server must accept
/// the absolute form (`http://host/path?query`), as a proxy sends it; its path and
/// query are then the target. An empty path is left empty (`Request::path` reads it
/// as `/`).
fn origin_form(target: &[u8]) -> Result<&[u8], Rejection> {
    if target.first() == Some(&b'/') || target == b"*" {
        return Ok(target);
    }
    let Some(sep) = target.windows(3).position(|w| w == b"://") else {
        return Err(reject(BAD, "invalid request target"));
    };
    let scheme = &target[..sep];
    if !(scheme.eq_ignore_ascii_case(b"http") || scheme.eq_ignore_ascii_case(b"https")) {
        return Err(reject(BAD, "request target is not an http URI"));
    }
    let rest = &target[sep + 3..];
    let end = rest.iter().position(|&b| b == b'/' || b == b'?').unwrap_or(rest.len());
    // RFC 9110 §4.2.4: userinfo in an http URI is an error, and must not reach a
    // server as part of the authority.
    if end == 0 || !is_valid_host(&rest[..end]) {
        return Err(reject(BAD, "invalid authority in request target"));
    }
    Ok(&rest[end..])
}

/// RFC 9110 §7.2 with RFC 3986 §3.2.2–3.2.3: `Host = uri-host [ ":" port ]`, where the
/// host is an IP literal in brackets or a reg-name (unreserved, pct-encoded and
/// sub-delims), and the port a number that fits a TCP port. An empty value is allowed
/// (§7.2: a target without authority). Userinfo (`a@b`), spaces and `/` are refused.
fn is_valid_host(value: &[u8]) -> bool {
    let (host, port) = if value.first() == Some(&b'[') {
        let Some(close) = value.iter().position(|&b| b == b']') else { return false };
        let literal = &value[1..close];
        let literal_ok =
            !literal.is_empty() && literal.iter().all(|&b| is_unreserved(b) || is_sub_delim(b) || b == b':');
        if !literal_ok {
            return false;
        }
        match &value[close + 1..] {
            [] => (&value[..0], None),
            [b':', port @ ..] => (&value[..0], Some(port)),
            _ => return false,
        }
    } else {
        match value.iter().rposition(|&b| b == b':') {
            Some(colon) => (&value[..colon], Some(&value[colon + 1..])),
            None => (value, None),
        }
    };
    let port_ok = port.is_none_or(|p| {
        p.len() <= 5
            && p.iter().all(u8::is_ascii_digit)
            && p.iter().fold(0u32, |n, &d| n * 10 + u32::from(d - b'0')) <= 65535
    });
    port_ok && is_reg_name(host)
}

/// `reg-name = *( unreserved / pct-encoded / sub-delims )` (RFC 3986 §3.2.2).
fn is_reg_name(name: &[u8]) -> bool {
    let mut i = 0;
    while i < name.len() {
        match name[i] {
            b'%' => {
                if !(name.get(i + 1).is_some_and(u8::is_ascii_hexdigit)
                    && name.get(i + 2).is_some_and(u8::is_ascii_hexdigit))
                {
                    return false;
                }
                i += 3;
                continue;
            }
            b if is_unreserved(b) || is_sub_delim(b) => {}
            _ => return false,
        }
        i += 1;
    }
    true
}

fn is_unreserved(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~')
}

fn is_sub_delim(b: u8) -> bool {
    matches!(b, b'!' | b'$' | b'&' | b'\'' | b'(' | b')' | b'*' | b'+' | b',' | b';' | b'=')
}

fn is_known_coding(coding: &[u8]) -> bool {
    [&b"gzip"[..], b"x-gzip", b"deflate", b"compress", b"x-compress"].iter().any(|k| coding.eq_ignore_ascii_case(k))
}

/// RFC 9110 §8.6: `Content-Length = 1*DIGIT`; no sign, no spaces, no hex.
fn parse_content_length(value: &[u8]) -> Result<u64, Rejection> {
    if value.is_empty() || !value.iter().all(u8::is_ascii_digit) {
        return Err(reject(BAD, "invalid Content-Length"));
    }
    value
        .iter()
        .try_fold(0u64, |n, &d| n.checked_mul(10)?.checked_add(u64::from(d - b'0')))
        .ok_or(reject(BAD, "Content-Length overflows"))
}

/// The items of a comma-separated header list, trimmed, empty ones skipped.
fn list_items(value: &[u8]) -> impl Iterator<Item = &[u8]> {
    value.split(|&b| b == b',').map(<[u8]>::trim_ascii).filter(|s| !s.is_empty())
}

/// The size limits of a head that is still arriving, checked without parsing it.
pub(crate) fn check_partial_head(buf: &[u8], limits: &Limits) -> Result<(), Rejection> {
    check_request_line_length(buf, limits.max_request_line)?;
    if buf.len() > limits.max_head_bytes {
        return Err(reject(StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE, "request head too large"));
    }
    Ok(())
}

/// RFC 9112 §3: a request line longer than the limit gets 414 even before it ends.
fn check_request_line_length(buf: &[u8], max: usize) -> Result<(), Rejection> {
    let window = &buf[..buf.len().min(max + 2)];
    match window.iter().position(|&b| b == b'\n') {
        Some(end) if end <= max + 1 => Ok(()),
        None if buf.len() <= max => Ok(()),
        _ => Err(reject(StatusCode::URI_TOO_LONG, "request line too long")),
    }
}

fn rejection_for(e: httparse::Error, buf: &[u8]) -> Rejection {
    match e {
        httparse::Error::TooManyHeaders => {
            reject(StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE, "too many header fields")
        }
        httparse::Error::Version if names_other_http_version(buf) => {
            reject(StatusCode::HTTP_VERSION_NOT_SUPPORTED, "HTTP version not supported")
        }
        httparse::Error::Version if lacks_version(buf) => reject(BAD, "request line without an HTTP version"),
        httparse::Error::Version => reject(BAD, "malformed request line"),
        httparse::Error::Token => reject(BAD, "invalid request target"),
        httparse::Error::HeaderName => reject(BAD, "invalid header name"),
        httparse::Error::HeaderValue => reject(BAD, "invalid header value"),
        httparse::Error::NewLine => reject(BAD, "invalid line ending"),
        httparse::Error::Status => reject(BAD, "malformed request"),
    }
}

/// Whether the request line ends after its target, with no `HTTP/1.x` (RFC 9112 §3:
/// the version is part of every request line; HTTP/0.9's `GET /` is not served).
fn lacks_version(buf: &[u8]) -> bool {
    let line_end = buf.iter().position(|&b| b == b'\n').unwrap_or(buf.len());
    let line = buf[..line_end].strip_suffix(b"\r").unwrap_or(&buf[..line_end]);
    line.trim_ascii_end().split(|&b| b == b' ').count() == 2
}

/// Where the minor digit sits when the request line ends in `HTTP/1.y` with y above 1.
fn higher_minor_version(buf: &[u8]) -> Option<usize> {
    let line_end = buf.iter().position(|&b| b == b'\n')?;
    let line = &buf[..line_end];
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let minor = line.len().checked_sub(1)?;
    let ok = minor >= 8 && &line[minor - 8..minor] == b" HTTP/1." && matches!(line[minor], b'2'..=b'9');
    ok.then_some(minor)
}

/// Whether the request line ends in a well-formed `HTTP/x.y` other than 1.0 and 1.1,
/// which deserves 505 rather than 400 (RFC 9110 §15.6.6).
fn names_other_http_version(buf: &[u8]) -> bool {
    let line_end = buf.iter().position(|&b| b == b'\n').unwrap_or(buf.len());
    let line = buf[..line_end].strip_suffix(b"\r").unwrap_or(&buf[..line_end]);
    let parts: Vec<&[u8]> = line.split(|&b| b == b' ').collect();
    let [_, _, version] = parts[..] else { return false };
    matches!(version, [b'H', b'T', b'T', b'P', b'/', major, b'.', minor] if major.is_ascii_digit() && minor.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(raw: &[u8]) -> Result<Option<Parsed>, Rejection> {
        parse_head(raw, &Limits::default(), &mut Head::default())
    }

    fn status_of(raw: &[u8]) -> u16 {
        match parse(raw) {
            Err(r) => r.status.as_u16(),
            Ok(Some(p)) if check_body_len(&p, Limits::default().max_body_bytes as u64).is_err() => 413,
            Ok(Some(_)) => 200,
            Ok(None) => 0,
        }
    }

    #[test]
    fn simple_get_is_complete_and_keeps_alive() {
        let p = parse(b"GET /pong HTTP/1.1\r\nHost: x\r\n\r\n").unwrap().unwrap();
        assert_eq!(p.len, 31);
        assert_eq!(p.framing, Framing::Empty);
        assert!(p.keep_alive);
        assert!(!p.is_head);
    }

    #[test]
    fn partial_head_asks_for_more() {
        assert_eq!(parse(b"GET /pong HTTP/1.1\r\nHost: x\r\n").unwrap(), None);
        assert_eq!(parse(b"GE").unwrap(), None);
    }

    #[test]
    fn offsets_point_into_the_buffer() {
        let raw = b"POST /a?b=c HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\nabc";
        let mut head = Head::default();
        let p = parse_head(raw, &Limits::default(), &mut head).unwrap().unwrap();
        assert_eq!(&raw[head.method.start as usize..head.method.end as usize], b"POST");
        assert_eq!(&raw[head.target.start as usize..head.target.end as usize], b"/a?b=c");
        assert_eq!(head.headers.len(), 2);
        assert_eq!(p.framing, Framing::Length(3));
    }

    #[test]
    fn keep_alive_follows_version_rules() {
        let cases: &[(&[u8], bool)] = &[
            (b"GET / HTTP/1.1\r\nHost: x\r\n\r\n", true),
            (b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", false),
            (b"GET / HTTP/1.1\r\nHost: x\r\nConnection: Keep-Alive, Close\r\n\r\n", false),
            (b"GET / HTTP/1.0\r\n\r\n", false),
            (b"GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", true),
        ];
        for (raw, keep) in cases {
            assert_eq!(parse(raw).unwrap().unwrap().keep_alive, *keep, "{}", String::from_utf8_lossy(raw));
        }
    }

    #[test]
    fn framing_rules_from_rfc_9112() {
        let cases: &[(&[u8], u16)] = &[
            (b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n", 400),
            (b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n", 400),
            (b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked, gzip\r\n\r\n", 400),
            (b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: foo\r\n\r\n", 501),
            (b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: foo, chunked\r\n\r\n", 501),
            (b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n", 400),
            (b"POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", 400),
            (b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: +5\r\n\r\n", 400),
            (b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n", 400),
            (b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 0x10\r\n\r\n", 400),
            (b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5 0\r\n\r\n", 400),
            (b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: \r\n\r\n", 400),
            (b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999999999999999\r\n\r\n", 400),
            (b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n", 400),
            (b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\n", 200),
            (b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2000000\r\n\r\n", 413),
            (b"GET / HTTP/1.1\r\n\r\n", 400),
            (b"GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400),
            (b"GET / HTTP/1.1\r\nHost : a\r\n\r\n", 400),
            (b"GET / HTTP/1.1\r\nHost: a\r\nX-A: b\r\n c\r\n\r\n", 400),
            (b"GET / HTTP/1.1\r\nHost: a\rX: b\r\n\r\n", 400),
            (b"GET / HTTP/1.1\r\nHost: a\r\nX: a\0b\r\n\r\n", 400),
            (b"GET / HTTP/1.1\r\nHost: a\r\n: b\r\n\r\n", 400),
            (b"G(T / HTTP/1.1\r\nHost: a\r\n\r\n", 400),
            (b"GET / HTTP/9.9\r\nHost: a\r\n\r\n", 505),
            (b"GET / HTTP/1.1x\r\nHost: a\r\n\r\n", 400),
            (b"GET /a\0b HTTP/1.1\r\nHost: a\r\n\r\n", 400),
            (b"GET /a b HTTP/1.1\r\nHost: a\r\n\r\n", 400),
            (b"GET /a\x01b HTTP/1.1\r\nHost: a\r\n\r\n", 400),
            (b"GET / HTTP/1.1\r\nHost: a\r\nExpect: 200-ok\r\n\r\n", 417),
        ];
        for (raw, want) in cases {
            assert_eq!(status_of(raw), *want, "{}", String::from_utf8_lossy(raw).escape_debug());
        }
    }

    #[test]
    fn host_values_that_are_not_an_authority_get_400() {
        // Issue 13: `a@x`, `a b`, `x/y` and `x:99999` were answered 200.
        let host = |value: &str| status_of(format!("GET / HTTP/1.1\r\nHost: {value}\r\n\r\n").as_bytes());
        for bad in ["a@x", "a b", "x/y", "x:99999", "x:1x", "[::1", "[::1]x", "[]", "a%zz", "x:8080:1", "ex\"ample"] {
            assert_eq!(host(bad), 400, "Host: {bad}");
        }
        for good in
            ["", "x", "example.com:8080", "127.0.0.1:65535", "[::1]:80", "[v1.a]", "a%20b", "x:", "xn--bcher-kva.de"]
        {
            assert_eq!(host(good), 200, "Host: {good}");
        }
    }

    #[test]
    fn an_absolute_form_target_is_reduced_to_its_path_and_query() {
        // Issue 13: `GET http://x/hello` got `404 no route for http://x/hello`.
        let target_of = |raw: &[u8]| {
            let mut head = Head::default();
            parse_head(raw, &Limits::default(), &mut head).unwrap().unwrap();
            String::from_utf8(raw[head.target.start as usize..head.target.end as usize].to_vec()).unwrap()
        };
        assert_eq!(target_of(b"GET http://x/hello?a=1 HTTP/1.1\r\nHost: x\r\n\r\n"), "/hello?a=1");
        assert_eq!(target_of(b"GET HTTPS://x:8443/ HTTP/1.1\r\nHost: x\r\n\r\n"), "/");
        assert_eq!(target_of(b"GET http://x HTTP/1.1\r\nHost: x\r\n\r\n"), "");
        assert_eq!(target_of(b"OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n"), "*");
        for bad in ["ftp://x/a", "http://u@x/a", "http:///a", "x/a", "http:/x"] {
            let raw = format!("GET {bad} HTTP/1.1\r\nHost: x\r\n\r\n");
            assert_eq!(status_of(raw.as_bytes()), 400, "{bad}");
        }
    }

    #[test]
    fn a_higher_http_1_minor_version_is_answered_as_1_1() {
        // Issue 13: RFC 9112 §2.3; `HTTP/1.2` got 505.
        let mut head = Head::default();
        let raw = b"GET /a HTTP/1.2\r\nHost: x\r\nX: y\r\n\r\n";
        let p = parse_head(raw, &Limits::default(), &mut head).unwrap().unwrap();
        assert_eq!((p.len, head.version, p.keep_alive), (raw.len(), Some(Version::Http11), true));
        assert_eq!(&raw[head.headers[1].value.start as usize..head.headers[1].value.end as usize], b"y");
        assert_eq!(status_of(b"GET / HTTP/1.9\r\n\r\n"), 400, "still needs its Host");
        assert_eq!(status_of(b"GET / HTTP/2.0\r\nHost: x\r\n\r\n"), 505);
    }

    #[test]
    fn a_request_line_without_a_version_gets_400_naming_it() {
        for raw in [&b"GET / \r\n\r\n"[..], b"GET / \r\nHost: a\r\n\r\n"] {
            let refused = parse(raw).unwrap_err();
            assert_eq!((refused.status.as_u16(), refused.reason), (400, "request line without an HTTP version"));
        }
    }

    #[test]
    fn request_line_limit_gives_414_before_the_line_ends() {
        let limits = Limits { max_request_line: 16, ..Limits::default() };
        let long = b"GET /aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
        let r = parse_head(long, &limits, &mut Head::default()).unwrap_err();
        assert_eq!(r.status, StatusCode::URI_TOO_LONG);
        assert!(parse_head(b"GET /a HTTP/1.1\r\nHost: x\r\n\r\n", &limits, &mut Head::default()).is_ok());
    }

    #[test]
    fn header_limits_give_431() {
        let limits = Limits { max_head_bytes: 64, max_headers: 3, ..Limits::default() };
        let big = [&b"GET / HTTP/1.1\r\nHost: x\r\nX: "[..], &[b'a'; 80]].concat();
        assert_eq!(parse_head(&big, &limits, &mut Head::default()).unwrap_err().status.as_u16(), 431);
        let many = b"GET / HTTP/1.1\r\nHost: x\r\nA: 1\r\nB: 2\r\nC: 3\r\n\r\n";
        assert_eq!(parse_head(many, &limits, &mut Head::default()).unwrap_err().status.as_u16(), 431);
    }

    #[test]
    fn a_partial_head_is_held_to_the_size_limits_without_parsing() {
        let limits = Limits { max_request_line: 16, max_head_bytes: 40, ..Limits::default() };
        assert!(check_partial_head(b"GET / HTTP/1.1\r\nHost: a", &limits).is_ok());
        assert_eq!(check_partial_head(&[b'G'; 20], &limits).unwrap_err().status.as_u16(), 414);
        let long_head = [&b"GET / HTTP/1.1\r\nX: "[..], &[b'v'; 40]].concat();
        assert_eq!(check_partial_head(&long_head, &limits).unwrap_err().status.as_u16(), 431);
    }

    #[test]
    fn expect_continue_and_head_are_flagged() {
        let p =
            parse(b"PUT / HTTP/1.1\r\nHost: x\r\nExpect: 100-Continue\r\nContent-Length: 1\r\n\r\n").unwrap().unwrap();
        assert!(p.expect_continue);
        assert!(parse(b"HEAD / HTTP/1.1\r\nHost: x\r\n\r\n").unwrap().unwrap().is_head);
    }
}
