//! One worker's counters. Only that worker writes them, so an increment is a relaxed
//! load and store (no `lock` prefix, no contention); a scrape on another worker reads
//! them with relaxed loads, which may see a count a request or two behind.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use kiln_http::StatusCode;
use nix::time::{ClockId, clock_gettime};

/// The histogram's upper bounds, in microseconds (Prometheus' default buckets, from
/// 0.5 ms, plus finer ones below for a server that answers in microseconds).
pub(super) const BUCKETS_US: [u64; 16] = [
    50, 100, 250, 500, 1_000, 2_500, 5_000, 10_000, 25_000, 50_000, 100_000, 250_000, 500_000, 1_000_000, 2_500_000,
    10_000_000,
];

/// Status classes counted: 1xx to 5xx.
pub(super) const CLASSES: usize = 5;

#[derive(Debug)]
pub(crate) struct WorkerCounters {
    /// Per route (the last entry: no route matched), per status class.
    pub(super) requests: Box<[[AtomicU64; CLASSES]]>,
    /// Per bucket, then one for past the last bound.
    pub(super) latency: [AtomicU64; BUCKETS_US.len() + 1],
    pub(super) latency_sum_us: AtomicU64,
    pub(super) in_flight: AtomicU64,
    /// The worker's open connections, when it runs under the engine.
    pub(super) open: Option<kiln_http::OpenConnections>,
}

/// A request being counted: in flight until dropped (a handler that panics
/// included), and the time it began.
pub(crate) struct Counting<'c> {
    counters: &'c WorkerCounters,
    started: Stamp,
}

impl Counting<'_> {
    /// The request was answered, with `status`, by the route at `route` (`None`: none).
    pub(crate) fn finish(self, route: Option<usize>, status: StatusCode) {
        let took_us = Stamp::now().micros_since(self.started);
        self.counters.finished(route, status, took_us);
    }
}

impl Drop for Counting<'_> {
    fn drop(&mut self) {
        bump(&self.counters.in_flight, u64::MAX);
    }
}

/// A reading of the monotonic clock (`CLOCK_MONOTONIC`, the one `Instant` reads), in
/// nanoseconds. One `u64`, so that a request's time is a subtraction and a division
/// by a constant: `Instant::elapsed` normalises a (seconds, nanoseconds) pair, checks
/// it for overflow and goes through `u128` for microseconds, about 60 instructions
/// a request on `/pong` (issue 25).
#[derive(Clone, Copy, Debug)]
struct Stamp(u64);

impl Stamp {
    fn now() -> Stamp {
        // CLOCK_MONOTONIC cannot fail where `Instant` works (std panics then); a
        // zero would only count one request in the first bucket.
        let nanos = clock_gettime(ClockId::CLOCK_MONOTONIC)
            .map_or(0, |t| (t.tv_sec() as u64).wrapping_mul(1_000_000_000).wrapping_add(t.tv_nsec() as u64));
        Stamp(nanos)
    }

    fn micros_since(self, earlier: Stamp) -> u64 {
        self.0.saturating_sub(earlier.0) / 1_000
    }
}

/// Adds `by` (wrapping: `u64::MAX` subtracts one), as the only writer.
fn bump(counter: &AtomicU64, by: u64) {
    counter.store(counter.load(Relaxed).wrapping_add(by), Relaxed);
}

impl WorkerCounters {
    pub(super) fn new(routes: usize) -> Self {
        WorkerCounters {
            requests: (0..=routes).map(|_| Default::default()).collect(),
            latency: Default::default(),
            latency_sum_us: AtomicU64::new(0),
            in_flight: AtomicU64::new(0),
            // Built on the worker's thread, as its service is.
            open: kiln_http::open_connections(),
        }
    }

    /// A request begins: it is in flight until the guard drops, and timed from now.
    pub(crate) fn started(&self) -> Counting<'_> {
        bump(&self.in_flight, 1);
        Counting { counters: self, started: Stamp::now() }
    }

    /// A request answered: by route index (`None`: unmatched), status, and time taken.
    fn finished(&self, route: Option<usize>, status: StatusCode, us: u64) {
        let row = route.unwrap_or(self.requests.len() - 1).min(self.requests.len() - 1);
        let class = usize::from(status.as_u16() / 100).clamp(1, CLASSES) - 1;
        bump(&self.requests[row][class], 1);
        let bucket = BUCKETS_US.iter().position(|&b| us <= b).unwrap_or(BUCKETS_US.len());
        bump(&self.latency[bucket], 1);
        bump(&self.latency_sum_us, us);
    }
}
