//! The generic cell rate algorithm (GCRA, from ATM's traffic policing, ITU-T I.371):
//! a key's whole state is one number, its *theoretical arrival time* (TAT), the moment
//! its budget will be full again. A request at `now` is admitted when, charged one
//! emission interval, that moment is no further ahead than the burst allows.
//!
//! Times are nanoseconds on the limiter's clock; a cell never touched holds 0, which
//! reads as "full budget" at any `now`.

use std::time::Duration;

/// A rate and a burst, as the arithmetic needs them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Quota {
    /// The emission interval: the period over the count, the time one request's
    /// budget takes to come back.
    interval: u64,
    /// How far ahead of `now` a TAT may run: `burst` intervals.
    window: u64,
}

impl Quota {
    /// `count` requests each `period`, `burst` of them at once (each at least 1).
    pub(super) fn new(count: u32, period: Duration, burst: u32) -> Quota {
        let period = u64::try_from(period.as_nanos()).unwrap_or(u64::MAX);
        let interval = (period / u64::from(count.max(1))).max(1);
        Quota { interval, window: interval.saturating_mul(u64::from(burst.max(1))) }
    }

    /// The cell's next TAT if a request at `now` is admitted, or (refused) how long
    /// until one would be.
    pub(super) fn admit(self, tat: u64, now: u64) -> Result<u64, u64> {
        // A TAT in the past is a full budget: the time idle is not saved up beyond it.
        let next = tat.max(now).saturating_add(self.interval);
        let ahead = next - now;
        if ahead <= self.window { Ok(next) } else { Err(ahead - self.window) }
    }

    /// The cell with one admission taken back (the key's other cell refused it). A
    /// cell already idle stays as it is: time has paid the admission back.
    pub(super) fn refund(self, tat: u64, now: u64) -> u64 {
        if tat <= now { tat } else { tat.saturating_sub(self.interval).max(now) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SEC: u64 = 1_000_000_000;

    /// Admits at `now` until refused; the TAT reached and the wait given.
    fn drain(quota: Quota, mut tat: u64, now: u64) -> (u32, u64, u64) {
        let mut admitted = 0;
        loop {
            match quota.admit(tat, now) {
                Ok(next) => {
                    tat = next;
                    admitted += 1;
                }
                Err(wait) => return (admitted, tat, wait),
            }
        }
    }

    #[test]
    fn a_fresh_key_gets_its_burst_then_waits_one_interval() {
        // 10 a minute: one every 6 s, 4 at once.
        let quota = Quota::new(10, Duration::from_secs(60), 4);
        let (admitted, tat, wait) = drain(quota, 0, 100 * SEC);
        assert_eq!(admitted, 4);
        assert_eq!(tat, 100 * SEC + 4 * 6 * SEC);
        assert_eq!(wait, 6 * SEC, "the next request is welcome one interval later");
        assert_eq!(quota.admit(tat, 106 * SEC - 1), Err(1));
        assert_eq!(quota.admit(tat, 106 * SEC), Ok(100 * SEC + 5 * 6 * SEC));
    }

    #[test]
    fn the_budget_comes_back_one_interval_at_a_time_and_no_further() {
        let quota = Quota::new(2, Duration::from_secs(1), 3);
        let (_, tat, _) = drain(quota, 0, 10 * SEC);
        // Half a second: one request's worth.
        assert_eq!(drain(quota, tat, 10 * SEC + SEC / 2).0, 1);
        // Idle for an hour: the burst again, not 7,200 saved up.
        assert_eq!(drain(quota, tat, 3_610 * SEC).0, 3);
    }

    #[test]
    fn a_steady_client_at_the_rate_is_always_admitted() {
        let quota = Quota::new(5, Duration::from_secs(1), 1);
        let mut tat = 0;
        for step in 1..=1_000 {
            tat = quota.admit(tat, step * SEC / 5).unwrap_or_else(|w| panic!("step {step} refused, wait {w}"));
        }
        assert!(quota.admit(tat, 1_000 * SEC / 5 + 1).is_err(), "one faster is refused");
    }

    #[test]
    fn a_refund_gives_back_one_interval_but_not_an_idle_cells() {
        let quota = Quota::new(60, Duration::from_secs(60), 5);
        let now = 50 * SEC;
        let charged = quota.admit(0, now).unwrap();
        assert_eq!(quota.refund(charged, now), now, "back to a full budget");
        let (_, tat, _) = drain(quota, 0, now);
        assert_eq!(quota.refund(tat, now), tat - SEC);
        assert_eq!(quota.refund(tat, tat + 1), tat, "idle: nothing to give back");
    }

    #[test]
    fn degenerate_settings_stay_within_range() {
        // A count or burst of 0 is 1; a rate past one a nanosecond is one a nanosecond.
        assert_eq!(Quota::new(0, Duration::from_secs(1), 0), Quota::new(1, Duration::from_secs(1), 1));
        let fast = Quota::new(u32::MAX, Duration::from_nanos(1), 1);
        assert_eq!(fast.admit(0, 7), Ok(8));
        let slow = Quota::new(1, Duration::MAX, u32::MAX);
        assert_eq!(slow.admit(0, 1), Ok(u64::MAX), "saturates, never wraps to a small TAT");
    }
}
