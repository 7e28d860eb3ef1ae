//! A statement's rows as the server sent them, copied out of the connection's input
//! into one buffer, and each row's values found in it.
//!
//! Why copied: parsed as `postgres-protocol` messages, each row held a reference
//! counted slice of the input (an atomic increment and decrement per row) and the
//! input could not be reused while any was alive. A `DataRow` is a few dozen bytes:
//! copying it costs less than counting references to it.

/// Bytes before each row: its length.
const LEN: usize = 4;
/// Rows the size of the first that the buffer has room for from the start.
const ROOM_FOR_ROWS: usize = 16;

/// The rows of one statement: each a `u32` length, then the row's fields (the
/// `DataRow` body after its field count).
#[derive(Debug, Default)]
pub(crate) struct Rows {
    bytes: Vec<u8>,
    count: usize,
}

impl Rows {
    /// Appends a row: `fields` is a `DataRow` body after its field count.
    pub(crate) fn push(&mut self, fields: &[u8]) {
        if self.bytes.is_empty() {
            // Room for a few more like the first at once, rather than growing from
            // eight bytes by doubling.
            self.bytes.reserve(ROOM_FOR_ROWS * (LEN + fields.len()));
        }
        // Messages are at most `MAX_MESSAGE` bytes, so the length fits.
        self.bytes.extend_from_slice(&(fields.len() as u32).to_ne_bytes());
        self.bytes.extend_from_slice(fields);
        self.count += 1;
    }

    pub(crate) fn len(&self) -> usize {
        self.count
    }

    /// Bytes the buffer holds without growing.
    pub(crate) fn capacity(&self) -> usize {
        self.bytes.capacity()
    }

    pub(crate) fn clear(&mut self) {
        self.bytes.clear();
        self.count = 0;
    }

    /// Each row's fields, in order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &[u8]> {
        let mut rest = &self.bytes[..];
        std::iter::from_fn(move || {
            let (len, after) = rest.split_first_chunk::<LEN>()?;
            let (fields, after) = after.split_at(u32::from_ne_bytes(*len) as usize);
            rest = after;
            Some(fields)
        })
    }
}

/// The `index`th value of a row's `fields` (each an `i32` length, `-1` for `NULL`,
/// then its bytes), read by skipping the ones before it.
pub(crate) fn field(fields: &[u8], index: usize) -> Result<Option<&[u8]>, String> {
    let mut rest = fields;
    for i in 0..=index {
        let (len, after) = rest.split_first_chunk::<4>().ok_or("a row shorter than its description")?;
        let len = i32::from_be_bytes(*len);
        let (value, after) = match usize::try_from(len) {
            Ok(len) => {
                let (value, after) = after.split_at_checked(len).ok_or("a column past its row")?;
                (Some(value), after)
            }
            Err(_) if len == -1 => (None, after),
            Err(_) => return Err(format!("a column of length {len}")),
        };
        if i == index {
            return Ok(value);
        }
        rest = after;
    }
    unreachable!("the loop returns at its last turn")
}

#[cfg(test)]
mod tests {
    use super::{Rows, field};

    /// A row's fields: each an `i32` length (`-1`: `NULL`) and its bytes.
    fn row(fields: &[Option<&[u8]>]) -> Vec<u8> {
        let mut buf = Vec::new();
        for f in fields {
            match f {
                Some(bytes) => {
                    buf.extend_from_slice(&(bytes.len() as i32).to_be_bytes());
                    buf.extend_from_slice(bytes);
                }
                None => buf.extend_from_slice(&(-1_i32).to_be_bytes()),
            }
        }
        buf
    }

    #[test]
    fn rows_come_back_whole_and_in_order_and_clear_empties_them() {
        let mut rows = Rows::default();
        let (a, b, empty) = (row(&[Some(b"ab"), None]), row(&[Some(b"xyz")]), row(&[]));
        rows.push(&a);
        rows.push(&empty);
        rows.push(&b);
        assert_eq!(rows.len(), 3);
        assert_eq!(rows.iter().collect::<Vec<_>>(), [&a[..], &empty[..], &b[..]]);
        rows.clear();
        assert_eq!((rows.len(), rows.iter().count()), (0, 0));
    }

    #[test]
    fn each_field_is_found_past_the_values_and_nulls_before_it() {
        let buf = row(&[Some(b"ab"), None, Some(b""), Some(b"xyz")]);
        assert_eq!(field(&buf, 0), Ok(Some(&b"ab"[..])));
        assert_eq!(field(&buf, 1), Ok(None));
        assert_eq!(field(&buf, 2), Ok(Some(&b""[..])));
        assert_eq!(field(&buf, 3), Ok(Some(&b"xyz"[..])));
    }

    #[test]
    fn a_malformed_row_is_an_error_not_a_panic() {
        let buf = row(&[Some(b"ab")]);
        assert!(field(&buf, 1).unwrap_err().contains("shorter than its description"));
        // A length past the end of the row, and a negative length other than -1.
        let mut long = 9_i32.to_be_bytes().to_vec();
        long.extend_from_slice(b"abc");
        assert!(field(&long, 0).unwrap_err().contains("past its row"));
        assert!(field(&(-2_i32).to_be_bytes(), 0).unwrap_err().contains("length -2"));
        assert!(field(&[0, 0], 0).is_err());
    }
}
