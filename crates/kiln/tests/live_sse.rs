//! A live view over an event stream (where a proxy blocks WebSocket), in process
//! through `kiln::test`: the page's path asked for `text/event-stream` with the page's
//! token is the view's stream (its id, the mount message, the diffs), events come as
//! POSTs naming the stream, and what a page must not do (forge a token, post for a
//! stream it did not open, send unknown, oversized or too many events, stop reading)
//! is refused or bounded.

mod live_support;

use std::time::Duration;

use kiln::live::{Limits, Live, LiveSocket, LiveView};
use kiln::realtime::{Bus, LocalBus};
use kiln::test::{TestClient, TestStream};
use kiln::{App, AppService, Key, Rejection, RequestContext, Route, live_html};
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
}

struct Counter {
    count: i64,
}

impl LiveView for Counter {
    type AppState = LocalBus;
    type Route = CounterPage;
    type Event = Event;

    const LIMITS: Limits =
        Limits { max_event_bytes: 256, event_burst: 5, events_per_second: 1, max_errors: 3, ..Limits::DEFAULT };

    async fn mount(route: CounterPage, _: RequestContext<'_, LocalBus>) -> Result<Self, Rejection> {
        Ok(Counter { count: i64::from(route.id) * 100 })
    }

    fn handle(&mut self, Event::Increment: Event, _: &mut LiveSocket<Self>) {
        self.count += 1;
    }

    fn render(&self) -> Live<Event> {
        live_html! {
            p { "Count: " (self.count) }
            button type="button" on:click=(Event::Increment) { "+1" }
        }
    }
}

/// A view showing the text it was last sent, for texts a leaf message must carry.
#[derive(Route)]
#[route("/note")]
struct NotePage;

#[derive(Serialize, Deserialize)]
enum NoteEvent {
    Write(String),
}

struct Note {
    text: String,
}

impl LiveView for Note {
    type AppState = LocalBus;
    type Route = NotePage;
    type Event = NoteEvent;

    async fn mount(_: NotePage, _: RequestContext<'_, LocalBus>) -> Result<Self, Rejection> {
        Ok(Note { text: String::new() })
    }

    fn handle(&mut self, NoteEvent::Write(text): NoteEvent, _: &mut LiveSocket<Self>) {
        self.text = text;
    }

    fn render(&self) -> Live<NoteEvent> {
        live_html! { pre { (self.text) } }
    }
}

type Client = TestClient<AppService<LocalBus>>;

fn app(key: Key) -> App<LocalBus> {
    let bus = Bus::new();
    App::new(move |_| bus.attach()).secret_key(key).live::<Counter>().live::<Big>().live::<Note>()
}

fn client() -> Client {
    TestClient::new(app(Key::generate())).keep_cookies()
}

/// A page's open event stream and its id.
struct Stream {
    events: TestStream,
    id: String,
}

/// Opens the event stream of `page` with `token`, as the client script does.
fn open(client: &mut Client, page: &str, token: &str) -> Result<Stream, u16> {
    let mut events =
        client.request("GET", page).header("Accept", "text/event-stream").header("Kiln-Live-Token", token).open();
    if events.status() != 200 {
        return Err(events.status().as_u16());
    }
    assert_eq!(events.header("content-type"), Some("text/event-stream"));
    let first = events.next_event(WAIT).expect("the stream's id in time").expect("an event");
    assert_eq!(first.event(), "kiln-stream");
    let id = first.data().to_owned();
    Ok(Stream { events, id })
}

/// Posts `event` to the stream `id` of `page`, as the client script does.
fn post(client: &mut Client, page: &str, token: &str, id: &str, event: &str) -> u16 {
    client
        .request("POST", page)
        .header("Kiln-Live-Token", token)
        .header("Kiln-Live-Stream", id)
        .header("Content-Type", "application/json")
        .body(event)
        .send()
        .status()
        .as_u16()
}

/// The next message of the stream as sent (JSON, or a leaf message), with its event
/// type.
fn next_text(stream: &mut Stream) -> (String, String) {
    let event = stream.events.next_event(WAIT).expect("a message in time").expect("the stream is open");
    (event.event().to_owned(), event.data().to_owned())
}

fn next(stream: &mut Stream) -> (String, Value) {
    let (kind, text) = next_text(stream);
    let json = serde_json::from_str(&text).unwrap_or_else(|e| panic!("JSON: {e}: {text}"));
    (kind, json)
}

fn next_json(stream: &mut Stream) -> Value {
    let (kind, json) = next(stream);
    assert_eq!(kind, "message", "{json}");
    json
}

