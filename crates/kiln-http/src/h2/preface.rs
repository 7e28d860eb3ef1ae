//! Which protocol a plain connection speaks. HTTP/2 with prior knowledge opens with the
//! connection preface (RFC 9113 §3.4), which no HTTP/1 request line can begin with;
//! anything else is HTTP/1, except a first line that has no HTTP version at all: that
//! is no HTTP/1 request either, and is refused as an invalid preface (§3.4: the
//! connection closed without a word, as h2spec expects).
//! The bytes are peeked, not read, so whichever engine takes the connection reads it
//! from its first byte.

use std::future::poll_fn;
use std::pin::Pin;
use std::task::Poll;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt, ReadBuf};
use tokio::net::TcpStream;
use tokio::time::{Instant, Sleep, sleep, sleep_until, timeout_at};

use crate::worker::Worker;

/// The client connection preface (RFC 9113 §3.4).
pub(crate) const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
/// How long a refused connection's input is read away before it is closed.
const REFUSED_LINGER: Duration = Duration::from_secs(1);
/// Most input read away from a refused connection.
const REFUSED_LINGER_BYTES: usize = 64 * 1024;
/// Bytes looked at: the preface, or a short request line whole.
const LOOK: usize = 64;
/// How long a peer whose first bytes could still become the preface is waited for
/// between looks: only a client that splits the preface ever waits.
const PREFIX_POLL: Duration = Duration::from_millis(5);
/// How long a connection that has sent nothing yet is waited for once shutdown begins:
/// HTTP/1.1's last call for an idle connection (`h1::conn`), the same length.
const SHUTDOWN_FIRST_BYTES_WAIT: Duration = Duration::from_secs(1);

/// What a plain connection turned out to speak.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Wire {
    Http1,
    Http2,
    /// Neither: a first line without an HTTP version ([`refuse`] it).
    Neither,
    /// The peer closed, or sent nothing within the idle timeout.
    Closed,
}

/// Waits for a plain connection's first bytes and tells its protocol.
///
/// A connection that sends nothing waits as an idle HTTP/1.1 one does: parked in its
/// `slot`, so that shutdown wakes it, and closed after the idle timeout; once shutdown
/// begins it gets a last call as HTTP/1.1 gives one, [`SHUTDOWN_FIRST_BYTES_WAIT`], and
/// first bytes that arrive within it go to the engine they are meant for. (Handing it to
/// HTTP/1.1 at once answered a preface that came in the last call with an HTTP/1.1
/// error, which an h2c client reads as a broken frame: a request lost in a hand-over.)
pub(crate) async fn sniff(stream: &TcpStream, worker: &Worker, slot: usize) -> Wire {
    let mut deadline = worker.coarse_now() + worker.limits.idle_timeout;
    // Made only if the first look finds nothing: most clients send at once.
    let mut timer: Option<Pin<Box<Sleep>>> = None;
    let mut seen = [0u8; LOOK];
    let mut last_call = false;
    loop {
        if worker.shutting_down.get() && !last_call {
            last_call = true;
            deadline = deadline.min(Instant::now() + SHUTDOWN_FIRST_BYTES_WAIT);
            if let Some(timer) = &mut timer {
                timer.as_mut().reset(deadline);
            }
        }
        let peeked = poll_fn(|cx| {
            let mut buf = ReadBuf::new(&mut seen);
            match stream.poll_peek(cx, &mut buf) {
                Poll::Ready(Ok(n)) => Poll::Ready(Some(n)),
                Poll::Ready(Err(_)) => Poll::Ready(Some(0)),
                Poll::Pending if worker.shutting_down.get() && !last_call => Poll::Ready(None),
                Poll::Pending => {
                    worker.park(slot, cx.waker());
                    let timer = timer.get_or_insert_with(|| Box::pin(sleep_until(deadline)));
                    timer.as_mut().poll(cx).map(|()| Some(0))
                }
            }
        })
        .await;
        let n = match peeked {
            None => continue,
            Some(0) => return Wire::Closed,
            Some(n) => n,
        };
        match classify(&seen[..n]) {
            Some(wire) => return wire,
            None if Instant::now() >= deadline => return Wire::Closed,
            None => sleep(PREFIX_POLL).await,
        }
    }
}

