//! One stream of the connection as the engine keeps it (RFC 9113 §5.1): its request as
//! it arrives, its windows, and its response's body while the windows let it out; and
//! the memory of recently closed streams, which decides how a late frame is answered.

use std::fs::File;

use bytes::Bytes;
use tokio::time::Instant;

use super::tunnel::TunnelOut;
use crate::body::BodyLimit;
use crate::body::IncomingBody;
use crate::h2::fields::Facts;
use crate::rejection::Rejection;
use crate::response::BodyStream;
use crate::worker::Bufs;

/// Where a stream is in its life, past its request head.
pub(crate) enum Phase {
    /// The body is arriving (or the request is whole and waits to be called).
    Receiving,
    /// The service is answering; the stream's buffers are lent to the call.
    Called,
    /// The head is sent; the body goes out as the windows allow.
    Sending(Out),
}

/// The rest of a response body.
pub(crate) enum Out {
    /// The response buffer's bytes from `at`.
    Buffer { at: usize },
    /// A constant's bytes.
    Static(&'static [u8]),
    /// Shared bytes, consumed from the front.
    Bytes(Bytes),
    /// `len` bytes of `file` from `offset`.
    File { file: File, offset: u64, len: u64 },
    /// A stream of chunks, with the chunk taken but not yet sent whole.
    Stream { body: BodyStream, chunk: Bytes },
    /// What a tunnel's writer writes, until it is done (RFC 8441).
    Tunnel(TunnelOut),
}

/// How a stream's request body is taken in.
pub(crate) enum Intake {
    /// Read whole into the stream's buffer before the service is called (the default).
    Buffer,
    /// Handed to the service as it asks ([`BodyMode::Stream`](crate::BodyMode::Stream)):
    /// DATA goes into the handle's slot, and the stream's window is given back only for
    /// what the handler has taken (`taken`), so a stalled handler holds at most one
    /// window's worth and the peer waits.
    Stream { body: IncomingBody, taken: u64 },
    /// A streamed body whose handler has answered: what still arrives is dropped
    /// (until the stream is reset once the answer is out).
    Dropped,
}

/// One open (or half-closed) stream.
pub(crate) struct Stream {
    pub(crate) id: u32,
    /// The peer may still send on it: no END_STREAM yet (§5.1 "open").
    pub(crate) recv_open: bool,
    /// How many bytes the stream may still send (§6.9); negative after the peer
    /// shrank SETTINGS_INITIAL_WINDOW_SIZE (§6.9.2).
    pub(crate) send_window: i64,
    /// How many bytes the peer may still send on it before a WINDOW_UPDATE.
    pub(crate) recv_left: i64,
    /// Bytes received and taken but not yet given back by a WINDOW_UPDATE.
    pub(crate) recv_unacked: u32,
    /// The request's buffers (head, fields, body) and, once answered, the response.
    pub(crate) bufs: Bufs,
    pub(crate) facts: Facts,
    /// Body bytes received so far, to check against `content-length` (§8.1.1).
    pub(crate) received: u64,
    pub(crate) phase: Phase,
    /// Answered with this instead of calling the service.
    pub(crate) refused: Option<Rejection>,
    /// The body limit a `413` refusal names (and how a route raises it).
    pub(crate) over_limit: Option<BodyLimit>,
    /// The request is whole (or refused) and waits for its call or refusal.
    pub(crate) ready: bool,
    /// Just opened: its early hints are still to be asked for.
    pub(crate) fresh: bool,
    /// When the body must have arrived, or (sending) when a window held shut ends it.
    pub(crate) deadline: Option<Instant>,
    /// Bytes of the worker's budget this stream holds.
    pub(crate) held: usize,
    pub(crate) intake: Intake,
}

/// How many stream ids below the highest one closed are remembered: 64 of the
/// client's (odd) ids, one bit each.
const REMEMBERED: u32 = 64;

/// How a remembered stream closed.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Closed {
    /// Both sides ended it, or the peer reset it: a frame on it is a STREAM_CLOSED error.
    ByPeer,
    /// This side reset it: frames already in flight are expected and dropped (§5.4.2:
    /// "the endpoint ... MUST ignore frames that it receives on closed streams after it
    /// has sent a RST_STREAM frame").
    ByUs,
}

