//! Server-Sent Events through a real server: events leave as they are produced,
//! keep-alive comments fill quiet spells, `Last-Event-ID` reaches the handler, and
//! the stream ends cleanly when the server shuts down.

use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use kiln::http::Server;
use kiln::realtime::{Event, LastEventId, Sse, Stream};
use kiln::{App, Route, Serving, State};
use kiln_test_support::Streaming;
use tokio::sync::mpsc;

/// The event channels of the `/events` streams, one per request, in order.
type Feeds = Arc<Mutex<VecDeque<mpsc::UnboundedReceiver<Event>>>>;

#[derive(Route)]
#[route("/events")]
struct Events;

#[derive(Route)]
#[route("/quiet")]
struct Quiet;

/// A first event, then what the test sends.
struct Feed {
    first: Option<Event>,
    rx: mpsc::UnboundedReceiver<Event>,
}

impl Stream for Feed {
    type Item = Event;
    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Event>> {
        match self.first.take() {
            Some(event) => Poll::Ready(Some(event)),
            None => self.rx.poll_recv(cx),
        }
    }
}

/// A stream that never yields.
struct Silence;

impl Stream for Silence {
    type Item = Event;
    fn poll_next(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Option<Event>> {
        Poll::Pending
    }
}

async fn events(_: Events, feeds: State<Feeds>, last: Option<LastEventId>) -> Sse<Feed> {
    let rx = feeds.lock().unwrap().pop_front().expect("a feed was prepared");
    // The first event says where the stream resumes, as a real handler would replay.
    let after = last.and_then(|id| id.parse::<u64>());
    let first = Event::new().event("hello").data(&format!("resuming after {after:?}"));
    Sse::new(Feed { first: Some(first), rx })
}

async fn quiet(_: Quiet) -> Sse<Silence> {
    Sse::new(Silence).keep_alive(Some(Duration::from_millis(50)))
}

fn start(workers: usize) -> (Serving, Feeds) {
    let feeds = Feeds::default();
    let state = feeds.clone();
    let app = App::new(move |_| state.clone()).route(events).route(quiet);
    // A long grace: a shutdown that waited for the streams would show.
    let server = Server::new().listen("127.0.0.1:0").workers(workers).shutdown_grace(Duration::from_secs(60));
    (kiln::serve(app, server).unwrap(), feeds)
}

fn open_events(serving: &Serving, feeds: &Feeds, extra: &str) -> (Streaming, mpsc::UnboundedSender<Event>) {
    let (tx, rx) = mpsc::unbounded_channel();
    feeds.lock().unwrap().push_back(rx);
    let raw = format!("GET /events HTTP/1.1\r\nHost: a\r\n{extra}\r\n");
    (Streaming::open(serving.local_addr(), &raw), tx)
}

#[test]
fn events_arrive_one_by_one_as_they_are_produced() {
    let (serving, feeds) = start(1);
    let (mut client, tx) = open_events(&serving, &feeds, "");
    let head = client.read_until("\r\n\r\n");
    assert!(head.starts_with("HTTP/1.1 200 OK\r\n"), "{head}");
    for header in ["Content-Type: text/event-stream", "Cache-Control: no-cache", "X-Accel-Buffering: no"] {
        assert!(head.contains(&format!("{header}\r\n")), "{header} missing: {head}");
    }
    assert!(client.read_until("\n\n").ends_with("event: hello\ndata: resuming after None\n\n"));
    // Each event is read before the next is produced: nothing waits for more.
    for n in 1..=3 {
        tx.send(Event::new().id(&n.to_string()).data(&format!("line {n}\nsecond"))).unwrap();
        let want = format!("id: {n}\ndata: line {n}\ndata: second\n\n");
        assert!(client.read_until("\n\n").ends_with(&want), "event {n}");
    }
    drop(tx);
    assert!(client.read_until("0\r\n\r\n").ends_with("\r\n0\r\n\r\n"));
    serving.shutdown();
    serving.wait().unwrap();
}

#[test]
fn last_event_id_reaches_the_handler_of_a_reconnecting_client() {
    let (serving, feeds) = start(1);
    let (mut client, _tx) = open_events(&serving, &feeds, "Last-Event-ID: 41\r\n");
    client.read_until("\r\n\r\n");
    assert!(client.read_until("\n\n").ends_with("data: resuming after Some(41)\n\n"));
    serving.shutdown();
    serving.wait().unwrap();
}

#[test]
fn a_quiet_stream_sends_keep_alive_comments() {
    let (serving, _) = start(1);
    let mut client = Streaming::open(serving.local_addr(), "GET /quiet HTTP/1.1\r\nHost: a\r\n\r\n");
    client.read_until("\r\n\r\n");
    for _ in 0..2 {
        assert_eq!(client.read_until(":\n\n\r\n"), "3\r\n:\n\n\r\n");
    }
    serving.shutdown();
    serving.wait().unwrap();
}

/// How many streams a test may open: 1,000, or fewer if the open-file limit (which
/// counts both ends, the server being in this process) cannot take them.
fn streams_allowed(want: usize) -> usize {
    let limits = std::fs::read_to_string("/proc/self/limits").unwrap_or_default();
    let soft = limits.lines().find(|l| l.starts_with("Max open files")).and_then(|l| l.split_whitespace().nth(3));
    let fds = soft.and_then(|n| n.parse::<usize>().ok()).unwrap_or(1024);
    want.min(fds.saturating_sub(100) / 2)
}

#[test]
fn a_thousand_event_streams_end_cleanly_on_shutdown_and_do_not_hold_the_grace() {
    let (serving, feeds) = start(2);
    let n = streams_allowed(1000);
    let mut clients: Vec<_> = (0..n).map(|_| open_events(&serving, &feeds, "")).collect();
    for (client, _) in &mut clients {
        client.read_until("resuming after None\n\n");
    }
    let started = Instant::now();
    serving.shutdown();
    for (client, _) in &mut clients {
        // The last chunk: the stream ended, it was not cut.
        assert!(client.read_to_close().ends_with("0\r\n\r\n"));
    }
    serving.wait().unwrap();
    // The grace is 60 s; draining ends the streams at once.
    assert!(started.elapsed() < Duration::from_secs(30), "shutdown waited for the streams");
}
