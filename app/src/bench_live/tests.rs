//! The benchmark's pages in process: a trigger reaches an open view as that change
//! only (one slot, one row's cell, one inserted line), and the floor's socket is sent
//! the very same bytes for the same trigger.

use std::time::Duration;

use kiln::realtime::{Bus, LocalBus};
use kiln::test::{TestClient, TestWebSocket};
use kiln::ws::Message;
use kiln::{App, AppService, Key};
use serde_json::Value;

use super::BenchState;

/// A hang guard only: every wait ends as soon as its message arrives.
const WAIT: Duration = Duration::from_secs(10);

impl BenchState for LocalBus {
    fn bus(&self) -> &LocalBus {
        self
    }
}

fn client() -> TestClient<AppService<LocalBus>> {
    let bus = Bus::new();
    let app = App::new(move |_| bus.attach()).secret_key(Key::generate()).mount(super::mount);
    TestClient::new(app).keep_cookies()
}

/// Opens the view at `path` as the client script does: the first answer's token as a subprotocol.
fn open_view(client: &mut TestClient<AppService<LocalBus>>, path: &str) -> TestWebSocket {
    let html = client.get(path).text();
    let token = html.split_once("data-kiln-token=\"").expect("a live page has a token").1;
    let token = token.split_once('"').expect("the token ends").0.to_owned();
    let socket = client.request("GET", path).header("Sec-WebSocket-Protocol", &format!("kiln-live, {token}"));
    socket.websocket().unwrap_or_else(|refused| panic!("{path}: {}", refused.text()))
}

fn open_floor(client: &mut TestClient<AppService<LocalBus>>, page: &str) -> TestWebSocket {
    let socket = client.request("GET", format!("/bench/live/floor/{page}")).websocket();
    socket.unwrap_or_else(|refused| panic!("the floor of {page}: {}", refused.text()))
}

fn next_text(socket: &mut TestWebSocket) -> String {
    match socket.recv(WAIT).expect("a message in time") {
        Some(Message::Text(text)) => text,
        other => panic!("expected a text message, got {other:?}"),
    }
}

fn post(client: &mut TestClient<AppService<LocalBus>>, path: &str, body: &str) -> String {
    let answer = client.request("POST", path).body(body).send();
    assert_eq!(answer.status().as_u16(), 200, "{path}: {}", answer.text());
    answer.text().to_owned()
}

/// The one entry of a JSON object, its key and value.
fn only(json: &Value) -> (&str, &Value) {
    let object = json.as_object().unwrap_or_else(|| panic!("an object: {json}"));
    assert_eq!(object.len(), 1, "one entry: {json}");
    object.iter().next().map(|(k, v)| (k.as_str(), v)).expect("one entry")
}

/// Triggers `page` once, for the view and for the floor: the view's message, which
/// the floor's socket must have been sent byte for byte.
fn trigger_both(page: &str, trigger: &str, body: &str) -> (String, String) {
    let mut client = client();
    let mut view = open_view(&mut client, &format!("/bench/live/{page}"));
    let mount = next_text(&mut view);
    assert!(mount.contains("\"s\":"), "the mount message carries the statics: {mount}");
    let mut floor = open_floor(&mut client, page);
    let answer = post(&mut client, &format!("/bench/live/{page}/{trigger}"), body);
    let sent = next_text(&mut view);
    let floor_answer = post(&mut client, &format!("/bench/live/floor/{page}/{trigger}"), body);
    assert_eq!(next_text(&mut floor), sent, "the floor sends the view's bytes");
    assert_eq!(floor_answer, sent);
    (answer, sent)
}

#[test]
fn a_bump_reaches_an_open_counter_as_its_one_slot_and_the_floor_sends_the_same_bytes() {
    let (count, sent) = trigger_both("counter", "bump", "");
    // A leaf message: the slot's index, `=`, the count.
    let (slot, text) = sent.split_once('=').expect("a leaf message");
    assert!(slot.parse::<usize>().is_ok(), "{sent}");
    assert_eq!(text, count.trim(), "{sent}");
}

