//! A page as visitors see it: the rendered Markdown, the comments (as text), and the
//! comment form, empty or back with a message and what was typed.

use kiln::markup::{Document, Flow, Fragment};
use kiln::{CSRF_FIELD, Csrf, html};

use super::layout;
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
    let content = html! {
        article {
            h1 { (page.title) }
            p.meta { "Updated " (layout::time(page.updated, false)) }
            (Markdown(&page.body))
        }
        section #comments {
            h2 { "Comments (" (comments.len()) ")" }
            ol.comments {
                @for c in comments {
                    li id=(format_args!("c{}", c.id)) {
                        p.byline { strong { (c.author) } " " (layout::time(c.created, true)) }
                        p.text { (c.body) }
                    }
                }
            }
            (comment_form(&page.slug, csrf, form))
        }
    };
    layout::page(&page.title, content)
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
