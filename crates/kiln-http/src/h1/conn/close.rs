//! The end of a connection: a refused request answered and the input drained, a
//! closing connection's linger, and an upgraded one handed to its protocol.

use std::mem;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::time::{Instant, timeout_at};

use http::StatusCode;

use super::{Conn, Flow};
use crate::body::BodyLimit;
use crate::h1::encode;
use crate::head::Version;
use crate::rejection::{Rejection, error_response};
use crate::request::Request;
use crate::service::Service;
use crate::transport::Transport;
use crate::upgrade::{OnUpgrade, Upgraded};
use crate::worker::{Bufs, ConnBufs};

/// How long a refused connection keeps draining the client's input before closing.
const LINGER_TIME: Duration = Duration::from_secs(2);
/// Most input drained from a refused connection before closing anyway.
const LINGER_BYTES: usize = 256 * 1024;

/// The upgrade callback of a `101` that went out, if the connection ended on one.
fn upgrade_sent(bufs: &mut Bufs, finished: bool) -> Option<OnUpgrade> {
    if finished && bufs.is_allocated() { bufs.res.upgrade.take() } else { None }
}

impl<T: Transport> Conn<T> {
    /// Ends the connection: hands an upgraded one to its protocol, else gives the
    /// buffers back and closes (lingering when the last answer said close).
    pub(super) async fn finish(mut self, finished: bool) {
        // `write_response` leaves the callback in the response only once it has sent a
        // `101`; the flush after it succeeded, so the client has the head.
        if let Some(on_upgrade) = upgrade_sent(&mut self.bufs, finished) {
            let read_ahead = self.bufs.read[self.start..].to_vec();
            self.worker.unhold(&mut self.held);
            self.worker.release(mem::take(&mut self.bufs));
            let Conn { stream, worker, slot, .. } = self;
            // The upgraded connection goes on in a task of its own, sized for it alone:
            // this one's future is sized for HTTP's largest state, which a WebSocket held
            // open for hours would otherwise carry (issue 23: an idle WebSocket costs no
            // more than about 2 KiB). It keeps the connection's slot, so it still counts
            // against the worker's limit and shutdown waits for it.
            tokio::task::spawn_local(async move {
                crate::upgrade::run(on_upgrade, Upgraded::new(Box::new(stream), read_ahead)).await;
                worker.close_connection(slot);
            });
            return;
        }
        self.worker.unhold(&mut self.held);
        if self.bufs.is_allocated() {
            self.worker.release(mem::take(&mut self.bufs));
        }
        if finished && self.worker.shutting_down.get() {
            // The last answer said `Connection: close`; closing with input unread would
            // reset the connection and could destroy that answer before it is read.
            self.linger().await;
        } else if finished {
            self.stream.close(LINGER_TIME).await;
        }
        self.worker.close_connection(self.slot);
    }

    /// Answers a refused request and ends the connection: whatever follows a bad head
    /// (a smuggled request, say) is never read.
    pub(super) async fn refuse(&mut self, rejection: Rejection) -> Flow<bool> {
        error_response(&mut self.bufs.res, rejection.status, rejection.reason);
        self.send_refusal().await
    }

    /// Refuses a request whose head was read, for its body, as [`refuse`](Self::refuse)
    /// does: a body over its limit gets the `413` that names `limit` and how a route
    /// raises it, and the log says the same. The service may then render the refusal its
    /// own way ([`Service::refused`]): it knows the request's path.
    pub(super) async fn refuse_body<S: Service>(
        &mut self,
        service: &S,
        rejection: Rejection,
        limit: BodyLimit,
    ) -> Flow<bool> {
        if rejection.status == StatusCode::PAYLOAD_TOO_LARGE {
            limit.render(&mut self.bufs.res);
            tracing::info!(target: "kiln::http", peer = %self.peer, "413 to {}: {limit}", self.request_line());
        } else {
            error_response(&mut self.bufs.res, rejection.status, rejection.reason);
        }
        let ConnBufs { read, head, res, .. } = &mut *self.bufs;
        let req = Request { buf: &read[self.start..], head, body: b"", stream: None, peer: self.peer };
        service.refused(&req, res);
        self.send_refusal().await
    }

    /// The method and target of the request at `start`, for the log.
    fn request_line(&self) -> String {
        let request = &self.bufs.read[self.start..];
        let line = request.split(|&b| b == b'\r' || b == b'\n').find(|line| !line.is_empty()).unwrap_or_default();
        // Without the version.
        let line = line.iter().rposition(|&b| b == b' ').map_or(line, |end| &line[..end]);
        String::from_utf8_lossy(&line[..line.len().min(200)]).into_owned()
    }

    /// Sends the refusal `res` holds and ends the connection.
    async fn send_refusal(&mut self) -> Flow<bool> {
        let version = self.bufs.head.version.unwrap_or(Version::Http11);
        let delimit = encode::delimit(&self.bufs.res, version);
        let date = self.worker.date();
        let bufs = &mut *self.bufs;
        encode::encode_head(&mut bufs.write, &bufs.res, &date, delimit, false, version);
        // RFC 9110 §9.3.2: the answer to `HEAD` has no body, refused or not. The
        // empty lines a client may send before the request line (RFC 9112 §2.2) are
        // skipped here as the parser skips them.
        let request = &bufs.read[self.start..];
        let line = request.iter().position(|&b| b != b'\r' && b != b'\n').unwrap_or(request.len());
        if !request[line..].starts_with(b"HEAD ") {
            bufs.write.extend_from_slice(&bufs.res.buffer);
        }
        self.flush().await?;
        // Nothing more is read or answered: the buffers and the budget go back now,
        // not after the linger.
        self.worker.unhold(&mut self.held);
        self.worker.release(mem::take(&mut self.bufs));
        self.linger().await;
        Ok(false)
    }

    /// Closes the write side, then reads and discards what the client still sends for
    /// a bounded time. Closing a socket with unread input makes the kernel send a reset,
    /// which can destroy the answer before the client reads it (RFC 9112 §9.6).
    pub(super) async fn linger(&mut self) {
        let deadline = Instant::now() + LINGER_TIME;
        // Bounded: over TLS, shutting down first sends `close_notify`, a write that a
        // client which stopped reading could hold up.
        if !matches!(timeout_at(deadline, self.stream.shutdown()).await, Ok(Ok(()))) {
            return;
        }
        // On the heap: an array here would be held across the awaits below and so
        // enlarge every connection's task, idle or not, by its size.
        let mut scratch = vec![0u8; 4096];
        let mut discarded = 0;
        while discarded < LINGER_BYTES {
            match timeout_at(deadline, self.stream.read(&mut scratch)).await {
                Ok(Ok(n)) if n > 0 => discarded += n,
                _ => return,
            }
        }
    }
}
