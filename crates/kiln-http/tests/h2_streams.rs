//! HTTP/2 with prior knowledge (h2c) on the plain port, through `h2`'s client: the same
//! service answers as over HTTP/1.1, streams of one connection run side by side, and
//! HTTP/1.1 is still served on the same port.

mod h2_support;
mod support;

use std::io::Write;

use h2_support::{connect, get, send};
use kiln_http::Limits;
use support::TestServer;

#[tokio::test]
async fn a_get_is_answered_with_the_engine_s_fields_and_the_service_s_own() {
    let server = TestServer::start(Limits::default());
    let client = connect(server.addr()).await;
    let answer = get(&client, "/hello?x=1").await;
    assert_eq!(answer.status, 200);
    assert_eq!(answer.body_str(), "GET /hello?x=1 0");
    assert_eq!(answer.header("content-type"), Some("text/plain"));
    assert_eq!(answer.header("content-length"), Some("16"));
    assert_eq!(answer.header("server"), Some("kiln"));
    assert!(answer.header("date").is_some_and(|d| d.ends_with(" GMT")), "{answer:?}");
    assert_eq!(server.seen.targets(), ["/hello?x=1"]);
}

#[tokio::test]
async fn every_body_kind_arrives_whole() {
    let server = TestServer::start(Limits::default());
    let client = connect(server.addr()).await;
    // Larger than a stream's first window (64 KiB until the client says more): it
    // leaves as the window opens.
    let big = get(&client, "/big").await;
    assert_eq!((big.status, big.body.len()), (200, 256 * 1024));
    assert!(big.body.iter().all(|&b| b == b'x'));
    let stream = get(&client, "/stream").await;
    assert_eq!((stream.body_str(), stream.header("content-length")), ("one,two,three", None));
    let file = get(&client, "/file").await;
    assert_eq!((file.body_str(), file.header("content-length")), ("23456789ab", Some("10")));
    let dir = std::env::temp_dir().join(format!("kiln-h2-file-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("big.bin");
    let content: Vec<u8> = (0..1_000_003u32).map(|i| (i % 251) as u8).collect();
    std::fs::write(&path, &content).unwrap();
    let whole = get(&client, &format!("/sendfile?{}", path.display())).await;
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(whole.body == content, "the file arrived altered: {} of {} bytes", whole.body.len(), content.len());
    let none = get(&client, "/no-content").await;
    assert_eq!((none.status, none.body.len(), none.header("content-length")), (204, 0, None));
}

#[tokio::test]
async fn a_post_body_reaches_the_service_whole() {
    let server = TestServer::start(Limits::default());
    let client = connect(server.addr()).await;
    let body: Vec<u8> = (0..300_000u32).map(|i| (i % 253) as u8).collect();
    let answer = send(&client, "POST", "/echo", &body).await.unwrap();
    assert_eq!(answer.status, 200);
    assert!(answer.body == body, "{} of {} bytes came back", answer.body.len(), body.len());
}

#[tokio::test]
async fn head_gets_the_length_and_no_body() {
    let server = TestServer::start(Limits::default());
    let client = connect(server.addr()).await;
    let answer = send(&client, "HEAD", "/sized?1234", b"").await.unwrap();
    assert_eq!((answer.status, answer.header("content-length"), answer.body.len()), (200, Some("1234"), 0));
}

#[tokio::test]
async fn many_streams_of_one_connection_are_answered_side_by_side() {
    let server = TestServer::start(Limits::default());
    let client = connect(server.addr()).await;
    // Each handler waits 300 ms; one after the other, 100 would take 30 s.
    let started = std::time::Instant::now();
    let tasks: Vec<_> = (0..100)
        .map(|i| {
            let client = client.clone();
            tokio::spawn(async move { send(&client, "GET", &format!("/slow?{i}"), b"").await.unwrap() })
        })
        .collect();
    for (i, task) in tasks.into_iter().enumerate() {
        let answer = task.await.unwrap();
        assert_eq!((answer.status, answer.body_str()), (200, "slow done"), "stream {i}");
    }
    assert!(started.elapsed() < std::time::Duration::from_secs(15), "the streams were answered one by one");
    assert_eq!(server.seen.targets().len(), 100);
}

#[tokio::test]
async fn a_body_over_the_limit_is_refused_with_413_and_the_connection_goes_on() {
    let server = TestServer::start(Limits { max_body_bytes: 1000, ..Limits::default() });
    let client = connect(server.addr()).await;
    let answer = send(&client, "POST", "/echo", &[b'a'; 5000]).await;
    // The 413 may race the body's end: the answer, or the stream reset with NO_ERROR
    // after it (RFC 9113 §8.1), which the client reports as the reset.
    match answer {
        Ok(answer) => assert_eq!(answer.status, 413),
        Err(e) => assert_eq!(e.reason(), Some(h2::Reason::NO_ERROR), "{e}"),
    }
    let ok = send(&client, "POST", "/echo", &[b'b'; 1000]).await.unwrap();
    assert_eq!((ok.status, ok.body.len()), (200, 1000));
    assert_eq!(get(&client, "/pong").await.status, 200);
}

#[tokio::test]
async fn a_panicking_service_costs_its_stream_a_500_and_nothing_else() {
    let server = TestServer::start(Limits::default());
    let client = connect(server.addr()).await;
    let other = client.clone();
    let slow = tokio::spawn(async move { send(&other, "GET", "/slow", b"").await.unwrap() });
    let answer = get(&client, "/panic").await;
    assert_eq!((answer.status, answer.body_str()), (500, "internal server error\n"));
    assert_eq!(slow.await.unwrap().body_str(), "slow done");
    assert_eq!(get(&client, "/after").await.body_str(), "GET /after 0");
}

#[tokio::test]
async fn http1_is_still_served_on_the_same_port() {
    let server = TestServer::start(Limits::default());
    let client = connect(server.addr()).await;
    assert_eq!(get(&client, "/h2").await.body_str(), "GET /h2 0");
    let resps = server.exchange(b"GET /h1 HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n");
    assert_eq!(resps[0].body_str(), "GET /h1 0");
    // A request line split before it can tell: still HTTP/1.1.
    let mut s = server.connect();
    s.write_all(b"P").unwrap();
    std::thread::sleep(std::time::Duration::from_millis(50));
    s.write_all(b"OST /split HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\nConnection: close\r\n\r\n").unwrap();
    let resps = support::parse_all(&support::read_to_close(&mut s), false);
    assert_eq!(resps[0].body_str(), "POST /split 0");
}

#[tokio::test]
async fn a_preface_split_across_writes_is_still_http2() {
    let server = TestServer::start(Limits::default());
    let mut tcp = tokio::net::TcpStream::connect(server.addr()).await.unwrap();
    tokio::io::AsyncWriteExt::write_all(&mut tcp, &h2_support::PREFACE[..5]).await.unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    // The client sends the whole preface again from its start: feed it the rest only.
    let client = h2_support::client(SkipFirst { io: tcp, skip: 5 }).await;
    assert_eq!(get(&client, "/split").await.body_str(), "GET /split 0");
}

/// A stream whose first `skip` written bytes were already sent.
struct SkipFirst {
    io: tokio::net::TcpStream,
    skip: usize,
}

impl tokio::io::AsyncRead for SkipFirst {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.io).poll_read(cx, buf)
    }
}

