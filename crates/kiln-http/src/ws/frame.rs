//! Frames on the wire (RFC 6455 §5.2): the header parsed from a byte slice, masking,
//! and the header of a frame we send (servers never mask, §5.1).

use super::close::CloseCode;

/// A frame's opcode (RFC 6455 §5.2, §11.8).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum OpCode {
    Continuation,
    Text,
    Binary,
    Close,
    Ping,
    Pong,
}

impl OpCode {
    fn from_bits(bits: u8) -> Option<OpCode> {
        Some(match bits {
            0x0 => OpCode::Continuation,
            0x1 => OpCode::Text,
            0x2 => OpCode::Binary,
            0x8 => OpCode::Close,
            0x9 => OpCode::Ping,
            0xA => OpCode::Pong,
            _ => return None,
        })
    }

    fn bits(self) -> u8 {
        match self {
            OpCode::Continuation => 0x0,
            OpCode::Text => 0x1,
            OpCode::Binary => 0x2,
            OpCode::Close => 0x8,
            OpCode::Ping => 0x9,
            OpCode::Pong => 0xA,
        }
    }

    /// Control frames (§5.5) may come between the fragments of a message.
    pub(crate) fn is_control(self) -> bool {
        matches!(self, OpCode::Close | OpCode::Ping | OpCode::Pong)
    }
}

/// A frame header as received from a client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Header {
    pub(crate) fin: bool,
    /// RSV1: with permessage-deflate, "this message is compressed" (RFC 7692 §6).
    pub(crate) rsv1: bool,
    pub(crate) opcode: OpCode,
    pub(crate) mask: [u8; 4],
    pub(crate) len: u64,
}

/// Why a header was refused; each fails the connection with its close code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FrameError {
    pub(crate) code: CloseCode,
    pub(crate) reason: &'static str,
}

const fn protocol(reason: &'static str) -> FrameError {
    FrameError { code: CloseCode::PROTOCOL_ERROR, reason }
}

/// Largest payload of a control frame (§5.5).
pub(crate) const MAX_CONTROL_PAYLOAD: usize = 125;

/// Parses the header at the start of `buf`: `Ok(None)` until it is complete, else the
/// header and its length in bytes. `rsv1_allowed`: permessage-deflate was negotiated.
/// `max_frame`: a longer payload is refused (1009) before any of it is read.
pub(crate) fn parse_header(
    buf: &[u8],
    rsv1_allowed: bool,
    max_frame: u64,
) -> Result<Option<(Header, usize)>, FrameError> {
    let [b0, b1, ..] = *buf else { return Ok(None) };
    let fin = b0 & 0x80 != 0;
    let rsv1 = b0 & 0x40 != 0;
    // §5.2: a nonzero RSV bit no extension defined fails the connection.
    if b0 & 0x30 != 0 || (rsv1 && !rsv1_allowed) {
        return Err(protocol("reserved bit set"));
    }
    let opcode = OpCode::from_bits(b0 & 0x0F).ok_or(protocol("reserved opcode"))?;
    // §5.1: a server closes the connection on an unmasked client frame.
    if b1 & 0x80 == 0 {
        return Err(protocol("client frame not masked"));
    }
    let (len, at) = match b1 & 0x7F {
        126 => match buf.get(2..4) {
            Some(b) => (u64::from(u16::from_be_bytes([b[0], b[1]])), 4),
            None => return Ok(None),
        },
        127 => match buf.get(2..10) {
            Some(b) => {
                let len = u64::from_be_bytes(b.try_into().unwrap_or_default());
                // §5.2: the most significant bit of a 64-bit length must be 0.
                if len >> 63 != 0 {
                    return Err(protocol("frame length out of range"));
                }
                (len, 10)
            }
            None => return Ok(None),
        },
        n => (u64::from(n), 2),
    };
    if opcode.is_control() {
        // §5.5: control frames are never fragmented and carry at most 125 bytes;
        // RFC 7692 §6.1: RSV1 is for data frames only.
        if !fin || len > MAX_CONTROL_PAYLOAD as u64 || rsv1 {
            return Err(protocol("bad control frame"));
        }
    } else if len > max_frame {
        return Err(FrameError { code: CloseCode::MESSAGE_TOO_BIG, reason: "frame too large" });
    }
    let Some(mask) = buf.get(at..at + 4) else { return Ok(None) };
    let mask = [mask[0], mask[1], mask[2], mask[3]];
    Ok(Some((Header { fin, rsv1, opcode, mask, len }, at + 4)))
}

