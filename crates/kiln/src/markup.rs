//! Typed HTML: `kiln::html!` checks markup against the HTML standard's content models
//! at compile time (see [`kiln_html`]), and takes typed routes as links.
//!
//! A [`Fragment`] is a response (`text/html; charset=utf-8`) whose rendered string
//! becomes the body, uncopied. `href`, `src`, `action` and `formaction` take a
//! [`Route`] value, an [`Asset`] or an [`ExternalUrl`]: a link to a route that does
//! not exist does not compile, and neither does a link written as a string.
//!
//! ```
//! use kiln::markup::{Document, Fragment, ListItem};
//! use kiln::{App, Route, html};
//!
//! #[derive(Route)]
//! #[route("/writings/{page}")]
//! struct Writing {
//!     page: u32,
//! }
//!
//! fn entry(page: u32) -> Fragment<ListItem> {
//!     html! { li { a href=(Writing { page }) { "page " (page) } } }
//! }
//!
//! async fn writing(route: Writing) -> Fragment<Document> {
//!     html! {
//!         html lang="en" {
//!             head { title { "Page " (route.page) } }
//!             body { ol { (entry(route.page + 1)) } }
//!         }
//!     }
//! }
//!
//! let app = App::new(|_worker| ()).route(writing);
//! let mut client = kiln::test::TestClient::new(app);
//! let res = client.get("/writings/7");
//! assert_eq!(
//!     res.text(),
//!     "<!DOCTYPE html><html lang=\"en\"><head><title>Page 7</title></head>\
//!      <body><ol><li><a href=\"/writings/8\">page 8</a></li></ol></body></html>"
//! );
//! ```

use kiln_http::Response;

pub use kiln_html::{
    Asset, AttrValue, AutocompleteForm, ButtonType, Category, CrossOrigin, Decoding, Dir, Document, ExternalUrl, Flow,
    FormEnctype, FormMethod, Fragment, InFlow, InHead, InInert, InList, InPhrasing, InRawText, InSelect, InTableRow,
    InTableRows, InText, InputType, Interactive, Keyword, ListItem, ListStyle, Loading, Metadata, Number, Phrasing,
    PreEscaped, Render, Reserve, Scope, SelectOption, TableCell, TableRow, TrueFalse, Wrap, YesNo, el, escape,
};

use crate::response::IntoResponse;
use crate::route::Route;

/// A value that `href`, `src`, `action` and `formaction` accept in `kiln::html!`: a
/// typed [`Route`], an [`Asset`] or an [`ExternalUrl`].
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a link: `href`, `src`, `action` and `formaction` take a typed route, an `Asset` or an `ExternalUrl`",
    label = "not a link",
    note = "link to a page with its route value (`Writing {{ page: 2 }}`), to a file with `Asset::new(asset!(\"site.css\"))` (checked and content-hashed by `asset!`), elsewhere with `ExternalUrl(..)`"
)]
pub trait Href {
    /// Appends the URL, escaped for a quoted attribute value.
    fn write_href(&self, buf: &mut String);
}

impl<R: Route> Href for R {
    fn write_href(&self, buf: &mut String) {
        kiln_html::write_display_href(self, buf);
    }
}

impl<T: AsRef<str>> Href for ExternalUrl<T> {
    fn write_href(&self, buf: &mut String) {
        kiln_html::Href::write_href(self, buf);
    }
}

impl Href for Asset {
    fn write_href(&self, buf: &mut String) {
        kiln_html::Href::write_href(self, buf);
    }
}

/// A fragment sent as `text/html; charset=utf-8`; its string becomes the body buffer.
impl<C> IntoResponse for Fragment<C> {
    fn into_response(self, res: &mut Response) {
        res.set_content_type("text/html; charset=utf-8");
        *res.body_mut() = self.into_string().into_bytes();
    }
}

/// What `kiln::html!` expands to: kiln-html's runtime with kiln's [`Href`].
#[doc(hidden)]
pub mod __rt {
    pub use super::Href;
    pub use kiln_html::__rt::*;

    /// A link attribute's value: a route, an asset or an external URL.
    #[inline(always)]
    pub fn href<T: Href + ?Sized>(value: &T, buf: &mut String) {
        value.write_href(buf);
    }
}

/// Markup in maud's syntax, checked against HTML's content models: see [`kiln_html::html!`].
/// Links (`href`, `src`, `action`) take typed routes.
#[macro_export]
macro_rules! html {
    ($($markup:tt)*) => {
        $crate::markup::__rt::html_in! { [$crate::markup::__rt] $($markup)* }
    };
}

#[cfg(test)]
mod tests {
    use super::{Document, Fragment};

    /// A row of a table of quotes.
    struct Quote {
        id: i32,
        text: String,
    }

    /// A whole page written with `kiln::html!`: a document with a table of rows.
    fn quotes_page(quotes: &[Quote]) -> Fragment<Document> {
        crate::html! {
            html lang="en" {
                head { title { "Quotes" } }
                body {
                    table {
                        tr { th { "id" } th { "text" } }
                        @for quote in quotes {
                            tr { td { (quote.id) } td { (quote.text) } }
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn a_whole_page_renders_its_rows_with_text_escaped() {
        let quotes = [
            Quote { id: 11, text: "<script>alert(\"not run\");</script>".into() },
            Quote { id: 4, text: "1 < 2 & 3 > 2".into() },
            Quote { id: 12, text: "ウェブのフレームワーク".into() },
        ];
        assert_eq!(
            quotes_page(&quotes).as_str(),
            concat!(
                "<!DOCTYPE html><html lang=\"en\"><head><title>Quotes</title></head><body><table>",
                "<tr><th>id</th><th>text</th></tr>",
                "<tr><td>11</td><td>&lt;script&gt;alert(&quot;not run&quot;);&lt;/script&gt;</td></tr>",
                "<tr><td>4</td><td>1 &lt; 2 &amp; 3 &gt; 2</td></tr>",
                "<tr><td>12</td><td>ウェブのフレームワーク</td></tr>",
                "</table></body></html>"
            )
        );
    }

    #[derive(kiln_macros::Route)]
    #[route("/search")]
    struct Search {
        q: Option<String>,
        page: Option<u32>,
    }

    #[test]
    fn a_route_link_is_its_display_escaped_for_the_attribute() {
        let route = Search { q: Some("a&b \"c\"".into()), page: Some(2) };
        let link = crate::html! { a href=(route) { "search" } };
        let shown = Search { q: Some("a&b \"c\"".into()), page: Some(2) }.to_string();
        assert_eq!(link.as_str(), format!("<a href=\"{}\">search</a>", shown.replace('&', "&amp;")));
        assert_eq!(link.as_str().matches('"').count(), 2, "{link}");
    }
}
