//! A live view's socket, in process through `kiln::test`'s WebSocket: the page's token
//! opens it, the mount message and diffs come over it, bus messages reach the view,
//! and what a page must not do (forge, reuse or outlive a token, send unknown,
//! oversized or too many events, stop reading, crash the view) is refused or bounded.

mod live_support;

use std::time::Duration;

use kiln::live::{Embed, HandleInfo, Limits, Live, LiveSocket, LiveView};
use kiln::markup::{Document, Fragment};
use kiln::realtime::{Bus, LocalBus, Message as BusMessage};
use kiln::test::{TestClient, TestWebSocket};
use kiln::ws::{CloseCode, Message};
use kiln::{App, AppService, Csrf, Key, Rejection, RequestContext, Route, State, html, live_html};
use live_support::{Big, WAIT, token_of};
use serde::{Deserialize, Serialize};
use serde_json::Value;

#[derive(Route)]
#[route("/counter/{id}")]
struct CounterPage {
    id: u32,
}

#[derive(Serialize, Deserialize)]
enum Event {
    Increment,
    Boom,
}

struct Counter {
    bus: LocalBus,
    count: i64,
}

impl LiveView for Counter {
    type AppState = LocalBus;
    type Route = CounterPage;
    type Event = Event;

    const LIMITS: Limits =
        Limits { max_event_bytes: 256, event_burst: 5, events_per_second: 1, max_errors: 3, ..Limits::DEFAULT };

    async fn mount(route: CounterPage, cx: RequestContext<'_, LocalBus>) -> Result<Self, Rejection> {
        Ok(Counter { bus: LocalBus::clone(cx.state()), count: i64::from(route.id) * 100 })
    }

    fn connected(&mut self, socket: &mut LiveSocket<Self>) {
        socket.subscribe::<BusMessage>(self.bus.subscribe("counter"));
    }

    fn handle(&mut self, event: Event, _: &mut LiveSocket<Self>) {
        match event {
            Event::Increment => self.count += 1,
            Event::Boom => panic!("the view broke"),
        }
    }

    fn render(&self) -> Live<Event> {
        live_html! {
            p { "Count: " (self.count) }
            button type="button" on:click=(Event::Increment) { "+1" }
        }
    }
}

impl HandleInfo<BusMessage> for Counter {
    fn handle_info(&mut self, message: BusMessage, _: &mut LiveSocket<Self>) {
        self.count = message.payload().parse().unwrap_or(-1);
    }
}

#[derive(Route)]
#[route(POST, "/counter/publish")]
struct Publish;

async fn publish(_: Publish, bus: State<LocalBus>) -> &'static str {
    bus.publish("counter", "41").await.expect("published");
    "published"
}

/// A view whose pushes never pause: each one starts the next, until the page clicks.
#[derive(Route)]
#[route("/busy")]
struct BusyPage;

struct Busy {
    clicked: bool,
}

/// The next push, ready at once.
struct Again;

impl LiveView for Busy {
    type AppState = LocalBus;
    type Route = BusyPage;
    type Event = Event;

    async fn mount(_: BusyPage, _: RequestContext<'_, LocalBus>) -> Result<Self, Rejection> {
        Ok(Busy { clicked: false })
    }

    fn connected(&mut self, socket: &mut LiveSocket<Self>) {
        socket.spawn(async { Again });
    }

    fn handle(&mut self, _: Event, _: &mut LiveSocket<Self>) {
        self.clicked = true;
    }

    fn render(&self) -> Live<Event> {
        live_html! { p { (if self.clicked { "clicked" } else { "waiting" }) } }
    }
}

impl HandleInfo<Again> for Busy {
    fn handle_info(&mut self, Again: Again, socket: &mut LiveSocket<Self>) {
        if !self.clicked {
            socket.spawn(async { Again });
        }
    }
}

/// A view whose tokens expire as they are made.
#[derive(Route)]
#[route("/brief")]
struct BriefPage;

struct Brief;

impl LiveView for Brief {
    type AppState = LocalBus;
    type Route = BriefPage;
    type Event = Event;

    const LIMITS: Limits = Limits { token_ttl: Duration::ZERO, ..Limits::DEFAULT };

    async fn mount(_: BriefPage, _: RequestContext<'_, LocalBus>) -> Result<Self, Rejection> {
        Ok(Brief)
    }

