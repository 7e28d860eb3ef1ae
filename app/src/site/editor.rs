//! The editor's pages, behind the session (a live one: not expired, not logged out):
//! the list of pages, and the forms that create and change a page, each with a
//! preview that saves nothing: live as the author types (`preview.rs`), and on the
//! Preview button without JavaScript.

use kiln::live::{Embed, LiveView};
use kiln::markup::{Document, Fragment, PreEscaped};
use kiln::rejection::Rejection;
use kiln::{CSRF_FIELD, Csrf, CsrfGuard, Form, Redirect, Session, State, StatusCode, html};

use super::auth::is_editor;
use super::errors::SiteError;
use super::input::has_control_chars;
use super::layout;
use super::model::{self, PageDraft};
use super::preview::{Editor, MAX_BODY, MAX_SLUG, MAX_TITLE, PageInput};
use super::reply::Reply;
use super::routes::{CreatePage, EditPageForm, EditorHome, LoginForm, Logout, NewPageForm, ShowPage, UpdatePage};
use crate::state::Worker;

/// Most pages the editor's list shows.
const MAX_LISTED: i64 = 1000;

/// A form posted without a session (it expired or was logged out, or the cookie is
/// forged) is refused; editor pages send the visitor to the login form instead.
fn session_ended() -> SiteError {
    SiteError::Status(StatusCode::FORBIDDEN, "Your session has ended: log in again, then resend the form.".into())
}

pub(crate) async fn home(
    _: EditorHome,
    State(worker): State<Worker>,
    session: Session,
    csrf: Csrf,
) -> Result<Result<(Csrf, Fragment<Document>), Redirect>, SiteError> {
    if !is_editor(&worker.db, &session).await? {
        return Ok(Err(Redirect::to(LoginForm)));
    }
    let pages = model::newest(&worker.db, MAX_LISTED, 0).await?;
    let content = html! {
        h1 { "Editor" }
        p { a href=(NewPageForm) { "Write a new page" } }
        ul.pages {
            @for page in &pages {
                li {
                    a href=(EditPageForm { slug: page.slug.clone() }) { (page.title) }
                    " "
                    (layout::time(page.updated, false))
                }
            }
        }
        form.inline method="post" action=(Logout) {
            input type="hidden" name=(CSRF_FIELD) value=(csrf.token());
            button.secondary type="submit" { "Log out" }
        }
    };
    let page = layout::page("Editor", content);
    Ok(Ok((csrf, page)))
}

pub(crate) async fn new_form(
    _: NewPageForm,
    State(worker): State<Worker>,
    session: Session,
    csrf: Csrf,
    embed: Embed,
) -> Result<Result<(Csrf, Fragment<Document>), Redirect>, SiteError> {
    if !is_editor(&worker.db, &session).await? {
        return Ok(Err(Redirect::to(LoginForm)));
    }
    let page = editor_page(&embed, &csrf, Editor::new(None, csrf.token(), &PageDraft::default(), None, false));
    Ok(Ok((csrf, page)))
}

pub(crate) async fn create(
    _: CreatePage,
    _: CsrfGuard,
    State(worker): State<Worker>,
    session: Session,
    csrf: Csrf,
    form: Result<Form<PageInput>, Rejection>,
) -> Result<Reply, SiteError> {
    if !is_editor(&worker.db, &session).await? {
        return Err(session_ended());
    }
    let (draft, action) = match form {
        Ok(Form(input)) => draft(input, None),
        Err(rejection) => return Err(SiteError::Status(rejection.status(), rejection.to_string().into())),
    };
    let problem = check(&draft, true);
    if action != "save" || problem.is_some() {
        return Ok(form_again(None, csrf, &draft, problem.map(|p| p.to_owned())));
    }
    match model::create_page(&worker.db, &draft, model::now()).await {
        Ok(_) => Ok(Reply::SeeOther(Redirect::to(ShowPage { slug: draft.slug }))),
        Err(kiln::db::Error::Conflict { .. }) => {
            let message = format!(
                "There is already a page at {}; choose another address.",
                ShowPage { slug: draft.slug.clone() }
            );
            let page = posted_page(Editor::new(None, csrf.token(), &draft, Some(&message), false));
            Ok(Reply::Page(StatusCode::CONFLICT, csrf, page))
        }
        Err(e) => Err(e.into()),
    }
}

