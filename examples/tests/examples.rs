//! Each example's app, driven in-process through `kiln::test` (requests, event
//! streams, WebSockets): what `cargo run --example NAME` serves answers as its
//! comments say.

#[allow(dead_code)]
#[path = "../hello.rs"]
mod hello;
#[allow(dead_code)]
#[path = "../json_api.rs"]
mod json_api;
#[allow(dead_code)]
#[path = "../sse_chat.rs"]
mod sse_chat;
#[allow(dead_code)]
#[path = "../uploads.rs"]
mod uploads;
#[allow(dead_code)]
#[path = "../ws_chat.rs"]
mod ws_chat;
// Both to-do examples load `todo/app.rs`: each is a crate of its own when run.
#[allow(dead_code, clippy::duplicate_mod)]
#[path = "../todo_postgres.rs"]
mod todo_postgres;
#[allow(dead_code, clippy::duplicate_mod)]
#[path = "../todo_sqlite.rs"]
mod todo_sqlite;

use std::time::Duration;

use kiln::db::Db;
use kiln::test::TestClient;
use kiln::ws::{CloseCode, Message};
use kiln::{AppService, Key};
use kiln_test_support::{TempDir, on_worker, pg_url};

/// A hang guard for what a stream or a socket should send at once.
const WAIT: Duration = Duration::from_secs(10);

#[test]
fn hello_greets() {
    let mut c = TestClient::new(hello::app());
    assert_eq!(c.get("/hello/kiln").text(), "Hello, kiln!");
    assert_eq!(c.get("/").status(), 404);
}

