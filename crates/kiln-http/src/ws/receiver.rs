//! The receiving half: reads frames, reassembles and decompresses messages, answers
//! pings, runs the heartbeat, and carries the close handshake to its end.
//!
//! Nothing here reads unless [`WsReceiver::recv`] is called: an application that
//! only sends must still keep a task receiving, or pings go unanswered and the
//! close handshake never completes (the heartbeat then closes the socket).

use std::future::{Future, pending, poll_fn};
use std::pin::{Pin, pin};
use std::rc::Rc;
use std::task::{Context, Poll, Waker, ready};

use tokio::time::{Instant, Sleep, sleep_until, timeout_at};

use super::close::{self, CloseCode, CloseFrame};
use super::deflate::{InflateError, Inflater};
use super::frame::{self, FrameError, Header, OpCode};
use super::message::Message;
use super::readbuf::ReadBuf;
use super::sender::{Shared, WriteState};
use super::spare;
use super::utf8::Utf8Validator;
use crate::drain::Drain;

/// What the buffered bytes gave.
enum Event {
    Message(Message),
    /// A control frame, its payload in `control`.
    Control(OpCode),
}

/// Why the connection is to be failed (RFC 6455 §7.1.7): the close code to send.
type Fail = (CloseCode, &'static str);

/// What [`WsReceiver::poll_step`] came to: all but a message need awaiting.
enum Step {
    Message(Message),
    Done,
    Control(OpCode),
    Fail(Fail),
    /// Something to write or a close under way: the full wait.
    Wait,
    Woke(Wake),
}

/// What ended a wait for input.
enum Wake {
    Read(usize),
    ReadError,
    Heartbeat,
    Drain,
    CloseTimeout,
    Wrote,
}

/// The receiving half of a WebSocket; see [`recv`](Self::recv).
pub struct WsReceiver {
    shared: Rc<Shared>,
    /// Input read and not yet parsed; it holds no buffer while the socket idles.
    rbuf: ReadBuf,
    /// The frame whose payload is being read, and how much of it has been.
    frame: Option<(Header, u64)>,
    /// The message being reassembled: its opcode, whether it is compressed.
    msg_op: Option<(OpCode, bool)>,
    msg: Vec<u8>,
    /// How much of a text message has been checked as it arrived.
    checked: usize,
    utf8: Utf8Validator,
    control: Vec<u8>,
    /// Boxed: most sockets never negotiate permessage-deflate.
    inflater: Option<Box<Inflater>>,
    /// Fires after an interval of silence: first a ping, then 1011.
    heartbeat: Option<Pin<Box<Sleep>>>,
    /// The waker the heartbeat and the drain signal last registered: while the task
    /// is the same and neither has fired, polling them again would only register
    /// that waker again (a hundred and fifty instructions a message).
    registered: Option<Waker>,
    heard: bool,
    pinged: bool,
    /// Set once our close frame is out: when we stop waiting for the peer's.
    closing: Option<Instant>,
    peer_close: Option<CloseFrame>,
    done: bool,
    /// The worker's shutdown signal, registered once for the socket's life.
    drain: Drain,
}

impl WsReceiver {
    pub(crate) fn new(shared: Rc<Shared>, read_ahead: &[u8], inflater: Option<Inflater>) -> Self {
        let heartbeat = shared.config.heartbeat.map(|every| Box::pin(sleep_until(Instant::now() + every)));
        WsReceiver {
            shared,
            rbuf: ReadBuf::with_bytes(read_ahead),
            frame: None,
            msg_op: None,
            msg: Vec::new(),
            checked: 0,
            utf8: Utf8Validator::default(),
            control: Vec::new(),
            inflater: inflater.map(Box::new),
            heartbeat,
            registered: None,
            heard: false,
            pinged: false,
            closing: None,
            peer_close: None,
            done: false,
            drain: crate::drain::draining(),
        }
    }

    /// The next message; `None` once the connection has closed: the close handshake
    /// done (see [`close_frame`](Self::close_frame)), the peer gone, the connection
    /// failed for a protocol error or a limit (with its close code sent), the
    /// heartbeat unanswered (1011), or the server draining (1001). Cancel-safe: a
    /// message half read is kept for the next call.
    pub async fn recv(&mut self) -> Option<Message> {
        loop {
            match poll_fn(|cx| self.poll_step(cx)).await {
                Step::Message(m) => return Some(m),
                Step::Done => return None,
                Step::Control(op) => self.on_control(op).await,
                Step::Fail((code, reason)) => self.fail(code, reason).await,
                Step::Wait => self.wait().await,
                Step::Woke(wake) => self.on_wake(wake).await,
            }
        }
    }

    /// Parses what is buffered into the next step. While nothing is queued to send
    /// and no close is under way (nearly always), the wait for input is polled here
    /// too: a message read, parsed and returned in one poll, no future built for it.
    fn poll_step(&mut self, cx: &mut Context<'_>) -> Poll<Step> {
        loop {
            if self.done {
                return Poll::Ready(Step::Done);
            }
            if self.closing.is_none() && self.shared.state.get() != WriteState::Open {
                // The sender started the close handshake (or broke).
                self.start_closing();
            }
            match self.next_event() {
                Ok(Some(Event::Message(m))) => return Poll::Ready(Step::Message(m)),
                Ok(Some(Event::Control(op))) => return Poll::Ready(Step::Control(op)),
                Ok(None) => {}
                Err(fail) => return Poll::Ready(Step::Fail(fail)),
            }
            if self.closing.is_some() || self.shared.queued() > 0 {
                return Poll::Ready(Step::Wait);
            }
            let wake = match self.poll_read(cx) {
                Poll::Ready(wake) => wake,
                Poll::Pending => ready!(self.poll_timers(cx, true)),
            };
            match wake {
                Wake::Read(n) if n > 0 => self.heard = true,
                wake => return Poll::Ready(Step::Woke(wake)),
            }
        }
    }

    /// What the peer's close frame said, once it came.
    pub fn close_frame(&self) -> Option<&CloseFrame> {
        self.peer_close.as_ref()
    }

    /// Parses what is buffered into the next event, if it holds one.
    fn next_event(&mut self) -> Result<Option<Event>, Fail> {
        loop {
            let (header, read) = match self.frame {
                Some(f) => f,
                None => {
                    let deflate = self.inflater.is_some();
                    let max_frame = self.shared.config.max_frame as u64;
                    let Some((h, n)) = frame::parse_header(self.rbuf.bytes(), deflate, max_frame)
                        .map_err(|FrameError { code, reason }| (code, reason))?
                    else {
                        return Ok(None);
                    };
                    self.rbuf.consume(n);
                    // Once closing, data frames are skipped unchecked: only the peer's
                    // close frame matters now.
                    if self.closing.is_none() || h.opcode.is_control() {
                        self.start_frame(&h)?;
                    }
                    (h, 0)
                }
            };
            let avail = (self.rbuf.bytes().len() as u64).min(header.len - read) as usize;
            let complete = read + avail as u64 == header.len;
            if header.opcode.is_control() {
                let payload = &mut self.rbuf.bytes_mut()[..avail];
                frame::apply_mask(payload, header.mask, read);
                self.control.extend_from_slice(payload);
            } else if self.closing.is_none() {
                if self.msg.capacity() == 0 && header.fin {
                    // A message in one frame: its buffer is made once, to size (or
                    // one that carried a message sent since is reused).
                    self.msg = spare::buffer(header.len.min(self.shared.config.max_message as u64) as usize);
                }
                self.take_payload(avail, &header, read, header.fin && complete)?;
            }
            let read = read + avail as u64;
            self.rbuf.consume(avail);
            if !complete {
                self.frame = Some((header, read));
                return Ok(None);
            }
            self.frame = None;
            if header.opcode.is_control() {
                return Ok(Some(Event::Control(header.opcode)));
            }
            if header.fin && self.closing.is_none() {
                return self.end_message().map(|m| Some(Event::Message(m)));
            }
        }
    }

    /// Checks a new frame against the message in progress (RFC 6455 §5.4).
    fn start_frame(&mut self, h: &Header) -> Result<(), Fail> {
        let limit = self.shared.config.max_message as u64;
        match (h.opcode, self.msg_op) {
            (OpCode::Text | OpCode::Binary, None) => {
                self.msg_op = Some((h.opcode, h.rsv1));
                self.msg.clear();
                self.checked = 0;
            }
            (OpCode::Text | OpCode::Binary, Some(_)) => {
                return Err((CloseCode::PROTOCOL_ERROR, "expected a continuation"));
            }
            (OpCode::Continuation, None) => return Err((CloseCode::PROTOCOL_ERROR, "continuation of nothing")),
            // RFC 7692 §6.1: only a message's first frame says it is compressed.
            (OpCode::Continuation, Some(_)) if h.rsv1 => {
                return Err((CloseCode::PROTOCOL_ERROR, "RSV1 on a continuation"));
            }
            _ => {}
        }
        if h.opcode.is_control() {
            self.control.clear();
        } else if matches!(self.msg_op, Some((_, false))) && self.msg.len() as u64 + h.len > limit {
            // Refused before any of it is read.
            return Err((CloseCode::MESSAGE_TOO_BIG, "message too large"));
        }
        Ok(())
    }

    /// Adds the first `len` unparsed bytes, the payload of `header` from its byte
    /// `offset`, unmasked, to the message; `last`: they end it.
    fn take_payload(&mut self, len: usize, header: &Header, offset: u64, last: bool) -> Result<(), Fail> {
        let Some((op, compressed)) = self.msg_op else { return Ok(()) };
        if compressed {
            let payload = &mut self.rbuf.bytes_mut()[..len];
            frame::apply_mask(payload, header.mask, offset);
            let inflater = self.inflater.as_mut().ok_or((CloseCode::PROTOCOL_ERROR, "RSV1 without deflate"))?;
            inflater.inflate(payload, &mut self.msg, self.shared.config.max_message).map_err(inflate_fail)?;
        } else {
            // Unmasked as it is copied: one pass over the payload, not two.
            frame::unmask_into(&mut self.msg, &self.rbuf.bytes()[..len], header.mask, offset);
        }
        // A message that arrives whole is checked once, at its end; one that arrives in
        // pieces is checked as they come, so bad text fails at once (§8.1).
        if op == OpCode::Text && !(last && self.checked == 0) {
            self.utf8.feed(&self.msg[self.checked..]).map_err(|_| (CloseCode::INVALID_PAYLOAD, "text not UTF-8"))?;
            self.checked = self.msg.len();
        }
        Ok(())
    }

    fn end_message(&mut self) -> Result<Message, Fail> {
        let Some((op, compressed)) = self.msg_op.take() else {
            return Err((CloseCode::PROTOCOL_ERROR, "continuation of nothing"));
        };
        if compressed {
            if let Some(inflater) = &mut self.inflater {
                inflater.finish(&mut self.msg, self.shared.config.max_message).map_err(inflate_fail)?;
            }
        }
        let body = std::mem::take(&mut self.msg);
        if op == OpCode::Binary {
            return Ok(Message::Binary(body));
        }
        self.utf8 = Utf8Validator::default();
        String::from_utf8(body).map(Message::Text).map_err(|_| (CloseCode::INVALID_PAYLOAD, "text not UTF-8"))
    }

    async fn on_control(&mut self, op: OpCode) {
        match op {
            OpCode::Ping if self.shared.state.get() == WriteState::Open => {
                // §5.5.2: answered with a pong carrying the same payload.
                self.shared.push_control(OpCode::Pong, &self.control);
            }
            OpCode::Close => {
                let frame = match close::parse(&self.control) {
                    Ok(frame) => frame,
                    Err((code, reason)) => {
                        // The peer has closed, if badly: answer with the error and end
                        // now, rather than wait for a second close frame.
                        self.shared.push_close(Some(code), reason);
                        return self.finish().await;
                    }
                };
                // §5.5.1: answer with a close frame, echoing the code.
                let code = frame.as_ref().map(|f| f.code);
                self.peer_close = frame;
                self.shared.push_close(code, "");
                self.finish().await;
            }
            _ => {}
        }
    }

    /// Fails the connection (RFC 6455 §7.1.7): sends the close code, ends the write
    /// side, and processes nothing the peer sends after: the frame that failed may have
    /// left the parser mid-frame, so the peer's close frame could be misread and waited
    /// for until the close timeout. What still arrives is read away, bounded, since
    /// closing with input unread would reset the connection and could destroy our
    /// close frame before the peer reads it.
    async fn fail(&mut self, code: CloseCode, reason: &'static str) {
        if self.closing.is_none() {
            self.msg_op = None;
            self.msg = Vec::new();
            self.shared.push_close(Some(code), reason);
        }
        self.shared.shutdown().await;
        let deadline = Instant::now() + self.shared.config.close_timeout;
        loop {
            self.rbuf.clear();
            let (rbuf, shared) = (&mut self.rbuf, &*self.shared);
            let read = poll_fn(|cx| rbuf.poll_fill(&mut **shared.io.borrow_mut(), cx));
            // Boxed: a failing socket's timer need not sit in every socket's future.
            match Box::pin(timeout_at(deadline, read)).await {
                Ok(Ok(n)) if n > 0 => {}
                _ => break,
            }
        }
        self.rbuf.clear();
        self.done = true;
    }

    fn start_closing(&mut self) {
        self.closing = Some(Instant::now() + self.shared.config.close_timeout);
    }

    /// Ends the connection: what is queued goes out, then our side closes.
    async fn finish(&mut self) {
        self.shared.shutdown().await;
        self.done = true;
    }

    /// Waits for input, the heartbeat, drain or the close timeout, writing what is
    /// queued meanwhile. Polled by hand rather than through `select!`, which would
    /// build every branch's future (timers included) on each call: this runs once per
    /// message received.
    async fn wait(&mut self) {
        let wake = self.wake().await;
        self.on_wake(wake).await;
    }

    /// Acts on what ended a wait.
    async fn on_wake(&mut self, wake: Wake) {
        match wake {
            Wake::Read(0) | Wake::ReadError | Wake::CloseTimeout => self.finish().await,
            Wake::Read(_) => self.heard = true,
            Wake::Wrote => {}
            Wake::Heartbeat => self.beat().await,
            Wake::Drain => {
                // Shutdown began: close with 1001 and let the peer answer.
                self.shared.push_close(Some(CloseCode::GOING_AWAY), "server shutting down");
                self.start_closing();
            }
        }
    }

    /// What ends the wait; see [`wait`](Self::wait).
    async fn wake(&mut self) -> Wake {
        // A clone, so that the flush may borrow it while `self` is polled.
        let shared = Rc::clone(&self.shared);
        let queued = shared.queued() > 0;
        // A peer that does not read what we queue is not read from either, past the
        // bound: its pings cannot grow our queue without end.
        let can_read = shared.queued() <= shared.config.max_queue;
        // Neither future does anything until polled, and each is polled only when wanted.
        let mut flushing = pin!(async { if queued { shared.flush().await } else { pending().await } });
        // Boxed, and only once closing: a timer inline would sit in every idle socket.
        let mut close_timer = self.closing.map(|at| Box::pin(sleep_until(at)));
        poll_fn(|cx| {
            if can_read {
                if let Poll::Ready(wake) = self.poll_read(cx) {
                    return Poll::Ready(wake);
                }
            }
            if queued {
                match flushing.as_mut().poll(cx) {
                    Poll::Ready(Ok(())) => return Poll::Ready(Wake::Wrote),
                    Poll::Ready(Err(_)) => return Poll::Ready(Wake::ReadError),
                    Poll::Pending => {}
                }
            }
            if let Some(timer) = close_timer.as_mut() {
                if timer.as_mut().poll(cx).is_ready() {
                    return Poll::Ready(Wake::CloseTimeout);
                }
            }
            self.poll_timers(cx, close_timer.is_none())
        })
        .await
    }

    /// Reads what the transport has.
    fn poll_read(&mut self, cx: &mut Context<'_>) -> Poll<Wake> {
        match self.rbuf.poll_fill(&mut **self.shared.io.borrow_mut(), cx) {
            Poll::Ready(Ok(n)) => Poll::Ready(Wake::Read(n)),
            Poll::Ready(Err(_)) => Poll::Ready(Wake::ReadError),
            Poll::Pending => Poll::Pending,
        }
    }

    /// The heartbeat, and the drain signal when `drain` (not once closing): each
    /// polled only when it fired or the task's waker is not the one they hold.
    fn poll_timers(&mut self, cx: &mut Context<'_>, drain: bool) -> Poll<Wake> {
        let registered = self.registered.as_ref().is_some_and(|w| w.will_wake(cx.waker()));
        if let Some(timer) = self.heartbeat.as_mut() {
            if (!registered || timer.is_elapsed()) && timer.as_mut().poll(cx).is_ready() {
                self.registered = None;
                return Poll::Ready(Wake::Heartbeat);
            }
        }
        if drain && (!registered || self.drain.is_draining()) && Pin::new(&mut self.drain).poll(cx).is_ready() {
            return Poll::Ready(Wake::Drain);
        }
        if !registered {
            self.registered = Some(cx.waker().clone());
        }
        Poll::Pending
    }

    /// The heartbeat's timer fired: all is well if the peer was heard since the last
    /// beat; else ping it, and if it was pinged already, close with 1011.
    async fn beat(&mut self) {
        let Some(every) = self.shared.config.heartbeat else { return };
        if let Some(timer) = &mut self.heartbeat {
            timer.as_mut().reset(Instant::now() + every);
            // Reset: polled again, to register afresh.
            self.registered = None;
        }
        if std::mem::take(&mut self.heard) {
            self.pinged = false;
        } else if !self.pinged && self.shared.state.get() == WriteState::Open {
            self.pinged = true;
            self.shared.push_control(OpCode::Ping, b"");
        } else {
            self.shared.push_close(Some(CloseCode::INTERNAL_ERROR), "no answer to heartbeat");
            self.finish().await;
        }
    }
}

fn inflate_fail(e: InflateError) -> Fail {
    match e {
        InflateError::TooBig => (CloseCode::MESSAGE_TOO_BIG, "message too large"),
        InflateError::Corrupt => (CloseCode::INVALID_PAYLOAD, "bad compressed data"),
    }
}

impl std::fmt::Debug for WsReceiver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WsReceiver").field("done", &self.done).finish_non_exhaustive()
    }
}
