//! How many calls are waiting on PostgreSQL now, over every worker, for `/metrics`.
//!
//! Each worker counts its own calls in a counter only its thread writes (a plain load
//! and store, no read-modify-write and no cache line shared between workers on the
//! request path); a reader sums them all. A worker's counter is registered once, when
//! its connections are made.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// Every worker's counter.
#[derive(Debug, Default)]
pub(crate) struct Depths {
    workers: Mutex<Vec<Arc<AtomicUsize>>>,
}

impl Depths {
    /// A new counter for one worker, counted in [`total`](Self::total) from now on.
    pub(crate) fn register(&self) -> Arc<AtomicUsize> {
        let counter = Arc::new(AtomicUsize::new(0));
        self.workers.lock().unwrap_or_else(|e| e.into_inner()).push(Arc::clone(&counter));
        counter
    }

    /// Calls in flight or waiting, over every worker.
    pub(crate) fn total(&self) -> usize {
        self.workers.lock().unwrap_or_else(|e| e.into_inner()).iter().map(|c| c.load(Ordering::Relaxed)).sum()
    }
}

/// One call counted for as long as it lives. Only the worker's own thread makes these
/// (the worker is `!Send`), so a load and a store cannot lose a count.
pub(crate) struct InFlight<'a>(&'a AtomicUsize);

impl<'a> InFlight<'a> {
    pub(crate) fn new(counter: &'a AtomicUsize) -> Self {
        counter.store(counter.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
        InFlight(counter)
    }
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.store(self.0.load(Ordering::Relaxed).saturating_sub(1), Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_are_counted_while_they_live_and_summed_over_workers() {
        let depths = Depths::default();
        let (a, b) = (depths.register(), depths.register());
        let first = InFlight::new(&a);
        let second = InFlight::new(&a);
        let third = InFlight::new(&b);
        assert_eq!(depths.total(), 3);
        drop(second);
        assert_eq!(depths.total(), 2);
        drop((first, third));
        assert_eq!(depths.total(), 0);
    }
}
