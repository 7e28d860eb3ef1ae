//! The editor's form as a live view, for its live preview: as the author types
//! (`input`, debounced by the client script), the form's fields come over the page's
//! socket and the preview is the Markdown rendered on the server, the same renderer
//! as the page's. Only the preview's slots change, never the fields' own, so the
//! textarea keeps what is typed in it and its caret. The form still posts as before:
//! Preview and Save, with or without JavaScript. The page is the editor's handler's
//! (which sends a visitor without a session to the login form); the view sits in it
//! ([`Embed`](kiln::live::Embed)), its socket on [`EditorDraft`], where the session is
//! checked again.

use std::rc::Rc;

use kiln::live::{Live, LiveSocket, LiveView};
use kiln::markup::{Document, Flow, Fragment, Href};
use kiln::{CSRF_FIELD, Csrf, FromRequest, Rejection, RequestContext, Session, StatusCode, live_html};
use serde::Deserialize;

use super::auth::is_editor;
use super::layout;
use super::markdown::Markdown;
use super::model::{self, PageDraft};
use super::routes::{CreatePage, EditorDraft, UpdatePage};
use crate::state::Worker;

/// Longest slug, in bytes (ASCII only).
pub(crate) const MAX_SLUG: usize = 64;
/// Longest title, in characters.
pub(crate) const MAX_TITLE: usize = 200;
/// Longest page, in bytes of Markdown: what the preview renders too.
pub(crate) const MAX_BODY: usize = 100_000;

/// The page form's fields; `action` is `preview` or `save` (the button pressed).
#[derive(Debug, Deserialize)]
pub(crate) struct PageInput {
    pub(crate) slug: Option<String>,
    pub(crate) title: Option<String>,
    pub(crate) body: Option<String>,
    pub(crate) action: Option<String>,
}

/// What the form sends as the author types.
#[derive(Deserialize)]
pub(crate) enum Event {
    Edit(PageInput),
}

/// The editor's form: for a new page, or for the page at a slug.
pub(crate) struct Editor {
    /// The page edited; `None` for a new page.
    slug: Option<String>,
    csrf_token: String,
    /// What the fields hold as the page is sent: never changed, so never sent again.
    fields: PageDraft,
    /// The latest title and text typed, which the preview shows.
    typed: PageDraft,
    preview: bool,
    error: Option<String>,
}

impl Editor {
    /// The form for `slug` (`None`: a new page) holding `draft`, with its message or
    /// its preview.
    pub(crate) fn new(slug: Option<String>, csrf: &str, draft: &PageDraft, error: Option<&str>, preview: bool) -> Self {
        Editor {
            slug,
            csrf_token: csrf.to_owned(),
            fields: draft.clone(),
            typed: draft.clone(),
            preview,
            error: error.map(str::to_owned),
        }
    }

    /// The route of its socket.
    pub(crate) fn route(&self) -> EditorDraft {
        EditorDraft { page: self.slug.clone() }
    }

    /// Where the form posts.
    fn target(&self) -> Target<'_> {
        Target(self.slug.as_deref())
    }

    pub(crate) fn title(&self) -> &'static str {
        if self.slug.is_none() { "New page" } else { "Edit page" }
    }
}

impl LiveView for Editor {
    type AppState = Worker;
    type Route = EditorDraft;
    type Event = Event;

    async fn mount(route: EditorDraft, cx: RequestContext<'_, Worker>) -> Result<Self, Rejection> {
        let (csrf, session) = (Csrf::from_request(&cx)?, Session::from_request(&cx)?);
        let worker = Rc::clone(cx.state());
        if !is_editor(&worker.db, &session).await? {
            return Err(Rejection::custom(StatusCode::FORBIDDEN, "Your session has ended: log in again."));
        }
        let draft = match &route.page {
            Some(slug) => {
                let page = model::page(&worker.db, slug).await?;
                PageDraft { slug: page.slug, title: page.title, body: page.body }
            }
            None => PageDraft::default(),
        };
        Ok(Editor::new(route.page, csrf.token(), &draft, None, false))
    }

