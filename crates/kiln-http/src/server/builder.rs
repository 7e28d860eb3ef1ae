//! [`Server`]: the settings, and `serve`, which binds the listeners (or takes inherited
//! ones) and starts one worker thread per listener.

use std::io;
use std::net::{SocketAddr, ToSocketAddrs};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::{mpsc, watch};

use super::accept::WorkerSetup;
use super::handle::ServerHandle;
use crate::config::{DRAIN_DELAY, Limits, SHUTDOWN_GRACE};
use crate::error::Error;
use crate::listeners;
use crate::readiness::Readiness;
use crate::service::Service;
use crate::signals::Signals;
use crate::trusted_proxies::TrustedProxies;

/// Builds and starts a server.
///
/// ```no_run
/// use kiln_http::{service_fn, Server};
/// let server = Server::new()
///     .listen("127.0.0.1:8080")
///     .workers(2)
///     .serve(|_worker| service_fn(|_req, res| res.body_mut().extend_from_slice(b"hi")))
///     .expect("listen");
/// println!("listening on http://{}", server.local_addr());
/// server.run_until_signal().expect("serve");
/// ```
#[derive(Debug, Clone)]
pub struct Server {
    /// Resolved at `serve`, so that a name that does not resolve is a bind error.
    addr: Listen,
    workers: usize,
    limits: Limits,
    grace: Duration,
    drain_delay: Duration,
    proxy_protocol: bool,
    trusted: TrustedProxies,
    readiness: Readiness,
    #[cfg(feature = "tls")]
    tls: Option<crate::tls::Tls>,
}

/// Where to listen: an address, or what to resolve into one.
#[derive(Debug, Clone)]
enum Listen {
    Addr(SocketAddr),
    Unresolved(io::ErrorKind, String),
}

impl Listen {
    fn resolve(&self) -> io::Result<SocketAddr> {
        match self {
            Listen::Addr(addr) => Ok(*addr),
            Listen::Unresolved(kind, why) => Err(io::Error::new(*kind, why.clone())),
        }
    }
}

impl Default for Server {
    fn default() -> Self {
        Self::new()
    }
}

impl Server {
    /// A server on `127.0.0.1:8080` with one worker per core and default limits.
    pub fn new() -> Self {
        Server {
            addr: Listen::Addr(SocketAddr::from(([127, 0, 0, 1], 8080))),
            workers: std::thread::available_parallelism().map_or(1, |n| n.get()),
            limits: Limits::default(),
            grace: SHUTDOWN_GRACE,
            drain_delay: DRAIN_DELAY,
            proxy_protocol: false,
            trusted: TrustedProxies::none(),
            readiness: Readiness::default(),
            #[cfg(feature = "tls")]
            tls: None,
        }
    }

    /// The address to listen on: a `SocketAddr`, or anything that resolves to one
    /// (`"127.0.0.1:8080"`, `("localhost", 8080)`); the first address it resolves to
    /// is used. Port 0 picks a free port, shared by every worker. An address that does
    /// not resolve makes [`serve`](Self::serve) fail with a bind error.
    pub fn listen(mut self, addr: impl ToSocketAddrs) -> Self {
        self.addr = match addr.to_socket_addrs().map(|mut addrs| addrs.next()) {
            Ok(Some(addr)) => Listen::Addr(addr),
            Ok(None) => Listen::Unresolved(io::ErrorKind::InvalidInput, "the address resolves to nothing".into()),
            Err(e) => Listen::Unresolved(e.kind(), format!("cannot resolve the address: {e}")),
        };
        self
    }

    /// How many worker threads to run (at least one).
    pub fn workers(mut self, workers: usize) -> Self {
        self.workers = workers.max(1);
        self
    }

    /// The limits and timeouts every connection obeys.
    pub fn limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// How long in-flight requests may take to finish once shutdown begins.
    pub fn shutdown_grace(mut self, grace: Duration) -> Self {
        self.grace = grace;
        self
    }

    /// Serves HTTPS with these settings (feature `tls`): every connection starts with
    /// a TLS handshake, bounded by [`Limits::handshake_timeout`]. The certificate and
    /// key are read by [`serve`](Self::serve), which fails naming the file at fault,
    /// and read again on SIGHUP (or [`ServerHandle::reload_tls`]).
    #[cfg(feature = "tls")]
    pub fn tls(mut self, tls: crate::tls::Tls) -> Self {
        self.tls = Some(tls);
        self
    }