impl tokio::io::AsyncWrite for SkipFirst {
    fn poll_write(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        if self.skip > 0 {
            let n = self.skip.min(buf.len());
            self.skip -= n;
            return std::task::Poll::Ready(Ok(n));
        }
        std::pin::Pin::new(&mut self.io).poll_write(cx, buf)
    }

    fn poll_flush(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.io).poll_flush(cx)
    }

    fn poll_shutdown(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.io).poll_shutdown(cx)
    }
}

#[tokio::test]
async fn the_peer_address_is_the_socket_s() {
    let server = TestServer::start(Limits::default());
    let tcp = tokio::net::TcpStream::connect(server.addr()).await.unwrap();
    let local = tcp.local_addr().unwrap();
    let client = h2_support::client(tcp).await;
    assert_eq!(get(&client, "/peer").await.body_str(), local.to_string());
}

#[tokio::test]
async fn a_response_beyond_the_worker_s_buffering_budget_gets_503() {
    let server = TestServer::start(Limits { max_buffered_bytes: 100 * 1024, ..Limits::default() });
    let client = connect(server.addr()).await;
    let refused = get(&client, "/big").await;
    assert_eq!((refused.status, refused.header("retry-after")), (503, Some("1")));
    // The budget was given back: a small answer still fits, and so does a body under it.
    assert_eq!(get(&client, "/sized?50000").await.body.len(), 50000);
    assert_eq!(send(&client, "POST", "/echo", &[b'x'; 30_000]).await.unwrap().body.len(), 30_000);
}

#[tokio::test]
async fn a_connection_dropped_midway_gives_its_streams_budget_back() {
    // Were it kept, a few such connections would leave the worker answering 503 to all.
    use h2_support::{DATA, END_HEADERS, END_STREAM, HEADERS, frame, get_block, raw};
    let server = TestServer::start(Limits { max_buffered_bytes: 200 * 1024, ..Limits::default() });
    for _ in 0..3 {
        let mut s = raw(server.addr());
        s.write_all(&frame(HEADERS, END_HEADERS, 1, &get_block("POST", "/slow"))).unwrap();
        // 75,000 bytes, held in a buffer of 120,000.
        for i in 0..5 {
            let flags = if i == 4 { END_STREAM } else { 0 };
            s.write_all(&frame(DATA, flags, 1, &[b'x'; 15_000])).unwrap();
        }
        // The body is held while the handler waits 300 ms: go away meanwhile.
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        drop(s);
    }
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    let client = connect(server.addr()).await;
    let answer = send(&client, "POST", "/echo", &[b'y'; 60_000]).await.unwrap();
    assert_eq!((answer.status, answer.body.len()), (200, 60_000));
}
