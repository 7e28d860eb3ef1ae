//! Bearer tokens (RFC 6750) for APIs: a subject and an expiry, signed with the app's
//! [`Key`], sent as `Authorization: Bearer <token>`. Stateless: the server keeps
//! nothing, so a token stands until it expires or the key changes.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use kiln_http::Request;

use crate::extract::{FromRequest, RequestContext};
use crate::key::{HEX, Key};
use crate::rejection::{Rejection, Unauthorized};
use crate::signed::app_key;

/// The context bearer tokens are signed in ([`Key::sign`]): a signed cookie's value
/// is never a valid token, nor the other way round.
pub const BEARER_CONTEXT: &str = "kiln_bearer";

/// A verified bearer token: the request's `Authorization: Bearer <token>` was signed
/// with the app's [`Key`] by [`BearerToken::issue`] and has not expired.
///
/// As an extractor it refuses with `401` ([`Unauthorized`]) and a
/// `WWW-Authenticate: Bearer` challenge: a request without a token, or with one that
/// is forged, malformed or expired (`error="invalid_token"`, RFC 6750 §3.1).
///
/// ```
/// use std::time::Duration;
/// use kiln::{App, BearerToken, Key, Route};
///
/// #[derive(Route)]
/// #[route(POST, "/api/token")]
/// struct IssueToken;
///
/// #[derive(Route)]
/// #[route("/api/me")]
/// struct Me;
///
/// // A real app checks a password first.
/// async fn issue(_: IssueToken, key: Key) -> String {
///     BearerToken::issue(&key, "ada", Duration::from_secs(3600))
/// }
///
/// async fn me(_: Me, token: BearerToken) -> String {
///     format!("hello {}", token.subject())
/// }
///
/// let app = App::new(|_| ()).secret_key(Key::generate()).route(issue).route(me);
/// let mut client = kiln::test::TestClient::new(app);
/// let token = client.request("POST", &IssueToken).send().text();
/// let res = client.request("GET", &Me).header("Authorization", &format!("Bearer {token}")).send();
/// assert_eq!(res.text(), "hello ada");
/// assert_eq!(client.get(&Me).status(), 401);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BearerToken {
    subject: String,
    expires: SystemTime,
}

impl BearerToken {
    /// A token for `subject` (a user id, a client's name) valid for `ttl` from now,
    /// signed with `key`. Its characters are all allowed in `Authorization` (RFC 6750
    /// §2.1's `b64token`). The subject is readable by whoever holds the token.
    pub fn issue(key: &Key, subject: &str, ttl: Duration) -> String {
        Self::issue_at(key, subject, unix_now().saturating_add(ttl.as_secs()))
    }

    /// A token that expires at `expires` seconds since the Unix epoch.
    fn issue_at(key: &Key, subject: &str, expires: u64) -> String {
        // Hex keeps any subject within b64token and free of the `.` that separates
        // the parts.
        let mut value = format!("{expires}.");
        for b in subject.bytes() {
            value.push(char::from(HEX[usize::from(b >> 4)]));
            value.push(char::from(HEX[usize::from(b & 15)]));
        }
        key.sign(BEARER_CONTEXT, &value)
    }

    /// Reads and checks `token` at `now` (seconds since the epoch).
    pub(crate) fn verify(key: &Key, token: &str, now: u64) -> Result<BearerToken, Unauthorized> {
        let forged = || Unauthorized::invalid_token("the bearer token is not valid");
        let value = key.verify(BEARER_CONTEXT, token).ok_or_else(forged)?;
        let (expires, hex) = value.split_once('.').ok_or_else(forged)?;
        let expires: u64 = expires.parse().map_err(|_| forged())?;
        if now >= expires {
            return Err(Unauthorized::invalid_token("the bearer token has expired"));
        }
        let subject = decode_hex(hex).ok_or_else(forged)?;
        Ok(BearerToken { subject, expires: UNIX_EPOCH + Duration::from_secs(expires) })
    }

    /// Whom the token was issued for.
    pub fn subject(&self) -> &str {
        &self.subject
    }

    /// When the token stops being accepted.
    pub fn expires(&self) -> SystemTime {
        self.expires
    }
}

impl<S> FromRequest<S> for BearerToken {
    const NEEDS_SECRET_KEY: Option<&'static str> = Some("BearerToken");

    fn from_request(cx: &RequestContext<'_, S>) -> Result<Self, Rejection> {
        let key = app_key(cx.config(), "BearerToken")?;
        Ok(BearerToken::from_header(key, &cx.request())?)
    }
}

impl BearerToken {
    /// The request's `Authorization: Bearer` token, checked with `key`.
    pub(crate) fn from_header(key: &Key, req: &Request<'_>) -> Result<BearerToken, Unauthorized> {
        let header = req.header("authorization").ok_or_else(|| Unauthorized::missing("a bearer token is required"))?;
        let header =
            std::str::from_utf8(header).map_err(|_| Unauthorized::invalid_token("the bearer token is not valid"))?;
        // RFC 9110 §11.1: the scheme is case-insensitive.
        let token = match header.split_once(' ') {
            Some((scheme, token)) if scheme.eq_ignore_ascii_case("bearer") => token.trim(),
            _ => return Err(Unauthorized::missing("the Authorization header is not a bearer token")),
        };
        BearerToken::verify(key, token, unix_now())
    }
}

fn decode_hex(hex: &str) -> Option<String> {
    let digit = |b: u8| char::from(b).to_digit(16).and_then(|d| u8::try_from(d).ok());
    let bytes = hex.as_bytes();
    if bytes.len() % 2 != 0 {
        return None;
    }
    let raw: Option<Vec<u8>> = bytes.chunks(2).map(|p| Some(digit(p[0])? << 4 | digit(p[1])?)).collect();
    String::from_utf8(raw?).ok()
}

fn unix_now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_verifies_until_it_expires() {
        let key = Key::new([5u8; 32]).unwrap();
        let token = BearerToken::issue_at(&key, "ada.l@example.org", 1000);
        assert!(token.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'.'), "{token}");
        let read = BearerToken::verify(&key, &token, 999).unwrap();
        assert_eq!(read.subject(), "ada.l@example.org");
        assert_eq!(read.expires(), UNIX_EPOCH + Duration::from_secs(1000));
        assert_eq!(BearerToken::verify(&key, &token, 1000).unwrap_err().message(), "the bearer token has expired");
    }

    #[test]
    fn forged_and_foreign_tokens_are_refused() {
        let key = Key::new([5u8; 32]).unwrap();
        let token = BearerToken::issue_at(&key, "ada", 1000);
        let other = Key::new([6u8; 32]).unwrap();
        assert!(BearerToken::verify(&other, &token, 1).is_err());
        // A later expiry with the old signature.
        assert!(BearerToken::verify(&key, &token.replacen("1000", "9000", 1), 1).is_err());
        // Signed by the right key, but for a cookie.
        let cookie = key.sign("kiln_session", "1000.616461");
        assert!(BearerToken::verify(&key, &cookie, 1).is_err());
        for junk in ["", ".", "x.y.z", "1000.zz.0000"] {
            assert!(BearerToken::verify(&key, junk, 1).is_err(), "{junk}");
        }
    }
}
