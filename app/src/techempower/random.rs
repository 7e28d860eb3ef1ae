//! Per-worker random numbers for picking rows: wyrand, seeded from the process's
//! random hasher keys, so no syscall and no lock on the request path.

use std::cell::Cell;
use std::collections::hash_map::RandomState;
use std::hash::BuildHasher;

use super::model::WORLD_ROWS;

/// Words in a bit set with one bit per world id.
const ID_SET_WORDS: usize = (WORLD_ROWS as usize).div_ceil(64) + 1;

/// A small, fast, non-cryptographic generator owned by one worker.
#[derive(Debug)]
pub(crate) struct Rng(Cell<u64>);

impl Rng {
    pub(crate) fn new() -> Self {
        Rng(Cell::new(RandomState::new().hash_one(std::thread::current().id())))
    }

    fn next_u64(&self) -> u64 {
        let s = self.0.get().wrapping_add(0xa076_1d64_78bd_642f);
        self.0.set(s);
        let t = u128::from(s) * u128::from(s ^ 0xe703_7ed1_a0b4_28db);
        (t as u64) ^ ((t >> 64) as u64)
    }

    /// A number in `1..=WORLD_ROWS`: a world id, or a new random number.
    pub(crate) fn world_number(&self) -> i32 {
        // Lemire's multiply-shift: unbiased enough for 10 000 and branch-free.
        (((self.next_u64() >> 32) * WORLD_ROWS as u64) >> 32) as i32 + 1
    }

    /// `n` distinct world ids (`n` at most `WORLD_ROWS`), in random order. Updates use
    /// distinct ids so that what a response shows is what the table holds afterwards.
    pub(crate) fn distinct_ids(&self, n: usize) -> Vec<i32> {
        let n = n.min(WORLD_ROWS as usize);
        let mut seen = [0u64; ID_SET_WORDS];
        let mut ids = Vec::with_capacity(n);
        while ids.len() < n {
            let id = self.world_number();
            let (word, bit) = (id as usize / 64, 1u64 << (id as usize % 64));
            if seen[word] & bit == 0 {
                seen[word] |= bit;
                ids.push(id);
            }
        }
        ids
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_stay_in_range_and_cover_both_ends() {
        let rng = Rng::new();
        let (mut min, mut max) = (i32::MAX, i32::MIN);
        for _ in 0..200_000 {
            let n = rng.world_number();
            min = min.min(n);
            max = max.max(n);
        }
        assert_eq!((min, max), (1, WORLD_ROWS));
    }

    #[test]
    fn distinct_ids_are_distinct() {
        let rng = Rng::new();
        let mut ids = rng.distinct_ids(500);
        assert_eq!(ids.len(), 500);
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), 500);
        assert!(ids.iter().all(|&id| (1..=WORLD_ROWS).contains(&id)));
    }
}
