//! HTTP/2 frames (RFC 9113 §4, §6) read straight from a connection's read buffer and
//! written straight into its write buffer: no frame is ever an allocation of its own.

/// The frame header's length (§4.1).
pub(crate) const HEADER_LEN: usize = 9;
/// SETTINGS_MAX_FRAME_SIZE's initial value, and the largest frame this side accepts
/// (it never raises its own setting).
pub(crate) const DEFAULT_MAX_FRAME: u32 = 16_384;
/// The largest flow-control window (§6.9.1).
pub(crate) const MAX_WINDOW: i64 = (1 << 31) - 1;
/// SETTINGS_INITIAL_WINDOW_SIZE's initial value (§6.5.2).
pub(crate) const DEFAULT_WINDOW: i64 = 65_535;

/// Frame types (§6).
pub(crate) mod kind {
    pub(crate) const DATA: u8 = 0x0;
    pub(crate) const HEADERS: u8 = 0x1;
    pub(crate) const PRIORITY: u8 = 0x2;
    pub(crate) const RST_STREAM: u8 = 0x3;
    pub(crate) const SETTINGS: u8 = 0x4;
    pub(crate) const PUSH_PROMISE: u8 = 0x5;
    pub(crate) const PING: u8 = 0x6;
    pub(crate) const GOAWAY: u8 = 0x7;
    pub(crate) const WINDOW_UPDATE: u8 = 0x8;
    pub(crate) const CONTINUATION: u8 = 0x9;
}

/// Frame flags (§6).
pub(crate) mod flag {
    pub(crate) const END_STREAM: u8 = 0x1;
    pub(crate) const ACK: u8 = 0x1;
    pub(crate) const END_HEADERS: u8 = 0x4;
    pub(crate) const PADDED: u8 = 0x8;
    pub(crate) const PRIORITY: u8 = 0x20;
}

/// Error codes (§7).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Code(pub(crate) u32);

impl Code {
    pub(crate) const NO_ERROR: Code = Code(0x0);
    pub(crate) const PROTOCOL_ERROR: Code = Code(0x1);
    pub(crate) const INTERNAL_ERROR: Code = Code(0x2);
    pub(crate) const FLOW_CONTROL_ERROR: Code = Code(0x3);
    pub(crate) const STREAM_CLOSED: Code = Code(0x5);
    pub(crate) const FRAME_SIZE_ERROR: Code = Code(0x6);
    pub(crate) const REFUSED_STREAM: Code = Code(0x7);
    pub(crate) const CANCEL: Code = Code(0x8);
    pub(crate) const COMPRESSION_ERROR: Code = Code(0x9);
    pub(crate) const ENHANCE_YOUR_CALM: Code = Code(0xb);
}

/// A frame's header (§4.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Head {
    pub(crate) len: u32,
    pub(crate) kind: u8,
    pub(crate) flags: u8,
    /// The stream identifier, its reserved bit cleared ("MUST be ignored when
    /// receiving", §4.1).
    pub(crate) stream: u32,
}

impl Head {
    /// Reads a frame header from the first [`HEADER_LEN`] bytes of `b`, if there are.
    #[inline]
    pub(crate) fn parse(b: &[u8]) -> Option<Head> {
        let b: &[u8; HEADER_LEN] = b.get(..HEADER_LEN)?.try_into().ok()?;
        Some(Head {
            len: u32::from_be_bytes([0, b[0], b[1], b[2]]),
            kind: b[3],
            flags: b[4],
            stream: u32::from_be_bytes([b[5], b[6], b[7], b[8]]) & 0x7fff_ffff,
        })
    }

    /// Whether flag `f` is set.
    #[inline]
    pub(crate) fn has(&self, f: u8) -> bool {
        self.flags & f != 0
    }
}

/// A 31-bit big-endian value, its reserved bit cleared.
#[inline]
pub(crate) fn u31(b: &[u8]) -> u32 {
    u32::from_be_bytes([b[0], b[1], b[2], b[3]]) & 0x7fff_ffff
}

/// The content of a DATA or HEADERS payload without its padding (§6.1, §6.2): "If the
/// length of the padding is the length of the frame payload or greater, the recipient
/// MUST treat this as a connection error of type PROTOCOL_ERROR."
pub(crate) fn unpad<'a>(head: &Head, payload: &'a [u8]) -> Result<&'a [u8], Code> {
    if !head.has(flag::PADDED) {
        return Ok(payload);
    }
    let (&pad, rest) = payload.split_first().ok_or(Code::FRAME_SIZE_ERROR)?;
    let keep = rest.len().checked_sub(pad as usize).ok_or(Code::PROTOCOL_ERROR)?;
    Ok(&rest[..keep])
}

/// A HEADERS priority block (§6.2): the stream depended on.
pub(crate) fn priority_dependency(block: &[u8]) -> Option<u32> {
    (block.len() >= 5).then(|| u31(block))
}

/// Appends a frame header.
#[inline]
pub(crate) fn put_head(out: &mut Vec<u8>, len: usize, kind: u8, flags: u8, stream: u32) {
    let l = (len as u32).to_be_bytes();
    let s = stream.to_be_bytes();
    out.extend_from_slice(&[l[1], l[2], l[3], kind, flags, s[0], s[1], s[2], s[3]]);
}

