//! Reading a request: the wait for its first bytes (buffers given back meanwhile), its
//! head read until complete, its body read whole, and the share of the worker's
//! buffering budget that these buffers hold.

use std::future::{Future, poll_fn};
use std::io;
use std::mem;
use std::task::Poll;
use std::time::Duration;

use http::StatusCode;
use tokio::io::AsyncReadExt;
use tokio::time::{Instant, timeout_at};

use super::{Conn, Flow, OVER_BUDGET, Stop};
use crate::h1::chunked::ChunkedDecoder;
use crate::h1::parse::{self, Framing, Parsed};
use crate::rejection::Rejection;
use crate::transport::Transport;
use crate::worker::{INITIAL_BUFFER, KEEP_BUFFER, shrink};

/// Least free space offered to each read.
pub(super) const READ_CHUNK: usize = 4 * 1024;
/// How long an idle keep-alive connection is still read once shutdown begins: a
/// client that was about to send its next request has it answered (with
/// `Connection: close`) instead of lost to a close that crosses it on the wire.
const SHUTDOWN_IDLE_WAIT: Duration = Duration::from_secs(1);
/// Answered when a request body makes no progress for the body timeout.
const BODY_STALLED: Rejection =
    Rejection { status: StatusCode::REQUEST_TIMEOUT, reason: "request body not received in time" };

/// What ended a wait for the next request.
enum Idle {
    Readable,
    Shutdown,
    TimedOut,
}

