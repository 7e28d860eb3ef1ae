//! Signed cookies: a value the client keeps but cannot change, HMAC-SHA256 over the
//! cookie's name and value with the app's [`Key`].

use std::fmt;
use std::time::Duration;

use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

use crate::config::Config;
use crate::cookie::{Cookies, SetCookie};
use crate::extract::{FromRequest, RequestContext};
use crate::rejection::{Internal, Rejection};

/// Fewest bytes of secret a [`Key`] accepts: HMAC-SHA256's own output size.
pub const MIN_KEY_BYTES: usize = 32;
/// Hex digits of the signature appended to a signed value.
const SIGNATURE_HEX: usize = 64;

/// The app's secret for signing cookies, sessions and CSRF tokens; give it with
/// [`App::secret_key`](crate::App::secret_key). Keep it out of the repository (an
/// environment variable, a file readable by the server only); changing it ends every
/// session.
#[derive(Clone)]
pub struct Key {
    /// The keyed state, ready to clone per signature.
    mac: Hmac<Sha256>,
}

impl Key {
    /// A key from a secret of at least [`MIN_KEY_BYTES`] bytes (a long random
    /// string, say).
    pub fn new(secret: impl AsRef<[u8]>) -> Result<Key, KeyTooShort> {
        let secret = secret.as_ref();
        if secret.len() < MIN_KEY_BYTES {
            return Err(KeyTooShort(secret.len()));
        }
        // HMAC takes keys of any length, so this cannot fail.
        let mac = Hmac::<Sha256>::new_from_slice(secret).map_err(|_| KeyTooShort(secret.len()))?;
        Ok(Key { mac })
    }

    /// A random key: sessions end when the process does. For tests and development.
    pub fn generate() -> Key {
        let mut secret = [0u8; MIN_KEY_BYTES];
        fill_random(&mut secret);
        Key::new(secret).expect("32 bytes")
    }

    /// The signature of `value` as the cookie `name`, in hex.
    fn signature(&self, name: &str, value: &str) -> [u8; SIGNATURE_HEX] {
        let mut mac = self.mac.clone();
        mac.update(name.as_bytes());
        mac.update(b"=");
        mac.update(value.as_bytes());
        let mut hex = [0u8; SIGNATURE_HEX];
        for (i, b) in mac.finalize().into_bytes().iter().enumerate() {
            hex[2 * i] = HEX[usize::from(b >> 4)];
            hex[2 * i + 1] = HEX[usize::from(b & 15)];
        }
        hex
    }

    /// `value.signature`, the form a signed cookie is sent in.
    pub(crate) fn sign(&self, name: &str, value: &str) -> String {
        let signature = self.signature(name, value);
        let mut signed = String::with_capacity(value.len() + 1 + SIGNATURE_HEX);
        signed.push_str(value);
        signed.push('.');
        signed.extend(signature.iter().map(|&b| char::from(b)));
        signed
    }

    /// The value of a signed cookie, if its signature is right (compared in constant time).
    pub(crate) fn verify<'v>(&self, name: &str, signed: &'v str) -> Option<&'v str> {
        let (value, signature) = signed.rsplit_once('.')?;
        let expected = self.signature(name, value);
        let given = signature.as_bytes();
        if given.len() != SIGNATURE_HEX {
            return None;
        }
        let differ = expected.iter().zip(given).fold(0u8, |acc, (a, b)| acc | (a ^ b));
        (differ == 0).then_some(value)
    }
}

impl fmt::Debug for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Key(..)")
    }
}

/// A secret shorter than [`MIN_KEY_BYTES`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyTooShort(usize);

impl fmt::Display for KeyTooShort {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "a secret key needs at least {MIN_KEY_BYTES} bytes; this one has {}", self.0)
    }
}

impl std::error::Error for KeyTooShort {}

const HEX: &[u8; 16] = b"0123456789abcdef";

/// Fills `buf` from the operating system's random source.
pub(crate) fn fill_random(buf: &mut [u8]) {
    // The OS source fails only when the system itself is broken; a predictable token
    // would be worse than stopping.
    getrandom::fill(buf).expect("the operating system's random source failed");
}

/// A random token of 32 bytes, in hex.
pub(crate) fn random_token() -> String {
    let mut bytes = [0u8; 32];
    fill_random(&mut bytes);
    bytes.iter().flat_map(|b| [char::from(HEX[usize::from(b >> 4)]), char::from(HEX[usize::from(b & 15)])]).collect()
}

/// Percent-encodes every byte but `A-Z a-z 0-9 - _ ~`, so any text fits in a cookie
/// and `.` and `:` stay free as separators.
pub(crate) fn encode_value(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for b in value.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'~') {
            out.push(char::from(b));
        } else {
            out.push('%');
            out.push(char::from(HEX[usize::from(b >> 4)]));
            out.push(char::from(HEX[usize::from(b & 15)]));
        }
    }
    out
}

