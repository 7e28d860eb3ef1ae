//! Why a request was refused before its handler ran: one type per failure, each bound
//! to a status code and a short message naming what was wrong.
//!
//! Every rejection converts into [`Rejection`], which the app renders: by default as
//! `text/plain`, or however [`App::on_rejection`](crate::App::on_rejection) says.

use std::borrow::Cow;
use std::fmt;
use std::time::Duration;

use kiln_http::{Response, StatusCode};

macro_rules! rejection {
    ($(#[$doc:meta])* $name:ident => $status:ident) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq)]
        pub struct $name {
            message: Cow<'static, str>,
        }

        impl $name {
            /// The status code this rejection answers with.
            pub const STATUS: StatusCode = StatusCode::$status;

            /// A rejection with this message.
            pub fn new(message: impl Into<Cow<'static, str>>) -> Self {
                $name { message: message.into() }
            }

            /// What was wrong, for the client.
            pub fn message(&self) -> &str {
                &self.message
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.message)
            }
        }

        impl std::error::Error for $name {}

        impl From<$name> for Rejection {
            fn from(r: $name) -> Self {
                Rejection::$name(r)
            }
        }
    };
}

rejection!(
    /// No route matches the path (404).
    NotFound => NOT_FOUND
);
rejection!(
    /// A path capture did not parse as its field's type, so the path names no
    /// resource (404).
    InvalidPathParam => NOT_FOUND
);
rejection!(
    /// A query parameter is missing or does not parse (400).
    InvalidQuery => BAD_REQUEST
);
rejection!(
    /// A required header is absent or not valid text (400).
    MissingHeader => BAD_REQUEST
);
rejection!(
    /// The body is not what the extractor can read: not UTF-8, say (400).
    InvalidBody => BAD_REQUEST
);
rejection!(
    /// The body is larger than the app's body limit (413).
    PayloadTooLarge => PAYLOAD_TOO_LARGE
);
rejection!(
    /// The `Content-Type` is not the one the extractor reads (415).
    UnsupportedMediaType => UNSUPPORTED_MEDIA_TYPE
);
rejection!(
    /// The body is not well-formed JSON (400).
    MalformedJson => BAD_REQUEST
);
rejection!(
    /// The body is JSON of the wrong shape: a missing field, a wrong type (422).
    InvalidJson => UNPROCESSABLE_ENTITY
);
rejection!(
    /// The form body does not fit the expected fields (422).
    InvalidForm => UNPROCESSABLE_ENTITY
);
rejection!(
    /// A state-changing request without the right CSRF token (403); see
    /// [`CsrfGuard`](crate::CsrfGuard).
    InvalidCsrfToken => FORBIDDEN
);
rejection!(
    /// The request contradicts what is stored: a duplicate key, a missing referenced
    /// row (409). A database conflict converts into it.
    Conflict => CONFLICT
);
rejection!(
    /// The server cannot answer now but may soon: the database is unreachable, or a
    /// queue (the [`blocking`](crate::blocking) pool's) is full (503). Answered with
    /// `Retry-After: 1` unless the renderer set its own.
    Unavailable => SERVICE_UNAVAILABLE
);
rejection!(
    /// A WebSocket handshake that breaks RFC 6455 §4.2.1: not a GET, no
    /// `Upgrade: websocket` or `Connection: upgrade`, a bad `Sec-WebSocket-Key` (400).
    InvalidWebSocketHandshake => BAD_REQUEST
);
rejection!(
    /// A WebSocket handshake for a version other than 13 (426); the response says
    /// `Sec-WebSocket-Version: 13` (RFC 6455 §4.4).
    UnsupportedWebSocketVersion => UPGRADE_REQUIRED
);
rejection!(
    /// The app is wired wrongly, such as a handler asking for a route it does not
    /// serve (500). Never the client's fault.
    Internal => INTERNAL_SERVER_ERROR
);

impl InvalidPathParam {
    pub(crate) fn missing(name: &str) -> Self {
        Self::new(format!("path parameter `{name}` was not captured"))
    }

    pub(crate) fn bad_escape(name: &str) -> Self {
        Self::new(format!("path parameter `{name}` holds a bad percent-escape"))
    }

