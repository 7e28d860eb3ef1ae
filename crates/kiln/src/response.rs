//! What a handler returns: anything that can fill a [`Response`].

use std::fmt;

use kiln_http::{Bytes, Response, StatusCode};

use crate::rejection::Rejection;

/// Fills the response. Handlers return it; bodies go straight into the response's
/// reusable buffer.
///
/// A body sets its `Content-Type` only when no part before it did, so
/// `([("Content-Type", "application/rss+xml")], markup)` sends one `Content-Type`,
/// the part's.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a handler's output: it does not implement `IntoResponse`",
    label = "the handler returns this type",
    note = "return `&'static str`, `String`, `Vec<u8>`, `Bytes`, a `kiln::html!` `Fragment<_>`, `Html<_>`, `Json<_>`, `Xml<_>`, `Css<_>`, `Typed<_>`, `maud::Markup`, `Redirect`, `StatusCode`, a tuple `(parts.., body)` such as `(StatusCode, _)`, or `Result<_, _>` of these",
    note = "a type of your own can implement `IntoResponse`"
)]
pub trait IntoResponse {
    /// Writes status, headers and body into `res`.
    fn into_response(self, res: &mut Response);
}

/// Sets `Content-Type` unless a response part already did: a body's default.
pub(crate) fn default_content_type(res: &mut Response, value: &str) {
    if !res.has_header("content-type") {
        res.set_content_type(value);
    }
}

/// Something that sets part of a response (status, a header, a cookie) before or
/// around a body: the non-last members of a response tuple such as
/// `(StatusCode::CREATED, [("Location", "/x")], "made")`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a part of a response tuple: it does not implement `IntoResponseParts`",
    label = "every member of a response tuple but the last must be a part",
    note = "parts are `StatusCode`, `[(name, value); N]`, `Header(name, value)`, `SetCookie`, `Csrf`, `SessionCookies` or `Option<_>` of one; the body comes last"
)]
pub trait IntoResponseParts {
    /// Applies the part to `res`.
    fn apply(self, res: &mut Response);
}

impl IntoResponse for () {
    fn into_response(self, _: &mut Response) {}
}

impl IntoResponse for Response {
    fn into_response(self, res: &mut Response) {
        *res = self;
    }
}

impl IntoResponse for &'static str {
    fn into_response(self, res: &mut Response) {
        default_content_type(res, "text/plain; charset=utf-8");
        res.set_body_static(self.as_bytes());
    }
}

impl IntoResponse for String {
    fn into_response(self, res: &mut Response) {
        default_content_type(res, "text/plain; charset=utf-8");
        res.body_mut().extend_from_slice(self.as_bytes());
    }
}

impl IntoResponse for &'static [u8] {
    fn into_response(self, res: &mut Response) {
        default_content_type(res, "application/octet-stream");
        res.set_body_static(self);
    }
}

impl IntoResponse for Vec<u8> {
    fn into_response(self, res: &mut Response) {
        default_content_type(res, "application/octet-stream");
        res.set_body_bytes(Bytes::from(self));
    }
}

impl IntoResponse for Bytes {
    fn into_response(self, res: &mut Response) {
        default_content_type(res, "application/octet-stream");
        res.set_body_bytes(self);
    }
}

impl IntoResponse for StatusCode {
    fn into_response(self, res: &mut Response) {
        res.set_status(self);
    }
}

/// As the app renders rejections ([`App::on_rejection`](crate::App::on_rejection))
/// when a handler returns it; as plain text anywhere else.
impl IntoResponse for Rejection {
    fn into_response(self, res: &mut Response) {
        crate::config::reject_returned(&self, res);
    }
}

impl<T: IntoResponse, E: IntoResponse> IntoResponse for Result<T, E> {
    fn into_response(self, res: &mut Response) {
        match self {
            Ok(t) => t.into_response(res),
            Err(e) => e.into_response(res),
        }
    }
}

impl IntoResponseParts for StatusCode {
    fn apply(self, res: &mut Response) {
        res.set_status(self);
    }
}

/// Nothing when `None`: `(cookie_if_new, body)`.
impl<P: IntoResponseParts> IntoResponseParts for Option<P> {
    fn apply(self, res: &mut Response) {
        if let Some(part) = self {
            part.apply(res);
        }
    }
}

/// Headers, sent as given; a `Content-Type` among them replaces the body's own.
impl<K: AsRef<str>, V: AsRef<[u8]>, const N: usize> IntoResponseParts for [(K, V); N] {
    fn apply(self, res: &mut Response) {
        for (name, value) in self {
            // A header that cannot be sent as is (CR or LF in it) is a bug in the app;
            // dropping it is safer than splitting the response.
            let sent = res.insert_header(name.as_ref(), value.as_ref());
            debug_assert!(sent.is_ok(), "invalid header {:?}", name.as_ref());
        }
    }
}