/// The key the app was given, or a 500 naming the missing setting.
pub(crate) fn app_key<'a>(config: &'a Config, what: &str) -> Result<&'a Key, Rejection> {
    config.key.as_ref().ok_or_else(|| {
        Internal::new(format!("a handler asks for `{what}` but the app has no secret key: call `App::secret_key`"))
            .into()
    })
}

/// A cookie as the app sends its own: `Path=/`, `HttpOnly`, `SameSite=Lax`, and
/// `Secure` when the app says so.
pub(crate) fn app_cookie(secure: bool, name: &str, value: &str, max_age: Option<Duration>) -> SetCookie {
    let mut cookie = SetCookie::new(name, value).path("/").http_only().same_site("Lax");
    if let Some(age) = max_age {
        cookie = cookie.max_age(age.as_secs());
    }
    if secure {
        cookie = cookie.secure();
    }
    cookie
}

/// The request's cookies whose signature is right; and the way to set new ones.
///
/// A cookie whose value was changed by the client, or signed for another cookie name
/// or with another key, reads as absent.
///
/// ```
/// use kiln::{App, Key, Route, SignedCookies, SetCookie};
///
/// #[derive(Route)]
/// #[route("/visit")]
/// struct Visit;
///
/// async fn visit(_: Visit, cookies: SignedCookies) -> (SetCookie, String) {
///     let seen: u32 = cookies.get("visits").and_then(|v| v.parse().ok()).unwrap_or(0);
///     (cookies.set("visits", &(seen + 1).to_string()), format!("visit {}", seen + 1))
/// }
///
/// let app = App::new(|_| ()).secret_key(Key::generate()).route(visit);
/// let mut client = kiln::test::TestClient::new(app);
/// let first = client.get(&Visit);
/// let cookie = first.header("set-cookie").unwrap().split(';').next().unwrap().to_owned();
/// let second = client.request("GET", &Visit).header("Cookie", &cookie).send();
/// assert_eq!(second.text(), "visit 2");
/// let forged = client.request("GET", &Visit).header("Cookie", &cookie.replacen("=1.", "=9.", 1)).send();
/// assert_eq!(forged.text(), "visit 1");
/// ```
#[derive(Debug, Clone)]
pub struct SignedCookies {
    cookies: Cookies,
    key: Key,
    secure: bool,
}

impl SignedCookies {
    /// The value of the cookie `name` if its signature is right.
    pub fn get(&self, name: &str) -> Option<String> {
        let signed = self.cookies.get(name)?;
        let value = self.key.verify(name, signed)?;
        crate::route::percent_decode(value, false).map(|v| v.into_owned())
    }

    /// A signed cookie `name=value` (`Path=/`, `HttpOnly`, `SameSite=Lax`, and `Secure`
    /// if [`App::secure_cookies`](crate::App::secure_cookies)), for the browser's session.
    pub fn set(&self, name: &str, value: &str) -> SetCookie {
        app_cookie(self.secure, name, &self.key.sign(name, &encode_value(value)), None)
    }

    /// Like [`set`](Self::set), kept by the browser for `max_age`.
    pub fn set_for(&self, name: &str, value: &str, max_age: Duration) -> SetCookie {
        app_cookie(self.secure, name, &self.key.sign(name, &encode_value(value)), Some(max_age))
    }

    /// A cookie that deletes `name` on the client.
    pub fn remove(&self, name: &str) -> SetCookie {
        app_cookie(self.secure, name, "", Some(Duration::ZERO))
    }
}

impl<S> FromRequest<S> for SignedCookies {
    fn from_request(cx: &RequestContext<'_, S>) -> Result<Self, Rejection> {
        let key = app_key(cx.config(), "SignedCookies")?.clone();
        Ok(SignedCookies { cookies: Cookies::from_request(cx)?, key, secure: cx.config().secure_cookies })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_signature_binds_name_value_and_key() {
        let key = Key::new([7u8; 32]).unwrap();
        let signed = key.sign("sid", "abc");
        assert_eq!(key.verify("sid", &signed), Some("abc"));
        assert_eq!(key.verify("other", &signed), None);
        assert_eq!(key.verify("sid", &signed.replacen("abc", "abd", 1)), None);
        assert_eq!(key.verify("sid", &signed[..signed.len() - 1]), None);
        assert_eq!(key.verify("sid", "abc"), None);
        assert_eq!(Key::new([8u8; 32]).unwrap().verify("sid", &signed), None);
    }

    #[test]
    fn short_keys_are_refused() {
        assert_eq!(Key::new([0u8; 31]).unwrap_err(), KeyTooShort(31));
    }

    #[test]
    fn encoded_values_round_trip() {
        let text = "José: a.b;c d%";
        let encoded = encode_value(text);
        assert!(!encoded.contains(['.', ':', ';', ' ']));
        assert_eq!(crate::route::percent_decode(&encoded, false).unwrap(), text);
    }
}
