//! One request from its head to its encoded response: how its body is read, the
//! service called (a panic costs the request a 500, not the worker), the response
//! encoded.

use std::future::{Future, poll_fn};
use std::panic::AssertUnwindSafe;
use std::pin::pin;
use std::task::Poll;

use http::StatusCode;

use super::{Conn, Flow};
use crate::body::{BodyLimit, BodyMode};
use crate::h1::parse::{self, Framing, Parsed};
use crate::rejection::error_response;
use crate::request::Request;
use crate::service::Service;
use crate::transport::Transport;
use crate::worker::ConnBufs;

impl<T: Transport> Conn<T> {
    /// Reads, answers and encodes one request. `false`: close after flushing.
    pub(super) async fn serve_one<S: Service>(&mut self, service: &S) -> Flow<bool> {
        let parsed = match self.read_head().await? {
            Ok(parsed) => parsed,
            Err(rejection) => return self.refuse(rejection).await,
        };
        // Only a request with a body asks the service how to read it: `GET`s pay nothing.
        let mode = match parsed.framing {
            Framing::Empty => BodyMode::Buffer,
            _ => self.body_mode(service, &parsed),
        };
        if let BodyMode::Stream { max_bytes } = mode {
            return self.serve_streamed(service, &parsed, max_bytes).await;
        }
        let limit = self.worker.limits.max_body_bytes as u64;
        if let Err(rejection) = parse::check_body_len(&parsed, limit) {
            return self.refuse_body(service, rejection, BodyLimit::Whole(limit)).await;
        }
        let body_len = match self.read_body(&parsed).await? {
            Ok(len) => len,
            Err(rejection) => return self.refuse_body(service, rejection, BodyLimit::Whole(limit)).await,
        };
        let keep_alive = self.answer(service, &parsed, body_len).await;
        let consumed = parsed.len + body_len;
        self.start += consumed;
        self.served += 1;
        let keep_alive = keep_alive && self.served < self.worker.limits.max_requests_per_connection;
        let keep_alive = self.write_response(&parsed, keep_alive).await?;
        if self.held > 0 {
            self.give_back();
        }
        Ok(keep_alive)
    }

    /// Asks the service how to read the body of the request whose head is at `start`.
    fn body_mode<S: Service>(&self, service: &S, parsed: &Parsed) -> BodyMode {
        let bufs = &*self.bufs;
        let buf = &bufs.read[self.start..self.start + parsed.len];
        service.body_mode(&Request { buf, head: &bufs.head, body: b"", stream: None, peer: self.peer })
    }

    /// Calls the service for the request at `start`; the response is left in
    /// `bufs.res`. Returns whether the connection may stay open.
    async fn answer<S: Service>(&mut self, service: &S, parsed: &Parsed, body_len: usize) -> bool {
        let ConnBufs { read, chunked_body, head, res, .. } = &mut *self.bufs;
        let buf = &read[self.start..];
        let body = match parsed.framing {
            Framing::Chunked => &chunked_body[..],
            _ => &buf[parsed.len..parsed.len + body_len],
        };
        let req = Request { buf, head, body, stream: None, peer: self.peer };
        res.clear();
        // A panicking handler costs its request a 500, not the worker: the body has been
        // read, so the connection is still in step and may go on.
        // A service may panic while starting its future (a synchronous `service_fn`)
        // or while it runs; both are caught.
        let start = move || {
            let res = res;
            service.call(req, res)
        };
        let outcome = match std::panic::catch_unwind(AssertUnwindSafe(start)) {
            Ok(call) => {
                let mut call = pin!(call);
                poll_fn(|cx| match std::panic::catch_unwind(AssertUnwindSafe(|| call.as_mut().poll(cx))) {
                    Ok(Poll::Ready(())) => Poll::Ready(true),
                    Ok(Poll::Pending) => Poll::Pending,
                    Err(_) => Poll::Ready(false),
                })
                .await
            }
            Err(_) => false,
        };
        let res = &mut self.bufs.res;
        if !outcome {
            error_response(res, StatusCode::INTERNAL_SERVER_ERROR, "internal server error");
        }
        if let Some(hsts) = self.stream.hsts() {
            if !res.has_header("strict-transport-security") {
                res.append_header_unchecked(b"strict-transport-security", hsts);
            }
        }
        parsed.keep_alive && !res.close && !self.worker.shutting_down.get()
    }
}
