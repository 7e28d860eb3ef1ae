//! The database layer ([`kiln_db`]): embedded SQLite (cargo feature `sqlite`, the
//! default) and pipelined PostgreSQL (feature `postgres`) behind one API, with
//! [`FromRow`] derived and [`migrations!`] embedded at compile time.
//!
//! Without either feature kiln compiles no database code at all.
//!
//! ```no_run
//! use kiln::db::{Database, Db, FromRow, Options};
//! use kiln::{App, Json, Route, State};
//!
//! #[derive(FromRow, serde::Serialize)]
//! struct Post { id: i64, title: String }
//!
//! #[derive(Route)]
//! #[route("/posts/{id}")]
//! struct ShowPost { id: i64 }
//!
//! async fn show(route: ShowPost, db: State<Db>) -> Result<Json<Post>, kiln::db::Error> {
//!     // A missing row is `Error::NotFound`, answered `404`.
//!     db.query_one("SELECT id, title FROM posts WHERE id = $1", &[&route.id]).await.map(Json)
//! }
//!
//! let database = Database::open("sqlite://data/blog.sqlite", Options::default())?;
//! let app = App::new(move |_worker| database.worker()).route(show);
//! # let _ = app;
//! # Ok::<(), kiln::db::Error>(())
//! ```

pub use kiln_db::*;
pub use kiln_macros::{FromRow, migrations};

use kiln_http::StatusCode;

use crate::Rejection;
use crate::rejection::{Conflict, Internal, NotFound, Unavailable};

/// The status a database error answers with: `404` for a missing row, `409` for a
/// conflict, `503` while the database is unreachable, `500` otherwise.
pub fn status(error: &Error) -> StatusCode {
    match error {
        Error::NotFound => StatusCode::NOT_FOUND,
        Error::Conflict { .. } => StatusCode::CONFLICT,
        Error::Unavailable(_) | Error::Timeout => StatusCode::SERVICE_UNAVAILABLE,
        _ => StatusCode::INTERNAL_SERVER_ERROR,
    }
}

/// A database error as the rejection it answers with: [`NotFound`] (404),
/// [`Conflict`] (409), [`Unavailable`] (503, with `Retry-After: 1`), or [`Internal`]
/// (500), each with a short reason; so `?` works in a handler that returns
/// `Result<_, Rejection>`, and the app's [`on_rejection`](crate::App::on_rejection)
/// renders it.
///
/// The driver's message is not sent to the client (it may name tables and
/// constraints); it is logged: every `500`, and a `503` at most once per
/// [`OUTAGE_LOG_EVERY`] with a count of those not logged (an outage would otherwise
/// log every request).
///
/// ```
/// use kiln::{Rejection, Route, State};
/// use kiln::db::Db;
///
/// #[derive(Route)]
/// #[route("/posts/{id}")]
/// struct ShowPost { id: i64 }
///
/// async fn show(route: ShowPost, db: State<Db>) -> Result<String, Rejection> {
///     let (title,): (String,) = db.query_one("SELECT title FROM posts WHERE id = $1", &[&route.id]).await?;
///     Ok(title)
/// }
/// ```
///
/// [`NotFound`]: crate::rejection::NotFound
/// [`Conflict`]: crate::rejection::Conflict
/// [`Unavailable`]: crate::rejection::Unavailable
/// [`Internal`]: crate::rejection::Internal
impl From<Error> for Rejection {
    fn from(error: Error) -> Self {
        match status(&error) {
            StatusCode::NOT_FOUND => NotFound::new("not found").into(),
            StatusCode::CONFLICT => Conflict::new("conflict: the change contradicts what is stored").into(),
            StatusCode::SERVICE_UNAVAILABLE => {
                log_outage(&error);
                Unavailable::new("database unavailable, try again").into()
            }
            _ => {
                tracing::error!(target: "kiln::db", "database error, answered 500: {error}");
                Internal::new("database error").into()
            }
        }
    }
}

/// Answers as the [`Rejection`] the error converts into, rendered as the app renders
/// rejections ([`App::on_rejection`](crate::App::on_rejection); plain text without one).
impl crate::IntoResponse for Error {
    fn into_response(self, res: &mut kiln_http::Response) {
        crate::config::reject_returned(&Rejection::from(self), res);
    }
}

/// How often, at most, a `503` from the database is logged.
pub const OUTAGE_LOG_EVERY: std::time::Duration = std::time::Duration::from_secs(10);

/// Logs `error` unless another `503` was logged less than [`OUTAGE_LOG_EVERY`] ago,
/// counting the ones it leaves out. Shared by the workers: an outage is everyone's.
fn log_outage(error: &Error) {
    use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
    static LAST: AtomicU64 = AtomicU64::new(0);
    static UNLOGGED: AtomicU64 = AtomicU64::new(0);
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let last = LAST.load(Relaxed);
    let due = last == 0 || now >= last + OUTAGE_LOG_EVERY.as_secs();
    if due && LAST.compare_exchange(last, now, Relaxed, Relaxed).is_ok() {
        match UNLOGGED.swap(0, Relaxed) {
            0 => tracing::warn!(target: "kiln::db", "database unavailable, answered 503: {error}"),
            n => tracing::warn!(
                target: "kiln::db",
                "database unavailable, answered 503: {error} ({n} more 503s since the last such line)"
            ),
        }
    } else {
        UNLOGGED.fetch_add(1, Relaxed);
    }
}
