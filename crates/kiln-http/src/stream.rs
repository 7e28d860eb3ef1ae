//! Streamed bodies on HTTP/1.1: what a body stream has ready now is framed into the
//! write buffer and sent at once; the stream is polled again only once the socket has
//! taken it. Nothing waits for more to gather, so an event stream's head and each of
//! its events leave as they are produced, and a client that stops reading stops the
//! stream (the send timeout then ends the connection) instead of filling memory.

use std::io;
use std::task::{Context, Poll};

use bytes::Bytes;
use tokio::io::ReadBuf;
use tokio::net::TcpStream;

use crate::response::BodyStream;

/// Most bytes of a stream gathered into one write: a stream that always has more ready
/// is written in batches of this size, each only once the socket took the last.
pub(crate) const STREAM_BATCH: usize = 64 * 1024;

/// What a stream had ready.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Gathered {
    /// Bytes wait in the write buffer and the stream is pending, its waker registered:
    /// once they are sent, the stream need not be polled again until it wakes the task.
    Send,
    /// A batch has gathered and the stream may have more ready: send it, then gather
    /// again.
    Full,
    /// The stream ended; its last chunk (the zero-length one when chunked) is framed.
    End,
    /// The stream failed: the body is incomplete, and the connection must be cut
    /// rather than ended as if the body were whole.
    Failed,
}

/// Frames into `out` every chunk `body` has ready, until it is pending, ends, fails,
/// or a batch has gathered. Pending only when nothing waits in `out`: whatever is
/// there (the response head, earlier chunks) is to be sent before waiting, and
/// `Send` says that the stream was pending after it.
pub(crate) fn poll_gather(
    body: &mut BodyStream,
    cx: &mut Context<'_>,
    out: &mut Vec<u8>,
    chunked: bool,
) -> Poll<Gathered> {
    while out.len() < STREAM_BATCH {
        match body.as_mut().poll_next(cx) {
            Poll::Ready(Some(Ok(chunk))) => frame(out, &chunk, chunked),
            Poll::Ready(Some(Err(_))) => return Poll::Ready(Gathered::Failed),
            Poll::Ready(None) => {
                if chunked {
                    // RFC 9112 §7.1: the last chunk, and no trailer section.
                    out.extend_from_slice(b"0\r\n\r\n");
                }
                return Poll::Ready(Gathered::End);
            }
            Poll::Pending if out.is_empty() => return Poll::Pending,
            Poll::Pending => return Poll::Ready(Gathered::Send),
        }
    }
    Poll::Ready(Gathered::Full)
}

/// Appends one chunk, framed (RFC 9112 §7.1: size in hex, CRLF, data, CRLF) or raw
/// for a body delimited by close. An empty chunk is skipped: framed, it would end
/// the body.
fn frame(out: &mut Vec<u8>, chunk: &Bytes, chunked: bool) {
    if chunk.is_empty() {
        return;
    }
    if chunked {
        let mut size = [0u8; 16];
        let digits = hex(chunk.len(), &mut size);
        out.extend_from_slice(digits);
        out.extend_from_slice(b"\r\n");
        out.extend_from_slice(chunk);
        out.extend_from_slice(b"\r\n");
    } else {
        out.extend_from_slice(chunk);
    }
}

fn hex(mut n: usize, buf: &mut [u8; 16]) -> &[u8] {
    let mut at = buf.len();
    loop {
        at -= 1;
        buf[at] = b"0123456789abcdef"[n & 0xf];
        n >>= 4;
        if n == 0 {
            return &buf[at..];
        }
    }
}

/// While a stream waits for its next chunk: whether the client has closed its side,
/// so that a response with nothing to send for a long time (a quiet event stream)
/// does not outlive its client. Peeks, so bytes the client sent (a pipelined request)
/// stay for the connection to read; once some are seen, `watching` turns off, since
/// they would keep the socket readable.
pub(crate) fn poll_peer_closed(tcp: &TcpStream, cx: &mut Context<'_>, watching: &mut bool) -> bool {
    if !*watching {
        return false;
    }
    let mut byte = [0u8; 1];
    let mut buf = ReadBuf::new(&mut byte);
    match tcp.poll_peek(cx, &mut buf) {
        Poll::Ready(Ok(0)) => true,
        Poll::Ready(Ok(_)) => {
            *watching = false;
            false
        }
        Poll::Ready(Err(e)) => e.kind() != io::ErrorKind::WouldBlock,
        Poll::Pending => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::VecDeque;
    use std::pin::Pin;
    use std::task::Waker;

    /// Yields its items in order; `None` stands for a `Pending`.
    struct Script(VecDeque<Option<io::Result<Bytes>>>);

    impl futures_core::Stream for Script {
        type Item = io::Result<Bytes>;
        fn poll_next(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Option<Self::Item>> {
            match self.0.pop_front() {
                Some(Some(item)) => Poll::Ready(Some(item)),
                Some(None) => Poll::Pending,
                None => Poll::Ready(None),
            }
        }
    }

    fn chunk(s: &'static str) -> Option<io::Result<Bytes>> {
        Some(Ok(Bytes::from_static(s.as_bytes())))
    }

    #[test]
    fn what_is_ready_is_framed_together_and_a_pending_stream_sends_it_without_waiting_for_more() {
        let items =
            [chunk("one"), chunk(""), chunk("twenty"), None, None, chunk("x"), Some(Err(io::ErrorKind::Other.into()))];
        let mut body: BodyStream = Box::pin(Script(items.into_iter().collect()));
        let mut cx = Context::from_waker(Waker::noop());
        let mut out = b"HEAD\r\n\r\n".to_vec();
        assert_eq!(poll_gather(&mut body, &mut cx, &mut out, true), Poll::Ready(Gathered::Send));
        assert_eq!(out, b"HEAD\r\n\r\n3\r\none\r\n6\r\ntwenty\r\n");
        out.clear();
        // Nothing ready and nothing to send: wait.
        assert_eq!(poll_gather(&mut body, &mut cx, &mut out, true), Poll::Pending);
        assert_eq!(poll_gather(&mut body, &mut cx, &mut out, true), Poll::Ready(Gathered::Failed));
    }

    #[test]
    fn a_stream_that_always_has_more_is_sent_in_bounded_batches_and_its_end_framed() {
        let big = Bytes::from(vec![b'a'; 40 * 1024]);
        let items = [Some(Ok(big.clone())), Some(Ok(big.clone())), Some(Ok(big))];
        let mut body: BodyStream = Box::pin(Script(items.into_iter().collect()));
        let mut cx = Context::from_waker(Waker::noop());
        let mut out = Vec::new();
        assert_eq!(poll_gather(&mut body, &mut cx, &mut out, false), Poll::Ready(Gathered::Full));
        assert_eq!(out.len(), 80 * 1024);
        out.clear();
        assert_eq!(poll_gather(&mut body, &mut cx, &mut out, true), Poll::Ready(Gathered::End));
        assert!(out.starts_with(b"a000\r\naaaa"));
        assert!(out.ends_with(b"aaaa\r\n0\r\n\r\n"));
    }

    #[test]
    fn chunk_sizes_are_lower_case_hex() {
        let mut buf = [0u8; 16];
        for (n, want) in [(0, "0"), (9, "9"), (10, "a"), (255, "ff"), (4096, "1000"), (0xdead_beef, "deadbeef")] {
            assert_eq!(hex(n, &mut buf), want.as_bytes());
        }
    }
}
