//! A request whose body the service streams ([`BodyMode::Stream`]): the service is
//! called at once, and the connection reads the body from the socket only while the
//! handler waits for more, one buffer at a time, inside this connection's task.
//!
//! [`BodyMode::Stream`]: crate::BodyMode::Stream

use std::future::poll_fn;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::pin;
use std::task::Poll;
use std::time::Duration;

use http::StatusCode;
use tokio::io::AsyncReadExt;
use tokio::time::timeout;

use super::write::write_two;
use super::{Conn, Flow, Stop};
use crate::body::{BodyError, BodyLimit, End, IncomingBody};
use crate::h1::chunked::ChunkedDecoder;
use crate::h1::parse::{self, Framing, Parsed};
use crate::rejection::{Rejection, error_response};
use crate::request::Request;
use crate::service::Service;
use crate::transport::Transport;
use crate::worker::ConnBufs;

/// The most raw body bytes one read takes, and so what a stalled upload holds besides
/// the buffer with its head.
const STREAM_BUFFER: usize = 64 * 1024;
/// The most of a body a handler left unread that is read and dropped so that the
/// connection can carry the next request; beyond it the connection closes instead.
const DISCARD_MAX: u64 = 256 * 1024;

/// The body's framing on the wire and the raw bytes read but not yet decoded.
struct Wire {
    framing: Framing,
    /// Bytes of a `Content-Length` body still to come.
    remaining: u64,
    decoder: ChunkedDecoder,
    raw: Vec<u8>,
    decoded: Vec<u8>,
    /// `Expect: 100-continue` and the `100` not sent yet: it goes out when the handler
    /// first asks for the body (RFC 9110 §10.1.1), so one that refuses the request
    /// first spares the client the upload.
    continue_pending: bool,
}

impl Wire {
    /// Hands the body bytes in `raw` to `body`; what follows the body stays in `raw`.
    fn decode(&mut self, body: &IncomingBody) {
        match self.framing {
            Framing::Empty => body.finish(End::Complete),
            Framing::Length(_) => {
                let n = self.remaining.min(self.raw.len() as u64) as usize;
                body.push(&self.raw[..n]);
                self.raw.drain(..n);
                self.remaining -= n as u64;
                if self.remaining == 0 {
                    body.finish(End::Complete);
                }
            }
            Framing::Chunked => {
                let room = usize::try_from(body.room()).unwrap_or(usize::MAX);
                match self.decoder.decode(&self.raw, &mut self.decoded, room) {
                    Ok(used) => {
                        self.raw.drain(..used);
                        body.push(&self.decoded);
                        self.decoded.clear();
                        if self.decoder.is_done() {
                            body.finish(End::Complete);
                        }
                    }
                    Err(r) if r.status == StatusCode::PAYLOAD_TOO_LARGE => {
                        body.finish(End::Failed(BodyError::TooLarge))
                    }
                    Err(_) => body.finish(End::Failed(BodyError::Malformed)),
                }
            }
        }
    }

    /// Gives the handler more of the body: what is buffered, else one read from the
    /// socket. Each wait is bounded by `stall`, so the body timeout counts time
    /// without progress; when it passes the body fails as timed out (`408`).
    async fn feed<T: Transport>(&mut self, stream: &mut T, write: &mut Vec<u8>, body: &IncomingBody, stall: Duration) {
        if self.continue_pending {
            self.continue_pending = false;
            write.extend_from_slice(b"HTTP/1.1 100 Continue\r\n\r\n");
        }
        if !write.is_empty() {
            // Answers to earlier pipelined requests (or the `100`) go before the wait.
            let sent = write_two(stream, write, &[], stall).await;
            write.clear();
            if sent.is_err() {
                return body.finish(End::Failed(BodyError::Closed));
            }
        }
        loop {
            if !self.raw.is_empty() {
                let before = body.received();
                self.decode(body);
                if body.received() > before || body.end() != End::Open {
                    return;
                }
            }
            self.raw.reserve(STREAM_BUFFER.saturating_sub(self.raw.len()));
            match timeout(stall, stream.read_buf(&mut self.raw)).await {
                Err(_) => return body.finish(End::Failed(BodyError::TimedOut)),
                Ok(Ok(0) | Err(_)) => return body.finish(End::Failed(BodyError::Closed)),
                Ok(Ok(_)) => {}
            }
        }
    }
}

