//! One HTTP/2 connection on kiln's own engine: one task, one loop. Each turn reads what
//! the socket has, applies its frames, calls the service for every request made whole
//! (all in this task: the calls that wait are polled here too), queues responses and
//! what the windows allow of their bodies into the one write buffer, and writes it
//! with one system call. Buffers are handed back while the connection idles.

use std::future::{Future, poll_fn};
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll};
use std::time::Duration;

use futures_util::future::Either;
use tokio::time::{Instant, Sleep, sleep_until};

use super::running::Calls;
use super::send::OUT_HIGH;
use super::state::State;
use crate::body::IncomingBody;
use crate::h2::frame::Code;
use crate::request::Request;
use crate::service::{Service, call_caught};
use crate::transport::Transport;
use crate::worker::{Bufs, ConnBufs, Worker};

/// How long a connection that has sent `GOAWAY` and has no stream left may take to
/// close (the peer reading the last frames) before it is dropped.
const CLOSE_WAIT: Duration = Duration::from_secs(2);
/// Room kept free in the read buffer before a read: a whole largest frame.
const READ_ROOM: usize = 16 * 1024 + 9;
/// Frames applied in one turn before the connection lets the worker's others run.
const BYTES_PER_TURN: usize = 256 * 1024;

/// A request to call the service for: its buffers, its streamed body, its stream.
pub(super) type ToCall = (Bufs, Option<IncomingBody>, u32);

/// What a call gives back: its stream, its buffers, whether it finished without a
/// panic; `None` from a tunnel's callback, which answers nothing when it ends.
type Answered = Option<(u32, Bufs, bool)>;

/// An upgrade callback speaking on a tunnelled stream (RFC 8441), run beside the calls.
pub(super) type Upgrading = Pin<Box<dyn Future<Output = ()>>>;

/// Everything one connection's loop owns.
///
/// The loop's own variables live here too, not in [`run`](Self::run)'s future: every
/// idle connection's future holds this struct and the loop's suspended state, and a
/// local kept across the wait (and the reference to it the poll closure would hold)
/// would cost every idle connection its bytes twice over.
pub(super) struct Conn<S, T> {
    pub(super) io: T,
    pub(super) service: Rc<S>,
    pub(super) worker: Rc<Worker>,
    pub(super) peer: SocketAddr,
    pub(super) slot: usize,
    pub(super) state: State,
    pub(super) read: Vec<u8>,
    /// Requests made whole (or whose body streams) this turn, to be called.
    /// Boxed, and dropped while idle: 8 bytes, not 24, in every idle connection.
    #[allow(clippy::box_collection)]
    pub(super) to_call: Option<Box<Vec<ToCall>>>,
    pub(super) clock: Clock,
}

/// The loop's timer and what it times.
pub(super) struct Clock {
    timer: Pin<Box<Sleep>>,
    write_stalled_since: Option<Instant>,
    closing_since: Option<Instant>,
    idle_since: Option<Instant>,
    seen_last_id: u32,
    read_closed: bool,
}

impl Clock {
    /// A new connection's: idle since now, given the header timeout to send its preface.
    pub(super) fn new(worker: &Worker) -> Self {
        Clock {
            timer: Box::pin(sleep_until(worker.coarse_now() + worker.limits.header_timeout)),
            write_stalled_since: None,
            closing_since: None,
            idle_since: Some(worker.coarse_now()),
            seen_last_id: 0,
            read_closed: false,
        }
    }
}

/// A service call under way: the stream it answers, its buffers, whether it finished
/// without a panic. A streamed body comes as `upload`, the buffered one empty.
async fn call<S: Service>(
    service: Rc<S>,
    mut bufs: Bufs,
    upload: Option<IncomingBody>,
    peer: SocketAddr,
    id: u32,
) -> Answered {
    let ConnBufs { read, head, chunked_body, res, .. } = &mut *bufs;
    res.clear();
    let req = Request { buf: read, head, body: chunked_body, stream: upload.as_ref(), peer };
    let ok = call_caught(&*service, req, res).await;
    Some((id, bufs, ok))
}

/// A tunnel's callback among the calls: it ends with nothing to answer.
fn tunnelled(upgrading: Upgrading) -> Pin<Box<dyn Future<Output = Answered>>> {
    Box::pin(async move {
        upgrading.await;
        None
    })
}

