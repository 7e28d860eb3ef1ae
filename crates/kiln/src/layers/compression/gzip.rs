//! gzip of streamed bodies, from deflate states kept per worker and reused (whole
//! bodies are libdeflate's, [`super::gzip_bulk`]).
//!
//! A deflate state is about 320 KiB (zlib-rs: a 64 KiB window twice over, the chain
//! and a 64 Ki-entry hash head, the pending buffer), zeroed when allocated: setting
//! one up costs more instructions than compressing a page's worth but for the match
//! search. So each worker thread keeps a few idle states and `reset`s one for the
//! next stream (zlib's `deflateReset`: it clears the hash head and keeps the memory).
//! Streams hold theirs while they stream, and those past the bound are freed when
//! done.
//!
//! nginx shrinks the window of a body whose length it knows (`ngx_http_gzip_filter`)
//! to spend less on that allocation; a stream's length is not known, and zlib-rs's
//! hash head has 64 Ki entries whatever the window.

use std::cell::RefCell;
use std::io;

use flate2::{Compress, FlushCompress, Status};

/// Idle states a worker keeps (each about 320 KiB): enough for streams that end one
/// after another, of up to two levels. Past it the longest idle is freed, so that the
/// pool follows the levels in use.
const MAX_IDLE: usize = 2;
/// 32 KiB, deflate's largest window.
const WINDOW_BITS: u8 = 15;
/// Output room added when the compressor fills what there is.
const MIN_ROOM: usize = 256;

thread_local! {
    static IDLE: RefCell<Vec<(u32, Compress)>> = const { RefCell::new(Vec::new()) };
}

/// A gzip stream being written into `out`, on a state taken from the worker's idle
/// ones (or a new one), given back when dropped.
pub(crate) struct Gzip {
    level: u32,
    /// `None` only while being given back.
    state: Option<Compress>,
    out: Vec<u8>,
}

impl Gzip {
    pub(crate) fn new(level: u32, capacity: usize) -> Gzip {
        // zlib has no level past 9, its best; zlib-rs would refuse one.
        let level = level.min(flate2::Compression::best().level());
        let idle = IDLE.try_with(|idle| {
            let mut idle = idle.borrow_mut();
            let at = idle.iter().rposition(|(l, _)| *l == level)?;
            Some(idle.remove(at).1)
        });
        let state =
            idle.ok().flatten().unwrap_or_else(|| Compress::new_gzip(flate2::Compression::new(level), WINDOW_BITS));
        Gzip { level, state: Some(state), out: Vec::with_capacity(capacity) }
    }

    /// Compresses `data`; `flush` as in zlib: `None` (more to come), `Sync` (end the
    /// block so that all so far decodes) or `Finish` (the trailer too).
    pub(crate) fn write(&mut self, mut data: &[u8], flush: FlushCompress) -> io::Result<()> {
        let state = self.state.as_mut().expect("present until dropped");
        loop {
            if self.out.capacity() - self.out.len() < MIN_ROOM {
                self.out.reserve(self.out.capacity().max(MIN_ROOM));
            }
            let before = state.total_in();
            let status = state.compress_vec(data, &mut self.out, flush).map_err(io::Error::other)?;
            data = &data[usize::try_from(state.total_in() - before).unwrap_or(data.len())..];
            let room_left = self.out.len() < self.out.capacity();
            match status {
                Status::StreamEnd => return Ok(()),
                // Room left over after a pass with no input left: everything the flush
                // asked for is out (zlib's rule: `avail_out != 0`); a `Finish` goes on
                // to `StreamEnd`.
                Status::Ok | Status::BufError if data.is_empty() && room_left && flush != FlushCompress::Finish => {
                    return Ok(());
                }
                Status::BufError if data.is_empty() && room_left => {
                    return Err(io::Error::other("deflate made no progress finishing"));
                }
                Status::Ok | Status::BufError => {}
            }
        }
    }

    /// The output so far, taken out.
    pub(crate) fn take_output(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.out)
    }

    /// Ends the stream and returns the rest of the output.
    pub(crate) fn finish(mut self) -> io::Result<Vec<u8>> {
        self.write(&[], FlushCompress::Finish)?;
        Ok(self.take_output())
    }
}

impl Drop for Gzip {
    fn drop(&mut self) {
        let Some(mut state) = self.state.take() else { return };
        let level = self.level;
        // A thread being torn down has no pool left: the state is freed instead.
        let _ = IDLE.try_with(|idle| {
            let mut idle = idle.borrow_mut();
            if idle.len() == MAX_IDLE {
                idle.remove(0);
            }
            state.reset();
            idle.push((level, state));
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layers::compression::{gunzip, noise};

    fn idle() -> usize {
        IDLE.with(|idle| idle.borrow().len())
    }

    #[test]
    fn a_reused_state_starts_a_fresh_stream() {
        let page = "<p>a line of a page</p>\n".repeat(2000);
        let first = {
            let mut gzip = Gzip::new(4, 0);
            gzip.write(page.as_bytes(), FlushCompress::None).unwrap();
            gzip.finish().unwrap()
        };
        assert!(idle() >= 1);
        // A stream abandoned half way (a client gone) is given back too, reset.
        let mut half = Gzip::new(4, 0);
        half.write(b"some of a body", FlushCompress::Sync).unwrap();
        drop(half);
        let second = {
            let mut gzip = Gzip::new(4, 0);
            gzip.write(page.as_bytes(), FlushCompress::None).unwrap();
            gzip.finish().unwrap()
        };
        assert_eq!(gunzip(&first), page.as_bytes());
        assert_eq!(first, second, "the same body compresses to the same bytes on a reused state");
    }

    #[test]
    fn idle_states_are_bounded_and_keyed_by_level() {
        let streams: Vec<Gzip> = (0..MAX_IDLE + 3).map(|_| Gzip::new(6, 0)).collect();
        drop(streams);
        assert_eq!(idle(), MAX_IDLE);
        // Another level gets a state of its own level, whatever is idle, and keeps it
        // in place of the longest idle.
        let mut gzip = Gzip::new(1, 0);
        gzip.write(b"abc", FlushCompress::None).unwrap();
        let other = gzip.finish().unwrap();
        assert_eq!(gunzip(&other), b"abc");
        assert_eq!(idle(), MAX_IDLE);
        IDLE.with(|idle| assert_eq!(idle.borrow().iter().map(|(l, _)| *l).collect::<Vec<_>>(), [6, 1]));
    }

    #[test]
    fn output_grows_past_the_capacity_given() {
        // Incompressible bytes: the output is larger than the input and than any
        // capacity guessed from it.
        let noise = noise(100_000);
        let mut gzip = Gzip::new(4, 10);
        gzip.write(&noise, FlushCompress::None).unwrap();
        assert_eq!(gunzip(&gzip.finish().unwrap()), noise);
    }
}
