//! The thread-per-core runtime: one worker thread per core, each with its own
//! current-thread tokio runtime, its own `SO_REUSEPORT` listener and its own
//! connections. Nothing on the request path crosses threads. Signals: SIGTERM drains
//! then stops, SIGINT stops, SIGUSR2 hands the listeners over to a new process.

use std::future::{Future, poll_fn};
use std::io;
use std::net::{SocketAddr, ToSocketAddrs};
use std::rc::Rc;
use std::sync::{Arc, Mutex};
use std::task::Poll;
use std::thread::JoinHandle;
use std::time::Duration;

use tokio::net::TcpListener;
use tokio::sync::{mpsc, watch};
use tokio::task::{LocalSet, spawn_local};
use tokio::time::{Instant, MissedTickBehavior};

use crate::config::{DRAIN_DELAY, Limits, SHUTDOWN_GRACE};
use crate::error::Error;
use crate::readiness::Readiness;
use crate::service::Service;
use crate::signals::Signals;
use crate::trusted_proxies::TrustedProxies;
use crate::worker::Worker;
use crate::{handover, listeners, proxy_protocol};

/// Pause after an accept failure caused by exhausted resources (file descriptors,
/// memory), so that the accept loop does not spin while they are short.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(50);
/// How often a shutting-down worker checks whether its last connection has closed.
const DRAIN_POLL: Duration = Duration::from_millis(5);
/// Sent to a connection beyond `Limits::max_connections_per_worker` before it is
/// closed: one write, no parsing, and the client knows to come back.
const TOO_MANY_CONNECTIONS: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\nServer: kiln\r\nRetry-After: 1\r\n\
Content-Type: text/plain; charset=utf-8\r\nContent-Length: 21\r\nConnection: close\r\n\r\ntoo many connections\n";

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

/// A running server. Dropping it shuts the server down.
#[derive(Debug)]
pub struct ServerHandle {
    addr: SocketAddr,
    stop: watch::Sender<bool>,
    exited: mpsc::UnboundedReceiver<usize>,
    /// One message per worker once its service is built and it accepts.
    started: mpsc::UnboundedReceiver<()>,
    threads: Vec<JoinHandle<Result<(), Error>>>,
    /// Copies of the listeners, handed to a new process on SIGUSR2; given up at shutdown.
    kept: Mutex<Vec<std::net::TcpListener>>,
    readiness: Readiness,
    drain_delay: Duration,
    /// Listening since `serve`; acted on by [`until_signal`](Self::until_signal).
    signals: Signals,
    /// Whether [`until_signal`](Self::until_signal) ran, so [`wait`](Self::wait) need not.
    signals_acted_on: bool,
    #[cfg(feature = "tls")]
    tls: Option<Arc<crate::tls::CertStore>>,
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

    /// The server's readiness (see [`Server::readiness`]).
    pub fn readiness(&self) -> Readiness {
        self.readiness.clone()
    }

    /// Waits until every worker has stopped. Meanwhile the server acts on signals as
    /// [`run_until_signal`](Self::run_until_signal) does (SIGTERM drains, SIGINT stops,
    /// both gracefully), unless [`until_signal`](Self::until_signal) already ran: the
    /// listeners exist from [`Server::serve`] on, so without this a Ctrl-C during `wait`
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
    ///   [drain delay](Server::drain_delay) (cut short by SIGINT), then this returns.
    /// - SIGINT: returns at once.
    /// - SIGUSR2: starts this executable again with the same arguments and hands it the
    ///   listening sockets; once it reports ready, this returns (the new process
    ///   accepts from the same queues meanwhile). If it fails, this process says why (a
    ///   `tracing` error) and goes on serving.
    ///
    /// The signals are listened for from [`Server::serve`] on, so one sent before this
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

struct WorkerSetup {
    index: usize,
    listener: std::net::TcpListener,
    limits: Limits,
    grace: Duration,
    stop: watch::Receiver<bool>,
    /// The trusted proxies, when connections open with a PROXY protocol header.
    proxy: Option<TrustedProxies>,
    started: mpsc::UnboundedSender<()>,
    #[cfg(feature = "tls")]
    tls: Option<crate::tls::Loaded>,
}

impl WorkerSetup {
    fn run<F, S>(self, factory: &F) -> Result<(), Error>
    where
        F: Fn(usize) -> S,
        S: Service,
    {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(Error::runtime)?;
        LocalSet::new().block_on(&rt, self.serve(factory)).map_err(Error::runtime)
    }

