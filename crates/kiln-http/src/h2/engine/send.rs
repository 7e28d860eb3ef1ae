//! Responses written straight into the connection's write buffer: the head as one
//! HEADERS frame (CONTINUATIONs past the peer's frame size), the body as DATA frames in
//! the same buffer, as far as the connection's and the stream's windows allow (RFC 9113
//! §5.2, §6.9); the rest waits for WINDOW_UPDATEs, a streamed body's next chunk asked
//! for only once the last has gone.

use std::mem;
use std::os::unix::fs::FileExt;
use std::task::{Context, Poll};

use http::StatusCode;

use super::state::State;
use super::stream::{Closed, Out, Phase};
use super::tunnel::{Take, TunnelOut};
use crate::h2::frame::{self, Code, HEADER_LEN, flag, kind};
use crate::h2::response_head::{self, Common};
use crate::response::Body;
use crate::worker::Worker;

/// A buffered body up to this size is sent from the stream's buffer without counting
/// against the worker's budget; a larger one waits for the window in memory, and is
/// charged as HTTP/1.1's is.
const FREE_BODY_MAX: usize = 16 * 1024;
/// Most bytes of a file read for one DATA frame batch.
const FILE_PIECE: usize = 64 * 1024;
/// The write buffer past which no more body is added until it is written out.
pub(crate) const OUT_HIGH: usize = 256 * 1024;

const OVER_BUDGET: (StatusCode, &str) =
    (StatusCode::SERVICE_UNAVAILABLE, "server busy: too much buffered, retry later");
const NO_INTERIM: (StatusCode, &str) =
    (StatusCode::INTERNAL_SERVER_ERROR, "an interim response cannot end an HTTP/2 stream");

impl State {
    /// Sends the head of the response in the stream at `index`'s buffers, then as much
    /// of its body as the windows allow; or, for a `tunnel`, the head alone, the stream
    /// left open for what the tunnel's writer writes (RFC 8441 §5).
    pub(crate) fn respond(
        &mut self,
        index: usize,
        worker: &Worker,
        common: &Common<'_>,
        tunnel: Option<TunnelOut>,
        cx: &mut Context<'_>,
    ) {
        let stream = &mut self.streams[index];
        let chunked_capacity = stream.bufs.chunked_body.capacity();
        let res = &mut stream.bufs.res;
        if res.status.is_informational() {
            crate::rejection::error_response(res, NO_INTERIM.0, NO_INTERIM.1);
        }
        let want = res.buffer.capacity() + chunked_capacity;
        if res.buffer.len() > FREE_BODY_MAX && !worker.hold(&mut stream.held, want) {
            res.buffer = Vec::new();
            crate::rejection::error_response(res, OVER_BUDGET.0, OVER_BUDGET.1);
        }
        if res.close {
            self.close_after = true;
        }
        let code = res.status.as_u16();
        let bodiless = code == 204 || code == 304;
        // A tunnel's `2xx` has no length (RFC 8441 §5, RFC 9110 §8.6: none for a
        // `2xx` to CONNECT) and no end.
        let len = if bodiless || tunnel.is_some() { None } else { res.body_len() };
        let empty = tunnel.is_none() && (stream.facts.is_head || bodiless || len == Some(0));
        let id = stream.id;
        // The head is encoded in place behind a frame header patched once its length is
        // known; a head larger than the peer's frames is moved out and split.
        let start = self.out.len();
        frame::put_head(&mut self.out, 0, kind::HEADERS, 0, id);
        response_head::encode(&mut self.out, res, len, common, &mut worker.h2_heads.borrow_mut());
        let block_len = self.out.len() - start - HEADER_LEN;
        let end = if empty { flag::END_STREAM } else { 0 };
        if block_len <= self.peer_max_frame {
            let l = (block_len as u32).to_be_bytes();
            self.out[start..start + 5].copy_from_slice(&[l[1], l[2], l[3], kind::HEADERS, end | flag::END_HEADERS]);
        } else {
            let block = self.out.split_off(start + HEADER_LEN);
            self.out.truncate(start);
            frame::put_header_block(&mut self.out, id, &block, empty, self.peer_max_frame);
        }
        let body = mem::replace(&mut res.body, Body::Buffer);
        if empty {
            return self.sent(index, worker);
        }
        let out = match (tunnel, body) {
            (Some(tunnel), _) => Out::Tunnel(tunnel),
            (None, Body::Buffer) => Out::Buffer { at: 0 },
            (None, Body::Static(bytes)) => Out::Static(bytes),
            (None, Body::Bytes(bytes)) => Out::Bytes(bytes),
            (None, Body::File { file, offset, len }) => Out::File { file, offset, len },
            (None, Body::Stream(body)) => Out::Stream { body, chunk: bytes::Bytes::new() },
        };
        stream.phase = Phase::Sending(out);
        self.pump_one(index, worker, cx);
    }

    /// Sends an early `103` head on stream `id` (RFC 8297).
    pub(crate) fn early_hints(&mut self, id: u32, lines: &[u8]) {
        let start = self.out.len();
        frame::put_head(&mut self.out, 0, kind::HEADERS, flag::END_HEADERS, id);
        response_head::early_hints(&mut self.out, lines);
        let block_len = self.out.len() - start - HEADER_LEN;
        if block_len <= self.peer_max_frame {
            let l = (block_len as u32).to_be_bytes();
            self.out[start..start + 3].copy_from_slice(&l[1..]);
        } else {
            self.out.truncate(start);
        }
    }

