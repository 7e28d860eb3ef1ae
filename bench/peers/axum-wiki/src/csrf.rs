//! The comment form's CSRF token, as kiln's site gives it: a signed double-submit cookie.
//! A visitor without a valid `kiln_csrf` cookie gets 32 random bytes in hex, rendered into
//! the form and sent back in an HMAC-SHA256-signed, `HttpOnly`, `SameSite=Lax` cookie.
//! Neither axum nor actix-web has this built in, so it is written here with the crates
//! kiln uses (getrandom, hmac, sha2); actix-wiki shares this file.

use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

/// The cookie holding the token, named as kiln names it.
const COOKIE: &str = "kiln_csrf";
const HEX: &[u8; 16] = b"0123456789abcdef";

/// The process's signing key: random, so tokens end with the process (kiln's default).
pub struct CsrfKey(Hmac<Sha256>);

/// A visitor's token, and the `Set-Cookie` value to send when it is new.
pub struct CsrfToken {
    pub token: String,
    pub set_cookie: Option<String>,
}

impl CsrfKey {
    pub fn generate() -> CsrfKey {
        let mut secret = [0u8; 32];
        getrandom::fill(&mut secret).expect("the operating system's random source failed");
        CsrfKey(Hmac::new_from_slice(&secret).expect("HMAC takes any key length"))
    }

    /// The token in the request's `Cookie` header if its signature is right, else a new one.
    pub fn token(&self, cookie_header: Option<&str>) -> CsrfToken {
        let sent = cookie_header
            .into_iter()
            .flat_map(|h| h.split(';'))
            .filter_map(|pair| pair.trim().strip_prefix(COOKIE)?.strip_prefix('='))
            .find_map(|signed| self.verify(signed));
        if let Some(token) = sent {
            return CsrfToken { token: token.to_owned(), set_cookie: None };
        }
        let mut bytes = [0u8; 32];
        getrandom::fill(&mut bytes).expect("the operating system's random source failed");
        let token = hex(&bytes);
        let set_cookie = format!("{COOKIE}={token}.{}; Path=/; HttpOnly; SameSite=Lax", self.signature(&token));
        CsrfToken { token, set_cookie: Some(set_cookie) }
    }

    fn signature(&self, value: &str) -> String {
        let mut mac = self.0.clone();
        mac.update(COOKIE.as_bytes());
        mac.update(b"=");
        mac.update(value.as_bytes());
        hex(&mac.finalize().into_bytes())
    }

    fn verify<'v>(&self, signed: &'v str) -> Option<&'v str> {
        let (value, signature) = signed.rsplit_once('.')?;
        let expected = self.signature(value);
        let same = expected.len() == signature.len()
            && expected.bytes().zip(signature.bytes()).fold(0u8, |acc, (a, b)| acc | (a ^ b)) == 0;
        same.then_some(value)
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().flat_map(|b| [char::from(HEX[usize::from(b >> 4)]), char::from(HEX[usize::from(b & 15)])]).collect()
}
