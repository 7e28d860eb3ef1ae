//! The worker's budget for messages being received: what every socket of the worker
//! holds in messages it is reassembling or decompressing, summed, kept under
//! [`WsConfig::worker_message_bytes`](crate::ws::WsConfig::worker_message_bytes) as
//! request bodies are kept under the worker's buffering budget. A worker is one
//! thread, so the total is a thread-local counter: no lock, no atomic.

use std::cell::Cell;

thread_local! {
    /// Bytes the sockets of this thread's worker hold in messages being received.
    static HELD: Cell<usize> = const { Cell::new(0) };
}

/// Bytes the WebSocket sockets of the calling worker hold now in messages being
/// received (reassembled or decompressed, not yet handed to the app): a gauge for
/// metrics and tests.
pub fn worker_message_bytes() -> usize {
    HELD.with(Cell::get)
}

/// The part of the worker's budget one socket holds, given back when dropped.
#[derive(Debug, Default)]
pub(super) struct Held(usize);

impl Held {
    /// Raises what this socket holds to `want` bytes if the worker's total stays within
    /// `budget`; `false` (holding what it held) if it would not.
    pub(super) fn raise_to(&mut self, want: usize, budget: usize) -> bool {
        if want <= self.0 {
            return true;
        }
        HELD.with(|held| {
            let total = held.get() + (want - self.0);
            if total > budget {
                return false;
            }
            held.set(total);
            self.0 = want;
            true
        })
    }

    /// What this socket may hold in all without passing `budget`: at least
    /// `uncharged`, which is not counted.
    pub(super) fn room(&self, budget: usize, uncharged: usize) -> usize {
        (budget.saturating_sub(worker_message_bytes()) + self.0).max(uncharged)
    }

    /// Gives everything back.
    pub(super) fn release(&mut self) {
        if self.0 > 0 {
            // `try_with`: a socket dropped while its thread is torn down has no one to
            // give back to.
            let _ = HELD.try_with(|held| held.set(held.get() - self.0));
            self.0 = 0;
        }
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        self.release();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sockets_share_one_bounded_total() {
        std::thread::spawn(|| {
            let (mut a, mut b) = (Held::default(), Held::default());
            assert!(a.raise_to(60, 100));
            assert!(!b.raise_to(50, 100), "60 + 50 passes 100");
            assert_eq!(b.room(100, 0), 40);
            assert_eq!(b.room(100, 64), 64, "the uncharged floor");
            assert!(b.raise_to(40, 100));
            assert_eq!(worker_message_bytes(), 100);
            assert!(a.raise_to(30, 100), "less than held: nothing to raise");
            drop(a);
            assert_eq!(worker_message_bytes(), 40);
            b.release();
            assert_eq!(worker_message_bytes(), 0);
        })
        .join()
        .unwrap();
    }
}
