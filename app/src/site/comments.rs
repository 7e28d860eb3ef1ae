//! Posting a comment without JavaScript: CSRF-checked, validated (the form comes
//! back with the message and what was typed, `422`), rate-limited per client address
//! across the workers (the same, `429` with `Retry-After`), stored, published to the
//! page's open copies, then `303` back to the page. An open page posts over its
//! socket instead (`live.rs`), through the same checks and the same limit.

use kiln::rejection::{Rejection, TooManyRequests};
use kiln::{ClientAddr, Csrf, CsrfGuard, Form, Redirect, State, StatusCode};

use super::errors::SiteError;
use super::events;
use super::input::has_control_chars;
use super::model;
use super::page_view::{self, CommentForm, CommentInput, MAX_AUTHOR, MAX_COMMENT, Thread};
use super::reply::Reply;
use super::routes::{PostComment, ShowPage};
use crate::state::Worker;

/// Most links a comment may hold: more is what spam looks like.
pub(crate) const MAX_LINKS: usize = 3;

pub(crate) async fn post(
    route: PostComment,
    _: CsrfGuard,
    State(worker): State<Worker>,
    client: ClientAddr,
    csrf: Csrf,
    form: Result<Form<CommentInput>, Rejection>,
) -> Result<Reply, SiteError> {
    let (author, body, problem) = match form {
        Ok(Form(input)) => {
            let problem = check(input.author.as_deref(), input.body.as_deref()).err();
            (
                input.author.unwrap_or_default(),
                input.body.unwrap_or_default(),
                problem.map(|p| (StatusCode::UNPROCESSABLE_ENTITY, p.to_owned())),
            )
        }
        Err(rejection) => (String::new(), String::new(), Some((rejection.status(), rejection.to_string()))),
    };
    // Only a comment that would be stored counts: refused ones (a name forgotten) must
    // not use up the quota and then cost the visitor the comment they got right. So the
    // handler asks the limit, rather than the app refusing before the form is read.
    let limited = if problem.is_none() { worker.site.settings.comments.check_client(client).err() } else { None };
    let problem = problem.or_else(|| Some((StatusCode::TOO_MANY_REQUESTS, too_many(limited.as_ref()?))));
    if let Some((status, message)) = problem {
        let (page, comments) = futures_util::future::try_join(
            model::page(&worker.db, &route.slug),
            model::comments_of(&worker.db, &route.slug),
        )
        .await?;
        let thread = Thread {
            slug: route.slug,
            comments,
            csrf_token: csrf.token().to_owned(),
            form: CommentForm { author, body, error: Some(message) },
            readers: None,
        };
        let html = page_view::static_page(&page, &thread);
        return Ok(match limited {
            Some(refused) => Reply::TooMany(refused, csrf, html),
            None => Reply::Page(status, csrf, html),
        });
    }
    let page = model::page(&worker.db, &route.slug).await?;
    let id = store(&worker, page.id, &route.slug, &author, &body).await?;
    Ok(Reply::SeeOther(Redirect::to(format_args!("{}#c{id}", ShowPage { slug: route.slug }))))
}

/// Stores a comment checked by [`check`] and publishes it to the page's open copies;
/// gives its id.
pub(crate) async fn store(
    worker: &Worker,
    page_id: i64,
    slug: &str,
    author: &str,
    body: &str,
) -> Result<i64, kiln::db::Error> {
    let comment =
        model::Comment { id: 0, author: author.trim().to_owned(), body: body.trim().to_owned(), created: model::now() };
    let id = model::add_comment(&worker.db, page_id, &comment.author, &comment.body, comment.created).await?;
    events::publish(&worker.site.bus, slug, &model::Comment { id, ..comment }).await;
    Ok(id)
}

/// What a client over the comment limit is told.
pub(crate) fn too_many(refused: &TooManyRequests) -> String {
    format!("Too many comments from your address; wait {} s and try again.", refused.retry_after_secs())
}

/// What is wrong with a comment, in a sentence for its author.
pub(crate) fn check(author: Option<&str>, body: Option<&str>) -> Result<(), &'static str> {
    let author = author.map(str::trim).unwrap_or_default();
    let body = body.map(str::trim).unwrap_or_default();
    if author.is_empty() {
        return Err("Please give your name.");
    }
    if body.is_empty() {
        return Err("Please write a comment.");
    }
    if author.chars().count() > MAX_AUTHOR {
        return Err("The name is too long: at most 80 characters.");
    }
    if body.chars().count() > MAX_COMMENT {
        return Err("The comment is too long: at most 4,000 characters.");
    }
    if has_control_chars(author) {
        return Err("The name contains control characters.");
    }
    if has_control_chars(body) {
        return Err("The comment contains control characters.");
    }
    if links(body) > MAX_LINKS {
        return Err("The comment holds too many links: at most 3.");
    }
    Ok(())
}

/// How many links `text` holds: `http://`, `https://` and `www.`, in any case.
pub(super) fn links(text: &str) -> usize {
    let lower = text.to_ascii_lowercase();
    ["http://", "https://", "www."].iter().map(|m| lower.matches(m).count()).sum::<usize>()
        - lower.matches("://www.").count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_are_checked() {
        let long_name = "n".repeat(MAX_AUTHOR + 1);
        let long_text = "é".repeat(MAX_COMMENT + 1);
        let spam = "https://a.example http://b.example www.c.example HTTPS://www.d.example";
        let table: [(Option<&str>, Option<&str>, bool); 12] = [
            (Some("ann"), Some("hello"), true),
            (None, Some("hello"), false),
            (Some("ann"), None, false),
            (Some("  "), Some("hello"), false),
            (Some("ann"), Some(" \n "), false),
            (Some(&long_name), Some("hello"), false),
            (Some("ann"), Some(&long_text), false),
            (Some("ann"), Some(spam), false),
            (Some("ann"), Some(&"é".repeat(MAX_COMMENT)), true),
            (Some("a\0nn"), Some("hello"), false),
            (Some("ann"), Some("hel\u{1b}lo"), false),
            (Some("ann\t"), Some("two\r\nlines\tand a tab"), true),
        ];
        for (author, body, ok) in table {
            assert_eq!(check(author, body).is_ok(), ok, "{author:?} {body:?}");
        }
    }

    #[test]
    fn a_link_is_counted_once() {
        assert_eq!(links("see https://www.example.org and www.example.com"), 2);
        assert_eq!(links("no links here"), 0);
    }
}
