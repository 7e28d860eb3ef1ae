//! Frames from the peer, parsed in place from the read buffer and applied to the
//! connection's [`State`] (RFC 9113 §6): a connection error comes back as the code
//! the GOAWAY carries; a stream error resets only its stream.

use super::state::{Block, State};
use super::stream::{Closed, Intake, Phase, Stream};
use crate::body::BodyLimit;
use crate::body::End;
use crate::h2::fields::{self, Bad, Facts};
use crate::h2::frame::{self, Code, DEFAULT_MAX_FRAME, HEADER_LEN, Head, flag, kind};
use crate::h2::preface::PREFACE;
use crate::rejection::Rejection;
use crate::worker::Worker;
use http::StatusCode;

const TOO_LARGE: Rejection = Rejection { status: StatusCode::PAYLOAD_TOO_LARGE, reason: "request body too large" };
const HEAD_TOO_LARGE: Rejection =
    Rejection { status: StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE, reason: "request header fields too large" };
const OVER_BUDGET: Rejection =
    Rejection { status: StatusCode::SERVICE_UNAVAILABLE, reason: "server busy: too much buffered, retry later" };

impl State {
    /// Applies every whole frame at the start of `input`; how many bytes were used.
    pub(crate) fn receive(&mut self, input: &[u8], worker: &Worker) -> Result<usize, Code> {
        let mut used = 0;
        if !self.preface_read {
            // §3.4: the preface is a fixed octet string; anything else is a
            // connection error of type PROTOCOL_ERROR.
            let n = input.len().min(PREFACE.len());
            if input[..n] != PREFACE[..n] {
                return Err(Code::PROTOCOL_ERROR);
            }
            if n < PREFACE.len() {
                return Ok(0);
            }
            self.preface_read = true;
            used = PREFACE.len();
        }
        while let Some(head) = Head::parse(&input[used..]) {
            // §4.2: a frame larger than SETTINGS_MAX_FRAME_SIZE is a FRAME_SIZE_ERROR
            // (a connection error: a too-large frame may be any kind).
            if head.len > DEFAULT_MAX_FRAME {
                return Err(Code::FRAME_SIZE_ERROR);
            }
            let end = used + HEADER_LEN + head.len as usize;
            let Some(payload) = input.get(used + HEADER_LEN..end) else { break };
            used = end;
            self.frame(head, payload, worker)?;
            if self.flooding() {
                return Err(Code::ENHANCE_YOUR_CALM);
            }
            if self.paused {
                break;
            }
        }
        Ok(used)
    }

    fn frame(&mut self, head: Head, payload: &[u8], worker: &Worker) -> Result<(), Code> {
        // §3.4: the client's preface goes on with a SETTINGS frame.
        if !self.settings_seen && head.kind != kind::SETTINGS {
            return Err(Code::PROTOCOL_ERROR);
        }
        // §6.10: a header block is followed only by CONTINUATIONs of its own stream.
        if let Some(block) = &self.block {
            if head.kind != kind::CONTINUATION || head.stream != block.stream {
                return Err(Code::PROTOCOL_ERROR);
            }
        }
        match head.kind {
            kind::DATA => self.data(head, payload, worker),
            kind::HEADERS => self.headers(head, payload, worker),
            kind::PRIORITY => self.priority(head, payload, worker),
            kind::RST_STREAM => self.rst_stream(head, payload, worker),
            kind::SETTINGS => self.settings(head, payload),
            // §8.4: a client cannot push.
            kind::PUSH_PROMISE => Err(Code::PROTOCOL_ERROR),
            kind::PING => {
                if head.stream != 0 {
                    return Err(Code::PROTOCOL_ERROR);
                }
                if payload.len() != 8 {
                    return Err(Code::FRAME_SIZE_ERROR);
                }
                if !head.has(flag::ACK) {
                    frame::put_ping_ack(&mut self.out, payload);
                }
                Ok(())
            }
            kind::GOAWAY => {
                if head.stream != 0 {
                    return Err(Code::PROTOCOL_ERROR);
                }
                if payload.len() < 8 {
                    return Err(Code::FRAME_SIZE_ERROR);
                }
                self.peer_gone = true;
                Ok(())
            }
            kind::WINDOW_UPDATE => self.window_update(head, payload, worker),
            kind::CONTINUATION => self.continuation(head, payload, worker),
            // §5.5: frames of unknown types are ignored.
            _ => Ok(()),
        }
    }

