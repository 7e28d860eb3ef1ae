//! The sending half: frames are encoded into one bounded output queue that the
//! sender, and the receiver while it waits, write out.
//!
//! The queue's policy when it is full (more than [`WsConfig::max_queue`] bytes not yet
//! taken by the peer):
//! - [`WsSender::send`] waits until the queue drains below the bound before adding its
//!   message (backpressure on the producer), then writes;
//! - [`WsSender::try_send`] never waits: it hands the message back
//!   ([`TrySendError::Full`]) so a broadcaster can drop it or close the slow peer;
//! - a peer that takes no byte for [`WsConfig::send_timeout`] is dropped: every
//!   send then fails with [`SendError`].
//!
//! Memory per socket is therefore bounded by the queue bound plus one message.

use std::cell::{Cell, RefCell};
use std::fmt;
use std::future::poll_fn;
use std::io::{self, IoSlice};
use std::pin::{Pin, pin};
use std::rc::Rc;
use std::task::{Context, Poll};

use tokio::io::AsyncWrite;
use tokio::sync::Notify;
use tokio::time::timeout;

use super::close::{self, CloseCode};
use super::config::WsConfig;
use super::deflate::Deflater;
use super::frame::{self, OpCode};
use super::message::Message;
use super::spare;
use crate::upgrade::UpgradedIo;

/// An output queue grown past this is freed once written, not kept for reuse: an
/// idle socket holds next to nothing. (Most messages never enter the queue: see
/// [`Shared::write_message`].)
const KEEP_BUFFER: usize = 256;
/// A compression buffer grown past this is freed once its message is out.
const KEEP_SCRATCH: usize = 64 * 1024;

/// Where the write side stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WriteState {
    Open,
    /// Our close frame is queued: nothing else may follow it (RFC 6455 §5.5.1).
    CloseSent,
    /// The peer stopped taking bytes, or the connection failed.
    Broken,
}

/// The compressor and the buffer it compresses each message into.
type Compression = (Deflater, Vec<u8>);

/// What both halves share.
pub(crate) struct Shared {
    /// The transport, read by the receiver and written by whoever sends.
    pub(crate) io: RefCell<Box<dyn UpgradedIo>>,
    /// Encoded frames not yet written, from `out_pos`.
    out: RefCell<Vec<u8>>,
    out_pos: Cell<usize>,
    /// Told whenever bytes leave, so that whoever else waits to write looks again
    /// (only the last task to poll the socket gets its wake-up).
    progress: Notify,
    /// Flushes waiting for the socket: only then is `progress` worth telling.
    waiting: Cell<usize>,
    /// Boxed: most sockets never negotiate it, and each would carry its room.
    deflate: RefCell<Option<Box<Compression>>>,
    pub(crate) state: Cell<WriteState>,
    pub(crate) config: WsConfig,
}

impl Shared {
    pub(crate) fn new(io: Box<dyn UpgradedIo>, deflater: Option<Deflater>, config: WsConfig) -> Self {
        Shared {
            io: RefCell::new(io),
            out: RefCell::new(Vec::new()),
            out_pos: Cell::new(0),
            progress: Notify::new(),
            waiting: Cell::new(0),
            deflate: RefCell::new(deflater.map(|d| Box::new((d, Vec::new())))),
            state: Cell::new(WriteState::Open),
            config,
        }
    }

    /// Bytes queued and not yet written.
    pub(crate) fn queued(&self) -> usize {
        self.out.borrow().len() - self.out_pos.get()
    }

    /// Sends a data message, compressed when deflate is on. With `cx` and nothing
    /// queued it goes out from where it lies: header and payload in one vectored
    /// write, no copy. What the socket does not take now (all of it without `cx`, or
    /// on a transport that cannot write vectored, as TLS) is queued. Whether it all
    /// went out and was flushed: then there is nothing left to flush.
    fn write_message(&self, msg: &Message, cx: Option<&mut Context<'_>>) -> bool {
        let (opcode, payload) = match msg {
            Message::Text(s) => (OpCode::Text, s.as_bytes()),
            Message::Binary(b) => (OpCode::Binary, &b[..]),
        };
        let mut deflate = self.deflate.borrow_mut();
        let (rsv1, payload) = match deflate.as_deref_mut() {
            Some((deflater, scratch)) if payload.len() >= self.config.compress_from => {
                deflater.compress(payload, scratch);
                (true, &scratch[..])
            }
            _ => (false, payload),
        };
        let (head, head_len) = frame::header(true, rsv1, opcode, payload.len());
        let head = &head[..head_len];
        let (sent, flushed) = match cx {
            Some(cx) if self.queued() == 0 => self.write_direct(cx, head, payload),
            _ => (0, false),
        };
        if sent < head.len() + payload.len() {
            let mut out = self.out.borrow_mut();
            if sent < head.len() {
                out.extend_from_slice(&head[sent..]);
                out.extend_from_slice(payload);
            } else {
                out.extend_from_slice(&payload[sent - head.len()..]);
            }
        }
        if let Some((_, scratch)) = deflate.as_deref_mut() {
            if scratch.capacity() > KEEP_SCRATCH {
                *scratch = Vec::new();
            }
        }
        flushed
    }

