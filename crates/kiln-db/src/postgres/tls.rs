//! TLS to the PostgreSQL server, with rustls (its `ring` provider: pure Rust and
//! assembly, no C toolchain or cmake needed, unlike `aws-lc-rs`).
//!
//! As libpq does: `sslmode=disable` and `prefer` connect in the clear (kiln does not
//! fall back from TLS, so `prefer` is plain); `require` encrypts without checking
//! who answers, unless `sslrootcert=PATH` names the CA to verify the server with
//! (then `verify-full`, which is what `verify-ca`/`verify-full` ask for).

use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme};
use tokio_postgres::Config;
use tokio_postgres::config::Host;
use tokio_rustls::TlsConnector;
use tokio_rustls::rustls;

use crate::error::Error;

/// How connections reach the server: in the clear, or through this connector.
#[derive(Clone, Default)]
pub(crate) struct Tls {
    connector: Option<TlsConnector>,
}

impl std::fmt::Debug for Tls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.connector.is_some() { "Tls(rustls)" } else { "Tls(off)" })
    }
}

impl Tls {
    /// TLS as `sslmode` asks; `root` is the `sslrootcert` file, if any.
    pub(crate) fn new(sslmode: &str, root: Option<&str>) -> Result<Self, Error> {
        let verify = match sslmode {
            "disable" | "allow" | "prefer" => return Ok(Tls::default()),
            "require" => root.is_some(),
            "verify-ca" | "verify-full" => {
                if root.is_none() {
                    return Err(Error::Open(format!("sslmode={sslmode} needs sslrootcert=PATH, the CA to trust")));
                }
                true
            }
            other => return Err(Error::Open(format!("unknown sslmode {other:?}"))),
        };
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let builder = ClientConfig::builder_with_provider(Arc::clone(&provider))
            .with_safe_default_protocol_versions()
            .map_err(|e| Error::Open(format!("TLS: {e}")))?;
        let config = match (verify, root) {
            (true, Some(path)) => builder.with_root_certificates(roots(path)?).with_no_client_auth(),
            _ => builder
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(Unverified(provider)))
                .with_no_client_auth(),
        };
        Ok(Tls { connector: Some(TlsConnector::from(Arc::new(config))) })
    }

    pub(crate) fn connector(&self) -> Option<&TlsConnector> {
        self.connector.as_ref()
    }

    /// The name the server's certificate is checked against: the URL's first host.
    pub(crate) fn server_name(&self, config: &Config) -> Result<ServerName<'static>, Error> {
        let host = match config.get_hosts().first() {
            Some(Host::Tcp(name)) => name.clone(),
            _ => "localhost".to_owned(),
        };
        ServerName::try_from(host.clone()).map_err(|e| Error::Open(format!("TLS server name {host:?}: {e}")))
    }
}

fn roots(path: &str) -> Result<RootCertStore, Error> {
    let pem = std::fs::read(path).map_err(|e| Error::Open(format!("sslrootcert {path}: {e}")))?;
    let mut roots = RootCertStore::empty();
    for cert in rustls_pemfile::certs(&mut pem.as_slice()) {
        let cert = cert.map_err(|e| Error::Open(format!("sslrootcert {path}: {e}")))?;
        roots.add(cert).map_err(|e| Error::Open(format!("sslrootcert {path}: {e}")))?;
    }
    if roots.is_empty() {
        return Err(Error::Open(format!("sslrootcert {path}: no PEM certificate in it")));
    }
    Ok(roots)
}

/// `sslmode=require` without a CA: the connection is encrypted, the server's
/// identity unchecked (libpq's meaning of `require`). Signatures are still checked,
/// so the handshake itself is sound.
#[derive(Debug)]
struct Unverified(Arc<rustls::crypto::CryptoProvider>);

impl ServerCertVerifier for Unverified {
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
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.0.signature_verification_algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.0.signature_verification_algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}