/// The mask as a little-endian word, turned to the phase of payload byte `offset`
/// (§5.3: byte i is XORed with mask[i % 4]): its bytes are mask[offset % 4], ...
fn phased(mask: [u8; 4], offset: u64) -> u64 {
    let word = u32::from_le_bytes(mask).rotate_right(8 * (offset % 4) as u32);
    u64::from(word) * 0x1_0000_0001
}

/// XORs `data`, whose first byte is at the phase of `word`, a word and then a byte at
/// a time: the tail of a payload, or all of a small one (most messages are a few
/// dozen bytes, where a byte loop and its index arithmetic were most of the cost).
fn xor_words(data: &mut [u8], word: u64) {
    let mut words = data.chunks_exact_mut(8);
    for chunk in &mut words {
        let v = u64::from_le_bytes(chunk.try_into().unwrap_or_default()) ^ word;
        chunk.copy_from_slice(&v.to_le_bytes());
    }
    for (b, m) in words.into_remainder().iter_mut().zip(word.to_le_bytes()) {
        *b ^= m;
    }
}

/// Unmasks (or masks) `data` in place; `offset` is how many payload bytes of the frame
/// came before `data` (§5.3: byte i is XORed with mask[i % 4]).
pub(crate) fn apply_mask(data: &mut [u8], mask: [u8; 4], offset: u64) {
    let shift = (offset % 4) as usize;
    // 32 bytes at a time over a fixed-size array: the compiler turns it into vector
    // XORs (SSE2 on any x86-64); then 8, then one by one. 32 and 8 are multiples of
    // 4: each step starts at the same phase of the mask.
    let wide: [u8; 32] = std::array::from_fn(|i| mask[(i + shift) % 4]);
    let mut chunks = data.chunks_exact_mut(32);
    for chunk in &mut chunks {
        for (b, m) in chunk.iter_mut().zip(&wide) {
            *b ^= m;
        }
    }
    xor_words(chunks.into_remainder(), phased(mask, offset));
}

/// Appends `data` unmasked to `out`; `offset` as for [`apply_mask`]. One pass: each
/// 32 bytes are XORed on their way into `out`.
pub(crate) fn unmask_into(out: &mut Vec<u8>, data: &[u8], mask: [u8; 4], offset: u64) {
    out.reserve(data.len());
    let mut chunks = data.chunks_exact(32);
    if data.len() >= 32 {
        let shift = (offset % 4) as usize;
        let wide: [u8; 32] = std::array::from_fn(|i| mask[(i + shift) % 4]);
        for chunk in &mut chunks {
            let block: [u8; 32] = std::array::from_fn(|i| chunk[i] ^ wide[i]);
            out.extend_from_slice(&block);
        }
    }
    let rest = chunks.remainder();
    let start = out.len();
    out.extend_from_slice(rest);
    xor_words(&mut out[start..], phased(mask, offset));
}

/// The header of an unmasked frame with a payload of `len` bytes, and its length.
pub(crate) fn header(fin: bool, rsv1: bool, opcode: OpCode, len: usize) -> ([u8; 10], usize) {
    let mut head = [0; 10];
    head[0] = (u8::from(fin) << 7) | (u8::from(rsv1) << 6) | opcode.bits();
    if len < 126 {
        head[1] = len as u8;
        (head, 2)
    } else if let Ok(len) = u16::try_from(len) {
        head[1] = 126;
        head[2..4].copy_from_slice(&len.to_be_bytes());
        (head, 4)
    } else {
        head[1] = 127;
        head[2..10].copy_from_slice(&(len as u64).to_be_bytes());
        (head, 10)
    }
}

/// Appends the header of an unmasked frame with a payload of `len` bytes.
pub(crate) fn encode_header(out: &mut Vec<u8>, fin: bool, rsv1: bool, opcode: OpCode, len: usize) {
    let (head, n) = header(fin, rsv1, opcode, len);
    out.extend_from_slice(&head[..n]);
}

/// Appends a whole unmasked frame.
pub(crate) fn encode_frame(out: &mut Vec<u8>, rsv1: bool, opcode: OpCode, payload: &[u8]) {
    encode_header(out, true, rsv1, opcode, payload.len());
    out.extend_from_slice(payload);
}

#[cfg(test)]
mod tests {
    use super::*;

    const MASK: [u8; 4] = [1, 2, 3, 4];

    fn header(bytes: &[u8]) -> Result<Option<(Header, usize)>, FrameError> {
        parse_header(bytes, false, 1 << 20)
    }

