//! The receiving half: reads frames, reassembles and decompresses messages, answers
//! pings, runs the heartbeat, and carries the close handshake to its end.
//!
//! Nothing here reads unless [`WsReceiver::recv`] is called: an application that
//! only sends must still keep a task receiving, or pings go unanswered and the
//! close handshake never completes (the heartbeat then closes the socket).
//!
//! Here: the receiver's state and [`WsReceiver::recv`]'s loop. `reassembly`: frames
//! into messages; `budget`: the worker's bound on the messages its sockets hold;
//! `control`: pings, the close handshake, failing the connection; `waiting`: the wait
//! for input with the heartbeat, drain and close timeout.

mod budget;
mod control;
mod reassembly;
mod waiting;

pub use budget::worker_message_bytes;

use std::future::poll_fn;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker, ready};

use tokio::time::{Instant, Sleep, sleep_until};

use self::budget::Held;
use self::reassembly::Event;
use super::close::{CloseCode, CloseFrame};
use super::deflate::Inflater;
use super::frame::{Header, OpCode};
use super::message::Message;
use super::readbuf::ReadBuf;
use super::sender::{Shared, WriteState};
use super::utf8::Utf8Validator;
use crate::drain::Drain;

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
    /// The worker's budget `msg` holds: its capacity, from the frame that made it
    /// until `recv` hands it over.
    held: Held,
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
            held: Held::default(),
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
}

impl std::fmt::Debug for WsReceiver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WsReceiver").field("done", &self.done).finish_non_exhaustive()
    }
}
