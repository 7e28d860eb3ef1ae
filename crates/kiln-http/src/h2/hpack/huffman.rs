//! Huffman decoding of HPACK string literals (RFC 7541 §5.2, Appendix B).
//!
//! The code is canonical: the codes of one length are consecutive numbers. So a table
//! of, per length, the first code, how many codes there are and where their symbols
//! start decodes it one bit at a time with one subtraction and one comparison, built
//! once from the code table `httlib-huffman` publishes (Appendix B's codes as data).

use std::sync::OnceLock;

use httlib_huffman::encoder::table::ENCODE_TABLE;

/// The longest code (EOS's), in bits.
const MAX_LEN: usize = 30;
/// The end-of-string symbol, which must not appear in a string (§5.2).
const EOS: u16 = 256;

/// The canonical decoding table.
struct Table {
    /// Per code length: the first code of that length.
    first: [u32; MAX_LEN + 1],
    /// Per code length: how many codes have it.
    count: [u32; MAX_LEN + 1],
    /// Per code length: where its symbols start in `symbols`.
    offset: [u16; MAX_LEN + 1],
    /// The symbols in the order of their codes.
    symbols: [u16; 257],
}

fn table() -> &'static Table {
    static TABLE: OnceLock<Table> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut order: Vec<u16> = (0..257).collect();
        order.sort_by_key(|&s| {
            let (len, code) = ENCODE_TABLE[s as usize];
            (len, code)
        });
        let mut t =
            Table { first: [0; MAX_LEN + 1], count: [0; MAX_LEN + 1], offset: [0; MAX_LEN + 1], symbols: [0; 257] };
        for (i, &s) in order.iter().enumerate() {
            let (len, code) = ENCODE_TABLE[s as usize];
            let len = len as usize;
            if t.count[len] == 0 {
                t.first[len] = code;
                t.offset[len] = i as u16;
            }
            t.count[len] += 1;
            t.symbols[i] = s;
        }
        t
    })
}

/// The string is not valid Huffman code: EOS inside it, or padding that is longer
/// than 7 bits or not the most significant bits of EOS (all ones).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Invalid;

/// Decodes `src`, appending the text to `dst`.
pub(crate) fn decode(src: &[u8], dst: &mut Vec<u8>) -> Result<(), Invalid> {
    let t = table();
    let (mut code, mut len) = (0u32, 0usize);
    for &byte in src {
        for shift in (0..8).rev() {
            code = code << 1 | u32::from(byte >> shift & 1);
            len += 1;
            let index = code.wrapping_sub(t.first[len]);
            if index < t.count[len] {
                let symbol = t.symbols[t.offset[len] as usize + index as usize];
                if symbol == EOS {
                    return Err(Invalid);
                }
                dst.push(symbol as u8);
                (code, len) = (0, 0);
            } else if len == MAX_LEN {
                return Err(Invalid);
            }
        }
    }
    // §5.2: padding is at most 7 bits, all ones.
    if len > 7 || code != (1 << len) - 1 {
        return Err(Invalid);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_code_table_is_canonical_and_every_byte_round_trips() {
        for len in 1..=MAX_LEN {
            let mut codes: Vec<u32> =
                ENCODE_TABLE.iter().filter(|(l, _)| *l as usize == len).map(|&(_, c)| c).collect();
            codes.sort();
            assert!(codes.windows(2).all(|w| w[1] == w[0] + 1), "codes of length {len} are not consecutive");
        }
        let text: Vec<u8> = (0..=255u8).chain(b"www.example.com".iter().copied()).collect();
        let mut coded = Vec::new();
        httlib_huffman::encode(&text, &mut coded).unwrap();
        let mut back = Vec::new();
        decode(&coded, &mut back).unwrap();
        assert_eq!(back, text);
    }

    #[test]
    fn bad_padding_and_eos_are_refused() {
        // RFC 7541 C.4.1: "www.example.com".
        let good = [0xf1, 0xe3, 0xc2, 0xe5, 0xf2, 0x3a, 0x6b, 0xa0, 0xab, 0x90, 0xf4, 0xff];
        let mut out = Vec::new();
        assert_eq!(decode(&good, &mut out), Ok(()));
        assert_eq!(out, b"www.example.com");
        // Padding of eight ones: longer than 7 bits.
        assert_eq!(
            decode(&[0xf1, 0xe3, 0xc2, 0xe5, 0xf2, 0x3a, 0x6b, 0xa0, 0xab, 0x90, 0xf4, 0xff, 0xff], &mut out),
            Err(Invalid)
        );
        // 'a' (00011) padded with zeros.
        assert_eq!(decode(&[0b0001_1000], &mut out), Err(Invalid));
        // EOS (thirty ones) inside the string.
        assert_eq!(decode(&[0xff, 0xff, 0xff, 0xff], &mut out), Err(Invalid));
    }
}
