//! A page as visitors see it: the rendered Markdown, then its discussion: the
//! comments (as text), how many read the page now, and the comment form, empty or
//! back with a message and what was typed. The discussion is live markup
//! (`live_html!`): the live view (`live.rs`) sends its changes to an open page, and
//! the same markup is the page a form posted without JavaScript comes back to.

use kiln::live::Live;
use kiln::markup::{Document, Flow, Fragment, PreEscaped};
use kiln::{CSRF_FIELD, live_html};
use serde::Deserialize;

use super::layout;
use super::markdown::Markdown;
use super::model::{Comment, Page};
use super::routes::PostComment;

/// Longest name a comment may carry, in characters.
pub(crate) const MAX_AUTHOR: usize = 80;
/// Longest comment, in characters.
pub(crate) const MAX_COMMENT: usize = 4000;

/// The comment form's fields, each optional so that a missing one is a message in
/// the form rather than a bare refusal.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct CommentInput {
    pub(crate) author: Option<String>,
    pub(crate) body: Option<String>,
}

/// What an open page sends: the comment form, posted.
#[derive(Deserialize)]
pub(crate) enum Event {
    Post(CommentInput),
}

/// The comment form's content: empty, or back with a message.
#[derive(Debug, Default)]
pub(crate) struct CommentForm {
    pub(crate) author: String,
    pub(crate) body: String,
    pub(crate) error: Option<String>,
}

/// A page's discussion: its comments, oldest first, and the comment form.
pub(crate) struct Thread {
    pub(crate) slug: String,
    pub(crate) comments: Vec<Comment>,
    /// The visitor's CSRF token, for the form as it posts without JavaScript.
    pub(crate) csrf_token: String,
    pub(crate) form: CommentForm,
    /// How many have the page open, across the instances; `None` before it connects.
    pub(crate) readers: Option<usize>,
}

impl Thread {
    /// The discussion's markup; an open page is sent what changes in it.
    pub(crate) fn render(&self) -> Live<Event> {
        let comments = self.comments.iter().map(|c| (c, layout::Stamp::new(c.created), Anchor::new(c.id)));
        live_html! {
            section #comments {
                h2 { "Comments (" (self.comments.len()) ")" }
                @if let Some(readers) = self.readers {
                    p.readers { (readers) @if readers == 1 { " reader" } @else { " readers" } " on this page now" }
                }
                ol.comments {
                    @for (c, at, anchor) in comments; key = c.id {
                        li id=(anchor.as_str()) {
                            p.byline { strong { (c.author) } " " time datetime=(at.iso()) { (at.minute()) } }
                            p.text { (c.body) }
                        }
                    }
                }
                // Posted over the page's socket when it is connected (the client script
                // empties it once sent), to `PostComment` as a plain form otherwise.
                form.comment method="post" action=(PostComment { slug: self.slug.clone() }) on:submit=(Event::Post)
                    data-kiln-reset="" {
                    input type="hidden" name=(CSRF_FIELD) value=(self.csrf_token);
                    @if let Some(error) = &self.form.error {
                        p.error role="alert" { (error) }
                    }
                    p {
                        label for="author" { "Name" }
                        input #author name="author" maxlength=(MAX_AUTHOR) required value=(self.form.author);
                    }
                    p {
                        label for="body" { "Comment" }
                        textarea #body name="body" rows=5 maxlength=(MAX_COMMENT) required { (self.form.body) }
                    }
                    p { button type="submit" { "Post comment" } }
                }
            }
        }
    }
}

/// The whole page: the article, then `discussion` (the thread, rendered).
pub(crate) fn page(page: &Page, discussion: Fragment<Flow>) -> Fragment<Document> {
    layout::site_page!(&page.title, {
        article {
            h1 { (page.title) }
            p.meta { "Updated " (layout::time(page.updated, false)) }
            (Markdown(&page.body))
        }
        (discussion)
    })
}

/// The page with its thread rendered once, not live: what a comment form posted
/// without JavaScript and refused comes back as.
pub(crate) fn static_page(article: &Page, thread: &Thread) -> Fragment<Document> {
    page(article, kiln::html! { (PreEscaped(thread.render().to_html())) }.into())
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
