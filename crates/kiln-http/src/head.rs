//! A parsed request head, as the parser leaves it and the request view reads it:
//! offsets into the connection's read buffer, so nothing is copied.

use std::ops::Range;

/// The HTTP version of a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Version {
    /// HTTP/1.0: the connection closes after the response unless the client asked
    /// for `Connection: keep-alive`.
    Http10,
    /// HTTP/1.1: the connection stays open unless either side says `Connection: close`.
    Http11,
    /// HTTP/2 (RFC 9113): one stream of a multiplexed connection, by ALPN over TLS or
    /// with prior knowledge on the plain port. Its `:authority` reads as `host`.
    Http2,
}

/// Where a header's name and value sit in the read buffer.
#[derive(Debug, Clone)]
pub(crate) struct HeaderSpan {
    pub(crate) name: Range<u32>,
    pub(crate) value: Range<u32>,
}

/// A parsed request head, held as offsets into the read buffer so that nothing is
/// copied and the connection future stays small.
#[derive(Debug, Default)]
pub(crate) struct Head {
    pub(crate) method: Range<u32>,
    pub(crate) target: Range<u32>,
    pub(crate) version: Option<Version>,
    pub(crate) headers: Vec<HeaderSpan>,
    /// An HTTP/2 extended CONNECT's `:protocol` (RFC 8441 §4); empty otherwise.
    pub(crate) protocol: Range<u32>,
}
