//! Every address of the site, as a type: a link is a value of one of these, so a link
//! to a route that does not exist, or with a wrongly typed parameter, does not compile.

use kiln::Route;

/// The home page: the pages, newest first, `PAGE_SIZE` at a time.
#[derive(Route)]
#[route("/")]
pub(crate) struct Home {
    /// 1-based; absent means 1. Not a positive number: 400; past the last page: 404.
    pub(crate) page: Option<u32>,
}

/// A page, its comments and the comment form (a live view: asked for a WebSocket,
/// the page's socket).
#[derive(Route)]
#[route("/pages/{slug}")]
pub(crate) struct ShowPage {
    pub(crate) slug: String,
}

/// Where the comment form posts.
#[derive(Route)]
#[route(POST, "/pages/{slug}/comments")]
pub(crate) struct PostComment {
    pub(crate) slug: String,
}

/// New comments on a page, as they are posted: Server-Sent Events, for clients other
/// than the page (which is a live view).
#[derive(Route)]
#[route("/pages/{slug}/live")]
pub(crate) struct LiveComments {
    pub(crate) slug: String,
}

/// RSS 2.0 of the newest pages.
#[derive(Route)]
#[route("/feed.rss")]
pub(crate) struct Feed;

/// Every page, for search engines.
#[derive(Route)]
#[route("/sitemap.xml")]
pub(crate) struct Sitemap;

/// The icon browsers ask for without being told where it is.
#[derive(Route)]
#[route("/favicon.ico")]
pub(crate) struct Favicon;

/// The login form.
#[derive(Route)]
#[route("/login")]
pub(crate) struct LoginForm;

/// Where the login form posts.
#[derive(Route)]
#[route(POST, "/login")]
pub(crate) struct Login;

/// Ends the editor's session.
#[derive(Route)]
#[route(POST, "/logout")]
pub(crate) struct Logout;

/// The editor's list of pages.
#[derive(Route)]
#[route("/editor")]
pub(crate) struct EditorHome;

/// The form for a new page.
#[derive(Route)]
#[route("/editor/new")]
pub(crate) struct NewPageForm;

/// Where the new page form posts (to preview or to save).
#[derive(Route)]
#[route(POST, "/editor/new")]
pub(crate) struct CreatePage;

/// The form that edits a page.
#[derive(Route)]
#[route("/editor/pages/{slug}")]
pub(crate) struct EditPageForm {
    pub(crate) slug: String,
}

/// The socket of the editor's form (its live preview), for the page at `page` (none:
/// a new page); asked for as a page, the form alone.
#[derive(Route)]
#[route("/editor/draft")]
pub(crate) struct EditorDraft {
    pub(crate) page: Option<String>,
}

/// Where the edit form posts (to preview or to save).
#[derive(Route)]
#[route(POST, "/editor/pages/{slug}")]
pub(crate) struct UpdatePage {
    pub(crate) slug: String,
}