    /// How long SIGTERM keeps the server serving, with [`Readiness`] saying
    /// "draining", before it stops accepting: time for a load balancer's health checks
    /// to see it and stop sending. See [`DRAIN_DELAY`](crate::DRAIN_DELAY).
    pub fn drain_delay(mut self, delay: Duration) -> Self {
        self.drain_delay = delay;
        self
    }

    /// Takes the PROXY protocol (v1 or v2) header that a [trusted
    /// proxy](Self::trusted_proxies) must open each connection with, and serves the
    /// connection as coming from the client it names. A connection from any other peer
    /// that opens with a header is closed; so is one whose header is malformed. The
    /// header must arrive within the header timeout, and comes before TLS. Any other
    /// peer is served as itself once its first bytes show no header (it has the header
    /// timeout to send them).
    pub fn proxy_protocol(mut self, on: bool) -> Self {
        self.proxy_protocol = on;
        self
    }

    /// The proxies believed about the client: for the PROXY protocol, and for
    /// [`TrustedProxies::client_ip`].
    pub fn trusted_proxies(mut self, trusted: TrustedProxies) -> Self {
        self.trusted = trusted;
        self
    }

    /// The server's readiness, for a health check: "draining" from the moment shutdown
    /// (or the drain delay before it) begins. Clones of this builder share it.
    pub fn readiness(&self) -> Readiness {
        self.readiness.clone()
    }

    /// Binds the listeners — or takes those this process inherited by systemd socket
    /// activation (`LISTEN_FDS`) or from the process it takes over from — and starts the
    /// workers. `factory` runs once on each worker thread, with the worker's index, to
    /// build that worker's service.
    pub fn serve<F, S>(self, factory: F) -> Result<ServerHandle, Error>
    where
        F: Fn(usize) -> S + Send + Sync + 'static,
        S: Service,
    {
        // Before binding: a server whose certificate cannot be used never listens.
        #[cfg(feature = "tls")]
        let tls = self.tls.as_ref().map(crate::tls::Tls::load).transpose()?;
        let listeners = listeners::open(self.addr.resolve(), self.workers).map_err(Error::bind)?;
        let addr = listeners[0].local_addr().map_err(Error::bind)?;
        // Kept for a hand-over; the workers own the ones they accept on.
        let kept = listeners.iter().map(std::net::TcpListener::try_clone).collect::<Result<_, _>>();
        let kept = kept.map_err(Error::bind)?;
        // Before any worker starts: a SIGTERM once the server answers must drain, not
        // end the process (see `signals`).
        let signals = Signals::listen().map_err(Error::runtime)?;

        let (stop_tx, stop_rx) = watch::channel(false);
        #[cfg(feature = "tls")]
        if let Some(tls) = &tls {
            crate::tls::reload_on_sighup(Arc::clone(&tls.store), stop_rx.clone()).map_err(Error::runtime)?;
        }
        let (exit_tx, exit_rx) = mpsc::unbounded_channel();
        let (started_tx, started_rx) = mpsc::unbounded_channel();
        let proxy = self.proxy_protocol.then(|| self.trusted.clone());
        let factory = Arc::new(factory);
        let mut threads = Vec::with_capacity(listeners.len());
        for (index, listener) in listeners.into_iter().enumerate() {
            let worker = WorkerSetup {
                index,
                listener,
                limits: self.limits.clone(),
                grace: self.grace,
                stop: stop_rx.clone(),
                proxy: proxy.clone(),
                started: started_tx.clone(),
                #[cfg(feature = "tls")]
                tls: tls.clone(),
            };
            let factory = Arc::clone(&factory);
            let exit_tx = exit_tx.clone();
            let thread = std::thread::Builder::new()
                .name(format!("kiln-worker-{index}"))
                .spawn(move || {
                    let result = worker.run(&*factory);
                    let _ = exit_tx.send(index);
                    result
                })
                .map_err(Error::runtime)?;
            threads.push(thread);
        }
        Ok(ServerHandle {
            addr,
            stop: stop_tx,
            exited: exit_rx,
            started: started_rx,
            threads,
            kept: Mutex::new(kept),
            readiness: self.readiness,
            drain_delay: self.drain_delay,
            signals,
            signals_acted_on: false,
            #[cfg(feature = "tls")]
            tls: tls.map(|tls| tls.store),
        })
    }
}
