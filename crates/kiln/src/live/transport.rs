//! The seam between a live view's loop (`socket.rs`) and what carries its page's
//! messages: a WebSocket (here), or an event stream with events posted back (`sse.rs`).
//! The loop sees an [`Outbox`] it queues messages on, whose unsent bytes it reads to
//! coalesce, and an [`Inbox`] of what the page sent; the limits, the coalescing and
//! the panics are the loop's, the same over either.

use crate::ws::{CloseCode, Message, TrySendError, WsReceiver, WsSender};

/// What the page sent.
pub(crate) enum FromPage {
    /// An event, as JSON text.
    Text(String),
    /// Something that is no event (a binary message).
    Other,
    /// An event over the view's `max_event_bytes`, refused before it was read whole:
    /// the transport ends (1009).
    TooLarge,
}

/// Why a message was not queued.
pub(crate) enum Unsent {
    /// The queue is over its bound: the page reads slower than the view changes.
    Full(String),
    /// The page has gone.
    Closed,
}

/// Where the view's messages to its page go, in order.
pub(crate) trait Outbox {
    /// Bytes queued and not yet taken by the connection.
    fn queued(&self) -> usize;
    /// Queues `text` at once, unless the queue is full or the page gone.
    fn try_send(&self, text: String) -> Result<(), Unsent>;
    /// Queues `text`, waiting for room; false once the page has gone.
    async fn send(&self, text: String) -> bool;
    /// Waits until the queue is taken; false once the page has gone.
    async fn flush(&self) -> bool;
    /// Ends the page's connection, saying why.
    async fn close(&self, code: CloseCode, reason: &str) -> bool;
}

/// What the page sends the view.
pub(crate) trait Inbox {
    /// The next message; `None` once the page has gone.
    async fn recv(&mut self) -> Option<FromPage>;
    /// After a close: reads what the page still sends until it goes (a WebSocket's
    /// close handshake runs while its receiver reads, RFC 6455 §7.1.2).
    async fn finish(&mut self);
}

impl Outbox for WsSender {
    fn queued(&self) -> usize {
        WsSender::queued(self)
    }

    fn try_send(&self, text: String) -> Result<(), Unsent> {
        match WsSender::try_send(self, text) {
            Ok(()) => Ok(()),
            Err(TrySendError::Full(Message::Text(text))) => Err(Unsent::Full(text)),
            Err(_) => Err(Unsent::Closed),
        }
    }

    async fn send(&self, text: String) -> bool {
        WsSender::send(self, text).await.is_ok()
    }

    async fn flush(&self) -> bool {
        WsSender::flush(self).await.is_ok()
    }

    async fn close(&self, code: CloseCode, reason: &str) -> bool {
        WsSender::close(self, code, reason).await.is_ok()
    }
}

impl Inbox for WsReceiver {
    async fn recv(&mut self) -> Option<FromPage> {
        // A message over the socket's limit closes it with 1009 in the engine: `recv`
        // ends then.
        Some(match WsReceiver::recv(self).await? {
            Message::Text(text) => FromPage::Text(text),
            Message::Binary(_) => FromPage::Other,
        })
    }

    async fn finish(&mut self) {
        while WsReceiver::recv(self).await.is_some() {}
    }
}
