//! The demo site: a wiki whose pages are Markdown rendered on every request, with
//! comments, an RSS feed, a sitemap and an editor behind a login, built on kiln's
//! public API as any app would be.
//!
//! | Route | What |
//! | --- | --- |
//! | `GET /` (`?page=N`) | the pages, newest first |
//! | `GET /pages/{slug}` | a page, its comments, the comment form: a live view, whose socket is the same path |
//! | `POST /pages/{slug}/comments` | posts a comment without JavaScript (CSRF, rate limit, 422, 303) |
//! | `GET /pages/{slug}/live` | new comments on the page as they are posted (Server-Sent Events), for other clients |
//! | `GET /feed.rss`, `GET /sitemap.xml` | RSS 2.0 and the sitemap, absolute links |
//! | `GET /login`, `POST /login`, `POST /logout` | the editor's session |
//! | `GET /editor`, `GET|POST /editor/new`, `GET|POST /editor/pages/{slug}` | the editor |
//! | `GET /editor/draft` (`?page=slug`) | the editor's form as a live view: its socket, for the live preview |
//! | `GET /static/…` | assets (`asset!` names immutable) |
//! | `GET /favicon.ico` | the site's icon |

pub(crate) mod api;
mod auth;
mod comments;
mod editor;
mod errors;
mod events;
mod feed;
mod input;
mod layout;
mod live;
mod markdown;
mod model;
mod page_view;
mod pages;
mod preview;
mod readers;
mod reply;
mod routes;
pub(crate) mod seed;
pub(crate) mod settings;
pub(crate) mod worker;

#[cfg(test)]
mod tests;

use kiln::App;

use crate::state::Worker;

/// The asset links the site's pages make, for a start-up that checks the `--public`
/// folder holds them as the binary was built.
pub(crate) const ASSET_LINKS: [&str; 1] = [layout::STYLESHEET_LINK];

/// Adds the site's routes.
pub(crate) fn mount(app: App<Worker>) -> App<Worker> {
    app.route(pages::home)
        .live::<live::Discussion>()
        .route(comments::post)
        .route(events::events)
        .route(feed::feed)
        .route(feed::sitemap)
        .route(layout::favicon)
        .route(auth::form)
        .route(auth::login)
        .route(auth::logout)
        .route(editor::home)
        .route(editor::new_form)
        .route(editor::create)
        .route(editor::edit_form)
        .route(editor::update)
        .live::<preview::Editor>()
        .mount(api::mount)
}