    fn handle(&mut self, Event::Edit(input): Event, _: &mut LiveSocket<Self>) {
        self.typed.title = input.title.unwrap_or_default();
        let mut body = input.body.unwrap_or_default();
        if body.len() > MAX_BODY {
            // Saving says so; the preview shows what it may.
            let end = (0..=MAX_BODY).rev().find(|&i| body.is_char_boundary(i)).unwrap_or(0);
            body.truncate(end);
        }
        self.typed.body = body;
        self.preview = true;
    }

    fn page(&self, view: Fragment<Flow>) -> Fragment<Document> {
        layout::page(self.title(), view)
    }

    fn render(&self) -> Live<Event> {
        let heading = match &self.slug {
            None => "New page".to_owned(),
            Some(_) => format!("Editing “{}”", self.fields.title),
        };
        live_html! {
            h1 { (heading) }
            @if let Some(error) = &self.error { p.error role="alert" { (error) } }
            @if self.preview {
                p.notice { "Preview: nothing is saved until you press Save." }
                div.preview #preview { h1 { (self.typed.title) } (Markdown(&self.typed.body)) }
            }
            // The id keeps the form, and the text typed in it, when the preview appears
            // before it (the client script matches elements by tag and id).
            form.editor #editor method="post" action=(self.target()) on:input=(Event::Edit) {
                input type="hidden" name=(CSRF_FIELD) value=(self.csrf_token);
                @if self.slug.is_none() {
                    p {
                        label for="slug" { "Address (/pages/…)" }
                        input #slug name="slug" required maxlength=(MAX_SLUG) value=(self.fields.slug);
                    }
                }
                p {
                    label for="title" { "Title" }
                    input #title name="title" required maxlength=(MAX_TITLE) value=(self.fields.title);
                }
                p {
                    label for="body" { "Markdown" }
                    textarea.source #body name="body" rows=20 required { (self.fields.body) }
                }
                p {
                    button.secondary type="submit" name="action" value="preview" { "Preview" }
                    " "
                    button type="submit" name="action" value="save" { "Save" }
                }
            }
        }
    }
}

/// Where an editor's form posts: [`CreatePage`], or [`UpdatePage`] for its slug.
struct Target<'a>(Option<&'a str>);

impl Href for Target<'_> {
    fn write_href(&self, buf: &mut String) {
        match self.0 {
            None => CreatePage.write_href(buf),
            Some(slug) => UpdatePage { slug: slug.to_owned() }.write_href(buf),
        }
    }
}

#[cfg(test)]
mod tests {
    use kiln::live::LiveTest;

    use super::*;

    #[test]
    fn typing_sends_the_preview_rendered_on_the_server_and_never_the_fields() {
        let draft = PageDraft { slug: "tour".into(), title: "A tour".into(), body: "Old *text*".into() };
        let mut test = LiveTest::new(Editor::new(Some("tour".into()), "t0ken", &draft, None, false));
        assert!(!test.html().contains("id=\"preview\""), "no preview before the author types");
        assert!(test.html().contains(r#"data-kiln-input="Edit""#), "{}", test.html());

        let typed = r#"{"event":"Edit","form":"csrf_token=t0ken&title=A+tour&body=Some+**bold**+%3Cscript%3E"}"#;
        let diff = test.client_event(typed).expect("an event of the view").to_json().expect("a change");
        assert!(diff.contains("<strong>bold</strong>") && diff.contains("&lt;script&gt;"), "rendered: {diff}");
        assert!(!diff.contains("**bold**") && !diff.contains("Old *text*"), "the fields are not sent: {diff}");
        assert!(test.html().contains("Old *text*</textarea>"), "the textarea as it was sent: {}", test.html());

        let more = r#"{"event":"Edit","form":"title=A+tour&body=Some+**bold**+and+_more_"}"#;
        let diff = test.client_event(more).unwrap().to_json().unwrap();
        assert!(
            diff.contains("<em>more</em>") && !diff.contains("Preview: nothing"),
            "only the preview's slot: {diff}"
        );
    }
}
