//! Incremental decoder for chunked request bodies (RFC 9112 §7.1).

use http::StatusCode;

use crate::rejection::Rejection;

/// Bytes of chunk extensions allowed in one body; extensions carry nothing kiln uses.
pub const MAX_CHUNK_EXTENSIONS: usize = 16 * 1024;
/// Bytes of trailer fields allowed after the last chunk; they are read and discarded.
pub const MAX_TRAILER_BYTES: usize = 16 * 1024;
/// Hex digits in a chunk size, leading zeros included. RFC 9112 §7.1 allows any
/// number of leading zeros; 16 significant digits fill a `u64` and more overflow.
const MAX_SIZE_DIGITS: u8 = 64;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Reading the hex digits of a chunk size.
    Size,
    /// Whitespace after the size, which only a `;` may follow (BWS, RFC 9112 §7.1.1).
    SizeWs,
    /// Inside `;ext...` after the size.
    Extension,
    /// Saw CR after the size line; LF must follow.
    SizeLf,
    /// Copying chunk data.
    Data,
    /// Chunk data ended; CR must follow.
    DataCr,
    /// LF after the data's CR.
    DataLf,
    /// At the start of a trailer line (or of the final empty line).
    TrailerStart,
    /// Inside a trailer field line.
    Trailer,
    /// Saw CR inside or ending a trailer line; LF must follow.
    TrailerLf,
    /// Saw CR of the final empty line; LF must follow.
    EndLf,
    /// The body is complete.
    Done,
}

/// Decodes a chunked body fed in pieces, appending the data to an output buffer.
#[derive(Debug)]
pub(crate) struct ChunkedDecoder {
    state: State,
    /// Size of the chunk being read, then bytes of it still to copy.
    remaining: u64,
    size_digits: u8,
    extension_bytes: usize,
    trailer_bytes: usize,
    /// Whether the chunk whose size line is being read is the last (size 0).
    last: bool,
}

const fn bad(reason: &'static str) -> Rejection {
    Rejection { status: StatusCode::BAD_REQUEST, reason }
}

impl ChunkedDecoder {
    pub(crate) fn new() -> Self {
        ChunkedDecoder {
            state: State::Size,
            remaining: 0,
            size_digits: 0,
            extension_bytes: 0,
            trailer_bytes: 0,
            last: false,
        }
    }

    /// Whether the whole body has been decoded.
    pub(crate) fn is_done(&self) -> bool {
        self.state == State::Done
    }

