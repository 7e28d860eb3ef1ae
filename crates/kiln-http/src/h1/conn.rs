//! One connection: read requests, call the service for each in order, encode every
//! response into one write buffer, and write it once per batch (pipelining).

use std::future::{Future, poll_fn};
use std::io::{self, IoSlice};
use std::mem;
use std::net::SocketAddr;
use std::panic::AssertUnwindSafe;
use std::pin::{Pin, pin};
use std::rc::Rc;
use std::task::Poll;
use std::time::Duration;

use http::StatusCode;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::time::{Instant, Sleep, timeout, timeout_at};

use super::chunked::ChunkedDecoder;
use super::encode::{self, Delimit};
use super::parse::{self, Framing, Parsed};
use crate::body::BodyMode;
use crate::head::Version;
use crate::rejection::{Rejection, error_response};
use crate::request::Request;
use crate::response::{Body, BodyStream};
use crate::service::Service;
use crate::stream::{self, Gathered};
use crate::transport::{Transport, send_all_held};
use crate::upgrade::{OnUpgrade, Upgraded};
use crate::worker::{Bufs, ConnBufs, INITIAL_BUFFER, KEEP_BUFFER, Worker, shrink};

/// Responses buffered beyond this are written before the next pipelined request is
/// answered, so a client that pipelines many large responses cannot make us buffer
/// without bound.
const FLUSH_THRESHOLD: usize = 64 * 1024;
/// A body at least this large is written from where it lies rather than copied into
/// the write buffer.
const COPY_BODY_MAX: usize = 16 * 1024;
/// A write at least this large waits for the worker's other ready connections to
/// answer first, so that the writes of one turn leave together (see
/// [`Conn::coalesce`]).
const COALESCE_FROM: usize = 8 * 1024;
/// How long a refused connection keeps draining the client's input before closing.
const LINGER_TIME: Duration = Duration::from_secs(2);
/// Most input drained from a refused connection before closing anyway.
const LINGER_BYTES: usize = 256 * 1024;
/// Least free space offered to each read.
const READ_CHUNK: usize = 4 * 1024;
/// How long an idle keep-alive connection is still read once shutdown begins: a
/// client that was about to send its next request has it answered (with
/// `Connection: close`) instead of lost to a close that crosses it on the wire.
const SHUTDOWN_IDLE_WAIT: Duration = Duration::from_secs(1);
/// Unsent bytes the kernel may queue for a connection once a write has had to wait
/// (`TCP_NOTSENT_LOWAT`). The socket then turns writable as the client reads, not
/// only once an autotuned send buffer of megabytes has half drained: the send timeout
/// sees a slow reader's progress, and a stalled client pins less kernel memory.
const NOTSENT_LOWAT: u32 = 128 * 1024;
/// Write buffer a quiet streamed response keeps when it cannot give its buffers back
/// (see [`release_while_quiet`]).
const QUIET_STREAM_KEEP: usize = 512;
/// Requests one connection answers in a row before letting the others run: a client
/// that pipelines thousands of requests in one write must not hold the worker.
const REQUESTS_PER_TURN: u32 = 64;
/// Answered when a request body or a response would take the worker past its
/// buffering budget (`Limits::max_buffered_bytes`).
const OVER_BUDGET: Rejection =
    Rejection { status: StatusCode::SERVICE_UNAVAILABLE, reason: "server busy: too much buffered, retry later" };

#[cfg(test)]
mod tests;
mod upload;

/// Answered when a request body makes no progress for the body timeout.
const BODY_STALLED: Rejection =
    Rejection { status: StatusCode::REQUEST_TIMEOUT, reason: "request body not received in time" };

/// Why a connection stopped; each ends it, none is reported beyond it.
enum Stop {
    /// The peer closed, the keep-alive rules say close, or a limit or timeout struck.
    Done,
    Io,
}

impl From<io::Error> for Stop {
    fn from(_: io::Error) -> Self {
        Stop::Io
    }
}

type Flow<T = ()> = Result<T, Stop>;

