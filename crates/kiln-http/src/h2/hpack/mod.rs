//! HPACK decoding (RFC 7541) for request header blocks: integers and string literals
//! read in place from the block, Huffman strings decoded into a reused buffer
//! ([`huffman`]), the static table and the connection's dynamic table ([`table`]).
//! Every field is handed to a callback as borrowed bytes; nothing is allocated per
//! field but the copies the dynamic table keeps (in one buffer per connection).

mod huffman;
mod table;

use table::{DynamicTable, Name};

/// The block is not valid HPACK: a COMPRESSION_ERROR (RFC 9113 §4.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Invalid;

/// One connection's decoding state: its dynamic table and scratch buffers.
pub(crate) struct Decoder {
    table: DynamicTable,
    /// Boxed and dropped while the connection idles: inline, the two empty buffers
    /// would cost every idle connection 48 bytes.
    scratch: Option<Box<Scratch>>,
}

/// Where Huffman-coded names and values are decoded to.
#[derive(Default)]
struct Scratch {
    name: Vec<u8>,
    value: Vec<u8>,
}

impl Decoder {
    /// A decoder whose table may grow to `max_size` bytes (SETTINGS_HEADER_TABLE_SIZE).
    pub(crate) fn new(max_size: usize) -> Self {
        Decoder { table: DynamicTable::new(max_size), scratch: None }
    }

    /// Gives back what the scratch buffers grew to and fits the table to its entries,
    /// the connection idling.
    pub(crate) fn shrink(&mut self) {
        self.scratch = None;
        self.table.shrink();
    }

    /// Decodes `block`, calling `field` with each name and value in order.
    pub(crate) fn decode(&mut self, block: &[u8], mut field: impl FnMut(&[u8], &[u8])) -> Result<(), Invalid> {
        let Decoder { table, scratch } = self;
        let scratch = scratch.get_or_insert_with(Box::default);
        let mut at = 0;
        let mut fields_seen = false;
        while at < block.len() {
            let first = block[at];
            if first & 0x80 != 0 {
                // §6.1: an indexed field.
                let (index, n) = integer(&block[at..], 7)?;
                at += n;
                let (name, value) = table.get(index).ok_or(Invalid)?;
                field(name, value);
            } else if first & 0xe0 == 0x20 {
                // §6.3: a table size update, allowed only at the block's start (§4.2).
                if fields_seen {
                    return Err(Invalid);
                }
                let (size, n) = integer(&block[at..], 5)?;
                at += n;
                table.resize(size)?;
                continue;
            } else {
                // §6.2: a literal, with incremental indexing (01), without (0000) or
                // never indexed (0001).
                let indexing = first & 0x40 != 0;
                let prefix = if indexing { 6 } else { 4 };
                let (index, n) = integer(&block[at..], prefix)?;
                at += n;
                let name_index = (index != 0).then_some(index);
                let name_lit = match name_index {
                    Some(_) => None,
                    None => {
                        let (lit, end) = string(block, at, &mut scratch.name)?;
                        at = end;
                        Some(lit)
                    }
                };
                let (value_lit, end) = string(block, at, &mut scratch.value)?;
                at = end;
                let value: &[u8] = match value_lit {
                    Lit::Raw(r) => &block[r],
                    Lit::Decoded => &scratch.value,
                };
                let name: &[u8] = match (name_index, &name_lit) {
                    (Some(i), _) => table.get(i).ok_or(Invalid)?.0,
                    (None, Some(Lit::Raw(r))) => &block[r.clone()],
                    (None, _) => &scratch.name,
                };
                field(name, value);
                if indexing {
                    let name = match (name_index, &name_lit) {
                        (Some(i), _) => Name::Indexed(i),
                        (None, Some(Lit::Raw(r))) => Name::Literal(&block[r.clone()]),
                        (None, _) => Name::Literal(&scratch.name),
                    };
                    table.insert(name, value);
                }
            }
            fields_seen = true;
        }
        Ok(())
    }
}

/// Where a string literal's text is.
enum Lit {
    /// In the block, at this range.
    Raw(std::ops::Range<usize>),
    /// Huffman-decoded into the scratch buffer.
    Decoded,
}

/// The string literal (§5.2) at `at` in `block`: where its text is, and where the
/// literal ends.
fn string(block: &[u8], at: usize, scratch: &mut Vec<u8>) -> Result<(Lit, usize), Invalid> {
    let b = &block[at..];
    let huffman = b.first().ok_or(Invalid)? & 0x80 != 0;
    let (len, n) = integer(b, 7)?;
    let (start, end) = (at + n, at + n + len);
    let text = block.get(start..end).ok_or(Invalid)?;
    if huffman {
        scratch.clear();
        huffman::decode(text, scratch).map_err(|_| Invalid)?;
        Ok((Lit::Decoded, end))
    } else {
        Ok((Lit::Raw(start..end), end))
    }
}

