//! The compressor and decompressor of one connection, on zlib-rs (through `flate2`).

use flate2::{Compress, Compression, Decompress, FlushCompress, FlushDecompress, Status};

use super::{DeflateParams, InflateError};

/// The four bytes every compressed message ends with before they are left off.
const TAIL: [u8; 4] = [0x00, 0x00, 0xFF, 0xFF];

/// One connection's decompressor.
pub(crate) struct Inflater {
    inner: Decompress,
    reset_each_message: bool,
}

impl Inflater {
    pub(crate) fn new(params: &DeflateParams) -> Self {
        Inflater { inner: Decompress::new(false), reset_each_message: params.client_no_context_takeover }
    }

    /// Inflates a piece of a compressed message onto `out`, which must stay within
    /// `limit` bytes, and whose room never grows past it.
    pub(crate) fn inflate(&mut self, mut input: &[u8], out: &mut Vec<u8>, limit: usize) -> Result<(), InflateError> {
        // Through a bounded scratch buffer: `out` never grows past the limit by more
        // than one scratch's worth, whatever the ratio of the input.
        let mut scratch = [0u8; 8 * 1024];
        if input.is_empty() {
            return Ok(());
        }
        loop {
            let (in0, out0) = (self.inner.total_in(), self.inner.total_out());
            let status =
                self.inner.decompress(input, &mut scratch, FlushDecompress::Sync).map_err(|_| InflateError::Corrupt)?;
            let used = (self.inner.total_in() - in0) as usize;
            let made = (self.inner.total_out() - out0) as usize;
            input = &input[used..];
            if out.len() + made > limit {
                return Err(InflateError::TooBig);
            }
            if out.capacity() - out.len() < made {
                // A quarter more than needed, not `Vec`'s doubling, and never past the
                // limit: the message's room is what the receiver charges to the
                // worker's budget.
                let needed = out.len() + made;
                let room = (needed + needed / 4).min(limit).max(needed);
                out.reserve_exact(room - out.len());
            }
            out.extend_from_slice(&scratch[..made]);
            if status == Status::StreamEnd {
                // The client ended the deflate stream (BFINAL): the next message
                // starts a new one.
                self.inner.reset(false);
                return Ok(());
            }
            if input.is_empty() && made < scratch.len() {
                return Ok(());
            }
            if used == 0 && made == 0 {
                return Err(InflateError::Corrupt);
            }
        }
    }

    /// Ends a message: inflates the left-off tail.
    pub(crate) fn finish(&mut self, out: &mut Vec<u8>, limit: usize) -> Result<(), InflateError> {
        let result = self.inflate(&TAIL, out, limit);
        if self.reset_each_message {
            self.inner.reset(false);
        }
        result
    }
}

/// One connection's compressor.
pub(crate) struct Deflater {
    inner: Compress,
    reset_each_message: bool,
}

impl Deflater {
    pub(crate) fn new(params: &DeflateParams, level: u32) -> Self {
        let inner = Compress::new_with_window_bits(Compression::new(level), false, params.server_max_window_bits);
        Deflater { inner, reset_each_message: params.server_no_context_takeover }
    }

    /// Compresses a whole message onto `out` (cleared first), without the tail.
    pub(crate) fn compress(&mut self, mut input: &[u8], out: &mut Vec<u8>) {
        out.clear();
        out.reserve(input.len() / 2 + 64);
        loop {
            let in0 = self.inner.total_in();
            // A sync flush ends on a byte boundary with the empty stored block.
            let _ = self.inner.compress_vec(input, out, FlushCompress::Sync);
            input = &input[(self.inner.total_in() - in0) as usize..];
            // Done once the input is taken and the flush had room to finish.
            if input.is_empty() && out.len() < out.capacity() {
                break;
            }
            out.reserve(out.capacity().max(64));
        }
        if out.ends_with(&TAIL) {
            out.truncate(out.len() - TAIL.len());
        } else if out.is_empty() {
            // Nothing new to flush (an empty message after another): zlib writes no
            // block, but the wire needs the empty block's first byte (§7.2.3.6).
            out.push(0x00);
        }
        if self.reset_each_message {
            self.inner.reset();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(server_nct: bool, client_nct: bool, bits: u8) -> DeflateParams {
        DeflateParams {
            server_no_context_takeover: server_nct,
            client_no_context_takeover: client_nct,
            server_max_window_bits: bits,
        }
    }

    #[test]
    fn messages_round_trip_with_and_without_context_takeover() {
        for p in [params(false, false, 15), params(true, true, 9), params(false, false, 10)] {
            let (mut d, mut i) =
                (Deflater::new(&p, 6), Inflater::new(&params(false, p.server_no_context_takeover, 15)));
            let mut wire = Vec::new();
            for msg in [&b"Hello, world! Hello, world!"[..], b"", &[7u8; 100_000], b"Hello, world!"] {
                d.compress(msg, &mut wire);
                assert!(!wire.ends_with(&TAIL));
                let mut out = Vec::new();
                // Fed in two pieces, as frames may split it.
                let half = wire.len() / 2;
                i.inflate(&wire[..half], &mut out, 1 << 20).unwrap();
                i.inflate(&wire[half..], &mut out, 1 << 20).unwrap();
                i.finish(&mut out, 1 << 20).unwrap();
                assert_eq!(out, msg, "{p:?}");
            }
        }
    }

    #[test]
    fn an_empty_message_compresses_to_one_zero_byte() {
        let mut wire = Vec::new();
        Deflater::new(&params(false, false, 15), 6).compress(b"", &mut wire);
        assert_eq!(wire, [0x00]);
    }

    #[test]
    fn a_deflate_bomb_stops_at_the_limit() {
        let mut wire = Vec::new();
        Deflater::new(&params(false, false, 15), 9).compress(&vec![0u8; 4 << 20], &mut wire);
        assert!(wire.len() < 8_000, "4 MiB of zeros compress to {} bytes", wire.len());
        let mut out = Vec::new();
        let mut i = Inflater::new(&params(false, false, 15));
        assert_eq!(i.inflate(&wire, &mut out, 64 * 1024), Err(InflateError::TooBig));
        assert!(out.len() <= 64 * 1024);
    }

    #[test]
    fn garbage_is_corrupt() {
        let mut out = Vec::new();
        let mut i = Inflater::new(&params(false, false, 15));
        assert_eq!(i.inflate(&[0xFF; 16], &mut out, 1 << 20), Err(InflateError::Corrupt));
    }
}