/// The streams closed among the last [`REMEMBERED`] ids up to the highest one closed
/// (`top`): bit `i` of `closed` says stream `top - 2i` closed, the same bit of `by_us`
/// that this side reset it. 20 bytes in every connection's state, where a ring of the
/// last 32 closed ids took 132 (a tenth of an idle connection's memory). A client opens
/// its streams in order (§5.1.1), so the ids recently closed are the ones near the top;
/// one closed far below it (a long upload outlived 64 newer streams) is forgotten, and
/// a late frame on it is answered as one on a stream closed long ago.
#[derive(Default)]
pub(crate) struct ClosedRing {
    top: u32,
    closed: u64,
    by_us: u64,
}

impl ClosedRing {
    pub(crate) fn note(&mut self, id: u32, how: Closed) {
        // Only the client's streams are remembered: a server never opens one (no push).
        if id % 2 == 0 {
            return;
        }
        if id > self.top {
            // `top` is 0 (nothing remembered yet) or odd: the distance is even.
            let shift = (id - self.top).div_ceil(2);
            let shifted = |bits: u64| if shift >= REMEMBERED { 0 } else { bits << shift };
            (self.closed, self.by_us) = (shifted(self.closed), shifted(self.by_us));
            self.top = id;
        }
        let Some(bit) = self.bit(id) else { return };
        self.closed |= bit;
        if how == Closed::ByUs {
            self.by_us |= bit;
        } else {
            self.by_us &= !bit;
        }
    }

    pub(crate) fn find(&self, id: u32) -> Option<Closed> {
        let bit = self.bit(id)?;
        if self.closed & bit == 0 {
            return None;
        }
        Some(if self.by_us & bit != 0 { Closed::ByUs } else { Closed::ByPeer })
    }

    /// The bit that stands for stream `id`, if it is remembered.
    fn bit(&self, id: u32) -> Option<u64> {
        if id % 2 == 0 || id > self.top || (self.top - id) / 2 >= REMEMBERED {
            return None;
        }
        Some(1 << ((self.top - id) / 2))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ring_remembers_the_last_closed_streams_and_how() {
        let mut ring = ClosedRing::default();
        ring.note(1, Closed::ByPeer);
        ring.note(3, Closed::ByUs);
        assert_eq!((ring.find(1), ring.find(3), ring.find(5)), (Some(Closed::ByPeer), Some(Closed::ByUs), None));
        for i in 0..REMEMBERED {
            ring.note(101 + 2 * i, Closed::ByPeer);
        }
        assert_eq!(ring.find(1), None);
        assert_eq!(ring.find(0), None);
    }

    #[test]
    fn the_last_64_ids_closed_are_remembered_in_any_order_and_an_even_id_is_not() {
        let mut ring = ClosedRing::default();
        ring.note(201, Closed::ByUs);
        ring.note(75, Closed::ByPeer); // the lowest remembered: 201 - 2 * 63
        ring.note(73, Closed::ByPeer); // one below: forgotten
        ring.note(199, Closed::ByUs);
        ring.note(199, Closed::ByPeer); // closed again: the last word counts
        ring.note(202, Closed::ByUs); // even: not a client's stream
        assert_eq!(ring.find(201), Some(Closed::ByUs));
        assert_eq!(ring.find(75), Some(Closed::ByPeer));
        assert_eq!((ring.find(73), ring.find(197), ring.find(202), ring.find(203)), (None, None, None, None));
        assert_eq!(ring.find(199), Some(Closed::ByPeer));
        ring.note(203, Closed::ByPeer); // the top moves: 75 falls out
        assert_eq!((ring.find(75), ring.find(77), ring.find(203)), (None, None, Some(Closed::ByPeer)));
        assert_eq!(ring.find(201), Some(Closed::ByUs));
    }
}