/// Serves one accepted connection until it closes.
/// `slot` is the one `Worker::open_connection` gave it; it is closed here.
pub(crate) async fn serve<S: Service, T: Transport>(
    stream: T,
    peer: SocketAddr,
    service: Rc<S>,
    worker: Rc<Worker>,
    slot: usize,
) {
    let idle_deadline = worker.coarse_now() + worker.limits.idle_timeout;
    let idle_timer = Box::pin(tokio::time::sleep_until(idle_deadline));
    let bufs = Bufs::default();
    let conn = Conn {
        stream,
        peer,
        worker,
        bufs,
        start: 0,
        served: 0,
        idle_timer,
        slot,
        held: 0,
        lowat: false,
        streaming: None,
    };
    serve_http(conn, service).await;
}

/// Answers requests on `conn` until it closes, it is upgraded, or a response's body is
/// a stream, which goes on in a task of its own (see [`serve_stream`]).
async fn serve_http<S: Service, T: Transport>(mut conn: Conn<T>, service: Rc<S>) {
    let finished = conn.run(&*service).await.is_ok();
    if let Some(streaming) = conn.streaming.take().filter(|_| finished) {
        // A streamed body (an event stream) may go on for hours: it goes on in a task
        // sized for sending it alone, not in this one, whose future is sized for HTTP's
        // largest state (issue 23: ten thousand quiet SSE subscribers must cost about
        // what ten thousand idle connections do). The connection keeps its slot.
        tokio::task::spawn_local(serve_stream(conn, service, streaming));
        return;
    }
    conn.finish(finished).await;
}

/// Sends a streamed body whose head `conn` has encoded, then goes back to answering
/// requests on a new task if the connection stays open.
async fn serve_stream<S: Service, T: Transport>(mut conn: Conn<T>, service: Rc<S>, streaming: Streaming) {
    let sent = conn.send_stream(streaming.body, streaming.chunked).await;
    let finished = match sent {
        Ok(()) if streaming.keep_alive => {
            // Spawned rather than awaited: this task stays small while the stream runs.
            tokio::task::spawn_local(serve_http(conn, service));
            return;
        }
        Ok(()) => conn.flush().await.is_ok(),
        Err(_) => false,
    };
    // Boxed: the close's state would otherwise sit in the task while the stream runs.
    Box::pin(conn.finish(finished)).await;
}

/// A response body to stream, taken out of the request loop (see [`serve_stream`]).
struct Streaming {
    body: BodyStream,
    chunked: bool,
    /// Whether the connection reads the next request once the body has ended.
    keep_alive: bool,
}

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

/// The upgrade callback of a `101` that went out, if the connection ended on one.
fn upgrade_sent(bufs: &mut Bufs, finished: bool) -> Option<OnUpgrade> {
    if finished && bufs.is_allocated() { bufs.res.upgrade.take() } else { None }
}

struct Conn<T> {
    stream: T,
    peer: SocketAddr,
    worker: Rc<Worker>,
    bufs: Bufs,
    /// Where the request being read begins in `bufs.read`.
    start: usize,
    served: u64,
    /// One timer for the connection's whole life, moved forward on the coarse clock
    /// rather than created per request: pushing a deadline later touches no timer wheel.
    idle_timer: Pin<Box<Sleep>>,
    /// Where this connection parks its waker while idle (see `Worker::park`).
    slot: usize,
    /// Bytes of the worker's buffering budget this connection holds.
    held: usize,
    /// Whether `NOTSENT_LOWAT` is set: on the first write that cannot finish at once.
    lowat: bool,
    /// A streamed body whose head is encoded, for `serve_http` to hand to its own task.
    streaming: Option<Streaming>,
}

/// What ended a wait for the next request.
enum Idle {
    Readable,
    Shutdown,
    TimedOut,
}

