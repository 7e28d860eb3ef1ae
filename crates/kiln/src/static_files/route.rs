//! Static files as routes of an [`App`]: [`App::static_dir`] and [`App::static_file`].

use std::path::Path;

use kiln_http::{Method, Response};

use super::resolve::PathRefusal;
use super::service::{StaticDir, StaticFile, retry_after};
use crate::App;
use crate::extract::RequestContext;
use crate::handler::{Dispatch, Handler};
use crate::rejection::Rejection;

/// The catch-all capture holding the path below a folder's prefix.
const REST: &str = "path";

/// Marks the handlers below, whose arguments are not extractors.
#[doc(hidden)]
pub struct Raw;

impl<S: 'static> Handler<Raw, S> for StaticDir {
    fn start<'a>(&'a self, cx: &RequestContext<'a, S>, res: &'a mut Response) -> Dispatch<'a> {
        let rest = cx.params().get(REST).unwrap_or("");
        if let Err(refusal) = self.serve_now(&cx.request(), rest, res) {
            reject(cx, refusal, res);
        }
        Dispatch::Done
    }
}

impl<S: 'static> Handler<Raw, S> for StaticFile {
    fn start<'a>(&'a self, cx: &RequestContext<'a, S>, res: &'a mut Response) -> Dispatch<'a> {
        if let Err(refusal) = self.serve_now(&cx.request(), res) {
            reject(cx, refusal, res);
        }
        Dispatch::Done
    }
}

/// A refused path is rendered by the app's rejection renderer, as any other rejection.
fn reject<S>(cx: &RequestContext<'_, S>, refusal: PathRefusal, res: &mut Response) {
    cx.config().reject(&Rejection::custom(refusal.status(), refusal.reason()), res);
    retry_after(res, refusal);
}

impl<S: 'static> App<S> {
    /// Serves the files below the folder `root` under `prefix`: `/static/a.css` is
    /// `root/a.css`. For the defaults and the safety rules see [`StaticDir`]; use
    /// [`static_dir_with`](Self::static_dir_with) to change them.
    ///
    /// # Panics
    /// If `root` is not a folder: a configuration error, caught at start-up.
    pub fn static_dir(self, prefix: &str, root: impl AsRef<Path>) -> Self {
        let root = root.as_ref();
        let dir = StaticDir::new(root).unwrap_or_else(|e| panic!("static_dir {prefix}: {}: {e}", root.display()));
        self.static_dir_with(prefix, dir)
    }

    /// Serves `dir` under `prefix`, as configured.
    pub fn static_dir_with(self, prefix: &str, dir: StaticDir) -> Self {
        let pattern = format!("{}/{{*{REST}}}", prefix.trim_end_matches('/'));
        let name = format!("static files from {}", dir.root().display());
        // `HEAD` is answered by the `GET` handler; other methods get the app's `405`.
        self.insert(pattern, Method::GET, name, dir)
    }

    /// Serves the one file at `file` at `path` (`/favicon.ico`, `/robots.txt`).
    ///
    /// # Panics
    /// If the folder holding `file` does not exist.
    pub fn static_file(self, path: &'static str, file: impl AsRef<Path>) -> Self {
        let file = file.as_ref();
        let served = StaticFile::new(file).unwrap_or_else(|e| panic!("static_file {path}: {}: {e}", file.display()));
        let name = format!("static file {}", file.display());
        self.insert(path, Method::GET, name, served)
    }
}