#[test]
fn json_api_logs_in_with_cors_and_answers_with_a_bearer_token() {
    let mut c = TestClient::new(json_api::app(Key::generate()));
    let preflight = c
        .request("OPTIONS", "/api/login")
        .header("Origin", "https://app.example")
        .header("Access-Control-Request-Method", "POST")
        .header("Access-Control-Request-Headers", "content-type")
        .send();
    assert_eq!(preflight.status(), 204);
    assert_eq!(preflight.header("access-control-allow-origin"), Some("https://app.example"));

    let wrong = c.request("POST", "/api/login").json(&serde_json::json!({"user": "ada", "password": "x"})).send();
    assert_eq!(wrong.status(), 401);
    let login = c
        .request("POST", "/api/login")
        .header("Origin", "https://app.example")
        .json(&serde_json::json!({"user": "ada", "password": "correct horse"}))
        .send();
    assert_eq!(login.status(), 200, "{}", login.text());
    assert_eq!(login.header("access-control-allow-origin"), Some("https://app.example"));
    let token: serde_json::Value = login.json();
    let token = token["token"].as_str().expect("a token");

    let me = c.request("GET", "/api/me").header("Authorization", &format!("Bearer {token}")).send();
    let profile: serde_json::Value = me.json();
    assert_eq!(profile["user"], "ada");
    assert_eq!(c.get("/api/me").status(), 401);
    let metrics = c.get("/metrics").text();
    assert!(metrics.contains(r#"kiln_requests_total{route="/api/me",status="2xx"} 1"#), "{metrics}");
}

/// Adds an item, marks it done, and asks for one that does not exist.
fn todo_flow(c: &mut TestClient<AppService<Db>>) {
    let home = c.get("/");
    assert_eq!(home.status(), 200, "{}", home.text());
    let text = home.text();
    let token = text.split(r#"name="csrf_token" value=""#).nth(1).expect("a CSRF field").split('"').next().unwrap();
    let token = token.to_owned();
    let added = c.request("POST", "/todos").form(&[("csrf_token", token.as_str()), ("title", "write <tests>")]).send();
    assert_eq!(added.status(), 303);
    let page = c.get("/").text();
    assert!(page.contains("write &lt;tests&gt;"), "{page}");
    let id = page.split(r#"action="/todos/"#).nth(1).expect("a Done button").split('/').next().unwrap().to_owned();
    let done = c.request("POST", format!("/todos/{id}/done")).form(&[("csrf_token", token.as_str())]).send();
    assert_eq!(done.status(), 303);
    assert!(c.get("/").text().contains("<s>write &lt;tests&gt;</s>"));
    let missing = c.request("POST", "/todos/999999/done").form(&[("csrf_token", token.as_str())]).send();
    assert_eq!(missing.status(), 404);
    let forged = c.request("POST", "/todos").form(&[("csrf_token", "0"), ("title", "x")]).send();
    assert_eq!(forged.status(), 403);
}

#[test]
fn todo_sqlite_adds_and_completes_items() {
    let dir = TempDir::new("example-todo");
    let database = todo_sqlite::open(&dir.sqlite_url()).expect("open");
    let mut c = TestClient::new(todo_sqlite::app(database, Key::generate())).keep_cookies();
    todo_flow(&mut c);
}

#[test]
fn todo_postgres_adds_and_completes_items() {
    let Some(base) = pg_url("examples::todo_postgres") else { return };
    // A schema of the test's own, first on the search path.
    on_worker(async {
        let (client, connection) =
            kiln::db::tokio_postgres::connect(&base, kiln::db::tokio_postgres::NoTls).await.expect("connect");
        tokio::spawn(connection);
        client
            .batch_execute("DROP SCHEMA IF EXISTS kt_example_todo CASCADE; CREATE SCHEMA kt_example_todo")
            .await
            .expect("a fresh schema");
    });
    let separator = if base.contains('?') { '&' } else { '?' };
    let url = format!("{base}{separator}options=-c%20search_path%3Dkt_example_todo");
    let database = todo_postgres::open(&url).expect("open");
    let mut c = TestClient::new(todo_postgres::app(database, Key::generate())).keep_cookies();
    todo_flow(&mut c);
}

#[test]
fn sse_chat_tells_every_listener_what_is_said() {
    let mut c = TestClient::new(sse_chat::app());
    let mut listeners: Vec<_> = (0..3).map(|_| c.request("GET", "/rooms/lobby/events").open()).collect();
    for listener in &listeners {
        assert_eq!(listener.status(), 200);
        assert_eq!(listener.header("content-type"), Some("text/event-stream"));
    }
    let said = c.request("POST", "/rooms/lobby").header("Content-Type", "text/plain").body("hello, lobby").send();
    assert_eq!(said.status(), 200, "{}", said.text());
    for listener in &mut listeners {
        let event = listener.next_event(WAIT).expect("in time").expect("an event");
        assert_eq!((event.id(), event.data()), (Some(said.text().as_str()), "hello, lobby"));
    }
    assert_eq!(c.request("POST", "/rooms/lobby").body("two\nlines").send().status(), 400);

    // A listener that comes back with `Last-Event-ID` gets what it missed.
    let later = c.request("POST", "/rooms/lobby").body("while you were away").send().text();
    let mut back = c.request("GET", "/rooms/lobby/events").header("Last-Event-ID", &said.text()).open();
    let missed = back.next_event(WAIT).expect("in time").expect("an event");
    assert_eq!((missed.id(), missed.data()), (Some(later.as_str()), "while you were away"));
}

#[test]
fn ws_chat_says_each_message_to_everyone_in_the_room() {
    let mut c = TestClient::new(ws_chat::app());
    let mut clients: Vec<_> = (0..2)
        .map(|_| {
            let mut socket = c.request("GET", "/rooms/lobby").websocket().expect("101");
            // The server says so once the socket hears the room.
            assert_eq!(socket.recv(WAIT), Ok(Some(Message::Text("joined lobby".into()))));
            socket
        })
        .collect();
    clients[0].send("hello, lobby");
    for socket in &mut clients {
        assert_eq!(socket.recv(WAIT), Ok(Some(Message::Text("hello, lobby".into()))));
    }
    // One leaves; the other still hears the room.
    let left = clients.remove(0).close(CloseCode::NORMAL, "bye", WAIT).expect("in time");
    assert_eq!(left.map(|frame| frame.code), Some(CloseCode::NORMAL));
    let mut other = c.request("GET", "/rooms/lobby").websocket().expect("101");
    assert_eq!(other.recv(WAIT), Ok(Some(Message::Text("joined lobby".into()))));
    other.send("still here?");
    assert_eq!(clients[0].recv(WAIT), Ok(Some(Message::Text("still here?".into()))));
}

#[test]
fn uploads_stores_an_image_sent_with_the_form_s_csrf_token() {
    let dir = TempDir::new("uploads-example");
    let mut c =
        TestClient::new(uploads::app(Key::generate(), uploads::Shelf::new(dir.path().to_owned()))).keep_cookies();
    let form = c.get("/").text();
    assert!(form.contains(r#"enctype="multipart/form-data""#), "{form}");
    let token = form.split(r#"name="csrf_token" value=""#).nth(1).unwrap().split('"').next().unwrap().to_owned();
    // An image over the global 1 MiB limit: the upload route has its own.
    let image = vec![0x89u8; 3 * 1024 * 1024];
    let fields: [(&str, Option<&str>, &[u8]); 3] =
        [("csrf_token", None, token.as_bytes()), ("title", None, b"A cat"), ("file", Some("cat.png"), &image)];
    let sent = c.request("POST", "/upload").multipart(&fields).send();
    assert_eq!(sent.status(), 303, "{}", sent.text());
    assert!(c.get("/").text().contains("A cat"));
    let stored = c.get("/files/0");
    assert_eq!(stored.bytes().len(), image.len());
    assert_eq!(stored.header("content-type"), Some("application/octet-stream"), "sent without an image type");
    // Without the token, or over the limit, refused.
    let forged = c.request("POST", "/upload").multipart(&[("title", None, b"x"), ("file", Some("x"), b"x")]).send();
    assert_eq!(forged.status(), 403);
    let huge = vec![0u8; uploads::MAX_UPLOAD as usize + 1];
    let fields: [(&str, Option<&str>, &[u8]); 2] = [("csrf_token", None, token.as_bytes()), ("file", Some("h"), &huge)];
    assert_eq!(c.request("POST", "/upload").multipart(&fields).send().status(), 413);
}