/// The next message, a `message` event.
fn next_message(stream: &mut Stream) -> String {
    let (kind, text) = next_text(stream);
    assert_eq!(kind, "message", "{text}");
    text
}

/// The close code the stream ended with.
fn closed_with(stream: &mut Stream) -> u64 {
    loop {
        match next(stream) {
            (kind, json) if kind == "close" => {
                assert!(stream.events.next_event(WAIT).expect("the stream ends in time").is_none());
                return json["code"].as_u64().expect("a code");
            }
            _ => continue,
        }
    }
}

const INCREMENT: &str = r#"{"event":"Increment"}"#;

#[test]
fn live_sse_mounts_and_a_click_sends_one_slot() {
    let mut client = client();
    let token = token_of(&mut client, "/counter/1");
    let mut stream = open(&mut client, "/counter/1", &token).expect("the page's token opens its stream");
    assert_eq!(stream.id.len(), 64);
    let mount = next_json(&mut stream);
    assert!(mount["f"].as_str().is_some_and(|f| f.len() == 16), "{mount}");
    assert!(mount["s"].as_array().is_some_and(|s| s[0] == "<p>Count: "), "{mount}");
    assert_eq!(mount["0"], "100", "mounted again from the stream's route: {mount}");

    assert_eq!(post(&mut client, "/counter/1", &token, &stream.id, INCREMENT), 204);
    assert_eq!(next_message(&mut stream), "0=101");
}

#[test]
fn live_sse_carries_a_leaf_text_with_newlines_equals_and_quotes() {
    let mut client = client();
    let token = token_of(&mut client, "/note");
    let mut stream = open(&mut client, "/note", &token).unwrap();
    next_json(&mut stream);
    // Each line its own `data:` line (a blank one too), joined back with LF.
    for text in ["a=b.c", "one\ntwo\n\nfour\n", "{not json}", "'single'"] {
        let event = serde_json::json!({ "event": { "Write": text } }).to_string();
        assert_eq!(post(&mut client, "/note", &token, &stream.id, &event), 204);
        assert_eq!(next_message(&mut stream), format!("0={text}"));
    }
}

#[test]
fn live_sse_takes_an_event_posted_to_another_worker() {
    let key = Key::generate();
    let mut first = TestClient::new(app(key.clone())).keep_cookies();
    let token = token_of(&mut first, "/counter/2");
    let mut stream = open(&mut first, "/counter/2", &token).unwrap();
    next_json(&mut stream);
    // Another worker (its own runtime, its own copy of the app), the same visitor.
    let mut second = TestClient::new(app(key));
    let cookie = format!("kiln_csrf={}", first.cookie("kiln_csrf").expect("the visitor's cookie"));
    let status = second
        .request("POST", "/counter/2")
        .header("Cookie", &cookie)
        .header("Kiln-Live-Token", &token)
        .header("Kiln-Live-Stream", &stream.id)
        .body(INCREMENT)
        .send()
        .status();
    assert_eq!(status, 204);
    assert_eq!(next_message(&mut stream), "0=201");
}

#[test]
fn live_sse_refuses_forged_tokens_and_streams_of_others() {
    let mut client = client();
    let token = token_of(&mut client, "/counter/1");
    let other = token_of(&mut client, "/counter/2");
    let mut forged = token.clone();
    let last = if forged.ends_with('0') { "1" } else { "0" };
    forged.replace_range(forged.len() - 1.., last);
    // What another site's `EventSource` sends: the visitor's cookies, no token.
    let plain = client.request("GET", "/counter/1").header("Accept", "text/event-stream").open();
    assert_eq!(plain.status(), 403, "a stream without the token");
    for (token, what) in [(forged.as_str(), "a forged token"), (other.as_str(), "another page's token")] {
        assert_eq!(open(&mut client, "/counter/1", token).err(), Some(403), "{what}");
    }

    let mut stream = open(&mut client, "/counter/1", &token).unwrap();
    next_json(&mut stream);
    let id = stream.id.clone();
    let cases = [
        (forged.as_str(), id.as_str(), 403, "a forged token"),
        ("", id.as_str(), 403, "no token"),
        (token.as_str(), "0123", 404, "a stream not open"),
    ];
    for (token, id, status, what) in cases {
        assert_eq!(post(&mut client, "/counter/1", token, id, INCREMENT), status, "{what}");
    }
    // Another page of the same visitor, with its own valid token, cannot post to it.
    let mut mine = open(&mut client, "/counter/2", &other).unwrap();
    next_json(&mut mine);
    assert_eq!(post(&mut client, "/counter/2", &other, &id, INCREMENT), 404, "another page's stream");
    let missing = client.request("POST", "/counter/1").header("Kiln-Live-Token", &token).body(INCREMENT).send();
    assert_eq!(missing.status(), 400, "no stream named");
    // Another visitor (no cookie of this one) cannot use the token.
    let mut stranger = TestClient::new(app(Key::generate()));
    assert_eq!(post(&mut stranger, "/counter/1", &token, &id, INCREMENT), 403, "another visitor");

    // Nothing reached the view; it still takes the page's own events.
    assert_eq!(post(&mut client, "/counter/1", &token, &id, INCREMENT), 204);
    assert_eq!(next_message(&mut stream), "0=101");
}

