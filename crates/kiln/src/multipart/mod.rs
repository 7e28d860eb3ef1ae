//! `multipart/form-data` (RFC 7578): the [`Multipart`] extractor reads a form field by
//! field as the body arrives, with per-field, per-file and field-count limits; files
//! go to memory under a threshold and to a temporary file above it.
//!
//! A route for large uploads streams its body, so that the engine reads it only as the
//! handler asks and a stalled upload holds one read buffer:
//! [`App::stream_body`](crate::App::stream_body) sets that route's own body limit,
//! above the global one. On other routes `Multipart` reads the body the engine has
//! already read whole (up to the global limit), the same way.
//!
//! ```
//! use kiln::multipart::Multipart;
//! use kiln::{App, Route};
//!
//! #[derive(Route)]
//! #[route(POST, "/upload")]
//! struct Upload;
//!
//! async fn upload(_: Upload, form: Multipart) -> Result<String, kiln::rejection::Rejection> {
//!     let form = form.collect().await?;
//!     let title = form.text("title")?;
//!     let image = form.file("image")?;
//!     Ok(format!("{title}: {} bytes of {:?}", image.len(), image.file_name()))
//! }
//!
//! let app = App::new(|_| ()).route(upload).stream_body::<Upload>(50 * 1024 * 1024);
//! let mut client = kiln::test::TestClient::new(app);
//! let res = client
//!     .request("POST", &Upload)
//!     .multipart(&[("title", None, b"cat".as_slice()), ("image", Some("cat.png"), &[0u8; 5000])])
//!     .send();
//! assert_eq!(res.text(), "cat: 5000 bytes of Some(\"cat.png\")");
//! ```
//!
//! **CSRF.** [`CsrfGuard`](crate::CsrfGuard) accepts a multipart form: the token in
//! the `X-CSRF-Token` header, or in the form field `csrf_token`, which must be the
//! form's **first** field on every route (render [`Csrf::field`](crate::Csrf::field)
//! first in the form; browsers send fields in the form's order). On a route whose
//! body is read whole the guard checks it; on a streamed route the guard checks the
//! cookie and `Multipart` the field, before it hands out any other, so that nothing
//! of the upload reaches the handler unchecked. Either way a form without the field
//! is refused with [`MultipartError::CsrfTokenMissing`]'s message, and one with it
//! after another field with [`MultipartError::CsrfTokenNotFirst`]'s (both `403`).

mod error;
mod field;
mod form;
mod temp;
mod typed;

use bytes::{Bytes, BytesMut};
use kiln_http::IncomingBody;

pub use error::MultipartError;
pub use field::Field;
pub use form::{MultipartForm, Upload, UploadData};

pub use temp::TempFile;
pub use typed::{FileField, MultipartFields};

use crate::csrf::{CSRF_FIELD, CSRF_HEADER};
use crate::extract::{FromRequest, RequestContext, content_type_is};
use crate::form_data::{Event, Parser, boundary};
use crate::rejection::{InvalidBody, Rejection, UnsupportedMediaType};

/// Limits on one multipart form; the body as a whole is bounded by the route's body
/// limit (`413` from the engine).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MultipartLimits {
    /// Most fields (parts) in one form. Default 100.
    pub max_fields: usize,
    /// Most bytes of one text field (a part without a file name). Default 64 KiB.
    pub max_field_bytes: u64,
    /// Most bytes of one file. Default: no limit of its own (the body's bounds it).
    pub max_file_bytes: u64,
    /// A saved file up to this size stays in memory; a larger one goes to a
    /// temporary file. Default 256 KiB.
    pub memory_threshold: usize,
    /// Where temporary files go. Default: the system's temporary directory.
    pub temp_dir: Option<std::path::PathBuf>,
}

impl Default for MultipartLimits {
    fn default() -> Self {
        MultipartLimits {
            max_fields: 100,
            max_field_bytes: 64 * 1024,
            max_file_bytes: u64::MAX,
            memory_threshold: 256 * 1024,
            temp_dir: None,
        }
    }
}

/// A `multipart/form-data` body, read field by field with
/// [`next_field`](Self::next_field), or whole with [`collect`](Self::collect).
///
/// As an extractor: `415` when the request is not `multipart/form-data`, `400` when
/// its boundary is missing or invalid. See the [module](self) for limits and CSRF.
#[derive(Debug)]
pub struct Multipart {
    body: IncomingBody,
    buf: BytesMut,
    eof: bool,
    parser: Parser,
    limits: MultipartLimits,
    fields: usize,
    /// A part's data not yet read to its end.
    in_part: bool,
    /// The CSRF token the first field must carry (a streamed form behind `CsrfGuard`),
    /// until it is checked.
    csrf: Option<String>,
}

impl Multipart {
    /// A form over `body` delimited by `boundary`.
    pub fn new(body: IncomingBody, boundary: &str) -> Self {
        Multipart {
            body,
            buf: BytesMut::new(),
            eof: false,
            parser: Parser::new(boundary),
            limits: MultipartLimits::default(),
            fields: 0,
            in_part: false,
            csrf: None,
        }
    }

