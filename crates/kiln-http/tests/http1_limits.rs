//! Limits, timeouts and robustness over a real socket: each limit gets its status,
//! slow or stuck clients are cut off, a panicking service costs one request.

mod support;

use std::io::{Read, Write};
use std::time::{Duration, Instant};

use kiln_http::{Limits, Server};
use support::{TestServer, parse_all, read_responses, read_to_close};

#[test]
fn each_size_limit_gets_its_status() {
    let limits =
        Limits { max_request_line: 64, max_head_bytes: 256, max_headers: 8, max_body_bytes: 16, ..Limits::default() };
    let server = TestServer::start(limits);
    let long_target = format!("GET /{} HTTP/1.1\r\nHost: a\r\n\r\n", "a".repeat(100));
    let big_header = format!("GET / HTTP/1.1\r\nHost: a\r\nX: {}\r\n\r\n", "b".repeat(300));
    let many_headers = format!("GET / HTTP/1.1\r\nHost: a\r\n{}\r\n", "X: y\r\n".repeat(9));
    let big_body = "POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 17\r\n\r\n12345678901234567".to_owned();
    let big_chunked =
        "POST /echo HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n11\r\n12345678901234567\r\n0\r\n\r\n"
            .to_owned();
    let cases = [(long_target, 414), (big_header, 431), (many_headers, 431), (big_body, 413), (big_chunked, 413)];
    for (raw, want) in cases {
        let resps = server.exchange(raw.as_bytes());
        assert_eq!(resps.len(), 1, "{raw}");
        assert_eq!(resps[0].status, want, "{raw}");
        assert_eq!(resps[0].header("connection"), Some("close"));
    }
    // Exactly at the limits is fine.
    let ok = server
        .exchange(b"POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 16\r\nConnection: close\r\n\r\n1234567890123456");
    assert_eq!((ok[0].status, ok[0].body_str()), (200, "1234567890123456"));
}

#[test]
fn an_unfinished_head_gets_408_after_the_header_timeout() {
    let server = TestServer::start(Limits { header_timeout: Duration::from_millis(200), ..Limits::default() });
    let mut s = server.connect();
    s.write_all(b"GET / HTTP/1.1\r\nHost: a\r\n").unwrap();
    let resps = parse_all(&read_to_close(&mut s), false);
    assert_eq!(resps.len(), 1);
    assert_eq!(resps[0].status, 408);
}

#[test]
fn a_trickling_client_is_cut_off_while_others_are_served() {
    let server = TestServer::start(Limits { header_timeout: Duration::from_millis(300), ..Limits::default() });
    let mut slow = server.connect();
    slow.set_read_timeout(Some(Duration::from_millis(20))).unwrap();
    let started = Instant::now();
    let mut cut_off = false;
    // One byte every 20 ms, never finishing the head; bounded to 500 bytes.
    for b in b"GET / HTTP/1.1\r\nX: ".iter().chain(std::iter::repeat_n(&b'a', 480)) {
        if slow.write_all(&[*b]).is_err() {
            cut_off = true;
            break;
        }
        let mut buf = [0u8; 512];
        match slow.read(&mut buf) {
            Ok(0) => {
                cut_off = true;
                break;
            }
            Ok(n) => {
                assert!(buf[..n].starts_with(b"HTTP/1.1 408"), "{}", String::from_utf8_lossy(&buf[..n]));
                cut_off = true;
                break;
            }
            Err(_) => {}
        }
        // Meanwhile another client is served promptly.
        let other = server.exchange(b"GET /other HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n");
        assert_eq!(other[0].status, 200);
    }
    assert!(cut_off, "the trickling client was never cut off");
    assert!(started.elapsed() < Duration::from_secs(9), "cut off by the header timeout, not the end of the loop");
}

#[test]
fn an_idle_keep_alive_connection_is_closed_after_the_idle_timeout() {
    let server = TestServer::start(Limits { idle_timeout: Duration::from_millis(100), ..Limits::default() });
    let mut s = server.connect();
    s.write_all(b"GET / HTTP/1.1\r\nHost: a\r\n\r\n").unwrap();
    assert_eq!(read_responses(&mut s, 1, false)[0].status, 200);
    // The server closes without a response; the read ends instead of timing out.
    assert!(read_to_close(&mut s).is_empty());
}

#[test]
fn a_slow_body_is_cut_off_by_the_body_timeout() {
    let server = TestServer::start(Limits { body_timeout: Duration::from_millis(200), ..Limits::default() });
    let mut s = server.connect();
    s.write_all(b"POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 10\r\n\r\nabc").unwrap();
    let rest = read_to_close(&mut s);
    assert!(rest.is_empty() || rest.starts_with(b"HTTP/1.1 408"), "{}", String::from_utf8_lossy(&rest));
    assert!(server.seen.targets().is_empty(), "the service never saw a partial body");
}

