//! The server-wide TLS state built once at start: rustls's configuration, shared by
//! every worker, and the certificate store a reload swaps.

use std::sync::Arc;
use std::time::Duration;

use tokio_rustls::rustls::server::ServerSessionMemoryCache;
use tokio_rustls::rustls::version::{TLS12, TLS13};
use tokio_rustls::rustls::{ServerConfig, crypto::ring};

use super::certs::CertStore;
use super::settings::Tls;
use crate::error::Error;

/// TLS 1.2 sessions the server remembers for resumption by session id (TLS 1.3
/// resumes with tickets, which the server does not store). Each is a few hundred
/// bytes; nginx's `ssl_session_cache shared:SSL:1m` holds about 4,000.
const SESSION_CACHE_ENTRIES: usize = 4096;
/// The protocols offered by ALPN, most preferred first: a client that offers both
/// gets HTTP/2; one that offers none gets HTTP/1.1.
const ALPN: &[&[u8]] = &[b"h2", b"http/1.1"];

/// What [`Tls`] settings become once the files are read.
#[derive(Debug, Clone)]
pub(crate) struct Loaded {
    pub(crate) config: Arc<ServerConfig>,
    pub(crate) store: Arc<CertStore>,
    /// The `Strict-Transport-Security` value, when HSTS is on.
    pub(crate) hsts: Option<Arc<[u8]>>,
}

impl Tls {
    /// Reads the certificate and key and builds the configuration every handshake
    /// uses. Refuses files that are missing, not PEM, or do not match.
    pub(crate) fn load(&self) -> Result<Loaded, Error> {
        let provider = Arc::new(ring::default_provider());
        let store = CertStore::open(&self.cert, &self.key, Arc::clone(&provider)).map_err(Error::tls)?;
        let store = Arc::new(store);
        let mut config = ServerConfig::builder_with_provider(provider)
            .with_protocol_versions(&[&TLS13, &TLS12])
            .map_err(|e| Error::tls(format!("TLS versions: {e}")))?
            .with_no_client_auth()
            .with_cert_resolver(Arc::clone(&store) as _);
        config.alpn_protocols = ALPN.iter().map(|p| p.to_vec()).collect();
        // Tickets (RFC 8446 §4.6.1, RFC 5077) let a returning client skip the key
        // exchange; their key rotates every few hours and is shared by every worker.
        config.ticketer = ring::Ticketer::new().map_err(|e| Error::tls(format!("session tickets: {e}")))?;
        config.session_storage = ServerSessionMemoryCache::new(SESSION_CACHE_ENTRIES);
        let hsts = self.hsts.map(hsts_value);
        Ok(Loaded { config: Arc::new(config), store, hsts })
    }
}

fn hsts_value(max_age: Duration) -> Arc<[u8]> {
    format!("max-age={}", max_age.as_secs()).into_bytes().into()
}
