//! A worker's side of the handshake: bounded in time, and a plain-HTTP client that
//! knocked on the TLS port is told so instead of getting a TLS alert it cannot read.

use std::rc::Rc;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::time::{Instant, timeout_at};
use tokio_rustls::TlsAcceptor;

use super::setup::Loaded;
use super::stream::TlsConn;

/// The first byte of every TLS handshake record (RFC 8446 §5.1, `ContentType.handshake`).
const HANDSHAKE_RECORD: u8 = 22;
/// Sent to a client that speaks plain HTTP to the TLS port, as nginx does.
const PLAIN_HTTP_REFUSED: &[u8] = b"HTTP/1.1 400 Bad Request\r\nServer: kiln\r\n\
Content-Type: text/plain; charset=utf-8\r\nContent-Length: 44\r\nConnection: close\r\n\r\n\
this port speaks HTTPS: plain HTTP was sent\n";
/// How long a refused plain-HTTP client keeps being read (and its input discarded)
/// after the answer, so that closing does not reset the answer away.
const REFUSED_LINGER: Duration = Duration::from_secs(1);
/// Most input discarded from a refused plain-HTTP client.
const REFUSED_LINGER_BYTES: usize = 64 * 1024;

/// Everything a worker needs to turn an accepted socket into a TLS connection.
pub(crate) struct Acceptor {
    acceptor: TlsAcceptor,
    hsts: Option<Rc<[u8]>>,
    timeout: Duration,
}

impl Acceptor {
    /// `timeout` bounds the whole handshake, from accept to the client's `Finished`.
    pub(crate) fn new(loaded: &Loaded, timeout: Duration) -> Self {
        let hsts = loaded.hsts.as_deref().map(Rc::from);
        Acceptor { acceptor: TlsAcceptor::from(loaded.config.clone()), hsts, timeout }
    }

    /// Runs the handshake. `None`: the client sent nothing in time, dribbled its
    /// hello past the timeout, spoke plain HTTP, or failed the handshake; the
    /// connection is then closed.
    pub(crate) async fn accept(&self, tcp: TcpStream) -> Option<TlsConn> {
        let deadline = Instant::now() + self.timeout;
        let mut first = [0u8; 1];
        match timeout_at(deadline, tcp.peek(&mut first)).await {
            Ok(Ok(1)) => {}
            _ => return None,
        }
        if first[0] != HANDSHAKE_RECORD {
            // A request line starts with a method, upper-case letters (RFC 9110 §9.1).
            if first[0].is_ascii_uppercase() {
                refuse_plain_http(tcp).await;
            }
            return None;
        }
        match timeout_at(deadline, self.acceptor.accept(tcp)).await {
            Ok(Ok(stream)) => Some(TlsConn::new(stream, self.hsts.clone())),
            _ => None,
        }
    }
}

/// Answers `400` in plain text and closes without a reset: the write side first, then
/// the client's input is read away for a bounded time.
async fn refuse_plain_http(mut tcp: TcpStream) {
    // Fits any socket buffer: one write, no waiting.
    if tcp.try_write(PLAIN_HTTP_REFUSED).is_err() || tcp.shutdown().await.is_err() {
        return;
    }
    let deadline = Instant::now() + REFUSED_LINGER;
    let mut scratch = vec![0u8; 4096];
    let mut discarded = 0;
    while discarded < REFUSED_LINGER_BYTES {
        match timeout_at(deadline, tcp.read(&mut scratch)).await {
            Ok(Ok(n)) if n > 0 => discarded += n,
            _ => return,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_http_refusal_content_length_matches_its_body() {
        let text = std::str::from_utf8(PLAIN_HTTP_REFUSED).unwrap();
        let (head, body) = text.split_once("\r\n\r\n").unwrap();
        assert!(head.contains(&format!("Content-Length: {}\r\n", body.len())), "{head}");
    }
}