    /// Replaces the default limits.
    pub fn with_limits(mut self, limits: MultipartLimits) -> Self {
        self.limits = limits;
        self
    }

    /// The limits in force.
    pub fn limits(&self) -> &MultipartLimits {
        &self.limits
    }

    /// The next field, or `None` after the last. What the handler left unread of the
    /// previous field is skipped.
    pub async fn next_field(&mut self) -> Result<Option<Field<'_>>, MultipartError> {
        if let Some(expected) = self.csrf.take() {
            self.check_csrf(&expected).await?;
        }
        self.skip_part().await?;
        match self.event().await? {
            Event::Part(head) => {
                self.begin_part()?;
                Ok(Some(Field::new(self, head)))
            }
            Event::End => Ok(None),
            _ => Err(MultipartError::Malformed("a part did not begin")),
        }
    }

    /// Reads the form's first field, which must be the CSRF token, and checks it
    /// against `expected` (a streamed form behind `CsrfGuard`).
    async fn check_csrf(&mut self, expected: &str) -> Result<(), MultipartError> {
        let head = match self.event().await? {
            Event::Part(head) => head,
            Event::End => return Err(MultipartError::CsrfTokenMissing),
            _ => return Err(MultipartError::Malformed("a part did not begin")),
        };
        self.begin_part()?;
        if head.name != CSRF_FIELD {
            return Err(self.token_after(head.name).await);
        }
        let sent = Field::new(self, head).text().await?;
        if !crate::csrf::same(sent.as_bytes(), expected.as_bytes()) {
            return Err(MultipartError::CsrfToken("the CSRF token is wrong; reload the form"));
        }
        Ok(())
    }

    /// Why the form's first field, `first`, was not the token: the token comes later,
    /// or not at all. The rest of the form is read to tell which, its data skipped as
    /// it arrives (one read buffer, and no more fields than the limit).
    async fn token_after(&mut self, first: String) -> MultipartError {
        loop {
            if let Err(e) = self.skip_part().await {
                return e;
            }
            match self.event().await {
                Ok(Event::Part(head)) if head.name == CSRF_FIELD => return MultipartError::CsrfTokenNotFirst(first),
                Ok(Event::Part(_)) => {
                    if let Err(e) = self.begin_part() {
                        return e;
                    }
                }
                Ok(Event::End) => return MultipartError::CsrfTokenMissing,
                Ok(_) => return MultipartError::Malformed("a part did not begin"),
                Err(e) => return e,
            }
        }
    }

    /// Counts a part that has begun, against [`MultipartLimits::max_fields`].
    fn begin_part(&mut self) -> Result<(), MultipartError> {
        self.fields += 1;
        if self.fields > self.limits.max_fields {
            return Err(MultipartError::TooManyFields(self.limits.max_fields));
        }
        self.in_part = true;
        Ok(())
    }

    /// Skips what is left unread of the current part.
    async fn skip_part(&mut self) -> Result<(), MultipartError> {
        while self.in_part {
            match self.event().await? {
                Event::Data(_) => {}
                Event::PartEnd => self.in_part = false,
                _ => return Err(MultipartError::Malformed("a part did not end")),
            }
        }
        Ok(())
    }

    /// Reads every field: text fields into memory, files saved (to memory under the
    /// threshold, else to a temporary file).
    pub async fn collect(mut self) -> Result<MultipartForm, MultipartError> {
        let mut form = MultipartForm::default();
        while let Some(field) = self.next_field().await? {
            if field.file_name().is_some() {
                form.files.push(field.save().await?);
            } else {
                let name = field.name().to_owned();
                form.texts.push((name, field.text().await?));
            }
        }
        Ok(form)
    }

    /// The parser's next event, reading more of the body as it needs.
    async fn event(&mut self) -> Result<Event, MultipartError> {
        loop {
            match self.parser.next(&mut self.buf, self.eof)? {
                Event::NeedMore => match self.body.chunk().await? {
                    Some(chunk) => self.buf.extend_from_slice(&chunk),
                    None => self.eof = true,
                },
                event => return Ok(event),
            }
        }
    }
}

impl<S> FromRequest<S> for Multipart {
    fn from_request(cx: &RequestContext<'_, S>) -> Result<Self, Rejection> {
        let req = cx.request();
        if !content_type_is(req, "multipart/form-data") {
            return Err(UnsupportedMediaType::new("expected a multipart/form-data body").into());
        }
        let content_type = req.header_str("content-type").unwrap_or("");
        let Some(boundary) = boundary(content_type) else {
            return Err(InvalidBody::new("multipart/form-data without a valid boundary parameter").into());
        };
        let body = match req.body_stream() {
            Some(stream) => stream,
            None => IncomingBody::from_bytes(Bytes::copy_from_slice(req.body())),
        };
        let streamed = req.body_stream().is_some();
        let mut form = Multipart::new(body, boundary);
        if streamed && req.header(CSRF_HEADER).is_none() && !matches!(req.method(), "GET" | "HEAD" | "OPTIONS") {
            form.csrf = crate::csrf::expected_token(cx);
        }
        Ok(form)
    }
}