/// An integer with an N-bit prefix (§5.1) at the start of `b`, and its length; values
/// past 2^28 are refused (no field, table or string is anywhere near).
fn integer(b: &[u8], prefix: u32) -> Result<(usize, usize), Invalid> {
    let max = (1usize << prefix) - 1;
    let mut value = (*b.first().ok_or(Invalid)? as usize) & max;
    if value < max {
        return Ok((value, 1));
    }
    let mut shift = 0;
    for (i, &byte) in b.iter().enumerate().skip(1) {
        value += ((byte & 0x7f) as usize) << shift;
        if byte & 0x80 == 0 {
            return Ok((value, i + 1));
        }
        shift += 7;
        if shift > 21 {
            return Err(Invalid);
        }
    }
    Err(Invalid)
}

#[cfg(test)]
mod tests {
    use super::*;

    type Fields = Vec<(Vec<u8>, Vec<u8>)>;

    fn decoded(decoder: &mut Decoder, block: &[u8]) -> Result<Fields, Invalid> {
        let mut fields = Vec::new();
        decoder.decode(block, |n, v| fields.push((n.to_vec(), v.to_vec())))?;
        Ok(fields)
    }

    #[test]
    fn blocks_from_an_independent_encoder_decode_the_same_across_a_connection() {
        let mut encoder = loona_hpack::Encoder::new();
        let mut decoder = Decoder::new(4096);
        let long = vec![b'v'; 3000];
        let requests: [Vec<(&[u8], &[u8])>; 3] = [
            vec![(b":method", b"GET"), (b":path", b"/a"), (b"x-custom", b"1"), (b"accept", b"*/*")],
            vec![(b":method", b"POST"), (b":path", b"/a"), (b"x-custom", b"2"), (b"x-long", &long)],
            vec![(b":method", b"GET"), (b"x-long", &long), (b"x-custom", b"1"), (b"x-other", &long)],
        ];
        for fields in requests {
            let block = encoder.encode(fields.iter().copied());
            let got = decoded(&mut decoder, &block).unwrap();
            let want: Fields = fields.iter().map(|(n, v)| (n.to_vec(), v.to_vec())).collect();
            assert_eq!(got, want);
        }
    }

    #[test]
    fn rfc_7541_c_4_requests_with_huffman_decode() {
        let mut decoder = Decoder::new(4096);
        let first =
            [0x82, 0x86, 0x84, 0x41, 0x8c, 0xf1, 0xe3, 0xc2, 0xe5, 0xf2, 0x3a, 0x6b, 0xa0, 0xab, 0x90, 0xf4, 0xff];
        let fields = decoded(&mut decoder, &first).unwrap();
        assert_eq!(fields[3], (b":authority".to_vec(), b"www.example.com".to_vec()));
        // C.4.2: the authority is now entry 62.
        let second = [0x82, 0x86, 0x84, 0xbe, 0x58, 0x86, 0xa8, 0xeb, 0x10, 0x64, 0x9c, 0xbf];
        let fields = decoded(&mut decoder, &second).unwrap();
        assert_eq!(fields[3], (b":authority".to_vec(), b"www.example.com".to_vec()));
        assert_eq!(fields[4], (b"cache-control".to_vec(), b"no-cache".to_vec()));
    }

    #[test]
    fn a_name_taken_from_the_entry_its_insertion_evicts_is_kept() {
        // §4.4: the new entry's name may refer to an entry that adding it evicts.
        let mut decoder = Decoder::new(4096);
        let block = [
            0x3f, 0x21, // table size 64: room for one entry of 32 + 5 bytes
            0x40, 0x04, b'a', b'a', b'a', b'a', 0x01, b'b', // aaaa: b, indexed (62)
            0x7e, 0x01, b'c', // name of 62, value c, indexed: evicts aaaa: b
            0xbe, // 62 again
        ];
        let fields = decoded(&mut decoder, &block).unwrap();
        let want: Fields =
            [(b"aaaa", b"b"), (b"aaaa", b"c"), (b"aaaa", b"c")].iter().map(|(n, v)| (n.to_vec(), v.to_vec())).collect();
        assert_eq!(fields, want);
        assert_eq!(decoded(&mut decoder, &[0xbf]), Err(Invalid), "only one entry fits");
        decoder.shrink();
        assert_eq!(decoded(&mut decoder, &[0xbe]).unwrap(), want[1..2]);
    }

    #[test]
    fn invalid_blocks_are_refused() {
        let mut decoder = Decoder::new(4096);
        // Index 0, an index past the tables, a size update past the setting or after a
        // field, a string running past the block, an endless integer.
        for block in [
            &[0x80][..],
            &[0xbe],
            &[0x3f, 0xe2, 0x1f],
            &[0x82, 0x20],
            &[0x00, 0x05, b'a'],
            &[0xff, 0xff, 0xff, 0xff, 0xff, 0xff],
        ] {
            assert_eq!(decoded(&mut decoder, block), Err(Invalid), "{block:x?}");
        }
        assert!(decoded(&mut decoder, &[0x20, 0x82]).is_ok());
    }
}
