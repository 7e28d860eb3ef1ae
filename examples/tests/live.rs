//! The live examples, in process through `kiln::test`: each page reads without
//! JavaScript, links the client script, and its socket (opened with the page's token,
//! as the script does) sends the mount message and then only what changed.

#[allow(dead_code)]
#[path = "../live_counter.rs"]
mod live_counter;

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

fn next_json(socket: &mut TestWebSocket) -> Value {
    match socket.recv(WAIT).expect("in time") {
        Some(Message::Text(text)) => serde_json::from_str(&text).expect("JSON"),
        other => panic!("expected a text message, got {other:?}"),
    }
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
    assert_eq!(next_json(&mut socket), json!({ "0": "2" }));
}
