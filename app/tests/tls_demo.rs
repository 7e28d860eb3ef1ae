//! kiln-demo over HTTPS as a deployment runs it: `--tls-cert`/`--tls-key`, HSTS, the
//! redirecting plain-HTTP listener, a certificate renewed with a real SIGHUP, and a bad
//! certificate refusing to start.

use std::net::SocketAddr;
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use kiln_test_support::{Server, TempDir};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_rustls::TlsConnector;
use tokio_rustls::rustls::pki_types::{CertificateDer, ServerName};
use tokio_rustls::rustls::{self, ClientConfig, RootCertStore};

/// How long a test client waits on anything before the test fails instead of hanging.
const CLIENT_TIMEOUT: Duration = Duration::from_secs(10);

/// A self-signed certificate for localhost, written as `cert.pem`/`key.pem` in `dir`.
fn write_cert(dir: &std::path::Path) -> CertificateDer<'static> {
    let made = rcgen::generate_simple_self_signed(vec!["localhost".to_owned()]).unwrap();
    std::fs::write(dir.join("cert.pem"), made.cert.pem()).unwrap();
    std::fs::write(dir.join("key.pem"), made.signing_key.serialize_pem()).unwrap();
    made.cert.der().clone()
}

/// `GET /pong` over TLS trusting `certs`: (the certificate presented, the answer).
async fn get_pong(addr: SocketAddr, certs: &[CertificateDer<'static>]) -> (CertificateDer<'static>, String) {
    let mut roots = RootCertStore::empty();
    for cert in certs {
        roots.add(cert.clone()).unwrap();
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    let exchange = async {
        let tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
        let name = ServerName::try_from("localhost").unwrap();
        let mut tls = TlsConnector::from(Arc::new(config)).connect(name, tcp).await.unwrap();
        let presented = tls.get_ref().1.peer_certificates().unwrap()[0].clone();
        tls.write_all(b"GET /pong HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n").await.unwrap();
        let mut answer = String::new();
        tls.read_to_string(&mut answer).await.unwrap();
        (presented, answer)
    };
    tokio::time::timeout(CLIENT_TIMEOUT, exchange).await.expect("answer in time")
}

#[tokio::test]
async fn demo_serves_https_with_hsts_redirects_plain_http_and_sighup_renews_its_certificate() {
    let dir = TempDir::new("tls-demo");
    let old = write_cert(dir.path());
    let (cert, key) = (dir.path().join("cert.pem"), dir.path().join("key.pem"));
    let database = dir.sqlite_url();
    // A port free a moment ago, for the redirecting listener (the demo prints only the
    // HTTPS address in the line the test support reads).
    let redirect = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let (cert_arg, key_arg, redirect_arg) = (cert.to_str().unwrap(), key.to_str().unwrap(), redirect.to_string());
    let args = ["--workers", "1", "--database", &database, "--tls-cert", cert_arg, "--tls-key", key_arg, "--hsts"];
    let server =
        Server::start(env!("CARGO_BIN_EXE_kiln-demo"), &[&args[..], &["--redirect-http", &redirect_arg]].concat());
    let (presented, answer) = get_pong(server.addr, std::slice::from_ref(&old)).await;
    assert_eq!(presented, old);
    assert!(answer.starts_with("HTTP/1.1 200 OK\r\n") && answer.ends_with("PONG"), "{answer}");
    assert!(answer.contains("strict-transport-security: max-age=31536000\r\n"), "{answer}");

    let moved = kiln_test_support::request(
        redirect,
        "GET /pong?x=1 HTTP/1.1\r\nHost: localhost:80\r\nConnection: close\r\n\r\n",
    )
    .unwrap();
    assert_eq!(moved.status, 308);
    assert_eq!(moved.header("location"), Some(&*format!("https://localhost:{}/pong?x=1", server.addr.port())));

    let new = write_cert(dir.path());
    let pid = nix::unistd::Pid::from_raw(server.child.id() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGHUP).unwrap();
    let deadline = Instant::now() + CLIENT_TIMEOUT;
    while get_pong(server.addr, &[old.clone(), new.clone()]).await.0 != new {
        assert!(Instant::now() < deadline, "SIGHUP did not renew the certificate");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[test]
fn demo_refuses_to_start_with_a_key_that_does_not_match_naming_the_file() {
    let dir = TempDir::new("tls-demo-bad");
    write_cert(dir.path());
    let other = TempDir::new("tls-demo-other");
    write_cert(other.path());
    let cert = dir.path().join("cert.pem");
    let key = other.path().join("key.pem");
    let out = Command::new(env!("CARGO_BIN_EXE_kiln-demo"))
        .args(["--listen", "127.0.0.1:0", "--database", &dir.sqlite_url()])
        .args(["--tls-cert", cert.to_str().unwrap(), "--tls-key", key.to_str().unwrap()])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "started with a mismatched key: {stderr}");
    assert!(stderr.contains("does not match") && stderr.contains(key.to_str().unwrap()), "{stderr}");
}
