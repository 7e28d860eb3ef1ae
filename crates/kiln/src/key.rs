//! The app's secret [`Key`]: HMAC-SHA256 signatures over a context (a cookie's name,
//! a token's purpose) and a value, and the random tokens sessions, CSRF protection
//! and apps ([`random_token`]) need.

use std::fmt;

use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

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

    /// The signature of `value` in `context`, in hex.
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

    /// `value.signature`: `value` signed for `context`, the form a signed cookie (its
    /// context is its name) or a token is sent in. The signature is 64 hex digits of
    /// HMAC-SHA256 over `context=value`, so a value signed for one context does not
    /// verify in another. The value is readable by whoever holds the result: sign,
    /// don't hide.
    ///
    /// ```
    /// use kiln::Key;
    ///
    /// let key = Key::new([7u8; 32])?;
    /// let signed = key.sign("invite", "team-4:ada");
    /// assert_eq!(key.verify("invite", &signed), Some("team-4:ada"));
    /// assert_eq!(key.verify("reset", &signed), None);
    /// assert_eq!(key.verify("invite", &signed.replace("ada", "eve")), None);
    /// # Ok::<(), kiln::KeyTooShort>(())
    /// ```
    pub fn sign(&self, context: &str, value: &str) -> String {
        let signature = self.signature(context, value);
        let mut signed = String::with_capacity(value.len() + 1 + SIGNATURE_HEX);
        signed.push_str(value);
        signed.push('.');
        signed.extend(signature.iter().map(|&b| char::from(b)));
        signed
    }

    /// The value of `signed` (as [`sign`](Self::sign) made it for `context`), if its
    /// signature is right; compared in constant time.
    pub fn verify<'v>(&self, context: &str, signed: &'v str) -> Option<&'v str> {
        let (value, signature) = signed.rsplit_once('.')?;
        let expected = self.signature(context, value);
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

pub(crate) const HEX: &[u8; 16] = b"0123456789abcdef";

/// Fills `buf` from the operating system's random source.
fn fill_random(buf: &mut [u8]) {
    // The OS source fails only when the system itself is broken; a predictable token
    // would be worse than stopping.
    getrandom::fill(buf).expect("the operating system's random source failed");
}

/// Random bytes a thread fetches from the operating system at once, for tokens.
const RANDOM_BATCH: usize = 4096;

thread_local! {
    /// Bytes from the OS source not yet used, and where the unused ones start. A page
    /// that hands a new visitor a CSRF token made one `getrandom` call per request;
    /// fetched 4 KiB at a time, it is one call per 128 tokens. Each byte is used once.
    static RANDOM: std::cell::RefCell<(Box<[u8; RANDOM_BATCH]>, usize)> =
        std::cell::RefCell::new((Box::new([0; RANDOM_BATCH]), RANDOM_BATCH));
}

/// A new random token for the app's own use: the name of a stored upload, an
/// invitation code, a password-reset link, an API key.
///
/// 32 bytes (256 bits) from the operating system's cryptographically secure random
/// source (`getrandom`), written as 64 lowercase hex digits (`0-9a-f`), so the token
/// is safe as it is in a URL path, a file name, a header or a cookie. Guessing one
/// is hopeless; two never collide in practice. It is what kiln's own session ids and
/// CSRF tokens are made of. The bytes are fetched 4 KiB at a time per thread, so a
/// token costs one system call per 128 tokens.
///
/// ```
/// let code = kiln::random_token();
/// assert_eq!(code.len(), 64);
/// assert!(code.bytes().all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()));
/// assert_ne!(code, kiln::random_token());
/// ```
pub fn random_token() -> String {
    let mut bytes = [0u8; 32];
    RANDOM.with_borrow_mut(|(pool, used)| {
        if *used + bytes.len() > RANDOM_BATCH {
            fill_random(&mut pool[..]);
            *used = 0;
        }
        let fresh = &mut pool[*used..*used + bytes.len()];
        bytes.copy_from_slice(fresh);
        // Not kept once handed out.
        fresh.fill(0);
        *used += bytes.len();
    });
    let mut token = String::with_capacity(2 * bytes.len());
    for b in bytes {
        token.push(char::from(HEX[usize::from(b >> 4)]));
        token.push(char::from(HEX[usize::from(b & 15)]));
    }
    token
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
    fn tokens_across_many_refills_are_hex_and_never_repeat() {
        // 1,000 tokens use the thread's batch of OS bytes about eight times over.
        let tokens: std::collections::HashSet<String> = (0..1000).map(|_| random_token()).collect();
        assert_eq!(tokens.len(), 1000);
        assert!(tokens.iter().all(|t| t.len() == 64 && t.bytes().all(|b| HEX.contains(&b))));
    }

    #[test]
    fn short_keys_are_refused() {
        assert_eq!(Key::new([0u8; 31]).unwrap_err(), KeyTooShort(31));
    }
}