#[test]
fn live_sse_answers_unknown_events_with_errors_then_closes() {
    let mut client = client();
    let token = token_of(&mut client, "/counter/1");
    let mut stream = open(&mut client, "/counter/1", &token).unwrap();
    next_json(&mut stream);
    for bad in [r#"{"event":"Decrement"}"#, "not json"] {
        assert_eq!(post(&mut client, "/counter/1", &token, &stream.id, bad), 204);
        let reply = next_json(&mut stream);
        assert!(reply["error"].as_str().is_some_and(|e| e.starts_with("invalid event")), "{reply}");
    }
    post(&mut client, "/counter/1", &token, &stream.id, r#"{"event":{"Increment":1}}"#);
    assert_eq!(closed_with(&mut stream), 1008);
    assert_eq!(post(&mut client, "/counter/1", &token, &stream.id, INCREMENT), 404, "the stream is gone");
}

#[test]
fn live_sse_closes_on_an_oversized_event() {
    let mut client = client();
    let token = token_of(&mut client, "/counter/1");
    let mut stream = open(&mut client, "/counter/1", &token).unwrap();
    next_json(&mut stream);
    let big = format!(r#"{{"event":"Increment","pad":"{}"}}"#, "x".repeat(300));
    assert_eq!(post(&mut client, "/counter/1", &token, &stream.id, &big), 413);
    assert_eq!(closed_with(&mut stream), 1009);
}

#[test]
fn live_sse_refuses_too_frequent_events() {
    let mut client = client();
    let token = token_of(&mut client, "/counter/1");
    let mut stream = open(&mut client, "/counter/1", &token).unwrap();
    next_json(&mut stream);
    // A burst of 5, then one event a second: the sixth at once is refused (unless the
    // machine pauses for a second between two posts).
    for n in 1..=5 {
        assert_eq!(post(&mut client, "/counter/1", &token, &stream.id, INCREMENT), 204);
        assert_eq!(next_message(&mut stream), format!("0={}", 100 + n));
    }
    assert_eq!(post(&mut client, "/counter/1", &token, &stream.id, INCREMENT), 204);
    assert_eq!(next_json(&mut stream), serde_json::json!({ "error": "too many events: slow down" }));
    // Refused, not closed: once the rate allows (a second), events are taken again.
    std::thread::sleep(Duration::from_millis(1100));
    assert_eq!(post(&mut client, "/counter/1", &token, &stream.id, INCREMENT), 204);
    assert_eq!(next_message(&mut stream), "0=106");
}

#[test]
fn live_sse_coalesces_updates_for_a_page_that_stops_reading() {
    let mut client = client();
    let token = token_of(&mut client, "/big");
    let mut stream = open(&mut client, "/big", &token).unwrap();
    // 500 changes of 8 KiB each, the stream unread meanwhile: 4 MiB if each were
    // queued.
    let updates = 500;
    for _ in 0..updates {
        assert_eq!(post(&mut client, "/big", &token, &stream.id, INCREMENT), 204);
    }
    let latest = Value::String(updates.to_string());
    let mut received = 0;
    loop {
        let message = next_json(&mut stream);
        received += 1;
        if message["0"] == latest {
            break;
        }
    }
    // What the stream may keep unsent (64 KiB), then one diff to the latest state.
    let bound = kiln::live::MAX_UNSENT_BYTES / (8 << 10) + 3;
    assert!(received <= bound, "{received} messages for {updates} updates (bound {bound})");
    assert_eq!(post(&mut client, "/big", &token, &stream.id, INCREMENT), 204);
    assert_eq!(next_json(&mut stream)["0"], (updates + 1).to_string(), "the stream goes on");
}
