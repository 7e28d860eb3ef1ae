//! CSRF protection: a per-session token in a signed cookie, rendered into every
//! state-changing form as a hidden field, and checked before the handler runs.
//!
//! The token lives in its own signed, `HttpOnly`, `SameSite=Lax` cookie (a signed
//! double-submit cookie, so another site can neither read it nor plant its own), and
//! a new one is given whenever a [`Session`](crate::Session) starts or ends.

use std::fmt;

use kiln_http::Response;

use crate::cookie::{Cookies, SetCookie};
use crate::extract::{FromRequest, RequestContext, content_type_is};
use crate::form_data::{Opening, opening_field};
use crate::key::random_token;
use crate::rejection::{InvalidCsrfToken, Rejection};
use crate::response::IntoResponseParts;
use crate::route::__private::query_pairs;
use crate::signed::{app_cookie, app_key};

/// The cookie holding the visitor's CSRF token.
pub const CSRF_COOKIE: &str = "kiln_csrf";
/// The form field (and [`CSRF_HEADER`] the header) that carries the token back.
pub const CSRF_FIELD: &str = "csrf_token";
/// The request header that may carry the token instead of the form field, for
/// requests made by scripts.
pub const CSRF_HEADER: &str = "x-csrf-token";

/// The visitor's CSRF token, to render into forms with [`field`](Self::field).
///
/// A visitor without one gets a new token; the handler must then send the cookie
/// that holds it, by putting [`cookie`](Self::cookie) (or the `Csrf` value itself)
/// among the response's parts.
///
/// ```
/// use kiln::markup::{Flow, Fragment};
/// use kiln::{App, Csrf, CsrfGuard, Key, Route, html};
///
/// #[derive(Route)]
/// #[route("/comment")]
/// struct CommentForm;
///
/// #[derive(Route)]
/// #[route(POST, "/comment")]
/// struct PostComment;
///
/// async fn form(_: CommentForm, csrf: Csrf) -> (Option<kiln::SetCookie>, Fragment<Flow>) {
///     (csrf.cookie(), html! { form method="post" { (csrf.field()) textarea name="body" {} } })
/// }
///
/// async fn post(_: PostComment, _: CsrfGuard) -> &'static str {
///     "posted"
/// }
///
/// let app = App::new(|_| ()).secret_key(Key::generate()).route(form).route(post);
/// let mut client = kiln::test::TestClient::new(app);
/// let page = client.get(&CommentForm);
/// let cookie = page.header("set-cookie").unwrap().split(';').next().unwrap().to_owned();
/// let text = page.text();
/// let token = text.split("value=\"").nth(1).unwrap().split('"').next().unwrap();
/// let ok = client.request("POST", &PostComment).header("Cookie", &cookie)
///     .form(&[("csrf_token", token), ("body", "hi")]).send();
/// assert_eq!(ok.text(), "posted");
/// let forged = client.request("POST", &PostComment).header("Cookie", &cookie)
///     .form(&[("csrf_token", "0"), ("body", "hi")]).send();
/// assert_eq!(forged.status(), 403);
/// ```
#[derive(Debug, Clone)]
pub struct Csrf {
    token: String,
    /// The cookie to send when the token is new.
    cookie: Option<SetCookie>,
}

impl Csrf {
    /// The token.
    pub fn token(&self) -> &str {
        &self.token
    }

    /// The hidden form field carrying the token: render it inside every form that
    /// changes state: `(csrf.field())` in `kiln::html!` (or `maud::html!` with the `maud` feature), or with
    /// `Display`.
    ///
    /// ```
    /// use kiln::{Csrf, html};
    ///
    /// fn form(csrf: &Csrf) -> kiln::markup::Fragment<kiln::markup::Flow> {
    ///     html! { form method="post" { (csrf.field()) button { "Save" } } }
    /// }
    /// ```
    pub fn field(&self) -> CsrfField<'_> {
        CsrfField(&self.token)
    }

    /// The cookie to send when the token is new, as a response part that borrows
    /// nothing: `(csrf.cookie(), html! { form { (csrf.field()) } })`.
    pub fn cookie(&self) -> Option<SetCookie> {
        self.cookie.clone()
    }
}