    fn data(&mut self, head: Head, payload: &[u8], worker: &Worker) -> Result<(), Code> {
        if head.stream == 0 {
            return Err(Code::PROTOCOL_ERROR);
        }
        // §6.9.1: the whole frame, padding included, counts against the windows.
        let len = payload.len() as i64;
        if len > self.recv_left {
            return Err(Code::FLOW_CONTROL_ERROR);
        }
        self.recv_left -= len;
        self.release_connection(len as u32);
        let data = frame::unpad(&head, payload)?;
        let Some(index) = self.find(head.stream) else {
            return match self.closed.find(head.stream) {
                _ if head.stream > self.last_id => Err(Code::PROTOCOL_ERROR),
                Some(Closed::ByUs) => Ok(()),
                _ if self.goaway_sent => Ok(()),
                _ => self.stream_error(head.stream, Code::STREAM_CLOSED, worker),
            };
        };
        let stream = &mut self.streams[index];
        // §5.1: DATA on a half-closed (remote) stream is a STREAM_CLOSED error.
        if !stream.recv_open {
            return self.stream_error(head.stream, Code::STREAM_CLOSED, worker);
        }
        if len > stream.recv_left {
            return self.stream_error(head.stream, Code::FLOW_CONTROL_ERROR, worker);
        }
        stream.recv_left -= len;
        stream.received += data.len() as u64;
        if stream.facts.content_length.is_some_and(|n| stream.received > n) {
            return self.stream_error(head.stream, Code::PROTOCOL_ERROR, worker);
        }
        if let Intake::Stream { body, .. } = &stream.intake {
            // Handed to the handler; the window comes back only as it takes the bytes
            // (`release_taken`), padding at once. Data is progress: the stall clock
            // restarts.
            body.push(data);
            self.meter.payload(data.len());
            // A tunnel's clock while it sends is its window's (`deadlines`), which
            // what it receives does not move.
            if !matches!(stream.phase, Phase::Sending(_)) {
                stream.deadline = None;
            }
            stream.recv_unacked += (len as usize - data.len()) as u32;
            if head.has(flag::END_STREAM) {
                return self.end_of_request(index, worker);
            }
            return Ok(());
        }
        if matches!(stream.intake, Intake::Dropped) {
            // Answered already: nothing more is kept.
            self.meter.payload(data.len());
        } else if stream.refused.is_none() {
            let body = &mut stream.bufs.chunked_body;
            if body.len() + data.len() > self.limits.max_body {
                stream.refused = Some(TOO_LARGE);
                stream.over_limit = Some(BodyLimit::Whole(self.limits.max_body as u64));
                stream.ready = true;
            } else if !worker.hold(&mut stream.held, body.capacity().max(body.len() + data.len())) {
                stream.refused = Some(OVER_BUDGET);
                stream.ready = true;
            } else {
                body.extend_from_slice(data);
                self.meter.payload(data.len());
            }
        }
        // The body is taken as it arrives: the stream's capacity goes back at once, so
        // the body limit, not the window, bounds what a stream may send.
        stream.recv_unacked += len as u32;
        if stream.recv_unacked >= self.limits.stream_window / 2 && !head.has(flag::END_STREAM) {
            frame::put_window_update(&mut self.out, stream.id, stream.recv_unacked);
            stream.recv_left += stream.recv_unacked as i64;
            stream.recv_unacked = 0;
        }
        if head.has(flag::END_STREAM) {
            return self.end_of_request(index, worker);
        }
        Ok(())
    }

