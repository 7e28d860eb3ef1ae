//! Each example's app, driven in-process: what `cargo run --example NAME` serves
//! answers as its comments say.

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

use kiln::db::Db;
use kiln::test::TestClient;
use kiln::{AppService, Key};
use kiln_test_support::{Streaming, TempDir, on_worker, pg_url};

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

fn serve(app: impl kiln::IntoMakeService) -> kiln::Serving {
    kiln::serve(app, kiln::http::Server::new().listen("127.0.0.1:0").workers(2)).expect("serve")
}

fn say(addr: std::net::SocketAddr, room: &str, line: &str) -> kiln_test_support::Reply {
    let raw = format!(
        "POST /rooms/{room} HTTP/1.1\r\nHost: a\r\nConnection: close\r\nContent-Type: text/plain\r\nContent-Length: {}\r\n\r\n{line}",
        line.len()
    );
    kiln_test_support::request(addr, &raw).expect("post")
}

#[test]
fn sse_chat_tells_every_listener_what_is_said() {
    let serving = serve(sse_chat::app());
    let addr = serving.local_addr();
    let mut listeners: Vec<Streaming> = (0..3)
        .map(|_| {
            let mut s = Streaming::open(addr, "GET /rooms/lobby/events HTTP/1.1\r\nHost: a\r\n\r\n");
            let head = s.read_until("\r\n\r\n");
            assert!(head.starts_with("HTTP/1.1 200") && head.contains("text/event-stream"), "{head}");
            s
        })
        .collect();
    let said = say(addr, "lobby", "hello, lobby");
    assert_eq!(said.status, 200, "{}", said.text());
    for s in &mut listeners {
        let event = s.read_until("\n\n");
        assert!(event.ends_with(&format!("id: {}\ndata: hello, lobby\n\n", said.text())), "{event:?}");
    }
    assert_eq!(say(addr, "lobby", "two\nlines").status, 400);
    serving.shutdown();
    serving.wait().expect("stopped");
}

/// A client's text frame: RFC 6455 §5.3, masked (with a fixed key, which is all a
/// test needs).
fn text_frame(text: &str) -> Vec<u8> {
    assert!(text.len() < 126);
    let key = [1u8, 2, 3, 4];
    let mut frame = vec![0x81, 0x80 | text.len() as u8];
    frame.extend_from_slice(&key);
    frame.extend(text.bytes().enumerate().map(|(i, b)| b ^ key[i % 4]));
    frame
}

#[test]
fn ws_chat_says_each_message_to_everyone_in_the_room() {
    use std::io::Write;

    let serving = serve(ws_chat::app());
    let addr = serving.local_addr();
    let mut clients: Vec<Streaming> = (0..2)
        .map(|_| {
            let mut s = Streaming::open(
                addr,
                "GET /rooms/lobby HTTP/1.1\r\nHost: a\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
                 Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n",
            );
            assert!(s.read_until("\r\n\r\n").starts_with("HTTP/1.1 101"));
            // The server says so once the socket hears the room.
            s.read_until("joined lobby");
            s
        })
        .collect();
    clients[0].socket().write_all(&text_frame("hello, lobby")).expect("send");
    for c in &mut clients {
        c.read_until("hello, lobby");
    }
    serving.shutdown();
    serving.wait().expect("stopped");
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
