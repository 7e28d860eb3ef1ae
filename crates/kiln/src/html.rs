//! HTML responses. `maud::Markup` moves into the response without a copy;
//! [`Rendered`] renders a `maud::Render` value straight into the connection's reusable
//! body buffer.

use kiln_http::Response;
use maud::{Markup, Render};

use crate::response::IntoResponse;

const HTML: &str = "text/html; charset=utf-8";

/// An HTML body, sent as `text/html; charset=utf-8`: `Html("<p>hi</p>")`,
/// `Html(string)` or `Html(markup)`. The content is sent as is, not escaped.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Html<T>(pub T);

impl IntoResponse for Html<&'static str> {
    fn into_response(self, res: &mut Response) {
        res.set_content_type(HTML);
        res.set_body_static(self.0.as_bytes());
    }
}

impl IntoResponse for Html<String> {
    fn into_response(self, res: &mut Response) {
        res.set_content_type(HTML);
        *res.body_mut() = self.0.into_bytes();
    }
}

impl IntoResponse for Html<Markup> {
    fn into_response(self, res: &mut Response) {
        self.0.into_response(res);
    }
}

/// Markup from `maud::html!`: its string becomes the body buffer, uncopied.
impl IntoResponse for Markup {
    fn into_response(self, res: &mut Response) {
        Html(self.into_string()).into_response(res);
    }
}

/// A `maud::Render` value rendered with `render_to` straight into the response's
/// body buffer, which the connection reuses from one request to the next: no
/// intermediate string, no copy, and no allocation once the buffer has grown.
#[derive(Debug, Clone, Copy, Default)]
pub struct Rendered<T>(pub T);

impl<T: Render> IntoResponse for Rendered<T> {
    fn into_response(self, res: &mut Response) {
        res.set_content_type(HTML);
        let body = res.body_mut();
        // The body is empty here, so this checks no bytes and keeps the capacity.
        let mut buf = String::from_utf8(std::mem::take(body)).unwrap_or_default();
        self.0.render_to(&mut buf);
        *res.body_mut() = buf.into_bytes();
    }
}