    async fn serve<F, S>(mut self, factory: &F) -> io::Result<()>
    where
        F: Fn(usize) -> S,
        S: Service,
    {
        let worker = Rc::new(Worker::new(self.limits.clone()));
        let listener = TcpListener::from_std(self.listener)?;
        let service = Rc::new(factory(self.index));
        let startup = Rc::new(Startup {
            proxy: self.proxy.take(),
            #[cfg(feature = "tls")]
            tls: self.tls.as_ref().map(|tls| crate::tls::Acceptor::new(tls, self.limits.handshake_timeout)),
        });
        let ticker = spawn_local(tick_date(Rc::clone(&worker)));
        let _ = self.started.send(());

        loop {
            tokio::select! {
                biased;
                _ = self.stop.changed() => break,
                accepted = listener.accept() => match accepted {
                    Ok((stream, peer)) => admit(stream, peer, &service, &worker, &startup),
                    Err(e) if is_resource_exhaustion(&e) => tokio::time::sleep(ACCEPT_BACKOFF).await,
                    Err(_) => {}
                },
            }
        }

        // From here every response says `Connection: close` and idle connections get
        // a last call. Connections that completed their handshake but were not yet
        // accepted are taken too: closing the listener would reset them, losing any
        // request they had sent.
        worker.begin_shutdown();
        while let Poll::Ready(Ok((stream, peer))) = poll_fn(|cx| Poll::Ready(listener.poll_accept(cx))).await {
            admit(stream, peer, &service, &worker, &startup);
        }
        drop(listener);
        let deadline = Instant::now() + self.grace;
        while worker.connections.get() > 0 && Instant::now() < deadline {
            tokio::time::sleep(DRAIN_POLL).await;
        }
        ticker.abort();
        Ok(())
    }
}

/// Takes an accepted connection in, or turns it away when the worker is full. The
/// connection's start-up then runs as its own task (see [`start`]).
fn admit<S: Service>(
    stream: tokio::net::TcpStream,
    peer: SocketAddr,
    service: &Rc<S>,
    worker: &Rc<Worker>,
    startup: &Rc<Startup>,
) {
    if worker.connections.get() >= worker.limits.max_connections_per_worker {
        // Answer and close at once: leaving it queued would make the listener ready
        // forever and the loop spin. The answer fits any socket buffer in one write.
        let _ = stream.try_write(TOO_MANY_CONNECTIONS);
        return;
    }
    let _ = stream.set_nodelay(true);
    // Counted now, not when the task first runs, so that neither the limit nor the
    // end of shutdown misses a connection not yet polled.
    let slot = worker.open_connection();
    spawn_local(start(stream, peer, Rc::clone(service), Rc::clone(worker), Rc::clone(startup), slot));
}

/// What a connection's start-up needs, shared by a worker's connections: each step of
/// [`start`] keeps its settings here.
pub(crate) struct Startup {
    /// The trusted proxies, when connections open with a PROXY protocol header.
    proxy: Option<TrustedProxies>,
    #[cfg(feature = "tls")]
    tls: Option<crate::tls::Acceptor>,
}

/// A connection's start-up, one step after the other, before HTTP is spoken:
/// 1. the PROXY protocol header, when configured, which names the real client;
/// 2. the TLS handshake, when configured, whose ALPN picks HTTP/2 or HTTP/1.1;
///    on a plain connection, its first bytes do: the HTTP/2 preface or a request line;
/// 3. HTTP/1.1 ([`crate::h1::conn::serve`]) or HTTP/2 ([`crate::h2::serve`]) until the
///    connection closes.
///
/// A step that refuses the connection returns its slot and drops the stream, which
/// closes it; nothing after a refused step reads from it.
///
/// Not an `async fn`: an async fn's arguments stay in its future beside the locals
/// they are moved into, and this future lives as long as the connection.
#[allow(clippy::manual_async_fn)]
fn start<S: Service>(
    mut stream: tokio::net::TcpStream,
    mut peer: SocketAddr,
    service: Rc<S>,
    worker: Rc<Worker>,
    startup: Rc<Startup>,
    slot: usize,
) -> impl Future<Output = ()> {
    async move {
        // The client the header names replaces the peer in place (a second address
        // would stay in the future for the connection's whole life). Boxed: the
        // header's read buffer lives only while it is read.
        if let Some(trusted) = &startup.proxy {
            match Box::pin(proxy_protocol::accept(&mut stream, peer, trusted, worker.limits.header_timeout)).await {
                Ok(client) => peer = client,
                Err(_) => return worker.close_connection(slot),
            }
        }
        #[cfg(feature = "tls")]
        if let Some(tls) = &startup.tls {
            // Boxed: a TLS connection's state (the handshake, then rustls' connection) is
            // some 4 KiB; unboxed, it would sit in every connection's future, TLS or not
            // (a never-used plain connection cost 5.9 KiB instead of under 4).
            return Box::pin(async move {
                match tls.accept(stream).await {
                    Some(stream) if stream.is_h2() => crate::h2::serve(stream, peer, service, worker, slot).await,
                    Some(stream) => crate::h1::conn::serve(stream, peer, service, worker, slot).await,
                    None => worker.close_connection(slot),
                }
            })
            .await;
        }
        // Both boxed: a task's future is as large as its largest branch, though only one
        // runs. With HTTP/1.1's state unboxed, every idle HTTP/2 connection carried some
        // 1.9 KiB of it unused beside its own (4.9 KiB per idle h2c connection in all);
        // with HTTP/2's unboxed, every HTTP/1.1 connection would carry HTTP/2's.
        // Boxed too, as the refusal below: the first look's timers would otherwise stay in
        // every connection's task for its whole life.
        match Box::pin(crate::h2::sniff(&stream, &worker, slot)).await {
            crate::h2::Wire::Http1 => Box::pin(crate::h1::conn::serve(stream, peer, service, worker, slot)).await,
            crate::h2::Wire::Http2 => Box::pin(crate::h2::serve(stream, peer, service, worker, slot)).await,
            crate::h2::Wire::Neither => {
                Box::pin(crate::h2::refuse(stream)).await;
                worker.close_connection(slot);
            }
            crate::h2::Wire::Closed => worker.close_connection(slot),
        }
    }
}

/// Renders the `Date` header once a second for the whole worker.
async fn tick_date(worker: Rc<Worker>) {
    let mut every_second = tokio::time::interval(Duration::from_secs(1));
    every_second.set_missed_tick_behavior(MissedTickBehavior::Delay);
    loop {
        every_second.tick().await;
        worker.refresh_date();
    }
}

fn is_resource_exhaustion(e: &io::Error) -> bool {
    use nix::libc::{EMFILE, ENFILE, ENOBUFS, ENOMEM};
    matches!(e.raw_os_error(), Some(EMFILE | ENFILE | ENOBUFS | ENOMEM))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::service_fn;

    #[tokio::test]
    async fn a_connection_s_task_stays_small() {
        // Every connection's task holds `start`'s future for its whole life, beside
        // the boxed HTTP/1.1 or HTTP/2 future: a local or argument kept across the
        // wait costs every idle connection its bytes.
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let stream = tokio::net::TcpStream::connect(addr).await.unwrap();
        let worker = Rc::new(Worker::new(crate::config::Limits::default()));
        let nothing = |_: crate::Request<'_>, _: &mut crate::Response| {};
        let startup = Rc::new(Startup {
            proxy: None,
            #[cfg(feature = "tls")]
            tls: None,
        });
        let task = start(stream, addr, Rc::new(service_fn(nothing)), worker, startup, 0);
        let size = std::mem::size_of_val(&task);
        eprintln!("start: {size} bytes");
        assert!(size <= START_BOUND, "start's future grew to {size} bytes");
    }

    /// 224 bytes as an `async fn` (its arguments kept twice, the PROXY client beside
    /// the peer); 120 now.
    const START_BOUND: usize = 160;

    #[test]
    fn listen_takes_a_string_and_an_address_that_resolves_to_nothing_is_a_bind_error() {
        let nothing = |_: crate::Request<'_>, _: &mut crate::Response| {};
        let server = Server::new().workers(1).listen("127.0.0.1:0").serve(move |_| service_fn(nothing)).unwrap();
        assert!(server.local_addr().ip().is_loopback());
        server.shutdown();
        server.wait().unwrap();
        let none: &[SocketAddr] = &[];
        for bad in [Server::new().listen(none), Server::new().listen("127.0.0.1:99999")] {
            let err = bad.serve(move |_| service_fn(nothing)).unwrap_err();
            assert!(err.is_bind(), "{err}");
        }
    }

    #[test]
    fn a_second_server_on_a_port_in_use_is_refused_and_a_port_left_in_time_wait_is_not() {
        // Bug: with `SO_REUSEPORT` a second kiln (a forgotten one, of the same user) bound
        // beside the first, and the kernel split the connections between them silently.
        use std::io::{Read, Write};
        let pong = |_: crate::Request<'_>, res: &mut crate::Response| res.set_body_static(b"pong");
        let first = Server::new().workers(2).listen("127.0.0.1:0").serve(move |_| service_fn(pong)).unwrap();
        let addr = first.local_addr();
        let err = Server::new().workers(1).listen(addr).serve(move |_| service_fn(pong)).unwrap_err();
        assert!(err.is_bind(), "{err}");
        assert!(err.to_string().contains("already in use"), "{err}");

        // The first one still has the port, and closes a connection it served on shutdown:
        // the server's side of it lingers in TIME_WAIT, which must not keep the port taken.
        let mut client = std::net::TcpStream::connect(addr).unwrap();
        client.write_all(b"GET / HTTP/1.1\r\nHost: a\r\n\r\n").unwrap();
        let mut answer = [0u8; 512];
        let n = client.read(&mut answer).unwrap();
        assert!(answer[..n].ends_with(b"pong"), "{}", String::from_utf8_lossy(&answer[..n]));
        first.shutdown();
        first.wait().unwrap();
        drop(client);
        let again = Server::new().workers(1).listen(addr).serve(move |_| service_fn(pong)).unwrap();
        assert_eq!(again.local_addr(), addr);
        again.shutdown();
        again.wait().unwrap();
    }
}
