//! What an HTTP/2 peer sends, weighed against what it asks for.
//!
//! Most floods cost the attacker bytes that carry no request: PING, SETTINGS,
//! WINDOW_UPDATE, PRIORITY, empty or padded frames. The engine answers each as the
//! protocol says, so the connection counts every byte read and every byte
//! the peer asked for (request heads as decoded, request bodies, and response bodies,
//! whose flow control the peer pays for in WINDOW_UPDATEs), and a peer whose bytes
//! outweigh its requests many times over is sent `GOAWAY(ENHANCE_YOUR_CALM)`. The same
//! measure as nginx's flood check; a browser's traffic, mostly headers and bodies,
//! never comes near it.

use std::cell::Cell;

/// Bytes a connection may read beyond [`OVERHEAD_RATIO`] times its requests' bytes: the
/// preface, settings and the flow control of a long download fit many times over.
const OVERHEAD_ALLOWANCE: u64 = 1024 * 1024;
/// How many bytes read per byte of request a peer may stay under.
const OVERHEAD_RATIO: u64 = 8;

/// The counts a connection and its streams share.
#[derive(Default)]
pub(super) struct Meter {
    read: Cell<u64>,
    payload: Cell<u64>,
}

impl Meter {
    /// Counts bytes the peer asked for: a request's decoded head, body data either way.
    pub(super) fn payload(&self, n: usize) {
        self.payload.set(self.payload.get() + n as u64);
    }

    /// Counts bytes read from the peer.
    pub(super) fn read(&self, n: usize) {
        self.read.set(self.read.get() + n as u64);
    }

    /// Whether the peer has sent far more than its requests account for.
    pub(super) fn flooded(&self) -> bool {
        self.read.get() / OVERHEAD_RATIO > self.payload.get() + OVERHEAD_ALLOWANCE
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_peer_is_flooding_once_its_bytes_outweigh_its_requests_past_the_allowance() {
        let meter = Meter::default();
        meter.read.set(OVERHEAD_ALLOWANCE * OVERHEAD_RATIO);
        assert!(!meter.flooded());
        meter.read.set((OVERHEAD_ALLOWANCE + 1) * OVERHEAD_RATIO);
        assert!(meter.flooded());
        meter.payload(1);
        assert!(!meter.flooded());
    }
}