impl<T: Transport> Conn<T> {
    /// Serves a request whose body the service streams, up to `max_bytes`. Returns
    /// whether the connection stays open.
    pub(super) async fn serve_streamed<S: Service>(
        &mut self,
        service: &S,
        parsed: &Parsed,
        max_bytes: u64,
    ) -> Flow<bool> {
        if let Err(rejection) = parse::check_body_len(parsed, max_bytes) {
            return self.refuse_body(service, rejection, BodyLimit::Streamed(max_bytes)).await;
        }
        let content_length = match parsed.framing {
            Framing::Length(n) => Some(n),
            _ => None,
        };
        let body = IncomingBody::new(max_bytes, content_length);
        let at = self.start + parsed.len;
        let mut wire = Wire {
            framing: parsed.framing,
            remaining: content_length.unwrap_or(0),
            decoder: ChunkedDecoder::new(),
            raw: Vec::with_capacity(STREAM_BUFFER),
            decoded: Vec::new(),
            continue_pending: parsed.expect_continue,
        };
        // What arrived with the head: the body's first bytes, maybe more after it.
        wire.raw.extend_from_slice(&self.bufs.read[at..]);
        self.bufs.read.truncate(at);
        let want = self.bufs.read.capacity() + wire.raw.capacity() + self.bufs.res.buffer.capacity();
        if !self.worker.hold(&mut self.held, want) {
            return self.refuse(super::OVER_BUDGET).await;
        }
        let ok = self.call_streaming(service, &body, &mut wire).await;
        match body.end() {
            // The client went: nobody to answer.
            End::Failed(BodyError::Closed) => return Err(Stop::Done),
            // The engine answers a body it could not read, whatever the service made of it.
            End::Failed(e) => {
                let rejection = Rejection { status: e.status(), reason: e.reason() };
                return self.refuse_body(service, rejection, BodyLimit::Streamed(max_bytes)).await;
            }
            End::Open | End::Complete => {}
        }
        // A handler that stopped before the end: read a small remainder away so the
        // connection stays in step, else close after the answer.
        let mut discarded = 0;
        while body.end() == End::Open && !wire.continue_pending && discarded <= DISCARD_MAX {
            let (stream, write) = (&mut self.stream, &mut self.bufs.write);
            wire.feed(stream, write, &body, self.worker.limits.body_timeout).await;
            discarded += body.discard() as u64;
        }
        let in_step = body.end() == End::Complete;
        let res = &mut self.bufs.res;
        if !ok {
            error_response(res, StatusCode::INTERNAL_SERVER_ERROR, "internal server error");
        }
        if let Some(hsts) = self.stream.hsts() {
            if !res.has_header("strict-transport-security") {
                res.append_header_unchecked(b"strict-transport-security", hsts);
            }
        }
        let close = res.close;
        // Bytes read past the body's end belong to the next request.
        self.bufs.read.extend_from_slice(&wire.raw);
        self.start += parsed.len;
        self.served += 1;
        let keep_alive = in_step
            && parsed.keep_alive
            && !close
            && !self.worker.shutting_down.get()
            && self.served < self.worker.limits.max_requests_per_connection;
        let keep_alive = self.write_response(parsed, keep_alive).await?;
        self.give_back();
        if !in_step {
            // A streamed answer goes out here, before the linger, not from its own task.
            if let Some(streaming) = self.streaming.take() {
                self.send_stream(streaming.body, streaming.chunked).await?;
            }
            // Unread input at close would make the kernel reset the connection, which
            // can destroy the answer before the client reads it.
            self.flush().await?;
            self.linger().await;
        }
        Ok(keep_alive)
    }

    /// Calls the service with the body as a stream, feeding the stream whenever the
    /// handler waits for it; `false` when the service panicked.
    async fn call_streaming<S: Service>(&mut self, service: &S, body: &IncomingBody, wire: &mut Wire) -> bool {
        let start = self.start;
        let stall = self.worker.limits.body_timeout;
        let Conn { stream, bufs, peer, .. } = self;
        let ConnBufs { read, head, res, write, .. } = &mut **bufs;
        let req = Request { buf: &read[start..], head, body: b"", stream: Some(body), peer: *peer };
        res.clear();
        let begin = move || {
            let res = res;
            service.call(req, res)
        };
        let Ok(call) = catch_unwind(AssertUnwindSafe(begin)) else { return false };
        let mut call = pin!(call);
        loop {
            let step = poll_fn(|cx| match catch_unwind(AssertUnwindSafe(|| call.as_mut().poll(cx))) {
                Ok(Poll::Ready(())) => Poll::Ready(Some(true)),
                Err(_) => Poll::Ready(Some(false)),
                Ok(Poll::Pending) if body.wanted() => Poll::Ready(None),
                Ok(Poll::Pending) => Poll::Pending,
            })
            .await;
            match step {
                Some(ok) => return ok,
                None => wire.feed(stream, write, body, stall).await,
            }
        }
    }
}
