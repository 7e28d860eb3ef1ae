//! The token that ties a live view's socket to the page it was rendered for: signed
//! with the app's [`Key`], it names the view, the page (its route with its
//! parameters) and the visitor (the signed CSRF cookie), and expires. The first
//! answer renders it into the page; the socket must offer it back, so another site
//! cannot open the socket with the visitor's cookies (it cannot read the page), and a
//! token serves only the view and the page it was made for.
//!
//! The token is `expires.view.page.visitor.signature`: Unix seconds, then 8 hex digits
//! of FNV-1a over each name, then the signature, all characters a WebSocket
//! subprotocol may carry (RFC 6455 §4.1: a token of RFC 7230). The signature covers
//! the names themselves, whole, beside the expiry and the three checksums (its context
//! holds them), so a token opens only what it was made for; the checksums only say
//! which name a refused token was made for another of.

use std::fmt::Write;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

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
    let mut value = String::with_capacity(20 + 3 * 9);
    let _ = write!(value, "{expires}");
    for name in claims.names() {
        let _ = write!(value, ".{:08x}", checksum(name));
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
            let field = fields.next().and_then(|f| u32::from_str_radix(f, 16).ok());
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

    /// The context the token is signed in: the claims whole, each after its length so
    /// that no two claims make the same context.
    fn context(&self) -> String {
        let mut context = String::with_capacity(CONTEXT.len() + 24 + self.view.len() + self.page.len() + self.visitor.len());
        context.push_str(CONTEXT);
        for name in self.names() {
            let _ = write!(context, " {}", name.len());
        }
        context.push(' ');
        for name in self.names() {
            context.push_str(name);
        }
        context
    }
}

/// FNV-1a over `name`, 32 bits: which name a token was made for, not a proof of it
/// (the signature is).
fn checksum(name: &str) -> u32 {
    name.bytes().fold(0x811c_9dc5, |hash, b| (hash ^ u32::from(b)).wrapping_mul(0x0100_0193))
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
        fields[2] = format!("{:08x}", checksum(other.page));
        assert_eq!(check(&key, &fields.join("."), &other, now), Err(Refusal::Forged));
    }

    #[test]
    fn the_signing_context_holds_each_claim_whole_and_apart() {
        let a = Claims { view: "v", page: "/ab", visitor: "c" };
        let b = Claims { view: "v", page: "/a", visitor: "bc" };
        assert_ne!(a.context(), b.context());
        assert_eq!(a.context(), "kiln-live 1 3 1 v/abc");
    }
}
