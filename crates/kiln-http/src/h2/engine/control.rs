//! The frames that steer the connection rather than carry a request (RFC 9113 §6.3-6.9):
//! PRIORITY (checked, then ignored), RST_STREAM, SETTINGS and WINDOW_UPDATE, applied to
//! the connection's [`State`].

use super::state::State;
use super::stream::Closed;
use crate::h2::frame::{self, Code, DEFAULT_MAX_FRAME, Head, MAX_WINDOW, flag, u31};
use crate::worker::Worker;

impl State {
    pub(super) fn priority(&mut self, head: Head, payload: &[u8], worker: &Worker) -> Result<(), Code> {
        if head.stream == 0 {
            return Err(Code::PROTOCOL_ERROR);
        }
        if payload.len() != 5 {
            return self.stream_error(head.stream, Code::FRAME_SIZE_ERROR, worker);
        }
        // §5.3.2: priority signals are otherwise ignored (RFC 9113 deprecates them).
        if u31(payload) == head.stream {
            return self.stream_error(head.stream, Code::PROTOCOL_ERROR, worker);
        }
        Ok(())
    }

    pub(super) fn rst_stream(&mut self, head: Head, payload: &[u8], worker: &Worker) -> Result<(), Code> {
        if head.stream == 0 || head.stream > self.last_id {
            // §6.4: on stream 0 or an idle stream, a PROTOCOL_ERROR.
            return Err(Code::PROTOCOL_ERROR);
        }
        if payload.len() != 4 {
            return Err(Code::FRAME_SIZE_ERROR);
        }
        if let Some(index) = self.find(head.stream) {
            self.peer_resets += 1;
            self.remove(index, Closed::ByPeer, worker);
        }
        Ok(())
    }

    pub(super) fn settings(&mut self, head: Head, payload: &[u8]) -> Result<(), Code> {
        if head.stream != 0 {
            return Err(Code::PROTOCOL_ERROR);
        }
        if head.has(flag::ACK) {
            return if payload.is_empty() { Ok(()) } else { Err(Code::FRAME_SIZE_ERROR) };
        }
        if payload.len() % 6 != 0 {
            return Err(Code::FRAME_SIZE_ERROR);
        }
        for pair in payload.chunks_exact(6) {
            let value = u32::from_be_bytes([pair[2], pair[3], pair[4], pair[5]]);
            match u16::from_be_bytes([pair[0], pair[1]]) {
                0x2 if value > 1 => return Err(Code::PROTOCOL_ERROR),
                0x4 => {
                    // §6.9.2: the change applies to every open stream's window.
                    if value as i64 > MAX_WINDOW {
                        return Err(Code::FLOW_CONTROL_ERROR);
                    }
                    let delta = value as i64 - self.peer_window;
                    self.peer_window = value as i64;
                    for stream in &mut self.streams {
                        stream.send_window += delta;
                        if stream.send_window > MAX_WINDOW {
                            return Err(Code::FLOW_CONTROL_ERROR);
                        }
                    }
                }
                0x5 => {
                    if !(DEFAULT_MAX_FRAME..=0xff_ffff).contains(&value) {
                        return Err(Code::PROTOCOL_ERROR);
                    }
                    self.peer_max_frame = value as usize;
                }
                // HEADER_TABLE_SIZE: the encoder keeps no table. The others do not
                // bind a server. Unknown settings are ignored (§6.5.2).
                _ => {}
            }
        }
        self.settings_seen = true;
        frame::put_settings_ack(&mut self.out);
        Ok(())
    }

    pub(super) fn window_update(&mut self, head: Head, payload: &[u8], worker: &Worker) -> Result<(), Code> {
        if payload.len() != 4 {
            return Err(Code::FRAME_SIZE_ERROR);
        }
        let increment = u31(payload) as i64;
        if head.stream == 0 {
            // §6.9: a zero increment is a PROTOCOL_ERROR; §6.9.1: beyond 2^31-1, a
            // FLOW_CONTROL_ERROR.
            if increment == 0 {
                return Err(Code::PROTOCOL_ERROR);
            }
            self.send_window += increment;
            return if self.send_window > MAX_WINDOW { Err(Code::FLOW_CONTROL_ERROR) } else { Ok(()) };
        }
        if head.stream > self.last_id {
            return Err(Code::PROTOCOL_ERROR);
        }
        let Some(index) = self.find(head.stream) else { return Ok(()) };
        if increment == 0 {
            return self.stream_error(head.stream, Code::PROTOCOL_ERROR, worker);
        }
        let stream = &mut self.streams[index];
        stream.send_window += increment;
        if stream.send_window > MAX_WINDOW {
            return self.stream_error(head.stream, Code::FLOW_CONTROL_ERROR, worker);
        }
        // The send clock is not stopped here: room on the stream while the connection's
        // window stays shut sends nothing, and the clock stops only once the stream can
        // send (the connection's `deadlines`).
        Ok(())
    }
}
