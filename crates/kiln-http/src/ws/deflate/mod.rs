//! permessage-deflate (RFC 7692): the offer negotiated from `Sec-WebSocket-Extensions`,
//! and the compressor and decompressor of one connection (`codec`), compiled in by
//! the `ws-deflate` feature. Without it (`absent`) every offer is declined, so the
//! handshake answers without the extension and no message is compressed (§5.1:
//! a server may decline any offer).
//!
//! Messages are raw deflate ended by an empty stored block whose last four bytes,
//! `00 00 ff ff`, are left off the wire (§7.2.1). With context takeover the window
//! carries over from message to message; with `*_no_context_takeover` it is reset.
//! The decompressor always runs with a full 32 KiB window (a smaller one than the
//! client agreed to use gains nothing: inflating with a larger window is always
//! correct), and what it produces counts against the message limit as it inflates,
//! so a small "deflate bomb" cannot make a large message.

#[cfg(not(feature = "ws-deflate"))]
mod absent;
#[cfg(feature = "ws-deflate")]
mod codec;

#[cfg(not(feature = "ws-deflate"))]
use absent::CompiledOut;
#[cfg(not(feature = "ws-deflate"))]
pub(crate) use absent::{Deflater, Inflater};
#[cfg(feature = "ws-deflate")]
pub(crate) use codec::{Deflater, Inflater};

/// Parameters agreed for one connection (RFC 7692 §7.1). Without the `ws-deflate`
/// feature there is no value of it: nothing is ever agreed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeflateParams {
    /// We reset our compressor after each message.
    pub server_no_context_takeover: bool,
    /// The client resets its compressor after each message, so we reset our
    /// decompressor.
    pub client_no_context_takeover: bool,
    /// Our compressor's window, 9 to 15 bits.
    pub server_max_window_bits: u8,
    #[cfg(not(feature = "ws-deflate"))]
    compiled_out: CompiledOut,
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
/// Without the `ws-deflate` feature every offer is declined.
pub fn negotiate<'a>(
    values: impl IntoIterator<Item = &'a str>,
    config: &DeflateConfig,
) -> Option<(DeflateParams, String)> {
    #[cfg(feature = "ws-deflate")]
    return values.into_iter().flat_map(|v| v.split(',')).find_map(|offer| accept(offer, config));
    #[cfg(not(feature = "ws-deflate"))]
    {
        let _ = (values, config);
        None
    }
}

#[cfg(feature = "ws-deflate")]
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

#[cfg(feature = "ws-deflate")]
fn window_bits(value: &str) -> Option<u8> {
    // §7.1.2: a decimal integer from 8 to 15, without leading zeros.
    let bits: u8 = value.parse().ok().filter(|_| !value.starts_with('0'))?;
    (8..=15).contains(&bits).then_some(bits)
}

/// The inflated message passed the limit (close code 1009).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
// Without `ws-deflate` nothing inflates, but the reader still names both outcomes.
#[cfg_attr(not(feature = "ws-deflate"), allow(dead_code))]
pub(crate) enum InflateError {
    TooBig,
    /// Not a deflate stream (close code 1007).
    Corrupt,
}

#[cfg(all(test, feature = "ws-deflate"))]
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
}