macro_rules! tuple_response {
    ($($part:ident),+) => {
        #[allow(non_snake_case)]
        impl<$($part: IntoResponseParts,)+ T: IntoResponse> IntoResponse for ($($part,)+ T) {
            fn into_response(self, res: &mut Response) {
                let ($($part,)+ body) = self;
                // Parts first, so that a `Content-Type` among them replaces the body's
                // default; then an explicit status wins over one the body set.
                $($part.apply(res);)+
                let status = res.status();
                body.into_response(res);
                if status != StatusCode::OK {
                    res.set_status(status);
                }
            }
        }
    };
}

tuple_response!(P1);
tuple_response!(P1, P2);
tuple_response!(P1, P2, P3);
tuple_response!(P1, P2, P3, P4);

/// A redirect to a link, usually a typed route's value:
/// `Redirect::to(&Writing { page: 2 })`.
#[derive(Debug, Clone)]
pub struct Redirect {
    status: StatusCode,
    location: String,
}

impl Redirect {
    /// `303 See Other`: after a form post, "now GET this".
    pub fn to(location: impl fmt::Display) -> Self {
        Redirect { status: StatusCode::SEE_OTHER, location: location.to_string() }
    }

    /// `307 Temporary Redirect`: same method, same body, elsewhere this time.
    pub fn temporary(location: impl fmt::Display) -> Self {
        Redirect { status: StatusCode::TEMPORARY_REDIRECT, location: location.to_string() }
    }

    /// `308 Permanent Redirect`: same method, same body, elsewhere from now on.
    pub fn permanent(location: impl fmt::Display) -> Self {
        Redirect { status: StatusCode::PERMANENT_REDIRECT, location: location.to_string() }
    }

    /// Where the redirect points.
    pub fn location(&self) -> &str {
        &self.location
    }
}

impl IntoResponse for Redirect {
    fn into_response(self, res: &mut Response) {
        res.set_status(self.status);
        if res.insert_header("Location", self.location.as_bytes()).is_err() {
            res.set_status(StatusCode::INTERNAL_SERVER_ERROR);
        }
    }
}

/// A header to set on a response: `(Header("X-Request-Id", id), body)`.
#[derive(Debug, Clone)]
pub struct Header<K, V>(pub K, pub V);

impl<K: AsRef<str>, V: AsRef<[u8]>> IntoResponseParts for Header<K, V> {
    fn apply(self, res: &mut Response) {
        [(self.0, self.1)].apply(res);
    }
}

/// A body with its content type: `Typed("application/rss+xml; charset=utf-8", xml)`.
/// The body is any other response body (`String`, `&'static str`, `Vec<u8>`,
/// `Bytes`, `maud::Markup`).
///
/// ```
/// use kiln::{App, Route, Typed};
///
/// #[derive(Route)]
/// #[route("/feed.rss")]
/// struct Feed;
///
/// async fn feed(_: Feed) -> Typed<String> {
///     Typed("application/rss+xml; charset=utf-8", "<rss version=\"2.0\"/>".to_owned())
/// }
///
/// let mut client = kiln::test::TestClient::new(App::new(|_| ()).route(feed));
/// let res = client.get(&Feed);
/// assert_eq!(res.header_all("content-type").collect::<Vec<_>>(), ["application/rss+xml; charset=utf-8"]);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Typed<T>(pub &'static str, pub T);

impl<T: IntoResponse> IntoResponse for Typed<T> {
    fn into_response(self, res: &mut Response) {
        default_content_type(res, self.0);
        self.1.into_response(res);
    }
}

macro_rules! typed_body {
    ($(#[$doc:meta])* $name:ident => $content_type:literal) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
        pub struct $name<T>(pub T);

        impl<T: IntoResponse> IntoResponse for $name<T> {
            fn into_response(self, res: &mut Response) {
                Typed($content_type, self.0).into_response(res);
            }
        }
    };
}

typed_body!(
    /// An XML body (a sitemap, an Atom feed), sent as `application/xml; charset=utf-8`.
    Xml => "application/xml; charset=utf-8"
);
typed_body!(
    /// An RSS feed, sent as `application/rss+xml; charset=utf-8`.
    Rss => "application/rss+xml; charset=utf-8"
);
typed_body!(
    /// A stylesheet, sent as `text/css; charset=utf-8`.
    Css => "text/css; charset=utf-8"
);
typed_body!(
    /// A script, sent as `text/javascript; charset=utf-8`.
    JavaScript => "text/javascript; charset=utf-8"
);