/// Closes a connection that speaks neither protocol without a reset: the write side
/// first, then its input read away for a bounded time (closing with input unread
/// would reset the connection).
pub(crate) async fn refuse(mut stream: TcpStream) {
    if stream.shutdown().await.is_err() {
        return;
    }
    let deadline = Instant::now() + REFUSED_LINGER;
    let mut scratch = vec![0u8; 4096];
    let mut discarded = 0;
    while discarded < REFUSED_LINGER_BYTES {
        match timeout_at(deadline, stream.read(&mut scratch)).await {
            Ok(Ok(n)) if n > 0 => discarded += n,
            _ => return,
        }
    }
}

/// `None` while the bytes seen are a proper prefix of the preface.
fn classify(seen: &[u8]) -> Option<Wire> {
    let n = seen.len().min(PREFACE.len());
    if seen[..n] != PREFACE[..n] {
        Some(if lacks_version(seen) { Wire::Neither } else { Wire::Http1 })
    } else if n == PREFACE.len() {
        Some(Wire::Http2)
    } else {
        None
    }
}

/// Whether `seen` holds a whole first line whose last word has no `/`, so no
/// `HTTP/x.y` (RFC 9112 §3), and whose second word is no origin-form target either
/// (§3.2.1): not an HTTP/1 request, malformed or not. `GET / ` (the version left out)
/// is a malformed HTTP/1 request, and gets its `400`.
fn lacks_version(seen: &[u8]) -> bool {
    // RFC 9112 §2.2: empty lines before the request line are ignored, so they are no
    // first line of their own (an HTTP/1 client may send one after a POST's body).
    let start = seen.iter().position(|&b| b != b'\r' && b != b'\n').unwrap_or(seen.len());
    let seen = &seen[start..];
    let Some(end) = seen.iter().position(|&b| b == b'\n') else { return false };
    let line = seen[..end].strip_suffix(b"\r").unwrap_or(&seen[..end]);
    let last = line.rsplit(|&b| b == b' ').next().unwrap_or(line);
    let target = line.split(|&b| b == b' ').nth(1).unwrap_or_default();
    !last.contains(&b'/') && !target.starts_with(b"/")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_preface_is_told_from_http1_and_a_part_of_it_waits() {
        assert_eq!(classify(PREFACE), Some(Wire::Http2));
        assert_eq!(classify(b"GET / HTTP/1.1\r\n"), Some(Wire::Http1));
        // A method that shares the preface's first letters is HTTP/1 once it differs.
        assert_eq!(classify(b"PRIX"), Some(Wire::Http1));
        assert_eq!(classify(b"PRI * HTTP/1.1\r\n"), Some(Wire::Http1));
        assert_eq!(classify(b"PRI * HTTP/2.0\r\n"), None);
        assert_eq!(classify(b"P"), None);
        // Malformed HTTP/1 stays HTTP/1's to refuse; a line with no version is not HTTP/1.
        assert_eq!(classify(b"GET / HTTX/1.1\r\n"), Some(Wire::Http1));
        assert_eq!(classify(b"GET /\r\n"), Some(Wire::Http1));
        assert_eq!(classify(b"GET / HTTP/1.1"), Some(Wire::Http1));
        assert_eq!(classify(b"INVALID CONNECTION PREFACE\r\n\r\n"), Some(Wire::Neither));
    }

    #[test]
    fn a_request_line_without_a_version_is_http1_s_to_refuse_with_400() {
        // Issue 33.14: `GET / \r\n\r\n` was taken for an invalid preface and closed
        // without a word; its target is an HTTP/1 one.
        assert_eq!(classify(b"GET / \r\n\r\n"), Some(Wire::Http1));
        assert_eq!(classify(b"GET /a?b \r\n"), Some(Wire::Http1));
        assert_eq!(classify(b"GET\r\n"), Some(Wire::Neither));
    }

    #[test]
    fn empty_lines_before_a_request_line_are_http1_not_an_invalid_preface() {
        // Merging HTTP/2 into the HEAD-refusal fix of issue 25: `\r\nHEAD /x HTTP/1.Q`
        // was closed without its 400, the empty line taken for a first line.
        assert_eq!(classify(b"\r\nHEAD /x HTTP/1.Q\r\n"), Some(Wire::Http1));
        assert_eq!(classify(b"\r\n\r\nGET / HTTP/1.1\r\n"), Some(Wire::Http1));
        assert_eq!(classify(b"\nGET / HTTP/1.1\r\n"), Some(Wire::Http1));
        assert_eq!(classify(b"\r\nNOT A REQUEST\r\n"), Some(Wire::Neither));
    }
}