    /// Decodes as much of `input` as possible into `out`, which may grow to at most
    /// `max_body` bytes. Returns how many bytes of `input` were consumed; stops right
    /// after the body's last byte so that a pipelined request behind it is left alone.
    pub(crate) fn decode(&mut self, input: &[u8], out: &mut Vec<u8>, max_body: usize) -> Result<usize, Rejection> {
        let mut i = 0;
        while i < input.len() && self.state != State::Done {
            let b = input[i];
            match self.state {
                State::Size => match b {
                    b'0'..=b'9' | b'a'..=b'f' | b'A'..=b'F' => {
                        // A size whose top four bits are set would overflow on the next
                        // digit; leading zeros never do.
                        if self.size_digits == MAX_SIZE_DIGITS || self.remaining >> 60 != 0 {
                            return Err(bad("chunk size overflows"));
                        }
                        let digit = (b as char).to_digit(16).unwrap_or(0);
                        self.remaining = self.remaining << 4 | u64::from(digit);
                        self.size_digits += 1;
                    }
                    b';' | b'\r' | b' ' | b'\t' if self.size_digits > 0 => {
                        self.end_size(out.len(), max_body)?;
                        self.state = match b {
                            b';' => State::Extension,
                            b'\r' => State::SizeLf,
                            _ => State::SizeWs,
                        };
                    }
                    _ => return Err(bad("invalid chunk size")),
                },
                State::SizeWs => match b {
                    b' ' | b'\t' => self.count_extension()?,
                    b';' => self.state = State::Extension,
                    _ => return Err(bad("invalid chunk size")),
                },
                State::Extension => match b {
                    b'\r' => self.state = State::SizeLf,
                    b'\n' | 0 => return Err(bad("invalid chunk extension")),
                    _ => self.count_extension()?,
                },
                State::SizeLf => {
                    if b != b'\n' {
                        return Err(bad("chunk size line not ended by CRLF"));
                    }
                    self.size_digits = 0;
                    self.state = if self.last { State::TrailerStart } else { State::Data };
                }
                State::Data => {
                    let take = (input.len() - i).min(self.remaining as usize);
                    out.extend_from_slice(&input[i..i + take]);
                    self.remaining -= take as u64;
                    i += take;
                    if self.remaining == 0 {
                        self.state = State::DataCr;
                    }
                    continue;
                }
                State::DataCr => {
                    if b != b'\r' {
                        return Err(bad("chunk data not followed by CRLF"));
                    }
                    self.state = State::DataLf;
                }
                State::DataLf => {
                    if b != b'\n' {
                        return Err(bad("chunk data not followed by CRLF"));
                    }
                    self.state = State::Size;
                }
                State::TrailerStart => {
                    self.state = match b {
                        b'\r' => State::EndLf,
                        b'\n' | 0 | b' ' | b'\t' => return Err(bad("invalid trailer")),
                        _ => State::Trailer,
                    };
                    self.count_trailer()?;
                }
                State::Trailer => {
                    match b {
                        b'\r' => self.state = State::TrailerLf,
                        b'\n' | 0 => return Err(bad("invalid trailer")),
                        _ => {}
                    }
                    self.count_trailer()?;
                }
                State::TrailerLf => {
                    if b != b'\n' {
                        return Err(bad("trailer line not ended by CRLF"));
                    }
                    self.state = State::TrailerStart;
                }
                State::EndLf => {
                    if b != b'\n' {
                        return Err(bad("chunked body not ended by CRLF"));
                    }
                    self.state = State::Done;
                }
                State::Done => break,
            }
            i += 1;
        }
        Ok(i)
    }

    /// The size line's digits are complete: checks the size against the room left.
    fn end_size(&mut self, decoded: usize, max_body: usize) -> Result<(), Rejection> {
        // Compared as room left, not as a sum: a 16-digit size plus what is already
        // decoded overflows u64 (found by the chunked fuzz target).
        let room = max_body.saturating_sub(decoded) as u64;
        if self.remaining > room {
            return Err(Rejection { status: StatusCode::PAYLOAD_TOO_LARGE, reason: "request body too large" });
        }
        self.last = self.remaining == 0;
        Ok(())
    }

    fn count_extension(&mut self) -> Result<(), Rejection> {
        self.extension_bytes += 1;
        if self.extension_bytes > MAX_CHUNK_EXTENSIONS {
            return Err(bad("chunk extensions too long"));
        }
        Ok(())
    }

