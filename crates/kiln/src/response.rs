//! What a handler returns: anything that can fill a [`Response`].

use std::fmt;

use kiln_http::{Bytes, Response, StatusCode};

use crate::rejection::Rejection;

/// Fills the response. Handlers return it; bodies go straight into the response's
/// reusable buffer.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be turned into a response",
    label = "a handler must return something that implements `IntoResponse`",
    note = "return `&'static str`, `String`, `Vec<u8>`, `Bytes`, `Html<_>`, `Json<_>`, `maud::Markup`, `Redirect`, `(StatusCode, _)` or `Result<_, _>` of these"
)]
pub trait IntoResponse {
    /// Writes status, headers and body into `res`.
    fn into_response(self, res: &mut Response);
}

/// Something that sets part of a response (status, a header, a cookie) before or
/// around a body: the non-last members of a response tuple such as
/// `(StatusCode::CREATED, [("Location", "/x")], "made")`.
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
        res.set_content_type("text/plain; charset=utf-8");
        res.set_body_static(self.as_bytes());
    }
}

impl IntoResponse for String {
    fn into_response(self, res: &mut Response) {
        res.set_content_type("text/plain; charset=utf-8");
        res.body_mut().extend_from_slice(self.as_bytes());
    }
}

impl IntoResponse for &'static [u8] {
    fn into_response(self, res: &mut Response) {
        res.set_content_type("application/octet-stream");
        res.set_body_static(self);
    }
}

impl IntoResponse for Vec<u8> {
    fn into_response(self, res: &mut Response) {
        res.set_content_type("application/octet-stream");
        res.set_body_bytes(Bytes::from(self));
    }
}

impl IntoResponse for Bytes {
    fn into_response(self, res: &mut Response) {
        res.set_content_type("application/octet-stream");
        res.set_body_bytes(self);
    }
}

impl IntoResponse for StatusCode {
    fn into_response(self, res: &mut Response) {
        res.set_status(self);
    }
}

impl IntoResponse for Rejection {
    fn into_response(self, res: &mut Response) {
        self.render_plain(res);
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
                body.into_response(res);
                // Parts after the body, so that an explicit status wins over the body's.
                $($part.apply(res);)+
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
