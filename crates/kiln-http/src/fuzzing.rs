//! Entry points for the fuzz targets in `fuzz/`; not part of the public API.

use crate::chunked::ChunkedDecoder;
use crate::config::Limits;
use crate::head::Head;
use crate::parse::{self, Framing};

/// Parses `data` as a request head with the default limits. Returns the head's length
/// when it is complete and valid, after checking that every offset lies inside `data`.
pub fn parse_request_head(data: &[u8]) -> Option<usize> {
    let mut head = Head::default();
    let parsed = parse::parse_head(data, &Limits::default(), &mut head).ok()??;
    assert!(parsed.len <= data.len());
    let inside = |r: &std::ops::Range<u32>| r.start <= r.end && r.end as usize <= parsed.len;
    assert!(inside(&head.method) && inside(&head.target));
    assert!(head.headers.iter().all(|h| inside(&h.name) && inside(&h.value)));
    if let Framing::Length(n) = parsed.framing {
        assert!(n as usize <= Limits::default().max_body_bytes);
    }
    Some(parsed.len)
}

/// Decodes `data` as a chunked body in two pieces split at `split`, and in one piece,
/// and checks that both give the same body and consume the same bytes.
pub fn decode_chunked(data: &[u8], split: usize) {
    const MAX: usize = 1 << 20;
    let whole = {
        let mut d = ChunkedDecoder::new();
        let mut out = Vec::new();
        d.decode(data, &mut out, MAX).map(|used| (used, d.is_done(), out))
    };
    let split = split.min(data.len());
    let pieces = {
        let mut d = ChunkedDecoder::new();
        let mut out = Vec::new();
        d.decode(&data[..split], &mut out, MAX).and_then(|a| {
            let b = if a == split && !d.is_done() { d.decode(&data[split..], &mut out, MAX)? } else { 0 };
            Ok((a + b, d.is_done(), out))
        })
    };
    match (whole, pieces) {
        (Ok(w), Ok(p)) => {
            assert!(w.0 <= data.len());
            assert_eq!(w, p, "splitting the input changed the result");
        }
        (Err(_), Err(_)) => {}
        (w, p) => panic!("one piece and two pieces disagree: {:?} vs {:?}", w.is_ok(), p.is_ok()),
    }
}
