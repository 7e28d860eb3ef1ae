//! A worker thread: its runtime, its accept loop, the admission of each connection
//! (or its refusal when the worker is full), and the drain at shutdown.

use std::future::poll_fn;
use std::io;
use std::net::SocketAddr;
use std::rc::Rc;
use std::task::Poll;
use std::time::Duration;

use tokio::net::TcpListener;
use tokio::sync::{mpsc, watch};
use tokio::task::{LocalSet, spawn_local};
use tokio::time::{Instant, MissedTickBehavior};

use super::start::{Startup, start};
use crate::config::Limits;
use crate::error::Error;
use crate::memory::{self, Bursts};
use crate::service::Service;
use crate::trusted_proxies::TrustedProxies;
use crate::worker::Worker;

/// Pause after an accept failure caused by exhausted resources (file descriptors,
/// memory), so that the accept loop does not spin while they are short.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(50);
/// How often a shutting-down worker checks whether its last connection has closed.
const DRAIN_POLL: Duration = Duration::from_millis(5);
/// Sent to a connection beyond `Limits::max_connections_per_worker` before it is
/// closed: one write, no parsing, and the client knows to come back.
const TOO_MANY_CONNECTIONS: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\nServer: kiln\r\nRetry-After: 1\r\n\
Content-Type: text/plain; charset=utf-8\r\nContent-Length: 21\r\nConnection: close\r\n\r\ntoo many connections\n";

pub(super) struct WorkerSetup {
    pub(super) index: usize,
    pub(super) listener: std::net::TcpListener,
    pub(super) limits: Limits,
    pub(super) grace: Duration,
    pub(super) stop: watch::Receiver<bool>,
    /// The trusted proxies, when connections open with a PROXY protocol header.
    pub(super) proxy: Option<TrustedProxies>,
    pub(super) started: mpsc::UnboundedSender<()>,
    #[cfg(feature = "tls")]
    pub(super) tls: Option<crate::tls::Loaded>,
}

impl WorkerSetup {
    pub(super) fn run<F, S>(self, factory: &F) -> Result<(), Error>
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

/// Renders the `Date` header once a second for the whole worker, and gives memory
/// back to the system when a burst of connections has ended (see [`memory`]).
async fn tick_date(worker: Rc<Worker>) {
    let mut every_second = tokio::time::interval(Duration::from_secs(1));
    every_second.set_missed_tick_behavior(MissedTickBehavior::Delay);
    let mut bursts = Bursts::default();
    loop {
        every_second.tick().await;
        worker.refresh_date();
        let load = worker.load();
        if let Some(peak) = bursts.ended(load) {
            memory::trim(peak.connections, load.connections);
        }
    }
}

fn is_resource_exhaustion(e: &io::Error) -> bool {
    use nix::libc::{EMFILE, ENFILE, ENOBUFS, ENOMEM};
    matches!(e.raw_os_error(), Some(EMFILE | ENFILE | ENOBUFS | ENOMEM))
}
