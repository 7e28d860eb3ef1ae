//! Which answer a file gets: the preconditions of RFC 9110 §13 evaluated in the order
//! of §13.2.2, then a `Range` (§14.2) filtered by `If-Range` (§13.1.5).
//!
//! Only a single byte range is served. A request for several ranges, overlapping or
//! not, gets the whole file (§14.2 lets a server ignore `Range`), so a handful of
//! request bytes can never make the response larger than the file itself.

use std::time::UNIX_EPOCH;

/// The request headers that decide the answer, as sent.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Conditions<'a> {
    pub(crate) if_match: Option<&'a [u8]>,
    pub(crate) if_unmodified_since: Option<&'a [u8]>,
    pub(crate) if_none_match: Option<&'a [u8]>,
    pub(crate) if_modified_since: Option<&'a [u8]>,
    pub(crate) range: Option<&'a [u8]>,
    pub(crate) if_range: Option<&'a [u8]>,
}

/// What the file offers to compare against.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Validators<'a> {
    /// The strong entity tag, quotes included.
    pub(crate) etag: &'a str,
    /// `Last-Modified`, in whole seconds since the epoch.
    pub(crate) modified: u64,
    /// The representation's length in bytes.
    pub(crate) len: u64,
}

/// The answer to send.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// `200` with the whole file.
    Full,
    /// `304 Not Modified`.
    NotModified,
    /// `412 Precondition Failed`.
    PreconditionFailed,
    /// `206 Partial Content` with `len` bytes from `start`.
    Partial { start: u64, len: u64 },
    /// `416 Range Not Satisfiable`.
    Unsatisfiable,
}