    /// The peer's END_STREAM on the stream at `index`: the request is whole.
    fn end_of_request(&mut self, index: usize, worker: &Worker) -> Result<(), Code> {
        let stream = &mut self.streams[index];
        stream.recv_open = false;
        stream.deadline = None;
        // §8.1.1: a content-length that the DATA frames do not add up to is malformed.
        if stream.facts.content_length.is_some_and(|n| n != stream.received) {
            let id = stream.id;
            return self.stream_error(id, Code::PROTOCOL_ERROR, worker);
        }
        match &stream.intake {
            // The service was called already: the handler learns the body is whole.
            Intake::Stream { body, .. } => body.finish(End::Complete),
            Intake::Dropped => {}
            Intake::Buffer => stream.ready = true,
        }
        Ok(())
    }

    fn headers(&mut self, head: Head, payload: &[u8], worker: &Worker) -> Result<(), Code> {
        // §5.1.1: streams a client opens have odd identifiers.
        if head.stream == 0 || head.stream % 2 == 0 {
            return Err(Code::PROTOCOL_ERROR);
        }
        let mut block = frame::unpad(&head, payload)?;
        let mut self_dependent = false;
        if head.has(flag::PRIORITY) {
            let Some(dependency) = frame::priority_dependency(block) else { return Err(Code::FRAME_SIZE_ERROR) };
            block = &block[5..];
            // §5.3.1: "A stream cannot depend on itself." The block is still decoded:
            // the HPACK state is the connection's.
            self_dependent = dependency == head.stream;
            if self_dependent && !head.has(flag::END_HEADERS) {
                return Err(Code::PROTOCOL_ERROR);
            }
        }
        if let Some(index) = self.find(head.stream) {
            // Trailers (§8.1) end the request; on a half-closed stream, STREAM_CLOSED.
            if !self.streams[index].recv_open {
                return Err(Code::STREAM_CLOSED);
            }
        } else if head.stream <= self.last_id {
            // §5.1.1: a new stream's identifier must exceed every earlier one; a
            // closed stream cannot be reopened (§5.1).
            return Err(if self.closed.find(head.stream).is_some() {
                Code::STREAM_CLOSED
            } else {
                Code::PROTOCOL_ERROR
            });
        }
        let end_stream = head.has(flag::END_STREAM);
        if head.has(flag::END_HEADERS) {
            self.header_block(head.stream, end_stream, block, worker)?;
            if self_dependent && self.find(head.stream).is_some() {
                return self.stream_error(head.stream, Code::PROTOCOL_ERROR, worker);
            }
            return Ok(());
        }
        if block.len() > self.limits.max_block as usize {
            return Err(Code::ENHANCE_YOUR_CALM);
        }
        self.block = Some(Box::new(Block { stream: head.stream, end_stream, bytes: block.to_vec() }));
        Ok(())
    }

    fn continuation(&mut self, head: Head, payload: &[u8], worker: &Worker) -> Result<(), Code> {
        // §6.10: a CONTINUATION must follow a header block still open on its stream.
        let Some(block) = self.block.as_mut() else { return Err(Code::PROTOCOL_ERROR) };
        if block.bytes.len() + payload.len() > self.limits.max_block as usize {
            // A block that never ends (the CONTINUATION flood, 2024) is cut off.
            return Err(Code::ENHANCE_YOUR_CALM);
        }
        block.bytes.extend_from_slice(payload);
        if !head.has(flag::END_HEADERS) {
            return Ok(());
        }
        let Some(block) = self.block.take() else { return Ok(()) };
        self.header_block(block.stream, block.end_stream, &block.bytes, worker)
    }

