//! A [`Response`]'s head as an HPACK block (RFC 7541), written straight into the
//! connection's write buffer: its `Name: value` lines split into lower-case names and
//! values, the engine's own `server`, `date` and `content-length` added, and the fields
//! HTTP/2 forbids left out (RFC 9113 §8.2.2).
//!
//! Every field is a literal without indexing (§6.2.2), its name indexed from the static
//! table when it is there: the encoder keeps no dynamic table, so it holds no memory per
//! connection and is right whatever table size the peer allows. Being stateless, the
//! encoding of a response's header lines depends on those bytes alone, so the worker
//! keeps the last few encoded ([`Memo`]): most responses of a site repeat a handful of
//! header sets (a static file's pre-rendered lines, `content-type: text/html`), and a
//! repeat costs a comparison and a copy instead of splitting, checking and
//! lower-casing each line.

use crate::response::{Response, is_token};

/// What every response of a connection carries besides its own fields.
pub(crate) struct Common<'a> {
    pub(crate) date: &'a [u8],
    pub(crate) hsts: Option<&'a [u8]>,
}

/// Header sets remembered, per worker.
const MEMO_SLOTS: usize = 4;
/// Longest header lines remembered: longer ones are rarer and mostly unique.
const MEMO_MAX: usize = 512;

/// The last few header lines encoded and their encodings, replaced in turn. At most
/// [`MEMO_SLOTS`] × 2 × [`MEMO_MAX`] bytes per worker.
#[derive(Default)]
pub(crate) struct Memo {
    slots: [(Vec<u8>, Vec<u8>); MEMO_SLOTS],
    next: usize,
}

impl Memo {
    /// Appends the encoding of `header_lines`, remembered or made (and remembered).
    fn lines(&mut self, out: &mut Vec<u8>, header_lines: &[u8]) {
        if header_lines.is_empty() || header_lines.len() > MEMO_MAX {
            return lines(out, header_lines);
        }
        if let Some((_, encoded)) = self.slots.iter().find(|(src, _)| src[..] == *header_lines) {
            out.extend_from_slice(encoded);
            return;
        }
        let start = out.len();
        lines(out, header_lines);
        let (src, encoded) = &mut self.slots[self.next];
        self.next = (self.next + 1) % MEMO_SLOTS;
        src.clear();
        src.extend_from_slice(header_lines);
        encoded.clear();
        encoded.extend_from_slice(&out[start..]);
    }
}

/// Appends the head of `res` to `out`, with `content-length: len` when there is one.
/// A line that is not a valid field (the unchecked appends allow anything) is left out
/// rather than sent broken.
pub(crate) fn encode(out: &mut Vec<u8>, res: &Response, len: Option<u64>, common: &Common<'_>, memo: &mut Memo) {
    status(out, res.status.as_u16());
    field(out, 54, b"server", b"kiln");
    field(out, 33, b"date", common.date);
    memo.lines(out, &res.headers);
    if let Some(len) = len {
        field(out, 28, b"content-length", itoa::Buffer::new().format(len).as_bytes());
    }
    if let Some(hsts) = common.hsts {
        if !res.has_header("strict-transport-security") {
            field(out, 56, b"strict-transport-security", hsts);
        }
    }
}

/// Appends a `103 Early Hints` head carrying `lines` (RFC 8297).
pub(crate) fn early_hints(out: &mut Vec<u8>, hint_lines: &[u8]) {
    status(out, 103);
    lines(out, hint_lines);
}

/// `:status`, indexed when the static table has it (RFC 7541 Appendix A).
fn status(out: &mut Vec<u8>, code: u16) {
    let index = match code {
        200 => 8,
        204 => 9,
        206 => 10,
        304 => 11,
        400 => 12,
        404 => 13,
        500 => 14,
        _ => 0,
    };
    if index != 0 {
        out.push(0x80 | index);
    } else {
        field(out, 8, b":status", itoa::Buffer::new().format(code).as_bytes());
    }
}

/// Appends each `Name: value` line of `lines` as a field.
fn lines(out: &mut Vec<u8>, lines: &[u8]) {
    let mut lower = [0u8; 64];
    for line in lines.split(|&b| b == b'\n') {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let Some(colon) = line.iter().position(|&b| b == b':') else { continue };
        let (name, value) = (&line[..colon], line[colon + 1..].trim_ascii());
        if name.is_empty() || !name.iter().all(|&b| is_token(b)) || value.iter().any(|&b| b == 0 || b == b'\r') {
            continue;
        }
        let mut owned;
        let name: &[u8] = if name.len() <= lower.len() {
            let l = &mut lower[..name.len()];
            l.copy_from_slice(name);
            l.make_ascii_lowercase();
            l
        } else {
            owned = name.to_vec();
            owned.make_ascii_lowercase();
            &owned
        };
        let index = match name {
            // Connection-specific fields must not be sent (RFC 9113 §8.2.2); the engine
            // frames the body itself, so a service's `content-length` goes too.
            b"connection" | b"keep-alive" | b"transfer-encoding" | b"upgrade" | b"proxy-connection"
            | b"content-length" => continue,
            _ => static_name(name),
        };
        field(out, index, name, value);
    }
}

