//! Where a WebSocket reads: a buffer lent by its worker only while there is input to
//! parse, so that an idle socket holds none (an idle WebSocket must cost no more than
//! an idle keep-alive connection, about 2 KiB).
//!
//! A read borrows a buffer from the worker's pool (thread-local: a worker is one
//! thread), and the socket gives it back once every byte in it is parsed. Payload is
//! taken as it arrives, so what a read can leave unparsed is at most a frame header
//! cut short (under [`MAX_HEADER`] bytes): the socket keeps that in place of the
//! buffer. A read that finds nothing (`Pending`) hands the buffer back at once.

use std::cell::{Cell, RefCell};
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use crate::upgrade::UpgradedIo;

/// Size of each lent buffer: a 16 KiB message and its header arrive in one read.
const READ_CHUNK: usize = 64 * 1024;
/// Buffers a worker keeps for reuse; more lent at once are freed when given back.
const POOL_MAX: usize = 4;
/// Longest frame header (RFC 6455 §5.2): 2 bytes, an 8-byte length, a 4-byte mask.
pub(crate) const MAX_HEADER: usize = 14;

thread_local! {
    /// The buffer given back last, taken first: an echo lends and gives back one
    /// buffer per message, and a `Cell` costs a few instructions where the pool's
    /// `RefCell<Vec>` costs some twenty each way.
    static HOT: Cell<Option<Box<[u8]>>> = const { Cell::new(None) };
    /// The worker's other spare buffers, each `READ_CHUNK` bytes.
    static POOL: RefCell<Vec<Box<[u8]>>> = const { RefCell::new(Vec::new()) };
}

fn lend() -> Box<[u8]> {
    if let Some(buf) = HOT.with(Cell::take) {
        return buf;
    }
    POOL.with(|pool| pool.borrow_mut().pop()).unwrap_or_else(|| vec![0; READ_CHUNK].into_boxed_slice())
}

#[inline]
fn give_back(buf: Box<[u8]>) {
    // The hot slot's previous buffer, if any, goes to the pool.
    if let Some(older) = HOT.with(|hot| hot.replace(Some(buf))) {
        POOL.with(|pool| {
            let mut pool = pool.borrow_mut();
            // HOT holds one more: `POOL_MAX` in all.
            if pool.len() + 1 < POOL_MAX {
                pool.push(older);
            }
        });
    }
}

/// The bytes read and not yet parsed.
#[derive(Default)]
pub(crate) struct ReadBuf {
    /// Lent while it holds input; `None` while the socket waits with none.
    data: Option<Box<[u8]>>,
    pos: usize,
    end: usize,
    /// A cut-off frame header kept while no buffer is lent.
    tail: [u8; MAX_HEADER],
    tail_len: u8,
}

impl ReadBuf {
    /// Bytes read ahead of the socket (after the upgrade's request head), parsed first.
    pub(crate) fn with_bytes(bytes: &[u8]) -> Self {
        let mut rb = ReadBuf::default();
        if !bytes.is_empty() {
            let mut data = if bytes.len() <= READ_CHUNK { lend() } else { vec![0; bytes.len()].into_boxed_slice() };
            data[..bytes.len()].copy_from_slice(bytes);
            rb.end = bytes.len();
            rb.data = Some(data);
        }
        rb
    }

    /// The unparsed bytes.
    pub(crate) fn bytes(&self) -> &[u8] {
        match &self.data {
            Some(data) => &data[self.pos..self.end],
            None => &self.tail[..usize::from(self.tail_len)],
        }
    }

    /// The unparsed bytes, to unmask in place.
    pub(crate) fn bytes_mut(&mut self) -> &mut [u8] {
        match &mut self.data {
            Some(data) => &mut data[self.pos..self.end],
            None => &mut self.tail[..usize::from(self.tail_len)],
        }
    }

    /// Marks `n` bytes parsed.
    pub(crate) fn consume(&mut self, n: usize) {
        match self.data {
            Some(_) => self.pos += n,
            None => {
                let len = usize::from(self.tail_len);
                self.tail.copy_within(n..len, 0);
                self.tail_len = (len - n) as u8;
            }
        }
    }

