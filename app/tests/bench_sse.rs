//! The SSE fan-out benchmark's endpoints (`app/src/bench_sse.rs`) over a socket,
//! against the real `kiln-demo` binary: what `POST /bench/publish` sends reaches every
//! open `GET /bench/events`, uncompressed, and a payload over the limit is refused.

mod site_support;

use kiln_test_support::{Reply, Streaming, request};
use site_support::Site;

/// Opens an event stream (offering gzip, which a benchmark stream must not get) and reads its head.
fn subscribe(site: &Site) -> Streaming {
    let raw = "GET /bench/events HTTP/1.1\r\nHost: a\r\nAccept-Encoding: gzip, br\r\n\r\n";
    let mut stream = Streaming::open(site.server.addr, raw);
    let head = stream.read_until("\r\n\r\n");
    assert!(head.starts_with("HTTP/1.1 200 OK\r\n"), "{head}");
    assert!(head.contains("Content-Type: text/event-stream\r\n"), "{head}");
    assert!(!head.to_ascii_lowercase().contains("content-encoding"), "compressed: {head}");
    stream
}

fn publish(site: &Site, body: &str) -> Reply {
    let raw = format!(
        "POST /bench/publish HTTP/1.1\r\nHost: a\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    request(site.server.addr, &raw).expect("publish")
}

#[test]
fn one_publish_reaches_every_subscriber_with_its_payload() {
    let site = Site::sqlite("bench-sse", &[]);
    let mut subscribers = [subscribe(&site), subscribe(&site), subscribe(&site)];
    let answer = publish(&site, "7 123456789");
    assert_eq!(answer.status, 200, "{}", answer.head);
    for subscriber in &mut subscribers {
        let event = subscriber.read_until("\n\n");
        assert!(event.contains("data: 7 123456789\n\n"), "{event}");
    }
}

#[test]
fn a_payload_longer_than_a_timestamp_needs_is_refused() {
    let site = Site::sqlite("bench-sse-long", &[]);
    let answer = publish(&site, &"1".repeat(300));
    assert_eq!(answer.status, 400, "{}", answer.head);
}
