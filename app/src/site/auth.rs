//! The editor's login and logout: one password, whose Argon2 hash the server was
//! given at start; a signed, `HttpOnly`, `SameSite` session cookie, which a logout
//! ends for good (the database keeps when, since the cookie itself stays valid until
//! it expires).

use std::time::{SystemTime, UNIX_EPOCH};

use argon2::Argon2;
use argon2::password_hash::{PasswordHash, PasswordVerifier};
use kiln::db::Db;
use kiln::markup::{Document, Fragment};
use kiln::rejection::Rejection;
use kiln::{CSRF_FIELD, Csrf, CsrfGuard, Form, Redirect, Session, SessionCookies, State, StatusCode, html};
use serde::Deserialize;

use super::errors::SiteError;
use super::layout;
use super::model;
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
    session: Session,
    csrf: Csrf,
    form: Result<Form<LoginInput>, Rejection>,
) -> Result<Result<(SessionCookies, Redirect), Reply>, SiteError> {
    // Past the attempts a client may make, the app's rate limit answered 429 before
    // this ran (`Settings::apply`).
    let input = match form {
        Ok(Form(input)) => input,
        // A body that is not the login form (another `Content-Type`, too large) says
        // so with its own status: "Wrong password." would send the editor to retype a
        // password that may be right.
        Err(rejection) => {
            let page = login_page(&csrf, Some(&rejection.to_string()));
            return Ok(Err(Reply::Page(rejection.status(), csrf, page)));
        }
    };
    let password = input.password.unwrap_or_default();
    // Argon2 takes a fraction of a second by design: on the pool, not on the worker
    // that serves every other connection.
    let hash = worker.site.settings.password_hash.clone();
    let right = !password.is_empty()
        && kiln::blocking(move || verify(&password, &hash))
            .await
            .map_err(|busy| SiteError::Status(StatusCode::SERVICE_UNAVAILABLE, busy.to_string().into()))?;
    if right {
        return Ok(Ok((session.start(EDITOR), Redirect::to(EditorHome))));
    }
    let page = login_page(&csrf, Some("Wrong password."));
    Ok(Err(Reply::Page(StatusCode::FORBIDDEN, csrf, page)))
}

pub(crate) async fn logout(
    _: Logout,
    _: CsrfGuard,
    State(worker): State<Worker>,
    session: Session,
) -> Result<(SessionCookies, Redirect), SiteError> {
    // Only the editor's own session ends the editor's sessions: any visitor holds a
    // CSRF token, and could otherwise log the editor out at will.
    if is_editor(&worker.db, &session).await? {
        model::end_sessions(&worker.db, unix_millis(SystemTime::now())).await?;
    }
    Ok((session.end(), Redirect::to(Home { page: None })))
}

/// Whether `session` is the editor's, and no logout has ended it since it started.
/// Without a session cookie the database is not asked.
pub(crate) async fn is_editor(db: &Db, session: &Session) -> Result<bool, kiln::db::Error> {
    let started = match (session.user(), session.started()) {
        (Some(EDITOR), Some(started)) => unix_millis(started),
        _ => return Ok(false),
    };
    Ok(outlives(started, model::sessions_ended(db).await?))
}

/// Whether a session that started in the Unix millisecond `started` outlives a logout
/// in the millisecond `logout`: it does when it started in that millisecond or later.
///
/// A cookie knows when its session started to the millisecond, so within the
/// millisecond of a logout, a session started before it and one started after it look
/// the same. Both are kept, so that logging in again straight after a logout works;
/// what this leaves open is a session logged into and out of within one millisecond.
fn outlives(started: i64, logout: i64) -> bool {
    started >= logout
}

fn unix_millis(at: SystemTime) -> i64 {
    at.duration_since(UNIX_EPOCH).map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// Whether `password` is the one `hash` was made from.
pub(crate) fn verify(password: &str, hash: &str) -> bool {
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

#[cfg(test)]
mod tests {
    use super::outlives;

    #[test]
    fn a_logout_ends_earlier_sessions_and_lets_the_next_login_in_at_once() {
        // Logged out in the millisecond 105: sessions from before are over.
        assert!(!outlives(100, 105) && !outlives(104, 105));
        // A login again in the same millisecond, or later, is a session.
        assert!(outlives(105, 105) && outlives(106, 105));
    }
}