    fn count_trailer(&mut self) -> Result<(), Rejection> {
        self.trailer_bytes += 1;
        if self.trailer_bytes > MAX_TRAILER_BYTES {
            return Err(Rejection {
                status: StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
                reason: "trailer fields too large",
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode_all(input: &[u8]) -> Result<(Vec<u8>, usize, bool), Rejection> {
        let mut d = ChunkedDecoder::new();
        let mut out = Vec::new();
        let used = d.decode(input, &mut out, 1 << 20)?;
        Ok((out, used, d.is_done()))
    }

    #[test]
    fn decodes_chunks_and_stops_at_the_end() {
        let (out, used, done) = decode_all(b"5\r\nhello\r\n6;a=b\r\n world\r\n0\r\n\r\nGET /next").unwrap();
        assert_eq!(out, b"hello world");
        assert!(done);
        assert_eq!(used, b"5\r\nhello\r\n6;a=b\r\n world\r\n0\r\n\r\n".len());
    }

    #[test]
    fn trailers_are_skipped() {
        let (out, _, done) = decode_all(b"1\r\na\r\n0\r\nX-Sum: 1\r\nY: 2\r\n\r\n").unwrap();
        assert_eq!(out, b"a");
        assert!(done);
    }

    #[test]
    fn every_split_point_gives_the_same_body() {
        let raw = b"3\r\nabc\r\nA\r\n0123456789\r\n0\r\nT: v\r\n\r\n";
        for cut in 0..raw.len() {
            let mut d = ChunkedDecoder::new();
            let mut out = Vec::new();
            let a = d.decode(&raw[..cut], &mut out, 1 << 20).unwrap();
            assert_eq!(a, cut, "a prefix is consumed whole");
            let b = d.decode(&raw[cut..], &mut out, 1 << 20).unwrap();
            assert_eq!(a + b, raw.len());
            assert!(d.is_done());
            assert_eq!(out, b"abc0123456789");
        }
    }

    #[test]
    fn malformed_chunks_are_refused() {
        let cases: &[&[u8]] = &[
            b"0x5\r\nhello\r\n0\r\n\r\n",
            b"+5\r\nhello\r\n0\r\n\r\n",
            b"-5\r\nhello\r\n0\r\n\r\n",
            b" 5\r\nhello\r\n0\r\n\r\n",
            b"5 \r\nhello\r\n0\r\n\r\n",
            b"\r\nhello\r\n0\r\n\r\n",
            b"11111111111111111\r\n",
            b"5\r\nhelloXX0\r\n\r\n",
            b"5\nhello\r\n0\r\n\r\n",
            b"5\r\nhello\n0\r\n\r\n",
            b"5;a\nb\r\nhello\r\n0\r\n\r\n",
            b"0\r\n\rX",
            b"0\r\n bad: trailer\r\n\r\n",
        ];
        for raw in cases {
            assert!(decode_all(raw).is_err(), "{}", String::from_utf8_lossy(raw).escape_debug());
        }
    }

    #[test]
    fn valid_chunk_syntax_with_leading_zeros_and_whitespace_before_a_semicolon_is_accepted() {
        // Issue 13: RFC 9112 §7.1 allows any number of leading zeros in a size, and
        // §7.1.1 bad whitespace before `;`; both were refused.
        let cases: &[&[u8]] = &[
            b"00000000000000000000005\r\nhello\r\n00000000000000000000\r\n\r\n",
            b"5 ;a=b\r\nhello\r\n0\t;x\r\n\r\n",
            b"5 \t ;\r\nhello\r\n0\r\n\r\n",
        ];
        for raw in cases {
            let (out, used, done) = decode_all(raw)
                .unwrap_or_else(|r| panic!("{}: {}", r.reason, String::from_utf8_lossy(raw).escape_debug()));
            assert_eq!((out.as_slice(), used, done), (&b"hello"[..], raw.len(), true));
        }
        assert!(decode_all(b"1111111111111111f\r\n").is_err(), "17 significant digits still overflow");
        assert!(decode_all(&[&vec![b'0'; 65][..], b"\r\n\r\n"].concat()).is_err(), "the size line is bounded");
    }

    #[test]
    fn a_huge_chunk_size_after_data_is_refused_not_wrapped_past_the_limit() {
        // Regression: `decoded + size` overflowed for a size of 16 `f`s, which in a
        // release build wrapped around and let the chunk past the body limit.
        let raw = b"1\r\nh\r\nffffffffffffffff\r\n";
        let mut d = ChunkedDecoder::new();
        let err = d.decode(raw, &mut Vec::new(), 1 << 20).unwrap_err();
        assert_eq!(err.status, StatusCode::PAYLOAD_TOO_LARGE);
    }

    #[test]
    fn oversized_extensions_bodies_and_trailers_are_refused() {
        let ext = [&b"1;"[..], &vec![b'x'; MAX_CHUNK_EXTENSIONS + 1], b"\r\na\r\n0\r\n\r\n"].concat();
        assert_eq!(decode_all(&ext).unwrap_err().reason, "chunk extensions too long");
        let mut d = ChunkedDecoder::new();
        let err = d.decode(b"400\r\n", &mut Vec::new(), 100).unwrap_err();
        assert_eq!(err.status, StatusCode::PAYLOAD_TOO_LARGE);
        let trailer = [&b"0\r\nX: "[..], &vec![b'y'; MAX_TRAILER_BYTES], b"\r\n\r\n"].concat();
        assert_eq!(decode_all(&trailer).unwrap_err().status.as_u16(), 431);
    }
}
