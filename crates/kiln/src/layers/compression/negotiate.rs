//! `Accept-Encoding` (RFC 9110 §12.5.3): which content coding, if any, the client
//! takes, by its q-values and then by the server's preference.

/// A content coding kiln can produce: one variant per coding compiled in, each by
/// kiln's cargo feature of the same name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    /// Brotli (RFC 7932): the smallest text at the levels kiln uses. Feature `brotli`.
    #[cfg(feature = "brotli")]
    Brotli,
    /// Zstandard (RFC 8878): the fastest to compress. Feature `zstd`.
    #[cfg(feature = "zstd")]
    Zstd,
    /// gzip (RFC 1952): understood by every client. Feature `gzip`.
    #[cfg(feature = "gzip")]
    Gzip,
}

impl Encoding {
    /// The codings compiled in, in the server's order of preference.
    pub const COMPILED_IN: &'static [Encoding] = &[
        #[cfg(feature = "brotli")]
        Encoding::Brotli,
        #[cfg(feature = "zstd")]
        Encoding::Zstd,
        #[cfg(feature = "gzip")]
        Encoding::Gzip,
    ];

    /// Its name in `Content-Encoding`.
    pub fn name(self) -> &'static str {
        match self {
            #[cfg(feature = "brotli")]
            Encoding::Brotli => "br",
            #[cfg(feature = "zstd")]
            Encoding::Zstd => "zstd",
            #[cfg(feature = "gzip")]
            Encoding::Gzip => "gzip",
        }
    }

    /// Its slot among the codings an `Accept-Encoding` names.
    fn slot(self) -> usize {
        match self {
            #[cfg(feature = "brotli")]
            Encoding::Brotli => 0,
            #[cfg(feature = "zstd")]
            Encoding::Zstd => 1,
            #[cfg(feature = "gzip")]
            Encoding::Gzip => 2,
        }
    }
}

/// Thousandths, as q-values are written (RFC 9110 §12.4.2: at most three decimals).
type Weight = u16;

/// The coding to answer with: the acceptable one (q > 0) of highest q among those
/// `enabled`, ties going to the earlier in `enabled`. `None` means identity: no
/// header, an empty one, or nothing acceptable we can produce. A coding the header does
/// not name is acceptable at the q of `*`, if `*` is there (§12.5.3).
pub(crate) fn negotiate(header: Option<&[u8]>, enabled: &[Encoding]) -> Option<Encoding> {
    let header = header?;
    let mut named: [Option<Weight>; 3] = [None; 3];
    let mut star: Option<Weight> = None;
    for item in header.split(|&b| b == b',') {
        let mut parts = item.split(|&b| b == b';');
        let coding = parts.next().unwrap_or_default().trim_ascii();
        if coding.is_empty() {
            continue;
        }
        let mut q = 1000;
        for param in parts {
            let param = param.trim_ascii();
            if param.len() > 2 && param[..2].eq_ignore_ascii_case(b"q=") {
                // A malformed q-value makes the item unusable; refusing it is the safe
                // reading (a client that wrote `gzip;q=oops` did not ask for gzip).
                q = parse_q(&param[2..]).unwrap_or(0);
            }
        }
        let slot = if coding == b"*" {
            &mut star
        } else if coding.eq_ignore_ascii_case(b"br") {
            &mut named[0]
        } else if coding.eq_ignore_ascii_case(b"zstd") {
            &mut named[1]
        } else if coding.eq_ignore_ascii_case(b"gzip") || coding.eq_ignore_ascii_case(b"x-gzip") {
            &mut named[2]
        } else {
            continue;
        };
        *slot = Some(q);
    }
    let weight = |e: Encoding| named[e.slot()].or(star).unwrap_or(0);
    let mut best: Option<(Encoding, Weight)> = None;
    for &e in enabled {
        let q = weight(e);
        if q > 0 && best.is_none_or(|(_, b)| q > b) {
            best = Some((e, q));
        }
    }
    best.map(|(e, _)| e)
}

/// `qvalue = ( "0" [ "." 0*3DIGIT ] ) / ( "1" [ "." 0*3("0") ] )`, in thousandths.
fn parse_q(text: &[u8]) -> Option<Weight> {
    let (int, frac) = match text.iter().position(|&b| b == b'.') {
        Some(dot) => (&text[..dot], &text[dot + 1..]),
        None => (text, &b""[..]),
    };
    if int.len() != 1 || frac.len() > 3 || !frac.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let mut thousandths: Weight = 0;
    for i in 0..3 {
        thousandths = thousandths * 10 + frac.get(i).map_or(0, |d| Weight::from(d - b'0'));
    }
    match int[0] {
        b'0' => Some(thousandths),
        b'1' if thousandths == 0 => Some(1000),
        _ => None,
    }
}

// The tests turn on every coding (kiln's dev-dependency on itself).
#[cfg(all(test, feature = "brotli", feature = "zstd", feature = "gzip"))]
mod tests {
    use super::Encoding::{Brotli, Gzip, Zstd};
    use super::*;

    const ALL: &[Encoding] = &[Brotli, Zstd, Gzip];

    #[test]
    fn negotiation_follows_q_values_then_the_servers_order() {
        let table: &[(Option<&str>, Option<Encoding>)] = &[
            (None, None),
            (Some(""), None),
            (Some("identity"), None),
            (Some("gzip"), Some(Gzip)),
            (Some("x-gzip"), Some(Gzip)),
            (Some("GZIP, deflate"), Some(Gzip)),
            (Some("gzip, deflate, br, zstd"), Some(Brotli)),
            (Some("gzip;q=1, br;q=0.5"), Some(Gzip)),
            (Some("br;q=0, gzip;q=0.001"), Some(Gzip)),
            (Some("gzip;q=0"), None),
            (Some("gzip;q=0.000"), None),
            (Some("*"), Some(Brotli)),
            (Some("*;q=0"), None),
            (Some("*;q=0.5, br;q=0"), Some(Zstd)),
            (Some("*, br;q=0, zstd;q=0"), Some(Gzip)),
            (Some("identity;q=1, *;q=0"), None),
            (Some("gzip;q=oops"), None),
            (Some("gzip;q=1.5"), None),
            (Some("gzip;q=0.1234"), None),
            (Some("zstd;q=0.9, br;q=0.8, gzip"), Some(Gzip)),
            (Some(" , ,br ; q=0.7 ,"), Some(Brotli)),
        ];
        for (header, want) in table {
            assert_eq!(negotiate(header.map(str::as_bytes), ALL), *want, "{header:?}");
        }
    }

    #[test]
    fn only_enabled_codings_are_chosen() {
        assert_eq!(negotiate(Some(b"br, gzip"), &[Gzip]), Some(Gzip));
        assert_eq!(negotiate(Some(b"br"), &[Gzip]), None);
        assert_eq!(negotiate(Some(b"br, zstd"), &[Zstd, Brotli]), Some(Zstd));
    }
}
