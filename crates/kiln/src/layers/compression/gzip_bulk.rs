//! gzip for whole bodies: one call to libdeflate, on a compressor kept per worker.
//!
//! A body that is all here needs none of zlib's streaming (its pending buffer, its
//! window slid as input arrives, its flushes): libdeflate compresses a whole buffer in
//! one pass into an output of a size known beforehand, and on the wiki page spends
//! well under half of zlib-rs's instructions at the same level for a few bytes less.
//! Streamed bodies stay on flate2 ([`super::gzip`]), which flushes chunk by chunk.
//!
//! Levels are zlib's, as configured: level N (0–9) is libdeflate's level N, which its
//! author tunes to compress about as well as zlib's N, faster (0 stores, 1 is the
//! fastest, 2–4 greedy, 5–9 lazy search). A level past 9 is taken as 9, zlib's best:
//! libdeflate's 10–12 are slower searches zlib has no level for.
//!
//! A compressor is one allocation of a few hundred KiB (its match finder's tables),
//! which libdeflate clears itself at the start of each body; setting one up per
//! response would cost as much again, so each worker thread keeps one per level in
//! use, at most [`MAX_KEPT`]. Workers are current-thread runtimes and a whole body is
//! compressed without an await, so a worker never needs two of one level at once.

use std::cell::RefCell;
use std::io;

use libdeflater::{CompressionLvl, Compressor};

use super::room;

/// Compressors a worker keeps, each for its level: the one level an app configures,
/// and another should two apps with different levels share a worker. Past it the
/// longest unused is freed, so that what is kept follows the levels in use.
const MAX_KEPT: usize = 2;
/// zlib's best level, the largest kiln's gzip level means.
const MAX_LEVEL: u32 = 9;

thread_local! {
    /// The compressors a worker keeps and their levels, the most recently used last.
    static KEPT: RefCell<Vec<(u32, Compressor)>> = const { RefCell::new(Vec::new()) };
}

/// `body` as one gzip member (RFC 1952) at zlib's `level`.
pub(crate) fn compress(level: u32, body: &[u8]) -> io::Result<Vec<u8>> {
    let level = level.min(MAX_LEVEL);
    let kept = KEPT.try_with(|kept| {
        let compressors = &mut *kept.borrow_mut();
        let compressor = match compressors.iter().position(|(l, _)| *l == level) {
            Some(at) => compressors.remove(at).1,
            None => new_compressor(level),
        };
        if compressors.len() == MAX_KEPT {
            compressors.remove(0);
        }
        compressors.push((level, compressor));
        let (_, compressor) = compressors.last_mut().expect("pushed above");
        gzip(compressor, body)
    });
    // A thread being torn down has nothing kept: a compressor for this body alone.
    kept.unwrap_or_else(|_| gzip(&mut new_compressor(level), body))
}

fn new_compressor(level: u32) -> Compressor {
    let level = i32::try_from(level).ok().and_then(|l| CompressionLvl::new(l).ok()).unwrap_or_default();
    Compressor::new(level)
}

fn gzip(compressor: &mut Compressor, body: &[u8]) -> io::Result<Vec<u8>> {
    // libdeflate's bound holds any input whatever its content (stored blocks at
    // worst), so the one call cannot run out of room.
    let bound = compressor.gzip_compress_bound(body.len());
    room::compress_into(bound, |room| compressor.gzip_compress(body, room).map_err(io::Error::other))
}

#[cfg(test)]
mod tests {
    use std::io::Read;

    use super::*;
    use crate::layers::compression::{gunzip, noise};

    fn kept_levels() -> Vec<u32> {
        KEPT.with(|kept| kept.borrow().iter().map(|(l, _)| *l).collect())
    }

    #[test]
    fn bodies_of_every_size_and_level_round_trip() {
        let page: String = (0..20_000).map(|i| format!("<li class=\"item\">item {i}</li>\n")).collect();
        let noise = noise(70_000);
        for level in [0, 1, 4, 6, 9, 12, u32::MAX] {
            for len in [0, 1, 100, 18_689, 65_536, 300_000, page.len()] {
                let body = &page.as_bytes()[..len];
                assert_eq!(gunzip(&compress(level, body).unwrap()), body, "level {level}, {len} bytes");
            }
            // Past the window, nothing to find: stored blocks, within the bound.
            let dense = compress(level, &noise).unwrap();
            assert_eq!(gunzip(&dense), noise, "level {level}, noise");
        }
    }

    #[test]
    fn the_member_has_rfc_1952s_header_and_trailer() {
        let body = "<p>a paragraph of a page</p>\n".repeat(700);
        let gz = compress(4, body.as_bytes()).unwrap();
        // RFC 1952 §2.3: ID1 ID2, CM = 8 (deflate), then after the data CRC32 and ISIZE,
        // little-endian.
        assert_eq!(gz[..3], [0x1f, 0x8b, 8]);
        let trailer = &gz[gz.len() - 8..];
        assert_eq!(trailer[..4], libdeflater::crc32(body.as_bytes()).to_le_bytes());
        assert_eq!(trailer[4..], u32::try_from(body.len()).unwrap().to_le_bytes());
        // A whole member: nothing after it, and flate2 checks CRC and length itself.
        let mut decoder = flate2::read::GzDecoder::new(&gz[..]);
        let mut out = Vec::new();
        decoder.read_to_end(&mut out).unwrap();
        assert_eq!(out, body.as_bytes());
    }

    #[test]
    fn higher_levels_compress_at_least_as_well_on_text() {
        let page: String = (0..3000).map(|i| format!("<tr><td>{i}</td><td>row {}</td></tr>\n", i * 7 % 13)).collect();
        let sizes: Vec<usize> = [1, 4, 9].iter().map(|&l| compress(l, page.as_bytes()).unwrap().len()).collect();
        assert!(sizes[0] >= sizes[1] && sizes[1] >= sizes[2] && sizes[0] > sizes[2], "{sizes:?}");
        // Level 0 stores: larger than the body.
        assert!(compress(0, page.as_bytes()).unwrap().len() > page.len());
    }

    #[test]
    fn a_body_after_a_larger_one_is_not_mixed_with_it() {
        let small = "<p>small</p>".repeat(1000);
        let a = compress(4, small.as_bytes()).unwrap();
        // Past the kept room: room of its own; then the kept room again.
        let large = noise(room::MAX_ROOM + 1);
        assert_eq!(gunzip(&compress(4, &large).unwrap()), large);
        let tiny = compress(4, b"<p>tiny</p>").unwrap();
        assert_eq!(gunzip(&tiny), b"<p>tiny</p>");
        assert_eq!(compress(4, small.as_bytes()).unwrap(), a);
        assert!(room::kept_len() <= room::MAX_ROOM);
    }

    #[test]
    fn compressors_are_kept_per_level_and_bounded() {
        let body = b"<p>kept</p>".repeat(100);
        let a = compress(4, &body).unwrap();
        let b = compress(4, &body).unwrap();
        assert_eq!(a, b, "a kept compressor starts each body afresh");
        assert_eq!(kept_levels(), [4]);
        compress(6, &body).unwrap();
        compress(4, &body).unwrap();
        assert_eq!(kept_levels(), [6, 4], "the most recently used last");
        compress(1, &body).unwrap();
        assert_eq!(kept_levels(), [4, 1], "the longest unused freed");
        // Levels past zlib's best share level 9's compressor.
        compress(11, &body).unwrap();
        compress(9, &body).unwrap();
        assert_eq!(kept_levels(), [1, 9]);
    }
}
