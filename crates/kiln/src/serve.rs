//! Starting a server with an app, and the handle that runs it to the end: it stops the
//! server when a worker's state fails to build, and flushes the access log last.

use std::fmt;
use std::net::SocketAddr;

use kiln_http::{Request, Response, Server, ServerHandle, Service, StatusCode};
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};

use crate::access_log::AccessLog;
use crate::make::{IntoMakeService, MakeService, StateError};
use crate::router::BuildError;

/// Why [`serve`] could not start, or why the server stopped.
#[derive(Debug)]
pub enum ServeError {
    /// The app's routes are inconsistent.
    Build(BuildError),
    /// A worker's state could not be built ([`App::try_new`](crate::App::try_new)):
    /// the server was stopped.
    State(StateError),
    /// The server could not bind or start its workers.
    Server(kiln_http::Error),
    /// The handler of SIGTERM and SIGINT could not be installed.
    Signals(std::io::Error),
}

impl fmt::Display for ServeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ServeError::Build(e) => e.fmt(f),
            ServeError::State(e) => e.fmt(f),
            ServeError::Server(e) => e.fmt(f),
            ServeError::Signals(e) => write!(f, "signal handlers: {e}"),
        }
    }
}

impl std::error::Error for ServeError {}

/// Builds the app (reporting route conflicts) and starts `server` with it.
///
/// The handle it returns stops the whole server if a worker's state cannot be built,
/// and flushes and stops the app's access log once the workers are done.
pub fn serve(app: impl IntoMakeService, server: Server) -> Result<Serving, ServeError> {
    let make = app.into_make_service().map_err(ServeError::Build)?;
    let log = make.access_log().cloned();
    let (events, rx) = unbounded_channel();
    let factory = move |worker| {
        let ended = Ended(events.clone());
        match make.try_make_service(worker) {
            Ok(service) => Watched { inner: Some(service), _ended: ended },
            Err(e) => {
                let _ = events.send(Event::Failed(e));
                Watched { inner: None, _ended: ended }
            }
        }
    };
    release_startup_memory();
    match server.serve(factory) {
        Ok(handle) => {
            tracing::info!(target: "kiln::server", "serving on {}", handle.local_addr());
            Ok(Serving { handle, events: rx, log })
        }
        Err(e) => {
            if let Some(log) = log {
                log.shutdown();
            }
            Err(ServeError::Server(e))
        }
    }
}

/// Hands the memory that starting up allocated and freed (arguments, migrations, a
/// seed, the routes being built) back to the system. glibc keeps freed memory inside
/// its heap unless it lies at the very top: on the demo site ~1 MiB of an idle
/// server's 10 MiB resident set was such garbage. Once, before the workers start.
#[allow(unsafe_code)]
fn release_startup_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: `malloc_trim` only returns free pages of the allocator's own heaps; it
    // may run while other threads allocate (it takes each arena's lock).
    unsafe {
        libc::malloc_trim(0);
    }
}

/// What a worker tells the handle.
enum Event {
    /// Its state could not be built.
    Failed(StateError),
    /// It stopped serving.
    Ended,
}

/// Sends [`Event::Ended`] when the worker drops its service, at its end.
struct Ended(UnboundedSender<Event>);

impl Drop for Ended {
    fn drop(&mut self) {
        let _ = self.0.send(Event::Ended);
    }
}

/// A worker's service, or `503` on the worker whose state failed while the server stops.
struct Watched<S> {
    inner: Option<S>,
    _ended: Ended,
}

impl<S: Service> Service for Watched<S> {
    async fn call<'a>(&'a self, req: Request<'a>, res: &'a mut Response) {
        match &self.inner {
            Some(inner) => inner.call(req, res).await,
            None => {
                res.set_status(StatusCode::SERVICE_UNAVAILABLE);
                res.set_body_static(b"this worker could not start\n");
            }
        }
    }

    fn early_hints<'a>(&'a self, req: &Request<'_>) -> Option<&'a [u8]> {
        self.inner.as_ref()?.early_hints(req)
    }

    fn body_mode(&self, req: &Request<'_>) -> kiln_http::BodyMode {
        self.inner.as_ref().map_or(kiln_http::BodyMode::Buffer, |inner| inner.body_mode(req))
    }

    fn extended_connect(&self) -> bool {
        self.inner.as_ref().is_some_and(Service::extended_connect)
    }

    fn refused(&self, req: &Request<'_>, res: &mut Response) {
        if let Some(inner) = &self.inner {
            inner.refused(req, res);
        }
    }
}

/// A running app: what [`serve`] returns. Dropping it shuts the server down without
/// waiting, and so without flushing the access log: end with [`wait`](Self::wait) or
/// [`run_until_signal`](Self::run_until_signal).
#[derive(Debug)]
pub struct Serving {
    handle: ServerHandle,
    events: UnboundedReceiver<Event>,
    log: Option<AccessLog>,
}

impl fmt::Debug for Event {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Event::Failed(e) => write!(f, "Failed({e})"),
            Event::Ended => f.write_str("Ended"),
        }
    }
}

impl Serving {
    /// The address the server listens on (with the real port when port 0 was asked).
    pub fn local_addr(&self) -> SocketAddr {
        self.handle.local_addr()
    }

    /// Begins a graceful shutdown; [`wait`](Self::wait) for the end.
    pub fn shutdown(&self) {
        self.handle.shutdown();
    }

    /// Waits until every worker has stopped (after [`shutdown`](Self::shutdown), or
    /// at once if a worker's state failed), then flushes and stops the access log.
    pub fn wait(mut self) -> Result<(), ServeError> {
        let mut failed = None;
        // The channel closes once every worker has dropped its service and factory.
        while let Some(event) = self.events.blocking_recv() {
            if let (Event::Failed(e), None) = (event, &failed) {
                self.handle.shutdown();
                failed = Some(e);
            }
        }
        self.finish(failed)
    }

    /// Serves until SIGTERM or SIGINT, until a worker stops on its own, or until a
    /// worker's state fails to build; then shuts down gracefully, waits for the workers
    /// and flushes and stops the access log. SIGTERM drains first and SIGUSR2 hands the
    /// listeners over to a new process, as [`ServerHandle::until_signal`] says.
    pub fn run_until_signal(mut self) -> Result<(), ServeError> {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(ServeError::Signals)?;
        let first = rt
            .block_on(async {
                let first = tokio::select! {
                    signalled = self.handle.until_signal() => signalled.map(|()| None)?,
                    event = self.events.recv() => event,
                };
                Ok::<_, std::io::Error>(first)
            })
            .map_err(ServeError::Signals)?;
        self.handle.shutdown();
        let failed = match first {
            Some(Event::Failed(e)) => Some(e),
            _ => None,
        };
        while self.events.blocking_recv().is_some() {}
        self.finish(failed)
    }

    fn finish(self, failed: Option<StateError>) -> Result<(), ServeError> {
        let served = self.handle.wait();
        if let Some(log) = &self.log {
            log.shutdown();
        }
        match (&failed, &served) {
            (Some(e), _) => tracing::error!(target: "kiln::server", "stopped: {e}"),
            (None, Err(e)) => tracing::error!(target: "kiln::server", "stopped: {e}"),
            (None, Ok(())) => tracing::info!(target: "kiln::server", "stopped"),
        }
        match failed {
            Some(e) => Err(ServeError::State(e)),
            None => served.map_err(ServeError::Server),
        }
    }
}