    pub(crate) fn unparsable(name: &str, ty: &str) -> Self {
        Self::new(format!("path parameter `{name}` is not a valid `{}`", short_type(ty)))
    }
}

impl InvalidQuery {
    pub(crate) fn missing(name: &str) -> Self {
        Self::new(format!("query parameter `{name}` is required"))
    }

    pub(crate) fn unparsable(name: &str, ty: &str) -> Self {
        Self::new(format!("query parameter `{name}` is not a valid `{}`", short_type(ty)))
    }

    pub(crate) fn repeated(name: &str) -> Self {
        Self::new(format!("query parameter `{name}` is given more than once"))
    }
}

/// `alloc::string::String` → `String`, for messages.
fn short_type(ty: &str) -> &str {
    if ty.contains('<') { ty } else { ty.rsplit("::").next().unwrap_or(ty) }
}

/// The method is not one the path answers (405); the response lists the ones it does
/// in `Allow` (RFC 9110 §15.5.6).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MethodNotAllowed {
    method: String,
    allow: String,
}

impl MethodNotAllowed {
    /// The status code this rejection answers with.
    pub const STATUS: StatusCode = StatusCode::METHOD_NOT_ALLOWED;

    pub(crate) fn new(method: &str, allow: &str) -> Self {
        MethodNotAllowed { method: method.to_owned(), allow: allow.to_owned() }
    }

    /// The methods the path answers, as sent in `Allow` (`GET, HEAD, POST`).
    pub fn allow(&self) -> &str {
        &self.allow
    }
}

impl fmt::Display for MethodNotAllowed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "method {} is not allowed here; allowed: {}", self.method, self.allow)
    }
}

impl std::error::Error for MethodNotAllowed {}

impl From<MethodNotAllowed> for Rejection {
    fn from(r: MethodNotAllowed) -> Self {
        Rejection::MethodNotAllowed(r)
    }
}

/// The request lacks valid credentials (401): no bearer token, or one forged or
/// expired ([`BearerToken`](crate::BearerToken)). The response carries the
/// `WWW-Authenticate` challenge RFC 9110 §15.5.2 requires.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unauthorized {
    message: Cow<'static, str>,
    challenge: &'static str,
}

impl Unauthorized {
    /// The status code this rejection answers with.
    pub const STATUS: StatusCode = StatusCode::UNAUTHORIZED;

    /// No credentials were sent: the challenge names the scheme alone (RFC 6750 §3.1:
    /// no error code when the request carried no token).
    pub fn missing(message: impl Into<Cow<'static, str>>) -> Self {
        Unauthorized { message: message.into(), challenge: "Bearer" }
    }

    /// A token was sent but is forged, malformed or expired (RFC 6750 §3.1,
    /// `invalid_token`).
    pub fn invalid_token(message: impl Into<Cow<'static, str>>) -> Self {
        Unauthorized { message: message.into(), challenge: "Bearer error=\"invalid_token\"" }
    }

    /// What was wrong, for the client.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The `WWW-Authenticate` value sent with it.
    pub fn challenge(&self) -> &str {
        self.challenge
    }
}

impl fmt::Display for Unauthorized {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Unauthorized {}

impl From<Unauthorized> for Rejection {
    fn from(r: Unauthorized) -> Self {
        Rejection::Unauthorized(r)
    }
}

/// The client has sent more requests than a [`RateLimit`](crate::RateLimit) allows
/// (429, RFC 6585 §4); the response says when to try again in `Retry-After`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TooManyRequests {
    message: Cow<'static, str>,
    retry_after: Duration,
}

impl TooManyRequests {
    /// The status code this rejection answers with.
    pub const STATUS: StatusCode = StatusCode::TOO_MANY_REQUESTS;

    /// A refusal with this message, the next request welcome after `retry_after`.
    pub fn new(message: impl Into<Cow<'static, str>>, retry_after: Duration) -> Self {
        TooManyRequests { message: message.into(), retry_after }
    }

