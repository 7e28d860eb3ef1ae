//! The responses each of kiln's response types makes.

use schemars::JsonSchema;
use serde_json::json;

use crate::cookie::SetCookie;
use crate::csrf::Csrf;
use crate::html::Html;
use crate::json::Json;
use crate::markup::Fragment;
use crate::multipart::MultipartError;
use crate::realtime::Sse;
use crate::rejection::Rejection;
use crate::response::{Css, Header, JavaScript, Redirect, Rss, Typed, Xml};
use crate::session::SessionCookies;
use crate::ws::WebSocketResponse;
use kiln_http::{Bytes, Response, StatusCode};

use super::describe::DescribeResponse;
use super::operation::Operation;

const OK: &str = "OK";

/// `200`, `application/json`, `T`'s schema.
impl<T: JsonSchema> DescribeResponse for Json<T> {
    fn describe_response(op: &mut Operation<'_>) {
        let schema = op.output_schema::<T>();
        op.response_body("200", OK, "application/json", schema);
    }
}

/// A response of one content type whose body is text or bytes.
macro_rules! body_response {
    ($content_type:literal, $schema:tt => $($ty:ty),*) => {
        $(impl DescribeResponse for $ty {
            fn describe_response(op: &mut Operation<'_>) {
                op.response_body("200", OK, $content_type, json!($schema));
            }
        })*
    };
}

body_response!("text/plain", { "type": "string" } => String, &'static str);
body_response!("application/octet-stream", {} => Vec<u8>, &'static [u8], Bytes);

/// A response whose content type is its own, around a body of any kind.
macro_rules! typed_response {
    ($($ty:ident => $content_type:literal),*) => {
        $(impl<T> DescribeResponse for $ty<T> {
            fn describe_response(op: &mut Operation<'_>) {
                op.response_body("200", OK, $content_type, json!({ "type": "string" }));
            }
        })*
    };
}

typed_response!(
    Html => "text/html",
    Xml => "application/xml",
    Rss => "application/rss+xml",
    Css => "text/css",
    JavaScript => "text/javascript"
);

/// A page of `kiln::html!`.
impl<C> DescribeResponse for Fragment<C> {
    fn describe_response(op: &mut Operation<'_>) {
        op.response_body("200", OK, "text/html", json!({ "type": "string" }));
    }
}

#[cfg(feature = "maud")]
impl DescribeResponse for maud::Markup {
    fn describe_response(op: &mut Operation<'_>) {
        op.response_body("200", OK, "text/html", json!({ "type": "string" }));
    }
}

/// The content type is a value, chosen at run time.
impl<T> DescribeResponse for Typed<T> {
    fn describe_response(op: &mut Operation<'_>) {
        op.response_body("200", OK, "*/*", json!({}));
        op.imprecise("`Typed` names its content type at run time");
    }
}

impl DescribeResponse for () {
    fn describe_response(op: &mut Operation<'_>) {
        op.response("200", OK);
    }
}

/// `303`, `307` or `308`, chosen at run time.
impl DescribeResponse for Redirect {
    fn describe_response(op: &mut Operation<'_>) {
        op.response("3XX", "a redirect to `Location`");
        op.response_header("3XX", "Location", "where the resource is");
    }
}

impl DescribeResponse for StatusCode {
    fn describe_response(op: &mut Operation<'_>) {
        op.response("default", "the status the handler chose");
        op.imprecise("the handler returns a `StatusCode` chosen at run time");
    }
}

impl DescribeResponse for Response {
    fn describe_response(op: &mut Operation<'_>) {
        op.response("default", "a response the handler made itself");
        op.imprecise("the handler returns a raw `Response`");
    }
}

/// Which rejection is decided at run time.
impl DescribeResponse for Rejection {
    fn describe_response(op: &mut Operation<'_>) {
        op.response("4XX", "the request is refused");
        op.response("5XX", "the server failed to answer");
    }
}

/// The statuses of the rejections a database error converts into.
#[cfg(any(feature = "sqlite", feature = "postgres"))]
impl DescribeResponse for crate::db::Error {
    fn describe_response(op: &mut Operation<'_>) {
        op.response("404", "the row is not found");
        op.response("409", "the change contradicts what is stored");
        op.response("500", "the database failed");
        op.response("503", "the database is unavailable: try again");
        op.response_header("503", "Retry-After", "when to try again");
    }
}

impl DescribeResponse for MultipartError {
    fn describe_response(op: &mut Operation<'_>) {
        op.response("400", "the multipart body is malformed");
        op.response("403", "the CSRF field is missing, wrong or not first");
        op.response("413", "a field or the body is larger than its limit");
        op.response("422", "a form field is missing");
        op.response("500", "the upload could not be saved");
    }
}

/// `T`'s responses and `E`'s.
impl<T: DescribeResponse, E: DescribeResponse> DescribeResponse for Result<T, E> {
    fn describe_response(op: &mut Operation<'_>) {
        T::describe_response(op);
        E::describe_response(op);
    }
}

impl<S> DescribeResponse for Sse<S> {
    fn describe_response(op: &mut Operation<'_>) {
        op.response_body("200", "a stream of Server-Sent Events", "text/event-stream", json!({ "type": "string" }));
    }
}

impl DescribeResponse for WebSocketResponse {
    fn describe_response(op: &mut Operation<'_>) {
        op.response("101", "the connection switches to WebSocket");
    }
}

/// A part of a response tuple: whether it sets the status, which the document then
/// cannot know.
pub trait DescribePart {
    /// Whether the part sets the status ([`StatusCode`]).
    const SETS_STATUS: bool = false;
}

impl DescribePart for StatusCode {
    const SETS_STATUS: bool = true;
}

impl<P: DescribePart> DescribePart for Option<P> {
    const SETS_STATUS: bool = P::SETS_STATUS;
}

impl<K, V, const N: usize> DescribePart for [(K, V); N] {}
impl<K, V> DescribePart for Header<K, V> {}
impl DescribePart for SetCookie {}
impl DescribePart for Csrf {}
impl DescribePart for SessionCookies {}

macro_rules! tuple_response {
    ($($part:ident),+) => {
        /// The body's responses; a status part moves the body's `200` to `default`.
        impl<$($part: DescribePart,)+ T: DescribeResponse> DescribeResponse for ($($part,)+ T) {
            fn describe_response(op: &mut Operation<'_>) {
                let mut parts = op.scratch(T::describe_response);
                if false $(|| $part::SETS_STATUS)+ {
                    if let Some(ok) = parts.responses.remove("200") {
                        parts.responses.insert("default".into(), ok);
                        op.imprecise("a response tuple sets a status chosen at run time");
                    }
                }
                op.add_responses(parts);
            }
        }
    };
}

tuple_response!(P1);
tuple_response!(P1, P2);
tuple_response!(P1, P2, P3);
tuple_response!(P1, P2, P3, P4);
