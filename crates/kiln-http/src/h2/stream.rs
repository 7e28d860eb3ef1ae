//! One HTTP/2 stream: its request read whole (body up to the limit), the service
//! called with the same [`Request`] view as HTTP/1.1, and its [`Response`] sent.

use std::future::poll_fn;
use std::mem;
use std::pin::pin;
use std::task::Poll;

use bytes::Bytes;
use h2::RecvStream;
use h2::server::SendResponse;
use http::{Method, StatusCode, header};
use tokio::time::{Instant, timeout_at};

use super::encode::{self, Common};
use super::send::{self, Gone, Out};
use super::shared::{Ended, Shared};
use crate::body::BodyMode;
use crate::rejection::Rejection;
use crate::request::Request;
use crate::response::{Body, Response};
use crate::service::{Service, call_caught};
use crate::worker::{Bufs, ConnBufs, Worker};

/// A body up to this size is copied out of the response buffer, which then goes back
/// to the pool with the stream's other buffers; a larger one is handed over as it is.
const COPY_BODY_MAX: usize = 16 * 1024;

const TOO_LARGE: Rejection = Rejection { status: StatusCode::PAYLOAD_TOO_LARGE, reason: "request body too large" };
const BODY_TIMEOUT: Rejection =
    Rejection { status: StatusCode::REQUEST_TIMEOUT, reason: "request body not received in time" };
const OVER_BUDGET: Rejection =
    Rejection { status: StatusCode::SERVICE_UNAVAILABLE, reason: "server busy: too much buffered, retry later" };
const NO_UPGRADE: Rejection =
    Rejection { status: StatusCode::INTERNAL_SERVER_ERROR, reason: "an interim response cannot end an HTTP/2 stream" };

/// Serves one stream to its end. The stream's buffers come from the worker's pool and
/// go back to it; the bytes its body holds count against the worker's budget.
pub(super) async fn serve<S: Service>(
    service: &S,
    shared: &Shared,
    request: http::Request<RecvStream>,
    mut respond: SendResponse<Bytes>,
) {
    let (parts, mut body) = request.into_parts();
    let mut hold = Hold { worker: &shared.worker, bufs: shared.worker.acquire(), held: 0 };
    let Hold { bufs, held, .. } = &mut hold;
    let ended = answer(service, shared, &parts, &mut body, &mut respond, bufs, held).await;
    shared.ended(ended);
}

/// A stream's buffers and its share of the worker's budget, given back however the
/// stream ends: answered, or dropped with its connection midway.
struct Hold<'a> {
    worker: &'a Worker,
    bufs: Bufs,
    held: usize,
}

impl Drop for Hold<'_> {
    fn drop(&mut self) {
        self.worker.unhold(&mut self.held);
        self.worker.release(mem::take(&mut self.bufs));
    }
}

async fn answer<S: Service>(
    service: &S,
    shared: &Shared,
    parts: &http::request::Parts,
    body: &mut RecvStream,
    respond: &mut SendResponse<Bytes>,
    bufs: &mut ConnBufs,
    held: &mut usize,
) -> Ended {
    let worker = &*shared.worker;
    let ConnBufs { read, head, chunked_body, res, .. } = bufs;
    res.clear();
    let read_whole = match super::request::build(parts, read, head, worker.limits.max_headers) {
        Ok(()) => {
            shared.meter.payload(read.len());
            let req = Request { buf: read, head, body: b"", stream: None, peer: shared.peer };
            if let Some(lines) = service.early_hints(&req) {
                // Before the body is read and the service called: the browser fetches
                // meanwhile. A failure here is the stream's end, which the rest sees.
                let _ = respond.send_informational(super::encode::early_hints(lines));
            }
            match (body.is_end_stream(), service.body_mode(&req)) {
                (false, BodyMode::Stream { max_bytes }) => Ok(Some(max_bytes)),
                _ => read_body(parts, body, chunked_body, worker, shared, held).await.map(|()| None),
            }
        }
        Err(rejection) => Err(Refused::With(rejection)),
    };
    match read_whole {
        Ok(Some(max_bytes)) => {
            let req = Request { buf: read, head, body: b"", stream: None, peer: shared.peer };
            match super::upload::answer(service, shared, parts, body, respond, req, res, max_bytes).await {
                Ok(()) => {}
                Err(super::upload::Refused::Gone) => return Ended::Reset,
                Err(super::upload::Refused::With(rejection)) => {
                    crate::rejection::error_response(res, rejection.status, rejection.reason)
                }
            }
        }
        Ok(None) => {
            let req = Request { buf: read, head, body: chunked_body, stream: None, peer: shared.peer };
            // The peer may give up on the stream while the service works: the work is
            // then dropped, so a reset costs what was done until it arrived.
            let called = {
                let mut call = pin!(call_caught(service, req, &mut *res));
                poll_fn(|cx| match call.as_mut().poll(cx) {
                    Poll::Ready(ok) => Poll::Ready(Some(ok)),
                    Poll::Pending => respond.poll_reset(cx).map(|_| None),
                })
                .await
            };
            match called {
                Some(true) => {}
                Some(false) => {
                    crate::rejection::error_response(res, StatusCode::INTERNAL_SERVER_ERROR, "internal server error")
                }
                None => return Ended::Reset,
            }
            if res.status.is_informational() {
                crate::rejection::error_response(res, NO_UPGRADE.status, NO_UPGRADE.reason);
            }
        }
        Err(Refused::Gone) => return Ended::Reset,
        Err(Refused::With(rejection)) => crate::rejection::error_response(res, rejection.status, rejection.reason),
    }
    // A large body waits for the peer's window in memory: it counts against the worker's
    // budget as HTTP/1.1's does, and beyond it the client is told to come back.
    let want = chunked_body.capacity() + res.buffer.capacity();
    if res.buffer.capacity() >= COPY_BODY_MAX && !worker.hold(held, want) {
        res.buffer = Vec::new();
        crate::rejection::error_response(res, OVER_BUDGET.status, OVER_BUDGET.reason);
    }
    if res.close {
        shared.close_after();
    }
    match respond_with(shared, respond, res, parts.method == Method::HEAD).await {
        Ok(()) => Ended::Answered,
        Err(Gone) => Ended::Reset,
    }
}

