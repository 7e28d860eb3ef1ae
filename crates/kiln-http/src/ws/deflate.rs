//! permessage-deflate (RFC 7692): the offer negotiated from `Sec-WebSocket-Extensions`,
//! and the compressor and decompressor of one connection.
//!
//! Messages are raw deflate ended by an empty stored block whose last four bytes,
//! `00 00 ff ff`, are left off the wire (§7.2.1). With context takeover the window
//! carries over from message to message; with `*_no_context_takeover` it is reset.
//! The decompressor always runs with a full 32 KiB window (a smaller one than the
//! client agreed to use gains nothing: inflating with a larger window is always
//! correct), and what it produces counts against the message limit as it inflates,
//! so a small "deflate bomb" cannot make a large message.

use flate2::{Compress, Compression, Decompress, FlushCompress, FlushDecompress, Status};

/// Parameters agreed for one connection (RFC 7692 §7.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeflateParams {
    /// We reset our compressor after each message.
    pub server_no_context_takeover: bool,
    /// The client resets its compressor after each message, so we reset our
    /// decompressor.
    pub client_no_context_takeover: bool,
    /// Our compressor's window, 9 to 15 bits.
    pub server_max_window_bits: u8,
}

/// What the server is willing to use, for [`negotiate`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeflateConfig {
    /// Always reset the compressor between messages: less memory kept between
    /// messages, less compression.
    pub server_no_context_takeover: bool,
    /// The largest compressor window we use, 9 to 15 bits (15: 32 KiB).
    pub server_max_window_bits: u8,
    /// Compression level, 0 to 9.
    pub level: u32,
}

impl Default for DeflateConfig {
    fn default() -> Self {
        DeflateConfig { server_no_context_takeover: false, server_max_window_bits: 15, level: 1 }
    }
}

/// Picks the first acceptable `permessage-deflate` offer among the header values of
/// `Sec-WebSocket-Extensions`, and the extension line to answer with. An offer with an
/// unknown, repeated or malformed parameter is declined (§7.1), as is one that asks
/// our window to be 8 bits: zlib cannot make raw deflate with a 256-byte window.
pub fn negotiate<'a>(
    values: impl IntoIterator<Item = &'a str>,
    config: &DeflateConfig,
) -> Option<(DeflateParams, String)> {
    values.into_iter().flat_map(|v| v.split(',')).find_map(|offer| accept(offer, config))
}

fn accept(offer: &str, config: &DeflateConfig) -> Option<(DeflateParams, String)> {
    let mut parts = offer.split(';').map(str::trim);
    if !parts.next()?.eq_ignore_ascii_case("permessage-deflate") {
        return None;
    }
    let (mut server_nct, mut client_nct, mut server_bits, mut client_bits) = (false, false, None, None);
    for param in parts {
        let (name, value) = match param.split_once('=') {
            Some((n, v)) => (n.trim(), Some(v.trim().trim_matches('"'))),
            None => (param, None),
        };
        let seen = match name.to_ascii_lowercase().as_str() {
            "server_no_context_takeover" if value.is_none() => std::mem::replace(&mut server_nct, true),
            "client_no_context_takeover" if value.is_none() => std::mem::replace(&mut client_nct, true),
            "server_max_window_bits" => server_bits.replace(window_bits(value?)?).is_some(),
            // Without a value: the client merely supports the parameter.
            "client_max_window_bits" => client_bits.replace(value.map(window_bits).unwrap_or(Some(15))?).is_some(),
            _ => return None,
        };
        if seen {
            return None;
        }
    }
    let bits = server_bits.unwrap_or(15).min(config.server_max_window_bits);
    if bits < 9 {
        return None;
    }
    let server_nct = server_nct || config.server_no_context_takeover;
    let mut line = String::from("permessage-deflate");
    if server_nct {
        line.push_str("; server_no_context_takeover");
    }
    if client_nct {
        line.push_str("; client_no_context_takeover");
    }
    if bits < 15 {
        line.push_str(&format!("; server_max_window_bits={bits}"));
    }
    let params = DeflateParams {
        server_no_context_takeover: server_nct,
        client_no_context_takeover: client_nct,
        server_max_window_bits: bits,
    };
    Some((params, line))
}

fn window_bits(value: &str) -> Option<u8> {
    // §7.1.2: a decimal integer from 8 to 15, without leading zeros.
    let bits: u8 = value.parse().ok().filter(|_| !value.starts_with('0'))?;
    (8..=15).contains(&bits).then_some(bits)
}

/// The four bytes every compressed message ends with before they are left off.
const TAIL: [u8; 4] = [0x00, 0x00, 0xFF, 0xFF];

/// The inflated message passed the limit (close code 1009).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum InflateError {
    TooBig,
    /// Not a deflate stream (close code 1007).
    Corrupt,
}

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
    /// `limit` bytes.
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

    fn offer(line: &str) -> Option<String> {
        negotiate([line], &DeflateConfig::default()).map(|(_, answer)| answer)
    }

    #[test]
    fn offers_are_accepted_or_declined() {
        let cases: &[(&str, Option<&str>)] = &[
            ("permessage-deflate", Some("permessage-deflate")),
            ("permessage-deflate; client_max_window_bits", Some("permessage-deflate")),
            (
                "permessage-deflate; server_no_context_takeover; client_no_context_takeover",
                Some("permessage-deflate; server_no_context_takeover; client_no_context_takeover"),
            ),
            ("permessage-deflate; server_max_window_bits=10", Some("permessage-deflate; server_max_window_bits=10")),
            (
                "permessage-deflate; server_max_window_bits=\"12\"",
                Some("permessage-deflate; server_max_window_bits=12"),
            ),
            ("permessage-deflate; server_max_window_bits=8", None),
            ("permessage-deflate; server_max_window_bits=8, permessage-deflate", Some("permessage-deflate")),
            ("permessage-deflate; server_max_window_bits=16", None),
            ("permessage-deflate; server_max_window_bits=09", None),
            ("permessage-deflate; server_max_window_bits", None),
            ("permessage-deflate; client_max_window_bits=7", None),
            ("permessage-deflate; server_no_context_takeover; server_no_context_takeover", None),
            ("permessage-deflate; mystery", None),
            ("x-webkit-deflate-frame", None),
            ("x-webkit-deflate-frame, permessage-deflate", Some("permessage-deflate")),
        ];
        for (line, want) in cases {
            assert_eq!(offer(line).as_deref(), *want, "{line}");
        }
    }

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
