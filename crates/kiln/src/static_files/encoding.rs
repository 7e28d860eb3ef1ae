//! Which precompressed sibling a client accepts (RFC 9110 §12.5.3).

use super::representation::Coding;

/// Whether `accept_encoding` allows `coding` (a token such as `br` or `gzip`): it is
/// listed, or `*` is, with a quality above zero. `x-gzip` counts as `gzip`
/// (§8.4.1.3).
pub(crate) fn accepts(accept_encoding: &[u8], coding: Coding) -> bool {
    let (token, alias): (&[u8], &[u8]) = match coding {
        Coding::Identity => return true,
        Coding::Brotli => (b"br", b"br"),
        Coding::Gzip => (b"gzip", b"x-gzip"),
    };
    let mut star = false;
    for item in accept_encoding.split(|&b| b == b',') {
        let mut parts = item.split(|&b| b == b';');
        let name = parts.next().unwrap_or_default().trim_ascii();
        let allowed = parts.all(|param| !is_zero_quality(param));
        if name.eq_ignore_ascii_case(token) || name.eq_ignore_ascii_case(alias) {
            // An explicit entry decides, whatever `*` says.
            return allowed;
        }
        if name == b"*" {
            star = allowed;
        }
    }
    star
}

/// `q=0`, `q=0.0`, `q=0.000`: the coding is refused (§12.4.2).
fn is_zero_quality(param: &[u8]) -> bool {
    let param = param.trim_ascii();
    let Some(value) = param.strip_prefix(b"q=").or_else(|| param.strip_prefix(b"Q=")) else { return false };
    match value.split_first() {
        Some((b'0', rest)) => rest.is_empty() || (rest[0] == b'.' && rest[1..].iter().all(|&b| b == b'0')),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listed_codings_are_accepted() {
        assert!(accepts(b"gzip, deflate, br", Coding::Brotli));
        assert!(accepts(b"gzip, deflate, br", Coding::Gzip));
        assert!(accepts(b"x-gzip", Coding::Gzip));
        assert!(accepts(b"BR;q=0.5", Coding::Brotli));
        assert!(!accepts(b"gzip", Coding::Brotli));
        assert!(!accepts(b"", Coding::Gzip));
    }

    #[test]
    fn zero_quality_refuses() {
        assert!(!accepts(b"br;q=0, gzip", Coding::Brotli));
        assert!(!accepts(b"gzip; q=0.000", Coding::Gzip));
        assert!(accepts(b"gzip;q=0.001", Coding::Gzip));
    }

    #[test]
    fn star_covers_what_is_not_listed() {
        assert!(accepts(b"*", Coding::Brotli));
        assert!(!accepts(b"*;q=0", Coding::Gzip));
        assert!(!accepts(b"*, br;q=0", Coding::Brotli));
        assert!(accepts(b"br;q=0.1, *;q=0", Coding::Brotli));
    }
}
