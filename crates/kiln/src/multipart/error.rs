//! Why a multipart form could not be read, and the status each reason answers with.

use std::fmt;

use kiln_http::{BodyError, Response, StatusCode};

use crate::csrf::{token_missing_from_multipart, token_not_first};
use crate::rejection::{InvalidBody, InvalidCsrfToken, InvalidForm, PayloadTooLarge, Rejection};
use crate::response::IntoResponse;

/// A multipart form that could not be read. Converts into a [`Rejection`] (so `?`
/// works in a handler returning one) with a clear status: `413` over a limit, `400`
/// malformed, `422` a required field missing, `403` a wrong CSRF token.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum MultipartError {
    /// The form breaks RFC 7578 / RFC 2046 framing (`400`).
    Malformed(&'static str),
    /// A field is over its limit (`413`): its name and the limit in bytes.
    FieldTooLarge {
        /// The field's name.
        field: String,
        /// The limit it passed.
        limit: u64,
    },
    /// More fields than [`MultipartLimits::max_fields`](super::MultipartLimits) (`413`).
    TooManyFields(usize),
    /// A field the handler requires is absent (`422`).
    MissingField(String),
    /// A field's text is not UTF-8 (`400`).
    NotUtf8(String),
    /// The CSRF token, the form's first field, is wrong (`403`).
    CsrfToken(&'static str),
    /// The form has no CSRF token field, and the request no `X-CSRF-Token` header
    /// (`403`).
    CsrfTokenMissing,
    /// The CSRF token field is not the form's first (`403`): the name of the field
    /// that came first. Nothing of the form is handed out before the token is
    /// checked, so it must open the form.
    CsrfTokenNotFirst(String),
    /// The body itself could not be read; the engine answers it (timeout `408`,
    /// over the route's limit `413`).
    Body(BodyError),
    /// Saving a file failed (`500`): the disk is full, say.
    Io(String),
}

impl MultipartError {
    /// The status this error answers with.
    pub fn status(&self) -> StatusCode {
        self.rejection().status()
    }

    /// The rejection it answers with.
    pub fn rejection(&self) -> Rejection {
        let message = self.to_string();
        match self {
            MultipartError::Malformed(_) | MultipartError::NotUtf8(_) => InvalidBody::new(message).into(),
            MultipartError::FieldTooLarge { .. } | MultipartError::TooManyFields(_) => {
                PayloadTooLarge::new(message).into()
            }
            MultipartError::MissingField(_) => InvalidForm::new(message).into(),
            MultipartError::CsrfToken(_) | MultipartError::CsrfTokenMissing | MultipartError::CsrfTokenNotFirst(_) => {
                InvalidCsrfToken::new(message).into()
            }
            MultipartError::Body(e) => Rejection::custom(e.status(), message),
            MultipartError::Io(_) => {
                Rejection::custom(StatusCode::INTERNAL_SERVER_ERROR, "the upload could not be saved")
            }
        }
    }
}

impl fmt::Display for MultipartError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MultipartError::Malformed(why) => write!(f, "malformed multipart form: {why}"),
            MultipartError::FieldTooLarge { field, limit } => {
                write!(f, "the form field {field:?} is larger than its limit of {limit} bytes")
            }
            MultipartError::TooManyFields(n) => write!(f, "the form has more than {n} fields"),
            MultipartError::MissingField(name) => write!(f, "the form field {name:?} is missing"),
            MultipartError::NotUtf8(name) => write!(f, "the form field {name:?} is not UTF-8 text"),
            MultipartError::CsrfToken(why) => f.write_str(why),
            MultipartError::CsrfTokenMissing => f.write_str(&token_missing_from_multipart()),
            MultipartError::CsrfTokenNotFirst(first) => f.write_str(&token_not_first(first)),
            MultipartError::Body(e) => write!(f, "{e}"),
            MultipartError::Io(e) => write!(f, "the upload could not be saved: {e}"),
        }
    }
}

impl std::error::Error for MultipartError {}

impl From<crate::form_data::Malformed> for MultipartError {
    fn from(e: crate::form_data::Malformed) -> Self {
        MultipartError::Malformed(e.0)
    }
}

impl From<BodyError> for MultipartError {
    fn from(e: BodyError) -> Self {
        MultipartError::Body(e)
    }
}

impl From<MultipartError> for Rejection {
    fn from(e: MultipartError) -> Self {
        e.rejection()
    }
}

impl IntoResponse for MultipartError {
    fn into_response(self, res: &mut Response) {
        self.rejection().into_response(res);
    }
}