/// Why a request was not read whole.
enum Refused {
    /// The peer reset the stream, or the connection went.
    Gone,
    /// Answered with this, then the rest of the body is refused with
    /// `RST_STREAM(NO_ERROR)` (RFC 9113 §8.1) as the stream's handles drop.
    With(Rejection),
}

/// Reads the body whole into `out`, up to the body limit and within the body timeout.
/// Flow-control capacity is released as each piece is taken, so the peer's window
/// stays open for the rest: the limit, not the window, bounds what a stream may send.
async fn read_body(
    parts: &http::request::Parts,
    body: &mut RecvStream,
    out: &mut Vec<u8>,
    worker: &Worker,
    shared: &Shared,
    held: &mut usize,
) -> Result<(), Refused> {
    out.clear();
    if body.is_end_stream() {
        return Ok(());
    }
    let max = worker.limits.max_body_bytes;
    let announced = parts.headers.get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
    if announced.is_some_and(|n| n > max as u64) {
        return Err(Refused::With(TOO_LARGE));
    }
    let deadline = Instant::now() + worker.limits.body_timeout;
    loop {
        let piece = match timeout_at(deadline, body.data()).await {
            Ok(Some(Ok(piece))) => piece,
            Ok(Some(Err(_))) => return Err(Refused::Gone),
            Ok(None) => return Ok(()),
            Err(_) => return Err(Refused::With(BODY_TIMEOUT)),
        };
        let _ = body.flow_control().release_capacity(piece.len());
        if out.len() + piece.len() > max {
            return Err(Refused::With(TOO_LARGE));
        }
        // Charged before it is taken, as HTTP/1.1 does: a refused upload holds nothing.
        let want = out.capacity().max(out.len() + piece.len());
        if !worker.hold(held, want) {
            return Err(Refused::With(OVER_BUDGET));
        }
        out.extend_from_slice(&piece);
        shared.meter.payload(piece.len());
    }
}

/// Sends `res` on the stream: its head, then its body unless the request was `HEAD` or
/// the status has none (RFC 9110 §6.4.1).
async fn respond_with(
    shared: &Shared,
    respond: &mut SendResponse<Bytes>,
    res: &mut Response,
    is_head: bool,
) -> Result<(), Gone> {
    let code = res.status.as_u16();
    let bodiless_status = code == 204 || code == 304;
    let len = if bodiless_status { None } else { res.body_len() };
    let common = Common { date: shared.date(), hsts: shared.hsts.as_ref() };
    let head = encode::head(res, len, common);
    let empty = is_head || bodiless_status || len == Some(0);
    let mut stream = respond.send_response(head, empty)?;
    if empty {
        res.body = Body::Buffer;
        return Ok(());
    }
    let out = &mut Out { stream: &mut stream, meter: &shared.meter, stall: shared.worker.limits.body_timeout };
    match mem::replace(&mut res.body, Body::Buffer) {
        Body::Buffer if res.buffer.len() <= COPY_BODY_MAX => {
            send::bytes(out, Bytes::copy_from_slice(&res.buffer), true).await
        }
        Body::Buffer => send::bytes(out, Bytes::from(mem::take(&mut res.buffer)), true).await,
        Body::Static(bytes) => send::bytes(out, Bytes::from_static(bytes), true).await,
        Body::Bytes(bytes) => send::bytes(out, bytes, true).await,
        Body::File { file, offset, len } => send::file(out, &file, offset, len).await,
        Body::Stream(body) => send::stream(out, body).await,
    }
}
