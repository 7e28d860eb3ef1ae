//! Pages' Markdown to HTML, on every request: CommonMark with tables and
//! strikethrough, the raw HTML that Markdown allows shown as text, and links and
//! images only to the web.

mod links;
mod writer;

#[cfg(test)]
mod tests;

use kiln::markup::{InFlow, Render};
use pulldown_cmark::{Options, Parser};

/// The extensions pages may use.
const OPTIONS: Options = Options::ENABLE_TABLES.union(Options::ENABLE_STRIKETHROUGH);

/// The HTML of `markdown`, appended to `out`. Raw HTML in the source becomes
/// escaped text, so a page holds only the markup Markdown itself produces; a link or
/// image to anything but the web, the site or mail (`javascript:`, `data:`, ...)
/// loses its tag and leaves its text (an image, its alt text) in its place.
pub(crate) fn render(markdown: &str, out: &mut String) {
    writer::Writer::new(out).run(Parser::new_ext(markdown, OPTIONS));
}

/// Markdown spliced into a page as its HTML, rendered straight into the page's
/// string: a page's text is most of the page, and rendering it apart first meant
/// allocating and copying it once more per request.
pub(crate) struct Markdown<'a>(pub(crate) &'a str);

impl Render for Markdown<'_> {
    fn render_to(&self, buf: &mut String) {
        // Rendered HTML runs to about 1.2 times its Markdown.
        buf.reserve(self.0.len() + self.0.len() / 4);
        render(self.0, buf);
    }
}

/// What Markdown renders to is flow content: paragraphs, lists, tables, code.
impl<P> InFlow<P> for Markdown<'_> {}

/// The HTML of `markdown`, with room for it reserved up front.
pub(crate) fn to_html(markdown: &str) -> String {
    // Rendered HTML runs to about 1.2 times its Markdown.
    let mut out = String::with_capacity(markdown.len() + markdown.len() / 4);
    render(markdown, &mut out);
    out
}
