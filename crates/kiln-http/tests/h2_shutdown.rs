//! Ending HTTP/2 connections: a graceful `GOAWAY` on shutdown lets streams in flight
//! finish; the request cap and the idle timeout end a connection the same way.

mod h2_support;
mod support;

use std::time::Duration;

use h2_support::{CLIENT_TIMEOUT, get, send};
use kiln_http::Limits;
use support::TestServer;

#[tokio::test]
async fn shutdown_sends_goaway_and_the_stream_in_flight_is_answered() {
    let server = TestServer::start(Limits::default());
    let tcp = tokio::net::TcpStream::connect(server.addr()).await.unwrap();
    let (client, conn) = h2::client::handshake(tcp).await.unwrap();
    let conn = tokio::spawn(conn);
    let in_flight = {
        let client = client.clone();
        tokio::spawn(async move { send(&client, "GET", "/slow", b"").await })
    };
    // The handler waits 300 ms: shut down meanwhile.
    tokio::time::sleep(Duration::from_millis(100)).await;
    let TestServer { handle, .. } = server;
    handle.shutdown();
    let answer = in_flight.await.unwrap().unwrap();
    assert_eq!((answer.status, answer.body_str()), (200, "slow done"));
    // The connection ends cleanly (GOAWAY with NO_ERROR, then the close) ...
    let ended = tokio::time::timeout(CLIENT_TIMEOUT, conn).await.expect("closed in time").unwrap();
    assert!(ended.is_ok(), "{ended:?}");
    // ... and no new stream is taken.
    assert!(send(&client, "GET", "/late", b"").await.is_err());
    tokio::task::spawn_blocking(move || handle.wait().unwrap()).await.unwrap();
}

#[tokio::test]
async fn the_request_cap_ends_a_connection_gracefully_after_its_last_stream() {
    let server = TestServer::start(Limits { max_requests_per_connection: 3, ..Limits::default() });
    let tcp = tokio::net::TcpStream::connect(server.addr()).await.unwrap();
    let (client, conn) = h2::client::handshake(tcp).await.unwrap();
    let conn = tokio::spawn(conn);
    for i in 0..3 {
        assert_eq!(get(&client, &format!("/{i}")).await.status, 200);
    }
    let ended = tokio::time::timeout(CLIENT_TIMEOUT, conn).await.expect("closed in time").unwrap();
    assert!(ended.is_ok(), "{ended:?}");
    assert_eq!(server.seen.targets(), ["/0", "/1", "/2"]);
}

#[test]
fn an_idle_connection_gets_goaway_after_the_idle_timeout() {
    let server = TestServer::start(Limits { idle_timeout: Duration::from_secs(1), ..Limits::default() });
    let mut s = h2_support::raw(server.addr());
    let started = std::time::Instant::now();
    let goaway = h2_support::until_goaway(&mut s).expect("a GOAWAY before the close");
    assert_eq!(goaway.code(), h2_support::NO_ERROR);
    // The idle timeout runs on a clock that ticks once a second.
    assert!(started.elapsed() >= Duration::from_millis(900), "{:?}", started.elapsed());
}