    fn handle(&mut self, _: Event, _: &mut LiveSocket<Self>) {}

    fn render(&self) -> Live<Event> {
        live_html! { p { "brief" } }
    }
}

/// A view driven by its timers: a tick every 5 ms, and one "done" after the third.
#[derive(Route)]
#[route("/clock")]
struct ClockPage;

struct Clock {
    ticks: u32,
    done: bool,
}

#[derive(Clone)]
struct Tick;

struct Done;

impl LiveView for Clock {
    type AppState = LocalBus;
    type Route = ClockPage;
    type Event = Event;

    async fn mount(_: ClockPage, _: RequestContext<'_, LocalBus>) -> Result<Self, Rejection> {
        Ok(Clock { ticks: 0, done: false })
    }

    fn connected(&mut self, socket: &mut LiveSocket<Self>) {
        socket.every(Duration::from_millis(5), Tick);
        socket.after(Duration::from_millis(50), Done);
    }

    fn handle(&mut self, _: Event, _: &mut LiveSocket<Self>) {}

    fn render(&self) -> Live<Event> {
        live_html! { p { (self.ticks) } @if self.done { p { "done" } } }
    }
}

impl HandleInfo<Tick> for Clock {
    fn handle_info(&mut self, Tick: Tick, _: &mut LiveSocket<Self>) {
        self.ticks += 1;
    }
}

impl HandleInfo<Done> for Clock {
    fn handle_info(&mut self, Done: Done, _: &mut LiveSocket<Self>) {
        self.done = true;
    }
}

/// A view whose events start work to await: an answer that waits for a bus message
/// (as a query waits for its database), and work that panics.
#[derive(Route)]
#[route("/tasks")]
struct TasksPage;

#[derive(Serialize, Deserialize)]
enum TaskEvent {
    Ask,
    Increment,
    Explode,
}

struct Tasks {
    bus: LocalBus,
    count: u32,
    answer: String,
}

/// What the work an `Ask` started came back with.
struct Answered(String);

impl LiveView for Tasks {
    type AppState = LocalBus;
    type Route = TasksPage;
    type Event = TaskEvent;

    async fn mount(_: TasksPage, cx: RequestContext<'_, LocalBus>) -> Result<Self, Rejection> {
        Ok(Tasks { bus: LocalBus::clone(cx.state()), count: 0, answer: "none".to_owned() })
    }

    fn handle(&mut self, event: TaskEvent, socket: &mut LiveSocket<Self>) {
        match event {
            TaskEvent::Ask => {
                self.answer = "waiting".to_owned();
                // Subscribed now, so that nothing published after the event is missed.
                let mut answer = self.bus.subscribe("counter");
                socket.spawn(async move {
                    let message = answer.recv().await.expect("the bus stays").expect("not lagged");
                    Answered(message.payload().to_owned())
                });
            }
            TaskEvent::Increment => self.count += 1,
            TaskEvent::Explode => socket.spawn(async {
                tokio::task::yield_now().await;
                broken()
            }),
        }
    }

    fn render(&self) -> Live<TaskEvent> {
        live_html! { p { (self.count) } p { (self.answer) } }
    }
}

/// Work that fails as it ends.
fn broken() -> Answered {
    panic!("the work broke")
}

impl HandleInfo<Answered> for Tasks {
    fn handle_info(&mut self, Answered(answer): Answered, _: &mut LiveSocket<Self>) {
        self.answer = answer;
    }
}

/// A page of the app's own that embeds the counter of `/counter/4`.
#[derive(Route)]
#[route("/embedding")]
struct Embedding;

async fn embedding(_: Embedding, embed: Embed, csrf: Csrf, bus: State<LocalBus>) -> (Csrf, Fragment<Document>) {
    let counter = Counter { bus: LocalBus::clone(&bus), count: 400 };
    let view = embed.view(&counter, &CounterPage { id: 4 }, &csrf);
    (
        csrf,
        html! { html lang="en" { head { meta charset="utf-8"; title { "Embedding" } } body { h1 { "Mine" } (view) } } },
    )
}

fn client() -> TestClient<AppService<LocalBus>> {
    let bus = Bus::new();
    let app = App::new(move |_| bus.attach())
        .secret_key(Key::generate())
        .live::<Counter>()
        .live::<Big>()
        .live::<Brief>()
        .live::<Clock>()
        .live::<Tasks>()
        .live::<Busy>()
        .route(publish)
        .route(embedding);
    TestClient::new(app).keep_cookies()
}

