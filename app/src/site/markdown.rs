//! Pages' Markdown to HTML, on every request: CommonMark with tables and
//! strikethrough, and the raw HTML that Markdown allows shown as text.

use kiln::markup::{InFlow, Render};
use pulldown_cmark::{Event, Options, Parser, html};

/// The extensions pages may use.
const OPTIONS: Options = Options::ENABLE_TABLES.union(Options::ENABLE_STRIKETHROUGH);

/// The HTML of `markdown`, appended to `out`. Raw HTML in the source becomes
/// escaped text, so a page holds only the markup Markdown itself produces.
pub(crate) fn render(markdown: &str, out: &mut String) {
    let events = Parser::new_ext(markdown, OPTIONS).map(|event| match event {
        Event::Html(raw) | Event::InlineHtml(raw) => Event::Text(raw),
        other => other,
    });
    html::push_html(out, events);
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

#[cfg(test)]
mod tests {
    use super::to_html;

    #[test]
    fn raw_html_in_markdown_is_text() {
        assert_eq!(to_html("a <script>x</script> b"), "<p>a &lt;script&gt;x&lt;/script&gt; b</p>\n");
        assert_eq!(to_html("<div onclick=\"x\">\n\nhi"), "&lt;div onclick=\"x\"&gt;\n<p>hi</p>\n");
    }

    #[test]
    fn tables_and_strikethrough_render() {
        let html = to_html("| a |\n| - |\n| b |\n\n~~x~~");
        assert!(html.contains("<table>") && html.contains("<td>b</td>"), "{html}");
        assert!(html.contains("<del>x</del>"), "{html}");
    }
}
