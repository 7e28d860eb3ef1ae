//! The comments: read by anyone, posted with a bearer token that names the author, or
//! from the site's own pages with their CSRF token.
//! A token, not the session cookie, so a page on another site cannot post in a
//! visitor's name (a browser never adds an `Authorization` header by itself). Only the
//! editor gets tokens: the request carries the site's password, checked as the login
//! page checks it and counted against the same per-address limit of attempts.

use std::time::Duration;

use kiln::rejection::Rejection;
use kiln::{BearerToken, ClientAddr, CsrfGuard, Json, Key, State, StatusCode};

use super::super::comments::MAX_LINKS;
use super::super::comments::links;
use super::super::page_view::{MAX_AUTHOR, MAX_COMMENT};
use super::super::{auth, events, model};
use super::routes::{ApiComments, ApiPostComment, ApiPostCommentCsrf, ApiToken};
use super::types::{Comment, MAX_PASSWORD, NamedComment, NewComment, Token, TokenRequest, is_text};
use crate::state::Worker;

/// How long a commenter's token lasts.
pub(crate) const TOKEN_TTL: Duration = Duration::from_secs(3600);

/// `GET /api/pages/{slug}/comments`: `404` when there is no such page.
pub(crate) async fn comments(
    route: ApiComments,
    State(worker): State<Worker>,
) -> Result<Json<Vec<Comment>>, kiln::db::Error> {
    let (exists, comments) = futures_util::future::try_join(
        model::page_exists(&worker.db, &route.slug),
        model::comments_of(&worker.db, &route.slug),
    )
    .await?;
    if !exists {
        return Err(kiln::db::Error::NotFound);
    }
    Ok(Json(comments.into_iter().map(Comment::from).collect()))
}

/// `POST /api/tokens`: the editor's password and a name the document's schema allows
/// get a token; a name it does not allow is a `422`, a wrong password a `403`, and past
/// the site's login attempts (`Settings::apply`'s limit, which counts these too) a `429`.
pub(crate) async fn token(
    _: ApiToken,
    key: Key,
    State(worker): State<Worker>,
    Json(input): Json<TokenRequest>,
) -> Result<Json<Token>, Rejection> {
    if !is_text(&input.author, MAX_AUTHOR) {
        return Err(unprocessable("the name is empty, too long or holds control characters"));
    }
    let password = input.password;
    if password.is_empty() || password.chars().count() > MAX_PASSWORD {
        return Err(unprocessable("the password is empty or longer than 1024 characters"));
    }
    // Argon2 takes a fraction of a second by design: on the pool, as the login's.
    let hash = worker.site.settings.password_hash.clone();
    let right = kiln::blocking(move || auth::verify(&password, &hash)).await?;
    if !right {
        return Err(Rejection::custom(StatusCode::FORBIDDEN, "wrong password"));
    }
    let token = BearerToken::issue(&key, input.author.trim(), TOKEN_TTL);
    Ok(Json(Token { token, expires_in: TOKEN_TTL.as_secs() }))
}

/// `POST /api/pages/{slug}/comments`: checked as its schema says, and for links as the
/// site's form checks them (`422`), counted against the same per-address limit
/// (`429`), `404` without the page.
pub(crate) async fn post_comment(
    route: ApiPostComment,
    token: BearerToken,
    State(worker): State<Worker>,
    client: ClientAddr,
    Json(input): Json<NewComment>,
) -> Result<Json<Comment>, Rejection> {
    if !is_text(token.subject(), MAX_AUTHOR) {
        return Err(unprocessable("the token's name is empty, too long or holds control characters"));
    }
    store(&worker, client, &route.slug, token.subject(), &input.body).await
}

/// `POST /api/pages/{slug}/comments/csrf`: as [`post_comment`], the CSRF token instead
/// of a bearer token, the author named in the body.
pub(crate) async fn post_comment_csrf(
    route: ApiPostCommentCsrf,
    _: CsrfGuard,
    State(worker): State<Worker>,
    client: ClientAddr,
    Json(input): Json<NamedComment>,
) -> Result<Json<Comment>, Rejection> {
    if !is_text(&input.author, MAX_AUTHOR) {
        return Err(unprocessable("the name is empty, too long or holds control characters"));
    }
    store(&worker, client, &route.slug, &input.author, &input.body).await
}

/// Checks `body`, counts the comment against `client`'s limit, stores it on the page at
/// `slug` and sends it to the page's live readers.
async fn store(
    worker: &Worker,
    client: ClientAddr,
    slug: &str,
    author: &str,
    body: &str,
) -> Result<Json<Comment>, Rejection> {
    if !is_text(body, MAX_COMMENT) {
        return Err(unprocessable("the comment is empty, too long or holds control characters"));
    }
    if links(body) > MAX_LINKS {
        return Err(unprocessable("the comment holds too many links: at most 3"));
    }
    worker.site.settings.comments.check_client(client)?;
    let page = model::page(&worker.db, slug).await?;
    let comment =
        model::Comment { id: 0, author: author.trim().to_owned(), body: body.trim().to_owned(), created: model::now() };
    let id = model::add_comment(&worker.db, page.id, &comment.author, &comment.body, comment.created).await?;
    let comment = model::Comment { id, ..comment };
    events::publish(&worker.site.bus, slug, &comment).await;
    Ok(Json(comment.into()))
}

fn unprocessable(message: &'static str) -> Rejection {
    Rejection::custom(StatusCode::UNPROCESSABLE_ENTITY, message)
}