impl<T: Transport> Conn<T> {
    /// Waits for the next request's first bytes and reads them. Hands the buffers back
    /// to the worker while waiting. `false`: the peer closed or stayed idle too long,
    /// or shutdown began and the connection stayed idle through its last call.
    pub(super) async fn wait_idle(&mut self) -> Flow<bool> {
        let deadline = self.worker.coarse_now() + self.worker.limits.idle_timeout;
        if self.idle_timer.deadline() != deadline {
            self.idle_timer.as_mut().reset(deadline);
        }
        let mut last_call = false;
        loop {
            if self.worker.shutting_down.get() && !last_call {
                last_call = true;
                let deadline = Instant::now() + SHUTDOWN_IDLE_WAIT;
                if deadline < self.idle_timer.deadline() {
                    self.idle_timer.as_mut().reset(deadline);
                }
            }
            let (stream, worker, bufs, timer, slot) =
                (&self.stream, &self.worker, &mut self.bufs, &mut self.idle_timer, self.slot);
            let idle = poll_fn(|cx| match stream.poll_read_ready(cx) {
                Poll::Pending => {
                    if bufs.is_allocated() {
                        worker.release(mem::take(bufs));
                    }
                    if worker.shutting_down.get() && !last_call {
                        return Poll::Ready(Ok(Idle::Shutdown));
                    }
                    worker.park(slot, cx.waker());
                    timer.as_mut().poll(cx).map(|()| Ok(Idle::TimedOut))
                }
                Poll::Ready(ready) => Poll::Ready(ready.map(|()| Idle::Readable)),
            });
            match idle.await? {
                Idle::Readable => {}
                Idle::Shutdown => continue,
                Idle::TimedOut => return Ok(false),
            }
            if !self.bufs.is_allocated() {
                self.bufs = self.worker.acquire();
            }
            self.bufs.read.reserve(READ_CHUNK);
            match self.stream.try_read_buf(&mut self.bufs.read) {
                Ok(n) => return Ok(n > 0),
                // Readiness was spurious (as it is right after accept): wait again, and
                // give the buffers back, so that a connection that never sends a byte
                // holds none.
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) => return Err(e.into()),
            }
        }
    }

    /// Parses the head at `start`, reading more until it is complete.
    pub(super) async fn read_head(&mut self) -> Flow<Result<Parsed, Rejection>> {
        let mut deadline = None;
        // Bytes of the head already known to hold no line end: a head trickled in byte
        // by byte is parsed again only when a line ends, not on every read, so a slow
        // client cannot make parsing cost quadratic time.
        let mut scanned = 0;
        loop {
            let bufs = &mut *self.bufs;
            let buf = &bufs.read[self.start..];
            let line_ended = buf[scanned.min(buf.len())..].contains(&b'\n');
            if line_ended || scanned == 0 {
                match parse::parse_head(buf, &self.worker.limits, &mut bufs.head) {
                    Ok(Some(parsed)) => return Ok(Ok(parsed)),
                    Ok(None) => {}
                    Err(rejection) => return Ok(Err(rejection)),
                }
            } else if let Err(rejection) = parse::check_partial_head(buf, &self.worker.limits) {
                return Ok(Err(rejection));
            }
            scanned = buf.len();
            // The head is incomplete: answer what is buffered before waiting, since the
            // client may be waiting for those answers.
            self.flush().await?;
            let d = *deadline.get_or_insert_with(|| Instant::now() + self.worker.limits.header_timeout);
            match self.fill_until(d).await? {
                Some(true) => {}
                Some(false) => return Err(Stop::Done),
                None if self.bufs.read.len() > self.start => {
                    let timeout =
                        Rejection { status: StatusCode::REQUEST_TIMEOUT, reason: "request head not received in time" };
                    return Ok(Err(timeout));
                }
                None => return Err(Stop::Done),
            }
        }
    }

    /// Like `fill`, but a timeout is `None` instead of ending the connection, so that
    /// the caller can answer 408 first.
    pub(super) async fn fill_until(&mut self, deadline: Instant) -> Flow<Option<bool>> {
        if self.start > 0 {
            self.bufs.read.drain(..self.start);
            self.start = 0;
        }
        self.bufs.read.reserve(READ_CHUNK);
        match timeout_at(deadline, self.stream.read_buf(&mut self.bufs.read)).await {
            Ok(n) => Ok(Some(n? > 0)),
            Err(_) => Ok(None),
        }
    }

    /// Reads the whole body of the request whose head is at `start`. Returns how many
    /// raw bytes after the head belong to it (a chunked body is decoded into
    /// `bufs.chunked_body` and its raw bytes removed, so that is 0).
    pub(super) async fn read_body(&mut self, parsed: &Parsed) -> Flow<Result<usize, Rejection>> {
        let mut continue_sent = false;
        match parsed.framing {
            Framing::Empty => Ok(Ok(0)),
            Framing::Length(n) => {
                let need = parsed.len + n as usize;
                while self.bufs.read.len() - self.start < need {
                    self.send_continue(parsed, &mut continue_sent).await?;
                    // Grown as the body arrives (doubling, never past the body), so a
                    // stalled upload holds what it sent, not what it announced.
                    let read = &self.bufs.read;
                    let missing = need - (read.len() - self.start);
                    let grow = missing.min(read.len()).max(READ_CHUNK);
                    // Charged before it is taken: a refused upload never holds memory
                    // it was refused.
                    if !self.hold_buffers(grow) {
                        return Ok(Err(OVER_BUDGET));
                    }
                    self.bufs.read.reserve_exact(grow);
                    if let Err(rejection) = self.fill_body().await? {
                        return Ok(Err(rejection));
                    }
                }
                Ok(Ok(n as usize))
            }
            Framing::Chunked => {
                let max_body = self.worker.limits.max_body_bytes;
                let mut decoder = ChunkedDecoder::new();
                self.bufs.chunked_body.clear();
                loop {
                    let at = self.start + parsed.len;
                    let bufs = &mut *self.bufs;
                    let used = match decoder.decode(&bufs.read[at..], &mut bufs.chunked_body, max_body) {
                        Ok(used) => used,
                        Err(rejection) => return Ok(Err(rejection)),
                    };
                    self.bufs.read.drain(at..at + used);
                    if !self.hold_buffers(0) {
                        return Ok(Err(OVER_BUDGET));
                    }
                    if decoder.is_done() {
                        return Ok(Ok(0));
                    }
                    self.send_continue(parsed, &mut continue_sent).await?;
                    if let Err(rejection) = self.fill_body().await? {
                        return Ok(Err(rejection));
                    }
                }
            }
        }
    }

    /// Reads more of a body. The body timeout counts time without progress (as nginx's
    /// `client_body_timeout`): a slow but steady upload is read to its end, and one
    /// that stalls gets a `408` rather than a silent close.
    pub(super) async fn fill_body(&mut self) -> Flow<Result<(), Rejection>> {
        match self.fill_until(Instant::now() + self.worker.limits.body_timeout).await? {
            Some(true) => Ok(Ok(())),
            Some(false) => Err(Stop::Done),
            None => Ok(Err(BODY_STALLED)),
        }
    }

    /// RFC 9110 §10.1.1: tell a client that waits for it to send the body.
    pub(super) async fn send_continue(&mut self, parsed: &Parsed, sent: &mut bool) -> Flow {
        if parsed.expect_continue && !*sent {
            *sent = true;
            self.bufs.write.extend_from_slice(b"HTTP/1.1 100 Continue\r\n\r\n");
        }
        self.flush().await
    }

    /// Charges the worker's budget for the buffers as they stand now, with room for
    /// `more_read` bytes after what the read buffer holds; `false`: over budget.
    /// Capacities are counted, since that is the memory held.
    pub(super) fn hold_buffers(&mut self, more_read: usize) -> bool {
        let b = &self.bufs;
        let read = b.read.capacity().max(b.read.len() + more_read);
        let bytes = read + b.chunked_body.capacity() + b.res.buffer.capacity();
        self.worker.hold(&mut self.held, bytes)
    }

    /// After a request that held part of the budget: frees the large buffers it left
    /// and gives the budget back, so that the memory returns now, not at close.
    pub(super) fn give_back(&mut self) {
        let b = &mut self.bufs;
        if b.res.buffer.capacity() > KEEP_BUFFER {
            b.res.buffer = Vec::new();
        }
        b.chunked_body = Vec::new();
        if b.read.capacity() > KEEP_BUFFER {
            b.read.drain(..self.start);
            self.start = 0;
            let keep = b.read.len().max(INITIAL_BUFFER);
            b.read.shrink_to(keep);
        }
        shrink(&mut b.write, INITIAL_BUFFER);
        self.worker.unhold(&mut self.held);
    }
}
