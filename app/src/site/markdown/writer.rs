//! The parser's events written as HTML straight into the page, in the bytes
//! pulldown-cmark's own `html::push_html` writes, with the site's two rules applied
//! on the way: raw HTML is text, and a link or image off the web loses its tag.
//!
//! Why not `push_html` behind an iterator adaptor (what the site did until
//! 2026-11-25): every event then went through the adaptor's `next`, a move of the
//! whole event more, and the link check alone cost a page ~17,000 instructions;
//! `push_html`'s escaping looks at one byte at a time. Here each event is matched
//! once, where it is written, and text is searched for `&`, `<` and `>` eight bytes
//! at a time. The tests compare the two on the seeded pages
//! and on pulldown-cmark's own test documents.

use pulldown_cmark::{Alignment, CodeBlockKind, Event, HeadingLevel, LinkType, Tag, TagEnd};
use pulldown_cmark_escape::{escape_href, escape_html};

use super::links::on_the_web;

/// Writes events into `out`.
pub(super) struct Writer<'o> {
    out: &'o mut String,
    /// Whether what is written so far ends a line: a block starts on a line of its own.
    at_line_start: bool,
    /// The columns' alignments of the table being written.
    alignments: Vec<Alignment>,
    /// The next cell's column.
    column: usize,
    /// Whether the cells are the table's head (`th`) rather than its body (`td`).
    in_head: bool,
    /// For each link and refused image open, whether its tag was written: the end of
    /// a refused one is dropped with it.
    kept: Vec<bool>,
}

impl<'o> Writer<'o> {
    pub(super) fn new(out: &'o mut String) -> Self {
        Writer { out, at_line_start: true, alignments: Vec::new(), column: 0, in_head: true, kept: Vec::new() }
    }

