//! The static table (RFC 7541 Appendix A) and one connection's dynamic table (§2.3.2,
//! §4): entries newest first, evicted oldest first to stay within the size the
//! encoder chose, itself within SETTINGS_HEADER_TABLE_SIZE.

use std::collections::VecDeque;

use super::Invalid;

/// RFC 7541 Appendix A, index 1 first.
const STATIC: [(&[u8], &[u8]); 61] = [
    (b":authority", b""),
    (b":method", b"GET"),
    (b":method", b"POST"),
    (b":path", b"/"),
    (b":path", b"/index.html"),
    (b":scheme", b"http"),
    (b":scheme", b"https"),
    (b":status", b"200"),
    (b":status", b"204"),
    (b":status", b"206"),
    (b":status", b"304"),
    (b":status", b"400"),
    (b":status", b"404"),
    (b":status", b"500"),
    (b"accept-charset", b""),
    (b"accept-encoding", b"gzip, deflate"),
    (b"accept-language", b""),
    (b"accept-ranges", b""),
    (b"accept", b""),
    (b"access-control-allow-origin", b""),
    (b"age", b""),
    (b"allow", b""),
    (b"authorization", b""),
    (b"cache-control", b""),
    (b"content-disposition", b""),
    (b"content-encoding", b""),
    (b"content-language", b""),
    (b"content-length", b""),
    (b"content-location", b""),
    (b"content-range", b""),
    (b"content-type", b""),
    (b"cookie", b""),
    (b"date", b""),
    (b"etag", b""),
    (b"expect", b""),
    (b"expires", b""),
    (b"from", b""),
    (b"host", b""),
    (b"if-match", b""),
    (b"if-modified-since", b""),
    (b"if-none-match", b""),
    (b"if-range", b""),
    (b"if-unmodified-since", b""),
    (b"last-modified", b""),
    (b"link", b""),
    (b"location", b""),
    (b"max-forwards", b""),
    (b"proxy-authenticate", b""),
    (b"proxy-authorization", b""),
    (b"range", b""),
    (b"referer", b""),
    (b"refresh", b""),
    (b"retry-after", b""),
    (b"server", b""),
    (b"set-cookie", b""),
    (b"strict-transport-security", b""),
    (b"transfer-encoding", b""),
    (b"user-agent", b""),
    (b"vary", b""),
    (b"via", b""),
    (b"www-authenticate", b""),
];

/// What an entry costs beyond its bytes (§4.1).
const ENTRY_OVERHEAD: usize = 32;

/// Where a dynamic entry's name and value are in [`DynamicTable`]'s bytes.
#[derive(Clone, Copy)]
struct Entry {
    /// Where the name starts, counted from the first byte ever stored (see `dropped`).
    at: usize,
    name: u32,
    value: u32,
}

/// The name of a field to insert: one of the tables' entries, or bytes of its own.
#[derive(Clone, Copy)]
pub(super) enum Name<'a> {
    Indexed(usize),
    Literal(&'a [u8]),
}

/// One connection's dynamic table, stored compactly: every entry's name and value in
/// one byte buffer, oldest first, and a position per entry (16 bytes), rather than two
/// allocations per entry. It never holds more than the table size the peer chose
/// (at most SETTINGS_HEADER_TABLE_SIZE), and [`shrink`](Self::shrink) fits it to what
/// it holds while the connection idles.
pub(super) struct DynamicTable {
    bytes: Vec<u8>,
    /// Newest first (index 62 is `entries[0]`).
    entries: VecDeque<Entry>,
    /// Bytes evicted from the front of `bytes` since the start: an entry's `at` less
    /// this is its offset in `bytes`.
    dropped: usize,
    size: usize,
    max_size: usize,
    allowed: usize,
}

impl DynamicTable {
    pub(super) fn new(allowed: usize) -> Self {
        DynamicTable { bytes: Vec::new(), entries: VecDeque::new(), dropped: 0, size: 0, max_size: allowed, allowed }
    }

    /// The field at `index` (§2.3.3: static first, then dynamic); `None` past the end
    /// or at 0.
    #[inline]
    pub(super) fn get(&self, index: usize) -> Option<(&[u8], &[u8])> {
        match index {
            0 => None,
            1..=61 => Some(STATIC[index - 1]),
            _ => self.entries.get(index - 62).map(|e| {
                let at = e.at - self.dropped;
                let mid = at + e.name as usize;
                (&self.bytes[at..mid], &self.bytes[mid..mid + e.value as usize])
            }),
        }
    }

    /// A size update (§6.3): beyond SETTINGS_HEADER_TABLE_SIZE it is an error.
    pub(super) fn resize(&mut self, size: usize) -> Result<(), Invalid> {
        if size > self.allowed {
            return Err(Invalid);
        }
        self.max_size = size;
        self.evict(0);
        self.compact();
        Ok(())
    }

    /// Adds an entry (§4.4): older ones go to make room; one larger than the table
    /// empties it and is not kept. A name taken from an entry that this insertion
    /// evicts is copied before the entry goes (§4.4 allows such a reference).
    pub(super) fn insert(&mut self, name: Name<'_>, value: &[u8]) {
        let (name_len, own) = match name {
            Name::Indexed(i @ 1..=61) => (STATIC[i - 1].0.len(), None),
            Name::Indexed(i) => match self.entries.get(i.wrapping_sub(62)) {
                Some(e) => (e.name as usize, Some(e.at - self.dropped)),
                // The decoder looked the index up before: not reached.
                None => return,
            },
            Name::Literal(n) => (n.len(), None),
        };
        let cost = name_len + value.len() + ENTRY_OVERHEAD;
        if cost > self.max_size {
            self.entries.clear();
            self.bytes.clear();
            self.dropped = 0;
            self.size = 0;
            return;
        }
        let at = self.dropped + self.bytes.len();
        match (name, own) {
            (_, Some(from)) => self.bytes.extend_from_within(from..from + name_len),
            (Name::Indexed(i), None) => self.bytes.extend_from_slice(STATIC[i - 1].0),
            (Name::Literal(n), None) => self.bytes.extend_from_slice(n),
        }
        self.bytes.extend_from_slice(value);
        self.evict(cost);
        self.size += cost;
        self.entries.push_front(Entry { at, name: name_len as u32, value: value.len() as u32 });
        self.compact();
    }

    /// Fits the buffers to what the table holds (the connection idles).
    pub(super) fn shrink(&mut self) {
        self.bytes.shrink_to_fit();
        self.entries.shrink_to_fit();
    }

    /// Drops the oldest entries until `room` more bytes fit.
    fn evict(&mut self, room: usize) {
        while self.size + room > self.max_size {
            let Some(e) = self.entries.pop_back() else { break };
            self.size -= e.name as usize + e.value as usize + ENTRY_OVERHEAD;
        }
    }

    /// Removes the evicted entries' bytes from the front of the buffer.
    fn compact(&mut self) {
        let first = match self.entries.back() {
            Some(oldest) => oldest.at - self.dropped,
            None => self.bytes.len(),
        };
        if first > 0 {
            self.bytes.drain(..first);
            self.dropped += first;
        }
        if self.entries.is_empty() {
            self.dropped = 0;
        }
    }
}
