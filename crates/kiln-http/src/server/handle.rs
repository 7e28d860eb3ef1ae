//! [`ServerHandle`]: a running server. It acts on signals (SIGTERM drains, SIGINT stops,
//! SIGUSR2 hands the listeners over), shuts the workers down and waits for them.

use std::io;
use std::net::SocketAddr;
use std::sync::Mutex;
use std::thread::JoinHandle;
use std::time::Duration;

use tokio::sync::{mpsc, watch};

use crate::error::Error;
use crate::handover;
use crate::readiness::Readiness;
use crate::signals::Signals;

/// A running server. Dropping it shuts the server down.
#[derive(Debug)]
pub struct ServerHandle {
    pub(super) addr: SocketAddr,
    pub(super) stop: watch::Sender<bool>,
    pub(super) exited: mpsc::UnboundedReceiver<usize>,
    /// One message per worker once its service is built and it accepts.
    pub(super) started: mpsc::UnboundedReceiver<()>,
    pub(super) threads: Vec<JoinHandle<Result<(), Error>>>,
    /// Copies of the listeners, handed to a new process on SIGUSR2; given up at shutdown.
    pub(super) kept: Mutex<Vec<std::net::TcpListener>>,
    pub(super) readiness: Readiness,
    pub(super) drain_delay: Duration,
    /// Listening since `serve`; acted on by [`until_signal`](Self::until_signal).
    pub(super) signals: Signals,
    /// Whether [`until_signal`](Self::until_signal) ran, so [`wait`](Self::wait) need not.
    pub(super) signals_acted_on: bool,
    #[cfg(feature = "tls")]
    pub(super) tls: Option<std::sync::Arc<crate::tls::CertStore>>,
}

impl ServerHandle {
    /// The address the server listens on (with the real port when port 0 was asked).
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Reads the TLS certificate and key again, as SIGHUP does: new handshakes get the
    /// new certificate, connections already open keep theirs. On an error (naming the
    /// file) the certificate in use stays. A server without TLS has nothing to reload.
    #[cfg(feature = "tls")]
    pub fn reload_tls(&self) -> Result<(), Error> {
        match &self.tls {
            Some(store) => store.reload().map_err(Error::tls),
            None => Ok(()),
        }
    }

    /// Begins a graceful shutdown: stop accepting, finish requests already read,
    /// close idle connections. Returns at once; [`wait`](Self::wait) for the end.
    pub fn shutdown(&self) {
        self.readiness.begin_draining();
        self.kept.lock().unwrap_or_else(|e| e.into_inner()).clear();
        let _ = self.stop.send(true);
    }

    /// Copies of the listeners for a hand-over (none once shutdown has begun).
    fn listener_copies(kept: &Mutex<Vec<std::net::TcpListener>>) -> io::Result<Vec<std::net::TcpListener>> {
        let kept = kept.lock().unwrap_or_else(|e| e.into_inner());
        kept.iter().map(std::net::TcpListener::try_clone).collect()
    }

    /// The server's readiness (see [`Server::readiness`](crate::Server::readiness)).
    pub fn readiness(&self) -> Readiness {
        self.readiness.clone()
    }

    /// Waits until every worker has stopped. Meanwhile the server acts on signals as
    /// [`run_until_signal`](Self::run_until_signal) does (SIGTERM drains, SIGINT stops,
    /// both gracefully), unless [`until_signal`](Self::until_signal) already ran: the
    /// listeners exist from [`Server::serve`](crate::Server::serve) on, so without this a Ctrl-C during `wait`
    /// would be swallowed.
    pub fn wait(mut self) -> Result<(), Error> {
        if !self.signals_acted_on {
            // On a thread of its own: `wait` may be called from inside a runtime (a
            // blocking call in a test's async fn), where starting another one panics.
            let handle = &mut self;
            std::thread::scope(|scope| {
                scope
                    .spawn(move || {
                        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
                        rt.block_on(handle.until_signal())
                    })
                    .join()
                    .unwrap_or_else(|_| Err(io::Error::other("the signal thread panicked")))
            })
            .map_err(Error::runtime)?;
            self.shutdown();
        }
        let mut result = Ok(());
        for thread in std::mem::take(&mut self.threads) {
            let outcome = thread.join().unwrap_or_else(|_| Err(Error::worker_panicked()));
            if result.is_ok() {
                result = outcome;
            }
        }
        result
    }

    /// Serves until SIGTERM or SIGINT (or until a worker stops on its own), then shuts
    /// down gracefully and waits for the workers. See [`until_signal`](Self::until_signal).
    pub fn run_until_signal(self) -> Result<(), Error> {
        self.wait()
    }

    /// Acts on signals until one says stop, or a worker stops on its own; the caller
    /// then calls [`shutdown`](Self::shutdown). Once every worker serves, it reports
    /// ready to systemd (`NOTIFY_SOCKET`, for `Type=notify`) and to the process this one
    /// takes over from.
    /// - SIGTERM: [`Readiness`] turns to draining, the server goes on serving for the
    ///   [drain delay](crate::Server::drain_delay) (cut short by SIGINT), then this returns.
    /// - SIGINT: returns at once.
    /// - SIGUSR2: starts this executable again with the same arguments and hands it the
    ///   listening sockets; once it reports ready, this returns (the new process
    ///   accepts from the same queues meanwhile). If it fails, this process says why (a
    ///   `tracing` error) and goes on serving.
    ///
    /// The signals are listened for from [`Server::serve`](crate::Server::serve) on, so one sent before this
    /// runs (as soon as the server answers) is acted on when it does; from then on
    /// SIGTERM and SIGINT no longer end the process by themselves (a later
    /// [`wait`](Self::wait) does not listen again).
    pub async fn until_signal(&mut self) -> io::Result<()> {
        self.signals_acted_on = true;
        let Signals { terminate: term, interrupt: int, handover: usr2 } = &mut self.signals;
        let mut started = 0;
        while started < self.threads.len() {
            tokio::select! {
                Some(()) = self.started.recv() => started += 1,
                _ = self.exited.recv() => return Ok(()),
            }
        }
        handover::notify_ready();
        loop {
            tokio::select! {
                _ = term.recv() => {
                    self.readiness.begin_draining();
                    tokio::select! {
                        _ = tokio::time::sleep(self.drain_delay) => {}
                        _ = int.recv() => {}
                    }
                    return Ok(());
                }
                _ = int.recv() => return Ok(()),
                _ = self.exited.recv() => return Ok(()),
                _ = usr2.recv() => {
                    let kept = Self::listener_copies(&self.kept)?;
                    match handover::hand_over(&kept).await {
                        Ok(pid) => {
                            let me = std::process::id();
                            tracing::info!(target: "kiln::server", "process {pid} took over the listeners; process {me} drains and exits");
                            return Ok(());
                        }
                        Err(e) => tracing::error!(target: "kiln::server", "hand-over on SIGUSR2 failed, still serving: {e}"),
                    }
                }
            }
        }
    }
}
