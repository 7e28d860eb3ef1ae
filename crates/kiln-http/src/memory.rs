//! Memory given back to the system once a burst is over.
//!
//! The engine's buffers are bounded and pooled, but what a burst allocated and freed
//! stays in glibc's heaps: freed memory that does not lie at the very top of a heap is
//! kept for reuse, not returned. Measured on the demo (issue 33): 173 MB still
//! resident 40 s after 200 stalled uploads closed, 40 MB after 2,000 half-sent heads.
//! A server in a container is judged by its resident set, so each worker watches its
//! load once a second (on the tick that renders `Date`) and, when a burst has ended,
//! calls `malloc_trim(0)` once. Never per request: a trim walks every free chunk of
//! every heap (a few milliseconds after a large burst) and the memory it returns must
//! be faulted in again when the next burst comes.
//!
//! A burst has ended when the worker's connections (or the bytes its connections
//! buffer) fell by at least [`BURST_CONNECTIONS`] (or [`BURST_BYTES`]) from their peak
//! to half of it or less, and the last second was quiet: the load did not rise and
//! fewer than [`QUIET_OPENS`] connections were opened. A server under steady load, even
//! one whose clients open a connection per request, never trims.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::Instant;

/// Connections a worker must have shed since its peak for the end of a burst to count.
const BURST_CONNECTIONS: usize = 64;
/// Buffered bytes a worker must have given back since its peak for the same.
const BURST_BYTES: usize = 16 * 1024 * 1024;
/// Connections opened in the last second below which the second counts as quiet.
const QUIET_OPENS: u64 = 16;

/// Trims done by every worker of the process, for [`memory_trims`].
static TRIMS: AtomicU64 = AtomicU64::new(0);

/// How many times a worker of this process gave freed memory back to the system after
/// a burst of connections had ended (with glibc's `malloc_trim`; elsewhere the count
/// stays 0). For a `/metrics` page, and for a test that a burst's end was noticed.
pub fn memory_trims() -> u64 {
    TRIMS.load(Relaxed)
}

/// A worker's load as its tick sees it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Load {
    /// Connections open now.
    pub(crate) connections: usize,
    /// Bytes of request bodies and responses held in connection buffers now.
    pub(crate) buffered: usize,
    /// Connections opened since the worker started.
    pub(crate) opened: u64,
}

/// One worker's watch for the end of a burst.
#[derive(Debug, Default)]
pub(crate) struct Bursts {
    /// The highest connections and buffered bytes seen since the last trim.
    peak: Load,
    /// The load at the last tick.
    last: Load,
}

impl Bursts {
    /// Takes this second's load; when a burst has just ended and the memory it freed
    /// should go back (see the module's documentation), the burst's peak.
    pub(crate) fn ended(&mut self, now: Load) -> Option<Load> {
        let last = std::mem::replace(&mut self.last, now);
        self.peak.connections = self.peak.connections.max(now.connections);
        self.peak.buffered = self.peak.buffered.max(now.buffered);
        let quiet = now.opened - last.opened < QUIET_OPENS
            && now.connections <= last.connections
            && now.buffered <= last.buffered;
        let fell = |peak: usize, now: usize, by: usize| peak - now >= by && now <= peak / 2;
        let ended = quiet
            && (fell(self.peak.connections, now.connections, BURST_CONNECTIONS)
                || fell(self.peak.buffered, now.buffered, BURST_BYTES));
        ended.then(|| std::mem::replace(&mut self.peak, now))
    }
}

/// Gives what the allocator holds free back to the system, logs what it cost and
/// counts it. `peak` and `now` are the worker's connections, for the log.
pub(crate) fn trim(peak: usize, now: usize) {
    let started = Instant::now();
    if !release_free_memory() {
        return;
    }
    TRIMS.fetch_add(1, Relaxed);
    let took = started.elapsed();
    tracing::info!(
        target: "kiln::memory",
        "a burst ended ({peak} connections, {now} now): freed memory given back to the system in {took:?}"
    );
}

/// `malloc_trim(0)`: returns the free pages of every heap glibc's allocator keeps.
/// `false` where there is no such call.
#[allow(unsafe_code)]
fn release_free_memory() -> bool {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // SAFETY: `malloc_trim` only returns free pages of the allocator's own heaps; it
        // may run while other threads allocate (it takes each arena's lock).
        unsafe { nix::libc::malloc_trim(0) };
        true
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(connections: usize, opened: u64) -> Load {
        Load { connections, buffered: 0, opened }
    }

    #[test]
    fn a_burst_ends_when_the_load_has_fallen_and_the_last_second_was_quiet() {
        let mut bursts = Bursts::default();
        // 2,000 connections arrive over two seconds, stay a second, then leave.
        assert_eq!(None, bursts.ended(load(1_000, 1_000)));
        assert_eq!(None, bursts.ended(load(2_000, 2_000)));
        assert_eq!(None, bursts.ended(load(2_000, 2_000)));
        assert_eq!(None, bursts.ended(load(1_100, 2_000)), "still above half the peak");
        assert_eq!(bursts.ended(load(10, 2_000)).map(|peak| peak.connections), Some(2_000));
        // Once: the peak is now the low level.
        assert_eq!(None, bursts.ended(load(0, 2_000)));
    }

    #[test]
    fn steady_load_and_churn_never_trim() {
        let mut bursts = Bursts::default();
        let mut opened = 0;
        for second in 0..100 {
            // A client opening a connection per request: the count swings, but
            // connections keep being opened.
            opened += 5_000;
            assert_eq!(None, bursts.ended(load(if second % 2 == 0 { 200 } else { 20 }, opened)));
        }
        let mut bursts = Bursts::default();
        for _ in 0..100 {
            assert_eq!(None, bursts.ended(load(100, 100)), "a hundred keep-alive clients");
        }
    }

    #[test]
    fn a_few_connections_closing_are_no_burst() {
        let mut bursts = Bursts::default();
        assert_eq!(None, bursts.ended(load(40, 40)));
        assert_eq!(None, bursts.ended(load(0, 40)));
    }

    #[test]
    fn buffered_bytes_given_back_end_a_burst_too() {
        let mut bursts = Bursts::default();
        let load = |buffered| Load { connections: 10, buffered, opened: 10 };
        assert_eq!(None, bursts.ended(load(100 << 20)));
        assert!(bursts.ended(load(1 << 20)).is_some());
    }
}