    /// Gives the buffer back if what is left of it fits in the socket itself.
    #[inline]
    pub(crate) fn release(&mut self) {
        let left = self.end - self.pos;
        if left > MAX_HEADER {
            return;
        }
        if let Some(data) = self.data.take() {
            // Most often nothing is left: then there is nothing to copy.
            if left > 0 {
                self.tail[..left].copy_from_slice(&data[self.pos..self.end]);
            }
            self.tail_len = left as u8;
            self.pos = 0;
            self.end = 0;
            if data.len() == READ_CHUNK {
                give_back(data);
            }
        }
    }

    /// Reads what the transport has after the unparsed bytes: `Ready(0)` at its end.
    /// Holds no buffer when nothing was there.
    pub(crate) fn poll_fill(&mut self, io: &mut dyn UpgradedIo, cx: &mut Context<'_>) -> Poll<io::Result<usize>> {
        let data = match &mut self.data {
            Some(data) => data,
            None => {
                let mut data = lend();
                let len = usize::from(self.tail_len);
                if len > 0 {
                    data[..len].copy_from_slice(&self.tail[..len]);
                }
                self.tail_len = 0;
                self.pos = 0;
                self.end = len;
                self.data.insert(data)
            }
        };
        if self.pos == self.end {
            (self.pos, self.end) = (0, 0);
        } else if self.end == data.len() {
            // Full: what is unparsed moves to the front (it is a header, or the
            // buffer was read ahead past its size).
            data.copy_within(self.pos..self.end, 0);
            (self.pos, self.end) = (0, self.end - self.pos);
            if self.end == data.len() {
                let mut bigger = vec![0; data.len() * 2].into_boxed_slice();
                bigger[..self.end].copy_from_slice(&data[..self.end]);
                *data = bigger;
            }
        }
        let mut buf = tokio::io::ReadBuf::new(&mut data[self.end..]);
        let polled = Pin::new(io).poll_read(cx, &mut buf);
        let n = buf.filled().len();
        match polled {
            Poll::Ready(Ok(())) => {
                self.end += n;
                if n == 0 {
                    self.release();
                }
                Poll::Ready(Ok(n))
            }
            Poll::Ready(Err(e)) => {
                self.release();
                Poll::Ready(Err(e))
            }
            Poll::Pending => {
                self.release();
                Poll::Pending
            }
        }
    }

    /// Drops every unparsed byte.
    pub(crate) fn clear(&mut self) {
        self.pos = self.end;
        self.tail_len = 0;
        self.release();
    }
}

#[cfg(test)]
mod tests {
    use std::task::Waker;

    use tokio::io::AsyncWrite;

    use super::*;

    #[test]
    fn an_idle_socket_holds_no_buffer_only_a_cut_header() {
        let (mut client, mut server) = tokio::io::duplex(1024);
        let mut cx = Context::from_waker(Waker::noop());
        let mut rb = ReadBuf::with_bytes(b"\x81\x85\x01\x02");
        assert!(rb.data.is_some());
        assert!(rb.poll_fill(&mut server, &mut cx).is_pending());
        assert!(rb.data.is_none(), "nothing to read: the buffer went back");
        assert_eq!(rb.bytes(), b"\x81\x85\x01\x02", "the cut header stays");
        let written = Pin::new(&mut client).poll_write(&mut cx, b"\x03\x040123456789abcdef");
        assert!(matches!(written, Poll::Ready(Ok(18))));
        assert!(matches!(rb.poll_fill(&mut server, &mut cx), Poll::Ready(Ok(18))));
        assert_eq!(rb.bytes(), b"\x81\x85\x01\x02\x03\x040123456789abcdef");
        rb.release();
        assert!(rb.data.is_some(), "more than a header left unparsed: kept");
        rb.consume(14);
        rb.release();
        assert!(rb.data.is_none(), "a header's worth left: moved into the socket");
        assert_eq!(rb.bytes(), b"89abcdef");
        rb.consume(8);
        assert_eq!(rb.bytes(), b"");
    }
}
