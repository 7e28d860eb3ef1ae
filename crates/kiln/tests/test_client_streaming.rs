//! `kiln::test` beyond one request at a time (issue 33, item 1): an event stream held
//! open while other requests are sent, read event by event with a timeout, and a
//! WebSocket talked to in process, all with no socket.

use std::time::Duration;

use kiln::realtime::{Bus, BusEvents, Event, LocalBus, Sse};
use kiln::test::{TestClient, TimedOut};
use kiln::ws::{CloseCode, Message, WebSocketUpgrade};
use kiln::{App, AppService, IntoResponse, Route, State};

/// A hang guard: every read here either gets what it waits for at once or is meant
/// to time out.
const WAIT: Duration = Duration::from_secs(10);

#[derive(Route)]
#[route("/rooms/{room}/events")]
struct Listen {
    room: String,
}

#[derive(Route)]
#[route(POST, "/rooms/{room}")]
struct Say {
    room: String,
}

#[derive(Route)]
#[route("/rooms/{room}/socket")]
struct Socket {
    room: String,
}

#[derive(Route)]
#[route("/echo")]
struct Echo;

#[derive(Route)]
#[route("/countdown")]
struct Countdown;

async fn listen(route: Listen, bus: State<LocalBus>) -> Sse<BusEvents> {
    Sse::new(bus.subscribe(&route.room).events())
}

async fn say(route: Say, bus: State<LocalBus>, line: String) -> String {
    bus.publish(&route.room, &line).await.unwrap().to_string()
}

/// Publishes what the client says to the room; closes with 4000 on `bye`.
async fn socket(route: Socket, bus: State<LocalBus>, ws: WebSocketUpgrade) -> impl IntoResponse {
    let bus = LocalBus::clone(&bus);
    ws.on_upgrade(move |mut socket| async move {
        while let Some(message) = socket.recv().await {
            match message {
                Message::Text(line) if line == "bye" => {
                    socket.close(CloseCode(4000), "see you").await;
                    return;
                }
                Message::Text(line) => {
                    let id = bus.publish(&route.room, &line).await.unwrap();
                    let _ = socket.send(format!("published {id}")).await;
                }
                Message::Binary(_) => {}
            }
        }
    })
}

/// Echoes every message; pings a client silent for 250 ms (and closes with 1011 if it
/// says nothing for 250 ms more).
async fn echo(_: Echo, ws: WebSocketUpgrade) -> impl IntoResponse {
    ws.heartbeat(Some(Duration::from_millis(250))).on_upgrade(|mut socket| async move {
        while let Some(message) = socket.recv().await {
            if socket.send(message).await.is_err() {
                break;
            }
        }
    })
}

/// Three events, then the end.
async fn countdown(_: Countdown) -> Sse<impl kiln::realtime::Stream<Item = Event>> {
    Sse::new(Countdown3(3)).keep_alive(None)
}

struct Countdown3(u8);

impl kiln::realtime::Stream for Countdown3 {
    type Item = Event;

    fn poll_next(mut self: std::pin::Pin<&mut Self>, _: &mut std::task::Context<'_>) -> std::task::Poll<Option<Event>> {
        let n = self.0;
        self.0 = n.saturating_sub(1);
        std::task::Poll::Ready((n > 0).then(|| Event::new().event("tick").data(&n.to_string())))
    }
}

fn client() -> TestClient<AppService<LocalBus>> {
    let bus = Bus::new();
    let app = App::new(move |_| bus.attach()).route(listen).route(say).route(socket).route(echo).route(countdown);
    TestClient::new(app)
}

#[test]
fn an_sse_subscriber_held_open_receives_an_event_posted_while_it_is_open() {
    let mut c = client();
    let mut first = c.request("GET", "/rooms/lobby/events").open();
    let mut second = c.request("GET", "/rooms/lobby/events").open();
    assert_eq!(first.status(), 200);
    assert_eq!(first.header("content-type"), Some("text/event-stream"));

    let id = c.request("POST", "/rooms/lobby").body("hello, lobby").send().text();
    c.request("POST", "/rooms/elsewhere").body("not for the lobby").send();
    let again = c.request("POST", "/rooms/lobby").body("two\nlines").send().text();
    for stream in [&mut first, &mut second] {
        let event = stream.next_event(WAIT).unwrap().expect("an event");
        assert_eq!((event.id(), event.event(), event.data()), (Some(id.as_str()), "message", "hello, lobby"));
        let event = stream.next_event(WAIT).unwrap().expect("an event");
        assert_eq!((event.id(), event.data()), (Some(again.as_str()), "two\nlines"));
    }
}

