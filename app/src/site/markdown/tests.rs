//! The site's rules, and its writer against pulldown-cmark's own.

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

/// What the site rendered until 2026-11-25: pulldown-cmark's own writer behind an
/// adaptor that applies the site's rules. The writer must write the same bytes.
fn reference(markdown: &str) -> String {
    use pulldown_cmark::{Event, Parser, Tag, TagEnd, html};
    let mut kept: Vec<bool> = Vec::new();
    let events = Parser::new_ext(markdown, super::OPTIONS).filter_map(move |event| match event {
        Event::Html(raw) | Event::InlineHtml(raw) => Some(Event::Text(raw)),
        Event::Start(Tag::Link { ref dest_url, .. } | Tag::Image { ref dest_url, .. }) => {
            let keep = super::links::on_the_web(dest_url);
            kept.push(keep);
            keep.then_some(event)
        }
        Event::End(TagEnd::Link | TagEnd::Image) => kept.pop().unwrap_or(true).then_some(event),
        other => Some(other),
    });
    let mut out = String::new();
    html::push_html(&mut out, events);
    out
}

#[test]
fn the_seeded_pages_render_as_pulldown_cmark_writes_them() {
    for (slug, _, markdown) in crate::site::seed::PAGES {
        assert_eq!(to_html(markdown), reference(markdown), "{slug}");
    }
}

/// Every construct the site's options allow, alone and mixed, written as
/// pulldown-cmark writes it.
#[test]
fn every_construct_renders_as_pulldown_cmark_writes_it() {
    let cases = [
        "# One\n## Two\n### Three\n#### Four\n##### Five\n###### Six",
        "Setext\n======\n\nand\n---",
        "a paragraph\nwith a soft break  \nand a hard one\\\nand another",
        "para\n***\nafter a rule\n\n---\n\n___",
        "* one\n* two\n\n  loose\n* three\n\n1. a\n2. b\n\n7. seven\n8. eight\n\n- [ ] not a task here",
        "1) a\n   - nested *em*\n     1. deeper `code`\n2) b",
        "> quoted\n> > twice\n>\n> - list in a quote",
        "```rust\nfn main() {}\n```\n\n```\nplain & <raw>\n```\n\n~~~ sh extra words\necho \"hi\"\n~~~\n\n    indented\n    code",
        "| left | centre | right | none |\n|:-----|:------:|------:|------|\n| a & b | <c> | `d` | **e** |\n| 1 | 2 |",
        "| one |\n|---|\n\ntext after\n\n| x | y |\n| - | - |\n| only one cell |",
        "*em* _em_ **strong** __strong__ ***both*** ~~struck~~ ~single~ `co`de` ``a ` b``",
        "[text](https://example.org \"a 'title' & \\\"quote\\\"\") [ref][r] [r] <https://example.org/a?b=c&d=e>\n\n[r]: /pages/x 'T'",
        "![alt *with* `code` and <b>html</b>](/static/a.png \"title\") ![](https://example.org/empty.png)",
        "![outer ![inner](/i.png) text](/o.png) [![img](/i.png)](https://example.org)",
        "[a link with spaces](</my page> \"t\") [unicode](https://example.org/é?q=ü) [quote](/a'b\"c)",
        "<div class=\"x\">\nblock *html*\n</div>\n\ninline <span>html</span> and <!-- comment --> & entities &amp; &copy; &#35; &#x41;",
        "<script>alert(1)</script>\n\n<?php echo 1 ?>\n\n<!DOCTYPE html>",
        "mail: <ann@example.org> auto: <http://example.org> not: <javascript:x> \\*escaped\\* \\<tag\\>",
        "line one\n\n\n\nline after blanks\n\n  \n\nend\n",
        "- item\n\n      indented code in item\n- > quote in item\n- ```\n  fence in item\n  ```",
        "Text with \"quotes\", 'apostrophes', and > < & alone.",
        "# Heading with `code` and [link](/x) and ![img](/i.png)",
        "![alt\nwith soft break](/a.png) and ![hard  \nbreak](/b.png)",
        "",
        "plain",
    ];
    for markdown in cases {
        assert_eq!(to_html(markdown), reference(markdown), "{markdown:?}");
    }
    let all = cases.join("\n\n");
    assert_eq!(to_html(&all), reference(&all));
}

/// Text escaped eight bytes at a time is escaped as byte by byte: each special
/// character at every offset, next to each other, after non-ASCII text, at the end.
#[test]
fn body_text_escapes_every_special_at_every_offset() {
    fn simple(text: &str) -> String {
        text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
    }
    let mut texts = vec![String::new(), "\"quoted\" 'text' stays".to_owned(), "é<ü>&ñ".repeat(5)];
    for len in 1..24 {
        for at in 0..len {
            for special in ['&', '<', '>', '"', '\u{BC}'] {
                let mut text: String = "abcdefghijklmnopqrstuvwxyz".chars().cycle().take(len).collect();
                text.replace_range(at..=at, &special.to_string());
                texts.push(text.clone());
                texts.push(text.replace(|c: char| c.is_ascii_lowercase() && c < 'e', "<"));
            }
        }
    }
    for text in texts {
        let mut out = String::from("before");
        super::writer::body_text(&mut out, &text);
        assert_eq!(out, format!("before{}", simple(&text)), "{text:?}");
    }
}
