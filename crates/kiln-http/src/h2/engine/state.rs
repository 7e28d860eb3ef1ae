//! The connection's protocol state (RFC 9113): settings, windows, the streams in a
//! small slab, the HPACK decoder, the header block being assembled, and the write
//! buffer every frame is appended to. No I/O here: [`recv`](super::recv) feeds it
//! frames and [`send`](super::send) drains responses into it, so the fuzz target drives
//! it as the connection loop does.

use super::stream::{Closed, ClosedRing, Intake, Out, Phase, Stream};
use crate::body::{BodyError, End};
use crate::config::Limits;
use crate::h2::fields::Bounds;
use crate::h2::frame::{self, Code, DEFAULT_MAX_FRAME, DEFAULT_WINDOW};
use crate::h2::hpack::Decoder;
use crate::h2::meter::Meter;
use crate::worker::Worker;

/// SETTINGS_HEADER_TABLE_SIZE this side decodes with (the default, §6.5.2).
pub(crate) const TABLE_SIZE: usize = 4096;

/// A header block being assembled from HEADERS and CONTINUATION frames (§6.10).
pub(crate) struct Block {
    pub(crate) stream: u32,
    pub(crate) end_stream: bool,
    pub(crate) bytes: Vec<u8>,
}

/// One connection's protocol state.
pub(crate) struct State {
    /// Frames to write, appended as they are made; one write sends them all.
    pub(crate) out: Vec<u8>,
    pub(crate) decoder: Decoder,
    pub(crate) streams: Vec<Stream>,
    /// Streams removed while their handler ran: the connection drops those calls.
    /// Boxed, and dropped while idle (as is `block`): a pointer in every idle connection.
    #[allow(clippy::box_collection)]
    pub(crate) cancelled: Option<Box<Vec<u32>>>,
    pub(crate) closed: ClosedRing,
    pub(crate) block: Option<Box<Block>>,
    /// A stream with a body was just opened: [`receive`](Self::receive) stops after its
    /// HEADERS so that the connection asks the service how to take the body (see
    /// [`Service::body_mode`](crate::Service::body_mode)) before any of its DATA is applied.
    pub(crate) paused: bool,
    /// The client's preface has been read (§3.4).
    pub(crate) preface_read: bool,
    /// The client's first SETTINGS has arrived (§3.4).
    pub(crate) settings_seen: bool,
    /// The highest stream the peer has opened.
    pub(crate) last_id: u32,
    /// SETTINGS_INITIAL_WINDOW_SIZE the peer gave.
    pub(crate) peer_window: i64,
    /// SETTINGS_MAX_FRAME_SIZE the peer gave.
    pub(crate) peer_max_frame: usize,
    /// What the connection may still send (§6.9.1).
    pub(crate) send_window: i64,
    /// What the peer may still send on the connection before a WINDOW_UPDATE.
    pub(crate) recv_left: i64,
    pub(crate) recv_unacked: u32,
    /// GOAWAY sent: streams above `last_id` are no longer opened.
    pub(crate) goaway_sent: bool,
    /// A connection error: GOAWAY sent, nothing more is read.
    pub(crate) fatal: bool,
    /// The peer sent GOAWAY: no new streams come.
    pub(crate) peer_gone: bool,
    /// A response asked to close the connection once the streams are answered.
    pub(crate) close_after: bool,
    pub(crate) answered: u64,
    pub(crate) peer_resets: u64,
    pub(crate) local_resets: u32,
    pub(crate) meter: Meter,
    pub(crate) limits: Settings,
}

/// The worker's limits as the connection applies them.
#[derive(Clone, Copy)]
pub(crate) struct Settings {
    pub(crate) max_streams: u32,
    pub(crate) stream_window: u32,
    pub(crate) connection_window: u32,
    pub(crate) bounds: Bounds,
    pub(crate) max_body: usize,
    pub(crate) max_local_resets: u32,
    /// Streams the peer may reset unanswered, beyond one per stream answered
    /// ([`Limits::h2_max_pending_accept_reset_streams`]).
    pub(crate) reset_allowance: u32,
    /// Most bytes of a header block held while its CONTINUATIONs arrive.
    pub(crate) max_block: u32,
}

