//! The PROXY protocol on real sockets: believed from trusted proxies only, refused when
//! malformed or untrusted, read exactly (nothing after the header is lost or parsed as
//! part of it), bounded by the header timeout.

mod support;

use std::io::Write;
use std::time::Duration;

use kiln_http::{Limits, Server};
use support::{TestServer, parse_all, read_to_close};

const GET_PEER: &[u8] = b"GET /peer HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n";

fn server(trusted: &str) -> TestServer {
    let limits = Limits { header_timeout: Duration::from_secs(2), ..Limits::default() };
    TestServer::start_with(
        Server::new().workers(1).limits(limits).proxy_protocol(true).trusted_proxies(trusted.parse().unwrap()),
    )
}

fn v2(command: u8, family: u8, payload: &[u8]) -> Vec<u8> {
    let mut h = b"\r\n\r\n\0\r\nQUIT\n".to_vec();
    h.extend_from_slice(&[0x20 | command, family]);
    h.extend_from_slice(&(payload.len() as u16).to_be_bytes());
    h.extend_from_slice(payload);
    h
}

const TCP4: [u8; 12] = [192, 0, 2, 1, 198, 51, 100, 2, 0xdc, 0x04, 0x01, 0xbb];

fn with_request(header: &[u8], request: &[u8]) -> Vec<u8> {
    [header, request].concat()
}

#[test]
fn a_trusted_proxys_header_names_the_client_in_v1_and_v2() {
    let server = server("127.0.0.1/32");
    let cases: [(Vec<u8>, String); 4] = [
        (b"PROXY TCP4 192.0.2.1 198.51.100.2 56324 443\r\n".to_vec(), "192.0.2.1:56324".into()),
        (b"PROXY TCP6 2001:db8::1 2001:db8::2 4711 80\r\n".to_vec(), "[2001:db8::1]:4711".into()),
        (v2(1, 0x11, &TCP4), "192.0.2.1:56324".into()),
        // LOCAL: the proxy's own connection (a health check) keeps the socket's peer.
        (v2(0, 0x00, &[]), "127.0.0.1:".into()),
    ];
    for (header, want) in cases {
        let resps = server.exchange(&with_request(&header, GET_PEER));
        assert_eq!(resps.len(), 1, "{header:?}");
        assert_eq!(resps[0].status, 200);
        assert!(resps[0].body_str().starts_with(&want), "{} for {header:?}", resps[0].body_str());
    }
}

#[test]
fn the_requests_after_a_header_are_all_answered_even_when_the_header_arrives_in_pieces() {
    let server = server("127.0.0.1");
    let mut s = server.connect();
    s.set_nodelay(true).unwrap();
    let header = b"PROXY TCP4 192.0.2.1 198.51.100.2 56324 443\r\n";
    for piece in [&header[..3], &header[3..20], &header[20..]] {
        s.write_all(piece).unwrap();
        std::thread::sleep(Duration::from_millis(30));
    }
    let pipelined = b"GET /peer HTTP/1.1\r\nHost: a\r\n\r\nGET /peer HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n";
    s.write_all(pipelined).unwrap();
    let resps = parse_all(&read_to_close(&mut s), false);
    assert_eq!(resps.iter().map(|r| r.body_str()).collect::<Vec<_>>(), ["192.0.2.1:56324"; 2]);
}

#[test]
fn proxy_headers_from_an_untrusted_source_are_refused() {
    // 127.0.0.1 is not in the trusted range: its headers would be a client's lie.
    let server = server("10.0.0.0/8");
    for header in [b"PROXY TCP4 192.0.2.1 198.51.100.2 56324 443\r\n".to_vec(), v2(1, 0x11, &TCP4)] {
        let mut s = server.connect();
        s.write_all(&with_request(&header, GET_PEER)).unwrap();
        assert!(read_to_close(&mut s).is_empty(), "answered an untrusted PROXY header {header:?}");
    }
    assert!(server.seen.targets().is_empty(), "a request after a refused header was parsed");
    // The same peer without a header is served as itself.
    let resps = server.exchange(GET_PEER);
    assert!(resps[0].body_str().starts_with("127.0.0.1:"), "{}", resps[0].body_str());
}

#[test]
fn a_malformed_proxy_header_is_refused_and_nothing_after_it_is_parsed() {
    let server = server("127.0.0.1");
    let mut bad_version = v2(1, 0x11, &TCP4);
    bad_version[12] = 0x31;
    let mut too_long = v2(1, 0x11, &TCP4);
    too_long[14..16].copy_from_slice(&4096u16.to_be_bytes());
    let malformed = [
        b"PROXY TCP4 999.0.2.1 198.51.100.2 56324 443\r\n".to_vec(),
        b"PROXY TCP4 192.0.2.1 198.51.100.2 56324\r\n".to_vec(),
        format!("PROXY UNKNOWN {}\r\n", "x".repeat(120)).into_bytes(),
        bad_version,
        too_long,
        v2(1, 0x11, &TCP4[..8]),
        // A trusted proxy must send a header: a bare request is not one.
        Vec::new(),
    ];
    for header in malformed {
        let mut s = server.connect();
        s.write_all(&with_request(&header, GET_PEER)).unwrap();
        assert!(read_to_close(&mut s).is_empty(), "answered after {:?}", String::from_utf8_lossy(&header));
    }
    assert!(server.seen.targets().is_empty(), "a request after a malformed header was parsed");
}

#[test]
fn a_trusted_proxy_that_sends_no_header_is_cut_at_the_header_timeout() {
    let server = server("127.0.0.1");
    let mut s = server.connect();
    // The connection closes without an answer (the client's own read timeout, 10 s,
    // is far beyond the server's 2 s header timeout).
    assert!(read_to_close(&mut s).is_empty());
}
