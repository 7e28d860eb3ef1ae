//! Incremental UTF-8 validation: a text message is checked as its bytes arrive, so a
//! bad one fails the connection at once (RFC 6455 §8.1), not after the rest of a long
//! message has been read. A code point split between reads is carried over.

/// Validates a text message fed in pieces.
#[derive(Debug, Default)]
pub(crate) struct Utf8Validator {
    /// The start of a code point cut off at the end of the last piece.
    carry: [u8; 4],
    carry_len: usize,
}

/// The bytes are not UTF-8 (close code 1007).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct InvalidUtf8;

impl Utf8Validator {
    /// Checks the next piece; an incomplete code point at its end is kept for the next.
    pub(crate) fn feed(&mut self, mut piece: &[u8]) -> Result<(), InvalidUtf8> {
        if self.carry_len > 0 {
            // Complete the carried code point, one byte at a time: at most 3 more.
            while self.carry_len < 4 {
                let Some((&b, rest)) = piece.split_first() else { return Ok(()) };
                self.carry[self.carry_len] = b;
                self.carry_len += 1;
                piece = rest;
                match std::str::from_utf8(&self.carry[..self.carry_len]) {
                    Ok(_) => break,
                    Err(e) if e.error_len().is_some() => return Err(InvalidUtf8),
                    Err(_) => {}
                }
            }
            self.carry_len = 0;
        }
        match std::str::from_utf8(piece) {
            Ok(_) => Ok(()),
            Err(e) if e.error_len().is_some() => Err(InvalidUtf8),
            Err(e) => {
                let rest = &piece[e.valid_up_to()..];
                self.carry[..rest.len()].copy_from_slice(rest);
                self.carry_len = rest.len();
                Ok(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds `bytes` split at every possible point into two and three pieces.
    fn every_split(bytes: &[u8]) -> Vec<Result<(), InvalidUtf8>> {
        let mut out = Vec::new();
        for i in 0..=bytes.len() {
            for j in i..=bytes.len() {
                let mut v = Utf8Validator::default();
                let r = v.feed(&bytes[..i]).and_then(|()| v.feed(&bytes[i..j])).and_then(|()| v.feed(&bytes[j..]));
                // A code point still incomplete at the end is an error too.
                out.push(r.and(if v.carry_len == 0 { Ok(()) } else { Err(InvalidUtf8) }));
            }
        }
        out
    }

    #[test]
    fn pieces_agree_with_whole_validation() {
        let cases: &[&[u8]] = &[
            "Hello-µ@ßöäüàá-UTF-8!!".as_bytes(),
            "κόσμε".as_bytes(),
            &[0xF0, 0x90, 0x80, 0x80],
            &[0xCE, 0xBA, 0xE1, 0xBD, 0xB9, 0xCF, 0x83, 0xCE, 0xBC, 0xCE, 0xB5, 0xED, 0xA0, 0x80],
            &[0xF4, 0x90, 0x80, 0x80],
            &[0xC0, 0xAF],
            &[0xE0, 0x80],
            &[0xCE, 0xBA, 0xE1],
            b"",
        ];
        for bytes in cases {
            let whole = std::str::from_utf8(bytes).is_ok();
            for (n, got) in every_split(bytes).into_iter().enumerate() {
                assert_eq!(got.is_ok(), whole, "{bytes:?} split #{n}");
            }
        }
    }

    #[test]
    fn an_invalid_byte_fails_before_the_message_ends() {
        let mut v = Utf8Validator::default();
        assert!(v.feed(&[0xCE, 0xBA, 0xE1, 0xBD, 0xB9, 0xCF, 0x83, 0xCE, 0xBC, 0xCE, 0xB5, 0xED, 0xA0]).is_err());
        let mut v = Utf8Validator::default();
        assert!(v.feed(&[0xF4]).is_ok());
        assert_eq!(v.feed(&[0x90]), Err(InvalidUtf8), "U+110000 and above fail on their second byte");
    }
}
