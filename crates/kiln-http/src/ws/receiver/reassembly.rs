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
        } else if matches!(self.msg_op, Some((_, false))) {
            if self.msg.len() as u64 + h.len > limit {
                // Refused before any of it is read.
                return Err((CloseCode::MESSAGE_TOO_BIG, "message too large"));
            }
            // Within the limit, so within `usize`.
            let len = h.len as usize;
            if self.msg.capacity() == 0 && h.fin {
                // A message in one frame: its buffer is made once, to size (or one
                // that carried a message sent since is reused).
                self.msg = spare::buffer(len);
            }
            self.reserve(len)?;
        }
        Ok(())
    }

    /// Room in the message for `more` bytes, charged to the worker's budget before it
    /// is allocated. The frame's length is known before its payload is read, so a
    /// message in one frame gets exactly its size; one in fragments grows by a
    /// quarter over what it needs (a fragment at a time would copy the message once
    /// per fragment; doubling would hold up to twice its size), never past the
    /// message limit nor the budget.
    fn reserve(&mut self, more: usize) -> Result<(), Fail> {
        let budget = self.shared.config.worker_message_bytes;
        let needed = self.msg.len() + more;
        let grown = grown(self.msg.len(), needed, self.shared.config.max_message);
        let room = if needed <= self.msg.capacity() {
            self.msg.capacity()
        } else if self.held.raise_to(budgeted(grown), budget) {
            grown
        } else {
            needed
        };
        if !self.held.raise_to(budgeted(room), budget) {
            return Err(OVER_BUDGET);
        }
        self.msg.reserve_exact(room - self.msg.len());
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
            let (max, room) = (
                self.shared.config.max_message,
                self.held.room(self.shared.config.worker_message_bytes, UNCHARGED_BYTES),
            );
            inflater.inflate(payload, &mut self.msg, max.min(room)).map_err(|e| inflate_fail(e, room < max))?;
            if !self.held.raise_to(budgeted(self.msg.capacity()), self.shared.config.worker_message_bytes) {
                return Err(OVER_BUDGET);
            }
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
                let (max, room) = (
                    self.shared.config.max_message,
                    self.held.room(self.shared.config.worker_message_bytes, UNCHARGED_BYTES),
                );
                inflater.finish(&mut self.msg, max.min(room)).map_err(|e| inflate_fail(e, room < max))?;
            }
        }
        let mut body = std::mem::take(&mut self.msg);
        // The app owns the message now: it leaves the budget, and a large one does not
        // keep room it will never fill (grown in fragments, it may have a quarter more
        // than its size; a small one keeps the spare buffer it may have been given).
        self.held.release();
        if body.capacity() > UNCHARGED_BYTES && body.capacity() - body.len() > body.len() / 8 {
            body.shrink_to_fit();
        }
        if op == OpCode::Binary {
            return Ok(Message::Binary(body));
        }
        self.utf8 = Utf8Validator::default();
        String::from_utf8(body).map(Message::Text).map_err(|_| (CloseCode::INVALID_PAYLOAD, "text not UTF-8"))
    }
}

/// The room to give a message of `len` bytes that needs `needed`: a quarter more,
/// when it grows from a fragment or an inflated piece whose followers are unknown,
/// within `limit`.
fn grown(len: usize, needed: usize, limit: usize) -> usize {
    if len == 0 { needed } else { (needed + needed / 4).min(limit).max(needed) }
}

/// A message up to this size is not charged to the worker's budget: it costs no more
/// than the read buffer every reading socket borrows, and a socket that sends small
/// messages (a chat line, a live page's event) must go on while others hold the
/// budget with large ones.
const UNCHARGED_BYTES: usize = 64 * 1024;

/// What a message with room for `room` bytes holds of the worker's budget.
fn budgeted(room: usize) -> usize {
    if room <= UNCHARGED_BYTES { 0 } else { room }
}

/// The worker's sockets hold their budget's worth of messages already: this one is
/// failed, the others go on.
const OVER_BUDGET: Fail = (CloseCode::MESSAGE_TOO_BIG, "server busy: too many large messages");

/// `budget_bound`: the inflater's limit was the worker's budget, not the message limit.
fn inflate_fail(e: InflateError, budget_bound: bool) -> Fail {
    match e {
        InflateError::TooBig if budget_bound => OVER_BUDGET,
        InflateError::TooBig => (CloseCode::MESSAGE_TOO_BIG, "message too large"),
        InflateError::Corrupt => (CloseCode::INVALID_PAYLOAD, "bad compressed data"),
    }
}
