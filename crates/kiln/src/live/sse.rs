//! A live view over an event stream, for pages behind a proxy that blocks WebSocket:
//! the page's path asked with `Accept: text/event-stream` and the page's token in the
//! `Kiln-Live-Token` header is a Server-Sent Events response carrying what the socket
//! would (the stream's id first, as a `kiln-stream` event; then the mount message and
//! the diffs, each one event whose `data:` lines are its lines (JSON is one; a leaf
//! message's text may hold newlines); a `close` event when the server ends it),
//! and the page posts its events to the same path (`events.rs`). The view runs in the
//! same loop as over a WebSocket (`socket.rs`), on the worker that took the stream.
//!
//! The token rides in a header, not the URL: another site cannot set it on a plain
//! GET (nor on a `fetch` without a CORS preflight), cannot read the page for it, and
//! it stays out of access logs.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::future::poll_fn;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

use futures_core::Stream;
use kiln_http::Request;
use tokio::sync::mpsc;

use crate::live::socket;
use crate::live::streams::{self, Registration};
use crate::live::transport::{FromPage, Inbox, Outbox, Unsent};
use crate::live::view::LiveView;
use crate::realtime::{Event, Sse};
use crate::ws::CloseCode;

/// The header carrying the page's token, on its stream's request and on each event.
pub(crate) const TOKEN_HEADER: &str = "kiln-live-token";

/// The refusal of a stream's request or an event without the token.
pub(crate) const NO_TOKEN: &str =
    "a live view's event stream and its events carry the page's token in `Kiln-Live-Token`";

/// Bytes of messages the response has not taken beyond which the view waits to queue
/// more: the WebSocket's own queue bound.
const MAX_QUEUE: usize = 1 << 20;

/// Whether the request asks for the page's event stream.
pub(crate) fn is_stream(req: &Request<'_>) -> bool {
    req.method() == "GET"
        && req.header_str("accept").is_some_and(|accept| {
            accept.split(',').any(|kind| kind.split(';').next().is_some_and(|t| t.trim() == "text/event-stream"))
        })
}

/// The page's token, as the stream's request or an event's POST carries it.
pub(crate) fn token<'r>(req: &Request<'r>) -> Option<&'r str> {
    req.header_str(TOKEN_HEADER)
}

/// Opens the event stream of the page whose checked token is `token`, and runs `view`
/// for it on this worker until the page or the server ends it.
pub(crate) fn open<V: LiveView>(view: V, token: &str) -> Sse<Body> {
    let (registration, events) = streams::register(token, V::LIMITS.event_burst);
    let pipe = Rc::new(RefCell::new(Pipe::default()));
    pipe.borrow_mut().push(Event::new().event("kiln-stream").data(registration.id()));
    let outbox = StreamOutbox(Rc::clone(&pipe));
    let mut inbox = StreamInbox { events, pipe: Rc::clone(&pipe), _registration: registration };
    tokio::task::spawn_local(async move {
        socket::live(view, &outbox, &mut inbox).await;
    });
    Sse::new(Body(pipe))
}

/// What the view queued for the page and the response has not taken yet.
#[derive(Default)]
struct Pipe {
    queue: VecDeque<Event>,
    /// Bytes in `queue`.
    queued: usize,
    /// No more will be queued: the response ends once `queue` is taken.
    ended: bool,
    /// The response is gone (the page closed it, the connection dropped).
    gone: bool,
    /// The response, waiting for a message.
    body: Option<Waker>,
    /// The view's loop, waiting for room, for the queue to be taken, or for the end.
    view: Option<Waker>,
}

impl Pipe {
    fn push(&mut self, event: Event) {
        self.queued += event.as_str().len();
        self.queue.push_back(event);
        if let Some(body) = self.body.take() {
            body.wake();
        }
    }

    fn end(&mut self) {
        self.ended = true;
        if let Some(body) = self.body.take() {
            body.wake();
        }
    }

