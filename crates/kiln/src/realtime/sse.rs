//! Server-Sent Events (HTML Living Standard §9.2, "Server-sent events"): a response
//! that stays open and sends [`Event`]s as a stream produces them, with keep-alive
//! comments while it is quiet, ending cleanly when the server drains.
//!
//! The event model knows nothing of the wire: an [`Sse`] is a body stream of text
//! frames, which HTTP/1.1 sends chunked and HTTP/2 as DATA frames.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use futures_core::Stream;
use kiln_http::{Bytes, Drain, Response};

use crate::extract::{FromRequest, RequestContext};
use crate::rejection::{MissingHeader, Rejection};
use crate::response::IntoResponse;

/// How long an event stream stays quiet before a keep-alive comment is sent, unless
/// [`Sse::keep_alive`] says otherwise: shorter than the idle timeouts of common
/// proxies and load balancers (30 s and more), which would otherwise cut it.
pub const SSE_KEEP_ALIVE: Duration = Duration::from_secs(15);

/// One event, rendered as the lines the browser's `EventSource` parses.
///
/// ```
/// use kiln::realtime::Event;
/// let event = Event::new().event("comment").id("42").data("first line\nsecond line");
/// assert_eq!(event.as_str(), "event: comment\nid: 42\ndata: first line\ndata: second line\n\n");
/// ```
#[derive(Clone, Default)]
pub struct Event {
    /// The event's field lines and the blank line that ends it (empty while it has
    /// no field).
    lines: Lines,
}

/// An event's text: built here, or rendered once and shared (by every subscriber of
/// a bus topic that gets the same message), then copied only if a field is added.
#[derive(Clone)]
enum Lines {
    Owned(String),
    /// Valid UTF-8: made only from a `String`.
    Shared(Bytes),
}

impl Default for Lines {
    fn default() -> Self {
        Lines::Owned(String::new())
    }
}

impl PartialEq for Event {
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for Event {}

impl Event {
    /// An event with no fields yet.
    pub fn new() -> Self {
        Event::default()
    }

    /// An event whose text `into_bytes` rendered before: sent as it is, not copied.
    pub(crate) fn rendered(bytes: Bytes) -> Self {
        Event { lines: Lines::Shared(bytes) }
    }

    /// Adds `data`: each of its lines (split at CRLF, CR or LF, as the browser splits
    /// them) becomes a `data:` line, and the browser joins them back with LF.
    pub fn data(mut self, data: &str) -> Self {
        for line in lines(data) {
            self.field("data", line);
        }
        self
    }

    /// Adds `data` as JSON (one line: JSON escapes line breaks inside strings).
    pub fn json_data<T: serde::Serialize>(self, data: &T) -> Result<Self, serde_json::Error> {
        let json = serde_json::to_string(data)?;
        Ok(self.data(&json))
    }

    /// Sets the event's type, which the browser dispatches under (`addEventListener`
    /// of that name); without it, `message`. Line breaks, which would end the field,
    /// become spaces.
    pub fn event(mut self, name: &str) -> Self {
        self.field("event", &single_line(name, false));
        self
    }

    /// Sets the event's id, which the browser sends back as `Last-Event-ID` when it
    /// reconnects (see [`LastEventId`]). Line breaks become spaces, and NUL, which
    /// would make the browser ignore the id, is dropped.
    pub fn id(mut self, id: &str) -> Self {
        self.field("id", &single_line(id, true));
        self
    }

    /// Tells the browser how long to wait before reconnecting once the stream ends.
    pub fn retry(mut self, after: Duration) -> Self {
        let mut ms = itoa::Buffer::new();
        self.field("retry", ms.format(after.as_millis()));
        self
    }

    /// Adds a comment, which the browser ignores: each line becomes a `:` line.
    pub fn comment(mut self, text: &str) -> Self {
        for line in lines(text) {
            self.field("", line);
        }
        self
    }

    /// The event as sent, ending with the blank line that dispatches it.
    pub fn as_str(&self) -> &str {
        match &self.lines {
            Lines::Owned(lines) => lines,
            // Never fails: shared text was made from a `String`.
            Lines::Shared(bytes) => std::str::from_utf8(bytes).unwrap_or_default(),
        }
    }