impl<S: Service, T: Transport> Conn<S, T> {
    /// Runs the connection until it closes.
    ///
    /// Not an `async fn`, which would keep `self` twice in its future.
    #[allow(clippy::manual_async_fn)]
    pub(super) fn run(&mut self) -> impl Future<Output = ()> + '_ {
        async move {
            let mut calls = Calls::default();
            poll_fn(|cx| {
                // A clone per wake-up, not a local held across the wait.
                let worker = Rc::clone(&self.worker);
                let worker = &*worker;
                let mut budget = BYTES_PER_TURN;
                loop {
                    // 1. Read and apply frames, unless the write side is backed up: a peer
                    //    that reads nothing cannot make the server queue without end.
                    let mut progressed = false;
                    if !self.clock.read_closed && self.state.out.len() < OUT_HIGH && budget > 0 {
                        match self.fill(cx) {
                            Poll::Ready(Ok(0)) => {
                                self.clock.read_closed = true;
                                self.state.end_tunnels(worker);
                            }
                            Poll::Ready(Ok(n)) => {
                                budget = budget.saturating_sub(n);
                                progressed = true;
                            }
                            Poll::Ready(Err(_)) => return Poll::Ready(()),
                            Poll::Pending => {}
                        }
                        if !self.read.is_empty() && !self.state.fatal {
                            self.apply(cx);
                        }
                        // Streams reset while their handler ran: the handlers are dropped.
                        for id in self.state.cancelled.iter_mut().flat_map(|c| c.drain(..)) {
                            calls.cancel(id);
                        }
                    }
                    // 2. Early hints for new streams, then calls for requests made whole.
                    self.start_calls(cx);
                    for (bufs, upload, id) in self.to_call.iter_mut().flat_map(|c| c.drain(..)) {
                        calls.push(id, Either::Left(call(Rc::clone(&self.service), bufs, upload, self.peer, id)));
                    }
                    // 3. Answers from calls that finished; the window of what streamed
                    //    bodies' handlers took goes back.
                    while let Poll::Ready(Some(answered)) = calls.poll_next(cx) {
                        let Some((id, bufs, ok)) = answered else { continue };
                        if let Some(upgrading) = self.answer(id, bufs, ok, cx) {
                            calls.push(id, Either::Right(tunnelled(upgrading)));
                        }
                    }
                    self.state.release_taken();
                    // 4. Bodies, as far as the windows allow.
                    self.state.pump(worker, cx);
                    // 5. Graceful ends: shutdown, the request cap, a response's close.
                    if !self.state.goaway_sent
                        && (worker.shutting_down.get()
                            || self.state.close_after
                            || self.state.answered >= worker.limits.max_requests_per_connection)
                    {
                        self.state.goaway(Code::NO_ERROR);
                    }
                    // 6. Write. A full buffer stopped the bodies: once it is out, they go on.
                    let full = self.state.out.len() >= OUT_HIGH;
                    let queued = self.state.out.len();
                    match self.flush(cx) {
                        Poll::Ready(Ok(())) => {
                            self.clock.write_stalled_since = None;
                            if full {
                                budget = budget.saturating_sub(OUT_HIGH);
                                progressed = true;
                            }
                        }
                        Poll::Ready(Err(_)) => return Poll::Ready(()),
                        // A slow reader is served to the end; one that takes nothing for
                        // the body timeout is dropped (as HTTP/1.1's writes are).
                        Poll::Pending if self.state.out.len() < queued => {
                            self.clock.write_stalled_since = Some(worker.coarse_now())
                        }
                        Poll::Pending => {
                            self.clock.write_stalled_since.get_or_insert_with(|| worker.coarse_now());
                        }
                    }
                    if progressed && budget > 0 {
                        continue;
                    }
                    if progressed {
                        // A busy peer: let the worker's other connections run.
                        cx.waker().wake_by_ref();
                    }
                    // 7. The end, and the self.clock.timer.
                    let busy = !self.state.streams.is_empty() || !calls.is_empty();
                    if self.state.goaway_sent || self.clock.read_closed || self.state.peer_gone {
                        self.clock.closing_since.get_or_insert_with(Instant::now);
                    }
                    if (self.state.fatal || self.clock.read_closed || self.state.goaway_sent || self.state.peer_gone)
                        && !busy
                        && self.state.out.is_empty()
                    {
                        return Poll::Ready(());
                    }
                    let now = worker.coarse_now();
                    // Idle: no stream open or opened since the last look. Control frames
                    // (a PING each second) do not keep a connection from idling out.
                    let opened = self.state.last_id != self.clock.seen_last_id;
                    self.clock.seen_last_id = self.state.last_id;
                    if busy || opened {
                        self.clock.idle_since = None;
                    } else if self.clock.idle_since.is_none() {
                        self.clock.idle_since = Some(now);
                        self.give_back();
                        calls.release_if_empty();
                    }
                    let mut deadline = self.deadlines(now);
                    if let Some(since) = self.clock.idle_since {
                        let limit = if self.state.settings_seen {
                            worker.limits.idle_timeout
                        } else {
                            worker.limits.header_timeout
                        };
                        deadline = deadline.min(since + limit);
                    }
                    if let Some(since) = self.clock.write_stalled_since {
                        deadline = deadline.min(since + worker.limits.body_timeout);
                    }
                    if let Some(since) = self.clock.closing_since.filter(|_| !busy || self.state.fatal) {
                        deadline = deadline.min(since + CLOSE_WAIT);
                    }
                    if self.clock.timer.deadline() != deadline {
                        self.clock.timer.as_mut().reset(deadline);
                    }
                    if self.clock.timer.as_mut().poll(cx).is_ready() {
                        let now = Instant::now();
                        if self.clock.write_stalled_since.is_some_and(|s| now >= s + worker.limits.body_timeout)
                            || self
                                .clock
                                .closing_since
                                .is_some_and(|s| now >= s + CLOSE_WAIT && (!busy || self.state.fatal))
                        {
                            return Poll::Ready(());
                        }
                        if self.clock.idle_since.is_some_and(|_| !busy) && !self.state.settings_seen {
                            return Poll::Ready(());
                        }
                        if self.clock.idle_since.is_some() && !busy {
                            self.state.goaway(Code::NO_ERROR);
                        }
                        self.expire(now, cx);
                        continue;
                    }
                    worker.park(self.slot, cx.waker());
                    return Poll::Pending;
                }
            })
            .await;
            self.state.close(&self.worker);
        }
    }

    /// Applies the whole frames in the read buffer. A stream with a body pauses the
    /// frames after its HEADERS until its body mode is asked ([`start_calls`]).
    ///
    /// [`start_calls`]: Self::start_calls
    fn apply(&mut self, cx: &mut Context<'_>) {
        let mut at = 0;
        loop {
            match self.state.receive(&self.read[at..], &self.worker) {
                Ok(used) => at += used,
                Err(code) => {
                    self.read.clear();
                    self.clock.read_closed = true;
                    self.state.end_tunnels(&self.worker);
                    self.state.goaway(code);
                    self.state.fatal = true;
                    return;
                }
            }
            if !self.state.paused {
                break;
            }
            self.state.paused = false;
            self.start_calls(cx);
        }
        self.read.drain(..at);
    }

    /// Reads what the socket has into the read buffer: `Ready(Ok(0))` at its end.
    fn fill(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<usize>> {
        if self.read.capacity() - self.read.len() < READ_ROOM {
            self.read.reserve(READ_ROOM);
        }
        loop {
            match self.io.try_read_buf(&mut self.read) {
                Ok(n) => {
                    self.state.meter.read(n);
                    return Poll::Ready(Ok(n));
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => match self.io.poll_read_ready(cx) {
                    Poll::Ready(Ok(())) => continue,
                    Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                    Poll::Pending => return Poll::Pending,
                },
                Err(e) => return Poll::Ready(Err(e)),
            }
        }
    }

    /// Writes the write buffer out as far as the socket takes it.
    fn flush(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let out = &mut self.state.out;
        let mut written = 0;
        while written < out.len() {
            match Pin::new(&mut self.io).poll_write(cx, &out[written..]) {
                Poll::Ready(Ok(0)) => return Poll::Ready(Err(io::ErrorKind::WriteZero.into())),
                Poll::Ready(Ok(n)) => written += n,
                Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                Poll::Pending => {
                    out.drain(..written);
                    return Poll::Pending;
                }
            }
        }
        out.clear();
        if self.io.has_unsent() {
            return Pin::new(&mut self.io).poll_flush(cx);
        }
        Poll::Ready(Ok(()))
    }

    /// Hands the buffers back while the connection idles: the read and write buffers,
    /// the slab's and the lists' capacity, the HPACK decoder's scratch space (its
    /// table is fitted to its entries).
    fn give_back(&mut self) {
        if self.read.is_empty() {
            self.read = Vec::new();
        }
        if self.state.out.is_empty() {
            self.state.out = Vec::new();
        }
        self.state.streams.shrink_to_fit();
        self.state.cancelled = None;
        self.to_call = None;
        self.state.decoder.shrink();
    }
}
