//! The wiki's JSON API, described in its OpenAPI document (`app/openapi.json`, kept
//! from drifting by `api::tests`): the pages, a search, and the comments, which a
//! client posts with a bearer token the editor asked for (with the site's password)
//! under the commenter's name. Every refusal under `/api` is `application/problem+json`.
//!
//! | Route | What |
//! | --- | --- |
//! | `GET /api/pages` (`?page=N`) | the pages, newest first |
//! | `GET /api/pages/{slug}` | a page, its Markdown |
//! | `GET /api/search?q=…` | the pages whose title or text holds the words |
//! | `GET /api/pages/{slug}/comments` | a page's comments, oldest first |
//! | `POST /api/tokens` | a bearer token for a commenter's name (the editor's password) |
//! | `POST /api/pages/{slug}/comments` | posts a comment (bearer token, rate limit) |
//! | `POST /api/pages/{slug}/comments/csrf` | the same from the site's pages (CSRF token) |

mod comments;
mod pages;
pub(crate) mod routes;
mod types;

#[cfg(test)]
mod client_tests;
#[cfg(test)]
mod tests;

use kiln::App;

use crate::state::Worker;

use comments::{comments, post_comment, post_comment_csrf, token};
use pages::{page, pages, search};

/// Adds the API's routes, each described in the app's OpenAPI document. Its refusals
/// are problem details (RFC 9457, `application/problem+json`), where the site's pages
/// keep their HTML error pages.
pub(crate) fn mount(app: App<Worker>) -> App<Worker> {
    app.problem_json("/api")
        .api(pages)
        .api(page)
        .api(search)
        .api(comments)
        .api(token)
        .api(post_comment)
        .api(post_comment_csrf)
}
