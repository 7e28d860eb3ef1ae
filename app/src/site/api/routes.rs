//! The API's addresses, as types: the same `#[derive(Route)]` as the site's pages, so
//! the document's paths and parameters come from them.

use std::num::NonZeroU32;

use kiln::Route;

/// Lists the pages, newest first.
///
/// `PAGE_SIZE` pages at a time; `next_page` in the answer names the following page.
#[derive(Route)]
#[route("/api/pages")]
pub(crate) struct ApiPages {
    /// From 1; absent means 1. Past the last page the list is empty.
    pub(crate) page: Option<NonZeroU32>,
}

/// Gets a page, with its Markdown.
#[derive(Route)]
#[route("/api/pages/{slug}")]
pub(crate) struct ApiPage {
    /// The page's address, as in `/pages/{slug}`.
    pub(crate) slug: String,
}

/// Searches the pages' titles and text.
///
/// Case-insensitive; at most `SEARCH_LIMIT` pages, newest first.
#[derive(Route)]
#[route("/api/search")]
pub(crate) struct ApiSearch {
    /// The text to look for.
    #[query]
    pub(crate) q: String,
}

/// Lists a page's comments, oldest first.
#[derive(Route)]
#[route("/api/pages/{slug}/comments")]
pub(crate) struct ApiComments {
    /// The page's address.
    pub(crate) slug: String,
}

/// Issues a bearer token for a commenter, to the editor.
///
/// The request carries the site's editor password (a wrong one is refused with `403`,
/// and attempts count against the login's limit); the token carries the name its
/// comments are posted under and lasts an hour.
#[derive(Route)]
#[route(POST, "/api/tokens")]
pub(crate) struct ApiToken;

/// Posts a comment on a page, under the name the bearer token was issued for.
///
/// Rate-limited per client address together with the site's comment form.
#[derive(Route)]
#[route(POST, "/api/pages/{slug}/comments")]
pub(crate) struct ApiPostComment {
    /// The page's address.
    pub(crate) slug: String,
}

/// Posts a comment from the site's own pages, under the name given.
///
/// For a script on the wiki's pages: the CSRF cookie the page set, and its token in the
/// `x-csrf-token` header, stand in for a bearer token. Checked and rate-limited as the
/// other way to post.
#[derive(Route)]
#[route(POST, "/api/pages/{slug}/comments/csrf")]
pub(crate) struct ApiPostCommentCsrf {
    /// The page's address.
    pub(crate) slug: String,
}
