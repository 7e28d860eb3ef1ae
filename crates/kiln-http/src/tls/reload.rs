//! SIGHUP reloads the certificate, as nginx does: renewing a certificate is copying
//! the new files in place and sending one signal, no restart and no dropped connection.

use std::io;
use std::sync::Arc;

use tokio::signal::unix::{SignalKind, signal};
use tokio::sync::watch;

use super::certs::CertStore;

/// Reloads `store` on every SIGHUP, on a thread of its own, until `stop` changes (the
/// server shuts down) or its sender is dropped. A reload that fails is reported on
/// stderr and the certificate in use stays.
pub(crate) fn reload_on_sighup(store: Arc<CertStore>, mut stop: watch::Receiver<bool>) -> io::Result<()> {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    // Installed before `serve` returns, so that a SIGHUP sent right after start is
    // not taken for the default action, which ends the process.
    let mut hangup = {
        let _runtime = rt.enter();
        signal(SignalKind::hangup())?
    };
    std::thread::Builder::new().name("kiln-tls-reload".into()).spawn(move || {
        rt.block_on(async move {
            loop {
                tokio::select! {
                    _ = stop.changed() => return,
                    got = hangup.recv() => {
                        if got.is_none() {
                            return;
                        }
                        match store.reload() {
                            Ok(()) => tracing::info!(target: "kiln::tls", "SIGHUP: TLS certificate reloaded from {}", store.cert_path().display()),
                            Err(e) => tracing::error!(target: "kiln::tls", "SIGHUP: TLS certificate NOT reloaded, the old one stays: {e}"),
                        }
                    }
                }
            }
        })
    })?;
    Ok(())
}