#[test]
fn a_client_that_stops_reading_is_dropped_and_others_are_served() {
    let server = TestServer::start(Limits { body_timeout: Duration::from_millis(300), ..Limits::default() });
    let mut greedy = server.connect();
    greedy.set_write_timeout(Some(Duration::from_millis(200))).unwrap();
    // Pipeline many requests for 256 KiB each and never read: the server must stop
    // reading too (bounded buffers), then give up on the connection.
    // 1 KiB a request, 20 MiB in all: more than the kernel's socket buffers hold.
    let req = format!("GET /big HTTP/1.1\r\nHost: a\r\nX-Pad: {}\r\n\r\n", "p".repeat(990));
    let mut sent = 0;
    for _ in 0..20_000 {
        if greedy.write_all(req.as_bytes()).is_err() {
            break;
        }
        sent += 1;
    }
    assert!(sent < 20_000, "the server kept reading requests whose answers it could not send");
    let other = server.exchange(b"GET /other HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n");
    assert_eq!(other[0].status, 200);
}

#[test]
fn a_panicking_handler_costs_one_500_and_the_next_request_works() {
    let server = TestServer::start(Limits::default());
    let mut s = server.connect();
    s.write_all(b"GET /panic HTTP/1.1\r\nHost: a\r\n\r\nGET /after HTTP/1.1\r\nHost: a\r\n\r\n").unwrap();
    let resps = read_responses(&mut s, 2, false);
    assert_eq!(resps[0].status, 500);
    assert_eq!((resps[1].status, resps[1].body_str()), (200, "GET /after 0"));
    let fresh = server.exchange(b"GET /fresh HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n");
    assert_eq!(fresh[0].status, 200, "the worker survived");
}

#[test]
fn max_requests_per_connection_closes_after_the_last() {
    let server = TestServer::start(Limits { max_requests_per_connection: 2, ..Limits::default() });
    let raw = b"GET /1 HTTP/1.1\r\nHost: a\r\n\r\nGET /2 HTTP/1.1\r\nHost: a\r\n\r\nGET /3 HTTP/1.1\r\nHost: a\r\n\r\n";
    let resps = server.exchange(raw);
    assert_eq!(resps.len(), 2);
    assert_eq!(resps[1].header("connection"), Some("close"));
}

#[test]
fn connections_beyond_the_worker_limit_get_a_503_and_are_closed_at_once() {
    let server = TestServer::start_with(
        Server::new().workers(1).limits(Limits { max_connections_per_worker: 2, ..Limits::default() }),
    );
    let mut a = server.connect();
    let mut b = server.connect();
    // Make sure both are accepted before the third arrives.
    for s in [&mut a, &mut b] {
        s.write_all(b"GET / HTTP/1.1\r\nHost: a\r\n\r\n").unwrap();
        assert_eq!(read_responses(s, 1, false)[0].status, 200);
    }
    // Issue 13: they were closed or reset without an answer. The 503 is sent before
    // the request is read, so the client reads it without sending one.
    let mut c = server.connect();
    let resps = parse_all(&read_to_close(&mut c), false);
    assert_eq!(resps.len(), 1);
    assert_eq!((resps[0].status, resps[0].header("retry-after")), (503, Some("1")));
    assert_eq!(resps[0].header("connection"), Some("close"));
    a.write_all(b"GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n").unwrap();
    assert_eq!(parse_all(&read_to_close(&mut a), false)[0].status, 200, "existing connections still served");
}

#[test]
fn a_client_that_uploads_a_refused_body_in_full_still_reads_its_413() {
    let server = TestServer::start(Limits { max_body_bytes: 1024, ..Limits::default() });
    let mut s = server.connect();
    let mut writer = s.try_clone().unwrap();
    // The client sends all of its 128 KiB body before it looks for an answer, as
    // simple clients do; the server drains it after refusing (lingering close).
    let uploader = std::thread::spawn(move || {
        let _ = writer.write_all(b"POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 131072\r\n\r\n");
        let chunk = [b'u'; 16 * 1024];
        for _ in 0..8 {
            if writer.write_all(&chunk).is_err() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        let _ = writer.shutdown(std::net::Shutdown::Write);
    });
    uploader.join().unwrap();
    let resps = parse_all(&read_to_close(&mut s), false);
    assert_eq!(resps.len(), 1, "the 413 was lost");
    assert_eq!(resps[0].status, 413);
}

#[test]
fn a_synchronous_service_fn_that_panics_costs_one_500_not_the_worker() {
    // Regression: the engine caught panics while polling a service's future, but a
    // `service_fn` runs its closure while the future is created, before any poll.
    let server = Server::new()
        .workers(1)
        .listen("127.0.0.1:0")
        .serve(|_| {
            kiln_http::service_fn(|req, res| {
                assert!(req.path() != "/panic", "handler panicked on purpose");
                res.set_body_static(b"fine");
            })
        })
        .unwrap();
    let mut s = std::net::TcpStream::connect(server.local_addr()).unwrap();
    s.set_read_timeout(Some(support::CLIENT_TIMEOUT)).unwrap();
    s.write_all(b"GET /panic HTTP/1.1\r\nHost: a\r\n\r\nGET /after HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
        .unwrap();
    let resps = parse_all(&read_to_close(&mut s), false);
    assert_eq!(resps.iter().map(|r| r.status).collect::<Vec<_>>(), [500, 200]);
    assert_eq!(resps[1].body_str(), "fine");
}
