//! `LiveView::disconnected`: run once when a page's connection ends for any reason but
//! a panic (the page closes its socket or its event stream, the server closes it), with
//! the work it starts run to its end, in process through `kiln::test`.

mod live_support;

use std::sync::Mutex;
use std::time::{Duration, Instant};

use kiln::live::{HandleInfo, Limits, Live, LiveSocket, LiveView};
use kiln::test::{TestClient, TestWebSocket};
use kiln::ws::CloseCode;
use kiln::{App, AppService, Key, Rejection, RequestContext, Route, live_html};
use live_support::{WAIT, token_of};
use serde::{Deserialize, Serialize};

/// The pages whose views said they left, in order (tests run in parallel: each uses
/// pages of its own).
static LEFT: Mutex<Vec<u32>> = Mutex::new(Vec::new());

#[derive(Route)]
#[route("/leaving/{id}")]
struct LeavingPage {
    id: u32,
}

#[derive(Serialize, Deserialize)]
enum Event {
    Boom,
}

struct Leaving {
    id: u32,
}

/// The view's goodbye, said.
struct Said;

impl LiveView for Leaving {
    type AppState = ();
    type Route = LeavingPage;
    type Event = Event;

    const LIMITS: Limits = Limits { max_errors: 1, ..Limits::DEFAULT };

    async fn mount(route: LeavingPage, _: RequestContext<'_, ()>) -> Result<Self, Rejection> {
        Ok(Leaving { id: route.id })
    }

    fn handle(&mut self, Event::Boom: Event, _: &mut LiveSocket<Self>) {
        panic!("the view broke");
    }

    fn render(&self) -> Live<Event> {
        live_html! { p { (self.id) } }
    }

    fn disconnected(&mut self, socket: &mut LiveSocket<Self>) {
        let id = self.id;
        // Work that awaits, as a publish on the bus does.
        socket.spawn(async move {
            tokio::time::sleep(Duration::from_millis(10)).await;
            LEFT.lock().unwrap().push(id);
            Said
        });
    }
}

impl HandleInfo<Said> for Leaving {
    fn handle_info(&mut self, Said: Said, _: &mut LiveSocket<Self>) {}
}

type Client = TestClient<AppService<()>>;

fn client() -> Client {
    TestClient::new(App::new(|_| ()).secret_key(Key::generate()).live::<Leaving>()).keep_cookies()
}

fn connect(client: &mut Client, id: u32) -> TestWebSocket {
    let page = format!("/leaving/{id}");
    let token = token_of(client, &page);
    let mut socket = client
        .request("GET", &page)
        .header("Sec-WebSocket-Protocol", &format!("kiln-live, {token}"))
        .websocket()
        .expect("the socket opens");
    socket.recv(WAIT).expect("the mount message in time").expect("the mount message");
    socket
}

fn left(id: u32) -> bool {
    LEFT.lock().unwrap().contains(&id)
}

/// Runs the client's tasks (on an idle socket of page `idle`) until `id` has left.
fn wait_until_left(idle: &mut TestWebSocket, id: u32) {
    let start = Instant::now();
    while !left(id) {
        assert!(start.elapsed() < WAIT, "page {id} never said it left");
        assert!(idle.recv(Duration::from_millis(10)).is_err(), "the idle page gets nothing");
    }
}

#[test]
fn live_disconnected_runs_when_the_page_closes_its_socket() {
    let mut client = client();
    let mut idle = connect(&mut client, 100);
    let mut socket = connect(&mut client, 1);
    assert!(!left(1));
    socket.close(CloseCode::NORMAL, "bye", WAIT).unwrap();
    wait_until_left(&mut idle, 1);
}

#[test]
fn live_disconnected_runs_when_the_server_closes_the_socket() {
    let mut client = client();
    let mut idle = connect(&mut client, 200);
    let mut socket = connect(&mut client, 2);
    socket.send(r#"{"event":"Nothing"}"#);
    while socket.recv(WAIT).expect("the socket ends in time").is_some() {}
    assert_eq!(socket.close_frame().map(|f| f.code), Some(CloseCode::POLICY_VIOLATION));
    wait_until_left(&mut idle, 2);
}

#[test]
fn live_disconnected_runs_when_the_page_drops_its_event_stream() {
    let mut client = client();
    let mut idle = connect(&mut client, 300);
    let token = token_of(&mut client, "/leaving/3");
    let mut stream = client
        .request("GET", "/leaving/3")
        .header("Accept", "text/event-stream")
        .header("Kiln-Live-Token", &token)
        .open();
    assert_eq!(stream.next_event(WAIT).unwrap().expect("the stream's id").event(), "kiln-stream");
    assert_eq!(stream.next_event(WAIT).unwrap().expect("the mount message").event(), "message");
    assert!(!left(3));
    drop(stream);
    wait_until_left(&mut idle, 3);
}

#[test]
fn live_disconnected_does_not_run_after_a_panic() {
    let mut client = client();
    let mut idle = connect(&mut client, 400);
    let mut socket = connect(&mut client, 4);
    socket.send(r#"{"event":"Boom"}"#);
    while socket.recv(WAIT).expect("the socket ends in time").is_some() {}
    assert_eq!(socket.close_frame().map(|f| f.code), Some(CloseCode::INTERNAL_ERROR));
    // A page closed after it says it left; the one that panicked never does.
    let mut after = connect(&mut client, 5);
    after.close(CloseCode::NORMAL, "bye", WAIT).unwrap();
    wait_until_left(&mut idle, 5);
    assert!(!left(4));
}
