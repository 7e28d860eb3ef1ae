//! Writing responses: heads and small bodies gathered in the write buffer and written
//! once per batch, large bodies written from where they lie, files sent with
//! `sendfile(2)`, streamed bodies sent as they come; each wait for a slow reader
//! bounded by the send timeout.

use std::future::poll_fn;
use std::io::{self, IoSlice};
use std::mem;
use std::task::Poll;
use std::time::Duration;

use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;
use tokio::time::timeout;

use super::{Conn, Flow, OVER_BUDGET, Stop, Streaming};
use http::StatusCode;

use crate::h1::encode::{self, Delimit};
use crate::h1::parse::Parsed;
use crate::head::Version;
use crate::rejection::error_response;
use crate::response::{Body, BodyStream};
use crate::stream::{self, Gathered};
use crate::transport::{Transport, send_all_held};
use crate::worker::{Bufs, ConnBufs, Worker};

/// A body at least this large is written from where it lies rather than copied into
/// the write buffer.
const COPY_BODY_MAX: usize = 16 * 1024;
/// A write at least this large waits for the worker's other ready connections to
/// answer first, so that the writes of one turn leave together (see
/// [`Conn::coalesce`]).
const COALESCE_FROM: usize = 8 * 1024;
/// Unsent bytes the kernel may queue for a connection once a write has had to wait
/// (`TCP_NOTSENT_LOWAT`). The socket then turns writable as the client reads, not
/// only once an autotuned send buffer of megabytes has half drained: the send timeout
/// sees a slow reader's progress, and a stalled client pins less kernel memory.
const NOTSENT_LOWAT: u32 = 128 * 1024;
/// Write buffer a quiet streamed response keeps when it cannot give its buffers back
/// (see [`release_while_quiet`]).
const QUIET_STREAM_KEEP: usize = 512;

/// While a streamed body has nothing to send (an event stream between events), the
/// connection gives its buffers back to the worker's pool, as an idle keep-alive
/// connection does, and takes a set again when the stream has a chunk: ten thousand
/// quiet subscribers must cost about what ten thousand idle connections do, and a
/// publish to all of them reuses a few pooled sets instead of allocating per
/// subscriber. The flush before the wait emptied the write buffer. A pipelined request
/// already in the read buffer, or budget held for a large request, keeps the set; only
/// a write buffer grown past a small event's size is freed then.
fn release_while_quiet(worker: &Worker, bufs: &mut Bufs, start: &mut usize, held: usize) {
    if bufs.read.len() == *start && held == 0 {
        worker.release(mem::take(bufs));
        *start = 0;
    } else if bufs.write.capacity() > QUIET_STREAM_KEEP {
        bufs.write = Vec::new();
    }
}

impl<T: Transport> Conn<T> {
    /// Lets the worker's other ready connections answer before a write of `len` bytes.
    ///
    /// A client waiting for a response sleeps, and each write that wakes it costs the
    /// writer a cross-CPU wake-up: on this VM about 6 µs, a tenth of a Markdown page's
    /// whole cost. Large responses take long enough to make that the client is asleep
    /// by the time each is written; written one after another at the end of the
    /// worker's turn, the first write wakes the client and the rest find it awake.
    /// Small ones are not held: they come in bursts anyway, and the extra turn through
    /// the scheduler (about 0.1 µs) would be most of what they cost. A lone connection
    /// has nobody to wait for.
    pub(super) async fn coalesce(&self, len: usize) {
        if len >= COALESCE_FROM && self.worker.connections.get() > 1 {
            tokio::task::yield_now().await;
        }
    }