    /// The default refusal, which says when to try again.
    pub(crate) fn after(retry_after: Duration) -> Self {
        let mut refused = Self::new("", retry_after);
        let secs = refused.retry_after_secs();
        let unit = if secs == 1 { "second" } else { "seconds" };
        refused.message = format!("too many requests: try again in {secs} {unit}").into();
        refused
    }

    /// What was wrong, for the client.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// How long until a request would be admitted.
    pub fn retry_after(&self) -> Duration {
        self.retry_after
    }

    /// [`retry_after`](Self::retry_after) in whole seconds, rounded up: the
    /// `Retry-After` value (RFC 9110 §10.2.3), so that a client waiting that long is
    /// admitted.
    pub fn retry_after_secs(&self) -> u64 {
        self.retry_after.as_secs() + u64::from(self.retry_after.subsec_nanos() > 0)
    }
}

impl fmt::Display for TooManyRequests {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for TooManyRequests {}

impl From<TooManyRequests> for Rejection {
    fn from(r: TooManyRequests) -> Self {
        Rejection::TooManyRequests(r)
    }
}

/// Input that parsed but breaks its declared constraints (422): every failing field,
/// with its path and why (`kiln::Valid`, feature `validate`). Rendered as text, one line a
/// field; as `application/problem+json`, the fields are the `errors` member.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvalidInput {
    fields: Vec<FieldError>,
}

/// One field of an [`InvalidInput`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldError {
    path: String,
    message: String,
}

impl FieldError {
    /// The field at `path` (`address.zip`, `tags[2]`; empty for the value itself),
    /// failing for `message`.
    pub fn new(path: impl Into<String>, message: impl Into<String>) -> Self {
        FieldError { path: path.into(), message: message.into() }
    }

    /// The field's path in dotted notation, in the names the client sent (serde's, for
    /// `kiln::Valid`): `address.zip`, `tags[2]`; empty for the
    /// value itself.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The same path as a JSON Pointer (RFC 6901): `/address/zip`, `/tags/2`; empty
    /// for the value itself.
    pub fn pointer(&self) -> String {
        let mut pointer = String::new();
        for segment in self.path.split(['.', '[']).filter(|s| !s.is_empty()) {
            let segment = segment.strip_suffix(']').unwrap_or(segment);
            pointer.push('/');
            pointer.push_str(&segment.replace('~', "~0").replace('/', "~1"));
        }
        pointer
    }

    /// Why the field fails.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl InvalidInput {
    /// The status code this rejection answers with.
    pub const STATUS: StatusCode = StatusCode::UNPROCESSABLE_ENTITY;

    /// A refusal listing `fields`.
    pub fn new(fields: Vec<FieldError>) -> Self {
        InvalidInput { fields }
    }

    /// Every failing field.
    pub fn fields(&self) -> &[FieldError] {
        &self.fields
    }
}

/// `invalid input:` and a line per field, `path: message` (`value` for the value itself).
impl fmt::Display for InvalidInput {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("invalid input:")?;
        for field in &self.fields {
            let path = if field.path.is_empty() { "value" } else { &field.path };
            write!(f, "\n{path}: {}", field.message)?;
        }
        Ok(())
    }
}

impl std::error::Error for InvalidInput {}

impl From<InvalidInput> for Rejection {
    fn from(r: InvalidInput) -> Self {
        Rejection::InvalidInput(r)
    }
}

/// Any rejection: what the app's rejection renderer receives.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
#[allow(missing_docs)]
pub enum Rejection {
    NotFound(NotFound),
    InvalidPathParam(InvalidPathParam),
    MethodNotAllowed(MethodNotAllowed),
    InvalidQuery(InvalidQuery),
    MissingHeader(MissingHeader),
    InvalidBody(InvalidBody),
    PayloadTooLarge(PayloadTooLarge),
    UnsupportedMediaType(UnsupportedMediaType),
    MalformedJson(MalformedJson),
    InvalidJson(InvalidJson),
    InvalidForm(InvalidForm),
    InvalidInput(InvalidInput),
    InvalidCsrfToken(InvalidCsrfToken),
    Unauthorized(Unauthorized),
    Conflict(Conflict),
    TooManyRequests(TooManyRequests),
    Unavailable(Unavailable),
    InvalidWebSocketHandshake(InvalidWebSocketHandshake),
    UnsupportedWebSocketVersion(UnsupportedWebSocketVersion),
    Internal(Internal),
    /// Raised by an extractor the app defines itself.
    Custom {
        status: StatusCode,
        message: Cow<'static, str>,
    },
}