    /// Writes every event.
    pub(super) fn run<'a>(mut self, mut events: impl Iterator<Item = Event<'a>>) {
        while let Some(event) = events.next() {
            match event {
                // Raw HTML is shown as text: a page holds only the markup Markdown makes.
                Event::Text(text) | Event::Html(text) | Event::InlineHtml(text) => self.text(&text),
                Event::Start(tag) => self.start(tag, &mut events),
                Event::End(tag) => self.end(tag),
                Event::Code(text) => {
                    self.out.push_str("<code>");
                    body_text(self.out, &text);
                    self.put("</code>");
                }
                Event::SoftBreak => self.put("\n"),
                Event::HardBreak => self.put("<br />\n"),
                Event::Rule => self.block("<hr />\n"),
                // Extensions the site does not ask the parser for (math, footnotes, task
                // lists) never come; were one turned on, its text would still show.
                Event::InlineMath(text) | Event::DisplayMath(text) | Event::FootnoteReference(text) => self.text(&text),
                Event::TaskListMarker(_) => {}
            }
        }
    }

    /// Appends `s`, which is not empty.
    #[inline(always)]
    fn put(&mut self, s: &str) {
        self.out.push_str(s);
        self.at_line_start = s.ends_with('\n');
    }

    /// Appends `s`, a block's opening, on a new line.
    #[inline(always)]
    fn block(&mut self, s: &str) {
        if !self.at_line_start {
            self.out.push('\n');
        }
        self.put(s);
    }

    fn text(&mut self, text: &str) {
        body_text(self.out, text);
        self.at_line_start = text.ends_with('\n');
    }

    fn start<'a>(&mut self, tag: Tag<'a>, events: &mut impl Iterator<Item = Event<'a>>) {
        match tag {
            Tag::Paragraph => self.block("<p>"),
            Tag::Heading { level, id, classes, attrs } => {
                self.block("<");
                self.put(heading(level));
                if let Some(id) = id {
                    self.put(" id=\"");
                    attribute(self.out, &id);
                    self.put("\"");
                }
                for (i, class) in classes.iter().enumerate() {
                    self.put(if i == 0 { " class=\"" } else { " " });
                    attribute(self.out, class);
                }
                if !classes.is_empty() {
                    self.put("\"");
                }
                for (name, value) in attrs {
                    self.put(" ");
                    attribute(self.out, &name);
                    self.put("=\"");
                    attribute(self.out, value.as_deref().unwrap_or(""));
                    self.put("\"");
                }
                self.put(">");
            }
            Tag::Table(alignments) => {
                self.alignments = alignments;
                self.put("<table>");
            }
            Tag::TableHead => {
                self.in_head = true;
                self.column = 0;
                self.put("<thead><tr>");
            }
            Tag::TableRow => {
                self.column = 0;
                self.put("<tr>");
            }
            Tag::TableCell => {
                self.put(if self.in_head { "<th" } else { "<td" });
                self.put(match self.alignments.get(self.column) {
                    Some(Alignment::Left) => " style=\"text-align: left\">",
                    Some(Alignment::Center) => " style=\"text-align: center\">",
                    Some(Alignment::Right) => " style=\"text-align: right\">",
                    Some(Alignment::None) | None => ">",
                });
            }
            // (GitHub's alert kinds come only with an option the site does not set.)
            Tag::BlockQuote(_) => self.block("<blockquote>\n"),
            Tag::CodeBlock(kind) => {
                let language = match &kind {
                    CodeBlockKind::Fenced(info) => info.split(' ').next().unwrap_or(""),
                    CodeBlockKind::Indented => "",
                };
                if language.is_empty() {
                    self.block("<pre><code>");
                } else {
                    self.block("<pre><code class=\"language-");
                    attribute(self.out, language);
                    self.put("\">");
                }
            }
            Tag::List(Some(1)) => self.block("<ol>\n"),
            Tag::List(Some(start)) => {
                self.block("<ol start=\"");
                self.put(&start.to_string());
                self.put("\">\n");
            }
            Tag::List(None) => self.block("<ul>\n"),
            Tag::Item => self.block("<li>"),
            Tag::DefinitionList => self.block("<dl>\n"),
            Tag::DefinitionListTitle => self.block("<dt>"),
            Tag::DefinitionListDefinition => self.block("<dd>"),
            Tag::Emphasis => self.put("<em>"),
            Tag::Strong => self.put("<strong>"),
            Tag::Strikethrough => self.put("<del>"),
            Tag::Superscript => self.put("<sup>"),
            Tag::Subscript => self.put("<sub>"),
            Tag::Link { link_type, dest_url, title, .. } => {
                let keep = on_the_web(&dest_url);
                self.kept.push(keep);
                if keep {
                    self.put(if link_type == LinkType::Email { "<a href=\"mailto:" } else { "<a href=\"" });
                    href(self.out, &dest_url);
                    self.title(&title);
                    self.put("\">");
                }
            }
            Tag::Image { dest_url, title, .. } => {
                if on_the_web(&dest_url) {
                    self.put("<img src=\"");
                    href(self.out, &dest_url);
                    self.put("\" alt=\"");
                    self.alt(events);
                    self.title(&title);
                    self.put("\" />");
                } else {
                    // Its description stays, as text, and its end goes with its tag.
                    self.kept.push(false);
                }
            }
            Tag::HtmlBlock | Tag::FootnoteDefinition(_) | Tag::MetadataBlock(_) => {}
        }
    }

    fn title(&mut self, title: &str) {
        if !title.is_empty() {
            self.put("\" title=\"");
            attribute(self.out, title);
        }
    }

    /// An image's `alt`: the text of its description, up to the image's end, which
    /// this consumes. Nested tags count only to find that end.
    fn alt<'a>(&mut self, events: &mut impl Iterator<Item = Event<'a>>) {
        let mut depth = 0usize;
        for event in events {
            match event {
                Event::Start(_) => depth += 1,
                Event::End(_) if depth == 0 => return,
                Event::End(_) => depth -= 1,
                Event::Text(text)
                | Event::Html(text)
                | Event::InlineHtml(text)
                | Event::Code(text)
                | Event::InlineMath(text)
                | Event::DisplayMath(text)
                | Event::FootnoteReference(text) => {
                    attribute(self.out, &text);
                    self.at_line_start = text.ends_with('\n');
                }
                Event::SoftBreak | Event::HardBreak | Event::Rule => self.put(" "),
                Event::TaskListMarker(_) => {}
            }
        }
    }

    fn end(&mut self, tag: TagEnd) {
        let closing = match tag {
            TagEnd::Paragraph => "</p>\n",
            TagEnd::Heading(level) => {
                self.put("</");
                self.put(heading(level));
                ">\n"
            }
            TagEnd::Table => "</tbody></table>\n",
            TagEnd::TableHead => {
                self.in_head = false;
                "</tr></thead><tbody>\n"
            }
            TagEnd::TableRow => "</tr>\n",
            TagEnd::TableCell => {
                self.column += 1;
                if self.in_head { "</th>" } else { "</td>" }
            }
            TagEnd::BlockQuote(_) => "</blockquote>\n",
            TagEnd::CodeBlock => "</code></pre>\n",
            TagEnd::List(true) => "</ol>\n",
            TagEnd::List(false) => "</ul>\n",
            TagEnd::Item => "</li>\n",
            TagEnd::DefinitionList => "</dl>\n",
            TagEnd::DefinitionListTitle => "</dt>\n",
            TagEnd::DefinitionListDefinition => "</dd>\n",
            TagEnd::Emphasis => "</em>",
            TagEnd::Strong => "</strong>",
            TagEnd::Strikethrough => "</del>",
            TagEnd::Superscript => "</sup>",
            TagEnd::Subscript => "</sub>",
            // A kept image's end was consumed with its `alt`: an image's end here is a
            // refused one's, and only a link has a closing tag.
            TagEnd::Link if self.kept.pop().unwrap_or(true) => "</a>",
            TagEnd::Link => return,
            TagEnd::Image => {
                self.kept.pop();
                return;
            }
            TagEnd::HtmlBlock | TagEnd::FootnoteDefinition | TagEnd::MetadataBlock(_) => return,
        };
        self.put(closing);
    }
}