/// Appends a SETTINGS frame with `pairs` (§6.5.1).
pub(crate) fn put_settings(out: &mut Vec<u8>, pairs: &[(u16, u32)]) {
    put_head(out, pairs.len() * 6, kind::SETTINGS, 0, 0);
    for &(id, value) in pairs {
        out.extend_from_slice(&id.to_be_bytes());
        out.extend_from_slice(&value.to_be_bytes());
    }
}

/// Appends an empty SETTINGS frame with ACK.
pub(crate) fn put_settings_ack(out: &mut Vec<u8>) {
    put_head(out, 0, kind::SETTINGS, flag::ACK, 0);
}

/// Appends a PING with ACK echoing `payload` (§6.7).
pub(crate) fn put_ping_ack(out: &mut Vec<u8>, payload: &[u8]) {
    put_head(out, 8, kind::PING, flag::ACK, 0);
    out.extend_from_slice(payload);
}

/// Appends a RST_STREAM (§6.4).
pub(crate) fn put_rst(out: &mut Vec<u8>, stream: u32, code: Code) {
    put_head(out, 4, kind::RST_STREAM, 0, stream);
    out.extend_from_slice(&code.0.to_be_bytes());
}

/// Appends a GOAWAY naming `last` as the last stream processed (§6.8).
pub(crate) fn put_goaway(out: &mut Vec<u8>, last: u32, code: Code) {
    put_head(out, 8, kind::GOAWAY, 0, 0);
    out.extend_from_slice(&last.to_be_bytes());
    out.extend_from_slice(&code.0.to_be_bytes());
}

/// Appends a WINDOW_UPDATE of `increment` (1..=2^31-1) (§6.9).
pub(crate) fn put_window_update(out: &mut Vec<u8>, stream: u32, increment: u32) {
    put_head(out, 4, kind::WINDOW_UPDATE, 0, stream);
    out.extend_from_slice(&increment.to_be_bytes());
}

/// Appends a DATA frame carrying `data`.
#[inline]
pub(crate) fn put_data(out: &mut Vec<u8>, stream: u32, data: &[u8], end: bool) {
    put_head(out, data.len(), kind::DATA, if end { flag::END_STREAM } else { 0 }, stream);
    out.extend_from_slice(data);
}

/// Appends a header block as HEADERS and, past `max_frame` bytes, CONTINUATION frames
/// (§6.10), END_STREAM on the HEADERS when `end`.
pub(crate) fn put_header_block(out: &mut Vec<u8>, stream: u32, block: &[u8], end: bool, max_frame: usize) {
    let end_stream = if end { flag::END_STREAM } else { 0 };
    let mut pieces = block.chunks(max_frame.max(1)).peekable();
    let first = pieces.next().unwrap_or(&[]);
    let last = pieces.peek().is_none();
    put_head(out, first.len(), kind::HEADERS, end_stream | if last { flag::END_HEADERS } else { 0 }, stream);
    out.extend_from_slice(first);
    while let Some(piece) = pieces.next() {
        let last = pieces.peek().is_none();
        put_head(out, piece.len(), kind::CONTINUATION, if last { flag::END_HEADERS } else { 0 }, stream);
        out.extend_from_slice(piece);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_written_header_reads_back_with_its_reserved_bit_cleared() {
        let mut out = Vec::new();
        put_head(&mut out, 0x01_02_03, kind::HEADERS, flag::END_HEADERS, 0xffff_ffff);
        let head = Head::parse(&out).unwrap();
        assert_eq!(head, Head { len: 0x01_02_03, kind: kind::HEADERS, flags: flag::END_HEADERS, stream: 0x7fff_ffff });
        assert_eq!(Head::parse(&out[..8]), None);
    }

    #[test]
    fn padding_as_long_as_the_payload_is_a_protocol_error() {
        let head = Head { len: 4, kind: kind::DATA, flags: flag::PADDED, stream: 1 };
        assert_eq!(unpad(&head, &[2, b'a', 0, 0]), Ok(&b"a"[..]));
        assert_eq!(unpad(&head, &[3, b'a', 0, 0]), Ok(&b""[..]));
        assert_eq!(unpad(&head, &[4, b'a', 0, 0]), Err(Code::PROTOCOL_ERROR));
    }

    #[test]
    fn a_large_header_block_is_split_into_continuations() {
        let mut out = Vec::new();
        put_header_block(&mut out, 3, &[7; 10], true, 4);
        let kinds: Vec<(u8, u8, u32)> = {
            let mut at = 0;
            let mut v = Vec::new();
            while let Some(h) = Head::parse(&out[at..]) {
                v.push((h.kind, h.flags, h.len));
                at += HEADER_LEN + h.len as usize;
            }
            v
        };
        assert_eq!(
            kinds,
            [
                (kind::HEADERS, flag::END_STREAM, 4),
                (kind::CONTINUATION, 0, 4),
                (kind::CONTINUATION, flag::END_HEADERS, 2)
            ]
        );
    }
}
