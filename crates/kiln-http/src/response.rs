//! The response a service fills; the engine encodes it into the write buffer.

use std::fmt;
use std::fs::File;
use std::io;
use std::pin::Pin;

use bytes::Bytes;
use futures_core::Stream;
use http::StatusCode;

use crate::upgrade::OnUpgrade;

/// A body produced piece by piece; sent with chunked transfer coding.
pub type BodyStream = Pin<Box<dyn Stream<Item = io::Result<Bytes>>>>;

/// Where a response's body comes from.
pub(crate) enum Body {
    /// The bytes in [`Response::body_mut`], the common case.
    Buffer,
    /// A constant.
    Static(&'static [u8]),
    /// Shared bytes, such as a cached file.
    Bytes(Bytes),
    /// A range of an open file, sent with `sendfile(2)` after the head.
    File { file: File, offset: u64, len: u64 },
    /// A stream of chunks, sent with chunked transfer coding.
    Stream(BodyStream),
}

/// An error from [`Response::insert_header`]: the name or value could not be sent as is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvalidHeader;

impl fmt::Display for InvalidHeader {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("invalid header: the name must be a token and the value must hold no CR, LF or NUL")
    }
}

impl std::error::Error for InvalidHeader {}

/// The response to one request.
///
/// The engine adds `Server`, `Date`, `Content-Length` (or `Transfer-Encoding: chunked`)
/// and `Connection` itself; a service sets the status, its own headers and the body.
/// One `Response` is reused for every request of a connection, so writing into
/// [`body_mut`](Self::body_mut) does not allocate once the buffer has grown.
pub struct Response {
    pub(crate) status: StatusCode,
    pub(crate) headers: Vec<u8>,
    pub(crate) buffer: Vec<u8>,
    pub(crate) body: Body,
    pub(crate) close: bool,
    /// Set by [`set_upgrade`](Self::set_upgrade); taken by the engine after a `101`.
    pub(crate) upgrade: Option<OnUpgrade>,
}

impl Default for Response {
    fn default() -> Self {
        Self::new()
    }
}

impl Response {
    /// An empty `200 OK` response.
    pub fn new() -> Self {
        Response {
            status: StatusCode::OK,
            headers: Vec::new(),
            buffer: Vec::new(),
            body: Body::Buffer,
            close: false,
            upgrade: None,
        }
    }

    /// Resets to an empty `200 OK`, keeping the buffers' capacity.
    pub(crate) fn clear(&mut self) {
        self.status = StatusCode::OK;
        self.headers.clear();
        self.buffer.clear();
        self.body = Body::Buffer;
        self.close = false;
        self.upgrade = None;
    }

    /// The status code.
    pub fn status(&self) -> StatusCode {
        self.status
    }

    /// Sets the status code.
    pub fn set_status(&mut self, status: StatusCode) {
        self.status = status;
    }

    /// Sets `Content-Type`. Call it once; the value must be a valid header value.
    pub fn set_content_type(&mut self, value: &str) {
        self.append_header_unchecked(b"Content-Type", value.as_bytes());
    }

    /// Appends a header after checking that it can be sent as is: the name must be a
    /// token and the value must not hold CR, LF or NUL (which would split the response).
    pub fn insert_header(&mut self, name: &str, value: &[u8]) -> Result<(), InvalidHeader> {
        let name_ok = !name.is_empty() && name.bytes().all(is_token);
        let value_ok = value.iter().all(|&b| b != b'\r' && b != b'\n' && b != 0);
        if !(name_ok && value_ok) {
            return Err(InvalidHeader);
        }
        self.append_header_unchecked(name.as_bytes(), value);
        Ok(())
    }

    /// Appends a header the caller knows to be valid (a constant, or a value it built).
    pub fn append_header_unchecked(&mut self, name: &[u8], value: &[u8]) {
        self.headers.extend_from_slice(name);
        self.headers.extend_from_slice(b": ");
        self.headers.extend_from_slice(value);
        self.headers.extend_from_slice(b"\r\n");
    }

    /// Appends pre-rendered header lines, each ending in CRLF, as a cache keeps them.
    pub fn append_raw_headers(&mut self, lines: &[u8]) {
        debug_assert!(lines.is_empty() || lines.ends_with(b"\r\n"));
        self.headers.extend_from_slice(lines);
    }

    /// The header lines set so far, each `Name: value\r\n`.
    pub fn raw_headers(&self) -> &[u8] {
        &self.headers
    }

    /// Whether a header named `name` (ASCII case-insensitive) has been set.
    pub fn has_header(&self, name: &str) -> bool {
        self.headers.split(|&b| b == b'\n').any(|line| {
            line.len() > name.len()
                && line[..name.len()].eq_ignore_ascii_case(name.as_bytes())
                && line[name.len()] == b':'
        })
    }

