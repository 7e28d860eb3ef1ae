//! A stream whose body the service streams ([`BodyMode::Stream`]): the service is
//! called at once, and the stream's DATA frames are taken from the `h2` crate only
//! while the handler waits for more, their flow-control capacity released as each is
//! handed over, so the peer's window (not the body) bounds what a stalled upload holds.
//!
//! [`BodyMode::Stream`]: crate::BodyMode::Stream

use std::future::poll_fn;
use std::pin::pin;
use std::task::Poll;
use std::time::Duration;

use bytes::Bytes;
use h2::RecvStream;
use h2::server::SendResponse;
use http::{StatusCode, header};
use tokio::time::timeout;

use super::shared::Shared;
use crate::body::{BodyError, End, IncomingBody};
use crate::rejection::{Rejection, error_response};
use crate::request::Request;
use crate::response::Response;
use crate::service::{Service, call_caught};

/// Why a streamed request was not answered as the service said.
pub(super) enum Refused {
    /// The peer reset the stream, or the connection went.
    Gone,
    /// The engine answers with this instead (a body over its limit, or stalled).
    With(Rejection),
}

/// What the wait on the service ended with.
enum Step {
    Done(bool),
    Feed,
    Reset,
}

/// Calls the service with the body as a stream up to `max_bytes`, feeding it as the
/// handler asks. A body the engine could not read is answered by the engine (`413`,
/// `408`), whatever the service made of it; a handler that stops early leaves the
/// rest refused with `RST_STREAM(NO_ERROR)` once the answer is sent (RFC 9113 §8.1).
#[allow(clippy::too_many_arguments)]
pub(super) async fn answer<S: Service>(
    service: &S,
    shared: &Shared,
    parts: &http::request::Parts,
    body: &mut RecvStream,
    respond: &mut SendResponse<Bytes>,
    req: Request<'_>,
    res: &mut Response,
    max_bytes: u64,
) -> Result<(), Refused> {
    const TOO_LARGE: Rejection = Rejection { status: StatusCode::PAYLOAD_TOO_LARGE, reason: "request body too large" };
    let announced = parts.headers.get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
    if announced.is_some_and(|n| n > max_bytes) {
        return Err(Refused::With(TOO_LARGE));
    }
    let incoming = IncomingBody::new(max_bytes, announced);
    let req = Request { stream: Some(&incoming), ..req };
    let stall = shared.worker.limits.body_timeout;
    let ok = {
        let mut call = pin!(call_caught(service, req, &mut *res));
        loop {
            let step = poll_fn(|cx| match call.as_mut().poll(cx) {
                Poll::Ready(ok) => Poll::Ready(Step::Done(ok)),
                Poll::Pending if incoming.wanted() => Poll::Ready(Step::Feed),
                Poll::Pending => respond.poll_reset(cx).map(|_| Step::Reset),
            })
            .await;
            match step {
                Step::Done(ok) => break ok,
                Step::Reset => return Err(Refused::Gone),
                Step::Feed => feed(body, &incoming, shared, stall).await,
            }
        }
    };
    match incoming.end() {
        End::Failed(BodyError::Closed) => Err(Refused::Gone),
        End::Failed(e) => Err(Refused::With(Rejection { status: e.status(), reason: e.reason() })),
        End::Open | End::Complete => {
            if !ok {
                error_response(res, StatusCode::INTERNAL_SERVER_ERROR, "internal server error");
            }
            Ok(())
        }
    }
}

/// Hands the handler the stream's next DATA frame; the body timeout bounds the wait,
/// so it counts time without progress (`408` when it passes).
async fn feed(body: &mut RecvStream, incoming: &IncomingBody, shared: &Shared, stall: Duration) {
    match timeout(stall, body.data()).await {
        Ok(Some(Ok(piece))) => {
            let _ = body.flow_control().release_capacity(piece.len());
            shared.meter.payload(piece.len());
            incoming.push(&piece);
        }
        Ok(Some(Err(_))) => incoming.finish(End::Failed(BodyError::Closed)),
        Ok(None) => incoming.finish(End::Complete),
        Err(_) => incoming.finish(End::Failed(BodyError::TimedOut)),
    }
}
