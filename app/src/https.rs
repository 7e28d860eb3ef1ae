//! The HTTPS flags: the certificate and key, HSTS, and the plain-HTTP listener that
//! redirects to HTTPS.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use kiln_http::{HttpsRedirect, Server, ServerHandle, Tls};

/// How long browsers are told to use HTTPS only (`--hsts`): one year, as the HSTS
/// preload list asks.
const HSTS_MAX_AGE: Duration = Duration::from_secs(365 * 24 * 60 * 60);

/// Serve HTTPS in process (rustls); see docs/tls.md.
#[derive(Debug, clap::Args)]
pub(crate) struct TlsArgs {
    /// PEM certificate chain (server certificate first): serve HTTPS. Reloaded with the
    /// key on SIGHUP.
    #[arg(long, env = "KILN_TLS_CERT", requires = "tls_key")]
    tls_cert: Option<PathBuf>,
    /// PEM private key of the certificate (PKCS#8, PKCS#1 or SEC1).
    #[arg(long, env = "KILN_TLS_KEY", requires = "tls_cert")]
    tls_key: Option<PathBuf>,
    /// Also listen for plain HTTP at this address and answer every request with a
    /// 308 redirect to the same host and path over HTTPS.
    #[arg(long, env = "KILN_REDIRECT_HTTP", requires = "tls_cert")]
    redirect_http: Option<SocketAddr>,
    /// Add `Strict-Transport-Security: max-age=31536000` to HTTPS responses.
    #[arg(long, env = "KILN_HSTS", requires = "tls_cert")]
    hsts: bool,
}

impl TlsArgs {
    /// Whether HTTPS is on.
    pub(crate) fn enabled(&self) -> bool {
        self.tls_cert.is_some()
    }

    /// `server` with HTTPS when the flags ask for it.
    pub(crate) fn apply(&self, server: Server) -> Server {
        let (Some(cert), Some(key)) = (&self.tls_cert, &self.tls_key) else { return server };
        let tls = Tls::new(cert, key);
        server.tls(if self.hsts { tls.hsts(HSTS_MAX_AGE) } else { tls })
    }

    /// Starts the redirecting plain-HTTP listener, if asked, pointing at `https_port`.
    pub(crate) fn start_redirect(&self, https_port: u16) -> Result<Option<ServerHandle>, kiln_http::Error> {
        let Some(addr) = self.redirect_http else { return Ok(None) };
        let redirect = HttpsRedirect::new(https_port);
        Server::new().listen(addr).workers(1).serve(move |_| redirect).map(Some)
    }
}
