//! Close codes and the close frame's payload (RFC 6455 §5.5.1, §7.4).

use std::fmt;

/// A close status code (RFC 6455 §7.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CloseCode(pub u16);

impl CloseCode {
    /// 1000: the purpose of the connection is fulfilled.
    pub const NORMAL: CloseCode = CloseCode(1000);
    /// 1001: the server is going down (sent on drain) or the browser left the page.
    pub const GOING_AWAY: CloseCode = CloseCode(1001);
    /// 1002: the peer broke the protocol.
    pub const PROTOCOL_ERROR: CloseCode = CloseCode(1002);
    /// 1003: a kind of data the endpoint cannot accept.
    pub const UNSUPPORTED_DATA: CloseCode = CloseCode(1003);
    /// 1007: data inconsistent with the message's type (text that is not UTF-8).
    pub const INVALID_PAYLOAD: CloseCode = CloseCode(1007);
    /// 1008: a message that violates the endpoint's policy.
    pub const POLICY_VIOLATION: CloseCode = CloseCode(1008);
    /// 1009: a frame or message over the configured limit.
    pub const MESSAGE_TOO_BIG: CloseCode = CloseCode(1009);
    /// 1011: the server met an unexpected condition; kiln also sends it to a peer that
    /// stopped answering the heartbeat.
    pub const INTERNAL_ERROR: CloseCode = CloseCode(1011);

    /// Whether a peer may send this code in a close frame (§7.4.1, §7.4.2): the
    /// defined codes other than 1004-1006 and 1015 (never sent on the wire), the
    /// IANA-registered 1012-1014, and 3000-4999 for libraries and applications.
    pub fn is_allowed_on_wire(self) -> bool {
        matches!(self.0, 1000..=1003 | 1007..=1014 | 3000..=4999)
    }
}

impl fmt::Display for CloseCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// What a close frame said: its code and reason, or nothing at all (§5.5.1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CloseFrame {
    /// The status code.
    pub code: CloseCode,
    /// The reason, UTF-8, at most 123 bytes.
    pub reason: String,
}

/// Parses a received close frame's payload. `Ok(None)`: no code (the empty payload);
/// `Err`: the code to fail the connection with.
pub(crate) fn parse(payload: &[u8]) -> Result<Option<CloseFrame>, (CloseCode, &'static str)> {
    match payload {
        [] => Ok(None),
        [_] => Err((CloseCode::PROTOCOL_ERROR, "close frame of one byte")),
        [hi, lo, reason @ ..] => {
            let code = CloseCode(u16::from_be_bytes([*hi, *lo]));
            if !code.is_allowed_on_wire() {
                return Err((CloseCode::PROTOCOL_ERROR, "invalid close code"));
            }
            let reason =
                std::str::from_utf8(reason).map_err(|_| (CloseCode::INVALID_PAYLOAD, "close reason not UTF-8"))?;
            Ok(Some(CloseFrame { code, reason: reason.to_owned() }))
        }
    }
}

/// The payload of a close frame we send; the reason is cut (on a character boundary)
/// to fit the 125 bytes of a control frame.
pub(crate) fn payload(code: CloseCode, reason: &str) -> Vec<u8> {
    let mut end = reason.len().min(123);
    while !reason.is_char_boundary(end) {
        end -= 1;
    }
    let mut out = Vec::with_capacity(2 + end);
    out.extend_from_slice(&code.0.to_be_bytes());
    out.extend_from_slice(&reason.as_bytes()[..end]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_allowed_on_the_wire_follow_section_7_4() {
        let allowed = [1000, 1001, 1002, 1003, 1007, 1008, 1009, 1010, 1011, 1012, 1014, 3000, 3999, 4000, 4999];
        let refused = [0, 999, 1004, 1005, 1006, 1015, 1016, 1100, 2000, 2999, 5000, 65535];
        for code in allowed {
            assert!(CloseCode(code).is_allowed_on_wire(), "{code}");
        }
        for code in refused {
            assert!(!CloseCode(code).is_allowed_on_wire(), "{code}");
        }
    }

    #[test]
    fn payloads_parse_or_fail_with_their_code() {
        let bad_utf8: &[u8] = &[0x03, 0xE8, 0xCE, 0xBA, 0xE1, 0xBD];
        type Want = Result<Option<(u16, &'static str)>, CloseCode>;
        let cases: &[(&[u8], Want)] = &[
            (b"", Ok(None)),
            (&[0x03], Err(CloseCode::PROTOCOL_ERROR)),
            (&[0x03, 0xE8], Ok(Some((1000, "")))),
            (b"\x0f\xa0bye", Ok(Some((4000, "bye")))),
            (&[0x03, 0xED], Err(CloseCode::PROTOCOL_ERROR)),
            (bad_utf8, Err(CloseCode::INVALID_PAYLOAD)),
        ];
        for (bytes, want) in cases {
            let got = parse(bytes).map(|f| f.map(|f| (f.code.0, f.reason))).map_err(|(code, _)| code);
            let want = want.map(|w| w.map(|(c, r)| (c, r.to_owned())));
            assert_eq!(got, want, "{bytes:?}");
        }
    }

    #[test]
    fn a_long_reason_is_cut_on_a_character_boundary() {
        let reason = "é".repeat(100);
        let p = payload(CloseCode::NORMAL, &reason);
        assert!(p.len() <= 125);
        assert!(std::str::from_utf8(&p[2..]).is_ok());
    }
}
