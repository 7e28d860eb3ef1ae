//! Pipelining, keep-alive, HEAD, Expect and body kinds over a real socket.

mod support;

use std::io::Write;
use std::time::Duration;

use kiln_http::Limits;
use support::{TestServer, parse_all, read_responses, read_to_close};

#[test]
fn sixteen_pipelined_requests_in_one_write_are_answered_in_order() {
    let server = TestServer::start(Limits::default());
    let mut raw = Vec::new();
    for i in 0..16 {
        raw.extend_from_slice(format!("GET /p/{i} HTTP/1.1\r\nHost: a\r\n\r\n").as_bytes());
    }
    let mut s = server.connect();
    s.write_all(&raw).unwrap();
    let resps = read_responses(&mut s, 16, false);
    for (i, r) in resps.iter().enumerate() {
        assert_eq!(r.status, 200);
        assert_eq!(r.body_str(), format!("GET /p/{i} 0"));
        assert!(r.header("date").is_some_and(|d| d.ends_with(" GMT") && d.len() == 29));
        assert_eq!(r.header("server"), Some("kiln"));
    }
}

#[test]
fn a_request_split_at_every_byte_boundary_is_answered_the_same() {
    let server = TestServer::start(Limits::default());
    let raw: &[u8] =
        b"POST /echo HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nwiki\r\n5\r\npedia\r\n0\r\n\r\nGET /after HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n";
    for cut in 1..raw.len() {
        let mut s = server.connect();
        s.set_nodelay(true).unwrap();
        s.write_all(&raw[..cut]).unwrap();
        s.flush().unwrap();
        // Give the server a chance to read the first part on its own; the answer
        // must be the same whether or not it does.
        std::thread::sleep(Duration::from_millis(1));
        s.write_all(&raw[cut..]).unwrap();
        let resps = parse_all(&read_to_close(&mut s), false);
        assert_eq!(resps.len(), 2, "cut at {cut}");
        assert_eq!(resps[0].body_str(), "wikipedia", "cut at {cut}");
        assert_eq!(resps[1].body_str(), "GET /after 0", "cut at {cut}");
    }
}

#[test]
fn keep_alive_and_close_follow_the_version_rules() {
    let server = TestServer::start(Limits::default());
    // (request, keeps the connection open, Connection header expected)
    let cases: &[(&[u8], bool, Option<&str>)] = &[
        (b"GET / HTTP/1.1\r\nHost: a\r\n\r\n", true, None),
        (b"GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n", false, Some("close")),
        (b"GET / HTTP/1.0\r\n\r\n", false, Some("close")),
        (b"GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", true, Some("keep-alive")),
        (b"GET /close HTTP/1.1\r\nHost: a\r\n\r\n", false, Some("close")),
    ];
    for (raw, keeps, header) in cases {
        let mut s = server.connect();
        s.write_all(raw).unwrap();
        let resp = &read_responses(&mut s, 1, false)[0];
        assert_eq!(resp.header("connection"), *header, "{}", String::from_utf8_lossy(raw));
        // A second request on the same connection is answered only if it stayed open.
        let _ = s.write_all(b"GET /second HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n");
        let rest = parse_all(&read_to_close(&mut s), false);
        assert_eq!(rest.len(), usize::from(*keeps), "{}", String::from_utf8_lossy(raw));
    }
}

