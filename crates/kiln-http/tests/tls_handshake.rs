//! TLS in process: the handshake, what it negotiates, resumption, the certificate
//! files and their reload, and clients that never complete a handshake.

mod tls_support;

use std::io::{Read, Write};
use std::time::{Duration, Instant};

use kiln_http::{Limits, Tls};
use tls_support::{
    CLIENT_TIMEOUT, Cert, TempDir, client, client_trusting, connect, exchange, read_response, start, stop,
};
use tokio::io::AsyncWriteExt;
use tokio_rustls::rustls::HandshakeKind;
use tokio_rustls::rustls::version::{TLS12, TLS13};
use tokio_rustls::rustls::{ProtocolVersion, SupportedProtocolVersion};

fn server_with(cert: &Cert, dir: &TempDir, limits: Limits) -> kiln_http::ServerHandle {
    let (cert_path, key_path) = cert.write(dir.path());
    start(Tls::new(cert_path, key_path), limits)
}

#[tokio::test]
async fn pipelined_requests_in_one_write_are_answered_in_order_over_tls() {
    let (cert, dir) = (Cert::new(), TempDir::new("pipeline"));
    let server = server_with(&cert, &dir, Limits::default());
    let mut stream = connect(server.local_addr(), &client(&cert.der, &[&TLS13], true)).await;
    let raw = b"GET /one HTTP/1.1\r\nHost: a\r\n\r\nGET /pong HTTP/1.1\r\nHost: a\r\n\r\n\
GET /three HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n";
    let answer = exchange(&mut stream, raw).await;
    let (one, pong, three) =
        (answer.find("/one").unwrap(), answer.find("PONG").unwrap(), answer.find("/three").unwrap());
    assert!(one < pong && pong < three, "{answer}");
    assert_eq!(answer.matches("HTTP/1.1 200 OK").count(), 3, "{answer}");
    stop(server);
}

