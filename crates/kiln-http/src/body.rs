//! Request bodies handed to a service as a stream rather than read whole first.
//!
//! The engine asks the service how it wants each request's body
//! ([`Service::body_mode`](crate::Service::body_mode)) once the head is parsed. For
//! [`BodyMode::Stream`] it calls the service at once with an empty [`Request::body`]
//! and an [`IncomingBody`] handle ([`Request::body_stream`]); the handle and the
//! connection share one slot. The connection's own task polls the service's future
//! and, whenever the handler waits for more of the body, reads one buffer's worth from
//! the socket into the slot: the body is read only as fast as the handler asks, so a
//! stalled upload holds one read buffer, not the body. Over HTTP/2 the stream's DATA
//! goes into the slot as it arrives and its flow-control window is given back only for
//! what the handler has taken, so a stalled upload holds at most one window.
//!
//! [`Request::body`]: crate::Request::body
//! [`Request::body_stream`]: crate::Request::body_stream

use std::cell::RefCell;
use std::collections::VecDeque;
use std::fmt;
use std::io;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

use bytes::{Bytes, BytesMut};
use http::StatusCode;
use tokio::io::ReadBuf;

/// How the engine reads one request's body, as the service asks for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BodyMode {
    /// Read whole, up to [`Limits::max_body_bytes`](crate::Limits::max_body_bytes),
    /// before the service is called; [`Request::body`](crate::Request::body) is the
    /// body. The default, and free for requests that have no body.
    #[default]
    Buffer,
    /// Handed to the service as an [`IncomingBody`] it reads as it goes, up to
    /// `max_bytes` (which may be above the global limit: a route for large uploads).
    Stream {
        /// The most body bytes this request may send: beyond it, `413`.
        max_bytes: u64,
    },
}

/// Why a streamed body could not be read to its end. The engine answers the request
/// itself with the status of [`BodyError::status`] (and closes the connection),
/// whatever the service made of the error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BodyError {
    /// The body is over the route's limit (`413`).
    TooLarge,
    /// The client sent nothing for the body timeout (`408`): the timeout counts time
    /// without progress, so a slow but steady upload is never cut.
    TimedOut,
    /// The body's framing is malformed, a bad chunk say (`400`).
    Malformed,
    /// The client closed the connection or reset the stream before the body's end.
    Closed,
}

impl BodyError {
    /// The status the engine answers with.
    pub fn status(self) -> StatusCode {
        match self {
            BodyError::TooLarge => StatusCode::PAYLOAD_TOO_LARGE,
            BodyError::TimedOut => StatusCode::REQUEST_TIMEOUT,
            BodyError::Malformed | BodyError::Closed => StatusCode::BAD_REQUEST,
        }
    }

    pub(crate) fn reason(self) -> &'static str {
        match self {
            BodyError::TooLarge => "request body too large",
            BodyError::TimedOut => "request body not received in time",
            BodyError::Malformed => "malformed request body",
            BodyError::Closed => "request body cut short",
        }
    }
}

impl fmt::Display for BodyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.reason())
    }
}

/// The limit a request body went over, named in the `413` that refuses it: a user who
/// meets it learns which limit applied and how a route raises it, not only that the
/// body was too large.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BodyLimit {
    /// A body read whole ([`BodyMode::Buffer`]): `Limits::max_body_bytes`.
    Whole(u64),
    /// A streamed body ([`BodyMode::Stream`]): the route's own `max_bytes`.
    Streamed(u64),
}

impl BodyLimit {
    /// Fills `res` with the `413` that says so.
    pub(crate) fn render(self, res: &mut crate::Response) {
        crate::rejection::error_response(res, StatusCode::PAYLOAD_TOO_LARGE, &self.to_string());
    }
}

impl fmt::Display for BodyLimit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            BodyLimit::Whole(max) => write!(
                f,
                "request body too large: over the {} limit on a body read whole (Limits::max_body_bytes); \
                 a route takes larger bodies by streaming them, up to a limit of its own: \
                 App::stream_body::<Route>(limit) in kiln, BodyMode::Stream in kiln-http",
                Size(max)
            ),
            BodyLimit::Streamed(max) => write!(
                f,
                "request body too large: over this route's {} limit on its streamed body, \
                 set by App::stream_body::<Route>(limit) in kiln (BodyMode::Stream's max_bytes in kiln-http)",
                Size(max)
            ),
        }
    }
}

/// A size in bytes, with its KiB or MiB when it is a whole number of them.
struct Size(u64);