#[test]
fn head_has_the_get_headers_and_no_body() {
    let server = TestServer::start(Limits::default());
    let mut s = server.connect();
    s.write_all(b"HEAD /big HTTP/1.1\r\nHost: a\r\n\r\nGET /p HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
        .unwrap();
    let raw = read_to_close(&mut s);
    let head_end = raw.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
    let head = String::from_utf8_lossy(&raw[..head_end]);
    assert!(head.contains("Content-Length: 262144\r\n"), "{head}");
    let next = parse_all(&raw[head_end..], false);
    assert_eq!(next.len(), 1, "the HEAD response carried no body bytes");
    assert_eq!(next[0].body_str(), "GET /p 0");
}

#[test]
fn expect_100_continue_is_answered_before_the_body_is_sent() {
    let server = TestServer::start(Limits::default());
    let mut s = server.connect();
    s.write_all(b"POST /echo HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 4\r\n\r\n").unwrap();
    let interim = read_responses(&mut s, 1, false);
    assert_eq!(interim[0].status, 100);
    s.write_all(b"body").unwrap();
    let resp = &read_responses(&mut s, 1, false)[0];
    assert_eq!((resp.status, resp.body_str()), (200, "body"));
}

#[test]
fn expect_with_a_body_over_the_limit_gets_413_without_continue() {
    let server = TestServer::start(Limits { max_body_bytes: 10, ..Limits::default() });
    let resps =
        server.exchange(b"POST /echo HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 11\r\n\r\n");
    assert_eq!(resps.len(), 1);
    assert_eq!(resps[0].status, 413);
}

#[test]
fn streamed_file_and_large_bodies_arrive_intact() {
    let server = TestServer::start(Limits::default());
    let raw = b"GET /stream HTTP/1.1\r\nHost: a\r\n\r\nGET /file HTTP/1.1\r\nHost: a\r\n\r\nGET /big HTTP/1.1\r\nHost: a\r\n\r\nGET /no-content HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n";
    let resps = server.exchange(raw);
    assert_eq!(resps.len(), 4);
    assert_eq!(resps[0].header("transfer-encoding"), Some("chunked"));
    assert_eq!(resps[0].body_str(), "one,two,three");
    assert_eq!(resps[1].body_str(), "23456789ab");
    assert_eq!(resps[2].body.len(), 256 * 1024);
    assert!(resps[2].body.iter().all(|&b| b == b'x'));
    assert_eq!(resps[3].status, 204);
    assert_eq!(resps[3].header("content-length"), None);
}

#[test]
fn a_stream_to_an_http10_client_is_delimited_by_close() {
    let server = TestServer::start(Limits::default());
    let resps = server.exchange(b"GET /stream HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
    assert_eq!(resps.len(), 1);
    assert_eq!(resps[0].header("transfer-encoding"), None);
    assert_eq!(resps[0].header("connection"), Some("close"));
    assert_eq!(resps[0].body_str(), "one,two,three");
}

/// Responses of 8 KiB and more wait for the worker's other ready connections before
/// they are written, so that one turn's writes leave together: every byte must still
/// arrive, in order, whether the connection is alone or one of many, copied into the
/// write buffer (under 32 KiB) or written from where it lies.
#[test]
fn large_responses_held_for_the_turn_all_arrive_whole_and_in_order() {
    let server = TestServer::start(Limits::default());
    let sizes = [20_000usize, 40_000, 9_000, 100, 8_192];
    let requests: String = sizes.iter().map(|n| format!("GET /sized?{n} HTTP/1.1\r\nHost: a\r\n\r\n")).collect();
    for connections in [1, 8] {
        let mut streams: Vec<_> = (0..connections).map(|_| server.connect()).collect();
        for s in &mut streams {
            s.write_all(requests.as_bytes()).unwrap();
        }
        for s in &mut streams {
            let resps = read_responses(s, sizes.len(), false);
            let got: Vec<usize> = resps.iter().map(|r| r.body.len()).collect();
            assert_eq!(got, sizes, "{connections} connections");
            assert!(resps.iter().all(|r| r.status == 200 && r.body.iter().all(|&b| b == b'x')));
        }
    }
}

#[test]
fn pipelining_clients_that_do_not_read_take_turns_with_a_bystander() {
    // Issue 33, item 12: 200 clients pipelining 200 `/bigtable` requests each without
    // reading kept a bystander on the same worker waiting 2.2 s. Each pipeliner's
    // requests now take turns with the worker's other connections: the bystander is
    // answered after a few responses per pipeliner, long before their queues run out.
    use std::io::Read;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use kiln_http::{Server, service_fn};

    const PIPELINERS: usize = 4;
    const DEPTH: usize = 64;
    let answered = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&answered);
    let server = Server::new()
        .workers(1)
        .listen("127.0.0.1:0")
        .serve(move |_| {
            let answered = Arc::clone(&counted);
            service_fn(move |req, res| match req.path() {
                // How many pipelined responses were made before this one.
                "/bystander" => {
                    res.body_mut().extend_from_slice(answered.load(Ordering::SeqCst).to_string().as_bytes())
                }
                // A slow-ish page of 4 KiB: a millisecond of the worker's time each.
                _ => {
                    std::thread::sleep(Duration::from_millis(1));
                    res.body_mut().resize(4096, b'x');
                    answered.fetch_add(1, Ordering::SeqCst);
                }
            })
        })
        .unwrap();
    let mut pipeliners = Vec::new();
    for _ in 0..PIPELINERS {
        let mut s = std::net::TcpStream::connect(server.local_addr()).unwrap();
        s.write_all(&b"GET /table HTTP/1.1\r\nHost: a\r\n\r\n".repeat(DEPTH)).unwrap();
        pipeliners.push(s);
    }
    let mut bystander = std::net::TcpStream::connect(server.local_addr()).unwrap();
    bystander.set_read_timeout(Some(support::CLIENT_TIMEOUT)).unwrap();
    bystander.write_all(b"GET /bystander HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n").unwrap();
    let mut answer = Vec::new();
    bystander.read_to_end(&mut answer).unwrap();
    let resps = parse_all(&answer, false);
    let before: usize = resps[0].body_str().parse().unwrap();
    // One turn is 16 KiB of responses here (four): 16 went first on this machine, while
    // before the turns all 256 of the pipeliners' requests did (a turn was 64 requests,
    // and every pipeliner had its turn ahead of the bystander). The bound leaves room
    // for a test thread that is slow to connect.
    assert!(before <= 16 * PIPELINERS, "{before} pipelined responses went before the bystander");
    drop(pipeliners);
    server.shutdown();
    server.wait().unwrap();
}