#[test]
fn next_event_returns_a_timeout_error_not_a_hang_when_nothing_comes() {
    let mut c = client();
    let mut events = c.request("GET", "/rooms/quiet/events").open();
    let waited = Duration::from_millis(30);
    assert_eq!(events.next_event(waited), Err(TimedOut(waited)));
    assert!(events.next_chunk(waited).is_err());
    // The stream is still open: what is said now arrives.
    c.request("POST", "/rooms/quiet").body("at last").send();
    assert_eq!(events.next_event(WAIT).unwrap().unwrap().data(), "at last");
}

#[test]
fn a_stream_that_ends_is_read_to_its_end() {
    let mut c = client();
    let mut ticks = c.request("GET", &Countdown).open();
    let read: Vec<_> = std::iter::from_fn(|| ticks.next_event(WAIT).unwrap()).collect();
    assert_eq!(
        read.iter().map(|e| (e.event(), e.data())).collect::<Vec<_>>(),
        [("tick", "3"), ("tick", "2"), ("tick", "1")]
    );
    assert_eq!(ticks.next_chunk(WAIT), Ok(None));
    // `send_streaming` reads a stream whole, up to a cap.
    let whole = c.request("GET", &Countdown).send_streaming(1000).text();
    assert_eq!(whole, "event: tick\ndata: 3\n\nevent: tick\ndata: 2\n\nevent: tick\ndata: 1\n\n");
    assert_eq!(c.request("GET", &Countdown).send_streaming(5).text(), "event");
    // A body that is not a stream comes whole, then the end.
    let mut missing = c.request("GET", "/nowhere").open();
    assert_eq!(missing.status(), 404);
    assert!(missing.next_chunk(WAIT).unwrap().is_some());
    assert_eq!(missing.next_chunk(WAIT), Ok(None));
}

#[test]
fn a_websocket_echo_round_trip_and_close_through_kiln_test() {
    let mut c = client();
    let mut ws = c.request("GET", &Echo).websocket().expect("101");
    ws.send("hello");
    assert_eq!(ws.recv(WAIT), Ok(Some(Message::Text("hello".into()))));
    let big = vec![7u8; 70_000];
    ws.send(big.clone());
    assert_eq!(ws.recv(WAIT), Ok(Some(Message::Binary(big))));
    // Quiet for three heartbeats: the server's pings are answered, so the socket
    // stays open, and the read times out instead of hanging.
    let waited = Duration::from_millis(800);
    assert_eq!(ws.recv(waited), Err(TimedOut(waited)));
    ws.send("still here");
    assert_eq!(ws.recv(WAIT), Ok(Some(Message::Text("still here".into()))));

    let answer = ws.close(CloseCode::NORMAL, "done", WAIT).unwrap().expect("a close frame");
    assert_eq!(answer.code, CloseCode::NORMAL);
    assert_eq!(ws.recv(WAIT), Ok(None), "closed");
}

#[test]
fn a_websocket_and_an_event_stream_stay_open_together_while_requests_are_sent() {
    let mut c = client();
    let mut events = c.request("GET", "/rooms/lobby/events").open();
    let mut ws = c.request("GET", "/rooms/lobby/socket").websocket().expect("101");
    assert_eq!(c.request("POST", "/rooms/lobby").body("from a POST").send().status(), 200);
    ws.send("from the socket");
    let Ok(Some(Message::Text(published))) = ws.recv(WAIT) else { panic!("an answer") };
    assert_eq!(events.next_event(WAIT).unwrap().unwrap().data(), "from a POST");
    let event = events.next_event(WAIT).unwrap().unwrap();
    assert_eq!(format!("published {}", event.id().unwrap()), published);
    assert_eq!(event.data(), "from the socket");
    // The server ends it: `recv` ends, with what the close said.
    ws.send("bye");
    assert_eq!(ws.recv(WAIT), Ok(None));
    let said = ws.close_frame().expect("the server's close frame");
    assert_eq!((said.code, said.reason.as_str()), (CloseCode(4000), "see you"));
}

#[test]
fn a_request_that_is_no_websocket_handshake_gets_the_apps_answer() {
    let mut c = client();
    assert_eq!(c.request("GET", "/rooms/lobby/events").websocket().unwrap_err().status(), 200);
    assert_eq!(c.request("GET", "/nowhere").websocket().unwrap_err().status(), 404);
    let refused = c.request("GET", &Echo).header("Sec-WebSocket-Version", "8").websocket().unwrap_err();
    assert_eq!(refused.status(), 426);
}
