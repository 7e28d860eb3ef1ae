//! The limiter's memory: a fixed table of GCRA cells, one `AtomicU64` each, that every
//! worker thread updates with compare-and-swap, never under a lock.
//!
//! A key owns no cell: its hash picks one cell in each half of the table, and a
//! request is admitted only when both cells admit it, charging both (a count-min
//! sketch of GCRA states). A cell shared with other keys holds their charges too, so
//! sharing only ever makes a key's limit stricter; it is never forgotten or reset to
//! make room, so no flood of new keys gives an active key budget back.

use std::hash::{BuildHasher, Hash, RandomState};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use super::gcra::Quota;

/// Cells of a table by default: 256 KiB.
pub(super) const DEFAULT_CELLS: usize = 32 * 1024;

/// The cells, the seeded hasher that spreads keys over them, and the start of the
/// default clock.
pub(super) struct Table {
    cells: Box<[AtomicU64]>,
    /// SipHash with keys from the OS's random source, drawn when the table is made: a
    /// client cannot choose keys that land on a victim's cells.
    hasher: RandomState,
    epoch: Instant,
}

impl Table {
    /// A table of `cells` cells (rounded up to an even number, at least 2).
    pub(super) fn new(cells: usize) -> Table {
        let half = cells.div_ceil(2).max(1);
        Table {
            cells: (0..2 * half).map(|_| AtomicU64::new(0)).collect(),
            hasher: RandomState::new(),
            epoch: Instant::now(),
        }
    }

    /// How many cells the table holds; fixed when it is made.
    pub(super) fn len(&self) -> usize {
        self.cells.len()
    }

    /// A key's hash, which picks its cells.
    pub(super) fn hash<K: Hash + ?Sized>(&self, key: &K) -> u64 {
        self.hasher.hash_one(key)
    }

    /// Nanoseconds since the table was made: the default clock.
    pub(super) fn elapsed(&self) -> u64 {
        u64::try_from(self.epoch.elapsed().as_nanos()).unwrap_or(u64::MAX)
    }

    /// Admits one request of the key that hashed to `hash`, or says how long (in
    /// nanoseconds) until one would be admitted. `now` reads the clock.
    pub(super) fn admit(&self, hash: u64, quota: Quota, now: impl Fn() -> u64) -> Result<(), u64> {
        self.admit_in(self.cells_of(hash), quota, now)
    }

    /// One cell in each half: the low and the high 32 bits of the hash, each mapped
    /// onto its half by a multiply and a shift (no modulo bias worth the name).
    fn cells_of(&self, hash: u64) -> [usize; 2] {
        let half = self.cells.len() / 2;
        let scale = |bits: u64| usize::try_from((u128::from(bits) * half as u128) >> 32).unwrap_or(0);
        [scale(hash & 0xffff_ffff), half + scale(hash >> 32)]
    }

    fn admit_in(&self, [first, second]: [usize; 2], quota: Quota, now: impl Fn() -> u64) -> Result<(), u64> {
        charge(&self.cells[first], quota, &now)?;
        if let Err(wait) = charge(&self.cells[second], quota, &now) {
            let at = now();
            let _ =
                self.cells[first].fetch_update(Ordering::AcqRel, Ordering::Acquire, |tat| Some(quota.refund(tat, at)));
            return Err(wait);
        }
        Ok(())
    }
}

/// Charges one request to `cell` if its quota admits it.
fn charge(cell: &AtomicU64, quota: Quota, now: &impl Fn() -> u64) -> Result<(), u64> {
    let mut tat = cell.load(Ordering::Acquire);
    loop {
        // The clock is read after the cell: every admission the cell shows was decided
        // at a time no later than this one, so a thread that read the clock early and
        // lost the race is not refused for a moment that is already past.
        let next = quota.admit(tat, now())?;
        match cell.compare_exchange_weak(tat, next, Ordering::AcqRel, Ordering::Acquire) {
            Ok(_) => return Ok(()),
            Err(current) => tat = current,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Barrier;
    use std::sync::atomic::AtomicU32;
    use std::time::Duration;

    use super::*;

    #[test]
    fn threads_racing_on_one_key_get_exactly_the_burst() {
        let table = Table::new(64);
        let quota = Quota::new(50, Duration::from_secs(3600), 50);
        let admitted = AtomicU32::new(0);
        let barrier = Barrier::new(8);
        std::thread::scope(|s| {
            for _ in 0..8 {
                s.spawn(|| {
                    barrier.wait();
                    for _ in 0..40 {
                        if table.admit(table.hash("one key"), quota, || 1_000).is_ok() {
                            admitted.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                });
            }
        });
        assert_eq!(admitted.into_inner(), 50);
    }

    #[test]
    fn a_key_is_refused_when_either_cell_is_spent_and_the_other_is_given_back() {
        let table = Table::new(8);
        let quota = Quota::new(2, Duration::from_secs(60), 2);
        // Another key spent cell 5 (the second half's second cell).
        assert!(table.admit_in([0, 5], quota, || 0).is_ok());
        assert!(table.admit_in([1, 5], quota, || 0).is_ok());
        assert_eq!(table.admit_in([2, 5], quota, || 0), Err(30_000_000_000));
        // Cell 2 was charged, then given back: a key sharing it still has 2.
        assert!(table.admit_in([2, 6], quota, || 0).is_ok());
        assert!(table.admit_in([2, 6], quota, || 0).is_ok());
        assert!(table.admit_in([2, 7], quota, || 0).is_err());
    }

    #[test]
    fn keys_spread_over_both_halves() {
        let table = Table::new(1000);
        assert_eq!(table.len(), 1000);
        let mut seen = vec![0u32; table.len()];
        for key in 0..100_000u32 {
            let [a, b] = table.cells_of(table.hash(&key));
            assert!(a < 500 && (500..1000).contains(&b), "{a} {b}");
            seen[a] += 1;
            seen[b] += 1;
        }
        // 200 a cell on average; a hash that clumped would leave cells far off it.
        let (fewest, most) = (seen.iter().min(), seen.iter().max());
        assert!(fewest >= Some(&100) && most < Some(&300), "{fewest:?} {most:?}");
    }

    #[test]
    fn an_odd_or_tiny_capacity_still_makes_two_halves() {
        assert_eq!(Table::new(0).len(), 2);
        assert_eq!(Table::new(7).len(), 8);
    }
}
