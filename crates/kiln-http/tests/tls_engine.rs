//! The engine over TLS: files without `sendfile`, graceful shutdown, limits, HSTS,
//! and the plain-HTTP listener that redirects to HTTPS.

mod tls_support;

use std::io::{Read, Write};
use std::time::Duration;

use kiln_http::{HttpsRedirect, Limits, Server, Tls};
use tls_support::{CLIENT_TIMEOUT, Cert, STREAMED, TempDir, client, connect, exchange, read_response, start, stop};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_rustls::rustls::version::TLS13;

#[tokio::test]
async fn a_large_static_file_over_tls_arrives_whole() {
    let (cert, dir) = (Cert::new(), TempDir::new("file"));
    let (cert_path, key_path) = cert.write(dir.path());
    // Not a multiple of the 16 KiB chunk, and every byte distinct from its neighbours.
    let content: Vec<u8> = (0..5_000_003u32).map(|i| (i % 251) as u8).collect();
    let file = dir.path().join("big.bin");
    std::fs::write(&file, &content).unwrap();
    let server = start(Tls::new(cert_path, key_path), Limits::default());
    let mut stream = connect(server.local_addr(), &client(&cert.der, &[&TLS13], false)).await;
    let request = format!("GET /file?{} HTTP/1.1\r\nHost: a\r\n\r\n", file.display());
    stream.write_all(request.as_bytes()).await.unwrap();
    let (head, body) = read_response(&mut stream).await;
    assert!(head.starts_with("HTTP/1.1 200 OK\r\n"), "{head}");
    assert!(body == content, "the file arrived altered: {} of {} bytes", body.len(), content.len());
    // The connection is still in step for the next request.
    stream.write_all(b"GET /pong HTTP/1.1\r\nHost: a\r\n\r\n").await.unwrap();
    assert_eq!(read_response(&mut stream).await.1, b"PONG");
    stop(server);
}

#[tokio::test]
async fn a_streamed_body_over_tls_sends_each_chunk_and_its_end() {
    // Each chunk is written at once when the stream goes pending after it: bytes that
    // TLS takes but holds must still reach the client.
    let (cert, dir) = (Cert::new(), TempDir::new("stream"));
    let (cert_path, key_path) = cert.write(dir.path());
    let server = start(Tls::new(cert_path, key_path), Limits::default());
    let mut stream = connect(server.local_addr(), &client(&cert.der, &[&TLS13], false)).await;
    let answer = exchange(&mut stream, b"GET /stream HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n").await;
    let (head, body) = answer.split_once("\r\n\r\n").expect("a head");
    assert!(head.starts_with("HTTP/1.1 200 OK\r\n") && head.contains("Transfer-Encoding: chunked"), "{head}");
    let framed: String =
        STREAMED.iter().map(|c| format!("{:x}\r\n{}\r\n", c.len(), std::str::from_utf8(c).unwrap())).collect();
    assert_eq!(body, format!("{framed}0\r\n\r\n"));
    stop(server);
}

#[tokio::test]
async fn shutdown_over_tls_answers_the_request_in_flight_with_connection_close() {
    let (cert, dir) = (Cert::new(), TempDir::new("shutdown"));
    let (cert_path, key_path) = cert.write(dir.path());
    let server = start(Tls::new(cert_path, key_path), Limits::default());
    let mut stream = connect(server.local_addr(), &client(&cert.der, &[&TLS13], false)).await;
    stream.write_all(b"GET /slow HTTP/1.1\r\nHost: a\r\n\r\n").await.unwrap();
    // The request is read and its handler waits 300 ms: shut down meanwhile.
    tokio::time::sleep(Duration::from_millis(100)).await;
    server.shutdown();
    let (head, body) = read_response(&mut stream).await;
    assert!(
        head.starts_with("HTTP/1.1 200 OK\r\n") && head.to_ascii_lowercase().contains("connection: close"),
        "{head}"
    );
    assert_eq!(body, b"slow done");
    tokio::task::spawn_blocking(move || server.wait().unwrap()).await.unwrap();
}

#[tokio::test]
async fn limits_answer_the_same_over_tls() {
    let (cert, dir) = (Cert::new(), TempDir::new("limits"));
    let (cert_path, key_path) = cert.write(dir.path());
    let server = start(Tls::new(cert_path, key_path), Limits { max_body_bytes: 10, ..Limits::default() });
    let mut stream = connect(server.local_addr(), &client(&cert.der, &[&TLS13], false)).await;
    let answer = exchange(&mut stream, b"POST /x HTTP/1.1\r\nHost: a\r\nContent-Length: 11\r\n\r\nhello world").await;
    assert!(answer.starts_with("HTTP/1.1 413 "), "{answer}");
    stop(server);
}

