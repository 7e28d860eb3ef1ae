//! HTTP/1.1 upgrades (RFC 9110 §7.8): after a `101 Switching Protocols` the connection
//! speaks another protocol, and the service that asked for it takes the transport. Over
//! HTTP/2 an extended CONNECT answered `2xx` (RFC 8441) does the same with its stream,
//! which the callback gets as its transport.
//!
//! The engine writes the 101 head, flushes it, and then awaits the service's callback
//! inside the connection's own task: an upgraded connection still counts against the
//! worker's connection limit, and shutdown waits for it like for any other.

use std::future::{Future, poll_fn};
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::task::Poll;

use tokio::io::{AsyncRead, AsyncWrite};

/// What a service gives [`Response::set_upgrade`](crate::Response::set_upgrade): called
/// with the connection once the `101` head has been sent.
pub type OnUpgrade = Box<dyn FnOnce(Upgraded) -> Pin<Box<dyn Future<Output = ()>>>>;

/// A byte stream both ways, plain TCP or TLS alike.
pub trait UpgradedIo: AsyncRead + AsyncWrite + Unpin {}

impl<T: AsyncRead + AsyncWrite + Unpin> UpgradedIo for T {}

/// A connection after `101 Switching Protocols`: the transport (plain TCP or TLS,
/// boxed) and the bytes the client sent after the request head that the engine had
/// already read (a client may send its first frames without waiting for the 101).
pub struct Upgraded {
    io: Box<dyn UpgradedIo>,
    read_ahead: Vec<u8>,
}

impl Upgraded {
    /// Wraps a transport and the bytes already read from it; the engine makes these,
    /// and so may a test.
    pub fn new(io: Box<dyn UpgradedIo>, read_ahead: Vec<u8>) -> Self {
        Upgraded { io, read_ahead }
    }

    /// The bytes already read past the request head: they come before anything
    /// read from [`io`](Self::io).
    pub fn read_ahead(&self) -> &[u8] {
        &self.read_ahead
    }

    /// The transport.
    pub fn io(&mut self) -> &mut (dyn UpgradedIo + 'static) {
        &mut *self.io
    }

    /// The transport and the bytes already read from it, to be read first.
    pub fn into_parts(self) -> (Box<dyn UpgradedIo>, Vec<u8>) {
        (self.io, self.read_ahead)
    }
}

impl std::fmt::Debug for Upgraded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Upgraded").field("read_ahead", &self.read_ahead.len()).finish_non_exhaustive()
    }
}

/// Runs the service's callback to its end. A panic in it ends this connection only,
/// as a panicking handler costs only its request: the task must live on to count the
/// connection out.
pub(crate) async fn run(on_upgrade: OnUpgrade, upgraded: Upgraded) {
    let Ok(mut fut) = std::panic::catch_unwind(AssertUnwindSafe(move || on_upgrade(upgraded))) else {
        return;
    };
    poll_fn(|cx| match std::panic::catch_unwind(AssertUnwindSafe(|| fut.as_mut().poll(cx))) {
        Ok(Poll::Pending) => Poll::Pending,
        Ok(Poll::Ready(())) | Err(_) => Poll::Ready(()),
    })
    .await
}
