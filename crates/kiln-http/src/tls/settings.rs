//! What a deployment chooses for HTTPS: the certificate, the key, and HSTS.

use std::path::PathBuf;
use std::time::Duration;

/// HTTPS settings for [`Server::tls`](crate::Server::tls).
///
/// The certificate file holds the full chain in PEM (the server's certificate first,
/// then the intermediates); the key file holds its private key in PEM (PKCS#8,
/// PKCS#1 or SEC1). Both are read when the server starts (a missing, unreadable or
/// mismatched file refuses to start, naming the file) and again on SIGHUP.
///
/// ```no_run
/// use std::time::Duration;
/// use kiln_http::{service_fn, Server, Tls};
///
/// let tls = Tls::new("cert.pem", "key.pem").hsts(Duration::from_secs(365 * 24 * 3600));
/// let server = Server::new()
///     .listen("0.0.0.0:443")
///     .tls(tls)
///     .serve(|_| service_fn(|_req, res| res.body_mut().extend_from_slice(b"hi")))
///     .expect("certificate, key and address");
/// server.run_until_signal().expect("serve");
/// ```
#[derive(Debug, Clone)]
pub struct Tls {
    pub(crate) cert: PathBuf,
    pub(crate) key: PathBuf,
    pub(crate) hsts: Option<Duration>,
}

impl Tls {
    /// Serve HTTPS with the certificate chain at `cert` and the private key at `key`.
    pub fn new(cert: impl Into<PathBuf>, key: impl Into<PathBuf>) -> Self {
        Tls { cert: cert.into(), key: key.into(), hsts: None }
    }

    /// Adds `Strict-Transport-Security: max-age=<max_age>` to every response, unless
    /// the service set that header itself (RFC 6797): browsers then use HTTPS for this
    /// host for `max_age` without trying plain HTTP first.
    pub fn hsts(mut self, max_age: Duration) -> Self {
        self.hsts = Some(max_age);
        self
    }
}