/// Sends the cookie holding a new token; nothing when the visitor already had one.
impl IntoResponseParts for Csrf {
    fn apply(self, res: &mut Response) {
        if let Some(cookie) = self.cookie {
            cookie.apply(res);
        }
    }
}

/// An app whose handlers ask for it must have a [`secret_key`](crate::App::secret_key):
/// [`App::build`](crate::App::build) refuses one without.
impl<S> FromRequest<S> for Csrf {
    const NEEDS_SECRET_KEY: Option<&'static str> = Some("Csrf");

    fn from_request(cx: &RequestContext<'_, S>) -> Result<Self, Rejection> {
        let key = app_key(cx.config(), "Csrf")?;
        let cookies = Cookies::from_request(cx)?;
        if let Some(token) = cookies.get(CSRF_COOKIE).and_then(|c| key.verify(CSRF_COOKIE, c)) {
            return Ok(Csrf { token: token.to_owned(), cookie: None });
        }
        let token = random_token();
        let cookie = app_cookie(cx.config().secure_cookies, CSRF_COOKIE, &key.sign(CSRF_COOKIE, &token), None);
        Ok(Csrf { token, cookie: Some(cookie) })
    }
}

/// `<input type="hidden" name="csrf_token" value="…">`; see [`Csrf::field`].
#[derive(Debug, Clone, Copy)]
pub struct CsrfField<'a>(&'a str);

impl fmt::Display for CsrfField<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The token is hex, so it needs no escaping.
        write!(f, r#"<input type="hidden" name="{CSRF_FIELD}" value="{}">"#, self.0)
    }
}

/// In `kiln::html!`: a hidden `<input>` is phrasing content, wherever a form's
/// controls go.
impl kiln_html::Render for CsrfField<'_> {
    fn render_to(&self, buf: &mut String) {
        use std::fmt::Write;
        let _ = write!(buf, "{self}");
    }
}

impl<P> kiln_html::InFlow<P> for CsrfField<'_> {}
impl<P> kiln_html::InPhrasing<P> for CsrfField<'_> {}

#[cfg(feature = "maud")]
impl maud::Render for CsrfField<'_> {
    fn render_to(&self, buffer: &mut String) {
        use std::fmt::Write;
        let _ = write!(buffer, "{self}");
    }
}

/// Checks a state-changing request's CSRF token before the handler runs: the token
/// sent in the form field `csrf_token` (or the header `X-CSRF-Token`) must be the one
/// in the visitor's signed CSRF cookie. Missing or wrong, the request gets
/// `403 Forbidden` ([`InvalidCsrfToken`]). `GET`, `HEAD` and `OPTIONS` pass unchecked.
///
/// A `multipart/form-data` form carries the token in the header, or in the field
/// `csrf_token`, which must be the form's **first** field, whether the route reads
/// its body whole or streams it ([`App::stream_body`](crate::App::stream_body)):
/// render [`Csrf::field`] first in an upload form (browsers send fields in the
/// form's order). One rule for both, so that a streamed upload is checked before
/// any of it is read: there the guard checks the cookie and leaves the field to the
/// [`Multipart`](crate::multipart::Multipart) extractor, which checks it before
/// handing out any other field. A form without the field is refused saying the
/// token is missing; a form with it after another field, saying which field came
/// first.
///
/// Put it before a `Form` argument: `async fn save(_: SavePage, _: CsrfGuard, form: Form<Page>)`.
#[derive(Debug, Clone, Copy)]
pub struct CsrfGuard;

impl<S> FromRequest<S> for CsrfGuard {
    const NEEDS_SECRET_KEY: Option<&'static str> = Some("CsrfGuard");

