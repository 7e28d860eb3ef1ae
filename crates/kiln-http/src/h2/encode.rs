//! A [`Response`]'s head as HTTP/2 fields: its `Name: value` lines split into
//! lower-case names and values, the engine's own `date`, `server` and
//! `content-length` added, and the fields HTTP/2 forbids left out.

use http::header::{self, HeaderName, HeaderValue};

use crate::response::Response;

/// Connection-specific fields, which an HTTP/2 message must not carry (RFC 9113
/// §8.2.2); the engine frames the body itself, so a service's `content-length` goes too.
const DROPPED: [HeaderName; 6] = [
    header::CONNECTION,
    HeaderName::from_static("keep-alive"),
    header::TRANSFER_ENCODING,
    header::UPGRADE,
    HeaderName::from_static("proxy-connection"),
    header::CONTENT_LENGTH,
];

/// What every response of a connection carries besides its own fields.
pub(super) struct Common<'a> {
    pub(super) date: HeaderValue,
    pub(super) hsts: Option<&'a HeaderValue>,
}

/// The head of `res`, with `content-length: len` when the length is to be sent.
/// A line that is not a valid field (the unchecked appends allow anything) is left out
/// rather than sent broken.
pub(super) fn head(res: &Response, len: Option<u64>, common: Common<'_>) -> http::Response<()> {
    let mut head = http::Response::new(());
    *head.status_mut() = res.status;
    let fields = head.headers_mut();
    fields.insert(header::SERVER, HeaderValue::from_static("kiln"));
    fields.insert(header::DATE, common.date);
    append_lines(fields, &res.headers);
    if let Some(len) = len {
        fields.insert(header::CONTENT_LENGTH, HeaderValue::from(len));
    }
    if let Some(hsts) = common.hsts {
        if !fields.contains_key(header::STRICT_TRANSPORT_SECURITY) {
            fields.insert(header::STRICT_TRANSPORT_SECURITY, hsts.clone());
        }
    }
    head
}

/// A `103 Early Hints` carrying `lines` (RFC 8297).
pub(super) fn early_hints(lines: &[u8]) -> http::Response<()> {
    let mut hints = http::Response::new(());
    *hints.status_mut() = http::StatusCode::EARLY_HINTS;
    append_lines(hints.headers_mut(), lines);
    hints
}

/// Appends each `Name: value` line of `lines` as a field.
fn append_lines(fields: &mut http::HeaderMap, lines: &[u8]) {
    for line in lines.split(|&b| b == b'\n') {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let Some(colon) = line.iter().position(|&b| b == b':') else { continue };
        let (name, value) = (&line[..colon], line[colon + 1..].trim_ascii());
        let (Ok(name), Ok(value)) = (HeaderName::from_bytes(name), HeaderValue::from_bytes(value)) else { continue };
        if !DROPPED.contains(&name) {
            fields.append(name, value);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_lines_become_lower_case_fields_and_connection_fields_are_dropped() {
        let mut res = Response::new();
        res.set_content_type("text/plain");
        res.append_header_unchecked(b"Set-Cookie", b"a=1");
        res.append_header_unchecked(b"Set-Cookie", b"b=2");
        res.append_header_unchecked(b"Connection", b"close");
        res.append_header_unchecked(b"Transfer-Encoding", b"chunked");
        res.append_header_unchecked(b"Keep-Alive", b"timeout=5");
        res.append_header_unchecked(b"Content-Length", b"99");
        res.append_header_unchecked(b"Bad Name", b"x");
        let hsts = HeaderValue::from_static("max-age=60");
        let common = Common { date: HeaderValue::from_static("Sun, 06 Nov 1994 08:49:37 GMT"), hsts: Some(&hsts) };
        let head = head(&res, Some(4), common);
        let fields = head.headers();
        let names: Vec<&str> = fields.keys().map(|n| n.as_str()).collect();
        assert_eq!(
            names,
            ["server", "date", "content-type", "set-cookie", "content-length", "strict-transport-security"]
        );
        assert_eq!(fields.get_all("set-cookie").iter().count(), 2);
        assert_eq!(fields["content-length"], "4");
        assert_eq!(fields["content-type"], "text/plain");
    }

    #[test]
    fn a_service_s_own_hsts_stands() {
        let mut res = Response::new();
        res.append_header_unchecked(b"Strict-Transport-Security", b"max-age=1");
        let hsts = HeaderValue::from_static("max-age=60");
        let common = Common { date: HeaderValue::from_static("x"), hsts: Some(&hsts) };
        assert_eq!(head(&res, None, common).headers()["strict-transport-security"], "max-age=1");
    }
}