#[tokio::test]
async fn hsts_is_added_to_tls_responses_only_when_asked_and_a_service_own_value_wins() {
    let (cert, dir) = (Cert::new(), TempDir::new("hsts"));
    let (cert_path, key_path) = cert.write(dir.path());
    let config = client(&cert.der, &[&TLS13], false);
    let plain = start(Tls::new(&cert_path, &key_path), Limits::default());
    let hsts = start(Tls::new(&cert_path, &key_path).hsts(Duration::from_secs(600)), Limits::default());
    let get = |target: &str| format!("GET {target} HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n");
    let without = exchange(&mut connect(plain.local_addr(), &config).await, get("/pong").as_bytes()).await;
    assert!(!without.to_ascii_lowercase().contains("strict-transport-security"), "{without}");
    let with = exchange(&mut connect(hsts.local_addr(), &config).await, get("/pong").as_bytes()).await;
    assert!(with.contains("strict-transport-security: max-age=600\r\n"), "{with}");
    let own = exchange(&mut connect(hsts.local_addr(), &config).await, get("/hsts-own").as_bytes()).await;
    assert_eq!(own.to_ascii_lowercase().matches("strict-transport-security").count(), 1, "{own}");
    assert!(own.contains("max-age=5\r\n"), "{own}");
    stop(plain);
    stop(hsts);
}

#[test]
fn redirect_answers_308_to_the_request_host_over_https_and_refuses_a_bad_host() {
    let server = Server::new().listen("127.0.0.1:0").workers(1).serve(|_| HttpsRedirect::new(8443)).expect("listen");
    let ask = |raw: &str| {
        let mut tcp = std::net::TcpStream::connect(server.local_addr()).unwrap();
        tcp.set_read_timeout(Some(CLIENT_TIMEOUT)).unwrap();
        tcp.write_all(raw.as_bytes()).unwrap();
        let mut answer = String::new();
        tcp.read_to_string(&mut answer).unwrap();
        answer
    };
    let cases = [
        ("GET /a?b=1 HTTP/1.1\r\nHost: example.com\r\n", "308", Some("https://example.com:8443/a?b=1")),
        (
            "POST /form HTTP/1.1\r\nHost: example.com:80\r\nContent-Length: 0\r\n",
            "308",
            Some("https://example.com:8443/form"),
        ),
        // The absolute-form target names another host: the Host header decides (RFC 9112 §3.2.2 says they agree).
        ("GET http://example.com/x HTTP/1.1\r\nHost: example.com\r\n", "308", Some("https://example.com:8443/x")),
        ("GET /x HTTP/1.0\r\n", "400", None),
        ("GET /x HTTP/1.1\r\nHost: user@evil.com\r\n", "400", None),
    ];
    for (head, status, location) in cases {
        let answer = ask(&format!("{head}Connection: close\r\n\r\n"));
        assert!(answer.starts_with(&format!("HTTP/1.1 {status} ")), "{head}: {answer}");
        match location {
            Some(url) => assert!(answer.contains(&format!("location: {url}\r\n")), "{head}: {answer}"),
            None => assert!(!answer.to_ascii_lowercase().contains("location:"), "{head}: {answer}"),
        }
    }
    server.shutdown();
    server.wait().unwrap();
}

#[tokio::test]
async fn a_slow_reader_over_tls_gets_the_whole_file_and_a_stopped_one_is_cut_at_the_send_timeout() {
    let (cert, dir) = (Cert::new(), TempDir::new("stall"));
    let (cert_path, key_path) = cert.write(dir.path());
    let small = dir.path().join("small.bin");
    std::fs::write(&small, vec![7u8; 4 << 20]).unwrap();
    // Far more than loopback's socket buffers and rustls's hold together.
    let large = dir.path().join("large.bin");
    std::fs::write(&large, vec![9u8; 32 << 20]).unwrap();
    let limits = Limits { body_timeout: Duration::from_secs(1), ..Limits::default() };
    let server = start(Tls::new(cert_path, key_path), limits);
    let config = client(&cert.der, &[&TLS13], false);
    let get = |file: &std::path::Path| {
        format!("GET /file?{} HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n", file.display())
    };

    // Slow but steady: 32 KiB every 20 ms, each far inside the 1 s send timeout.
    let mut slow = connect(server.local_addr(), &config).await;
    slow.write_all(get(&small).as_bytes()).await.unwrap();
    let mut received = 0;
    let mut chunk = vec![0u8; 32 * 1024];
    let deadline = tokio::time::Instant::now() + 6 * CLIENT_TIMEOUT;
    loop {
        assert!(tokio::time::Instant::now() < deadline, "the slow read took too long");
        match tokio::time::timeout(CLIENT_TIMEOUT, slow.read(&mut chunk)).await.expect("data in time") {
            Ok(0) => break,
            Ok(n) => received += n,
            Err(e) => panic!("the slow reader was cut after {received} bytes: {e}"),
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(received > 4 << 20, "{received} bytes: head and whole body expected");

    // Stopped: reads nothing for 3 s (three send timeouts), then everything it can.
    let mut stopped = connect(server.local_addr(), &config).await;
    stopped.write_all(get(&large).as_bytes()).await.unwrap();
    tokio::time::sleep(Duration::from_secs(3)).await;
    let mut received = 0;
    loop {
        match tokio::time::timeout(CLIENT_TIMEOUT, stopped.read(&mut chunk)).await.expect("closed, not hung") {
            Ok(n) if n > 0 => received += n,
            _ => break,
        }
    }
    assert!(received < 32 << 20, "a reader that stopped for 3 s still got the whole 32 MiB");
    stop(server);
}
