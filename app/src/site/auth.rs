//! The editor's login and logout: one password, whose Argon2 hash the server was
//! given at start; a signed, `HttpOnly`, `SameSite` session cookie.

use std::time::Instant;

use argon2::Argon2;
use argon2::password_hash::{PasswordHash, PasswordVerifier};
use kiln::markup::{Document, Fragment};
use kiln::rejection::Rejection;
use kiln::{
    CSRF_FIELD, Csrf, CsrfGuard, Form, Redirect, RequestHead, Session, SessionCookies, State, StatusCode, html,
};
use serde::Deserialize;

use super::errors::SiteError;
use super::layout;
use super::reply::Reply;
use super::routes::{EditorHome, Home, Login, LoginForm, Logout};
use crate::state::Worker;

/// The one user a session is started for.
pub(crate) const EDITOR: &str = "editor";

#[derive(Debug, Deserialize)]
pub(crate) struct LoginInput {
    password: Option<String>,
}

pub(crate) async fn form(_: LoginForm, csrf: Csrf) -> (Csrf, Fragment<Document>) {
    let page = login_page(&csrf, None);
    (csrf, page)
}

pub(crate) async fn login(
    _: Login,
    _: CsrfGuard,
    State(worker): State<Worker>,
    head: RequestHead,
    session: Session,
    csrf: Csrf,
    form: Result<Form<LoginInput>, Rejection>,
) -> Result<Result<(SessionCookies, Redirect), Reply>, SiteError> {
    if !worker.site.logins.borrow_mut().allow(head.peer.ip(), Instant::now()) {
        return Err(SiteError::Status(
            StatusCode::TOO_MANY_REQUESTS,
            "Too many login attempts from your address; wait a minute and try again.".into(),
        ));
    }
    let password = form.ok().and_then(|Form(input)| input.password).unwrap_or_default();
    if !password.is_empty() && verify(&password, &worker.site.settings.password_hash) {
        return Ok(Ok((session.start(EDITOR), Redirect::to(EditorHome))));
    }
    let page = login_page(&csrf, Some("Wrong password."));
    Ok(Err(Reply::Page(StatusCode::FORBIDDEN, csrf, page)))
}

pub(crate) async fn logout(_: Logout, _: CsrfGuard, session: Session) -> (SessionCookies, Redirect) {
    (session.end(), Redirect::to(Home { page: None }))
}

/// Whether `password` is the one `hash` was made from.
fn verify(password: &str, hash: &str) -> bool {
    PasswordHash::new(hash).is_ok_and(|hash| Argon2::default().verify_password(password.as_bytes(), &hash).is_ok())
}

fn login_page(csrf: &Csrf, error: Option<&str>) -> Fragment<Document> {
    let content = html! {
        h1 { "Editor login" }
        @if let Some(error) = error { p.error role="alert" { (error) } }
        form method="post" action=(Login) {
            input type="hidden" name=(CSRF_FIELD) value=(csrf.token());
            p {
                label for="password" { "Password" }
                input #password type="password" name="password" required autocomplete="current-password";
            }
            p { button type="submit" { "Log in" } }
        }
    };
    layout::page("Editor login", content)
}
