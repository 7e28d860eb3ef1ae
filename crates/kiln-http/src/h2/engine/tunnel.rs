//! An extended CONNECT's stream as a connection of its own (RFC 8441 §5): once the
//! service answers `2xx` with an upgrade callback, the stream's DATA frames carry the
//! bytes of the protocol it asked for (a WebSocket) both ways, and the callback gets a
//! [`Tunnel`] where an HTTP/1.1 upgrade gets its socket. What arrives is read from the
//! stream's [`IncomingBody`], its window given back as the reader takes it; what is
//! written waits in a [`Pipe`] of at most [`PIPE_HIGH`] bytes until the stream's and the
//! connection's windows let it out ([`send`](super::send)), so a peer that reads
//! nothing stops the writer rather than growing a buffer. The stream's end is the
//! connection's close: the writer's shutdown (or drop) sends END_STREAM, the peer's
//! END_STREAM reads as the end of input, and a reset (RST_STREAM, GOAWAY's close) fails
//! both sides.

use std::cell::RefCell;
use std::io;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

use bytes::{Bytes, BytesMut};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use crate::body::IncomingBody;

/// Bytes written and not yet sent past which a write waits.
const PIPE_HIGH: usize = 64 * 1024;

/// What the writer has handed over and the engine not yet sent, and how each side
/// reaches the other.
#[derive(Default)]
struct Pipe {
    out: BytesMut,
    /// The writer is done: END_STREAM once `out` is sent.
    closed: bool,
    /// The stream is gone (reset, or the connection closing): writes fail.
    gone: bool,
    /// The connection's task, waiting for bytes to send.
    engine: Option<Waker>,
    /// The writer, waiting for room.
    writer: Option<Waker>,
}

fn wake(waker: &mut Option<Waker>) {
    if let Some(w) = waker.take() {
        w.wake();
    }
}

/// The service's end of a tunnelled stream: read and written as a socket.
pub(crate) struct Tunnel {
    body: IncomingBody,
    pipe: Rc<RefCell<Pipe>>,
}

/// The engine's end of a tunnelled stream's sending side.
pub(crate) struct TunnelOut {
    pipe: Rc<RefCell<Pipe>>,
}

/// What [`TunnelOut::take`] found.
pub(crate) enum Take {
    /// Bytes to send in a DATA frame.
    Bytes(Bytes),
    /// All is sent and the writer is done: END_STREAM.
    End,
    /// Nothing to send yet (the engine is woken when there is), or no room for it.
    Wait,
}

/// Both ends of a new tunnel over the stream whose DATA `body` receives.
pub(crate) fn pair(body: IncomingBody) -> (Tunnel, TunnelOut) {
    let pipe = Rc::new(RefCell::new(Pipe::default()));
    (Tunnel { body, pipe: Rc::clone(&pipe) }, TunnelOut { pipe })
}

impl TunnelOut {
    /// Up to `room` bytes to send, the end, or a wait (the task woken when it ends).
    pub(crate) fn take(&self, room: usize, cx: &mut Context<'_>) -> Take {
        let mut p = self.pipe.borrow_mut();
        if p.out.is_empty() {
            if p.closed {
                return Take::End;
            }
            p.engine = Some(cx.waker().clone());
            return Take::Wait;
        }
        if room == 0 {
            return Take::Wait;
        }
        let n = room.min(p.out.len());
        let piece = p.out.split_to(n).freeze();
        if p.out.is_empty() {
            // An idle socket keeps no buffer: the allocation goes with the last piece.
            p.out = BytesMut::new();
        }
        wake(&mut p.writer);
        Take::Bytes(piece)
    }

    /// Whether bytes wait to be sent: a window shut with nothing to send is no stall.
    pub(crate) fn pending(&self) -> bool {
        !self.pipe.borrow().out.is_empty()
    }

    /// The stream is gone: the writer's next write fails.
    pub(crate) fn gone(&self) {
        let mut p = self.pipe.borrow_mut();
        p.gone = true;
        p.out = BytesMut::new();
        wake(&mut p.writer);
    }
}

impl AsyncRead for Tunnel {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        self.body.poll_read(cx, buf)
    }
}

impl AsyncWrite for Tunnel {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        let mut p = self.pipe.borrow_mut();
        if p.gone || p.closed {
            return Poll::Ready(Err(io::ErrorKind::BrokenPipe.into()));
        }
        let n = buf.len().min(PIPE_HIGH.saturating_sub(p.out.len()));
        if n == 0 && !buf.is_empty() {
            p.writer = Some(cx.waker().clone());
            return Poll::Pending;
        }
        p.out.extend_from_slice(&buf[..n]);
        wake(&mut p.engine);
        Poll::Ready(Ok(n))
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        // What is written is the engine's to send under the windows; a writer that
        // waits for it to leave would wait on the peer's window, which `poll_write`
        // already does once the pipe is full.
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.close();
        Poll::Ready(Ok(()))
    }
}

impl Tunnel {
    /// The writer is done: END_STREAM goes once what it wrote has.
    fn close(&self) {
        let mut p = self.pipe.borrow_mut();
        p.closed = true;
        wake(&mut p.engine);
    }
}

impl Drop for Tunnel {
    fn drop(&mut self) {
        // RFC 8441 §5: an orderly close is END_STREAM.
        self.close();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pipe_holds_at_most_its_bound_and_ends_after_what_was_written() {
        let (mut tunnel, out) = pair(IncomingBody::new(u64::MAX, None));
        let mut cx = Context::from_waker(Waker::noop());
        let big = vec![1u8; PIPE_HIGH + 100];
        let wrote = Pin::new(&mut tunnel).poll_write(&mut cx, &big);
        assert!(matches!(wrote, Poll::Ready(Ok(n)) if n == PIPE_HIGH));
        assert!(Pin::new(&mut tunnel).poll_write(&mut cx, &big).is_pending(), "a full pipe waits");
        assert!(out.pending());
        // A shut window sends nothing; room sends that much.
        assert!(matches!(out.take(0, &mut cx), Take::Wait));
        assert!(matches!(out.take(16_384, &mut cx), Take::Bytes(b) if b.len() == 16_384));
        assert!(matches!(Pin::new(&mut tunnel).poll_write(&mut cx, &big), Poll::Ready(Ok(16_384))));
        drop(tunnel);
        let mut sent = 0;
        loop {
            match out.take(usize::MAX, &mut cx) {
                Take::Bytes(b) => sent += b.len(),
                Take::End => break,
                Take::Wait => panic!("the writer is gone: the end is due"),
            }
        }
        assert_eq!(sent, PIPE_HIGH);
    }

    #[test]
    fn a_gone_stream_fails_the_writer() {
        let (mut tunnel, out) = pair(IncomingBody::new(u64::MAX, None));
        let mut cx = Context::from_waker(Waker::noop());
        out.gone();
        let wrote = Pin::new(&mut tunnel).poll_write(&mut cx, b"x");
        assert!(matches!(wrote, Poll::Ready(Err(e)) if e.kind() == io::ErrorKind::BrokenPipe));
    }
}