    /// Encodes `bufs.res` and writes what cannot wait in the write buffer. Returns
    /// whether the connection stays open (a body delimited by close ends it).
    pub(super) async fn write_response(&mut self, parsed: &Parsed, keep_alive: bool) -> Flow<bool> {
        if self.bufs.res.buffer.capacity() >= COPY_BODY_MAX && !self.hold_buffers(0) {
            // Built, but more than the worker may hold while it waits for the client:
            // freed at once, and the client told to come back.
            self.bufs.res.buffer = Vec::new();
            error_response(&mut self.bufs.res, OVER_BUDGET.status, OVER_BUDGET.reason);
        }
        let version = self.bufs.head.version.unwrap_or(Version::Http11);
        if self.bufs.res.upgrade.is_some() {
            let date = self.worker.date();
            let ConnBufs { write, res, .. } = &mut *self.bufs;
            if res.status == StatusCode::SWITCHING_PROTOCOLS && version == Version::Http11 && !parsed.is_head {
                // RFC 9110 §7.8: after the 101's empty line the connection belongs to
                // the new protocol; `serve` hands it over once this head is flushed.
                encode::encode_head(write, res, &date, Delimit::None, true, version);
                return Ok(false);
            }
            res.upgrade = None;
        }
        let delimit = encode::delimit(&self.bufs.res, version);
        let keep_alive = keep_alive && delimit != Delimit::Close;
        let date = self.worker.date();
        let bufs = &mut *self.bufs;
        encode::encode_head(&mut bufs.write, &bufs.res, &date, delimit, keep_alive, version);
        if parsed.is_head || delimit == Delimit::None {
            bufs.res.body = Body::Buffer;
            return Ok(keep_alive);
        }
        match bufs.res.body_bytes() {
            Some(bytes) if bytes.len() < COPY_BODY_MAX => {
                bufs.write.extend_from_slice(bytes);
                return Ok(keep_alive);
            }
            Some(bytes) => {
                self.turn_spent = true;
                let len = bufs.write.len() + bytes.len();
                self.coalesce(len).await;
                let bufs = &mut *self.bufs;
                let bytes = bufs.res.body_bytes().unwrap_or_default();
                expect_slow_writes(self.stream.tcp(), &mut self.lowat);
                let result = write_two(&mut self.stream, &bufs.write, bytes, self.worker.limits.body_timeout).await;
                bufs.write.clear();
                return result.map(|()| keep_alive);
            }
            None => {}
        }
        match mem::replace(&mut self.bufs.res.body, Body::Buffer) {
            Body::File { file, offset, len } => {
                self.turn_spent |= len >= super::TURN_BYTES as u64;
                // Corked, the head and the file's first bytes leave in full segments
                // instead of the head going alone as a tiny packet (as nginx's
                // `tcp_nopush` does); uncorking pushes out the tail.
                let _ = socket2::SockRef::from(self.stream.tcp()).set_tcp_cork(true);
                let sent = self.send_file(file, offset, len).await;
                let _ = socket2::SockRef::from(self.stream.tcp()).set_tcp_cork(false);
                sent?;
            }
            Body::Stream(body) => {
                self.streaming = Some(Streaming { body, chunked: delimit == Delimit::Chunked, keep_alive });
            }
            Body::Buffer | Body::Static(_) | Body::Bytes(_) => {}
        }
        Ok(keep_alive)
    }

    /// Sends a streamed body after the head in the write buffer: what the stream has
    /// ready goes out at once, and the stream is polled again only once the socket has
    /// taken it (see [`crate::stream`]). Each wait for the socket is bounded by the
    /// send timeout; while the stream has nothing, a client that closes ends it. The
    /// end is left in the write buffer for the batch's write.
    pub(super) async fn send_stream(&mut self, mut body: BodyStream, chunked: bool) -> Flow {
        let mut watching = true;
        loop {
            let (transport, worker, held) = (&mut self.stream, &self.worker, self.held);
            let (bufs, start) = (&mut self.bufs, &mut self.start);
            let gathered = poll_fn(|cx| {
                if !bufs.is_allocated() {
                    *bufs = worker.acquire();
                }
                let mut gathered = stream::poll_gather(&mut body, cx, &mut bufs.write, chunked);
                // The stream is pending, with this task's waker: if the socket takes what
                // it had at once, the task waits now instead of coming back to poll the
                // stream only to learn that it is still pending (issue 23: a poll less
                // per subscriber per event of a fan-out).
                if gathered == Poll::Ready(Gathered::Send) && sent_at_once(transport, &mut bufs.write) {
                    gathered = Poll::Pending;
                }
                match gathered {
                    Poll::Pending if stream::poll_peer_closed(transport.tcp(), cx, &mut watching) => Poll::Ready(None),
                    Poll::Pending => {
                        release_while_quiet(worker, bufs, start, held);
                        Poll::Pending
                    }
                    gathered => gathered.map(Some),
                }
            });
            match gathered.await {
                Some(Gathered::Send | Gathered::Full) => self.flush().await?,
                Some(Gathered::End) => return Ok(()),
                Some(Gathered::Failed) | None => return Err(Stop::Done),
            }
        }
    }

