//! HTTP/2 over TLS: chosen by ALPN (`h2` before `http/1.1`), with the same answers,
//! HSTS, and HTTP/1.1 for a client that offers only it.

mod h2_support;
mod tls_support;

use std::sync::Arc;

use h2_support::{client, get, send};
use kiln_http::{Limits, Tls};
use tls_support::{Cert, TempDir, client_trusting, connect, start, stop};
use tokio_rustls::rustls::ClientConfig;
use tokio_rustls::rustls::version::{TLS12, TLS13};

/// A client config that offers `alpn`, TLS 1.3 and 1.2.
fn offering(cert: &Cert, alpn: &[&[u8]]) -> Arc<ClientConfig> {
    let mut config = Arc::unwrap_or_clone(client_trusting(std::slice::from_ref(&cert.der), &[&TLS13, &TLS12], false));
    config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
    Arc::new(config)
}

#[tokio::test]
async fn a_client_offering_h2_and_http11_gets_h2_and_its_answers() {
    let (cert, dir) = (Cert::new(), TempDir::new("h2-alpn"));
    let (cert_path, key_path) = cert.write(dir.path());
    let tls = Tls::new(cert_path, key_path).hsts(std::time::Duration::from_secs(60));
    let server = start(tls, Limits::default());
    let stream = connect(server.local_addr(), &offering(&cert, &[b"h2", b"http/1.1"])).await;
    assert_eq!(stream.get_ref().1.alpn_protocol(), Some(&b"h2"[..]));
    let h2 = client(stream).await;
    let pong = get(&h2, "/pong").await;
    assert_eq!((pong.status, pong.body_str()), (200, "PONG"));
    assert_eq!(pong.header("strict-transport-security"), Some("max-age=60"));
    assert_eq!(get(&h2, "/hsts-own").await.header("strict-transport-security"), Some("max-age=5"));
    // A file goes by reads, in pieces the window allows.
    let content: Vec<u8> = (0..300_001u32).map(|i| (i % 251) as u8).collect();
    let file = dir.path().join("f.bin");
    std::fs::write(&file, &content).unwrap();
    let answer = send(&h2, "GET", &format!("/file?{}", file.display()), b"").await.unwrap();
    assert!(answer.body == content, "{} of {} bytes", answer.body.len(), content.len());
    stop(server);
}

#[tokio::test]
async fn a_client_offering_only_http11_or_nothing_gets_http11() {
    let (cert, dir) = (Cert::new(), TempDir::new("h2-alpn-h1"));
    let (cert_path, key_path) = cert.write(dir.path());
    let server = start(Tls::new(cert_path, key_path), Limits::default());
    for alpn in [&[&b"http/1.1"[..]][..], &[]] {
        let mut stream = connect(server.local_addr(), &offering(&cert, alpn)).await;
        assert_ne!(stream.get_ref().1.alpn_protocol(), Some(&b"h2"[..]));
        let answer =
            tls_support::exchange(&mut stream, b"GET /pong HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n").await;
        assert!(answer.starts_with("HTTP/1.1 200 OK\r\n") && answer.ends_with("PONG"), "{answer}");
    }
    stop(server);
}
