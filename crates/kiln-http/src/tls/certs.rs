//! The certificate and key: read from their PEM files, checked against each other,
//! and kept in a store that a reload swaps while handshakes go on.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};

use tokio_rustls::rustls::crypto::CryptoProvider;
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio_rustls::rustls::server::{ClientHello, ResolvesServerCert};
use tokio_rustls::rustls::sign::CertifiedKey;
use tokio_rustls::rustls::{self, InconsistentKeys};

/// The certificate every new handshake presents, and where it was read from.
pub(crate) struct CertStore {
    cert: PathBuf,
    key: PathBuf,
    provider: Arc<CryptoProvider>,
    current: RwLock<Arc<CertifiedKey>>,
}

impl CertStore {
    /// Reads and checks the files; the message names the file at fault.
    pub(crate) fn open(cert: &Path, key: &Path, provider: Arc<CryptoProvider>) -> Result<Self, String> {
        let current = load(cert, key, &provider)?;
        Ok(CertStore { cert: cert.to_owned(), key: key.to_owned(), provider, current: RwLock::new(current) })
    }

    /// The certificate file, for messages.
    pub(crate) fn cert_path(&self) -> &Path {
        &self.cert
    }

    /// Reads the files again. New handshakes get the new certificate; on any error the
    /// one in use stays, and the message names the file at fault.
    pub(crate) fn reload(&self) -> Result<(), String> {
        let fresh = load(&self.cert, &self.key, &self.provider)?;
        *self.current.write().unwrap_or_else(|poisoned| poisoned.into_inner()) = fresh;
        Ok(())
    }
}

impl ResolvesServerCert for CertStore {
    fn resolve(&self, _hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        Some(Arc::clone(&self.current.read().unwrap_or_else(|poisoned| poisoned.into_inner())))
    }
}

impl fmt::Debug for CertStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CertStore").field("cert", &self.cert).field("key", &self.key).finish_non_exhaustive()
    }
}

fn load(cert: &Path, key: &Path, provider: &CryptoProvider) -> Result<Arc<CertifiedKey>, String> {
    let c = cert.display();
    let k = key.display();
    let pem = std::fs::read(cert).map_err(|e| format!("cannot read the certificate file {c}: {e}"))?;
    let chain = CertificateDer::pem_slice_iter(&pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("the certificate file {c} is not valid PEM: {e}"))?;
    if chain.is_empty() {
        return Err(format!("the certificate file {c} holds no PEM certificate (-----BEGIN CERTIFICATE-----)"));
    }
    let pem = std::fs::read(key).map_err(|e| format!("cannot read the key file {k}: {e}"))?;
    let der = PrivateKeyDer::from_pem_slice(&pem)
        .map_err(|e| format!("the key file {k} holds no PEM private key (PKCS#8, PKCS#1 or SEC1): {e}"))?;
    let signing = provider.key_provider.load_private_key(der).map_err(|e| format!("the key file {k}: {e}"))?;
    let certified = CertifiedKey::new(chain, signing);
    match certified.keys_match() {
        // A key type that cannot tell its public half is not refused for that alone.
        Ok(()) | Err(rustls::Error::InconsistentKeys(InconsistentKeys::Unknown)) => Ok(Arc::new(certified)),
        Err(rustls::Error::InconsistentKeys(_)) => {
            Err(format!("the key file {k} does not match the certificate file {c}"))
        }
        Err(e) => Err(format!("the certificate file {c} holds no usable certificate: {e}")),
    }
}