/// Opens the socket of `page` with `token`, as the client script does.
fn connect(client: &mut TestClient<AppService<LocalBus>>, page: &str, token: &str) -> Result<TestWebSocket, u16> {
    client
        .request("GET", page)
        .header("Sec-WebSocket-Protocol", &format!("kiln-live, {token}"))
        .websocket()
        .map_err(|refused| refused.status().as_u16())
}

/// The next message as sent: JSON, or a leaf message (`slot=text`).
fn next_text(socket: &mut TestWebSocket) -> String {
    match socket.recv(WAIT).expect("a message in time") {
        Some(Message::Text(text)) => text.to_string(),
        other => panic!("expected a text message, got {other:?}"),
    }
}

fn next_json(socket: &mut TestWebSocket) -> Value {
    let text = next_text(socket);
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("JSON: {e}: {text}"))
}

fn closed_with(socket: &mut TestWebSocket) -> Option<CloseCode> {
    while socket.recv(WAIT).expect("the socket ends in time").is_some() {}
    socket.close_frame().map(|frame| frame.code)
}

#[test]
fn live_socket_mounts_with_statics_and_a_click_sends_one_slot() {
    let mut client = client();
    let token = token_of(&mut client, "/counter/1");
    let mut socket = connect(&mut client, "/counter/1", &token).expect("the page's token opens its socket");
    assert_eq!(socket.header("sec-websocket-protocol"), Some("kiln-live"));
    let mount = next_json(&mut socket);
    assert!(mount["f"].as_str().is_some_and(|f| f.len() == 16), "{mount}");
    assert!(mount["s"].as_array().is_some_and(|s| s[0] == "<p>Count: "), "{mount}");
    assert_eq!(mount["0"], "100", "mounted again from the socket's route: {mount}");

    socket.send(r#"{"event":"Increment"}"#);
    assert_eq!(next_text(&mut socket), "0=101");
    assert_eq!(socket.close(CloseCode::NORMAL, "bye", WAIT).unwrap().map(|f| f.code), Some(CloseCode::NORMAL));
}

#[test]
fn live_socket_delivers_a_bus_message_published_by_another_request() {
    let mut client = client();
    let token = token_of(&mut client, "/counter/2");
    let mut socket = connect(&mut client, "/counter/2", &token).unwrap();
    next_json(&mut socket);
    assert_eq!(client.request("POST", &Publish).send().text(), "published");
    assert_eq!(next_text(&mut socket), "0=41");
}

#[test]
fn live_socket_delivers_timers_set_when_connected() {
    let mut client = client();
    let token = token_of(&mut client, "/clock");
    let mut socket = connect(&mut client, "/clock", &token).unwrap();
    assert_eq!(next_json(&mut socket)["0"], "0");
    let mut ticks = Vec::new();
    let mut done = false;
    while !done || ticks.len() < 3 {
        let message = next_text(&mut socket);
        let diff: Value = match message.strip_prefix("0=") {
            Some(count) => Value::from_iter([("0".to_owned(), Value::from(count))]),
            None => serde_json::from_str(&message).expect("JSON"),
        };
        if let Some(count) = diff["0"].as_str() {
            ticks.push(count.parse::<u32>().unwrap());
        }
        done |= diff["1"]["s"] == serde_json::json!(["<p>done</p>"]);
    }
    assert!(ticks.windows(2).all(|w| w[0] < w[1]), "ticks count up: {ticks:?}");
}

#[test]
fn live_socket_refuses_forged_expired_and_misused_tokens() {
    let mut client = client();
    let token = token_of(&mut client, "/counter/1");
    let big = token_of(&mut client, "/big");
    let brief = token_of(&mut client, "/brief");
    let mut forged = token.clone();
    let last = if forged.ends_with('0') { "1" } else { "0" };
    forged.replace_range(forged.len() - 1.., last);
    let cases = [
        ("/counter/1", forged.as_str(), "a forged token"),
        ("/counter/1", "", "no token"),
        ("/counter/1", big.as_str(), "another view's token"),
        ("/counter/2", token.as_str(), "another page's token"),
        ("/brief", brief.as_str(), "an expired token"),
    ];
    for (page, token, what) in cases {
        assert_eq!(connect(&mut client, page, token).err(), Some(403), "{what}");
    }
    // Another visitor (no cookie of this one) cannot use this visitor's token.
    let mut stranger = TestClient::new(App::new(|_| Bus::new().attach()).secret_key(Key::generate()).live::<Counter>());
    assert_eq!(connect(&mut stranger, "/counter/1", &token).err(), Some(403), "another app's key");
    let (mut ann, mut bob) = two_visitors();
    let token = token_of(&mut ann, "/counter/1");
    assert!(connect(&mut ann, "/counter/1", &token).is_ok(), "the visitor's own token");
    assert_eq!(connect(&mut bob, "/counter/1", &token).err(), Some(403), "another visitor's token");
    // The server still serves pages and sockets.
    let token = token_of(&mut client, "/counter/1");
    assert!(connect(&mut client, "/counter/1", &token).is_ok());
}

/// Two visitors of one app (one key): each keeps its own cookies.
fn two_visitors() -> (TestClient<AppService<LocalBus>>, TestClient<AppService<LocalBus>>) {
    let key = Key::generate();
    let app = |key: Key| {
        let bus = Bus::new();
        App::new(move |_| bus.attach()).secret_key(key).live::<Counter>()
    };
    (TestClient::new(app(key.clone())).keep_cookies(), TestClient::new(app(key)).keep_cookies())
}

#[test]
fn live_socket_answers_unknown_events_with_errors_then_closes() {
    let mut client = client();
    let token = token_of(&mut client, "/counter/1");
    let mut socket = connect(&mut client, "/counter/1", &token).unwrap();
    next_json(&mut socket);
    for bad in [r#"{"event":"Decrement"}"#, "not json"] {
        socket.send(bad);
        let reply = next_json(&mut socket);
        assert!(reply["error"].as_str().is_some_and(|e| e.starts_with("invalid event")), "{reply}");
    }
    socket.send(r#"{"event":{"Increment":1}}"#);
    assert_eq!(closed_with(&mut socket), Some(CloseCode::POLICY_VIOLATION));
}

#[test]
fn live_socket_closes_on_an_oversized_event() {
    let mut client = client();
    let token = token_of(&mut client, "/counter/1");
    let mut socket = connect(&mut client, "/counter/1", &token).unwrap();
    next_json(&mut socket);
    socket.send(format!(r#"{{"event":"Increment","pad":"{}"}}"#, "x".repeat(300)));
    assert_eq!(closed_with(&mut socket), Some(CloseCode::MESSAGE_TOO_BIG));
}

#[test]
fn live_socket_refuses_too_frequent_events() {
    let mut client = client();
    let token = token_of(&mut client, "/counter/1");
    let mut socket = connect(&mut client, "/counter/1", &token).unwrap();
    next_json(&mut socket);
    // A burst of 5, then one event a second: twenty at once overrun it (unless the
    // machine pauses for many seconds between two sends).
    for _ in 0..20 {
        socket.send(r#"{"event":"Increment"}"#);
    }
    let (mut diffs, mut refusals) = (0, 0);
    while diffs + refusals < 20 {
        let reply = next_text(&mut socket);
        if reply.starts_with('{') {
            assert_eq!(reply, r#"{"error":"too many events: slow down"}"#);
            refusals += 1;
        } else {
            diffs += 1;
        }
    }
    assert!((5..=15).contains(&diffs), "{diffs} events taken, {refusals} refused");
    // Refused, not closed: once the rate allows (a second), events are taken again.
    std::thread::sleep(Duration::from_millis(1100));
    socket.send(r#"{"event":"Increment"}"#);
    assert_eq!(next_text(&mut socket), format!("0={}", 100 + diffs + 1));
}

#[test]
fn live_socket_coalesces_updates_for_a_client_that_stops_reading() {
    let mut client = client();
    let token = token_of(&mut client, "/big");
    let mut socket = connect(&mut client, "/big", &token).unwrap();
    next_json(&mut socket);
    // 500 changes of 8 KiB each: 4 MiB if each were queued for a page that reads
    // nothing meanwhile.
    let updates = 500;
    for _ in 0..updates {
        socket.send(r#"{"event":"Increment"}"#);
    }
    let latest = Value::String(updates.to_string());
    let mut received = 0;
    loop {
        let diff = next_json(&mut socket);
        received += 1;
        if diff["0"] == latest {
            break;
        }
    }
    // What the pipe to the page holds (1 MiB), what the socket may keep unsent
    // (64 KiB), then one diff to the latest state.
    let bound = ((1 << 20) + kiln::live::MAX_UNSENT_BYTES) / (8 << 10) + 8;
    assert!(received <= bound, "{received} messages for {updates} updates (bound {bound})");
    socket.send(r#"{"event":"Increment"}"#);
    assert_eq!(next_json(&mut socket)["0"], (updates + 1).to_string(), "the socket goes on");
}

#[test]
fn live_socket_panic_in_handle_closes_1011_and_the_server_still_serves() {
    let mut client = client();
    let token = token_of(&mut client, "/counter/3");
    let mut socket = connect(&mut client, "/counter/3", &token).unwrap();
    next_json(&mut socket);
    socket.send(r#"{"event":"Boom"}"#);
    assert_eq!(closed_with(&mut socket), Some(CloseCode::INTERNAL_ERROR));

    let token = token_of(&mut client, "/counter/3");
    let mut socket = connect(&mut client, "/counter/3", &token).unwrap();
    assert_eq!(next_json(&mut socket)["0"], "300", "a new socket mounts afresh");
    socket.send(r#"{"event":"Increment"}"#);
    assert_eq!(next_text(&mut socket), "0=301");
}

#[test]
fn live_socket_runs_work_an_event_spawns_and_stays_responsive_meanwhile() {
    let mut client = client();
    let token = token_of(&mut client, "/tasks");
    let mut socket = connect(&mut client, "/tasks", &token).unwrap();
    next_json(&mut socket);
    socket.send(r#"{"event":"Ask"}"#);
    assert_eq!(next_text(&mut socket), "1=waiting");
    // The work waits on the bus; the socket goes on taking events.
    socket.send(r#"{"event":"Increment"}"#);
    assert_eq!(next_text(&mut socket), "0=1");
    assert_eq!(client.request("POST", &Publish).send().text(), "published");
    assert_eq!(next_text(&mut socket), "1=41", "the work's result comes back as a message");
    socket.send(r#"{"event":"Increment"}"#);
    assert_eq!(next_text(&mut socket), "0=2");
}

#[test]
fn live_socket_panic_in_spawned_work_closes_1011_and_the_server_still_serves() {
    let mut client = client();
    let token = token_of(&mut client, "/tasks");
    let mut socket = connect(&mut client, "/tasks", &token).unwrap();
    next_json(&mut socket);
    socket.send(r#"{"event":"Explode"}"#);
    assert_eq!(closed_with(&mut socket), Some(CloseCode::INTERNAL_ERROR));

    let token = token_of(&mut client, "/tasks");
    let mut socket = connect(&mut client, "/tasks", &token).unwrap();
    next_json(&mut socket);
    socket.send(r#"{"event":"Increment"}"#);
    assert_eq!(next_text(&mut socket), "0=1");
}

#[test]
fn live_socket_opens_for_a_view_embedded_in_a_page_of_the_apps_own() {
    let mut client = client();
    let page = client.get("/embedding").text().to_owned();
    assert!(page.contains("<h1>Mine</h1><div data-kiln-live="), "{page}");
    assert!(page.contains(r#"data-kiln-path="/counter/4""#) && page.contains("<p>Count: 400</p>"), "{page}");
    let token = page.split("data-kiln-token=\"").nth(1).and_then(|t| t.split('"').next()).unwrap().to_owned();
    assert_eq!(connect(&mut client, "/counter/5", &token).err(), Some(403), "for its own route only");
    let mut socket = connect(&mut client, "/counter/4", &token).expect("the embedded view's socket");
    assert_eq!(next_json(&mut socket)["0"], "400");
    socket.send(r#"{"event":"Increment"}"#);
    assert_eq!(next_text(&mut socket), "0=401");
}

#[test]
fn live_socket_reads_the_page_between_pushes_that_never_pause() {
    let mut client = client();
    let token = token_of(&mut client, "/busy");
    let mut socket = connect(&mut client, "/busy", &token).unwrap();
    assert_eq!(next_json(&mut socket)["0"], "waiting");
    socket.send(r#"{"event":"Increment"}"#);
    assert_eq!(next_text(&mut socket), "0=clicked");
}
