//! Errors as pages of the site: the app's own failures ([`SiteError`]) and the
//! framework's refusals ([`render_rejection`], given to `App::on_rejection`) share
//! one page in the site's layout, with the status that says what happened.

use std::borrow::Cow;

use kiln::markup::{Document, Fragment};
use kiln::rejection::Rejection;
use kiln::{IntoResponse, Response, StatusCode, html};

use super::layout;
use super::routes::Home;

/// Why a request of the site failed, once its handler ran.
#[derive(Debug)]
pub(crate) enum SiteError {
    /// A status and what to tell the visitor.
    Status(StatusCode, Cow<'static, str>),
    /// The database refused or did not answer.
    Db(kiln::db::Error),
}

impl SiteError {
    pub(crate) fn not_found() -> Self {
        SiteError::Status(StatusCode::NOT_FOUND, "There is no page here.".into())
    }

    pub(crate) fn bad_request(message: impl Into<Cow<'static, str>>) -> Self {
        SiteError::Status(StatusCode::BAD_REQUEST, message.into())
    }
}

impl From<kiln::db::Error> for SiteError {
    fn from(e: kiln::db::Error) -> Self {
        match e {
            kiln::db::Error::NotFound => SiteError::not_found(),
            e => SiteError::Db(e),
        }
    }
}

impl IntoResponse for SiteError {
    fn into_response(self, res: &mut Response) {
        let (status, message) = match self {
            SiteError::Status(status, message) => (status, message),
            SiteError::Db(e) => {
                let status = kiln::db::status(&e);
                if status == StatusCode::INTERNAL_SERVER_ERROR {
                    // The driver's message names tables and constraints: for the log only.
                    eprintln!("kiln-demo: {e}");
                }
                (status, Cow::Borrowed(""))
            }
        };
        write_page(status, &message, res);
    }
}

/// The framework's refusals (no route, wrong method, a bad query, a missing CSRF
/// token, a static file's refusal) as pages of the site.
pub(crate) fn render_rejection(rejection: &Rejection, res: &mut Response) {
    let status = rejection.status();
    // A 500's message is about how the app is wired: for the log, not the visitor.
    let message = if status.is_server_error() {
        eprintln!("kiln-demo: {rejection}");
        String::new()
    } else {
        rejection.to_string()
    };
    write_page(status, &message, res);
}

fn write_page(status: StatusCode, message: &str, res: &mut Response) {
    error_page(status, message).into_response(res);
    res.set_status(status);
    if status == StatusCode::SERVICE_UNAVAILABLE && !res.has_header("retry-after") {
        res.append_header_unchecked(b"Retry-After", b"1");
    }
}

/// The page for `status`, with `message` or the status's own explanation.
pub(crate) fn error_page(status: StatusCode, message: &str) -> Fragment<Document> {
    let title = status.canonical_reason().unwrap_or("Error");
    let explanation = match status.as_u16() {
        404 => "There is no page here.",
        405 => "This address does not take that method.",
        422 => "What was sent does not fit.",
        429 => "Too many requests from your address; wait a minute and try again.",
        500 => "Something went wrong on our side. Sorry.",
        503 => "The site cannot reach its database just now; try again in a moment.",
        _ => "The request was refused.",
    };
    let message = if message.is_empty() { explanation } else { message };
    let content = html! {
        h1 { (status.as_u16()) " " (title) }
        p.error { (message) }
        p { a href=(Home { page: None }) { "Back to the pages" } }
    };
    layout::page(title, content)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn database_errors_are_pages_with_their_status() {
        let cases = [
            (kiln::db::Error::NotFound, 404),
            (kiln::db::Error::Timeout, 503),
            (kiln::db::Error::Unavailable("gone".into()), 503),
        ];
        for (error, status) in cases {
            let mut res = Response::new();
            SiteError::from(error).into_response(&mut res);
            assert_eq!(res.status().as_u16(), status);
            let body = String::from_utf8(res.body_mut().clone()).unwrap();
            assert!(body.starts_with("<!DOCTYPE html>") && body.contains("kiln wiki"), "{body}");
            assert!(!body.contains("gone"), "the driver's message stays out of the page: {body}");
        }
    }

    #[test]
    fn a_server_error_page_says_sorry_not_why() {
        let mut res = Response::new();
        SiteError::Status(StatusCode::INTERNAL_SERVER_ERROR, Cow::Borrowed("")).into_response(&mut res);
        assert_eq!(res.status(), 500);
        let body = String::from_utf8(res.body_mut().clone()).unwrap();
        assert!(body.contains("<h1>500 Internal Server Error</h1>") && body.contains("Sorry"), "{body}");
    }
}
