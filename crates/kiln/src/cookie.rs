//! Cookies: read them with the [`Cookies`] extractor, set them with [`SetCookie`].

use std::fmt::Write;

use kiln_http::Response;

use crate::extract::{FromRequest, RequestContext};
use crate::rejection::Rejection;
use crate::response::IntoResponseParts;

/// The request's cookies, from every `Cookie` header (RFC 6265 §5.4).
#[derive(Debug, Clone, Default)]
pub struct Cookies {
    raw: String,
}

impl Cookies {
    /// The value of the cookie `name`, without surrounding quotes.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.iter().find(|(n, _)| *n == name).map(|(_, v)| v)
    }

    /// Every cookie as (name, value), in the order sent.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.raw.split(';').filter_map(|pair| {
            let (name, value) = pair.split_once('=')?;
            let value = value.trim();
            let value = value.strip_prefix('"').and_then(|v| v.strip_suffix('"')).unwrap_or(value);
            Some((name.trim(), value))
        })
    }
}

impl<S> FromRequest<S> for Cookies {
    fn from_request(cx: &RequestContext<'_, S>) -> Result<Self, Rejection> {
        let mut raw = String::new();
        for (name, value) in cx.request().headers() {
            if name.eq_ignore_ascii_case("cookie") {
                if let Ok(value) = std::str::from_utf8(value) {
                    if !raw.is_empty() {
                        raw.push(';');
                    }
                    raw.push_str(value);
                }
            }
        }
        Ok(Cookies { raw })
    }
}

/// A `Set-Cookie` header, built step by step: `SetCookie::new("sid", "42").http_only()`.
///
/// Names and values must be cookie-safe (no `;`, `,`, whitespace or control
/// characters); an unsafe one makes the cookie be dropped rather than sent broken.
#[derive(Debug, Clone)]
pub struct SetCookie {
    line: String,
    valid: bool,
}

impl SetCookie {
    /// A session cookie `name=value` with no attributes.
    pub fn new(name: &str, value: &str) -> Self {
        let valid = !name.is_empty() && name.bytes().all(is_token) && value.bytes().all(is_cookie_octet);
        SetCookie { line: format!("{name}={value}"), valid }
    }

    /// A cookie that deletes `name` on the client.
    pub fn removal(name: &str) -> Self {
        Self::new(name, "").max_age(0)
    }

    /// `Path=path`.
    pub fn path(self, path: &str) -> Self {
        let ok = path.bytes().all(|b| is_cookie_octet(b) || b == b' ' || b == b',');
        self.attribute("Path", Some(path), ok)
    }

    /// `Max-Age=seconds`.
    pub fn max_age(mut self, seconds: u64) -> Self {
        let _ = write!(self.line, "; Max-Age={seconds}");
        self
    }

    /// `HttpOnly`: not visible to scripts.
    pub fn http_only(self) -> Self {
        self.attribute("HttpOnly", None, true)
    }

    /// `Secure`: sent over HTTPS only.
    pub fn secure(self) -> Self {
        self.attribute("Secure", None, true)
    }

    /// `SameSite=Lax`, `Strict` or `None`.
    pub fn same_site(self, policy: &str) -> Self {
        let ok = matches!(policy, "Lax" | "Strict" | "None");
        self.attribute("SameSite", Some(policy), ok)
    }

    fn attribute(mut self, name: &str, value: Option<&str>, ok: bool) -> Self {
        self.valid &= ok;
        match value {
            Some(v) => {
                let _ = write!(self.line, "; {name}={v}");
            }
            None => {
                let _ = write!(self.line, "; {name}");
            }
        }
        self
    }

    /// The header value, as it will be sent.
    pub fn as_str(&self) -> &str {
        &self.line
    }
}

impl IntoResponseParts for SetCookie {
    fn apply(self, res: &mut Response) {
        if self.valid {
            res.append_header_unchecked(b"Set-Cookie", self.line.as_bytes());
        }
    }
}

/// `cookie-octet` from RFC 6265 §4.1.1.
fn is_cookie_octet(b: u8) -> bool {
    matches!(b, 0x21 | 0x23..=0x2B | 0x2D..=0x3A | 0x3C..=0x5B | 0x5D..=0x7E)
}

fn is_token(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}
