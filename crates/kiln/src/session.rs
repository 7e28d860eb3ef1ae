//! Sessions in a signed cookie: who is logged in and until when, checked on the
//! server at every request, so an expired or forged cookie is no session.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use kiln_http::Response;

use crate::cookie::{Cookies, SetCookie};
use crate::csrf::CSRF_COOKIE;
use crate::extract::{FromRequest, RequestContext};
use crate::key::{Key, random_token};
use crate::rejection::Rejection;
use crate::response::IntoResponseParts;
use crate::signed::{app_cookie, app_key, encode_value};

/// The session cookie's name.
pub const SESSION_COOKIE: &str = "kiln_session";

/// The visitor's session: the user it was started for, if the request carries a
/// session cookie that the app signed and that has not expired.
///
/// The cookie holds `expiry:started:user` (Unix seconds, Unix milliseconds), signed with the app's [`Key`]; it is `HttpOnly`,
/// `SameSite=Lax`, `Path=/`, and `Secure` with
/// [`App::secure_cookies`](crate::App::secure_cookies). Starting or ending a session
/// also gives the visitor a new CSRF token.
///
/// Ending a session clears the visitor's cookies, but a copy of the cookie taken before
/// stays valid until it expires: nothing on the server remembers it. An app that must
/// end sessions for good (logout everywhere, a changed password) stores when it did so
/// and refuses sessions [`started`](Session::started) before then.
///
/// ```
/// use kiln::{App, Key, Redirect, Route, Session, SessionCookies};
///
/// #[derive(Route)]
/// #[route(POST, "/login")]
/// struct Login;
///
/// #[derive(Route)]
/// #[route("/editor")]
/// struct Editor;
///
/// async fn login(_: Login, session: Session) -> (SessionCookies, Redirect) {
///     (session.start("ada"), Redirect::to(&Editor))
/// }
///
/// async fn editor(_: Editor, session: Session) -> String {
///     match session.user() {
///         Some(user) => format!("hello {user}"),
///         None => "please log in".into(),
///     }
/// }
///
/// let app = App::new(|_| ()).secret_key(Key::generate()).route(login).route(editor);
/// let mut client = kiln::test::TestClient::new(app);
/// let res = client.request("POST", &Login).send();
/// let cookie = res.header_all("set-cookie").find(|c| c.starts_with("kiln_session=")).unwrap();
/// let cookie = cookie.split(';').next().unwrap().to_owned();
/// assert_eq!(client.request("GET", &Editor).header("Cookie", &cookie).send().text(), "hello ada");
/// assert_eq!(client.get(&Editor).text(), "please log in");
/// ```
#[derive(Debug, Clone)]
pub struct Session {
    user: Option<String>,
    started: Option<SystemTime>,
    key: Key,
    ttl: Duration,
    secure: bool,
}

impl Session {
    /// The user the session was started for; `None` without a valid session.
    pub fn user(&self) -> Option<&str> {
        self.user.as_deref()
    }

    /// When the session was started, to the millisecond by the server's clock; `None`
    /// without a valid session.
    pub fn started(&self) -> Option<SystemTime> {
        self.started
    }

    /// Starts a session for `user`, lasting the app's
    /// [`session_ttl`](crate::App::session_ttl); put the result in the response.
    pub fn start(&self, user: &str) -> SessionCookies {
        let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
        let expires = now.as_secs().saturating_add(self.ttl.as_secs());
        let started = now.as_millis();
        let value = self.key.sign(SESSION_COOKIE, &format!("{expires}:{started}:{}", encode_value(user)));
        let csrf = self.key.sign(CSRF_COOKIE, &random_token());
        SessionCookies {
            session: app_cookie(self.secure, SESSION_COOKIE, &value, Some(self.ttl)),
            csrf: app_cookie(self.secure, CSRF_COOKIE, &csrf, None),
        }
    }

    /// Ends the session (logout); put the result in the response.
    pub fn end(&self) -> SessionCookies {
        SessionCookies {
            session: app_cookie(self.secure, SESSION_COOKIE, "", Some(Duration::ZERO)),
            csrf: app_cookie(self.secure, CSRF_COOKIE, "", Some(Duration::ZERO)),
        }
    }

    /// The user in a signed session value and when it started, if it has not expired at `now`.
    fn read(key: &Key, cookie: &str, now: u64) -> Option<(String, SystemTime)> {
        let value = key.verify(SESSION_COOKIE, cookie)?;
        let (expires, rest) = value.split_once(':')?;
        let (started, user) = rest.split_once(':')?;
        if expires.parse::<u64>().ok()? <= now {
            return None;
        }
        let started = UNIX_EPOCH + Duration::from_millis(started.parse().ok()?);
        Some((crate::route::percent_decode(user, false)?.into_owned(), started))
    }
}

/// The cookies that start or end a session: the session cookie and a fresh CSRF token.
#[derive(Debug, Clone)]
pub struct SessionCookies {
    session: SetCookie,
    csrf: SetCookie,
}

impl IntoResponseParts for SessionCookies {
    fn apply(self, res: &mut Response) {
        self.session.apply(res);
        self.csrf.apply(res);
    }
}

/// An app whose handlers ask for it must have a [`secret_key`](crate::App::secret_key):
/// [`App::build`](crate::App::build) refuses one without.
impl<S> FromRequest<S> for Session {
    const NEEDS_SECRET_KEY: Option<&'static str> = Some("Session");

    fn from_request(cx: &RequestContext<'_, S>) -> Result<Self, Rejection> {
        let config = cx.config();
        let key = app_key(config, "Session")?;
        let cookies = Cookies::from_request(cx)?;
        let read = cookies.get(SESSION_COOKIE).and_then(|c| Session::read(key, c, unix_now()));
        let (user, started) = read.map_or((None, None), |(user, started)| (Some(user), Some(started)));
        Ok(Session { user, started, key: key.clone(), ttl: config.session_ttl, secure: config.secure_cookies })
    }
}

fn unix_now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_is_read_until_it_expires() {
        let key = Key::new([1u8; 32]).unwrap();
        let cookie = key.sign(SESSION_COOKIE, "1000:400:ada%20l");
        let started = UNIX_EPOCH + Duration::from_millis(400);
        assert_eq!(Session::read(&key, &cookie, 999), Some(("ada l".to_owned(), started)));
        assert_eq!(Session::read(&key, &cookie, 1000), None);
        let forged = key.sign("kiln_other", "5000:400:ada");
        assert_eq!(Session::read(&key, &forged, 999), None);
        // The format before sessions knew when they started: no longer a session.
        let old = key.sign(SESSION_COOKIE, "1000:ada");
        assert_eq!(Session::read(&key, &old, 999), None);
    }
}