/// Evaluates `c` against the file. `is_get` is false for `HEAD`, whose `Range` is
/// ignored (§14.2: only GET has range semantics).
pub(crate) fn evaluate(c: &Conditions<'_>, v: &Validators<'_>, is_get: bool) -> Outcome {
    // §13.2.2 steps 1 and 2: If-Match, else If-Unmodified-Since.
    if let Some(tags) = c.if_match {
        if !tag_list_matches(tags, v.etag, Comparison::Strong) {
            return Outcome::PreconditionFailed;
        }
    } else if let Some(since) = c.if_unmodified_since.and_then(http_date) {
        if v.modified > since {
            return Outcome::PreconditionFailed;
        }
    }
    // Step 3 and 4: If-None-Match, else If-Modified-Since (§13.1.3: ignored when
    // If-None-Match is present).
    if let Some(tags) = c.if_none_match {
        if tag_list_matches(tags, v.etag, Comparison::Weak) {
            return Outcome::NotModified;
        }
    } else if let Some(since) = c.if_modified_since.and_then(http_date) {
        if v.modified <= since {
            return Outcome::NotModified;
        }
    }
    // Step 5: Range, if If-Range (when present) still holds.
    let Some(range) = c.range.filter(|_| is_get) else { return Outcome::Full };
    if let Some(if_range) = c.if_range {
        if !if_range_holds(if_range, v) {
            return Outcome::Full;
        }
    }
    match parse_range(range, v.len) {
        RangeSpec::Ignored => Outcome::Full,
        RangeSpec::Unsatisfiable => Outcome::Unsatisfiable,
        RangeSpec::Bytes { start, len } => Outcome::Partial { start, len },
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Comparison {
    /// §8.8.3.2: both tags strong and equal.
    Strong,
    /// §8.8.3.2: equal once any `W/` is set aside.
    Weak,
}

/// Whether a list of entity tags (or `*`) names our tag.
fn tag_list_matches(list: &[u8], ours: &str, how: Comparison) -> bool {
    let list = list.trim_ascii();
    if list == b"*" {
        return true;
    }
    list.split(|&b| b == b',').map(<[u8]>::trim_ascii).any(|tag| {
        let (weak, opaque) = match tag.strip_prefix(b"W/") {
            Some(rest) => (true, rest),
            None => (false, tag),
        };
        opaque == ours.as_bytes() && !(weak && how == Comparison::Strong)
    })
}

/// §13.1.5: an entity tag must match strongly; a date must equal `Last-Modified`.
fn if_range_holds(value: &[u8], v: &Validators<'_>) -> bool {
    let value = value.trim_ascii();
    if value.starts_with(b"\"") || value.starts_with(b"W/") {
        return value == v.etag.as_bytes();
    }
    http_date(value) == Some(v.modified)
}

enum RangeSpec {
    /// Not a single, valid byte range: serve the whole file.
    Ignored,
    Unsatisfiable,
    Bytes {
        start: u64,
        len: u64,
    },
}

/// Parses `bytes=first-last`, `bytes=first-` or `bytes=-suffix` (§14.1.2).
fn parse_range(value: &[u8], len: u64) -> RangeSpec {
    let value = value.trim_ascii();
    let Some((unit, set)) = value.split_first_chunk::<6>() else { return RangeSpec::Ignored };
    // §14.1: range units are compared case-insensitively.
    if !unit.eq_ignore_ascii_case(b"bytes=") || set.contains(&b',') {
        return RangeSpec::Ignored;
    }
    let Some(dash) = set.iter().position(|&b| b == b'-') else { return RangeSpec::Ignored };
    let (first, last) = (set[..dash].trim_ascii(), set[dash + 1..].trim_ascii());
    match (number(first), number(last)) {
        (None, Some(suffix)) if first.is_empty() => {
            if suffix == 0 || len == 0 {
                return RangeSpec::Unsatisfiable;
            }
            let n = suffix.min(len);
            RangeSpec::Bytes { start: len - n, len: n }
        }
        (Some(start), last) if last.is_some() || last_is_open(set, dash) => {
            if last.is_some_and(|l| l < start) {
                return RangeSpec::Ignored;
            }
            if start >= len {
                return RangeSpec::Unsatisfiable;
            }
            let end = last.map_or(len - 1, |l| l.min(len - 1));
            RangeSpec::Bytes { start, len: end - start + 1 }
        }
        _ => RangeSpec::Ignored,
    }
}

fn last_is_open(set: &[u8], dash: usize) -> bool {
    set[dash + 1..].trim_ascii().is_empty()
}

/// A run of digits; saturates rather than overflowing, since a position past the end
/// means the same whatever its size.
fn number(digits: &[u8]) -> Option<u64> {
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(digits.iter().fold(0u64, |n, &d| n.saturating_mul(10).saturating_add(u64::from(d - b'0'))))
}

/// An HTTP-date (§5.6.7) in whole seconds; `None` when invalid, which makes the header
/// be ignored (§13.1.3, §13.1.4).
fn http_date(value: &[u8]) -> Option<u64> {
    let text = std::str::from_utf8(value.trim_ascii()).ok()?;
    let time = httpdate::parse_http_date(text).ok()?;
    time.duration_since(UNIX_EPOCH).ok().map(|d| d.as_secs())
}

#[cfg(test)]
mod tests {
    use super::*;

    const ETAG: &str = "\"5f-d\"";
    /// `Last-Modified: Sun, 06 Nov 1994 08:49:37 GMT`.
    const MODIFIED: u64 = 784_111_777;
    const V: Validators<'static> = Validators { etag: ETAG, modified: MODIFIED, len: 13 };

    fn get(c: Conditions<'_>) -> Outcome {
        evaluate(&c, &V, true)
    }

    fn range(r: &str) -> Outcome {
        get(Conditions { range: Some(r.as_bytes()), ..Conditions::default() })
    }

    #[test]
    fn no_conditions_is_full() {
        assert_eq!(get(Conditions::default()), Outcome::Full);
    }

    #[test]
    fn if_none_match_weak_comparison() {
        for header in ["\"5f-d\"", "W/\"5f-d\"", "\"x\", \"5f-d\"", "*", " \"5f-d\" "] {
            let c = Conditions { if_none_match: Some(header.as_bytes()), ..Conditions::default() };
            assert_eq!(get(c), Outcome::NotModified, "{header}");
        }
        let c = Conditions { if_none_match: Some(b"\"other\""), ..Conditions::default() };
        assert_eq!(get(c), Outcome::Full);
    }

    #[test]
    fn if_modified_since_compares_seconds() {
        let at = |date: &'static str| Conditions { if_modified_since: Some(date.as_bytes()), ..Conditions::default() };
        assert_eq!(get(at("Sun, 06 Nov 1994 08:49:37 GMT")), Outcome::NotModified);
        assert_eq!(get(at("Sun, 06 Nov 1994 08:50:00 GMT")), Outcome::NotModified);
        assert_eq!(get(at("Sun, 06 Nov 1994 08:49:36 GMT")), Outcome::Full);
        assert_eq!(get(at("Sunday, 06-Nov-94 08:49:37 GMT")), Outcome::NotModified);
        assert_eq!(get(at("not a date")), Outcome::Full);
    }

    #[test]
    fn if_none_match_overrides_if_modified_since() {
        let c = Conditions {
            if_none_match: Some(b"\"other\""),
            if_modified_since: Some(b"Sun, 06 Nov 1994 08:49:37 GMT"),
            ..Conditions::default()
        };
        assert_eq!(get(c), Outcome::Full);
    }

    #[test]
    fn if_match_and_if_unmodified_since() {
        let m = |v: &'static str| Conditions { if_match: Some(v.as_bytes()), ..Conditions::default() };
        assert_eq!(get(m("\"5f-d\"")), Outcome::Full);
        assert_eq!(get(m("*")), Outcome::Full);
        assert_eq!(get(m("W/\"5f-d\"")), Outcome::PreconditionFailed);
        assert_eq!(get(m("\"other\"")), Outcome::PreconditionFailed);
        let u = |v: &'static str| Conditions { if_unmodified_since: Some(v.as_bytes()), ..Conditions::default() };
        assert_eq!(get(u("Sun, 06 Nov 1994 08:49:37 GMT")), Outcome::Full);
        assert_eq!(get(u("Sun, 06 Nov 1994 08:49:36 GMT")), Outcome::PreconditionFailed);
    }

    #[test]
    fn single_ranges() {
        assert_eq!(range("bytes=0-4"), Outcome::Partial { start: 0, len: 5 });
        assert_eq!(range("bytes=7-"), Outcome::Partial { start: 7, len: 6 });
        assert_eq!(range("bytes=-6"), Outcome::Partial { start: 7, len: 6 });
        assert_eq!(range("bytes=-100"), Outcome::Partial { start: 0, len: 13 });
        assert_eq!(range("bytes=5-1000"), Outcome::Partial { start: 5, len: 8 });
        assert_eq!(range("BYTES=12-12"), Outcome::Partial { start: 12, len: 1 });
        assert_eq!(range("bytes=3-99999999999999999999999"), Outcome::Partial { start: 3, len: 10 });
    }

    #[test]
    fn unsatisfiable_ranges() {
        assert_eq!(range("bytes=13-"), Outcome::Unsatisfiable);
        assert_eq!(range("bytes=100-200"), Outcome::Unsatisfiable);
        assert_eq!(range("bytes=-0"), Outcome::Unsatisfiable);
        assert_eq!(range("bytes=99999999999999999999999-"), Outcome::Unsatisfiable);
    }

    #[test]
    fn invalid_or_multiple_ranges_serve_the_whole_file() {
        for r in [
            "bytes=5-1",
            "bytes=a-b",
            "bytes=-",
            "bytes=",
            "items=0-1",
            "0-1",
            "bytes=0-1,2-3",
            "bytes=0-12,0-12,0-12,0-12",
            "bytes=0-,0-,0-",
            "bytes=-1,-1",
            "bytes=1-2-3",
        ] {
            assert_eq!(range(r), Outcome::Full, "{r}");
        }
    }

    #[test]
    fn head_ignores_range() {
        let c = Conditions { range: Some(b"bytes=0-1"), ..Conditions::default() };
        assert_eq!(evaluate(&c, &V, false), Outcome::Full);
    }

    #[test]
    fn if_range_needs_a_strong_match() {
        let with = |if_range: &'static str| Conditions {
            range: Some(b"bytes=0-1"),
            if_range: Some(if_range.as_bytes()),
            ..Conditions::default()
        };
        assert_eq!(get(with("\"5f-d\"")), Outcome::Partial { start: 0, len: 2 });
        assert_eq!(get(with("W/\"5f-d\"")), Outcome::Full);
        assert_eq!(get(with("\"other\"")), Outcome::Full);
        assert_eq!(get(with("Sun, 06 Nov 1994 08:49:37 GMT")), Outcome::Partial { start: 0, len: 2 });
        assert_eq!(get(with("Sun, 06 Nov 1994 08:49:38 GMT")), Outcome::Full);
        assert_eq!(get(with("garbage")), Outcome::Full);
    }

    #[test]
    fn not_modified_wins_over_range() {
        let c = Conditions { if_none_match: Some(ETAG.as_bytes()), range: Some(b"bytes=0-1"), ..Conditions::default() };
        assert_eq!(get(c), Outcome::NotModified);
    }

    #[test]
    fn empty_file_ranges_are_unsatisfiable() {
        let v = Validators { len: 0, ..V };
        let c = Conditions { range: Some(b"bytes=0-"), ..Conditions::default() };
        assert_eq!(evaluate(&c, &v, true), Outcome::Unsatisfiable);
        let c = Conditions { range: Some(b"bytes=-5"), ..Conditions::default() };
        assert_eq!(evaluate(&c, &v, true), Outcome::Unsatisfiable);
    }
}