impl<T: Transport> Conn<T> {
    /// Ends the connection: hands an upgraded one to its protocol, else gives the
    /// buffers back and closes (lingering when the last answer said close).
    async fn finish(mut self, finished: bool) {
        // `write_response` leaves the callback in the response only once it has sent a
        // `101`; the flush after it succeeded, so the client has the head.
        if let Some(on_upgrade) = upgrade_sent(&mut self.bufs, finished) {
            let read_ahead = self.bufs.read[self.start..].to_vec();
            self.worker.unhold(&mut self.held);
            self.worker.release(mem::take(&mut self.bufs));
            let Conn { stream, worker, slot, .. } = self;
            // The upgraded connection goes on in a task of its own, sized for it alone:
            // this one's future is sized for HTTP's largest state, which a WebSocket held
            // open for hours would otherwise carry (issue 23: an idle WebSocket costs no
            // more than about 2 KiB). It keeps the connection's slot, so it still counts
            // against the worker's limit and shutdown waits for it.
            tokio::task::spawn_local(async move {
                crate::upgrade::run(on_upgrade, Upgraded::new(Box::new(stream), read_ahead)).await;
                worker.close_connection(slot);
            });
            return;
        }
        self.worker.unhold(&mut self.held);
        if self.bufs.is_allocated() {
            self.worker.release(mem::take(&mut self.bufs));
        }
        if finished && self.worker.shutting_down.get() {
            // The last answer said `Connection: close`; closing with input unread would
            // reset the connection and could destroy that answer before it is read.
            self.linger().await;
        } else if finished {
            self.stream.close(LINGER_TIME).await;
        }
        self.worker.close_connection(self.slot);
    }

    async fn run<S: Service>(&mut self, service: &S) -> Flow {
        let mut in_a_row = 0;
        loop {
            // A connection holds buffers only between a request's first bytes and the
            // end of the batch it belongs to.
            if !self.bufs.is_allocated() || self.start == self.bufs.read.len() {
                if self.bufs.is_allocated() {
                    self.coalesce(self.bufs.write.len()).await;
                }
                self.flush().await?;
                if self.bufs.is_allocated() {
                    self.bufs.read.clear();
                }
                self.start = 0;
                if !self.wait_idle().await? {
                    return Ok(());
                }
                in_a_row = 0;
            } else if in_a_row == REQUESTS_PER_TURN {
                // Pipelined requests are still buffered: send what is answered, then
                // let the worker's other connections have their turn.
                self.flush().await?;
                tokio::task::yield_now().await;
                in_a_row = 0;
            }
            in_a_row += 1;
            let keep_alive = self.serve_one(service).await?;
            if let Some(streaming) = &mut self.streaming {
                // The body goes out from `serve_stream`, which then goes on as this
                // loop would have.
                streaming.keep_alive = keep_alive;
                return Ok(());
            }
            if !keep_alive {
                self.flush().await?;
                return Ok(());
            }
            if self.bufs.write.len() > FLUSH_THRESHOLD {
                self.flush().await?;
            }
        }
    }

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
    async fn coalesce(&self, len: usize) {
        if len >= COALESCE_FROM && self.worker.connections.get() > 1 {
            tokio::task::yield_now().await;
        }
    }