    fn from_request(cx: &RequestContext<'_, S>) -> Result<Self, Rejection> {
        let req = cx.request();
        if matches!(req.method(), "GET" | "HEAD" | "OPTIONS") {
            return Ok(CsrfGuard);
        }
        let key = app_key(cx.config(), "CsrfGuard")?;
        let cookies = Cookies::from_request(cx)?;
        let expected = cookies
            .get(CSRF_COOKIE)
            .and_then(|c| key.verify(CSRF_COOKIE, c))
            .ok_or_else(|| InvalidCsrfToken::new("the CSRF cookie is missing or not valid; reload the form"))?;
        let sent = match req.header_str(CSRF_HEADER) {
            Some(token) => token.to_owned(),
            // A streamed multipart form is not read yet: `Multipart` checks its first
            // field against the cookie before the handler sees any other.
            None if content_type_is(req, MULTIPART_TYPE) && req.body_stream().is_some() => return Ok(CsrfGuard),
            None if content_type_is(req, MULTIPART_TYPE) => {
                let content_type = req.header_str("content-type").unwrap_or("");
                match opening_field(content_type, req.body(), CSRF_FIELD) {
                    Opening::First(token) => token,
                    Opening::After(first) => return Err(InvalidCsrfToken::new(token_not_first(&first)).into()),
                    Opening::Absent => return Err(InvalidCsrfToken::new(token_missing_from_multipart()).into()),
                }
            }
            None if content_type_is(req, FORM_TYPE) => std::str::from_utf8(req.body())
                .ok()
                .and_then(|body| query_pairs(body).find(|(k, _)| k == CSRF_FIELD).map(|(_, v)| v.into_owned()))
                .ok_or_else(|| InvalidCsrfToken::new("the CSRF token is missing"))?,
            // Only a form is searched for the field: say so, or a client that sent the
            // token in a JSON body is told only that it is missing.
            None => return Err(InvalidCsrfToken::new(not_searched(req.header_str("content-type"))).into()),
        };
        if !same(sent.as_bytes(), expected.as_bytes()) {
            return Err(InvalidCsrfToken::new("the CSRF token is wrong; reload the form").into());
        }
        Ok(CsrfGuard)
    }
}

/// The content type whose body [`CsrfGuard`] reads the token from.
const FORM_TYPE: &str = "application/x-www-form-urlencoded";
/// The multipart content type, whose field [`CSRF_FIELD`] carries the token too.
const MULTIPART_TYPE: &str = "multipart/form-data";

/// Why a multipart form was refused: it has no field [`CSRF_FIELD`] (and the request
/// no [`CSRF_HEADER`]).
pub(crate) fn token_missing_from_multipart() -> String {
    format!(
        "the CSRF token is missing from the multipart form: send it as the form's first field {CSRF_FIELD} (render Csrf::field first in the form), or in the X-CSRF-Token header"
    )
}

/// Why a multipart form was refused: its token is not its first field, `first` is.
pub(crate) fn token_not_first(first: &str) -> String {
    let first: String = first.chars().take(80).collect();
    format!(
        "the CSRF token must be the multipart form's first field, but it comes after the field {first:?}: render Csrf::field first in the form, or send the token in the X-CSRF-Token header"
    )
}

/// The token a state-changing request must carry, from its signed CSRF cookie, when
/// the app has a key and the request such a cookie; for `Multipart` on a streamed
/// route, which checks the form's first field against it.
pub(crate) fn expected_token<S>(cx: &RequestContext<'_, S>) -> Option<String> {
    let key = cx.config().key.as_ref()?;
    let cookies = Cookies::from_request(cx).ok()?;
    cookies.get(CSRF_COOKIE).and_then(|c| key.verify(CSRF_COOKIE, c)).map(str::to_owned)
}

/// Why no token was found in a body of another content type (or none).
fn not_searched(content_type: Option<&str>) -> String {
    let what = match content_type {
        Some(t) => format!("a body of type {:?} is not searched for it", t.chars().take(80).collect::<String>()),
        None => "the request has no Content-Type".to_owned(),
    };
    format!(
        "the CSRF token is missing: {what}; send it in the X-CSRF-Token header, or as the form field {CSRF_FIELD} with Content-Type {FORM_TYPE}"
    )
}

/// Compares in time that depends on the lengths only.
pub(crate) fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}
