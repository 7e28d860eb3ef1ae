//! A body over its limit: the `413` names the limit that applied and how a route
//! raises it (issue 33, item 5: a 2 MiB upload got a bare "request body too large").

use kiln::http::{Bytes, Server};
use kiln::test::TestClient;
use kiln::{App, Route};

#[derive(Route)]
#[route(POST, "/whole")]
struct Whole;

#[derive(Route)]
#[route(POST, "/streamed")]
struct Streamed;

async fn whole(_: Whole, body: Bytes) -> String {
    format!("{} bytes", body.len())
}

async fn streamed(_: Streamed, body: Bytes) -> String {
    format!("{} bytes", body.len())
}

fn app() -> App<()> {
    App::new(|_| ()).route(whole).route(streamed).stream_body::<Streamed>(64 * 1024)
}

#[test]
fn a_body_over_the_limit_gets_a_413_that_names_the_limit_and_how_a_route_raises_it() {
    let mut client = TestClient::new(app());
    let res = client.request("POST", &Whole).body(vec![b'x'; 2 * 1024 * 1024]).send();
    assert_eq!(res.status(), 413);
    let text = res.text();
    for named in ["1 MiB (1048576 bytes)", "Limits::max_body_bytes", "App::stream_body::<Route>(limit)"] {
        assert!(text.contains(named), "{named:?} is not in {text:?}");
    }
    let res = client.request("POST", &Streamed).body(vec![b'x'; 128 * 1024]).send();
    assert_eq!(res.status(), 413);
    let text = res.text();
    for named in ["this route's 64 KiB (65536 bytes) limit", "App::stream_body::<Route>(limit)"] {
        assert!(text.contains(named), "{named:?} is not in {text:?}");
    }
}

#[test]
fn the_server_names_the_limit_as_the_test_client_does() {
    use std::io::{Read, Write};

    let server = kiln::serve(app(), Server::new().workers(1).listen("127.0.0.1:0")).unwrap();
    let mut socket = std::net::TcpStream::connect(server.local_addr()).unwrap();
    socket.set_read_timeout(Some(std::time::Duration::from_secs(10))).unwrap();
    // Refused on its head: the 2 MiB are never sent.
    socket.write_all(b"POST /whole HTTP/1.1\r\nHost: a\r\nContent-Length: 2097152\r\n\r\n").unwrap();
    let mut answer = Vec::new();
    socket.read_to_end(&mut answer).unwrap();
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 413 "), "{answer}");
    let mut client = TestClient::new(app());
    let expected = client.request("POST", &Whole).body(vec![b'x'; 2 * 1024 * 1024]).send().text();
    assert!(answer.ends_with(&expected), "the server said {answer:?}, the test client {expected:?}");
    server.shutdown();
    server.wait().unwrap();
}
