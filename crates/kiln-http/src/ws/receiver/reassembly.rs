//! Frames into messages: headers checked against the message in progress (RFC 6455
//! §5.4), payload unmasked as it is copied, fragments reassembled, compressed
//! messages inflated (RFC 7692), text checked to be UTF-8 (§8.1).

use super::{Fail, WsReceiver};
use crate::ws::close::CloseCode;
use crate::ws::deflate::InflateError;
use crate::ws::frame::{self, FrameError, Header, OpCode};
use crate::ws::message::Message;
use crate::ws::spare;
use crate::ws::utf8::Utf8Validator;

/// What the buffered bytes gave.
pub(super) enum Event {
    Message(Message),
    /// A control frame, its payload in `control`.
    Control(OpCode),
}

impl WsReceiver {
    /// Parses what is buffered into the next event, if it holds one.
    pub(super) fn next_event(&mut self) -> Result<Option<Event>, Fail> {
        loop {
            let (header, read) = match self.frame {
                Some(f) => f,
                None => {
                    let deflate = self.inflater.is_some();
                    let max_frame = self.shared.config.max_frame as u64;
                    let Some((h, n)) = frame::parse_header(self.rbuf.bytes(), deflate, max_frame)
                        .map_err(|FrameError { code, reason }| (code, reason))?
                    else {
                        return Ok(None);
                    };
                    self.rbuf.consume(n);
                    // Once closing, data frames are skipped unchecked: only the peer's
                    // close frame matters now.
                    if self.closing.is_none() || h.opcode.is_control() {
                        self.start_frame(&h)?;
                    }
                    (h, 0)
                }
            };
            let avail = (self.rbuf.bytes().len() as u64).min(header.len - read) as usize;
            let complete = read + avail as u64 == header.len;
            if header.opcode.is_control() {
                let payload = &mut self.rbuf.bytes_mut()[..avail];
                frame::apply_mask(payload, header.mask, read);
                self.control.extend_from_slice(payload);
            } else if self.closing.is_none() {
                if self.msg.capacity() == 0 && header.fin {
                    // A message in one frame: its buffer is made once, to size (or
                    // one that carried a message sent since is reused).
                    self.msg = spare::buffer(header.len.min(self.shared.config.max_message as u64) as usize);
                }
                self.take_payload(avail, &header, read, header.fin && complete)?;
            }
            let read = read + avail as u64;
            self.rbuf.consume(avail);
            if !complete {
                self.frame = Some((header, read));
                return Ok(None);
            }
            self.frame = None;
            if header.opcode.is_control() {
                return Ok(Some(Event::Control(header.opcode)));
            }
            if header.fin && self.closing.is_none() {
                return self.end_message().map(|m| Some(Event::Message(m)));
            }
        }
    }

    /// Checks a new frame against the message in progress (RFC 6455 §5.4).
    pub(super) fn start_frame(&mut self, h: &Header) -> Result<(), Fail> {
        let limit = self.shared.config.max_message as u64;
        match (h.opcode, self.msg_op) {
            (OpCode::Text | OpCode::Binary, None) => {
                self.msg_op = Some((h.opcode, h.rsv1));
                self.msg.clear();
                self.checked = 0;
            }
            (OpCode::Text | OpCode::Binary, Some(_)) => {
                return Err((CloseCode::PROTOCOL_ERROR, "expected a continuation"));
            }
            (OpCode::Continuation, None) => return Err((CloseCode::PROTOCOL_ERROR, "continuation of nothing")),
            // RFC 7692 §6.1: only a message's first frame says it is compressed.
            (OpCode::Continuation, Some(_)) if h.rsv1 => {
                return Err((CloseCode::PROTOCOL_ERROR, "RSV1 on a continuation"));
            }
            _ => {}
        }
        if h.opcode.is_control() {
            self.control.clear();
        } else if matches!(self.msg_op, Some((_, false))) && self.msg.len() as u64 + h.len > limit {
            // Refused before any of it is read.
            return Err((CloseCode::MESSAGE_TOO_BIG, "message too large"));
        }
        Ok(())
    }

    /// Adds the first `len` unparsed bytes, the payload of `header` from its byte
    /// `offset`, unmasked, to the message; `last`: they end it.
    pub(super) fn take_payload(&mut self, len: usize, header: &Header, offset: u64, last: bool) -> Result<(), Fail> {
        let Some((op, compressed)) = self.msg_op else { return Ok(()) };
        if compressed {
            let payload = &mut self.rbuf.bytes_mut()[..len];
            frame::apply_mask(payload, header.mask, offset);
            let inflater = self.inflater.as_mut().ok_or((CloseCode::PROTOCOL_ERROR, "RSV1 without deflate"))?;
            inflater.inflate(payload, &mut self.msg, self.shared.config.max_message).map_err(inflate_fail)?;
        } else {
            // Unmasked as it is copied: one pass over the payload, not two.
            frame::unmask_into(&mut self.msg, &self.rbuf.bytes()[..len], header.mask, offset);
        }
        // A message that arrives whole is checked once, at its end; one that arrives in
        // pieces is checked as they come, so bad text fails at once (§8.1).
        if op == OpCode::Text && !(last && self.checked == 0) {
            self.utf8.feed(&self.msg[self.checked..]).map_err(|_| (CloseCode::INVALID_PAYLOAD, "text not UTF-8"))?;
            self.checked = self.msg.len();
        }
        Ok(())
    }

    pub(super) fn end_message(&mut self) -> Result<Message, Fail> {
        let Some((op, compressed)) = self.msg_op.take() else {
            return Err((CloseCode::PROTOCOL_ERROR, "continuation of nothing"));
        };
        if compressed {
            if let Some(inflater) = &mut self.inflater {
                inflater.finish(&mut self.msg, self.shared.config.max_message).map_err(inflate_fail)?;
            }
        }
        let body = std::mem::take(&mut self.msg);
        if op == OpCode::Binary {
            return Ok(Message::Binary(body));
        }
        self.utf8 = Utf8Validator::default();
        String::from_utf8(body).map(Message::Text).map_err(|_| (CloseCode::INVALID_PAYLOAD, "text not UTF-8"))
    }
}

fn inflate_fail(e: InflateError) -> Fail {
    match e {
        InflateError::TooBig => (CloseCode::MESSAGE_TOO_BIG, "message too large"),
        InflateError::Corrupt => (CloseCode::INVALID_PAYLOAD, "bad compressed data"),
    }
}