#[test]
fn a_change_reaches_an_open_table_as_one_rows_cell_and_the_floor_sends_the_same_bytes() {
    let (change, sent) = trigger_both("table", "change", "");
    let (id, score) = change.trim().split_once(' ').expect("id score");
    // A leaf message through the row's key: `list slot.key.cell slot=score`, no move.
    let (path, text) = sent.split_once('=').expect("a leaf message");
    let steps: Vec<&str> = path.split('.').collect();
    assert_eq!(steps.len(), 3, "{sent}");
    assert_eq!(steps[1], id, "{sent}");
    assert_eq!(text, score, "the score's cell only: {sent}");
}

#[test]
fn a_line_reaches_an_open_chat_as_one_keyed_insert_and_the_floor_sends_the_same_bytes() {
    let (id, sent) = trigger_both("chat", "say", "hello, room");
    let diff: Value = serde_json::from_str(&sent).expect("JSON");
    let (_, list) = only(&diff);
    let (op, ops) = only(list);
    assert_eq!(op, "o", "{sent}");
    assert_eq!(ops[0][0], "i", "an insert: {sent}");
    assert_eq!(ops[0][1], id.trim(), "keyed by the line's id: {sent}");
    assert_eq!(ops[0][3], serde_json::json!(["hello, room"]), "{sent}");
}

#[test]
fn the_floor_refuses_unknown_pages_and_triggers_and_the_chat_an_overlong_line() {
    let mut client = client();
    let cases = [
        ("/bench/live/floor/nothing/bump", "", 404),
        ("/bench/live/floor/counter/say", "", 404),
        ("/bench/live/chat/say", "", 400),
        ("/bench/live/floor/chat/say", &"x".repeat(201), 400),
    ];
    for (path, body, status) in cases {
        let answer = client.request("POST", path).body(body).send();
        assert_eq!(answer.status().as_u16(), status, "{path}: {}", answer.text());
    }
    let refused = client.request("GET", "/bench/live/floor/nothing").websocket().map(drop);
    assert_eq!(refused.map_err(|r| r.status().as_u16()), Err(404));
}

#[test]
fn render_keys_follow_the_state_each_view_renders_and_a_readers_sort_and_filter() {
    use kiln::live::{LiveView, Mounted};

    use super::table::{Column, Event, Filter, Scores, TableView};

    let bus = Bus::new().attach();
    let view = |scores: Scores| Mounted::new(TableView::<LocalBus>::new(bus.clone(), scores)).0;
    let key = |view: &Mounted<TableView<LocalBus>>| view.view().render_key();
    let (mut a, mut b) = (view(Scores::new()), view(Scores::new()));
    assert_eq!(key(&a), key(&b), "one state, one key");
    let (id, score) = Scores::new().change();
    assert!(!a.update(|a| a.hear(id, score, 1)).is_empty());
    assert_ne!(key(&a), key(&b), "a change heard is a new key");
    b.update(|b| b.hear(id, score, 1));
    assert_eq!(key(&a), key(&b));
    assert_eq!(a.html(), b.html());
    b.update(|b| b.hear(id, score, 1));
    assert_eq!(key(&a), key(&b), "a change heard twice is taken once");
    let mut sorted = view(Scores::new());
    sorted.update(|s| s.hear(id, score, 1));
    sorted.event(Event::Sort(Column::Score));
    assert_ne!(key(&sorted), key(&a), "the reader's sort is in the key");
    sorted.event(Event::Sort(Column::Id));
    assert_eq!(key(&sorted), key(&a), "and only what it renders");
    sorted.event(Event::Filter(Filter { q: "player-1".to_owned() }));
    assert_ne!(key(&sorted), key(&a), "the reader's filter is in the key");
}
