//! New TLS connections per second, each carrying one `GET PATH` with
//! `Connection: close`: `tls-handshakes PORT SECONDS THREADS full|resume [tls12|tls13]`.
//!
//! Loopback only (127.0.0.1). Bounded: every thread stops at SECONDS, every socket has
//! a 5 s timeout. Certificates are not checked (the server is ours, on loopback): what
//! is measured is the server's handshake, not the client's verification. `resume`
//! offers each thread's last session (TLS 1.3 ticket or TLS 1.2 session id); `full`
//! never does. Prints one JSON line: connections, errors, resumed, seconds.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::Resumption;
use rustls::crypto::{ring, verify_tls12_signature, verify_tls13_signature, CryptoProvider};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{ClientConfig, ClientConnection, DigitallySignedStruct, HandshakeKind, SignatureScheme, StreamOwned};

const SOCKET_TIMEOUT: Duration = Duration::from_secs(5);
const MAX_SECONDS: u64 = 600;

#[derive(Debug)]
struct AnyCert(Arc<CryptoProvider>);

impl ServerCertVerifier for AnyCert {
    fn verify_server_cert(
        &self,
        _: &CertificateDer<'_>,
        _: &[CertificateDer<'_>],
        _: &ServerName<'_>,
        _: &[u8],
        _: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls12_signature(message, cert, dss, &self.0.signature_verification_algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(message, cert, dss, &self.0.signature_verification_algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

#[derive(Default)]
struct Count {
    connections: u64,
    errors: u64,
    resumed: u64,
}

fn one(config: &Arc<ClientConfig>, port: u16, request: &[u8], buf: &mut Vec<u8>) -> Result<bool, Box<dyn std::error::Error>> {
    let tcp = TcpStream::connect(("127.0.0.1", port))?;
    tcp.set_read_timeout(Some(SOCKET_TIMEOUT))?;
    tcp.set_write_timeout(Some(SOCKET_TIMEOUT))?;
    tcp.set_nodelay(true)?;
    let conn = ClientConnection::new(Arc::clone(config), ServerName::try_from("localhost")?)?;
    let mut tls = StreamOwned::new(conn, tcp);
    tls.write_all(request)?;
    buf.clear();
    // Up to the server's close; a close without close_notify still ends the answer.
    match tls.read_to_end(buf) {
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof && !buf.is_empty() => {}
        Err(e) => return Err(e.into()),
    }
    if !buf.starts_with(b"HTTP/1.1 200") {
        return Err("not a 200 answer".into());
    }
    Ok(tls.conn.handshake_kind() == Some(HandshakeKind::Resumed))
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 5 {
        eprintln!("usage: tls-handshakes PORT SECONDS THREADS full|resume [tls12|tls13] [PATH]");
        std::process::exit(2);
    }
    let port: u16 = args[1].parse().expect("PORT");
    let seconds: u64 = args[2].parse::<u64>().expect("SECONDS").min(MAX_SECONDS);
    let threads: usize = args[3].parse::<usize>().expect("THREADS").clamp(1, 256);
    let resume = match args[4].as_str() {
        "resume" => true,
        "full" => false,
        other => panic!("full or resume, not {other}"),
    };
    let version = match args.get(5).map(String::as_str) {
        None | Some("tls13") => &rustls::version::TLS13,
        Some("tls12") => &rustls::version::TLS12,
        Some(other) => panic!("tls12 or tls13, not {other}"),
    };
    let path = args.get(6).cloned().unwrap_or_else(|| "/pong".into());
    let request = format!("GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n").into_bytes();
    let provider = Arc::new(ring::default_provider());
    let deadline = Instant::now() + Duration::from_secs(seconds);
    let started = Instant::now();
    let workers: Vec<_> = (0..threads)
        .map(|_| {
            let provider = Arc::clone(&provider);
            let request = request.clone();
            std::thread::spawn(move || {
                // One config per thread: its session store holds that thread's sessions.
                let mut config = ClientConfig::builder_with_provider(Arc::clone(&provider))
                    .with_protocol_versions(&[version])
                    .expect("version")
                    .dangerous()
                    .with_custom_certificate_verifier(Arc::new(AnyCert(provider)))
                    .with_no_client_auth();
                config.alpn_protocols = vec![b"http/1.1".to_vec()];
                config.resumption = if resume { Resumption::in_memory_sessions(64) } else { Resumption::disabled() };
                let config = Arc::new(config);
                let mut count = Count::default();
                let mut buf = Vec::with_capacity(1024);
                while Instant::now() < deadline {
                    match one(&config, port, &request, &mut buf) {
                        Ok(resumed) => {
                            count.connections += 1;
                            count.resumed += u64::from(resumed);
                        }
                        Err(_) => count.errors += 1,
                    }
                }
                count
            })
        })
        .collect();
    let mut total = Count::default();
    for worker in workers {
        let count = worker.join().expect("a load thread panicked");
        total.connections += count.connections;
        total.errors += count.errors;
        total.resumed += count.resumed;
    }
    let elapsed = started.elapsed().as_secs_f64();
    println!(
        "{{\"connections\": {}, \"errors\": {}, \"resumed\": {}, \"seconds\": {:.3}}}",
        total.connections, total.errors, total.resumed, elapsed
    );
}
