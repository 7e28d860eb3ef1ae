//! HTTP/2 streams whose client never opens the flow-control window (issue 33.13): each
//! is reset once the send timeout HTTP/1.1 has ([`Limits::body_timeout`]) passes
//! without progress, its slot and memory freed, where a hundred such streams were held
//! with no end.

mod h2_support;
mod support;

use std::time::Duration;

use h2_support::CLIENT_TIMEOUT;
use kiln_http::Limits;
use support::TestServer;

const STREAMS: u32 = 100;

/// Opens `STREAMS` streams of `/big` (256 KiB each) on a client that never releases
/// window (`window` for each stream), and returns how each ended and whether the
/// connection then serves a stream beyond its limit.
async fn never_opening(window: u32) -> (Vec<Option<h2::Reason>>, u16) {
    let limits =
        Limits { body_timeout: Duration::from_millis(300), h2_max_concurrent_streams: STREAMS, ..Limits::default() };
    let server = TestServer::start(limits);
    let tcp = tokio::net::TcpStream::connect(server.addr()).await.unwrap();
    let (client, conn) = h2::client::Builder::new().initial_window_size(window).handshake(tcp).await.unwrap();
    tokio::spawn(async move {
        let _ = conn.await;
    });
    let mut bodies = Vec::new();
    for _ in 0..STREAMS {
        let mut client = client.clone().ready().await.unwrap();
        let req = http::Request::get("http://localhost/big").body(()).unwrap();
        let (answer, _) = client.send_request(req, true).unwrap();
        bodies.push(tokio::spawn(async move {
            let mut body = answer.await.unwrap().into_body();
            // Read, but never given back: the window stays as it is.
            loop {
                match body.data().await {
                    Some(Ok(_)) => {}
                    Some(Err(e)) => return e.reason(),
                    None => return None,
                }
            }
        }));
    }
    let mut ends = Vec::new();
    for body in bodies {
        ends.push(tokio::time::timeout(CLIENT_TIMEOUT, body).await.expect("a stream held with no end").unwrap());
    }
    // Every stream's slot is free again: one more is served (a HEAD: no body to wait
    // on a window).
    let extra = h2_support::send(&client, "HEAD", "/big", b"").await.unwrap().status;
    (ends, extra)
}

#[tokio::test]
async fn streams_whose_window_never_opens_are_reset_after_the_send_timeout() {
    // SETTINGS_INITIAL_WINDOW_SIZE = 0: not a byte of any body may be sent.
    let (ends, extra) = never_opening(0).await;
    // RFC 9113 §7: CANCEL, "the stream is no longer needed"; the peer broke no rule of
    // flow control (FLOW_CONTROL_ERROR), it only gave no room.
    assert!(ends.iter().all(|e| *e == Some(h2::Reason::CANCEL)), "{ends:?}");
    assert_eq!(extra, 200);
}

#[tokio::test]
async fn streams_behind_a_connection_window_never_given_back_are_reset_too() {
    // The default windows, never given back: the connection's 64 KiB go to the first
    // streams, and every stream waits on the connection's window.
    let (ends, extra) = never_opening(65_535).await;
    assert!(ends.iter().all(|e| *e == Some(h2::Reason::CANCEL)), "{ends:?}");
    assert_eq!(extra, 200);
}

#[test]
fn a_stream_window_opened_behind_a_shut_connection_window_is_no_progress() {
    // The stream's window opens again and again while the connection's stays shut:
    // nothing can be sent, and the clock runs on (a stream WINDOW_UPDATE restarted it).
    use h2_support::{DATA, RST_STREAM, WINDOW_UPDATE, frame, get_block, raw, read_frame};
    use std::io::Write;
    // Longer than the engine's coarse clock's second, so that the updates, closer
    // together than that, would keep a restarted clock from ever running out.
    let limits = Limits { body_timeout: Duration::from_millis(1500), ..Limits::default() };
    let server = TestServer::start(limits);
    let mut s = raw(server.addr());
    s.write_all(&frame(0x1, 0x1 | 0x4, 1, &get_block("GET", "/big"))).unwrap();
    let mut reader = s.try_clone().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        while let Some(f) = read_frame(&mut reader) {
            if tx.send(f).is_err() {
                return;
            }
        }
    });
    let started = std::time::Instant::now();
    let mut sent = 0;
    let reset = loop {
        assert!(started.elapsed() < CLIENT_TIMEOUT, "the stream was held");
        // A little more stream window, never connection window.
        s.write_all(&frame(WINDOW_UPDATE, 0, 1, &1024u32.to_be_bytes())).unwrap();
        match rx.recv_timeout(Duration::from_millis(20)) {
            Ok(f) if f.kind == RST_STREAM => break f,
            Ok(f) if f.kind == DATA => sent += f.payload.len(),
            _ => {}
        }
    };
    assert_eq!((reset.stream, reset.code()), (1, h2_support::CANCEL));
    assert!(sent <= 65_535, "{sent} bytes through a 65,535-byte connection window");
}