fn heading(level: HeadingLevel) -> &'static str {
    match level {
        HeadingLevel::H1 => "h1",
        HeadingLevel::H2 => "h2",
        HeadingLevel::H3 => "h3",
        HeadingLevel::H4 => "h4",
        HeadingLevel::H5 => "h5",
        HeadingLevel::H6 => "h6",
    }
}

/// An attribute's value: `&`, `<`, `>`, `"` and `'` escaped, as pulldown-cmark does.
fn attribute(out: &mut String, text: &str) {
    // Writing into a `String` cannot fail.
    let _ = escape_html(&mut *out, text);
}

/// A link: percent-encoded where a URL must be, as pulldown-cmark does.
fn href(out: &mut String, url: &str) {
    let _ = escape_href(&mut *out, url);
}

/// Text between tags: `&`, `<` and `>` escaped (quotes need no escaping outside
/// attributes, and pulldown-cmark leaves them).
///
/// A page's text comes in hundreds of short runs (a word in `code`, a link's text): it
/// is scanned eight bytes at a time in a register (`memchr`'s vector search, measured,
/// cost as much on runs this short), and each stretch without the three characters is
/// copied at once.
pub(super) fn body_text(out: &mut String, text: &str) {
    let bytes = text.as_bytes();
    let mut copied = 0;
    if bytes.len() < 8 {
        for (at, &b) in bytes.iter().enumerate() {
            if is_special(b) {
                escape_at(out, text, &mut copied, at);
            }
        }
        out.push_str(&text[copied..]);
        return;
    }
    // The last word is read ending at the text's end, over bytes already scanned (masked
    // off), rather than byte by byte: an iterator over the tail cost a page ~6,000
    // instructions.
    let last = bytes.len() - 8;
    let mut at = 0;
    while at < bytes.len() {
        let start = at.min(last);
        let Some(word) = bytes[start..].first_chunk::<8>() else { break };
        let flags = specials(u64::from_le_bytes(*word)) & (u64::MAX << ((at - start) * 8));
        if flags == 0 {
            at = start + 8;
            continue;
        }
        // Straight to the lowest flag: a special byte, unless the mask cut off the byte
        // whose borrow raised it.
        at = start + (flags.trailing_zeros() / 8) as usize;
        if is_special(bytes[at]) {
            escape_at(out, text, &mut copied, at);
        }
        at += 1;
    }
    out.push_str(&text[copied..]);
}

#[inline(always)]
fn is_special(b: u8) -> bool {
    matches!(b, b'&' | b'<' | b'>')
}

/// Copies `text` from `copied` up to the special byte at `at`, then its entity.
#[inline(always)]
fn escape_at(out: &mut String, text: &str, copied: &mut usize, at: usize) {
    // The byte is ASCII, so both slices end on character boundaries.
    out.push_str(&text[*copied..at]);
    out.push_str(match text.as_bytes()[at] {
        b'&' => "&amp;",
        b'<' => "&lt;",
        _ => "&gt;",
    });
    *copied = at + 1;
}

/// The high bit of each byte of `word` that is `&`, `<` or `>`, and perhaps of bytes
/// after one that is (the classic "has a zero byte" test, on `word` made zero where
/// the character is): `<` (0x3C) and `>` (0x3E) both become 0x3E with bit 1 set.
#[inline(always)]
fn specials(word: u64) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let zero_in = |v: u64| v.wrapping_sub(ONES) & !v & HIGHS;
    zero_in((word | (ONES * 0x02)) ^ (ONES * u64::from(b'>'))) | zero_in(word ^ (ONES * u64::from(b'&')))
}
