//! Building one service per worker: [`MakeService`], what [`serve`](crate::serve)
//! needs, and why a worker's state may fail to build.

use std::error::Error;
use std::fmt;

use kiln_http::Service;

use crate::access_log::AccessLog;
use crate::middleware::{Layered, Middleware, Wrapped};
use crate::router::BuildError;

/// Builds one service per worker, on the worker's thread: what
/// [`Server::serve`](kiln_http::Server::serve) needs, as a trait so that it can be wrapped.
pub trait MakeService: Send + Sync + 'static {
    /// The per-worker service.
    type Service: Service;

    /// Builds the service of worker `worker`.
    ///
    /// # Panics
    /// If the app's state factory fails (see [`App::try_new`](crate::App::try_new));
    /// [`serve`](crate::serve) calls [`try_make_service`](Self::try_make_service) instead.
    fn make_service(&self, worker: usize) -> Self::Service;

    /// Builds the service of worker `worker`, or says why its state could not be built.
    fn try_make_service(&self, worker: usize) -> Result<Self::Service, StateError> {
        Ok(self.make_service(worker))
    }

    /// The access log the services write to, which [`serve`](crate::serve)'s handle
    /// flushes and stops at the end.
    fn access_log(&self) -> Option<&AccessLog> {
        None
    }

    /// Wraps every worker's service in middleware built per worker by `make`.
    fn wrap<M, F>(self, make: F) -> Layered<Self, F>
    where
        Self: Sized,
        M: Middleware,
        F: Fn(usize) -> M + Send + Sync + 'static,
    {
        Layered::new(self, make)
    }

    /// The factory as a closure, for [`Server::serve`](kiln_http::Server::serve) or
    /// another wrapper.
    fn into_factory(self) -> impl Fn(usize) -> Self::Service + Send + Sync + 'static
    where
        Self: Sized,
    {
        move |worker| self.make_service(worker)
    }
}

impl<F, T> MakeService for F
where
    F: Fn(usize) -> T + Send + Sync + 'static,
    T: Service,
{
    type Service = T;

    fn make_service(&self, worker: usize) -> T {
        self(worker)
    }
}

impl<I, F, M> MakeService for Layered<I, F>
where
    I: MakeService,
    M: Middleware,
    F: Fn(usize) -> M + Send + Sync + 'static,
{
    type Service = Wrapped<M, I::Service>;

    fn make_service(&self, worker: usize) -> Self::Service {
        Wrapped::new((self.make)(worker), self.inner.make_service(worker))
    }

    fn try_make_service(&self, worker: usize) -> Result<Self::Service, StateError> {
        let inner = self.inner.try_make_service(worker)?;
        Ok(Wrapped::new((self.make)(worker), inner))
    }

    fn access_log(&self) -> Option<&AccessLog> {
        self.inner.access_log()
    }
}

/// An app, or anything already turned into a [`MakeService`].
pub trait IntoMakeService {
    /// The factory it becomes.
    type MakeService: MakeService;

    /// Checks and builds it.
    fn into_make_service(self) -> Result<Self::MakeService, BuildError>;
}

impl<M: MakeService> IntoMakeService for M {
    type MakeService = M;

    fn into_make_service(self) -> Result<M, BuildError> {
        Ok(self)
    }
}

/// A worker's state could not be built: the error the factory given to
/// [`App::try_new`](crate::App::try_new) returned.
#[derive(Debug)]
pub struct StateError {
    worker: usize,
    source: Box<dyn Error + Send + Sync>,
}

impl StateError {
    pub(crate) fn new(worker: usize, source: Box<dyn Error + Send + Sync>) -> Self {
        StateError { worker, source }
    }

    /// The worker whose state failed.
    pub fn worker(&self) -> usize {
        self.worker
    }
}

impl fmt::Display for StateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "the state of worker {} could not be built: {}", self.worker, self.source)
    }
}

impl Error for StateError {
    fn source(&self) -> Option<&(dyn Error + 'static)> {
        Some(&*self.source)
    }
}
