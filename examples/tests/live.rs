//! The live examples, in process through `kiln::test`: each page reads without
//! JavaScript, links the client script, and its socket (opened with the page's token,
//! as the script does) sends the mount message and then only what changed.

#[allow(dead_code)]
#[path = "../live_chat.rs"]
mod live_chat;
#[allow(dead_code)]
#[path = "../live_counter.rs"]
mod live_counter;
#[allow(dead_code)]
#[path = "../live_table.rs"]
mod live_table;

use std::time::Duration;

use kiln::test::{TestClient, TestWebSocket};
use kiln::ws::Message;
use kiln::{AppService, Key};
use serde_json::{Value, json};

/// A hang guard for what a socket should send at once.
const WAIT: Duration = Duration::from_secs(10);

/// The value of the first `name="…"` attribute in `html`.
fn attribute<'a>(html: &'a str, name: &str) -> &'a str {
    let rest = html.split_once(&format!("{name}=\"")).unwrap_or_else(|| panic!("no {name} in {html}")).1;
    rest.split_once('"').expect("the attribute ends").0
}

/// Opens the socket of the page at `path`, as the client script does.
fn connect<S: kiln::http::Service>(client: &mut TestClient<S>, path: &str) -> TestWebSocket {
    let page = client.get(path).text();
    let token = attribute(&page, "data-kiln-token").to_owned();
    let protocols = format!("kiln-live, {token}");
    client.request("GET", path).header("Sec-WebSocket-Protocol", &protocols).websocket().expect("101")
}

/// The next message as sent: JSON, or a leaf message (`slot=text`).
fn next_text(socket: &mut TestWebSocket) -> String {
    match socket.recv(WAIT).expect("in time") {
        Some(Message::Text(text)) => text.to_string(),
        other => panic!("expected a text message, got {other:?}"),
    }
}

fn next_json(socket: &mut TestWebSocket) -> Value {
    let text = next_text(socket);
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("JSON: {e}: {text}"))
}

#[test]
fn live_counter_reads_without_javascript_and_links_its_script() {
    let mut client: TestClient<AppService<()>> = TestClient::new(live_counter::app(Key::generate()));
    let page = client.get("/counter").text();
    assert!(page.contains("<p id=\"count\">Count: 0</p>"), "{page}");
    assert!(!page.contains("id=\"reset\""), "no reset at zero: {page}");
    let script = client.get(attribute(&page, "<script src"));
    assert_eq!(script.status(), 200);
    assert_eq!(script.header("content-type"), Some("text/javascript; charset=utf-8"));
    assert_eq!(script.header("cache-control"), Some(kiln::IMMUTABLE));
    assert!(script.text().contains("data-kiln-live"));
}

#[test]
fn live_counter_click_sends_the_count_only() {
    let mut client = TestClient::new(live_counter::app(Key::generate())).keep_cookies();
    let mut socket = connect(&mut client, "/counter");
    let mount = next_json(&mut socket);
    assert_eq!(mount["0"], "0", "{mount}");
    socket.send(r#"{"event":"Increment"}"#);
    let diff = next_json(&mut socket);
    assert_eq!(diff["0"], "1", "{diff}");
    // The reset button appears: a new branch, sent with its statics once.
    assert!(diff["3"]["s"][0].as_str().is_some_and(|s| s.contains("id=\"reset\"")), "{diff}");
    socket.send(r#"{"event":"Increment"}"#);
    assert_eq!(next_text(&mut socket), "0=2", "one slot: a leaf message");
}

#[test]
fn live_chat_line_said_in_one_page_reaches_both() {
    let mut client = TestClient::new(live_chat::app(Key::generate())).keep_cookies();
    let mut ann = connect(&mut client, "/chat/lobby");
    let mut bob = connect(&mut client, "/chat/lobby");
    for socket in [&mut ann, &mut bob] {
        assert_eq!(next_json(socket)["1"]["d"], json!([]), "no lines yet");
    }
    ann.send(r#"{"event":"Say","form":"text=hello+bob"}"#);
    for socket in [&mut ann, &mut bob] {
        let diff = next_json(socket);
        let op = &diff["1"]["o"][0];
        assert_eq!((&op[0], &op[2], &op[3]), (&json!("i"), &json!(null), &json!(["hello bob"])), "{diff}");
    }
    // A page of another room hears nothing of it; an empty line is not said.
    let mut other = connect(&mut client, "/chat/elsewhere");
    next_json(&mut other);
    bob.send(r#"{"event":"Say","form":"text=+"}"#);
    bob.send(r#"{"event":"Say","form":"text=hi+ann"}"#);
    let diff = next_json(&mut ann);
    assert_eq!(diff["1"]["o"][0][3], json!(["hi ann"]), "{diff}");
    assert!(other.recv(Duration::from_millis(50)).is_err(), "another room's page heard the lobby");
}

#[test]
fn live_table_sorts_as_moves_filters_as_removes_and_pushes_one_row() {
    let mut client = TestClient::new(live_table::app(Key::generate())).keep_cookies();
    let mut socket = connect(&mut client, "/players");
    let mount = next_json(&mut socket);
    let rows = mount["3"]["d"].as_array().expect("the rows");
    assert_eq!(rows.len(), 100);
    assert_eq!(mount["3"]["k"][0], "0", "sorted by name first");

    socket.send(r#"{"event":{"Sort":"Score"}}"#);
    let sorted = next_json(&mut socket);
    let ops = sorted["3"]["o"].as_array().expect("moves");
    assert!(!ops.is_empty() && ops.iter().all(|op| op[0] == "m" && op.as_array().unwrap().len() == 3), "{sorted}");
    assert!(sorted["3"].get("d").is_none(), "never the table whole: {sorted}");

    socket.send(r#"{"event":"Filter","form":"q=player-4"}"#);
    let filtered = next_json(&mut socket);
    assert_eq!(filtered["3"]["r"].as_array().map(Vec::len), Some(90), "player-40 to player-49 stay: {filtered}");
    assert_eq!(filtered["0"], "player-4", "the field's value: {filtered}");

    // Player 42 is on screen: its score cell changes, and (sorted by score) it moves
    // to the top; nothing else is sent.
    assert_eq!(client.request("POST", "/players/42/score/99").send().text(), "posted");
    let pushed = next_json(&mut socket);
    let row = json!({ "42": { "1": " class=\"score\"", "2": "99" } });
    assert_eq!(pushed, json!({ "3": { "o": [["m", "42", null]], "u": row } }), "{pushed}");
    assert_eq!(client.request("POST", "/players/100/score/1").send().status(), 404);
}