impl fmt::Display for Size {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const KIB: u64 = 1024;
        const MIB: u64 = 1024 * KIB;
        match self.0 {
            n if n >= MIB && n % MIB == 0 => write!(f, "{} MiB ({n} bytes)", n / MIB),
            n if n >= KIB && n % KIB == 0 => write!(f, "{} KiB ({n} bytes)", n / KIB),
            n => write!(f, "{n}-byte"),
        }
    }
}

impl std::error::Error for BodyError {}

/// Where a streamed body stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum End {
    /// More may come.
    Open,
    /// Every byte has been handed over (or is in the slot).
    Complete,
    Failed(BodyError),
}

#[derive(Debug)]
struct Slot {
    /// Bytes received and not yet taken by the handler: at most one read's worth.
    data: BytesMut,
    /// Whether the handler waits for more.
    wanted: bool,
    end: End,
    received: u64,
    /// Bytes the handler has taken from the slot (HTTP/2 gives their window back).
    taken: u64,
    max_bytes: u64,
    content_length: Option<u64>,
    waker: Option<Waker>,
    /// Chunks received whole and handed over one per read after `data`
    /// ([`IncomingBody::from_chunks`]); empty on a connection.
    queued: VecDeque<Bytes>,
}

/// A request's body as a stream of chunks, read from the client as they are asked
/// for (see [`Request::body_stream`](crate::Request::body_stream)).
///
/// Cheap to clone (a shared handle); `!Send`, like everything a worker's service holds.
/// A handler that returns before the body's end leaves the engine to keep the
/// connection in step: a small remainder is read and dropped, a large one closes the
/// connection after the answer.
#[derive(Clone)]
pub struct IncomingBody {
    slot: Rc<RefCell<Slot>>,
}

impl fmt::Debug for IncomingBody {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = self.slot.borrow();
        f.debug_struct("IncomingBody").field("received", &s.received).field("end", &s.end).finish()
    }
}

impl IncomingBody {
    pub(crate) fn new(max_bytes: u64, content_length: Option<u64>) -> Self {
        let slot = Slot {
            data: BytesMut::new(),
            wanted: false,
            end: End::Open,
            received: 0,
            taken: 0,
            max_bytes,
            content_length,
            waker: None,
            queued: VecDeque::new(),
        };
        IncomingBody { slot: Rc::new(RefCell::new(slot)) }
    }

    /// A handle over a body already in memory, complete: for in-process test clients
    /// and for extractors that take a buffered body the same way as a streamed one.
    pub fn from_bytes(bytes: Bytes) -> Self {
        let len = bytes.len() as u64;
        let body = IncomingBody::new(len, Some(len));
        {
            let mut s = body.slot.borrow_mut();
            s.data = BytesMut::from(&bytes[..]);
            s.received = len;
            s.end = End::Complete;
        }
        body
    }

    /// A handle over a body already in memory, complete, handed to the handler in
    /// these chunks (one per read, empty ones skipped): for in-process test clients
    /// that exercise a handler reading a body as it arrives.
    pub fn from_chunks(chunks: impl IntoIterator<Item = Bytes>) -> Self {
        let queued: VecDeque<Bytes> = chunks.into_iter().filter(|c| !c.is_empty()).collect();
        let len = queued.iter().map(|c| c.len() as u64).sum();
        let body = IncomingBody::new(len, Some(len));
        {
            let mut s = body.slot.borrow_mut();
            s.queued = queued;
            s.received = len;
            s.end = End::Complete;
        }
        body
    }

    /// The next chunk of the body; `Ok(None)` at its end.
    pub async fn chunk(&mut self) -> Result<Option<Bytes>, BodyError> {
        std::future::poll_fn(|cx| self.poll_chunk(cx)).await
    }

    /// Polls for the next chunk; see [`chunk`](Self::chunk).
    pub fn poll_chunk(&mut self, cx: &mut Context<'_>) -> Poll<Result<Option<Bytes>, BodyError>> {
        let mut s = self.slot.borrow_mut();
        if s.data.is_empty() {
            if let Some(next) = s.queued.pop_front() {
                s.data = BytesMut::from(&next[..]);
            }
        }
        if !s.data.is_empty() {
            s.wanted = false;
            s.taken += s.data.len() as u64;
            return Poll::Ready(Ok(Some(s.data.split().freeze())));
        }
        match s.end {
            End::Complete => Poll::Ready(Ok(None)),
            End::Failed(e) => Poll::Ready(Err(e)),
            End::Open => {
                s.wanted = true;
                s.waker = Some(cx.waker().clone());
                Poll::Pending
            }
        }
    }

    /// The body's length, when the client announced it (`Content-Length`).
    pub fn content_length(&self) -> Option<u64> {
        self.slot.borrow().content_length
    }