    /// Removes every header named `name` (ASCII case-insensitive), as a layer that
    /// changes a representation drops what no longer describes it; returns how many.
    ///
    /// ```
    /// let mut res = kiln_http::Response::new();
    /// res.append_header_unchecked(b"ETag", b"\"a\"");
    /// res.append_header_unchecked(b"Accept-Ranges", b"bytes");
    /// res.append_header_unchecked(b"etag", b"\"b\"");
    /// assert_eq!(res.remove_header("ETag"), 2);
    /// assert_eq!(res.remove_header("ETa"), 0);
    /// assert_eq!(res.raw_headers(), b"Accept-Ranges: bytes\r\n");
    /// ```
    pub fn remove_header(&mut self, name: &str) -> usize {
        // In place, without an allocation: the lines kept slide down over those removed.
        let (mut read, mut write, mut removed) = (0, 0, 0);
        while read < self.headers.len() {
            let end =
                self.headers[read..].iter().position(|&b| b == b'\n').map_or(self.headers.len(), |i| read + i + 1);
            let line = &self.headers[read..end];
            let named = line.len() > name.len()
                && line[..name.len()].eq_ignore_ascii_case(name.as_bytes())
                && line[name.len()] == b':';
            if named {
                removed += 1;
            } else {
                if write != read {
                    self.headers.copy_within(read..end, write);
                }
                write += end - read;
            }
            read = end;
        }
        self.headers.truncate(write);
        removed
    }

    /// The body buffer; write the body here. Selecting it discards any other body.
    pub fn body_mut(&mut self) -> &mut Vec<u8> {
        self.body = Body::Buffer;
        &mut self.buffer
    }

    /// Sends a constant body.
    pub fn set_body_static(&mut self, body: &'static [u8]) {
        self.body = Body::Static(body);
    }

    /// Sends shared bytes without copying them into the body buffer first.
    pub fn set_body_bytes(&mut self, body: Bytes) {
        self.body = Body::Bytes(body);
    }

    /// Sends `len` bytes of `file` from `offset` with `sendfile(2)`, never reading the
    /// file into memory.
    pub fn set_body_file(&mut self, file: File, offset: u64, len: u64) {
        self.body = Body::File { file, offset, len };
    }

    /// Sends a body produced piece by piece, with chunked transfer coding
    /// (or, to an HTTP/1.0 client, raw and then closing the connection).
    pub fn set_body_stream(&mut self, stream: BodyStream) {
        self.body = Body::Stream(stream);
    }

    /// Takes a streamed body out, leaving an empty buffer in its place, so that a
    /// layer can wrap it (compression does) and [`set`](Self::set_body_stream) the
    /// wrapper; `None`, and nothing changed, when the body is not a stream.
    pub fn take_body_stream(&mut self) -> Option<BodyStream> {
        match std::mem::replace(&mut self.body, Body::Buffer) {
            Body::Stream(stream) => {
                self.buffer.clear();
                Some(stream)
            }
            other => {
                self.body = other;
                None
            }
        }
    }

    /// The body's length when it is known in advance.
    pub fn body_len(&self) -> Option<u64> {
        match &self.body {
            Body::Buffer => Some(self.buffer.len() as u64),
            Body::Static(b) => Some(b.len() as u64),
            Body::Bytes(b) => Some(b.len() as u64),
            Body::File { len, .. } => Some(*len),
            Body::Stream(_) => None,
        }
    }

    /// The body's bytes when they are in memory (buffer, constant or shared bytes);
    /// `None` for a file or a stream.
    pub fn body_bytes(&self) -> Option<&[u8]> {
        match &self.body {
            Body::Buffer => Some(&self.buffer),
            Body::Static(b) => Some(b),
            Body::Bytes(b) => Some(b),
            Body::File { .. } | Body::Stream(_) => None,
        }
    }

    /// Switches protocols: with status `101 Switching Protocols` (and the service's own
    /// `Upgrade` and `Connection: upgrade` headers), the engine sends the head, flushes
    /// it, and calls `on_upgrade` with the connection, inside the connection's task.
    /// Over HTTP/2 the answer to a CONNECT ([`Request::protocol`](crate::Request::protocol):
    /// RFC 8441's extended CONNECT) with a `2xx` status does the same with its stream,
    /// its head sent without a length and the stream left open. With any other status,
    /// or to a `HEAD` or HTTP/1.0 request, the callback is dropped and the response goes
    /// out as usual.
    pub fn set_upgrade(&mut self, on_upgrade: OnUpgrade) {
        self.upgrade = Some(on_upgrade);
    }

    /// Whether [`set_upgrade`](Self::set_upgrade) was called.
    pub fn has_upgrade(&self) -> bool {
        self.upgrade.is_some()
    }

    /// Takes the callback [`set_upgrade`](Self::set_upgrade) left, to run it on a
    /// transport of the caller's own (an in-process test client does).
    pub fn take_upgrade(&mut self) -> Option<OnUpgrade> {
        self.upgrade.take()
    }

    /// Closes the connection after this response.
    pub fn set_close(&mut self) {
        self.close = true;
    }
}

impl fmt::Debug for Response {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Response")
            .field("status", &self.status)
            .field("headers", &String::from_utf8_lossy(&self.headers))
            .field("body_len", &self.body_len())
            .finish()
    }
}

/// `tchar` from RFC 9110 §5.6.2.
pub(crate) fn is_token(b: u8) -> bool {
    matches!(b,
        b'!' | b'#' | b'$' | b'%' | b'&' | b'\'' | b'*' | b'+' | b'-' | b'.' | b'^' | b'_' | b'`' | b'|' | b'~'
        | b'0'..=b'9' | b'a'..=b'z' | b'A'..=b'Z')
}
