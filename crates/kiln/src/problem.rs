//! Rejections as RFC 9457 problem details (`application/problem+json`), for the path
//! prefixes an app names with [`App::problem_json`](crate::App::problem_json).
//!
//! The choice is made where a rejection is rendered. Routing's own refusals (404, 405,
//! 429) know their path, and so do the engine's refusals of a request whose head it
//! read (a body over its limit, a malformed or late body: `rewrite_refusal`). A handler's (its extractors', and a [`Rejection`] it returns)
//! render inside a scope that `problem_scope.rs` opens around each handler of an app that
//! asked, on the paths it asked for. An app that asks for none keeps its handlers
//! unwrapped and pays nothing per request.

use std::cell::RefCell;

use kiln_http::Response;
use serde_json::{Value, json};

use crate::rejection::Rejection;

/// The media type of a problem details object (RFC 9457 §3).
pub const PROBLEM_JSON: &str = "application/problem+json";

/// The path prefixes whose rejections are problem details.
#[derive(Debug, Clone, Default)]
pub(crate) struct Problems {
    prefixes: Vec<Box<str>>,
}

impl Problems {
    /// Adds `prefix`: `/api` (or `api`, or `/api/`) covers `/api` and `/api/...`, not
    /// `/apiary`; `/` covers all.
    pub(crate) fn add(&mut self, prefix: &str) {
        let prefix = format!("/{}", prefix.trim_matches('/'));
        let prefix = if prefix == "/" { "" } else { prefix.as_str() };
        if !self.prefixes.iter().any(|p| &**p == prefix) {
            self.prefixes.push(prefix.into());
        }
    }

    /// Whether some path that the route template `pattern` matches may be covered: if
    /// not, its handler is left unwrapped, and a page such as `/pong` in an app with
    /// problem details under `/api` pays nothing per request (the scope reads the path).
    pub(crate) fn may_cover(&self, pattern: &str) -> bool {
        let literal = pattern.split('{').next().unwrap_or("");
        self.prefixes.iter().any(|prefix| literal.starts_with(&**prefix) || prefix.starts_with(literal))
    }

    /// Whether a request for `path` gets problem details.
    pub(crate) fn covers(&self, path: &str) -> bool {
        self.prefixes.iter().any(|prefix| match path.strip_prefix(&**prefix) {
            Some(rest) => rest.is_empty() || rest.starts_with('/'),
            None => false,
        })
    }

    /// Whether an operation on the path template `template` gets problem details:
    /// whether the paths it matches are covered.
    #[cfg(feature = "openapi")]
    pub(crate) fn covers_template(&self, template: &str) -> bool {
        let literal = template.split('{').next().unwrap_or("");
        self.covers(literal) || self.covers(literal.trim_end_matches('/'))
    }
}

thread_local! {
    /// The path of the request whose handler is being run inside a problem scope. A
    /// worker polls one future at a time, so the scope is opened around each poll.
    static SCOPE: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Renders `rejection` as problem details if the current handler runs in a problem
/// scope; returns `false`, leaving `res` untouched, if not.
pub(crate) fn render_in_scope(rejection: &Rejection, res: &mut Response) -> bool {
    SCOPE.with_borrow(|scope| match scope {
        Some(path) => {
            render(rejection, Some(path), res);
            true
        }
        None => false,
    })
}

/// Fills `res` with `rejection` as a problem details object: `type`, `title`,
/// `status`, `detail`, `instance` (the request's path), and for an invalid input the
/// `errors` extension, one `{ pointer, path, detail }` per field (RFC 9457 §3.2).
pub(crate) fn render(rejection: &Rejection, instance: Option<&str>, res: &mut Response) {
    let status = rejection.status();
    // RFC 9457 §4.2.1: `about:blank` says the status alone says what went wrong, and
    // its title is the status's phrase.
    let mut problem = json!({
        "type": "about:blank",
        "title": status.canonical_reason().unwrap_or("Error"),
        "status": status.as_u16(),
        "detail": rejection.to_string(),
    });
    if let Some(instance) = instance {
        problem["instance"] = instance.into();
    }
    if let Rejection::InvalidInput(invalid) = rejection {
        let errors: Vec<Value> = invalid
            .fields()
            .iter()
            .map(|f| json!({ "pointer": f.pointer(), "path": f.path(), "detail": f.message() }))
            .collect();
        problem["detail"] = format!("{} invalid field(s)", errors.len()).into();
        problem["errors"] = errors.into();
    }
    res.set_status(status);
    res.set_content_type(PROBLEM_JSON);
    let _ = serde_json::to_writer(res.body_mut(), &problem);
}

/// Rewrites the engine's own plain-text refusal in `res` (`kiln_http::Service::refused`)
/// as problem details for `path`: the same status and headers (a `503`'s `Retry-After`),
/// its text as the `detail`.
pub(crate) fn rewrite_refusal(path: &str, res: &mut Response) {
    let detail = res.body_bytes().map(|text| String::from_utf8_lossy(text).trim_end().to_owned());
    res.remove_header("content-type");
    res.body_mut().clear();
    render(&Rejection::custom(res.status(), detail.unwrap_or_default()), Some(path), res);
}

/// Opens a problem scope while `f` runs, for the request for `path`.
pub(crate) fn scoped<R>(path: &str, f: impl FnOnce() -> R) -> R {
    /// Restores the scope around, even if `f` unwinds.
    struct Restore(Option<String>);

    impl Drop for Restore {
        fn drop(&mut self) {
            let outer = self.0.take();
            SCOPE.with_borrow_mut(|scope| *scope = outer);
        }
    }

    let _restore = Restore(SCOPE.with_borrow_mut(|scope| scope.replace(path.to_owned())));
    f()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Regression (this session's instruction count): every handler of an app with a
    /// problem prefix was wrapped, so `/pong` read its path once more per request.
    #[test]
    fn a_route_that_no_covered_path_matches_is_not_wrapped() {
        let mut problems = Problems::default();
        problems.add("/api");
        assert!(!problems.may_cover("/pong"));
        assert!(!problems.may_cover("/pages/{slug}"));
        assert!(problems.may_cover("/api/pages/{slug}"));
        assert!(problems.may_cover("/api"));
        // A template that may match a covered path stays wrapped; the path decides.
        assert!(problems.may_cover("/{page}"));
        assert!(problems.may_cover("/apiary"));
        let mut everything = Problems::default();
        everything.add("/");
        assert!(everything.may_cover("/pong"));
    }

    #[test]
    fn a_prefix_covers_its_own_segments_only() {
        let mut problems = Problems::default();
        problems.add("api/");
        assert!(problems.covers("/api"));
        assert!(problems.covers("/api/pages/1"));
        assert!(!problems.covers("/apiary"));
        assert!(!problems.covers("/pages"));
        problems.add("/");
        assert!(problems.covers("/pages"));
    }
}
