//! HTTP/1.1 upgrades: after a `101` the service's callback owns the connection, with
//! the bytes the client sent early; it stays counted, and drain reaches it.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use kiln_http::{Limits, Request, Response, Server, ServerHandle, StatusCode, Upgraded, service_fn};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const CLIENT_TIMEOUT: Duration = Duration::from_secs(10);

/// `/up` switches to a protocol that answers each byte upper-cased, until the client
/// closes or shutdown begins (then it says `BYE`); `/up-refused` sets a callback but
/// answers 200, so the connection stays HTTP.
fn service(req: Request<'_>, res: &mut Response) {
    match req.path() {
        "/up" => {
            res.set_status(StatusCode::SWITCHING_PROTOCOLS);
            res.append_header_unchecked(b"Upgrade", b"shout");
            res.append_header_unchecked(b"Connection", b"upgrade");
            res.set_upgrade(Box::new(|up| Box::pin(shout(up))));
        }
        "/up-refused" => {
            res.set_upgrade(Box::new(|up| Box::pin(shout(up))));
            res.set_body_static(b"no");
        }
        _ => res.set_body_static(b"plain"),
    }
}

async fn shout(up: Upgraded) {
    let (mut io, early) = up.into_parts();
    if io.write_all(&early.to_ascii_uppercase()).await.is_err() {
        return;
    }
    let mut buf = [0u8; 1024];
    loop {
        tokio::select! {
            read = io.read(&mut buf) => match read {
                Ok(0) | Err(_) => return,
                Ok(n) => {
                    if io.write_all(&buf[..n].to_ascii_uppercase()).await.is_err() {
                        return;
                    }
                }
            },
            () = kiln_http::draining() => {
                let _ = io.write_all(b"BYE").await;
                let _ = io.shutdown().await;
                return;
            }
        }
    }
}

fn start(limits: Limits) -> ServerHandle {
    Server::new().workers(1).limits(limits).listen("127.0.0.1:0").serve(|_| service_fn(service)).unwrap()
}

fn connect(handle: &ServerHandle) -> TcpStream {
    let s = TcpStream::connect(handle.local_addr()).unwrap();
    s.set_read_timeout(Some(CLIENT_TIMEOUT)).unwrap();
    s
}

/// Reads until `want` bytes have arrived after the head's empty line; returns (head, rest).
fn read_head_and(s: &mut TcpStream, want: usize) -> (String, Vec<u8>) {
    let mut raw = Vec::new();
    let mut buf = [0u8; 1024];
    loop {
        if let Some(end) = raw.windows(4).position(|w| w == b"\r\n\r\n") {
            if raw.len() - (end + 4) >= want {
                let head = String::from_utf8(raw[..end + 4].to_vec()).unwrap();
                return (head, raw[end + 4..].to_vec());
            }
        }
        let n = s.read(&mut buf).unwrap();
        assert!(n > 0, "closed after {:?}", String::from_utf8_lossy(&raw));
        raw.extend_from_slice(&buf[..n]);
    }
}

fn read_exact(s: &mut TcpStream, n: usize) -> Vec<u8> {
    let mut out = vec![0u8; n];
    s.read_exact(&mut out).unwrap();
    out
}

#[test]
fn upgrade_hands_over_the_connection_with_the_bytes_sent_early() {
    let handle = start(Limits::default());
    let mut s = connect(&handle);
    // The first bytes of the new protocol ride in the request's own packet.
    s.write_all(b"GET /up HTTP/1.1\r\nHost: a\r\nUpgrade: shout\r\nConnection: upgrade\r\n\r\nhello").unwrap();
    let (head, early) = read_head_and(&mut s, 5);
    assert!(head.starts_with("HTTP/1.1 101 Switching Protocols\r\n"), "{head}");
    assert!(head.contains("Upgrade: shout\r\n") && head.contains("Connection: upgrade\r\n"), "{head}");
    assert!(!head.contains("Content-Length") && !head.contains("close"), "{head}");
    assert_eq!(early, b"HELLO");
    s.write_all(b"more").unwrap();
    assert_eq!(read_exact(&mut s, 4), b"MORE");
    handle.shutdown();
    assert_eq!(read_exact(&mut s, 3), b"BYE", "drain reached the upgraded connection");
    handle.wait().unwrap();
}

#[test]
fn an_upgrade_without_101_is_an_ordinary_response() {
    let handle = start(Limits::default());
    let mut s = connect(&handle);
    s.write_all(b"GET /up-refused HTTP/1.1\r\nHost: a\r\n\r\n").unwrap();
    let (first, body) = read_head_and(&mut s, 2);
    assert!(first.starts_with("HTTP/1.1 200 OK\r\n"), "{first}");
    assert_eq!(body, b"no");
    s.write_all(b"GET /x HTTP/1.1\r\nHost: a\r\n\r\n").unwrap();
    let (second, rest) = read_head_and(&mut s, 5);
    assert!(second.starts_with("HTTP/1.1 200 OK\r\n"), "{second}");
    assert_eq!(rest, b"plain");
    handle.shutdown();
    handle.wait().unwrap();
}

#[test]
fn an_upgraded_connection_counts_against_the_worker_limit() {
    let handle = start(Limits { max_connections_per_worker: 1, ..Limits::default() });
    let mut up = connect(&handle);
    up.write_all(b"GET /up HTTP/1.1\r\nHost: a\r\nUpgrade: shout\r\nConnection: upgrade\r\n\r\n").unwrap();
    let _ = read_head_and(&mut up, 0);
    let mut other = connect(&handle);
    other.write_all(b"GET / HTTP/1.1\r\nHost: a\r\n\r\n").unwrap();
    let (head, _) = read_head_and(&mut other, 0);
    assert!(head.starts_with("HTTP/1.1 503 "), "{head}");
    // Once the upgraded connection ends, its slot is free again.
    drop(up);
    let served = (0..100).any(|_| {
        std::thread::sleep(Duration::from_millis(20));
        let mut s = connect(&handle);
        s.write_all(b"GET / HTTP/1.1\r\nHost: a\r\n\r\n").unwrap();
        read_head_and(&mut s, 0).0.starts_with("HTTP/1.1 200 ")
    });
    assert!(served, "the upgraded connection's slot was never given back");
    handle.shutdown();
    handle.wait().unwrap();
}
