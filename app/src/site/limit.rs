//! A per-worker rate limit by client address: at most `per_minute` actions in each
//! minute-long window, counted from the client's first action in it.

use std::collections::HashMap;
use std::net::IpAddr;
use std::time::{Duration, Instant};

/// How long a window lasts.
const WINDOW: Duration = Duration::from_secs(60);
/// Most addresses remembered; past it, stale windows are dropped, and if every one is
/// still live, a new address is refused until some expire (memory stays bounded).
const MAX_CLIENTS: usize = 10_000;

/// The actions of each client address in its current window.
#[derive(Debug)]
pub(crate) struct RateLimit {
    per_minute: u32,
    windows: HashMap<IpAddr, (Instant, u32)>,
}

impl RateLimit {
    pub(crate) fn new(per_minute: u32) -> Self {
        RateLimit { per_minute, windows: HashMap::new() }
    }

    /// Counts one action of `client` at `now`; `false` when it is one too many.
    pub(crate) fn allow(&mut self, client: IpAddr, now: Instant) -> bool {
        if !self.windows.contains_key(&client) && self.windows.len() >= MAX_CLIENTS {
            self.windows.retain(|_, (start, _)| now.duration_since(*start) < WINDOW);
            if self.windows.len() >= MAX_CLIENTS {
                return false;
            }
        }
        let (start, count) = self.windows.entry(client).or_insert((now, 0));
        if now.duration_since(*start) >= WINDOW {
            *start = now;
            *count = 0;
        }
        *count = count.saturating_add(1);
        *count <= self.per_minute
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_client_gets_its_quota_per_window() {
        let mut limit = RateLimit::new(2);
        let (a, b): (IpAddr, IpAddr) = ("10.0.0.1".parse().unwrap(), "10.0.0.2".parse().unwrap());
        let t = Instant::now();
        assert!(limit.allow(a, t) && limit.allow(a, t));
        assert!(!limit.allow(a, t), "the third in a minute is refused");
        assert!(limit.allow(b, t), "another address has its own quota");
        assert!(limit.allow(a, t + WINDOW), "a new window starts after a minute");
    }

    #[test]
    fn memory_stays_bounded() {
        let mut limit = RateLimit::new(1);
        let t = Instant::now();
        for i in 0..MAX_CLIENTS as u32 {
            assert!(limit.allow(IpAddr::from(i.to_be_bytes()), t));
        }
        assert!(!limit.allow("192.0.2.1".parse().unwrap(), t), "full of live windows: refused");
        assert!(limit.allow("192.0.2.1".parse().unwrap(), t + WINDOW), "stale windows dropped");
        assert!(limit.windows.len() <= MAX_CLIENTS);
    }
}