    fn field(&mut self, name: &str, value: &str) {
        if let Lines::Shared(_) = self.lines {
            self.lines = Lines::Owned(self.as_str().to_owned());
        }
        let Lines::Owned(lines) = &mut self.lines else { return };
        // Before the blank line that ends the event.
        lines.pop();
        lines.push_str(name);
        lines.push(':');
        // The browser drops one space after the colon, so a value that starts with a
        // space keeps it.
        lines.push(' ');
        lines.push_str(value);
        lines.push_str("\n\n");
    }

    pub(crate) fn into_bytes(self) -> Bytes {
        match self.lines {
            Lines::Owned(lines) => Bytes::from(lines),
            Lines::Shared(bytes) => bytes,
        }
    }
}

impl fmt::Debug for Event {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Event").field(&self.as_str()).finish()
    }
}

/// The lines of `text`, split at CRLF, CR or LF (§9.2.6, "Interpreting an event stream").
fn lines(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = Some(text);
    std::iter::from_fn(move || {
        let text = rest?;
        match text.find(['\r', '\n']) {
            Some(at) => {
                let skip = if text[at..].starts_with("\r\n") { 2 } else { 1 };
                rest = Some(&text[at + skip..]);
                Some(&text[..at])
            }
            None => {
                rest = None;
                Some(text)
            }
        }
    })
}

fn single_line(value: &str, drop_nul: bool) -> String {
    value.chars().filter(|&c| !(drop_nul && c == '\0')).map(|c| if c == '\r' || c == '\n' { ' ' } else { c }).collect()
}

/// A Server-Sent Events response: `text/event-stream` from a stream of [`Event`]s.
///
/// Each event is sent as soon as the stream yields it. While the stream is quiet a
/// keep-alive comment goes out every [`SSE_KEEP_ALIVE`] (see [`keep_alive`](Self::keep_alive)),
/// so that proxies keep the connection and a client that left is noticed. When the
/// server begins to shut down the stream ends cleanly (the browser then reconnects,
/// to another instance behind a load balancer); it also ends when the stream does.
/// `Cache-Control: no-cache` and `X-Accel-Buffering: no` keep caches and buffering
/// proxies (nginx) from holding events back.
///
/// ```
/// use kiln::realtime::{Event, Sse};
/// # struct Once(Option<Event>);
/// # impl futures_core::Stream for Once {
/// #     type Item = Event;
/// #     fn poll_next(mut self: std::pin::Pin<&mut Self>, _: &mut std::task::Context<'_>) -> std::task::Poll<Option<Event>> {
/// #         std::task::Poll::Ready(self.0.take())
/// #     }
/// # }
/// async fn clock() -> Sse<Once> {
///     Sse::new(Once(Some(Event::new().data("tick"))))
/// }
/// ```
pub struct Sse<S> {
    events: S,
    keep_alive: Option<Duration>,
}

impl<S> Sse<S>
where
    S: Stream<Item = Event> + 'static,
{
    /// An event stream sending what `events` yields.
    pub fn new(events: S) -> Self {
        Sse { events, keep_alive: Some(SSE_KEEP_ALIVE) }
    }

    /// Sends a keep-alive comment after `every` without an event; `None` sends none.
    pub fn keep_alive(mut self, every: Option<Duration>) -> Self {
        self.keep_alive = every;
        self
    }
}

impl<S> fmt::Debug for Sse<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Sse").field("keep_alive", &self.keep_alive).finish_non_exhaustive()
    }
}

impl<S> IntoResponse for Sse<S>
where
    S: Stream<Item = Event> + 'static,
{
    fn into_response(self, res: &mut Response) {
        res.set_content_type("text/event-stream");
        res.append_header_unchecked(b"Cache-Control", b"no-cache");
        res.append_header_unchecked(b"X-Accel-Buffering", b"no");
        let keep_alive = self.keep_alive.map(|every| KeepAlive { every, timer: Box::pin(tokio::time::sleep(every)) });
        let body = SseBody { events: Box::pin(self.events), keep_alive, sent: false, drain: kiln_http::draining() };
        res.set_body_stream(Box::pin(body));
    }
}

