//! A TLS connection as the connection loop sees it: a [`Transport`] whose reads may
//! find bytes already decrypted, whose writes encrypt into rustls's buffer before the
//! socket, and which cannot `sendfile`.

use std::io::{self, IoSlice};
use std::pin::{Pin, pin};
use std::rc::Rc;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::net::TcpStream;
use tokio::time::timeout;
use tokio_rustls::server::TlsStream;

use crate::transport::Transport;

/// A server-side TLS stream after its handshake, with the connection's HSTS value.
pub(crate) struct TlsConn {
    inner: TlsStream<TcpStream>,
    hsts: Option<Rc<[u8]>>,
}

impl TlsConn {
    pub(crate) fn new(inner: TlsStream<TcpStream>, hsts: Option<Rc<[u8]>>) -> Self {
        TlsConn { inner, hsts }
    }

    /// Whether the client chose HTTP/2 by ALPN (RFC 7301, RFC 9113 §3.2).
    pub(crate) fn is_h2(&self) -> bool {
        self.inner.get_ref().1.alpn_protocol() == Some(b"h2")
    }
}

/// Polls `f` once without waiting: `Pending` becomes `WouldBlock`. The no-op waker
/// is harmless: whoever waits next registers the task's own waker on the socket.
fn once<T>(f: impl Future<Output = io::Result<T>>) -> io::Result<T> {
    match pin!(f).poll(&mut Context::from_waker(Waker::noop())) {
        Poll::Ready(result) => result,
        Poll::Pending => Err(io::ErrorKind::WouldBlock.into()),
    }
}

impl Transport for TlsConn {
    fn tcp(&self) -> &TcpStream {
        self.inner.get_ref().0
    }

    fn poll_read_ready(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        // rustls stops wanting input while it holds decrypted bytes not yet read (a
        // record can hold more than one read takes) or after `close_notify`: a read
        // then finds something without the socket turning readable.
        if !self.inner.get_ref().1.wants_read() {
            return Poll::Ready(Ok(()));
        }
        self.tcp().poll_read_ready(cx)
    }

    fn try_read_buf(&mut self, buf: &mut Vec<u8>) -> io::Result<usize> {
        once(self.inner.read_buf(buf))
    }

    fn try_write(&mut self, buf: &[u8]) -> io::Result<usize> {
        once(self.inner.write(buf))
    }

    fn has_unsent(&self) -> bool {
        self.inner.get_ref().1.wants_write()
    }

    async fn send_held(&mut self) -> io::Result<()> {
        std::future::poll_fn(|cx| {
            let (tcp, conn) = self.inner.get_mut();
            loop {
                if !conn.wants_write() {
                    return Poll::Ready(Ok(()));
                }
                match conn.write_tls(&mut SocketWriter(tcp)) {
                    Ok(0) => return Poll::Ready(Err(io::ErrorKind::WriteZero.into())),
                    Ok(_) => return Poll::Ready(Ok(())),
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                        // Registers the task; the socket cleared its readiness on the
                        // `WouldBlock`, so this waits for room.
                        std::task::ready!(tcp.poll_write_ready(cx))?;
                    }
                    Err(e) => return Poll::Ready(Err(e)),
                }
            }
        })
        .await
    }

    fn zero_copy(&self) -> Option<&TcpStream> {
        None
    }

    fn hsts(&self) -> Option<&[u8]> {
        self.hsts.as_deref()
    }

    async fn close(&mut self, limit: Duration) {
        let _ = timeout(limit, self.inner.shutdown()).await;
    }
}

/// rustls writes its records through `std::io::Write`; the socket is non-blocking.
struct SocketWriter<'a>(&'a TcpStream);

impl io::Write for SocketWriter<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.try_write(buf)
    }

    fn write_vectored(&mut self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
        self.0.try_write_vectored(bufs)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl AsyncRead for TlsConn {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl AsyncWrite for TlsConn {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}
