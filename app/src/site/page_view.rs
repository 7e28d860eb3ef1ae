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
                @for (c, at) in comments.iter().map(|c| (c, layout::Stamp::new(c.created))) {
                    li id=(format_args!("c{}", c.id)) {
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