impl Settings {
    /// `connect`: extended CONNECT is offered (RFC 8441).
    pub(crate) fn new(limits: &Limits, connect: bool) -> Self {
        let list = limits.h2_max_header_list_size as usize;
        Settings {
            max_streams: limits.h2_max_concurrent_streams,
            stream_window: limits.h2_stream_window.min(frame::MAX_WINDOW as u32),
            connection_window: limits.h2_connection_window.min(frame::MAX_WINDOW as u32),
            bounds: Bounds { list, fields: limits.max_headers, connect_protocol: connect },
            max_body: limits.max_body_bytes,
            max_local_resets: limits.h2_max_local_error_reset_streams.min(u32::MAX as usize) as u32,
            reset_allowance: limits.h2_max_pending_accept_reset_streams.min(u32::MAX as usize) as u32,
            max_block: (list + DEFAULT_MAX_FRAME as usize).min(u32::MAX as usize) as u32,
        }
    }
}

impl State {
    /// A new connection's state, its SETTINGS and connection WINDOW_UPDATE already
    /// queued (the server preface, §3.4). `connect`: extended CONNECT is offered.
    pub(crate) fn new(limits: &Limits, connect: bool) -> Self {
        let limits = Settings::new(limits, connect);
        let decoder = Decoder::new(TABLE_SIZE);
        let mut out = Vec::with_capacity(64);
        let settings = [
            (0x3, limits.max_streams),
            (0x4, limits.stream_window),
            (0x6, limits.bounds.list as u32),
            // SETTINGS_ENABLE_CONNECT_PROTOCOL (RFC 8441 §3): sent only when offered.
            (0x8, 1),
            // SETTINGS_ENABLE_PUSH = 0: a server never pushes; said for clarity.
        ];
        frame::put_settings(&mut out, &settings[..if connect { 4 } else { 3 }]);
        let grow = limits.connection_window as i64 - DEFAULT_WINDOW;
        if grow > 0 {
            frame::put_window_update(&mut out, 0, grow as u32);
        }
        State {
            out,
            decoder,
            streams: Vec::new(),
            cancelled: None,
            closed: ClosedRing::default(),
            block: None,
            paused: false,
            preface_read: false,
            settings_seen: false,
            last_id: 0,
            peer_window: DEFAULT_WINDOW,
            peer_max_frame: DEFAULT_MAX_FRAME as usize,
            send_window: DEFAULT_WINDOW,
            recv_left: DEFAULT_WINDOW.max(limits.connection_window as i64),
            recv_unacked: 0,
            goaway_sent: false,
            fatal: false,
            peer_gone: false,
            close_after: false,
            answered: 0,
            peer_resets: 0,
            local_resets: 0,
            meter: Meter::default(),
            limits,
        }
    }

    /// The slab index of stream `id`.
    #[inline]
    pub(crate) fn find(&self, id: u32) -> Option<usize> {
        self.streams.iter().position(|s| s.id == id)
    }

    /// Removes the stream at `index`, giving its buffers and budget back.
    pub(crate) fn remove(&mut self, index: usize, how: Closed, worker: &Worker) {
        let mut stream = self.streams.swap_remove(index);
        self.closed.note(stream.id, how);
        if matches!(stream.phase, Phase::Called) {
            self.cancelled.get_or_insert_with(Box::default).push(stream.id);
        }
        if let Intake::Stream { body, .. } = &stream.intake {
            // A handler still reading learns the body will not come whole.
            body.finish(End::Failed(BodyError::Closed));
        }
        if let Phase::Sending(Out::Tunnel(tunnel)) = &stream.phase {
            // A socket on the stream finds it ended (RST_STREAM, GOAWAY, the close).
            tunnel.gone();
        }
        worker.unhold(&mut stream.held);
        worker.release(std::mem::take(&mut stream.bufs));
    }