    /// One vectored write of a frame, flushed if the socket took all of it: how much
    /// it took, and whether that flush is done.
    fn write_direct(&self, cx: &mut Context<'_>, head: &[u8], payload: &[u8]) -> (usize, bool) {
        let mut io = self.io.borrow_mut();
        if !io.is_write_vectored() {
            return (0, false);
        }
        let bufs = [IoSlice::new(head), IoSlice::new(payload)];
        match Pin::new(&mut **io).poll_write_vectored(cx, &bufs) {
            Poll::Ready(Ok(n)) => {
                if n > 0 && self.waiting.get() > 0 {
                    self.progress.notify_waiters();
                }
                // A plain socket's flush does nothing, at once; a transport that
                // buffers is still flushed before the send counts as done.
                let all = n == head.len() + payload.len();
                (n, all && matches!(Pin::new(&mut **io).poll_flush(cx), Poll::Ready(Ok(()))))
            }
            // An error shows again on the flush that follows.
            Poll::Ready(Err(_)) | Poll::Pending => (0, false),
        }
    }

    /// Queues a control frame (ping, pong, close).
    pub(crate) fn push_control(&self, opcode: OpCode, payload: &[u8]) {
        if opcode == OpCode::Close {
            self.state.set(WriteState::CloseSent);
        }
        frame::encode_frame(&mut self.out.borrow_mut(), false, opcode, payload);
    }

    /// Queues our close frame unless one was sent already.
    pub(crate) fn push_close(&self, code: Option<CloseCode>, reason: &str) {
        if self.state.get() == WriteState::Open {
            let payload = code.map(|c| close::payload(c, reason)).unwrap_or_default();
            self.push_control(OpCode::Close, &payload);
        }
    }

    /// Writes what the socket takes now; `Ready` once the queue is empty and flushed.
    fn poll_write_out(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let mut writer = self.io.borrow_mut();
        loop {
            let out = self.out.borrow();
            let pos = self.out_pos.get();
            if pos == out.len() {
                drop(out);
                let mut out = self.out.borrow_mut();
                out.clear();
                // One large message must not pin its size for the socket's life.
                if out.capacity() > KEEP_BUFFER {
                    *out = Vec::new();
                }
                self.out_pos.set(0);
                // TLS holds records back until flushed.
                return Pin::new(&mut *writer).poll_flush(cx);
            }
            match Pin::new(&mut *writer).poll_write(cx, &out[pos..]) {
                Poll::Ready(Ok(0)) => return Poll::Ready(Err(io::ErrorKind::WriteZero.into())),
                Poll::Ready(Ok(n)) => {
                    self.out_pos.set(pos + n);
                    if self.waiting.get() > 0 {
                        self.progress.notify_waiters();
                    }
                }
                Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                Poll::Pending => return Poll::Pending,
            }
        }
    }

    /// Writes the whole queue; each wait must see the peer take bytes within the send
    /// timeout, or the connection is marked broken.
    pub(crate) async fn flush(&self) -> Result<(), SendError> {
        if self.state.get() == WriteState::Broken {
            return Err(SendError);
        }
        // Most flushes end at once: then no timer is set and no waiter registered.
        match poll_fn(|cx| Poll::Ready(self.poll_write_out(cx))).await {
            Poll::Ready(Ok(())) => return Ok(()),
            Poll::Ready(Err(_)) => {
                self.state.set(WriteState::Broken);
                return Err(SendError);
            }
            Poll::Pending => {}
        }
        // The waiting part is boxed: every future that may flush (each `recv`, each
        // `send`) would otherwise carry its timer and waiter inline, idle or not.
        Box::pin(self.flush_waiting()).await
    }

    /// The rest of [`flush`](Self::flush), once the socket has not taken everything.
    async fn flush_waiting(&self) -> Result<(), SendError> {
        let _waiting = Waiting::new(&self.waiting);
        loop {
            if self.state.get() == WriteState::Broken {
                return Err(SendError);
            }
            let mut notified = pin!(self.progress.notified());
            notified.as_mut().enable();
            let step = poll_fn(|cx| match self.poll_write_out(cx) {
                Poll::Ready(r) => Poll::Ready(Some(r)),
                // Someone else wrote: look again (and restart the stall timer).
                Poll::Pending => notified.as_mut().poll(cx).map(|()| None),
            });
            match timeout(self.config.send_timeout, step).await {
                Ok(Some(Ok(()))) => return Ok(()),
                Ok(None) => {}
                Ok(Some(Err(_))) | Err(_) => {
                    self.state.set(WriteState::Broken);
                    return Err(SendError);
                }
            }
        }
    }