/// The static table's index of `name` (RFC 7541 Appendix A), 0 when it has none.
fn static_name(name: &[u8]) -> u8 {
    match name {
        b"accept-ranges" => 18,
        b"access-control-allow-origin" => 20,
        b"age" => 21,
        b"allow" => 22,
        b"cache-control" => 24,
        b"content-disposition" => 25,
        b"content-encoding" => 26,
        b"content-language" => 27,
        b"content-location" => 29,
        b"content-range" => 30,
        b"content-type" => 31,
        b"etag" => 34,
        b"expires" => 36,
        b"last-modified" => 44,
        b"link" => 45,
        b"location" => 46,
        b"retry-after" => 53,
        b"server" => 54,
        b"set-cookie" => 55,
        b"strict-transport-security" => 56,
        b"vary" => 59,
        b"via" => 60,
        b"www-authenticate" => 61,
        _ => 0,
    }
}

/// A literal field without indexing (RFC 7541 §6.2.2), its name by `index` when not 0.
fn field(out: &mut Vec<u8>, index: u8, name: &[u8], value: &[u8]) {
    if index != 0 {
        integer(out, 0x00, 4, index as usize);
    } else {
        out.push(0x00);
        integer(out, 0x00, 7, name.len());
        out.extend_from_slice(name);
    }
    integer(out, 0x00, 7, value.len());
    out.extend_from_slice(value);
}

/// An integer with an N-bit prefix (RFC 7541 §5.1), `first` holding the octet's other bits.
fn integer(out: &mut Vec<u8>, first: u8, prefix: u32, mut n: usize) {
    let max = (1usize << prefix) - 1;
    if n < max {
        out.push(first | n as u8);
        return;
    }
    out.push(first | max as u8);
    n -= max;
    while n >= 128 {
        out.push((n % 128) as u8 | 0x80);
        n /= 128;
    }
    out.push(n as u8);
}

#[cfg(test)]
mod tests {
    use loona_hpack::Decoder;

    use super::*;

    fn decoded(block: &[u8]) -> Vec<(String, String)> {
        let fields = Decoder::new().decode(block).unwrap();
        fields.into_iter().map(|(n, v)| (String::from_utf8(n).unwrap(), String::from_utf8(v).unwrap())).collect()
    }

    #[test]
    fn header_lines_become_lower_case_fields_and_connection_fields_are_dropped() {
        let mut res = Response::new();
        res.set_content_type("text/plain");
        res.append_header_unchecked(b"Set-Cookie", b"a=1");
        res.append_header_unchecked(b"X-Long-Custom-Name-That-Goes-On-And-On-For-Quite-A-While-Yes", b"v");
        res.append_header_unchecked(b"Connection", b"close");
        res.append_header_unchecked(b"Transfer-Encoding", b"chunked");
        res.append_header_unchecked(b"Content-Length", b"99");
        res.append_header_unchecked(b"Bad Name", b"x");
        let common = Common { date: b"Sun, 06 Nov 1994 08:49:37 GMT", hsts: Some(b"max-age=60") };
        let mut out = Vec::new();
        encode(&mut out, &res, Some(4), &common, &mut Memo::default());
        let fields = decoded(&out);
        let names: Vec<&str> = fields.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            [
                ":status",
                "server",
                "date",
                "content-type",
                "set-cookie",
                "x-long-custom-name-that-goes-on-and-on-for-quite-a-while-yes",
                "content-length",
                "strict-transport-security"
            ]
        );
        assert_eq!(fields[0].1, "200");
        assert_eq!(fields[6].1, "4");
    }

    #[test]
    fn a_status_outside_the_static_table_and_a_service_s_own_hsts_stand() {
        let mut res = Response::new();
        res.set_status(http::StatusCode::PAYLOAD_TOO_LARGE);
        res.append_header_unchecked(b"Strict-Transport-Security", b"max-age=1");
        let mut out = Vec::new();
        encode(&mut out, &res, None, &Common { date: b"x", hsts: Some(b"max-age=60") }, &mut Memo::default());
        let fields = decoded(&out);
        assert_eq!(fields[0], (":status".into(), "413".into()));
        assert_eq!(fields.iter().filter(|(n, _)| n == "strict-transport-security").count(), 1);
        assert_eq!(fields.last().unwrap().1, "max-age=1");
    }

    #[test]
    fn remembered_header_sets_encode_as_made_ones_do() {
        let mut memo = Memo::default();
        let common = Common { date: b"x", hsts: None };
        let sets: Vec<Response> = (0..MEMO_SLOTS + 2)
            .map(|i| {
                let mut res = Response::new();
                res.set_content_type(&format!("text/x-{i}"));
                res.append_header_unchecked(b"ETag", format!("\"{i}\"").as_bytes());
                res
            })
            .collect();
        // Each set twice over, more sets than slots: hits, misses and replacements.
        for round in 0..3 {
            for res in sets.iter().chain(sets.iter().rev()) {
                let (mut fresh, mut remembered) = (Vec::new(), Vec::new());
                encode(&mut fresh, res, Some(1), &common, &mut Memo::default());
                encode(&mut remembered, res, Some(1), &common, &mut memo);
                assert_eq!(remembered, fresh, "round {round}");
            }
        }
    }

    #[test]
    fn long_values_take_multi_byte_lengths() {
        let mut out = Vec::new();
        let value = vec![b'v'; 300];
        field(&mut out, 0, b"x", &value);
        assert_eq!(decoded(&out), [("x".to_owned(), "v".repeat(300))]);
    }
}