    /// Sends what the windows allow of every stream's body.
    pub(crate) fn pump(&mut self, worker: &Worker, cx: &mut Context<'_>) {
        let mut index = 0;
        while index < self.streams.len() {
            let before = self.streams.len();
            if matches!(self.streams[index].phase, Phase::Sending(_)) {
                self.pump_one(index, worker, cx);
            }
            // A stream that ended was swapped out: the one now at `index` is new here.
            if self.streams.len() == before {
                index += 1;
            }
        }
    }

    /// Sends what the windows allow of the body of the stream at `index`.
    fn pump_one(&mut self, index: usize, worker: &Worker, cx: &mut Context<'_>) {
        loop {
            if self.out.len() >= OUT_HIGH {
                return;
            }
            let stream = &mut self.streams[index];
            let room = self.send_window.min(stream.send_window).min(self.peer_max_frame as i64).max(0) as usize;
            let Phase::Sending(out) = &mut stream.phase else { return };
            let id = stream.id;
            // Nothing goes through a shut window, not even an empty frame; a streamed
            // body's end (or a tunnel's) is the one frame that needs no room.
            if room == 0
                && !matches!(out, Out::Stream { chunk, .. } if chunk.is_empty())
                && !matches!(out, Out::Tunnel(_))
            {
                return;
            }
            // (bytes sent, the body is done)
            let (sent, done) = match out {
                Out::Buffer { at } => {
                    let rest = &stream.bufs.res.buffer[*at..];
                    let n = rest.len().min(room);
                    frame::put_data(&mut self.out, id, &rest[..n], n == rest.len());
                    *at += n;
                    (n, n == rest.len())
                }
                Out::Static(rest) => {
                    let n = rest.len().min(room);
                    frame::put_data(&mut self.out, id, &rest[..n], n == rest.len());
                    *rest = &rest[n..];
                    (n, rest.is_empty())
                }
                Out::Bytes(rest) => {
                    let n = rest.len().min(room);
                    let piece = rest.split_to(n);
                    frame::put_data(&mut self.out, id, &piece, rest.is_empty());
                    (n, rest.is_empty())
                }
                Out::File { file, offset, len } => {
                    let want = (*len).min(room.min(FILE_PIECE) as u64) as usize;
                    if want == 0 && *len > 0 {
                        (0, false)
                    } else {
                        let start = self.out.len();
                        self.out.resize(start + HEADER_LEN + want, 0);
                        let read = match file.read_at(&mut self.out[start + HEADER_LEN..], *offset) {
                            Ok(n) if n > 0 || want == 0 => n,
                            // The file shrank or failed: the part sent must not pass for
                            // the whole (§8.1: a reset stream's response is incomplete).
                            _ => {
                                self.out.truncate(start);
                                return self.fail(index, Code::INTERNAL_ERROR, worker);
                            }
                        };
                        self.out.truncate(start + HEADER_LEN + read);
                        *offset += read as u64;
                        *len -= read as u64;
                        let end = if *len == 0 { flag::END_STREAM } else { 0 };
                        let mut head = Vec::with_capacity(HEADER_LEN);
                        frame::put_head(&mut head, read, kind::DATA, end, id);
                        self.out[start..start + HEADER_LEN].copy_from_slice(&head);
                        (read, *len == 0)
                    }
                }
                Out::Tunnel(tunnel) => match tunnel.take(room, cx) {
                    Take::Bytes(piece) => {
                        frame::put_data(&mut self.out, id, &piece, false);
                        (piece.len(), false)
                    }
                    Take::End => {
                        frame::put_data(&mut self.out, id, &[], true);
                        (0, true)
                    }
                    Take::Wait => return,
                },
                Out::Stream { body, chunk } => {
                    if chunk.is_empty() {
                        // The next chunk is asked for only once there is room for it,
                        // so a reader that takes nothing stops the producer.
                        if room == 0 {
                            return;
                        }
                        match body.as_mut().poll_next(cx) {
                            Poll::Ready(Some(Ok(next))) => {
                                *chunk = next;
                                continue;
                            }
                            Poll::Ready(None) => {
                                frame::put_data(&mut self.out, id, &[], true);
                                (0, true)
                            }
                            Poll::Ready(Some(Err(_))) => return self.fail(index, Code::INTERNAL_ERROR, worker),
                            Poll::Pending => return,
                        }
                    } else {
                        let n = chunk.len().min(room);
                        let piece = chunk.split_to(n);
                        frame::put_data(&mut self.out, id, &piece, false);
                        (n, false)
                    }
                }
            };
            self.send_window -= sent as i64;
            stream.send_window -= sent as i64;
            self.meter.payload(sent);
            if done {
                return self.sent(index, worker);
            }
            if sent == 0 {
                // Waiting on a window (a stall the engine's timer bounds).
                return;
            }
        }
    }

    /// The response's last frame is queued: the stream is done, or, while the peer's
    /// side is still open, it is reset with NO_ERROR (§8.1: a server may answer before
    /// the request is whole and then ask the client to stop sending it).
    fn sent(&mut self, index: usize, worker: &Worker) {
        let stream = &self.streams[index];
        self.answered += 1;
        if stream.recv_open {
            frame::put_rst(&mut self.out, stream.id, Code::NO_ERROR);
            self.remove(index, Closed::ByUs, worker);
        } else {
            self.remove(index, Closed::ByPeer, worker);
        }
    }

    /// Ends a stream whose body failed midway with RST_STREAM.
    fn fail(&mut self, index: usize, code: Code, worker: &Worker) {
        frame::put_rst(&mut self.out, self.streams[index].id, code);
        self.remove(index, Closed::ByUs, worker);
    }

    /// Resets the stream at `index`, whose peer left its window shut too long.
    pub(crate) fn stalled(&mut self, index: usize, worker: &Worker) {
        self.fail(index, Code::CANCEL, worker);
    }
}