#[tokio::test]
async fn tls12_and_tls13_both_negotiate_with_alpn_http11() {
    let (cert, dir) = (Cert::new(), TempDir::new("versions"));
    let server = server_with(&cert, &dir, Limits::default());
    let cases: [(&'static SupportedProtocolVersion, ProtocolVersion); 2] =
        [(&TLS12, ProtocolVersion::TLSv1_2), (&TLS13, ProtocolVersion::TLSv1_3)];
    for (offered, want) in cases {
        let mut stream = connect(server.local_addr(), &client(&cert.der, &[offered], true)).await;
        let (_, conn) = stream.get_ref();
        assert_eq!(conn.protocol_version(), Some(want));
        assert_eq!(conn.alpn_protocol(), Some(&b"http/1.1"[..]));
        let answer = exchange(&mut stream, b"GET /pong HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n").await;
        assert!(answer.starts_with("HTTP/1.1 200 OK\r\n") && answer.ends_with("PONG"), "{want:?}: {answer}");
    }
    stop(server);
}

#[tokio::test]
async fn a_second_connection_resumes_the_session_with_tls12_and_tls13() {
    let (cert, dir) = (Cert::new(), TempDir::new("resume"));
    let server = server_with(&cert, &dir, Limits::default());
    for version in [&TLS12, &TLS13] {
        let config = client(&cert.der, &[version], true);
        let mut first = connect(server.local_addr(), &config).await;
        assert_eq!(first.get_ref().1.handshake_kind(), Some(HandshakeKind::Full));
        // TLS 1.3 tickets come after the handshake: reading the answer takes them in.
        exchange(&mut first, b"GET /pong HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n").await;
        let second = connect(server.local_addr(), &config).await;
        assert_eq!(second.get_ref().1.handshake_kind(), Some(HandshakeKind::Resumed), "{version:?}");
        let fresh = connect(server.local_addr(), &client(&cert.der, &[version], false)).await;
        assert_eq!(fresh.get_ref().1.handshake_kind(), Some(HandshakeKind::Full), "resumption off: {version:?}");
    }
    stop(server);
}

#[test]
fn a_bad_certificate_or_key_file_refuses_to_start_naming_the_file() {
    let dir = TempDir::new("bad-files");
    let (good, other) = (Cert::new(), Cert::new());
    let (cert, key) = good.write(dir.path());
    let missing = dir.path().join("missing.pem");
    let not_pem = dir.path().join("not-pem.pem");
    std::fs::write(&not_pem, "this is not a certificate\n").unwrap();
    let other_key = dir.path().join("other-key.pem");
    std::fs::write(&other_key, &other.key_pem).unwrap();
    let cases = [
        (Tls::new(&missing, &key), &missing, "cannot read the certificate file"),
        (Tls::new(&not_pem, &key), &not_pem, "holds no PEM certificate"),
        (Tls::new(&key, &key), &key, "holds no PEM certificate"),
        (Tls::new(&cert, &missing), &missing, "cannot read the key file"),
        (Tls::new(&cert, &not_pem), &not_pem, "holds no PEM private key"),
        (Tls::new(&cert, &other_key), &other_key, "does not match"),
    ];
    for (tls, named, why) in cases {
        let started =
            kiln_http::Server::new().listen("127.0.0.1:0").workers(1).tls(tls).serve(|_| tls_support::TestService);
        let err = started.expect_err("a bad file must refuse to start");
        let message = err.to_string();
        assert!(err.is_tls(), "{message}");
        assert!(message.contains(&*named.to_string_lossy()) && message.contains(why), "{message}");
    }
}

/// The certificate the server presents to a new connection.
async fn presented(server: &kiln_http::ServerHandle, trusted: &Cert) -> Vec<u8> {
    let stream = connect(server.local_addr(), &client(&trusted.der, &[&TLS13], false)).await;
    stream.get_ref().1.peer_certificates().unwrap()[0].to_vec()
}

#[tokio::test]
async fn reload_serves_the_new_certificate_and_a_bad_new_one_keeps_the_old() {
    let (old, new, dir) = (Cert::new(), Cert::new(), TempDir::new("reload"));
    let server = server_with(&old, &dir, Limits::default());
    assert_eq!(presented(&server, &old).await, old.der.to_vec());
    // A connection opened before the reload keeps working after it.
    let mut open = connect(server.local_addr(), &client(&old.der, &[&TLS13], false)).await;

    new.write(dir.path());
    server.reload_tls().unwrap();
    assert_eq!(presented(&server, &new).await, new.der.to_vec());
    open.write_all(b"GET /pong HTTP/1.1\r\nHost: a\r\n\r\n").await.unwrap();
    assert_eq!(read_response(&mut open).await.1, b"PONG");

    std::fs::write(dir.path().join("cert.pem"), "-----BEGIN CERTIFICATE-----\ngarbage\n").unwrap();
    let err = server.reload_tls().expect_err("a bad certificate is refused");
    assert!(err.is_tls() && err.to_string().contains("cert.pem"), "{err}");
    assert_eq!(presented(&server, &new).await, new.der.to_vec(), "the old certificate stays");
    stop(server);
}

#[tokio::test]
async fn sighup_reloads_the_certificate() {
    let (old, new, dir) = (Cert::new(), Cert::new(), TempDir::new("sighup"));
    let server = server_with(&old, &dir, Limits::default());
    assert_eq!(presented(&server, &old).await, old.der.to_vec());
    new.write(dir.path());
    nix::sys::signal::raise(nix::sys::signal::Signal::SIGHUP).unwrap();
    // The reload runs on its own thread: poll for it, bounded.
    let both = client_trusting(&[old.der.clone(), new.der.clone()], &[&TLS13], false);
    let deadline = Instant::now() + CLIENT_TIMEOUT;
    loop {
        let stream = connect(server.local_addr(), &both).await;
        if stream.get_ref().1.peer_certificates().unwrap()[0] == new.der {
            break;
        }
        assert!(Instant::now() < deadline, "SIGHUP did not reload the certificate");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    stop(server);
}

#[test]
fn plain_http_to_the_tls_port_gets_400_and_a_clean_close() {
    let (cert, dir) = (Cert::new(), TempDir::new("plain"));
    let server = server_with(&cert, &dir, Limits::default());
    let mut tcp = std::net::TcpStream::connect(server.local_addr()).unwrap();
    tcp.set_read_timeout(Some(CLIENT_TIMEOUT)).unwrap();
    tcp.write_all(b"GET / HTTP/1.1\r\nHost: a\r\n\r\n").unwrap();
    let mut answer = String::new();
    tcp.read_to_string(&mut answer).expect("a clean close, not a reset or a hang");
    assert!(answer.starts_with("HTTP/1.1 400 Bad Request\r\n") && answer.contains("HTTPS"), "{answer}");
    stop(server);
}

#[test]
fn a_silent_or_dribbling_handshake_is_cut_at_the_handshake_timeout() {
    let (cert, dir) = (Cert::new(), TempDir::new("slow"));
    let limits = Limits { handshake_timeout: Duration::from_millis(300), ..Limits::default() };
    let server = server_with(&cert, &dir, limits);
    // Silent: connects and sends nothing.
    let mut silent = std::net::TcpStream::connect(server.local_addr()).unwrap();
    silent.set_read_timeout(Some(CLIENT_TIMEOUT)).unwrap();
    let started = Instant::now();
    assert_eq!(silent.read(&mut [0u8; 64]).expect("closed, not timed out on our side"), 0);
    assert!(started.elapsed() >= Duration::from_millis(250), "closed before the timeout");
    // Dribbling: a TLS record header, then one byte of hello every 50 ms, far slower
    // than a hello needs; the server must close before the client runs out of bytes.
    let mut dribble = std::net::TcpStream::connect(server.local_addr()).unwrap();
    dribble.set_read_timeout(Some(Duration::from_millis(50))).unwrap();
    dribble.write_all(&[22, 3, 1, 0x02, 0x00]).unwrap();
    let deadline = Instant::now() + CLIENT_TIMEOUT;
    loop {
        assert!(Instant::now() < deadline, "a dribbled hello kept the connection past the handshake timeout");
        match dribble.read(&mut [0u8; 64]) {
            Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {}
            // Closed (or reset, or an alert): cut.
            _ => break,
        }
        if dribble.write_all(&[1]).is_err() {
            break;
        }
    }
    stop(server);
}
