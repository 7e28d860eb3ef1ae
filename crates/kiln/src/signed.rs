//! Signed cookies: a value the client keeps but cannot change, signed with the app's
//! [`Key`].

use std::time::Duration;

use crate::config::Config;
use crate::cookie::{Cookies, SetCookie};
use crate::extract::{FromRequest, RequestContext};
use crate::key::{HEX, Key};
use crate::rejection::{Internal, Rejection};

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
    const NEEDS_SECRET_KEY: Option<&'static str> = Some("SignedCookies");

    fn from_request(cx: &RequestContext<'_, S>) -> Result<Self, Rejection> {
        let key = app_key(cx.config(), "SignedCookies")?.clone();
        Ok(SignedCookies { cookies: Cookies::from_request(cx)?, key, secure: cx.config().secure_cookies })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encoded_values_round_trip() {
        let text = "José: a.b;c d%";
        let encoded = encode_value(text);
        assert!(!encoded.contains(['.', ':', ';', ' ']));
        assert_eq!(crate::route::percent_decode(&encoded, false).unwrap(), text);
    }
}