    /// The most bytes this body may have.
    pub fn max_bytes(&self) -> u64 {
        self.slot.borrow().max_bytes
    }

    /// Bytes received so far.
    pub fn received(&self) -> u64 {
        self.slot.borrow().received
    }

    // The connection's side.

    /// Whether the handler waits for bytes the connection has not yet delivered.
    pub(crate) fn wanted(&self) -> bool {
        let s = self.slot.borrow();
        s.wanted && s.data.is_empty() && s.end == End::Open
    }

    pub(crate) fn end(&self) -> End {
        self.slot.borrow().end
    }

    /// Bytes the handler has taken so far.
    pub(crate) fn taken(&self) -> u64 {
        self.slot.borrow().taken
    }

    /// Bytes still allowed before the limit.
    pub(crate) fn room(&self) -> u64 {
        let s = self.slot.borrow();
        s.max_bytes.saturating_sub(s.received)
    }

    /// Hands `bytes` to the handler; a body past its limit fails instead.
    pub(crate) fn push(&self, bytes: &[u8]) {
        let mut s = self.slot.borrow_mut();
        if bytes.is_empty() || s.end != End::Open {
            return;
        }
        s.received += bytes.len() as u64;
        if s.received > s.max_bytes {
            s.end = End::Failed(BodyError::TooLarge);
        } else {
            s.data.extend_from_slice(bytes);
        }
        wake(&mut s);
    }

    /// Drops what the handler left untaken; returns how many bytes that was.
    pub(crate) fn discard(&self) -> usize {
        let mut s = self.slot.borrow_mut();
        let n = s.data.len();
        s.data.clear();
        n
    }

    /// Copies what has arrived into `buf`, as much as fits, for a stream read as a byte
    /// stream (an HTTP/2 tunnel, RFC 8441): only what is copied counts as taken, so the
    /// window goes back as the reader consumes. `Ok` with nothing copied at the end;
    /// an error if the body failed.
    pub(crate) fn poll_read(&self, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let mut s = self.slot.borrow_mut();
        if !s.data.is_empty() {
            let n = s.data.len().min(buf.remaining());
            buf.put_slice(&s.data.split_to(n));
            if s.data.is_empty() {
                // An idle tunnel keeps no buffer.
                s.data = BytesMut::new();
            }
            s.taken += n as u64;
            s.wanted = false;
            return Poll::Ready(Ok(()));
        }
        match s.end {
            End::Complete => Poll::Ready(Ok(())),
            End::Failed(_) => Poll::Ready(Err(io::ErrorKind::ConnectionReset.into())),
            End::Open => {
                s.wanted = true;
                s.waker = Some(cx.waker().clone());
                Poll::Pending
            }
        }
    }

    /// Ends the body, complete or failed.
    pub(crate) fn finish(&self, end: End) {
        let mut s = self.slot.borrow_mut();
        if s.end == End::Open {
            s.end = end;
        }
        wake(&mut s);
    }
}

fn wake(s: &mut Slot) {
    if let Some(w) = s.waker.take() {
        w.wake();
    }
}

/// A stream of the body's chunks, for code written against `futures`' `Stream`.
impl futures_core::Stream for IncomingBody {
    type Item = Result<Bytes, BodyError>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.get_mut().poll_chunk(cx).map(Result::transpose)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_body_from_bytes_yields_them_once_then_ends() {
        let mut body = IncomingBody::from_bytes(Bytes::from_static(b"hello"));
        assert_eq!(body.chunk().await.unwrap().as_deref(), Some(&b"hello"[..]));
        assert_eq!(body.chunk().await.unwrap(), None);
    }

    #[tokio::test]
    async fn a_body_from_chunks_yields_each_chunk_then_ends() {
        let chunks = [&b"he"[..], b"", b"ll", b"o"].map(Bytes::from_static);
        let mut body = IncomingBody::from_chunks(chunks);
        assert_eq!(body.content_length(), Some(5));
        assert_eq!(body.chunk().await.unwrap().as_deref(), Some(&b"he"[..]));
        assert_eq!(body.chunk().await.unwrap().as_deref(), Some(&b"ll"[..]));
        assert_eq!(body.chunk().await.unwrap().as_deref(), Some(&b"o"[..]));
        assert_eq!(body.chunk().await.unwrap(), None);
    }

    #[test]
    fn bytes_past_the_limit_fail_the_body_as_too_large() {
        let body = IncomingBody::new(4, None);
        body.push(b"abc");
        body.push(b"de");
        assert_eq!(body.end(), End::Failed(BodyError::TooLarge));
    }
}
