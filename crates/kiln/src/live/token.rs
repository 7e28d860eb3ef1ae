//! The token that ties a live view's socket to the page it was rendered for: signed
//! with the app's [`Key`], it names the view, the page (its route with its
//! parameters) and the visitor (the signed CSRF cookie), and expires. The first
//! answer renders it into the page; the socket must offer it back, so another site
//! cannot open the socket with the visitor's cookies (it cannot read the page), and a
//! token serves only the view and the page it was made for.
//!
//! The token is `expires.view.page.visitor.signature`: Unix seconds, then 4 hex digits
//! of a checksum of each name, then the signature, all characters a WebSocket
//! subprotocol may carry (RFC 6455 §4.1: a token of RFC 7230). The checksums only say
//! which name a refused token was made for another of; the signature (HMAC-SHA256 with
//! the app's key) covers the expiry, the checksums and the claims themselves, in its
//! context: the page whole, the visitor's CSRF token by its first 128 bits, and the
//! view by a 64-bit FNV-1a of its type name (the names are the app's own, never chosen
//! by whoever holds a token, so only two of the app's views colliding by chance could
//! be confused). The message stays within two SHA-256 blocks for a page of up to 40
//! bytes: signing a first answer costs three compressions.

use std::fmt::Write;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::key::Key;

/// The context live tokens are signed in ([`Key::sign`]).
const CONTEXT: &str = "kiln-live";
/// Hex digits of the visitor's CSRF token the signature covers: 128 bits.
const VISITOR_DIGITS: usize = 32;

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
    let mut value = String::with_capacity(20 + 3 * 5);
    let _ = write!(value, "{expires}");
    for name in claims.names() {
        let _ = write!(value, ".{:04x}", checksum(name));
    }
    key.sign(&claims.context(), &value)
}

/// Whether `token` is a token this app made for `claims`, still good at `now`.
pub(crate) fn check(key: &Key, token: &str, claims: &Claims<'_>, now: SystemTime) -> Result<(), Refusal> {
    let Some(value) = key.verify(&claims.context(), token) else {
        // Not signed for these claims: say which one it names another of, if any.
        let mut fields = token.split('.').skip(1);
        let refusals = [Refusal::OtherView, Refusal::OtherPage, Refusal::OtherVisitor];
        for (name, refusal) in claims.names().into_iter().zip(refusals) {
            let field = fields.next().and_then(|f| u16::from_str_radix(f, 16).ok());
            if field.is_some_and(|field| field != checksum(name)) {
                return Err(refusal);
            }
        }
        return Err(Refusal::Forged);
    };
    let expires: u64 = value.split('.').next().and_then(|e| e.parse().ok()).ok_or(Refusal::Forged)?;
    if expires <= unix(now) {
        return Err(Refusal::Expired);
    }
    Ok(())
}

impl Claims<'_> {
    fn names(&self) -> [&str; 3] {
        [self.view, self.page, self.visitor]
    }

    /// The context the token is signed in: the claims, the two whose length varies
    /// after their lengths, so that no two claims make the same context.
    fn context(&self) -> String {
        let visitor = self.visitor.get(..VISITOR_DIGITS).unwrap_or(self.visitor);
        let mut context = String::with_capacity(CONTEXT.len() + 28 + visitor.len() + self.page.len());
        let _ = write!(context, "{CONTEXT} {} {} {:016x}", visitor.len(), self.page.len(), fnv1a(self.view));
        context.push_str(visitor);
        context.push_str(self.page);
        context
    }
}

/// FNV-1a over `name`, 64 bits.
fn fnv1a(name: &str) -> u64 {
    name.bytes().fold(0xcbf2_9ce4_8422_2325, |hash, b| (hash ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
}

/// 16 bits of FNV-1a over `name`: which name a token was made for, not a proof of it
/// (the signature is).
fn checksum(name: &str) -> u16 {
    let hash = fnv1a(name);
    (hash ^ (hash >> 16) ^ (hash >> 32) ^ (hash >> 48)) as u16
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
        // A token whose checksums were rewritten for other claims is still not theirs.
        let other = Claims { page: "/counter/8", ..claims };
        let mut fields: Vec<String> = token.split('.').map(str::to_owned).collect();
        fields[2] = format!("{:04x}", checksum(other.page));
        assert_eq!(check(&key, &fields.join("."), &other, now), Err(Refusal::Forged));
    }

    #[test]
    fn the_signing_context_holds_each_claim_whole_and_apart() {
        let a = Claims { view: "v", page: "/ab", visitor: "c" };
        let b = Claims { view: "v", page: "/a", visitor: "bc" };
        assert_ne!(a.context(), b.context());
        assert_eq!(a.context(), format!("kiln-live 1 3 {:016x}c/ab", fnv1a("v")));
        // The visitor by its first 128 bits.
        let long = Claims { visitor: &"ab".repeat(32), ..a };
        assert!(long.context().contains(&format!(" {} 3 ", VISITOR_DIGITS)), "{}", long.context());
    }
}
