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

/// A dynamic table entry: name and value.
type Entry = (Box<[u8]>, Box<[u8]>);

/// One connection's dynamic table.
pub(super) struct DynamicTable {
    entries: VecDeque<Entry>,
    size: usize,
    max_size: usize,
    allowed: usize,
}

impl DynamicTable {
    pub(super) fn new(allowed: usize) -> Self {
        DynamicTable { entries: VecDeque::new(), size: 0, max_size: allowed, allowed }
    }

    /// The field at `index` (§2.3.3: static first, then dynamic); `None` past the end
    /// or at 0.
    #[inline]
    pub(super) fn get(&self, index: usize) -> Option<(&[u8], &[u8])> {
        match index {
            0 => None,
            1..=61 => Some(STATIC[index - 1]),
            _ => self.entries.get(index - 62).map(|(n, v)| (&n[..], &v[..])),
        }
    }

    /// A size update (§6.3): beyond SETTINGS_HEADER_TABLE_SIZE it is an error.
    pub(super) fn resize(&mut self, size: usize) -> Result<(), Invalid> {
        if size > self.allowed {
            return Err(Invalid);
        }
        self.max_size = size;
        self.evict(0);
        Ok(())
    }

    /// Adds an entry (§4.4): older ones go to make room; one larger than the table
    /// empties it and is not kept.
    pub(super) fn insert(&mut self, name: Vec<u8>, value: Vec<u8>) {
        let cost = name.len() + value.len() + ENTRY_OVERHEAD;
        if cost > self.max_size {
            self.entries.clear();
            self.size = 0;
            return;
        }
        self.evict(cost);
        self.size += cost;
        self.entries.push_front((name.into_boxed_slice(), value.into_boxed_slice()));
    }

    fn evict(&mut self, room: usize) {
        while self.size + room > self.max_size {
            let Some((n, v)) = self.entries.pop_back() else { break };
            self.size -= n.len() + v.len() + ENTRY_OVERHEAD;
        }
    }
}