    /// A whole header block: a new stream's request head, or a stream's trailers.
    fn header_block(&mut self, id: u32, end_stream: bool, block: &[u8], worker: &Worker) -> Result<(), Code> {
        let bounds = self.limits.bounds;
        if let Some(index) = self.find(id) {
            let checked = fields::trailers(&mut self.decoder, block, bounds);
            return match checked {
                Err(Bad::Compression) => Err(Code::COMPRESSION_ERROR),
                Err(Bad::Bomb) => Err(Code::ENHANCE_YOUR_CALM),
                // §8.1: trailers end the stream; without END_STREAM they are malformed.
                Err(_) => self.stream_error(id, Code::PROTOCOL_ERROR, worker),
                Ok(()) if !end_stream => self.stream_error(id, Code::PROTOCOL_ERROR, worker),
                Ok(()) => self.end_of_request(index, worker),
            };
        }
        self.last_id = id;
        let refuse = self.goaway_sent || self.streams.len() >= self.limits.max_streams as usize;
        let mut bufs = worker.acquire();
        let decoded = {
            let b = &mut *bufs;
            fields::request(&mut self.decoder, block, &mut b.read, &mut b.head, bounds)
        };
        let (facts, refused) = match decoded {
            Err(Bad::Compression) => return Err(Code::COMPRESSION_ERROR),
            Err(Bad::Bomb) => return Err(Code::ENHANCE_YOUR_CALM),
            _ if refuse => {
                worker.release(bufs);
                // §5.1.2: a stream beyond the limit is refused; past GOAWAY, ignored.
                if self.goaway_sent {
                    return Ok(());
                }
                frame::put_rst(&mut self.out, id, Code::REFUSED_STREAM);
                self.closed.note(id, Closed::ByUs);
                return Ok(());
            }
            Err(Bad::Malformed) => {
                worker.release(bufs);
                return self.stream_error(id, Code::PROTOCOL_ERROR, worker);
            }
            Err(Bad::TooLarge) => (Facts::default(), Some(HEAD_TOO_LARGE)),
            Ok(facts) => {
                self.meter.payload(bufs.read.len());
                (facts, None)
            }
        };
        // §8.1.1: a request that ends with its head has no body to match a length.
        if end_stream && facts.content_length.is_some_and(|n| n > 0) {
            worker.release(bufs);
            return self.stream_error(id, Code::PROTOCOL_ERROR, worker);
        }
        self.streams.push(Stream {
            id,
            recv_open: !end_stream,
            send_window: self.peer_window,
            recv_left: self.limits.stream_window as i64,
            recv_unacked: 0,
            bufs,
            facts,
            received: 0,
            phase: Phase::Receiving,
            ready: end_stream || refused.is_some(),
            fresh: refused.is_none(),
            refused,
            over_limit: None,
            deadline: None,
            held: 0,
            intake: Intake::Buffer,
        });
        // Its body mode is asked before its DATA is applied.
        self.paused = !end_stream && refused.is_none();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opened(worker: &Worker) -> State {
        let mut state = State::new(&worker.limits, true);
        let mut input = PREFACE.to_vec();
        frame::put_settings(&mut input, &[]);
        assert_eq!(state.receive(&input, worker), Ok(input.len()));
        state.out.clear();
        state
    }

    #[test]
    fn a_stream_depending_on_itself_is_reset_and_its_block_still_indexed() {
        let worker = Worker::new(crate::config::Limits::default());
        let mut state = opened(&worker);
        // Stream 1 depends on itself and puts `:path /x` into the dynamic table (62).
        let mut block = vec![0, 0, 0, 1, 16, 0x82, 0x86, 0x44, 2, b'/', b'x'];
        let mut input = Vec::new();
        frame::put_head(&mut input, block.len(), kind::HEADERS, 0x25, 1);
        input.append(&mut block);
        // Stream 3 names the entry.
        let block = [0x82, 0x86, 0xbe];
        frame::put_head(&mut input, block.len(), kind::HEADERS, 0x05, 3);
        input.extend_from_slice(&block);
        assert_eq!(state.receive(&input, &worker), Ok(input.len()));
        let rst = Head::parse(&state.out).unwrap();
        assert_eq!((rst.kind, rst.stream), (kind::RST_STREAM, 1));
        let stream = &state.streams[state.find(3).expect("stream 3 open")];
        let b = &*stream.bufs;
        assert_eq!(&b.read[b.head.target.start as usize..b.head.target.end as usize], b"/x");
        assert!(stream.ready);
    }
}
