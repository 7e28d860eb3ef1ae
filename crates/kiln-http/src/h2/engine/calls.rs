//! A connection's streams between their request and their response: early hints, the
//! body mode asked of the service, the calls started for requests made whole (or whose
//! body streams, [`BodyMode::Stream`]), their answers, and the deadlines of bodies that
//! do not come (`408`) and of windows held shut.

use std::net::SocketAddr;
use std::task::Context;

use tokio::time::Instant;

use super::conn::{Conn, Upgrading};
use super::stream::{Intake, Out, Phase, Stream};
use super::tunnel::{self, TunnelOut};
use crate::body::{BodyError, BodyLimit, BodyMode, End, IncomingBody};
use crate::h2::response_head::Common;
use crate::rejection::{Rejection, error_response};
use crate::request::Request;
use crate::service::Service;
use crate::transport::Transport;
use crate::upgrade::{self, Upgraded};
use crate::worker::Bufs;

const BODY_TIMEOUT: Rejection =
    Rejection { status: http::StatusCode::REQUEST_TIMEOUT, reason: "request body not received in time" };
const TOO_LARGE: Rejection =
    Rejection { status: http::StatusCode::PAYLOAD_TOO_LARGE, reason: "request body too large" };

impl<S: Service, T: Transport> Conn<S, T> {
    /// Asks for early hints on new streams, and calls the service (or answers the
    /// refusal) for every request made whole.
    pub(super) fn start_calls(&mut self, cx: &mut Context<'_>) {
        let mut index = 0;
        while index < self.state.streams.len() {
            let stream = &mut self.state.streams[index];
            if stream.recv_open && stream.deadline.is_none() && matches!(stream.phase, Phase::Receiving) {
                stream.deadline = Some(self.worker.coarse_now() + self.worker.limits.body_timeout);
            }
            if stream.fresh {
                stream.fresh = false;
                let b = &*stream.bufs;
                let req = Request { buf: &b.read, head: &b.head, body: b"", stream: None, peer: self.peer };
                let hints = self.service.early_hints(&req);
                // Asked only of a request with a body, before any of it is applied. A
                // CONNECT's "body" is what its tunnel will carry: streamed, bounded by
                // its window alone (RFC 8441 §5).
                let mode = match (stream.recv_open, stream.facts.tunnel) {
                    (true, true) => BodyMode::Stream { max_bytes: u64::MAX },
                    (true, false) => self.service.body_mode(&req),
                    (false, _) => BodyMode::Buffer,
                };
                if let BodyMode::Stream { max_bytes } = mode {
                    let announced = stream.facts.content_length;
                    if announced.is_some_and(|n| n > max_bytes) {
                        stream.refused = Some(TOO_LARGE);
                        stream.over_limit = Some(BodyLimit::Streamed(max_bytes));
                    } else {
                        let body = IncomingBody::new(max_bytes, announced);
                        stream.intake = Intake::Stream { body, taken: 0 };
                    }
                    // Called (or refused) now, the body still to come.
                    stream.ready = true;
                }
                if let Some(lines) = hints {
                    let id = stream.id;
                    self.state.early_hints(id, lines);
                }
            }
            let stream = &mut self.state.streams[index];
            if !stream.ready {
                index += 1;
                continue;
            }
            stream.ready = false;
            stream.deadline = None;
            if let Some(rejection) = stream.refused {
                answer_refusal(&self.service, self.peer, stream, rejection);
                let before = self.state.streams.len();
                self.respond(index, None, cx);
                if self.state.streams.len() == before {
                    index += 1;
                }
                continue;
            }
            stream.phase = Phase::Called;
            let bufs = std::mem::take(&mut stream.bufs);
            let upload = match &stream.intake {
                Intake::Stream { body, .. } => Some(body.clone()),
                _ => None,
            };
            self.to_call.get_or_insert_with(Box::default).push((bufs, upload, stream.id));
            index += 1;
        }
    }

    /// A finished call's answer: sent on its stream, or dropped if the stream is gone.
    /// An extended CONNECT answered `2xx` with an upgrade callback becomes a tunnel
    /// (RFC 8441 §5): its head goes out, and the callback, to be run beside the calls,
    /// comes back with the stream as its connection.
    pub(super) fn answer(&mut self, id: u32, mut bufs: Bufs, ok: bool, cx: &mut Context<'_>) -> Option<Upgrading> {
        let Some(index) = self.state.find(id) else {
            self.worker.release(bufs);
            return None;
        };
        let stream = &mut self.state.streams[index];
        let upgrade = bufs.res.upgrade.take();
        if let (Some(on_upgrade), Intake::Stream { body, .. }) = (upgrade, &stream.intake)
            && ok
            && stream.facts.tunnel
            && bufs.res.status.is_success()
            && body.end() == End::Open
        {
            let (tunnel, out) = tunnel::pair(body.clone());
            stream.bufs = bufs;
            self.respond(index, Some(out), cx);
            // The head is out: a socket holds no request buffers for its life.
            let bufs = std::mem::take(&mut self.state.streams[index].bufs);
            self.worker.release(bufs);
            return Some(Box::pin(upgrade::run(on_upgrade, Upgraded::new(Box::new(tunnel), Vec::new()))));
        }
        if let Intake::Stream { body, .. } = std::mem::replace(&mut stream.intake, Intake::Dropped) {
            // A body the engine could not read is answered by the engine, whatever the
            // handler made of it; what it left unread is dropped, and the stream reset
            // with NO_ERROR once the answer is out (RFC 9113 §8.1).
            if let End::Failed(e) = body.end() {
                error_response(&mut bufs.res, e.status(), e.reason());
            } else if !ok {
                error_response(&mut bufs.res, http::StatusCode::INTERNAL_SERVER_ERROR, "internal server error");
            }
            body.discard();
        } else if !ok {
            error_response(&mut bufs.res, http::StatusCode::INTERNAL_SERVER_ERROR, "internal server error");
        }
        stream.bufs = bufs;
        self.respond(index, None, cx);
        None
    }

