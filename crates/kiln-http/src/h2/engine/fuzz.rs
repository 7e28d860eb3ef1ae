//! The frame layer driven without a socket, for the `h2_frames` fuzz target and its
//! seed tests: arbitrary bytes after the preface go through [`State::receive`] in two
//! pieces, every request made whole is answered, and what the engine writes must be a
//! sequence of well-formed frames within the limits it announced.

use std::task::Context;

use super::state::State;
use super::stream::Phase;
use crate::config::Limits;
use crate::h2::frame::{self, HEADER_LEN, Head, kind};
use crate::h2::preface::PREFACE;
use crate::h2::response_head::Common;
use crate::worker::Worker;

/// Feeds `data` to a new connection as the bytes after the client's preface and an
/// empty SETTINGS, split at `split`. Panics if an invariant breaks.
pub(crate) fn frames(data: &[u8], split: usize) {
    let limits = Limits { h2_max_concurrent_streams: 8, max_body_bytes: 64 * 1024, ..Limits::default() };
    let worker = Worker::new(limits);
    let mut state = State::new(&worker.limits, true);
    let mut input = PREFACE.to_vec();
    frame::put_settings(&mut input, &[]);
    let opening = input.len();
    input.extend_from_slice(data);
    let split = opening + split.min(data.len());
    let mut cx = Context::from_waker(std::task::Waker::noop());
    let mut at = 0;
    for end in [split, input.len()] {
        // A stream with a body pauses the frames after its HEADERS (its body mode is
        // asked then; here every body is read whole).
        let mut failed = false;
        loop {
            match state.receive(&input[at..end], &worker) {
                Ok(used) => at += used,
                Err(_) => failed = true,
            }
            if failed || !std::mem::take(&mut state.paused) {
                break;
            }
        }
        if failed {
            break;
        }
        assert!(state.streams.len() <= worker.limits.h2_max_concurrent_streams as usize);
        answer_ready(&mut state, &worker, &mut cx);
    }
    check_frames(&state.out, state.peer_max_frame);
    state.close(&worker);
    assert_eq!(worker.buffered(), 0, "a stream's budget was not given back");
}

/// Answers every request made whole with a small body, as the service would.
fn answer_ready(state: &mut State, worker: &Worker, cx: &mut Context<'_>) {
    let date = worker.date();
    let common = Common { date: &date, hsts: None };
    let mut index = 0;
    while index < state.streams.len() {
        let stream = &mut state.streams[index];
        if !stream.ready || !matches!(stream.phase, Phase::Receiving) {
            index += 1;
            continue;
        }
        stream.ready = false;
        let res = &mut stream.bufs.res;
        res.clear();
        res.set_content_type("text/plain");
        res.body_mut().extend_from_slice(&[b'x'; 70_000]);
        let before = state.streams.len();
        state.respond(index, worker, &common, None, cx);
        if state.streams.len() == before {
            index += 1;
        }
    }
}

/// Every frame written is whole, within the peer's frame size, on a stream its kind
/// allows.
fn check_frames(out: &[u8], max_frame: usize) {
    let mut at = 0;
    while at < out.len() {
        let head = Head::parse(&out[at..]).expect("a whole frame header");
        assert!(head.len as usize <= max_frame, "{head:?}");
        let connection_level = matches!(head.kind, kind::SETTINGS | kind::PING | kind::GOAWAY);
        assert!(!connection_level || head.stream == 0, "{head:?}");
        assert!(matches!(head.kind, kind::WINDOW_UPDATE) || connection_level || head.stream % 2 == 1, "{head:?}");
        at += HEADER_LEN + head.len as usize;
    }
    assert_eq!(at, out.len(), "a frame runs past the end of the output");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(stream: u32, flags: u8, block: &[u8]) -> Vec<u8> {
        let mut f = Vec::new();
        frame::put_head(&mut f, block.len(), kind::HEADERS, flags, stream);
        f.extend_from_slice(block);
        f
    }

    /// `GET /` on `a`: :method GET, :scheme http, :path /, :authority a (RFC 7541 App. A).
    const GET: &[u8] = &[0x82, 0x86, 0x84, 0x41, 1, b'a'];

    #[test]
    fn requests_windows_and_errors_split_anywhere_keep_every_invariant() {
        let mut data = headers(1, 0x5, GET);
        data.extend(headers(3, 0x4, GET));
        let mut body = Vec::new();
        frame::put_data(&mut body, 3, b"hello", true);
        data.extend(body);
        frame::put_window_update(&mut data, 0, 1 << 20);
        frame::put_window_update(&mut data, 1, 1 << 20);
        data.extend(headers(5, 0x1, GET));
        frame::put_head(&mut data, 0, kind::CONTINUATION, 0x4, 5);
        frame::put_rst(&mut data, 5, frame::Code::CANCEL);
        frame::put_head(&mut data, 3, kind::DATA, 0x8, 7);
        data.extend_from_slice(&[9, 9, 9]);
        for split in 0..data.len() {
            frames(&data, split);
        }
    }

    #[test]
    fn more_streams_than_allowed_and_a_bad_block_keep_every_invariant() {
        let mut data = Vec::new();
        for id in 0..12u32 {
            data.extend(headers(2 * id + 1, 0x5, GET));
        }
        data.extend(headers(31, 0x5, &[0xff, 0xff, 0xff, 0xff]));
        frames(&data, 7);
        frames(&data, data.len());
    }
}