    #[test]
    fn headers_parse_or_wait_for_more() {
        let masked = |b0: u8, len: &[u8]| [&[b0][..], len, &MASK].concat();
        type Want = Option<(bool, OpCode, u64, usize)>;
        let cases: &[(&[u8], Want)] = &[
            (&[0x81], None),
            (&[0x81, 0x85, 1, 2, 3], None),
            (&masked(0x81, &[0x85]), Some((true, OpCode::Text, 5, 6))),
            (&masked(0x02, &[0x80 | 126, 0x01, 0x00]), Some((false, OpCode::Binary, 256, 8))),
            (&masked(0x80, &[0x80 | 127, 0, 0, 0, 0, 0, 1, 0, 0]), Some((true, OpCode::Continuation, 65536, 14))),
            (&masked(0x89, &[0x80]), Some((true, OpCode::Ping, 0, 6))),
            (&[0x82, 0x80 | 126, 0x01], None),
        ];
        for (bytes, want) in cases {
            let got = header(bytes).unwrap().map(|(h, n)| (h.fin, h.opcode, h.len, n));
            assert_eq!(got, *want, "{bytes:?}");
        }
    }

    #[test]
    fn bad_headers_fail_with_their_close_code() {
        let cases: &[(&[u8], CloseCode)] = &[
            (&[0x81, 0x05], CloseCode::PROTOCOL_ERROR),               // not masked
            (&[0xC1, 0x85], CloseCode::PROTOCOL_ERROR),               // RSV1 without deflate
            (&[0xA1, 0x85], CloseCode::PROTOCOL_ERROR),               // RSV2
            (&[0x83, 0x85], CloseCode::PROTOCOL_ERROR),               // reserved data opcode
            (&[0x8B, 0x85], CloseCode::PROTOCOL_ERROR),               // reserved control opcode
            (&[0x09, 0x80], CloseCode::PROTOCOL_ERROR),               // fragmented ping
            (&[0x89, 0x80 | 126, 0, 126], CloseCode::PROTOCOL_ERROR), // ping over 125
            (&[0x82, 0xFF, 0x80, 0, 0, 0, 0, 0, 0, 0], CloseCode::PROTOCOL_ERROR), // length MSB
            (&[0x82, 0xFF, 0, 0, 0, 0, 0x10, 0, 0, 0], CloseCode::MESSAGE_TOO_BIG),
        ];
        for (bytes, code) in cases {
            assert_eq!(header(bytes).unwrap_err().code, *code, "{bytes:?}");
        }
    }

    #[test]
    fn rsv1_is_allowed_on_data_frames_once_deflate_is_on() {
        let frame = [0xC1, 0x80, 0, 0, 0, 0];
        assert!(parse_header(&frame, true, 10).unwrap().unwrap().0.rsv1);
        assert!(parse_header(&[0xC9, 0x80, 0, 0, 0, 0], true, 10).is_err(), "RSV1 on a ping");
    }

    #[test]
    fn masking_from_any_offset_matches_bytewise() {
        // Every length to 77: the 32-byte, word and byte steps, and each mix of them.
        for len in 0..=77u8 {
            let data: Vec<u8> = (0..len).collect();
            for offset in 0..8u64 {
                let mut fast = data.clone();
                apply_mask(&mut fast, MASK, offset);
                let slow: Vec<u8> = data.iter().enumerate().map(|(i, b)| b ^ MASK[(i + offset as usize) % 4]).collect();
                assert_eq!(fast, slow, "length {len}, offset {offset}");
            }
        }
    }

    #[test]
    fn unmasking_while_copying_matches_in_place() {
        for len in 0..=101u8 {
            let data: Vec<u8> = (0..len).collect();
            for offset in 0..8u64 {
                let mut in_place = data.clone();
                apply_mask(&mut in_place, MASK, offset);
                let mut copied = vec![7];
                unmask_into(&mut copied, &data, MASK, offset);
                assert_eq!(copied[1..], in_place[..], "length {len}, offset {offset}");
            }
        }
    }

    #[test]
    fn headers_encode_with_the_shortest_length() {
        let cases: &[(usize, &[u8])] =
            &[(5, &[0x82, 5]), (126, &[0x82, 126, 0, 126]), (65536, &[0x82, 127, 0, 0, 0, 0, 0, 1, 0, 0])];
        for (len, want) in cases {
            let mut out = Vec::new();
            encode_header(&mut out, true, false, OpCode::Binary, *len);
            assert_eq!(out, *want, "{len}");
        }
    }
}