    fn respond(&mut self, index: usize, tunnel: Option<TunnelOut>, cx: &mut Context<'_>) {
        let date = self.worker.date();
        let common = Common { date: &date, hsts: self.io.hsts() };
        self.state.respond(index, &self.worker, &common, tunnel, cx);
    }

    /// The earliest deadline of a stream: a body that must arrive, a window held shut.
    pub(super) fn deadlines(&mut self, now: Instant) -> Instant {
        let stall = self.worker.limits.body_timeout;
        let mut earliest = now + self.worker.limits.idle_timeout;
        let conn_shut = self.state.send_window <= 0;
        for stream in &mut self.state.streams {
            // A streamed body's clock runs only while its handler waits for more, and
            // restarts with every DATA frame: time without progress.
            if let (Phase::Called, Intake::Stream { body, .. }) = (&stream.phase, &stream.intake) {
                if !body.wanted() {
                    stream.deadline = None;
                } else if stream.deadline.is_none() {
                    stream.deadline = Some(now + stall);
                }
            }
            if let Phase::Sending(out) = &stream.phase {
                // A tunnel with nothing to send waits on its writer, not on a window.
                let waiting = !matches!(out, Out::Tunnel(t) if !t.pending());
                let shut = waiting && (conn_shut || stream.send_window <= 0);
                if shut && stream.deadline.is_none() {
                    stream.deadline = Some(now + stall);
                } else if !shut {
                    stream.deadline = None;
                }
            }
            if let Some(d) = stream.deadline {
                earliest = earliest.min(d);
            }
        }
        earliest
    }

    /// Ends what is past its deadline: a body not received (`408`), a window held shut
    /// (`RST_STREAM(CANCEL)`).
    pub(super) fn expire(&mut self, now: Instant, cx: &mut Context<'_>) {
        let mut index = 0;
        while index < self.state.streams.len() {
            let stream = &mut self.state.streams[index];
            if stream.deadline.is_some_and(|d| d <= now) {
                stream.deadline = None;
                match stream.phase {
                    Phase::Sending(_) => {
                        self.state.stalled(index, &self.worker);
                        continue;
                    }
                    Phase::Receiving if stream.recv_open && stream.refused.is_none() => {
                        stream.refused = Some(BODY_TIMEOUT);
                        stream.ready = true;
                    }
                    // The handler hears of it and answers; `answer` makes it a `408`.
                    Phase::Called => {
                        if let Intake::Stream { body, .. } = &stream.intake {
                            body.finish(End::Failed(BodyError::TimedOut));
                        }
                    }
                    _ => {}
                }
            }
            index += 1;
        }
        self.start_calls_refused(cx);
    }

    /// Answers refusals made by [`expire`](Self::expire) at once.
    fn start_calls_refused(&mut self, cx: &mut Context<'_>) {
        let mut index = 0;
        while index < self.state.streams.len() {
            let stream = &mut self.state.streams[index];
            if stream.ready && stream.refused.is_some() {
                stream.ready = false;
                let rejection = stream.refused.unwrap_or(BODY_TIMEOUT);
                answer_refusal(&self.service, self.peer, stream, rejection);
                let before = self.state.streams.len();
                self.respond(index, None, cx);
                if self.state.streams.len() != before {
                    continue;
                }
            }
            index += 1;
        }
    }
}

/// Fills a refused stream's response: a body over its limit gets the `413` that names the
/// limit and how a route raises it, as on HTTP/1.1; any other refusal its short reason.
/// The service may then render it its own way ([`Service::refused`]).
fn answer_refusal<S: Service>(service: &S, peer: SocketAddr, stream: &mut Stream, rejection: Rejection) {
    match stream.over_limit {
        Some(limit) if rejection.status == http::StatusCode::PAYLOAD_TOO_LARGE => limit.render(&mut stream.bufs.res),
        _ => error_response(&mut stream.bufs.res, rejection.status, rejection.reason),
    }
    let b = &mut *stream.bufs;
    let req = Request { buf: &b.read, head: &b.head, body: b"", stream: None, peer };
    service.refused(&req, &mut b.res);
}
