//! A page as visitors see it: the rendered Markdown, the comments (as text), and the
//! comment form, empty or back with a message and what was typed.

use kiln::markup::{Document, Flow, Fragment};
use kiln::{CSRF_FIELD, Csrf, html};

use super::layout;
use super::live;
use super::markdown::Markdown;
use super::model::{Comment, Page};
use super::routes::PostComment;

/// Longest name a comment may carry, in characters.
pub(crate) const MAX_AUTHOR: usize = 80;
/// Longest comment, in characters.
pub(crate) const MAX_COMMENT: usize = 4000;

/// The comment form's content: empty, or back with a message.
#[derive(Debug, Default)]
pub(crate) struct CommentForm<'a> {
    pub(crate) author: &'a str,
    pub(crate) body: &'a str,
    pub(crate) error: Option<&'a str>,
}

/// The whole page.
pub(crate) fn page(page: &Page, comments: &[Comment], csrf: &Csrf, form: &CommentForm<'_>) -> Fragment<Document> {
    layout::site_page!(&page.title, {
        article {
            h1 { (page.title) }
            p.meta { "Updated " (layout::time(page.updated, false)) }
            (Markdown(&page.body))
        }
        section #comments {
            h2 { "Comments (" (comments.len()) ")" }
            ol.comments {
                // Each time written in place rather than through `layout::time`: a page
                // has a time per comment, and each fragment was a string of its own.
                @for (c, at, anchor) in comments.iter().map(|c| (c, layout::Stamp::new(c.created), Anchor::new(c.id))) {
                    li id=(anchor.as_str()) {
                        p.byline { strong { (c.author) } " " time datetime=(at.iso()) { (at.minute()) } }
                        p.text { (c.body) }
                    }
                }
            }
            (comment_form(&page.slug, csrf, form))
            script src=(live::SCRIPT) defer {}
        }
    })
}

fn comment_form(slug: &str, csrf: &Csrf, form: &CommentForm<'_>) -> Fragment<Flow> {
    html! {
        form.comment method="post" action=(PostComment { slug: slug.to_owned() }) {
            input type="hidden" name=(CSRF_FIELD) value=(csrf.token());
            @if let Some(error) = form.error {
                p.error role="alert" { (error) }
            }
            p {
                label for="author" { "Name" }
                input #author name="author" maxlength=(MAX_AUTHOR) required value=(form.author);
            }
            p {
                label for="body" { "Comment" }
                textarea #body name="body" rows=5 maxlength=(MAX_COMMENT) required { (form.body) }
            }
            p { button type="submit" { "Post comment" } }
        }
    }
}

/// A comment's anchor, `c` and its id, written on the stack: through `format_args!`
/// it cost ~400 instructions a comment (the formatting machinery, then escaping).
struct Anchor {
    text: [u8; 21],
    start: usize,
}

impl Anchor {
    fn new(id: i64) -> Self {
        let mut text = [0u8; 21];
        let mut start = text.len();
        let mut rest = id.unsigned_abs();
        loop {
            start -= 1;
            text[start] = b'0' + (rest % 10) as u8;
            rest /= 10;
            if rest == 0 {
                break;
            }
        }
        if id < 0 {
            start -= 1;
            text[start] = b'-';
        }
        start -= 1;
        text[start] = b'c';
        Anchor { text, start }
    }

    fn as_str(&self) -> &str {
        // ASCII digits, `-` and `c`.
        std::str::from_utf8(&self.text[self.start..]).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::Anchor;

    #[test]
    fn an_anchor_reads_as_format_would_write_it() {
        for id in [0, 1, 9, 10, 20, 12_345, i64::MAX, -1, i64::MIN] {
            assert_eq!(Anchor::new(id).as_str(), format!("c{id}"));
        }
    }
}
