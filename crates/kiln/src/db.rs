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

/// Answers with [`status`] and a short plain-text reason. The driver's message is
/// not sent to the client (it may name tables and constraints); a `500` is logged
/// to standard error with it (a `503` is not: an outage would log every request).
impl crate::IntoResponse for Error {
    fn into_response(self, res: &mut kiln_http::Response) {
        use std::io::Write;
        let status = status(&self);
        if status == StatusCode::INTERNAL_SERVER_ERROR {
            eprintln!("kiln: {self}");
        }
        res.set_status(status);
        res.set_content_type("text/plain; charset=utf-8");
        let reason = match &self {
            Error::NotFound => "not found",
            Error::Conflict { .. } => "conflict: the change contradicts what is stored",
            Error::Unavailable(_) | Error::Timeout => "database unavailable, try again",
            _ => "database error",
        };
        let _ = writeln!(res.body_mut(), "{reason}");
    }
}
