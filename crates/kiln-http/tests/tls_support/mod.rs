//! For the TLS tests: certificates made at run time (never committed), a server with
//! a small service, and a rustls client.

#![allow(dead_code, unreachable_pub)]

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use kiln_http::{Limits, Request, Response, Server, ServerHandle, Service, Tls};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;
use tokio_rustls::client::TlsStream;
use tokio_rustls::rustls::pki_types::{CertificateDer, ServerName};
use tokio_rustls::rustls::{self, ClientConfig, RootCertStore, SupportedProtocolVersion};

/// How long a test client waits on anything before the test fails instead of hanging: a
/// guard against a hang, not a speed check. A 5 MB file through a debug build's TLS took
/// over 10 s while `scripts/test` ran other test binaries beside it.
pub const CLIENT_TIMEOUT: Duration = Duration::from_secs(60);

/// A folder of its own under the system's temporary folder, removed when dropped.
pub struct TempDir(PathBuf);

impl TempDir {
    pub fn new(name: &str) -> TempDir {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("kiln-tls-{name}-{}-{n}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A self-signed certificate for `localhost` and 127.0.0.1, written as `cert.pem` and
/// `key.pem` in a folder.
pub struct Cert {
    pub der: CertificateDer<'static>,
    pub cert_pem: String,
    pub key_pem: String,
}

impl Cert {
    pub fn new() -> Cert {
        let names = vec!["localhost".to_owned(), "127.0.0.1".to_owned()];
        let made = rcgen::generate_simple_self_signed(names).unwrap();
        Cert { der: made.cert.der().clone(), cert_pem: made.cert.pem(), key_pem: made.signing_key.serialize_pem() }
    }

    /// Writes the files to `dir` and returns their paths (certificate, key).
    pub fn write(&self, dir: &Path) -> (PathBuf, PathBuf) {
        let (cert, key) = (dir.join("cert.pem"), dir.join("key.pem"));
        std::fs::write(&cert, &self.cert_pem).unwrap();
        std::fs::write(&key, &self.key_pem).unwrap();
        (cert, key)
    }
}

/// `/pong`: `PONG`; `/slow`: waits 300 ms; `/file?PATH`: the file, by `set_body_file`;
/// `/stream`: [`STREAMED`] as a body stream, pending between its chunks;
/// `/hsts-own`: sets its own `Strict-Transport-Security`; anything else: the target.
pub struct TestService;

impl Service for TestService {
    async fn call<'a>(&'a self, req: Request<'a>, res: &'a mut Response) {
        res.set_content_type("text/plain");
        match req.path() {
            "/pong" => res.set_body_static(b"PONG"),
            "/slow" => {
                tokio::time::sleep(Duration::from_millis(300)).await;
                res.set_body_static(b"slow done");
            }
            "/file" => {
                let file = std::fs::File::open(req.query().unwrap()).unwrap();
                let len = file.metadata().unwrap().len();
                res.set_body_file(file, 0, len);
            }
            "/stream" => res.set_body_stream(Box::pin(Stepped { chunks: STREAMED.to_vec(), pending: true })),
            "/hsts-own" => res.insert_header("strict-transport-security", b"max-age=5").unwrap(),
            _ => res.body_mut().extend_from_slice(req.target().as_bytes()),
        }
    }
}

/// The chunks `/stream` sends.
pub const STREAMED: [&[u8]; 3] = [b"one", b"twenty-two chars long.", b"three"];

/// Yields `chunks` in order, pending (and waking itself) before each, as an event
/// stream between its events.
struct Stepped {
    chunks: Vec<&'static [u8]>,
    pending: bool,
}

impl futures_core::Stream for Stepped {
    type Item = std::io::Result<kiln_http::Bytes>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let pending = !self.pending;
        if std::mem::replace(&mut self.pending, pending) {
            cx.waker().wake_by_ref();
            return Poll::Pending;
        }
        if self.chunks.is_empty() {
            return Poll::Ready(None);
        }
        Poll::Ready(Some(Ok(kiln_http::Bytes::from_static(self.chunks.remove(0)))))
    }
}

/// A one-worker HTTPS server on a free loopback port.
pub fn start(tls: Tls, limits: Limits) -> ServerHandle {
    Server::new()
        .listen("127.0.0.1:0")
        .workers(1)
        .limits(limits)
        .tls(tls)
        .serve(|_| TestService)
        .expect("start the TLS server")
}

/// A client that trusts `cert` only, offers `versions` and ALPN `http/1.1`, and
/// resumes sessions when `resume` (its session store is shared by its connections).
pub fn client(
    cert: &CertificateDer<'static>,
    versions: &[&'static SupportedProtocolVersion],
    resume: bool,
) -> Arc<ClientConfig> {
    client_trusting(std::slice::from_ref(cert), versions, resume)
}

/// Like [`client`], trusting each of `certs`.
pub fn client_trusting(
    certs: &[CertificateDer<'static>],
    versions: &[&'static SupportedProtocolVersion],
    resume: bool,
) -> Arc<ClientConfig> {
    let mut roots = RootCertStore::empty();
    for cert in certs {
        roots.add(cert.clone()).unwrap();
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = ClientConfig::builder_with_provider(provider)
        .with_protocol_versions(versions)
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    if !resume {
        config.resumption = rustls::client::Resumption::disabled();
    }
    Arc::new(config)
}

/// Connects and completes the handshake, within `CLIENT_TIMEOUT`.
pub async fn connect(addr: SocketAddr, config: &Arc<ClientConfig>) -> TlsStream<TcpStream> {
    let connecting = async {
        let tcp = TcpStream::connect(addr).await?;
        let name = ServerName::try_from("localhost").unwrap();
        TlsConnector::from(Arc::clone(config)).connect(name, tcp).await
    };
    tokio::time::timeout(CLIENT_TIMEOUT, connecting).await.expect("handshake in time").expect("handshake")
}

/// Sends `raw` in one write and reads until the server closes, within `CLIENT_TIMEOUT`.
pub async fn exchange(stream: &mut TlsStream<TcpStream>, raw: &[u8]) -> String {
    stream.write_all(raw).await.unwrap();
    let mut out = Vec::new();
    tokio::time::timeout(CLIENT_TIMEOUT, stream.read_to_end(&mut out)).await.expect("answer in time").unwrap();
    String::from_utf8(out).unwrap()
}

/// Reads one response with a `Content-Length` body, within `CLIENT_TIMEOUT`: (head,
/// body). The next request may be sent only once it is read.
pub async fn read_response(stream: &mut TlsStream<TcpStream>) -> (String, Vec<u8>) {
    let reading = async {
        let mut buf = Vec::new();
        let mut chunk = [0u8; 16 * 1024];
        loop {
            if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                let head = String::from_utf8(buf[..end + 4].to_vec()).unwrap();
                let len: usize = head
                    .lines()
                    .find_map(|l| {
                        l.to_ascii_lowercase().strip_prefix("content-length: ").map(|v| v.trim().parse().unwrap())
                    })
                    .expect("content-length");
                let mut body = buf[end + 4..].to_vec();
                while body.len() < len {
                    let n = stream.read(&mut chunk).await.unwrap();
                    assert!(n > 0, "closed with {} of {len} body bytes", body.len());
                    body.extend_from_slice(&chunk[..n]);
                }
                assert_eq!(body.len(), len, "read past the response: pipelined answers need `exchange`");
                return (head, body);
            }
            let n = stream.read(&mut chunk).await.unwrap();
            assert!(n > 0, "closed before a whole head: {:?}", String::from_utf8_lossy(&buf));
            buf.extend_from_slice(&chunk[..n]);
        }
    };
    tokio::time::timeout(CLIENT_TIMEOUT, reading).await.expect("response in time")
}

/// Stops the server and waits for its workers.
pub fn stop(server: ServerHandle) {
    server.shutdown();
    server.wait().unwrap();
}
