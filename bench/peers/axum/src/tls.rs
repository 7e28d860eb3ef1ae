//! HTTPS with ALPN `h2` and `http/1.1` for the axum peers built with their `tls`
//! feature (axum's own `serve` has no TLS): each accepted connection is handshaken by
//! tokio-rustls and then served by hyper-util's `auto` builder, which speaks whichever
//! protocol ALPN chose. Shared with axum-wiki (`#[path]`). The same TLS stack as kiln:
//! rustls 0.23 on ring; the certificate from `TLS_CERT` / `TLS_KEY` (PEM).

use std::io;
use std::sync::Arc;

use axum::Router;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio_rustls::rustls::crypto::ring;
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio_rustls::rustls::server::ServerSessionMemoryCache;
use tokio_rustls::rustls::ServerConfig;
use tokio_rustls::TlsAcceptor;

/// The certificate and key named by `TLS_CERT` and `TLS_KEY`, if both are set.
pub fn from_env() -> Option<(String, String)> {
    Some((std::env::var("TLS_CERT").ok()?, std::env::var("TLS_KEY").ok()?))
}

fn config(cert: &str, key: &str) -> io::Result<ServerConfig> {
    let bad = |e: &dyn std::fmt::Display| io::Error::new(io::ErrorKind::InvalidInput, e.to_string());
    let chain = CertificateDer::pem_file_iter(cert)
        .map_err(|e| bad(&e))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| bad(&e))?;
    let key = PrivateKeyDer::from_pem_file(key).map_err(|e| bad(&e))?;
    let mut config = ServerConfig::builder_with_provider(Arc::new(ring::default_provider()))
        .with_safe_default_protocol_versions()
        .map_err(|e| bad(&e))?
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .map_err(|e| bad(&e))?;
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    // As kiln: tickets for TLS 1.3, a session cache for TLS 1.2.
    config.ticketer = ring::Ticketer::new().map_err(|e| bad(&e))?;
    config.session_storage = ServerSessionMemoryCache::new(4096);
    Ok(config)
}

/// Serves `app` over TLS on `listener` until accepting fails.
pub async fn serve(listener: TcpListener, app: Router, cert: &str, key: &str) -> io::Result<()> {
    let acceptor = TlsAcceptor::from(Arc::new(config(cert, key)?));
    loop {
        let (tcp, _) = listener.accept().await?;
        let _ = tcp.set_nodelay(true);
        let (acceptor, app) = (acceptor.clone(), app.clone());
        tokio::spawn(async move {
            let Ok(tls) = acceptor.accept(tcp).await else { return };
            let service = TowerToHyperService::new(app);
            let _ = auto::Builder::new(TokioExecutor::new()).serve_connection(TokioIo::new(tls), service).await;
        });
    }
}