    /// Ends every tunnel (RFC 8441 §5), the peer's input having ended: their sockets
    /// read the end and their writes fail, so their callbacks return.
    pub(crate) fn end_tunnels(&mut self, worker: &Worker) {
        let mut index = 0;
        while index < self.streams.len() {
            if matches!(self.streams[index].phase, Phase::Sending(Out::Tunnel(_))) {
                self.remove(index, Closed::ByPeer, worker);
            } else {
                index += 1;
            }
        }
    }

    /// Gives every stream's buffers and budget back, the connection closing.
    pub(crate) fn close(&mut self, worker: &Worker) {
        while !self.streams.is_empty() {
            self.remove(self.streams.len() - 1, Closed::ByUs, worker);
        }
    }

    /// Resets stream `id` for an error of its own (§5.4.2); too many such errors from
    /// one peer are a connection error.
    pub(crate) fn stream_error(&mut self, id: u32, code: Code, worker: &Worker) -> Result<(), Code> {
        frame::put_rst(&mut self.out, id, code);
        if let Some(index) = self.find(id) {
            self.remove(index, Closed::ByUs, worker);
        } else {
            self.closed.note(id, Closed::ByUs);
        }
        self.local_resets += 1;
        if self.local_resets > self.limits.max_local_resets {
            return Err(Code::ENHANCE_YOUR_CALM);
        }
        Ok(())
    }

    /// Sends GOAWAY with `code`, naming the last stream this side will answer.
    pub(crate) fn goaway(&mut self, code: Code) {
        if !self.goaway_sent {
            self.goaway_sent = true;
            frame::put_goaway(&mut self.out, self.last_id, code);
        }
    }

    /// Whether the peer resets far more streams than it lets be answered, or sends far
    /// more bytes than its requests account for.
    pub(crate) fn flooding(&self) -> bool {
        self.peer_resets > self.limits.reset_allowance as u64 + self.answered || self.meter.flooded()
    }

    /// Gives back connection-window capacity for `n` bytes received: DATA is taken as
    /// it arrives, so capacity is always released (a WINDOW_UPDATE once half is used).
    pub(crate) fn release_connection(&mut self, n: u32) {
        self.recv_unacked += n;
        if self.recv_unacked >= self.limits.connection_window / 2 {
            frame::put_window_update(&mut self.out, 0, self.recv_unacked);
            self.recv_left += self.recv_unacked as i64;
            self.recv_unacked = 0;
        }
    }

    /// Gives back the window of what each streamed body's handler has taken since the
    /// last look (a WINDOW_UPDATE once half the stream's window is taken): the peer sends
    /// a streamed body only as fast as the handler reads it.
    pub(crate) fn release_taken(&mut self) {
        let half = self.limits.stream_window / 2;
        for stream in &mut self.streams {
            let Intake::Stream { body, taken } = &mut stream.intake else { continue };
            let now = body.taken();
            if now == *taken {
                continue;
            }
            stream.recv_unacked += (now - *taken) as u32;
            *taken = now;
            if stream.recv_open && stream.recv_unacked >= half {
                frame::put_window_update(&mut self.out, stream.id, stream.recv_unacked);
                stream.recv_left += stream.recv_unacked as i64;
                stream.recv_unacked = 0;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_idle_connection_s_state_stays_small() {
        // Every idle HTTP/2 connection carries its `State` in its task for its whole life
        // (besides its socket's registration and its timer): 4.9 KiB per idle h2c
        // connection in all, against nginx's 1.6, before the rarely used parts were
        // boxed or freed while idle (528 bytes then; 320 with the closed streams one bit
        // each and the lists boxed). A field added here costs every idle connection.
        let size = std::mem::size_of::<State>();
        eprintln!("State: {size} bytes");
        assert!(size <= STATE_BOUND, "State grew to {size} bytes");
    }

    const STATE_BOUND: usize = 352;
}
