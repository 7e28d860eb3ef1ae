//! Response heads on the wire (RFC 9112 §4, §6).

use http::StatusCode;

use crate::head::Version;
use crate::response::Response;

/// How the response body is delimited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Delimit {
    /// No body and no length: 1xx, 204, 304.
    None,
    /// `Content-Length`.
    Length(u64),
    /// `Transfer-Encoding: chunked`.
    Chunked,
    /// The body ends when the connection closes (a stream to an HTTP/1.0 client).
    Close,
}

/// How a response to this request is framed.
pub(crate) fn delimit(res: &Response, version: Version) -> Delimit {
    let code = res.status.as_u16();
    if code < 200 || code == 204 || code == 304 {
        return Delimit::None;
    }
    match (res.body_len(), version) {
        (Some(n), _) => Delimit::Length(n),
        (None, Version::Http11 | Version::Http2) => Delimit::Chunked,
        (None, Version::Http10) => Delimit::Close,
    }
}

/// Writes the status line and headers of `res`, ending with the empty line.
pub(crate) fn encode_head(
    out: &mut Vec<u8>,
    res: &Response,
    date: &[u8; 29],
    delimit: Delimit,
    keep_alive: bool,
    version: Version,
) {
    status_line(out, res.status);
    out.extend_from_slice(b"Server: kiln\r\nDate: ");
    out.extend_from_slice(date);
    out.extend_from_slice(b"\r\n");
    out.extend_from_slice(&res.headers);
    match delimit {
        Delimit::Length(n) => {
            out.extend_from_slice(b"Content-Length: ");
            out.extend_from_slice(itoa::Buffer::new().format(n).as_bytes());
            out.extend_from_slice(b"\r\n");
        }
        Delimit::Chunked => out.extend_from_slice(b"Transfer-Encoding: chunked\r\n"),
        Delimit::None | Delimit::Close => {}
    }
    if !keep_alive {
        out.extend_from_slice(b"Connection: close\r\n");
    } else if version == Version::Http10 {
        out.extend_from_slice(b"Connection: keep-alive\r\n");
    }
    out.extend_from_slice(b"\r\n");
}

fn status_line(out: &mut Vec<u8>, status: StatusCode) {
    if status == StatusCode::OK {
        out.extend_from_slice(b"HTTP/1.1 200 OK\r\n");
        return;
    }
    out.extend_from_slice(b"HTTP/1.1 ");
    out.extend_from_slice(status.as_str().as_bytes());
    out.push(b' ');
    out.extend_from_slice(status.canonical_reason().unwrap_or("Unknown").as_bytes());
    out.extend_from_slice(b"\r\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn head_of(res: &Response, keep_alive: bool, version: Version) -> String {
        let mut out = Vec::new();
        encode_head(&mut out, res, b"Sun, 06 Nov 1994 08:49:37 GMT", delimit(res, version), keep_alive, version);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn ok_with_length() {
        let mut res = Response::new();
        res.set_content_type("text/plain");
        res.body_mut().extend_from_slice(b"PONG");
        assert_eq!(
            head_of(&res, true, Version::Http11),
            "HTTP/1.1 200 OK\r\nServer: kiln\r\nDate: Sun, 06 Nov 1994 08:49:37 GMT\r\nContent-Type: text/plain\r\nContent-Length: 4\r\n\r\n"
        );
    }

    #[test]
    fn connection_header_follows_version_and_keep_alive() {
        let res = Response::new();
        assert!(head_of(&res, false, Version::Http11).contains("Connection: close\r\n"));
        assert!(head_of(&res, true, Version::Http10).contains("Connection: keep-alive\r\n"));
        assert!(!head_of(&res, true, Version::Http11).contains("Connection"));
    }

    #[test]
    fn bodiless_statuses_have_no_length() {
        for code in [204u16, 304, 101] {
            let mut res = Response::new();
            res.set_status(StatusCode::from_u16(code).unwrap());
            let head = head_of(&res, true, Version::Http11);
            assert!(!head.contains("Content-Length"), "{code}: {head}");
            assert!(head.starts_with(&format!("HTTP/1.1 {code} ")));
        }
    }

    #[test]
    fn every_standard_status_has_its_reason() {
        let mut res = Response::new();
        res.set_status(StatusCode::IM_A_TEAPOT);
        assert!(head_of(&res, true, Version::Http11).starts_with("HTTP/1.1 418 I'm a teapot\r\n"));
    }
}
