//! HTML responses from strings. Checked markup is `kiln::html!`
//! ([`crate::markup`]); maud's `Markup` renders behind the `maud` feature
//! (`maud_render.rs`).

use kiln_http::Response;

use crate::response::{IntoResponse, default_content_type};

pub(crate) const HTML: &str = "text/html; charset=utf-8";

/// An HTML body, sent as `text/html; charset=utf-8`: `Html("<p>hi</p>")`,
/// `Html(string)` or `Html(markup)`. The content is sent as is, not escaped.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Html<T>(pub T);

impl IntoResponse for Html<&'static str> {
    fn into_response(self, res: &mut Response) {
        default_content_type(res, HTML);
        res.set_body_static(self.0.as_bytes());
    }
}

impl IntoResponse for Html<String> {
    fn into_response(self, res: &mut Response) {
        default_content_type(res, HTML);
        *res.body_mut() = self.0.into_bytes();
    }
}
