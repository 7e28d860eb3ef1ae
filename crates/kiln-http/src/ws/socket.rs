//! A WebSocket over an upgraded connection: both halves together, or split.

use std::rc::Rc;

use super::close::{CloseCode, CloseFrame};
use super::config::WsConfig;
use super::deflate::{DeflateParams, Deflater, Inflater};
use super::message::Message;
use super::receiver::WsReceiver;
use super::sender::{SendError, Shared, TrySendError, WsSender};
use crate::upgrade::Upgraded;

/// A server-side WebSocket (RFC 6455) on an upgraded HTTP/1.1 connection, plain or
/// TLS: frames unmasked, fragments reassembled, text checked to be UTF-8 as it
/// arrives, pings answered, a heartbeat that closes a dead peer with 1011, frame and
/// message limits (1009), permessage-deflate when negotiated, a bounded send queue
/// (see [`WsSender`] for its policy), and a close with 1001 when the server drains.
///
/// ```no_run
/// # async fn echo(mut socket: kiln_http::ws::WebSocket) {
/// while let Some(msg) = socket.recv().await {
///     if socket.send(msg).await.is_err() {
///         break;
///     }
/// }
/// # }
/// ```
pub struct WebSocket {
    tx: WsSender,
    rx: WsReceiver,
}

impl WebSocket {
    /// Speaks WebSocket on `upgraded`, after a `101` that agreed to `deflate` (or to
    /// no compression).
    pub fn new(upgraded: Upgraded, config: WsConfig, deflate: Option<DeflateParams>) -> Self {
        let (io, read_ahead) = upgraded.into_parts();
        let (read, write) = tokio::io::split(io);
        let deflater = deflate.map(|p| Deflater::new(&p, config.compression_level));
        let inflater = deflate.map(|p| Inflater::new(&p));
        let shared = Rc::new(Shared::new(write, deflater, config));
        let tx = WsSender { shared: Rc::clone(&shared) };
        let rx = WsReceiver::new(shared, read, read_ahead, inflater);
        WebSocket { tx, rx }
    }

    /// The next message; see [`WsReceiver::recv`].
    pub async fn recv(&mut self) -> Option<Message> {
        self.rx.recv().await
    }

    /// Sends a message; see [`WsSender::send`].
    pub async fn send(&self, msg: impl Into<Message>) -> Result<(), SendError> {
        self.tx.send(msg).await
    }

    /// Queues a message without waiting; see [`WsSender::try_send`].
    pub fn try_send(&self, msg: impl Into<Message>) -> Result<(), TrySendError> {
        self.tx.try_send(msg)
    }

    /// Starts the close handshake, then reads until the peer answers (or the close
    /// timeout passes), dropping any message that still arrives.
    pub async fn close(&mut self, code: CloseCode, reason: &str) {
        if self.tx.close(code, reason).await.is_ok() {
            while self.rx.recv().await.is_some() {}
        }
    }

    /// What the peer's close frame said, once it came.
    pub fn close_frame(&self) -> Option<&CloseFrame> {
        self.rx.close_frame()
    }

    /// Splits into a sender and a receiver, to send from one task (or several: the
    /// sender clones) while another receives, all on the same worker.
    pub fn split(self) -> (WsSender, WsReceiver) {
        (self.tx, self.rx)
    }
}

impl std::fmt::Debug for WebSocket {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebSocket").field("tx", &self.tx).field("rx", &self.rx).finish()
    }
}