    /// Ends our side of the TCP stream (after the close handshake the server closes
    /// first, RFC 6455 §7.1.1), within the close timeout.
    pub(crate) async fn shutdown(&self) {
        // Boxed: it runs once, at the end, and its timer need not sit in every future.
        let _ = Box::pin(timeout(self.config.close_timeout, async {
            if self.flush().await.is_ok() {
                let _ = poll_fn(|cx| Pin::new(&mut **self.io.borrow_mut()).poll_shutdown(cx)).await;
            }
        }))
        .await;
        self.state.set(WriteState::Broken);
    }
}

/// Counts a flush as waiting for the socket while it lives (cancelled or not).
struct Waiting<'a>(&'a Cell<usize>);

impl<'a> Waiting<'a> {
    fn new(count: &'a Cell<usize>) -> Self {
        count.set(count.get() + 1);
        Waiting(count)
    }
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.set(self.0.get() - 1);
    }
}

/// The connection is closed or the peer stopped taking bytes: nothing more can be sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SendError;

impl fmt::Display for SendError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the WebSocket is closed")
    }
}

impl std::error::Error for SendError {}

/// Why [`WsSender::try_send`] handed the message back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TrySendError {
    /// The queue is over its bound: the peer reads slower than we send.
    Full(Message),
    /// The connection is closed.
    Closed(Message),
}

impl fmt::Display for TrySendError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TrySendError::Full(_) => f.write_str("the WebSocket's send queue is full"),
            TrySendError::Closed(_) => f.write_str("the WebSocket is closed"),
        }
    }
}

impl std::error::Error for TrySendError {}

/// The sending half of a WebSocket. Clones send on the same connection, in the order
/// their calls are made; it is `!Send`, like everything of one worker.
#[derive(Clone)]
pub struct WsSender {
    pub(crate) shared: Rc<Shared>,
}

impl WsSender {
    /// Sends a message: waits while the queue is over its bound, then queues the
    /// message and writes the queue out.
    pub async fn send(&self, msg: impl Into<Message>) -> Result<(), SendError> {
        let msg = msg.into();
        if self.shared.queued() > self.shared.config.max_queue {
            self.shared.flush().await?;
        }
        if self.shared.state.get() != WriteState::Open {
            return Err(SendError);
        }
        let flushed = poll_fn(|cx| Poll::Ready(self.shared.write_message(&msg, Some(cx)))).await;
        // Its bytes are out or queued: the buffer serves the next message received.
        spare::give_back(msg.into_bytes());
        if flushed { Ok(()) } else { self.shared.flush().await }
    }

    /// Queues a message without waiting, or hands it back when the queue is over its
    /// bound or the connection closed. The queue is written by the next `send` or
    /// `flush`, or by the receiver while it waits for input.
    pub fn try_send(&self, msg: impl Into<Message>) -> Result<(), TrySendError> {
        let msg = msg.into();
        if self.shared.state.get() != WriteState::Open {
            return Err(TrySendError::Closed(msg));
        }
        if self.shared.queued() > self.shared.config.max_queue {
            return Err(TrySendError::Full(msg));
        }
        self.shared.write_message(&msg, None);
        spare::give_back(msg.into_bytes());
        Ok(())
    }

    /// Writes out what is queued.
    pub async fn flush(&self) -> Result<(), SendError> {
        self.shared.flush().await
    }

    /// Sends a ping (at most 125 bytes of payload; longer is cut).
    pub async fn ping(&self, payload: &[u8]) -> Result<(), SendError> {
        if self.shared.state.get() != WriteState::Open {
            return Err(SendError);
        }
        self.shared.push_control(OpCode::Ping, &payload[..payload.len().min(frame::MAX_CONTROL_PAYLOAD)]);
        self.shared.flush().await
    }

    /// Starts the close handshake: sends a close frame with `code` and `reason`. The
    /// receiver then ends once the peer answers (or the close timeout passes).
    pub async fn close(&self, code: CloseCode, reason: &str) -> Result<(), SendError> {
        if self.shared.state.get() != WriteState::Open {
            return Err(SendError);
        }
        self.shared.push_close(Some(code), reason);
        self.shared.flush().await
    }

    /// Bytes queued and not yet taken by the peer.
    pub fn queued(&self) -> usize {
        self.shared.queued()
    }

    /// Whether the connection can still send.
    pub fn is_open(&self) -> bool {
        self.shared.state.get() == WriteState::Open
    }
}

impl fmt::Debug for WsSender {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WsSender").field("queued", &self.queued()).field("open", &self.is_open()).finish()
    }
}