    /// Writes the buffered head, then `len` bytes of `file` from `offset`: with
    /// `sendfile(2)` when the transport sends bytes as they lie, else (TLS) read in
    /// bounded chunks through the write buffer.
    async fn send_file(&mut self, file: std::fs::File, offset: u64, len: u64) -> Flow {
        self.flush().await?;
        expect_slow_writes(self.stream.tcp(), &mut self.lowat);
        let stall = self.worker.limits.body_timeout;
        let sent = match self.stream.zero_copy() {
            Some(tcp) => crate::h1::sendfile::send_file(tcp, &file, offset, len, stall).await,
            None => {
                let (stream, scratch) = (&mut self.stream, &mut self.bufs.write);
                let copied = crate::h1::sendfile::copy_file(stream, scratch, &file, offset, len, stall).await;
                scratch.clear();
                copied
            }
        };
        match sent {
            Ok(true) => Ok(()),
            Ok(false) => Err(Stop::Done),
            Err(e) => Err(e.into()),
        }
    }

    /// Writes the write buffer out; the body timeout bounds each wait for progress.
    pub(super) async fn flush(&mut self) -> Flow {
        // Bytes the transport took but holds (TLS; see `sent_at_once`) are sent too.
        if !self.bufs.is_allocated() || (self.bufs.write.is_empty() && !self.stream.has_unsent()) {
            return Ok(());
        }
        // Most flushes fit the socket buffer: try once before arming a timeout.
        let written = match self.stream.try_write(&self.bufs.write) {
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => 0,
            Err(e) => return Err(e.into()),
        };
        if written == self.bufs.write.len() && !self.stream.has_unsent() {
            self.bufs.write.clear();
            return Ok(());
        }
        expect_slow_writes(self.stream.tcp(), &mut self.lowat);
        // Boxed: the wait for a slow reader (its timer included) is rare, and inline it
        // would enlarge every connection's future, a quiet event stream's too.
        let stall = self.worker.limits.body_timeout;
        let result = Box::pin(write_two(&mut self.stream, &self.bufs.write[written..], &[], stall)).await;
        self.bufs.write.clear();
        result
    }
}

/// Whether one write without waiting sent all of `out` (then emptied): what a quiet
/// stream produced usually fits the socket buffer. Otherwise what was taken is dropped
/// from `out` and [`Conn::flush`] sends the rest, or meets the error again and reports it.
fn sent_at_once<T: Transport>(transport: &mut T, out: &mut Vec<u8>) -> bool {
    match transport.try_write(out) {
        Ok(n) if n == out.len() && !transport.has_unsent() => {
            out.clear();
            true
        }
        Ok(n) => {
            out.drain(..n);
            false
        }
        Err(_) => false,
    }
}

/// Sets `NOTSENT_LOWAT` once per connection (`lowat` says whether it is), before a
/// write that may wait.
fn expect_slow_writes(stream: &TcpStream, lowat: &mut bool) {
    if !*lowat {
        *lowat = true;
        let _ = socket2::SockRef::from(stream).set_tcp_notsent_lowat(NOTSENT_LOWAT);
    }
}

/// Writes `a` then `b` with as few system calls as the socket allows, and flushes
/// what the transport still holds. The client must accept some bytes within `stall`
/// each time it is waited for: a slow reader is served to the end, one that stopped
/// reading is dropped (as nginx's `send_timeout`).
pub(super) async fn write_two<T: Transport>(stream: &mut T, mut a: &[u8], mut b: &[u8], stall: Duration) -> Flow {
    while !a.is_empty() || !b.is_empty() {
        let n = match timeout(stall, stream.write_vectored(&[IoSlice::new(a), IoSlice::new(b)])).await {
            Ok(n) => n?,
            Err(_) => return Err(Stop::Done),
        };
        if n == 0 {
            return Err(Stop::Io);
        }
        let from_a = n.min(a.len());
        a = &a[from_a..];
        b = &b[n - from_a..];
    }
    match send_all_held(stream, stall).await? {
        true => Ok(()),
        false => Err(Stop::Done),
    }
}