    /// Whether `bytes` more fit now (a message larger than the whole queue goes when
    /// the queue is empty).
    fn has_room(&self, bytes: usize) -> bool {
        self.queued == 0 || self.queued + bytes <= MAX_QUEUE
    }
}

/// The response's body: the messages of the pipe, as the connection takes them.
pub(crate) struct Body(Rc<RefCell<Pipe>>);

impl Stream for Body {
    type Item = Event;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Event>> {
        let mut pipe = self.0.borrow_mut();
        if let Some(event) = pipe.queue.pop_front() {
            pipe.queued -= event.as_str().len();
            if let Some(view) = pipe.view.take() {
                view.wake();
            }
            return Poll::Ready(Some(event));
        }
        if pipe.ended {
            return Poll::Ready(None);
        }
        pipe.body = Some(cx.waker().clone());
        Poll::Pending
    }
}

impl Drop for Body {
    fn drop(&mut self) {
        let mut pipe = self.0.borrow_mut();
        pipe.gone = true;
        if let Some(view) = pipe.view.take() {
            view.wake();
        }
    }
}

/// The view's side of the pipe.
struct StreamOutbox(Rc<RefCell<Pipe>>);

impl StreamOutbox {
    /// Waits until `ready` holds of the pipe, or the response is gone (false).
    async fn until(&self, ready: impl Fn(&Pipe) -> bool) -> bool {
        poll_fn(|cx| {
            let mut pipe = self.0.borrow_mut();
            if pipe.gone {
                Poll::Ready(false)
            } else if ready(&pipe) {
                Poll::Ready(true)
            } else {
                pipe.view = Some(cx.waker().clone());
                Poll::Pending
            }
        })
        .await
    }
}

impl Outbox for StreamOutbox {
    fn queued(&self) -> usize {
        self.0.borrow().queued
    }

    fn try_send(&self, text: String) -> Result<(), Unsent> {
        let mut pipe = self.0.borrow_mut();
        if pipe.gone || pipe.ended {
            return Err(Unsent::Closed);
        }
        if !pipe.has_room(text.len()) {
            return Err(Unsent::Full(text));
        }
        pipe.push(Event::new().data(&text));
        Ok(())
    }

    async fn send(&self, text: String) -> bool {
        self.until(|pipe| pipe.has_room(text.len())).await && self.try_send(text).is_ok()
    }

    async fn flush(&self) -> bool {
        self.until(|pipe| pipe.queued == 0).await
    }

    /// Says why as a `close` event (`{"code":1008,"reason":".."}`), then ends the
    /// response; there is no handshake to wait for.
    async fn close(&self, code: CloseCode, reason: &str) -> bool {
        let said = serde_json::json!({ "code": code.0, "reason": reason }).to_string();
        let mut pipe = self.0.borrow_mut();
        pipe.push(Event::new().event("close").data(&said));
        pipe.end();
        false
    }
}

impl Drop for StreamOutbox {
    /// The view's loop is over: the response ends once it has sent what is queued.
    fn drop(&mut self) {
        self.0.borrow_mut().end();
    }
}

/// The events posted for this stream, from any worker of the process.
struct StreamInbox {
    events: mpsc::Receiver<FromPage>,
    pipe: Rc<RefCell<Pipe>>,
    /// The stream is found by its id while the view runs.
    _registration: Registration,
}

impl Inbox for StreamInbox {
    async fn recv(&mut self) -> Option<FromPage> {
        poll_fn(|cx| {
            if let Poll::Ready(event) = self.events.poll_recv(cx) {
                return Poll::Ready(event);
            }
            let mut pipe = self.pipe.borrow_mut();
            if pipe.gone {
                return Poll::Ready(None);
            }
            pipe.view = Some(cx.waker().clone());
            Poll::Pending
        })
        .await
    }

    async fn finish(&mut self) {}
}
