//! Which links and images a page may keep: those to the web, the site, or mail.

/// The schemes a link or an image may name; an address without a scheme is relative
/// to the site, and fine.
const SCHEMES: [&str; 3] = ["http", "https", "mailto"];

/// Whether `url` (as pulldown-cmark decoded it: `&#x09;` is already a tab) has no
/// scheme or one of [`SCHEMES`]. Read the way the URL Standard has a browser read it,
/// so that what it would run is what is checked: C0 controls and spaces around it
/// dropped, tabs and newlines inside it removed (`java\tscript:` is `javascript:`),
/// and a scheme is a letter, then letters, digits, `+`, `-` or `.`, then `:`.
pub(super) fn on_the_web(url: &str) -> bool {
    let mut chars = url.trim_matches(|c: char| c <= ' ').chars().filter(|c| !matches!(c, '\t' | '\n' | '\r'));
    // The scheme so far, lowercased: its first six letters, as long as the longest allowed.
    let mut scheme = [0u8; 6];
    match chars.next() {
        Some(c) if c.is_ascii_alphabetic() => scheme[0] = c.to_ascii_lowercase() as u8,
        _ => return true,
    }
    for (len, c) in (1..).zip(chars) {
        if c == ':' {
            return scheme.get(..len).is_some_and(|s| SCHEMES.iter().any(|allowed| allowed.as_bytes() == s));
        }
        if !(c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.')) {
            return true;
        }
        if let Some(slot) = scheme.get_mut(len) {
            *slot = c.to_ascii_lowercase() as u8;
        }
    }
    true
}
