//! Refused requests, whatever the wire: the status, the reason, and the short answer.

use http::StatusCode;

use crate::response::Response;

/// A request that must be refused: the status to answer with and why. On HTTP/1.1 the
/// connection is closed after the answer, since what follows a bad head cannot be
/// trusted; on HTTP/2 only the stream is answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Rejection {
    pub(crate) status: StatusCode,
    pub(crate) reason: &'static str,
}

/// A short plain-text response for a refused request. A `503` says when to retry
/// (RFC 9110 §10.2.3), so that a proxy does not treat it as lasting.
pub(crate) fn error_response(res: &mut Response, status: StatusCode, reason: &str) {
    res.clear();
    res.set_status(status);
    res.set_content_type("text/plain; charset=utf-8");
    if status == StatusCode::SERVICE_UNAVAILABLE {
        res.append_header_unchecked(b"Retry-After", b"1");
    }
    let body = res.body_mut();
    body.extend_from_slice(reason.as_bytes());
    body.push(b'\n');
}