impl Rejection {
    /// A rejection for an app-defined extractor.
    pub fn custom(status: StatusCode, message: impl Into<Cow<'static, str>>) -> Self {
        Rejection::Custom { status, message: message.into() }
    }

    /// The status code to answer with.
    pub fn status(&self) -> StatusCode {
        match self {
            Rejection::NotFound(_) => NotFound::STATUS,
            Rejection::InvalidPathParam(_) => InvalidPathParam::STATUS,
            Rejection::MethodNotAllowed(_) => MethodNotAllowed::STATUS,
            Rejection::InvalidQuery(_) => InvalidQuery::STATUS,
            Rejection::MissingHeader(_) => MissingHeader::STATUS,
            Rejection::InvalidBody(_) => InvalidBody::STATUS,
            Rejection::PayloadTooLarge(_) => PayloadTooLarge::STATUS,
            Rejection::UnsupportedMediaType(_) => UnsupportedMediaType::STATUS,
            Rejection::MalformedJson(_) => MalformedJson::STATUS,
            Rejection::InvalidJson(_) => InvalidJson::STATUS,
            Rejection::InvalidForm(_) => InvalidForm::STATUS,
            Rejection::InvalidInput(_) => InvalidInput::STATUS,
            Rejection::InvalidCsrfToken(_) => InvalidCsrfToken::STATUS,
            Rejection::Unauthorized(_) => Unauthorized::STATUS,
            Rejection::Conflict(_) => Conflict::STATUS,
            Rejection::TooManyRequests(_) => TooManyRequests::STATUS,
            Rejection::Unavailable(_) => Unavailable::STATUS,
            Rejection::InvalidWebSocketHandshake(_) => InvalidWebSocketHandshake::STATUS,
            Rejection::UnsupportedWebSocketVersion(_) => UnsupportedWebSocketVersion::STATUS,
            Rejection::Internal(_) => Internal::STATUS,
            Rejection::Custom { status, .. } => *status,
        }
    }

    /// Renders the default way: the status and the message as `text/plain`.
    pub fn render_plain(&self, res: &mut Response) {
        use std::io::Write;
        res.set_status(self.status());
        res.set_content_type("text/plain; charset=utf-8");
        let _ = writeln!(res.body_mut(), "{self}");
    }
}

impl fmt::Display for Rejection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Rejection::NotFound(r) => r.fmt(f),
            Rejection::InvalidPathParam(r) => r.fmt(f),
            Rejection::MethodNotAllowed(r) => r.fmt(f),
            Rejection::InvalidQuery(r) => r.fmt(f),
            Rejection::MissingHeader(r) => r.fmt(f),
            Rejection::InvalidBody(r) => r.fmt(f),
            Rejection::PayloadTooLarge(r) => r.fmt(f),
            Rejection::UnsupportedMediaType(r) => r.fmt(f),
            Rejection::MalformedJson(r) => r.fmt(f),
            Rejection::InvalidJson(r) => r.fmt(f),
            Rejection::InvalidForm(r) => r.fmt(f),
            Rejection::InvalidInput(r) => r.fmt(f),
            Rejection::InvalidCsrfToken(r) => r.fmt(f),
            Rejection::Unauthorized(r) => r.fmt(f),
            Rejection::Conflict(r) => r.fmt(f),
            Rejection::TooManyRequests(r) => r.fmt(f),
            Rejection::Unavailable(r) => r.fmt(f),
            Rejection::InvalidWebSocketHandshake(r) => r.fmt(f),
            Rejection::UnsupportedWebSocketVersion(r) => r.fmt(f),
            Rejection::Internal(r) => r.fmt(f),
            Rejection::Custom { message, .. } => f.write_str(message),
        }
    }
}

impl std::error::Error for Rejection {}
