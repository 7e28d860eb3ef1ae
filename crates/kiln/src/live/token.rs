//! The token that ties a live view's socket to the page it was rendered for: signed
//! with the app's [`Key`], it names the view, the page (its route with its
//! parameters) and the visitor (the signed CSRF cookie), and expires. The first
//! answer renders it into the page; the socket must offer it back, so another site
//! cannot open the socket with the visitor's cookies (it cannot read the page), and a
//! token serves only the view and the page it was made for.
//!
//! The token is `expires.view.page.visitor.signature`: Unix seconds, then 16 hex digits
//! of SHA-256 over each name, then the signature, all characters a WebSocket
//! subprotocol may carry (RFC 6455 §4.1: a token of RFC 7230).

use std::fmt::Write;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use sha2::{Digest, Sha256};

use crate::key::Key;

/// The context live tokens are signed in ([`Key::sign`]).
const CONTEXT: &str = "kiln-live";

/// What a token is for.
pub(crate) struct Claims<'a> {
    /// The view's type name.
    pub(crate) view: &'a str,
    /// The page's route, as its link renders it.
    pub(crate) page: &'a str,
    /// The visitor's CSRF token.
    pub(crate) visitor: &'a str,
}

/// Why a token was refused; the socket's handshake is answered 403 with it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refusal {
    Missing,
    Forged,
    Expired,
    OtherView,
    OtherPage,
    OtherVisitor,
}

impl Refusal {
    pub(crate) fn reason(self) -> &'static str {
        match self {
            Refusal::Missing => "a live view's socket offers its page's token as a subprotocol",
            Refusal::Forged => "the live view's token is not one this app signed",
            Refusal::Expired => "the live view's token has expired: reload the page",
            Refusal::OtherView => "the live view's token was made for another view",
            Refusal::OtherPage => "the live view's token was made for another page",
            Refusal::OtherVisitor => "the live view's token was made for another visitor",
        }
    }
}

/// A token for `claims`, good until `now + ttl`.
pub(crate) fn issue(key: &Key, claims: &Claims<'_>, ttl: Duration, now: SystemTime) -> String {
    let expires = unix(now).saturating_add(ttl.as_secs());
    let mut value = expires.to_string();
    for name in [claims.view, claims.page, claims.visitor] {
        value.push('.');
        value.push_str(&digest(name));
    }
    key.sign(CONTEXT, &value)
}

/// Whether `token` is a token this app made for `claims`, still good at `now`.
pub(crate) fn check(key: &Key, token: &str, claims: &Claims<'_>, now: SystemTime) -> Result<(), Refusal> {
    let value = key.verify(CONTEXT, token).ok_or(Refusal::Forged)?;
    let mut fields = value.split('.');
    let expires: u64 = fields.next().and_then(|e| e.parse().ok()).ok_or(Refusal::Forged)?;
    if expires <= unix(now) {
        return Err(Refusal::Expired);
    }
    let wanted =
        [(claims.view, Refusal::OtherView), (claims.page, Refusal::OtherPage), (claims.visitor, Refusal::OtherVisitor)];
    for (name, refusal) in wanted {
        if fields.next() != Some(digest(name).as_str()) {
            return Err(refusal);
        }
    }
    Ok(())
}

/// 16 hex digits of SHA-256 over `name`: under the signature, a name cannot be swapped
/// for another without finding a second preimage.
fn digest(name: &str) -> String {
    let hash = Sha256::digest(name.as_bytes());
    let mut hex = String::with_capacity(16);
    for b in &hash[..8] {
        let _ = write!(hex, "{b:02x}");
    }
    hex
}

fn unix(at: SystemTime) -> u64 {
    at.duration_since(UNIX_EPOCH).unwrap_or_default().as_secs()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_serves_its_view_page_and_visitor_until_it_expires() {
        let key = Key::new([3u8; 32]).unwrap();
        let now = SystemTime::now();
        let claims = Claims { view: "app::Counter", page: "/counter/7", visitor: "abc" };
        let token = issue(&key, &claims, Duration::from_secs(60), now);
        assert!(token.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'.'), "{token}");
        assert_eq!(check(&key, &token, &claims, now), Ok(()));
        let cases = [
            (Claims { view: "app::Other", ..claims }, Refusal::OtherView),
            (Claims { page: "/counter/8", ..claims }, Refusal::OtherPage),
            (Claims { visitor: "abd", ..claims }, Refusal::OtherVisitor),
        ];
        for (other, refusal) in cases {
            assert_eq!(check(&key, &token, &other, now), Err(refusal));
        }
        assert_eq!(check(&key, &token, &claims, now + Duration::from_secs(60)), Err(Refusal::Expired));
        assert_eq!(check(&key, &token.replacen('1', "2", 1), &claims, now), Err(Refusal::Forged));
        assert_eq!(check(&Key::new([4u8; 32]).unwrap(), &token, &claims, now), Err(Refusal::Forged));
    }
}
