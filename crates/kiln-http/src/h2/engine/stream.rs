//! One stream of the connection as the engine keeps it (RFC 9113 §5.1): its request as
//! it arrives, its windows, and its response's body while the windows let it out; and
//! the memory of recently closed streams, which decides how a late frame is answered.

use std::fs::File;

use bytes::Bytes;
use tokio::time::Instant;

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

/// How many closed streams are remembered.
const REMEMBERED: usize = 32;

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

/// The last [`REMEMBERED`] streams closed, oldest overwritten first. Each is its id
/// (31 bits, §5.1.1) with [`BY_US`] set when this side reset it: four bytes, so that
/// every connection's state is 128 bytes smaller than with a flag beside each id.
#[derive(Default)]
pub(crate) struct ClosedRing {
    ids: [u32; REMEMBERED],
    next: u32,
}

/// The bit of a remembered id that says this side reset the stream.
const BY_US: u32 = 1 << 31;

impl ClosedRing {
    pub(crate) fn note(&mut self, id: u32, how: Closed) {
        self.ids[self.next as usize] = id | if how == Closed::ByUs { BY_US } else { 0 };
        self.next = (self.next + 1) % REMEMBERED as u32;
    }

    pub(crate) fn find(&self, id: u32) -> Option<Closed> {
        self.ids
            .iter()
            .find(|&&i| i & !BY_US == id && id != 0)
            .map(|&i| if i & BY_US != 0 { Closed::ByUs } else { Closed::ByPeer })
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
        for i in 0..REMEMBERED as u32 {
            ring.note(101 + 2 * i, Closed::ByPeer);
        }
        assert_eq!(ring.find(1), None);
        assert_eq!(ring.find(0), None);
    }
}
