//! What a form's handler answers: the next page (`303`), or the form again with its
//! status and the CSRF cookie if the token is new.

use kiln::markup::{Document, Fragment};
use kiln::rejection::TooManyRequests;
use kiln::{Csrf, IntoResponse, Redirect, Response, StatusCode};

/// A form handler's answer.
#[derive(Debug)]
pub(crate) enum Reply {
    /// `303 See Other`: the form was taken.
    SeeOther(Redirect),
    /// A page (usually the form again, with a message) and its status.
    Page(StatusCode, Csrf, Fragment<Document>),
    /// `429 Too Many Requests`: the form again, and when to send it (`Retry-After`,
    /// RFC 9110 §10.2.3).
    TooMany(TooManyRequests, Csrf, Fragment<Document>),
}

impl IntoResponse for Reply {
    fn into_response(self, res: &mut Response) {
        match self {
            Reply::SeeOther(redirect) => redirect.into_response(res),
            Reply::Page(status, csrf, page) => (status, csrf, page).into_response(res),
            Reply::TooMany(refused, csrf, page) => {
                let retry_after = refused.retry_after_secs().to_string();
                (TooManyRequests::STATUS, [("Retry-After", retry_after)], csrf, page).into_response(res);
            }
        }
    }
}