/// The body of an [`Sse`] response: events, keep-alive comments, the end on drain.
struct SseBody<S> {
    events: Pin<Box<S>>,
    keep_alive: Option<KeepAlive>,
    /// Whether an event went out since the keep-alive timer was last set.
    sent: bool,
    drain: Drain,
}

struct KeepAlive {
    every: Duration,
    timer: Pin<Box<tokio::time::Sleep>>,
}

/// The keep-alive comment: a line the browser ignores.
const KEEP_ALIVE_COMMENT: &[u8] = b":\n\n";

impl<S: Stream<Item = Event>> Stream for SseBody<S> {
    type Item = std::io::Result<Bytes>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        if this.drain.is_draining() {
            return Poll::Ready(None);
        }
        match this.events.as_mut().poll_next(cx) {
            Poll::Ready(Some(event)) => {
                this.sent = true;
                return Poll::Ready(Some(Ok(event.into_bytes())));
            }
            Poll::Ready(None) => return Poll::Ready(None),
            Poll::Pending => {}
        }
        // The task waits for the drain only when it is about to wait at all: a stream
        // with an event ready pays no waker registration for it.
        if Pin::new(&mut this.drain).poll(cx).is_ready() {
            return Poll::Ready(None);
        }
        // The timer is set once per period, not once per event: busy streams pay
        // nothing for it, and a quiet one gets a comment at most a period late.
        let Some(keep_alive) = &mut this.keep_alive else { return Poll::Pending };
        while keep_alive.timer.as_mut().poll(cx).is_ready() {
            let next = tokio::time::Instant::now() + keep_alive.every;
            keep_alive.timer.as_mut().reset(next);
            if !std::mem::take(&mut this.sent) {
                return Poll::Ready(Some(Ok(Bytes::from_static(KEEP_ALIVE_COMMENT))));
            }
        }
        Poll::Pending
    }
}

/// The `Last-Event-ID` header a reconnecting `EventSource` sends: the id of the last
/// event it received, so that the stream can resume after it. Absent on a first
/// connection: take `Option<LastEventId>`.
///
/// ```
/// use kiln::realtime::LastEventId;
/// async fn events(last: Option<LastEventId>) -> String {
///     match last.and_then(|id| id.parse::<u64>()) {
///         Some(n) => format!("resuming after {n}"),
///         None => "from now on".to_owned(),
///     }
/// }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LastEventId(pub String);

impl LastEventId {
    /// The id parsed as `T` (a number, usually); `None` when it does not parse.
    pub fn parse<T: std::str::FromStr>(&self) -> Option<T> {
        self.0.parse().ok()
    }
}

impl<S> FromRequest<S> for LastEventId {
    fn from_request(cx: &RequestContext<'_, S>) -> Result<Self, Rejection> {
        match cx.request().header_str("last-event-id") {
            Some(id) => Ok(LastEventId(id.to_owned())),
            None => Err(MissingHeader::new("header `Last-Event-ID` is required").into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_is_split_at_every_kind_of_line_break_and_fields_cannot_break_out() {
        let cases = [
            (Event::new().data("one"), "data: one\n\n"),
            (Event::new().data("a\nb\r\nc\rd"), "data: a\ndata: b\ndata: c\ndata: d\n\n"),
            (Event::new().data(""), "data: \n\n"),
            (Event::new().data("end\n"), "data: end\ndata: \n\n"),
            (Event::new().data(" spaced"), "data:  spaced\n\n"),
            (Event::new().event("a\nb").id("1\r\n2\0"), "event: a b\nid: 1  2\n\n"),
            (Event::new().retry(Duration::from_secs(3)), "retry: 3000\n\n"),
            (Event::new().comment("hi\nthere"), ": hi\n: there\n\n"),
        ];
        for (event, want) in cases {
            assert_eq!(event.as_str(), want);
        }
    }

    #[test]
    fn an_event_grows_after_it_was_rendered() {
        let event = Event::new().data("x");
        assert_eq!(event.as_str(), "data: x\n\n");
        let event = event.id("7");
        assert_eq!(event.as_str(), "data: x\nid: 7\n\n");
    }

    #[test]
    fn json_data_is_one_line() {
        let event = Event::new().json_data(&serde_json::json!({"text": "a\nb"})).unwrap();
        assert_eq!(event.as_str(), "data: {\"text\":\"a\\nb\"}\n\n");
    }
}
