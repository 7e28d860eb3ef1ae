//! Brotli (RFC 7932) on Google's C encoder (the `brotlic` bindings): a whole body in
//! one call, a stream through an encoder that flushes chunk by chunk.
//!
//! The pure-Rust port of the same encoder makes the same bytes at the same quality
//! but, on the 18.7 KB wiki page at quality 4, spent 4.67 M instructions where C
//! spends 3.10 M (its bit writer and hasher, and its hash table zeroed twice:
//! bench/results/2026-11-25-session12-compress-cost): the C library nginx's brotli
//! module calls, at nginx's cost.

use std::io;

use brotlic::{BrotliEncoderOptions, CompressionMode, CompressorWriter, Quality, WindowSize};

/// Brotli's largest window here: 1 MiB, past the size of any page, and a fraction of
/// the memory the 16 MiB maximum would hold per response.
const MAX_WINDOW_BITS: u8 = 20;
/// Brotli's smallest window (RFC 7932 §9.1: WBITS 10..=24).
const MIN_WINDOW_BITS: u8 = 10;
/// Brotli's best quality; a larger configured one counts as this.
const MAX_QUALITY: u32 = 11;

/// `body` as one brotli stream at `quality` (0–11), with the smallest window that
/// holds it.
pub(super) fn compress(quality: u32, body: &[u8]) -> io::Result<Vec<u8>> {
    // The bound (C's `BrotliEncoderMaxCompressedSize`: the body in uncompressed
    // meta-blocks) holds any input at any quality: when the compressed stream would
    // not fit, the one call writes that instead. `compress_bound` answers for
    // qualities 2 and up only, but its figure does not depend on the quality.
    let bound = brotlic::compress_bound(body.len(), quality_of(MAX_QUALITY))
        .filter(|&b| b > 0)
        .ok_or_else(|| io::Error::other("body too large for brotli"))?;
    let window = window_of(window_bits(Some(body.len())));
    super::room::compress_into(bound, |room| {
        brotlic::compress(body, room, quality_of(quality), window, CompressionMode::Generic).map_err(io::Error::other)
    })
}

/// An encoder for a stream at `quality`, writing into a `Vec` that the caller empties
/// after each flush.
pub(super) fn stream(quality: u32, capacity: usize) -> io::Result<CompressorWriter<Vec<u8>>> {
    let encoder = BrotliEncoderOptions::new()
        .quality(quality_of(quality))
        .window_size(window_of(MAX_WINDOW_BITS))
        .build()
        .map_err(io::Error::other)?;
    Ok(CompressorWriter::with_encoder(encoder, Vec::with_capacity(capacity)))
}

fn quality_of(quality: u32) -> Quality {
    let q = u8::try_from(quality.min(MAX_QUALITY)).expect("at most 11");
    Quality::new(q).expect("0..=11 is a quality")
}

fn window_of(bits: u8) -> WindowSize {
    WindowSize::new(bits).expect("10..=20 is a window")
}

/// The window for a body of `len` bytes: the smallest that holds all of it (a larger
/// one finds no more matches in it), as nginx sizes zlib's for a known length; the
/// largest for a stream.
fn window_bits(len: Option<usize>) -> u8 {
    let Some(len) = len else { return MAX_WINDOW_BITS };
    // RFC 7932 §9.1: the window is (1 << WBITS) - 16 bytes.
    (MIN_WINDOW_BITS..MAX_WINDOW_BITS).find(|bits| (1usize << bits) - 16 >= len).unwrap_or(MAX_WINDOW_BITS)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layers::compression::noise;

    fn decode(bytes: &[u8]) -> Vec<u8> {
        let mut out = vec![0; 1 << 22];
        let len = brotlic::decompress(bytes, &mut out).expect("a valid brotli stream");
        out.truncate(len);
        out
    }

    #[test]
    fn the_window_is_the_smallest_that_holds_the_body() {
        assert_eq!(window_bits(None), 20);
        assert_eq!(window_bits(Some(0)), 10);
        assert_eq!(window_bits(Some(1008)), 10);
        assert_eq!(window_bits(Some(1009)), 11);
        assert_eq!(window_bits(Some(18_689)), 15);
        assert_eq!(window_bits(Some(1 << 20)), 20);
        assert_eq!(window_bits(Some(usize::MAX)), 20);
    }

    #[test]
    fn every_quality_round_trips_text_and_noise() {
        let page: String = (0..3000).map(|i| format!("<li>item {i}</li>\n")).collect();
        let noise = noise(40_000);
        for quality in [0, 1, 2, 4, 5, 9, 11, 12, u32::MAX] {
            for body in [&b""[..], b"a", page.as_bytes(), &noise] {
                let out = compress(quality, body).unwrap();
                assert_eq!(decode(&out), body, "quality {quality}, {} bytes", body.len());
            }
        }
    }

    #[test]
    fn higher_qualities_compress_text_at_least_as_well() {
        let page: String = (0..3000).map(|i| format!("<tr><td>{i}</td><td>row {}</td></tr>\n", i * 7 % 13)).collect();
        let sizes: Vec<usize> = [1, 4, 9].iter().map(|&q| compress(q, page.as_bytes()).unwrap().len()).collect();
        assert!(sizes[0] >= sizes[1] && sizes[1] >= sizes[2] && sizes[0] > sizes[2], "{sizes:?}");
    }
}
