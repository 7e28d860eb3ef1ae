//! Huffman decoding of HPACK string literals (RFC 7541 §5.2, Appendix B).
//!
//! The code is canonical: the codes of one length are consecutive numbers. So a table
//! of, per length, the first code, how many codes there are and where their symbols
//! start decodes any code with one subtraction and one comparison per length tried,
//! built once from the code table `httlib-huffman` publishes (Appendix B's codes as
//! data). In front of it, a table of every 8-bit prefix gives the symbols whose codes
//! are at most 8 bits long (all letters, digits and the usual punctuation of paths,
//! hosts and header values) in one look-up.

use std::sync::OnceLock;

use httlib_huffman::encoder::table::ENCODE_TABLE;

/// The longest code (EOS's), in bits.
const MAX_LEN: usize = 30;
/// The end-of-string symbol, which must not appear in a string (§5.2).
const EOS: u16 = 256;
/// Bits looked up at once by [`Table::short`].
const SHORT: u32 = 8;

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
    /// Per 8-bit prefix: the symbol whose code (at most 8 bits) begins it and the code's
    /// length; length 0 when the prefix begins a longer code.
    short: [(u8, u8); 1 << SHORT],
}

fn table() -> &'static Table {
    static TABLE: OnceLock<Table> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut order: Vec<u16> = (0..257).collect();
        order.sort_by_key(|&s| {
            let (len, code) = ENCODE_TABLE[s as usize];
            (len, code)
        });
        let mut t = Table {
            first: [0; MAX_LEN + 1],
            count: [0; MAX_LEN + 1],
            offset: [0; MAX_LEN + 1],
            symbols: [0; 257],
            short: [(0, 0); 1 << SHORT],
        };
        for (i, &s) in order.iter().enumerate() {
            let (len, code) = ENCODE_TABLE[s as usize];
            let len = len as usize;
            if t.count[len] == 0 {
                t.first[len] = code;
                t.offset[len] = i as u16;
            }
            t.count[len] += 1;
            t.symbols[i] = s;
            if len as u32 <= SHORT {
                // Every prefix that begins with this code.
                let spare = SHORT - len as u32;
                for rest in 0..1u32 << spare {
                    t.short[((code << spare) | rest) as usize] = (s as u8, len as u8);
                }
            }
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
    // The bits not yet decoded, the first at bit 63; `have` of them are input.
    let (mut bits, mut have, mut at) = (0u64, 0u32, 0usize);
    loop {
        while have <= 56 && at < src.len() {
            bits |= u64::from(src[at]) << (56 - have);
            have += 8;
            at += 1;
        }
        let (symbol, len) = match t.short[(bits >> (64 - SHORT)) as usize] {
            (symbol, len) if len != 0 && u32::from(len) <= have => (u16::from(symbol), u32::from(len)),
            _ => match long(t, bits, have) {
                Some(found) => found,
                // What is left begins no whole code: the padding.
                None => break,
            },
        };
        if symbol == EOS {
            return Err(Invalid);
        }
        dst.push(symbol as u8);
        bits <<= len;
        have -= len;
    }
    // §5.2: padding is at most 7 bits, all ones.
    if have > 7 || (have > 0 && bits >> (64 - have) != (1 << have) - 1) {
        return Err(Invalid);
    }
    Ok(())
}

/// The symbol whose code begins `bits` (of which `have` are input), and its length,
/// found length by length.
fn long(t: &Table, bits: u64, have: u32) -> Option<(u16, u32)> {
    for len in 1..=(MAX_LEN as u32).min(have) {
        let code = (bits >> (64 - len)) as u32;
        let index = code.wrapping_sub(t.first[len as usize]);
        if index < t.count[len as usize] {
            return Some((t.symbols[t.offset[len as usize] as usize + index as usize], len));
        }
    }
    None
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
        // Each byte alone too: every code length ends a string, with its padding.
        for byte in 0..=255u8 {
            let (mut coded, mut back) = (Vec::new(), Vec::new());
            httlib_huffman::encode(&[byte, byte, b'a'], &mut coded).unwrap();
            decode(&coded, &mut back).unwrap();
            assert_eq!(back, [byte, byte, b'a']);
        }
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