pub(crate) async fn edit_form(
    route: EditPageForm,
    State(worker): State<Worker>,
    session: Session,
    csrf: Csrf,
    embed: Embed,
) -> Result<Result<(Csrf, Fragment<Document>), Redirect>, SiteError> {
    if !is_editor(&worker.db, &session).await? {
        return Ok(Err(Redirect::to(LoginForm)));
    }
    let page = model::page(&worker.db, &route.slug).await?;
    let draft = PageDraft { slug: page.slug, title: page.title, body: page.body };
    let html = editor_page(&embed, &csrf, Editor::new(Some(route.slug), csrf.token(), &draft, None, false));
    Ok(Ok((csrf, html)))
}

pub(crate) async fn update(
    route: UpdatePage,
    _: CsrfGuard,
    State(worker): State<Worker>,
    session: Session,
    csrf: Csrf,
    form: Result<Form<PageInput>, Rejection>,
) -> Result<Reply, SiteError> {
    if !is_editor(&worker.db, &session).await? {
        return Err(session_ended());
    }
    let (draft, action) = match form {
        Ok(Form(input)) => draft(input, Some(&route.slug)),
        Err(rejection) => return Err(SiteError::Status(rejection.status(), rejection.to_string().into())),
    };
    let problem = check(&draft, false);
    if action != "save" || problem.is_some() {
        // Saving a page that does not exist is a 404: so is previewing it, rather than
        // a form whose Save can only fail.
        if !model::page_exists(&worker.db, &route.slug).await? {
            return Err(SiteError::not_found());
        }
        return Ok(form_again(Some(route.slug), csrf, &draft, problem.map(|p| p.to_owned())));
    }
    model::update_page(&worker.db, &route.slug, &draft, model::now()).await?;
    Ok(Reply::SeeOther(Redirect::to(ShowPage { slug: route.slug })))
}

/// The draft a form holds, and the button pressed; an edited page keeps its slug.
fn draft(input: PageInput, slug: Option<&str>) -> (PageDraft, String) {
    let slug = slug.map(str::to_owned).or(input.slug).unwrap_or_default().trim().to_owned();
    let draft = PageDraft { slug, title: input.title.unwrap_or_default(), body: input.body.unwrap_or_default() };
    (draft, input.action.unwrap_or_default())
}

/// The form again (for the page at `slug`; `None`: a new one): with its message
/// (`422`), or with the preview (`200`).
fn form_again(slug: Option<String>, csrf: Csrf, draft: &PageDraft, problem: Option<String>) -> Reply {
    let status = if problem.is_some() { StatusCode::UNPROCESSABLE_ENTITY } else { StatusCode::OK };
    let editor = Editor::new(slug, csrf.token(), draft, problem.as_deref(), problem.is_none());
    Reply::Page(status, csrf, posted_page(editor))
}

/// What is wrong with a draft, in a sentence for the editor.
fn check(draft: &PageDraft, new: bool) -> Option<&'static str> {
    let slug_ok = !draft.slug.is_empty()
        && draft.slug.len() <= MAX_SLUG
        && draft.slug.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !draft.slug.starts_with('-');
    if new && !slug_ok {
        return Some("The address must be 1 to 64 lowercase letters, digits and dashes, not starting with a dash.");
    }
    if draft.title.trim().is_empty() {
        return Some("Please give the page a title.");
    }
    if draft.title.chars().count() > MAX_TITLE {
        return Some("The title is too long: at most 200 characters.");
    }
    if has_control_chars(&draft.title) {
        return Some("The title contains control characters.");
    }
    if draft.body.trim().is_empty() {
        return Some("Please write the page.");
    }
    if draft.body.len() > MAX_BODY {
        return Some("The page is too long: at most 100,000 bytes of Markdown.");
    }
    if has_control_chars(&draft.body) {
        return Some("The page contains control characters.");
    }
    None
}

/// The editor's page around its form, live: the form as the page is first sent.
fn editor_page(embed: &Embed, csrf: &Csrf, editor: Editor) -> Fragment<Document> {
    layout::page(editor.title(), embed.view(&editor, &editor.route(), csrf))
}

/// The editor's page around its form as posted, not live: the view's socket would
/// mount it again from the stored page, and the preview and what was typed would go.
fn posted_page(editor: Editor) -> Fragment<Document> {
    layout::page(editor.title(), html! { (PreEscaped(editor.render().to_html())) }.into())
}
