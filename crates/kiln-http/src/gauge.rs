//! A worker's open connections, readable from any thread: the worker counts them in
//! a `Cell` for its own decisions, and copies the count here when a connection opens
//! or closes (a plain store, once per connection, never per request), so that a
//! `/metrics` scrape answered by another worker can sum them.

use std::cell::RefCell;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

thread_local! {
    /// The gauge of the worker running on this thread, if any.
    static CURRENT: RefCell<Option<OpenConnections>> = const { RefCell::new(None) };
}

/// One worker's count of open connections (HTTP/1.1, HTTP/2 and upgraded ones
/// alike), from [`open_connections`]. Cloning it shares the count.
#[derive(Debug, Clone, Default)]
pub struct OpenConnections(Arc<AtomicUsize>);

impl OpenConnections {
    /// The connections open now; read from another thread, it may be a connection
    /// or two behind.
    pub fn get(&self) -> usize {
        self.0.load(Relaxed)
    }

    /// Makes this the current thread's gauge (a worker's, when it starts).
    pub(crate) fn install() -> Self {
        let gauge = OpenConnections::default();
        CURRENT.with(|current| *current.borrow_mut() = Some(gauge.clone()));
        gauge
    }

    /// Publishes the worker's count; only the worker writes it.
    pub(crate) fn set(&self, open: usize) {
        self.0.store(open, Relaxed);
    }
}

/// The open connections of the worker running on this thread, or `None` off a worker
/// (a test client, a thread of the app's own). A service built per worker (the app's
/// state factory runs on the worker's thread) keeps it to report the count.
pub fn open_connections() -> Option<OpenConnections> {
    CURRENT.with(|current| current.borrow().clone())
}