    /// Waits for the next request's first bytes and reads them. Hands the buffers back
    /// to the worker while waiting. `false`: the peer closed or stayed idle too long,
    /// or shutdown began and the connection stayed idle through its last call.
    async fn wait_idle(&mut self) -> Flow<bool> {
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

    /// Reads, answers and encodes one request. `false`: close after flushing.
    async fn serve_one<S: Service>(&mut self, service: &S) -> Flow<bool> {
        let parsed = match self.read_head().await? {
            Ok(parsed) => parsed,
            Err(rejection) => return self.refuse(rejection).await,
        };
        // Only a request with a body asks the service how to read it: `GET`s pay nothing.
        let mode = match parsed.framing {
            Framing::Empty => BodyMode::Buffer,
            _ => self.body_mode(service, &parsed),
        };
        if let BodyMode::Stream { max_bytes } = mode {
            return self.serve_streamed(service, &parsed, max_bytes).await;
        }
        if let Err(rejection) = parse::check_body_len(&parsed, self.worker.limits.max_body_bytes as u64) {
            return self.refuse(rejection).await;
        }
        let body_len = match self.read_body(&parsed).await? {
            Ok(len) => len,
            Err(rejection) => return self.refuse(rejection).await,
        };
        let keep_alive = self.answer(service, &parsed, body_len).await;
        let consumed = parsed.len + body_len;
        self.start += consumed;
        self.served += 1;
        let keep_alive = keep_alive && self.served < self.worker.limits.max_requests_per_connection;
        let keep_alive = self.write_response(&parsed, keep_alive).await?;
        if self.held > 0 {
            self.give_back();
        }
        Ok(keep_alive)
    }

    /// Asks the service how to read the body of the request whose head is at `start`.
    fn body_mode<S: Service>(&self, service: &S, parsed: &Parsed) -> BodyMode {
        let bufs = &*self.bufs;
        let buf = &bufs.read[self.start..self.start + parsed.len];
        service.body_mode(&Request { buf, head: &bufs.head, body: b"", stream: None, peer: self.peer })
    }

    /// Charges the worker's budget for the buffers as they stand now, with room for
    /// `more_read` bytes after what the read buffer holds; `false`: over budget.
    /// Capacities are counted, since that is the memory held.
    fn hold_buffers(&mut self, more_read: usize) -> bool {
        let b = &self.bufs;
        let read = b.read.capacity().max(b.read.len() + more_read);
        let bytes = read + b.chunked_body.capacity() + b.res.buffer.capacity();
        self.worker.hold(&mut self.held, bytes)
    }

    /// After a request that held part of the budget: frees the large buffers it left
    /// and gives the budget back, so that the memory returns now, not at close.
    fn give_back(&mut self) {
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

    /// Parses the head at `start`, reading more until it is complete.
    async fn read_head(&mut self) -> Flow<Result<Parsed, Rejection>> {
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
    async fn fill_until(&mut self, deadline: Instant) -> Flow<Option<bool>> {
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
    async fn read_body(&mut self, parsed: &Parsed) -> Flow<Result<usize, Rejection>> {
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
    async fn fill_body(&mut self) -> Flow<Result<(), Rejection>> {
        match self.fill_until(Instant::now() + self.worker.limits.body_timeout).await? {
            Some(true) => Ok(Ok(())),
            Some(false) => Err(Stop::Done),
            None => Ok(Err(BODY_STALLED)),
        }
    }

    /// RFC 9110 §10.1.1: tell a client that waits for it to send the body.
    async fn send_continue(&mut self, parsed: &Parsed, sent: &mut bool) -> Flow {
        if parsed.expect_continue && !*sent {
            *sent = true;
            self.bufs.write.extend_from_slice(b"HTTP/1.1 100 Continue\r\n\r\n");
        }
        self.flush().await
    }

    /// Calls the service for the request at `start`; the response is left in
    /// `bufs.res`. Returns whether the connection may stay open.
    async fn answer<S: Service>(&mut self, service: &S, parsed: &Parsed, body_len: usize) -> bool {
        let ConnBufs { read, chunked_body, head, res, .. } = &mut *self.bufs;
        let buf = &read[self.start..];
        let body = match parsed.framing {
            Framing::Chunked => &chunked_body[..],
            _ => &buf[parsed.len..parsed.len + body_len],
        };
        let req = Request { buf, head, body, stream: None, peer: self.peer };
        res.clear();
        // A panicking handler costs its request a 500, not the worker: the body has been
        // read, so the connection is still in step and may go on.
        // A service may panic while starting its future (a synchronous `service_fn`)
        // or while it runs; both are caught.
        let start = move || {
            let res = res;
            service.call(req, res)
        };
        let outcome = match std::panic::catch_unwind(AssertUnwindSafe(start)) {
            Ok(call) => {
                let mut call = pin!(call);
                poll_fn(|cx| match std::panic::catch_unwind(AssertUnwindSafe(|| call.as_mut().poll(cx))) {
                    Ok(Poll::Ready(())) => Poll::Ready(true),
                    Ok(Poll::Pending) => Poll::Pending,
                    Err(_) => Poll::Ready(false),
                })
                .await
            }
            Err(_) => false,
        };
        let res = &mut self.bufs.res;
        if !outcome {
            error_response(res, StatusCode::INTERNAL_SERVER_ERROR, "internal server error");
        }
        if let Some(hsts) = self.stream.hsts() {
            if !res.has_header("strict-transport-security") {
                res.append_header_unchecked(b"strict-transport-security", hsts);
            }
        }
        parsed.keep_alive && !res.close && !self.worker.shutting_down.get()
    }

    /// Encodes `bufs.res` and writes what cannot wait in the write buffer. Returns
    /// whether the connection stays open (a body delimited by close ends it).
    async fn write_response(&mut self, parsed: &Parsed, keep_alive: bool) -> Flow<bool> {
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
    async fn send_stream(&mut self, mut body: BodyStream, chunked: bool) -> Flow {
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
            Some(tcp) => super::sendfile::send_file(tcp, &file, offset, len, stall).await,
            None => {
                let (stream, scratch) = (&mut self.stream, &mut self.bufs.write);
                let copied = super::sendfile::copy_file(stream, scratch, &file, offset, len, stall).await;
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

    /// Answers a refused request and ends the connection: whatever follows a bad head
    /// (a smuggled request, say) is never read.
    async fn refuse(&mut self, rejection: Rejection) -> Flow<bool> {
        let version = self.bufs.head.version.unwrap_or(Version::Http11);
        error_response(&mut self.bufs.res, rejection.status, rejection.reason);
        let delimit = encode::delimit(&self.bufs.res, version);
        let date = self.worker.date();
        let bufs = &mut *self.bufs;
        encode::encode_head(&mut bufs.write, &bufs.res, &date, delimit, false, version);
        // RFC 9110 §9.3.2: the answer to `HEAD` has no body, refused or not. The
        // empty lines a client may send before the request line (RFC 9112 §2.2) are
        // skipped here as the parser skips them.
        let request = &bufs.read[self.start..];
        let line = request.iter().position(|&b| b != b'\r' && b != b'\n').unwrap_or(request.len());
        if !request[line..].starts_with(b"HEAD ") {
            bufs.write.extend_from_slice(&bufs.res.buffer);
        }
        self.flush().await?;
        // Nothing more is read or answered: the buffers and the budget go back now,
        // not after the linger.
        self.worker.unhold(&mut self.held);
        self.worker.release(mem::take(&mut self.bufs));
        self.linger().await;
        Ok(false)
    }

    /// Closes the write side, then reads and discards what the client still sends for
    /// a bounded time. Closing a socket with unread input makes the kernel send a reset,
    /// which can destroy the answer before the client reads it (RFC 9112 §9.6).
    async fn linger(&mut self) {
        let deadline = Instant::now() + LINGER_TIME;
        // Bounded: over TLS, shutting down first sends `close_notify`, a write that a
        // client which stopped reading could hold up.
        if !matches!(timeout_at(deadline, self.stream.shutdown()).await, Ok(Ok(()))) {
            return;
        }
        // On the heap: an array here would be held across the awaits below and so
        // enlarge every connection's task, idle or not, by its size.
        let mut scratch = vec![0u8; 4096];
        let mut discarded = 0;
        while discarded < LINGER_BYTES {
            match timeout_at(deadline, self.stream.read(&mut scratch)).await {
                Ok(Ok(n)) if n > 0 => discarded += n,
                _ => return,
            }
        }
    }

    /// Writes the write buffer out; the body timeout bounds each wait for progress.
    async fn flush(&mut self) -> Flow {
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
async fn write_two<T: Transport>(stream: &mut T, mut a: &[u8], mut b: &[u8], stall: Duration) -> Flow {
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
