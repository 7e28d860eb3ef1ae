//! Pages' Markdown to HTML, on every request: CommonMark with tables and
//! strikethrough, the raw HTML that Markdown allows shown as text, and links and
//! images only to the web.

use kiln::markup::{InFlow, Render};
use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd, html};

/// The extensions pages may use.
const OPTIONS: Options = Options::ENABLE_TABLES.union(Options::ENABLE_STRIKETHROUGH);

/// The schemes a link or an image may name; an address without a scheme is relative
/// to the site, and fine.
const SCHEMES: [&str; 3] = ["http", "https", "mailto"];

/// The HTML of `markdown`, appended to `out`. Raw HTML in the source becomes
/// escaped text, so a page holds only the markup Markdown itself produces; a link or
/// image to anything but [`SCHEMES`] (`javascript:`, `data:`, ...) loses its tag and
/// leaves its text (an image, its alt text) in its place.
pub(crate) fn render(markdown: &str, out: &mut String) {
    // For each link and image open at this point, whether its tag is kept: the end
    // of a refused one is dropped with it.
    let mut kept: Vec<bool> = Vec::new();
    let events = Parser::new_ext(markdown, OPTIONS).filter_map(move |event| match event {
        Event::Html(raw) | Event::InlineHtml(raw) => Some(Event::Text(raw)),
        Event::Start(Tag::Link { ref dest_url, .. } | Tag::Image { ref dest_url, .. }) => {
            let keep = on_the_web(dest_url);
            kept.push(keep);
            keep.then_some(event)
        }
        Event::End(TagEnd::Link | TagEnd::Image) => kept.pop().unwrap_or(true).then_some(event),
        other => Some(other),
    });
    html::push_html(out, events);
}

/// Whether `url` (as pulldown-cmark decoded it: `&#x09;` is already a tab) has no
/// scheme or one of [`SCHEMES`]. Read the way the URL Standard has a browser read it,
/// so that what it would run is what is checked: C0 controls and spaces around it
/// dropped, tabs and newlines inside it removed (`java\tscript:` is `javascript:`),
/// and a scheme is a letter, then letters, digits, `+`, `-` or `.`, then `:`.
fn on_the_web(url: &str) -> bool {
    let mut chars = url.trim_matches(|c: char| c <= ' ').chars().filter(|c| !matches!(c, '\t' | '\n' | '\r'));
    // The scheme so far, lowercased: its first six letters, as long as the longest allowed.
    let mut scheme = [0u8; 6];
    match chars.next() {
        Some(c) if c.is_ascii_alphabetic() => scheme[0] = c.to_ascii_lowercase() as u8,
        _ => return true,
    }
    for (len, c) in (1..).zip(chars) {
        if c == ':' {
            return scheme.get(..len).is_some_and(|s| SCHEMES.iter().any(|allowed| allowed.as_bytes() == s));
        }
        if !(c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.')) {
            return true;
        }
        if let Some(slot) = scheme.get_mut(len) {
            *slot = c.to_ascii_lowercase() as u8;
        }
    }
    true
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

    /// The audit's XSS: `[click](javascript:alert(3))` rendered a link that ran script,
    /// on the page and in the feed, and so did an image's `src`.
    #[test]
    fn links_and_images_to_script_lose_their_tag_and_keep_their_text() {
        let table = [
            ("[click](javascript:alert(3))", "<p>click</p>\n"),
            ("[click](JAVASCRIPT:alert(3))", "<p>click</p>\n"),
            ("[click](JavaScript:alert(3))", "<p>click</p>\n"),
            ("[click](java&#x09;script:alert(3))", "<p>click</p>\n"),
            ("[click](java&#10;script:alert(3))", "<p>click</p>\n"),
            ("[click](&#32;javascript:alert(3))", "<p>click</p>\n"),
            ("[click](&#x01;javascript:alert(3))", "<p>click</p>\n"),
            ("[click](< javascript:alert(3)>)", "<p>click</p>\n"),
            ("[click](<java\tscript:alert(3)>)", "<p>click</p>\n"),
            ("[click](vbscript:msgbox(1))", "<p>click</p>\n"),
            ("[click](data:text/html;base64,PHNjcmlwdD4=)", "<p>click</p>\n"),
            ("[*bold* click](javascript:x)", "<p><em>bold</em> click</p>\n"),
            ("[click][r]\n\n[r]: javascript:alert(3)", "<p>click</p>\n"),
            ("<javascript:alert(3)>", "<p>javascript:alert(3)</p>\n"),
            ("![pic](javascript:alert(1))", "<p>pic</p>\n"),
            ("![pic](JAVASCRIPT:alert(1))", "<p>pic</p>\n"),
            ("![pic](data:image/svg+xml,<svg/onload=alert(1)>)", "<p>pic</p>\n"),
            ("[![pic](vbscript:x)](javascript:y)", "<p>pic</p>\n"),
        ];
        for (markdown, html) in table {
            assert_eq!(to_html(markdown), html, "{markdown:?}");
        }
    }

    #[test]
    fn links_and_images_to_the_web_or_the_site_are_kept() {
        let table = [
            ("[a](https://example.org/x)", r#"<p><a href="https://example.org/x">a</a></p>"#),
            ("[a](HTTP://example.org/)", r#"<p><a href="HTTP://example.org/">a</a></p>"#),
            ("[a](mailto:ann@example.org)", r#"<p><a href="mailto:ann@example.org">a</a></p>"#),
            ("<ann@example.org>", r#"<p><a href="mailto:ann@example.org">ann@example.org</a></p>"#),
            ("[a](/pages/tour)", r#"<p><a href="/pages/tour">a</a></p>"#),
            ("[a](tour#step-2)", r#"<p><a href="tour#step-2">a</a></p>"#),
            ("[a](#top)", r##"<p><a href="#top">a</a></p>"##),
            ("[a](?q=x:y)", r#"<p><a href="?q=x:y">a</a></p>"#),
            ("[a](./javascript:x)", r#"<p><a href="./javascript:x">a</a></p>"#),
            ("![pic](/static/pic.png)", r#"<p><img src="/static/pic.png" alt="pic" /></p>"#),
            ("![pic](https://example.org/p.png)", r#"<p><img src="https://example.org/p.png" alt="pic" /></p>"#),
        ];
        for (markdown, html) in table {
            assert_eq!(to_html(markdown), format!("{html}\n"), "{markdown:?}");
        }
    }
}
