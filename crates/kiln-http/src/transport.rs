//! What the connection loop needs of the stream it serves: plain TCP, or TLS over TCP
//! (feature `tls`). The loop is generic over it, so each kind compiles to its own
//! code: plain HTTP pays for TLS neither a branch nor an indirect call.

use std::future::Future;
use std::io;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, Interest};
use tokio::net::TcpStream;
use tokio::time::timeout;

pub(crate) trait Transport: AsyncRead + AsyncWrite + Unpin + 'static {
    /// The TCP socket underneath, for socket options.
    fn tcp(&self) -> &TcpStream;

    /// Ready when a read would find input: bytes on the socket, or already decrypted.
    fn poll_read_ready(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>>;

    /// Reads what is available now without waiting (`WouldBlock` when nothing is).
    fn try_read_buf(&mut self, buf: &mut Vec<u8>) -> io::Result<usize>;

    /// Writes what the socket takes now without waiting (`WouldBlock` when nothing).
    fn try_write(&mut self, buf: &[u8]) -> io::Result<usize>;

    /// Whether bytes taken by a write still wait inside the transport (encrypted but
    /// not yet handed to the socket): they need [`send_held`](Self::send_held).
    fn has_unsent(&self) -> bool;

    /// Hands some of the held bytes to the socket, waiting until it takes at least one
    /// (or until nothing is held).
    fn send_held(&mut self) -> impl Future<Output = io::Result<()>>;

    /// The socket to `sendfile(2)` into, when the bytes go out as they lie in the file.
    fn zero_copy(&self) -> Option<&TcpStream>;

    /// `Strict-Transport-Security` value to add to each response, if any.
    fn hsts(&self) -> Option<&[u8]>;

    /// Ends the stream in an orderly way within `limit` (TLS: `close_notify`), so that
    /// the client can tell a complete close-delimited answer from a cut connection.
    fn close(&mut self, limit: Duration) -> impl Future<Output = ()>;
}

impl Transport for TcpStream {
    #[inline]
    fn tcp(&self) -> &TcpStream {
        self
    }

    #[inline]
    fn poll_read_ready(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        TcpStream::poll_read_ready(self, cx)
    }

    /// A read that returns less than it had room for has drained the socket; it is
    /// then marked not readable, as tokio's own `poll_read` does, so that the next wait
    /// parks at once instead of paying a `recv` that can only say `EAGAIN` (one system
    /// call less per request on a keep-alive connection). A wake-up seen meanwhile is
    /// not lost: tokio clears readiness only if no new event arrived since.
    #[inline]
    fn try_read_buf(&mut self, buf: &mut Vec<u8>) -> io::Result<usize> {
        let room = buf.capacity() - buf.len();
        let n = TcpStream::try_read_buf(self, buf)?;
        if n > 0 && n < room {
            let _ = self.try_io(Interest::READABLE, || Err::<(), _>(io::ErrorKind::WouldBlock.into()));
        }
        Ok(n)
    }

    #[inline]
    fn try_write(&mut self, buf: &[u8]) -> io::Result<usize> {
        TcpStream::try_write(self, buf)
    }

    #[inline]
    fn has_unsent(&self) -> bool {
        false
    }

    /// A socket's writes hold nothing back.
    async fn send_held(&mut self) -> io::Result<()> {
        Ok(())
    }

    #[inline]
    fn zero_copy(&self) -> Option<&TcpStream> {
        Some(self)
    }

    #[inline]
    fn hsts(&self) -> Option<&[u8]> {
        None
    }

    /// Closing the socket is the whole close.
    async fn close(&mut self, _limit: Duration) {}
}

/// Hands everything the transport holds to the socket. Like every send, each wait must
/// see progress within `stall`, so a slow reader is served to the end while one that
/// stopped reading is dropped; `false` when it stalled.
pub(crate) async fn send_all_held<T: Transport>(stream: &mut T, stall: Duration) -> io::Result<bool> {
    while stream.has_unsent() {
        match timeout(stall, stream.send_held()).await {
            Ok(sent) => sent?,
            Err(_) => return Ok(false),
        }
    }
    Ok(true)
}
