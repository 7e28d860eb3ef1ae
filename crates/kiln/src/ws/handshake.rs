//! The opening handshake, server side: what a request must say to be upgraded, over
//! HTTP/1.1 (RFC 6455 §4.2, with the `Sec-WebSocket-Accept` that proves we read its
//! key) or as an HTTP/2 extended CONNECT (RFC 8441 §5, with neither key nor accept).

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use kiln_http::{Request, Version};
use sha1::{Digest, Sha1};

use crate::rejection::{InvalidWebSocketHandshake, Rejection, UnsupportedWebSocketVersion};

/// The GUID every accept key is derived with (§1.3).
const GUID: &[u8] = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11";

/// What a valid handshake request carries forward.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Handshake {
    /// The `Sec-WebSocket-Accept` value; `None` over HTTP/2, where the answer is a
    /// `200` without one (RFC 8441 §5).
    pub(crate) accept: Option<String>,
    /// Every `Sec-WebSocket-Extensions` value, joined by commas.
    pub(crate) extensions: String,
    /// The subprotocols offered, in the client's order of preference.
    pub(crate) protocols: Vec<String>,
}

/// Checks a request against RFC 6455 §4.2.1 item by item, or against RFC 8441 §5.
pub(crate) fn check(req: &Request<'_>) -> Result<Handshake, Rejection> {
    let bad = |why: &'static str| Rejection::from(InvalidWebSocketHandshake::new(why));
    let over_h2 = req.version() == Version::Http2;
    if over_h2 {
        // RFC 8441 §5: an extended CONNECT whose `:protocol` is `websocket` (the
        // engine has checked `:scheme`, `:path` and `:authority`).
        if req.method() != "CONNECT" || !req.protocol().is_some_and(|p| p.eq_ignore_ascii_case("websocket")) {
            return Err(bad("a WebSocket over HTTP/2 is an extended CONNECT with `:protocol: websocket`"));
        }
    } else {
        if req.method() != "GET" || req.version() != Version::Http11 {
            return Err(bad("a WebSocket handshake is an HTTP/1.1 GET request"));
        }
        if !has_token(req, "upgrade", "websocket") {
            return Err(bad("missing `Upgrade: websocket`"));
        }
        if !has_token(req, "connection", "upgrade") {
            return Err(bad("missing `Connection: upgrade`"));
        }
    }
    // §4.4: any other version is answered 426 with the one we speak.
    if req.header_str("sec-websocket-version").map(str::trim) != Some("13") {
        return Err(UnsupportedWebSocketVersion::new("only WebSocket version 13 is supported").into());
    }
    let (extensions, protocols) = offers(req);
    if over_h2 {
        // RFC 8441 §5: no `Sec-WebSocket-Key` to prove, no accept to answer.
        return Ok(Handshake { accept: None, extensions, protocols });
    }
    // §11.3.1: `Sec-WebSocket-Key` "MUST NOT appear more than once in an HTTP request".
    if req.headers().filter(|(n, _)| n.eq_ignore_ascii_case("sec-websocket-key")).nth(1).is_some() {
        return Err(bad("`Sec-WebSocket-Key` must appear once"));
    }
    let key = req.header_str("sec-websocket-key").map(str::trim).unwrap_or_default();
    // §4.1: the key is 16 random bytes, base64-encoded.
    if STANDARD.decode(key).map(|k| k.len()) != Ok(16) {
        return Err(bad("`Sec-WebSocket-Key` must be 16 bytes in base64"));
    }
    Ok(Handshake { accept: Some(accept_key(key.as_bytes())), extensions, protocols })
}

/// The extensions offered (every `Sec-WebSocket-Extensions` value, joined) and the
/// subprotocols, in the client's order.
fn offers(req: &Request<'_>) -> (String, Vec<String>) {
    let values = |name: &'static str| {
        req.headers()
            .filter(move |(n, _)| n.eq_ignore_ascii_case(name))
            .filter_map(|(_, v)| std::str::from_utf8(v).ok())
    };
    let extensions = values("sec-websocket-extensions").collect::<Vec<_>>().join(",");
    let protocols = values("sec-websocket-protocol")
        .flat_map(|v| v.split(','))
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(str::to_owned)
        .collect();
    (extensions, protocols)
}

/// Whether some `name` header lists `token` (case-insensitive, comma-separated).
fn has_token(req: &Request<'_>, name: &str, token: &str) -> bool {
    req.headers()
        .filter(|(n, _)| n.eq_ignore_ascii_case(name))
        .flat_map(|(_, v)| v.split(|&b| b == b','))
        .any(|t| t.trim_ascii().eq_ignore_ascii_case(token.as_bytes()))
}

/// `Sec-WebSocket-Accept` for a key: base64(SHA-1(key + GUID)) (§4.2.2 item 5.4).
pub(crate) fn accept_key(key: &[u8]) -> String {
    let mut sha = Sha1::new();
    sha.update(key);
    sha.update(GUID);
    STANDARD.encode(sha.finalize())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_accept_key_of_the_rfc_example() {
        // RFC 6455 §1.3.
        assert_eq!(accept_key(b"dGhlIHNhbXBsZSBub25jZQ=="), "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=");
    }
}
