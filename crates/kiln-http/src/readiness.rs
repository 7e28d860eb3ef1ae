//! Whether the server still wants new requests: what a load balancer's health check
//! asks. It turns to "draining" when shutdown begins, before the listeners close, so
//! that the balancer stops sending while every request it already sent is answered.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// A cheap handle on the server's readiness, for a health check endpoint; cloned from
/// [`Server::readiness`](crate::Server::readiness) before the server starts.
///
/// ```
/// let server = kiln_http::Server::new();
/// let readiness = server.readiness();
/// assert!(readiness.is_ready());
/// ```
#[derive(Debug, Clone, Default)]
pub struct Readiness {
    draining: Arc<AtomicBool>,
}

impl Readiness {
    /// `true` until shutdown (or the drain before it) begins.
    pub fn is_ready(&self) -> bool {
        !self.is_draining()
    }

    /// `true` once shutdown, or the drain delay before it, has begun.
    pub fn is_draining(&self) -> bool {
        self.draining.load(Ordering::Relaxed)
    }

    pub(crate) fn begin_draining(&self) {
        self.draining.store(true, Ordering::Relaxed);
    }
}
