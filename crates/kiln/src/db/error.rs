//! The one error a database call can end in, bound to the status it answers with.

use std::fmt;

use kiln_http::StatusCode;

/// Why a database call failed.
///
/// [`status`](Self::status) says how to answer: `503 Service Unavailable` while the
/// database cannot be reached (the layer reconnects in the background), `500` for
/// anything else.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DbError {
    /// The database cannot be reached now: the server went away, a reconnect is
    /// pending, or the queue in front of it is full.
    Unavailable(String),
    /// The call did not finish within the configured query timeout.
    Timeout,
    /// The database answered with an error.
    Query(String),
    /// The database could not be opened or prepared at start-up.
    Open(String),
}

impl DbError {
    /// The status a handler should answer with.
    pub fn status(&self) -> StatusCode {
        match self {
            DbError::Unavailable(_) | DbError::Timeout => StatusCode::SERVICE_UNAVAILABLE,
            DbError::Query(_) | DbError::Open(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    /// Whether the database is unreachable for now (a retry later may succeed).
    pub fn is_unavailable(&self) -> bool {
        matches!(self, DbError::Unavailable(_) | DbError::Timeout)
    }
}

impl fmt::Display for DbError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DbError::Unavailable(why) => write!(f, "database unavailable: {why}"),
            DbError::Timeout => f.write_str("database unavailable: the query timed out"),
            DbError::Query(why) => write!(f, "database error: {why}"),
            DbError::Open(why) => write!(f, "cannot open the database: {why}"),
        }
    }
}

impl std::error::Error for DbError {}

impl From<rusqlite::Error> for DbError {
    fn from(e: rusqlite::Error) -> Self {
        DbError::Query(e.to_string())
    }
}

/// Answers with the error's status and its message as plain text, so a client
/// sees why (`503 database unavailable: ...`) rather than an empty page.
impl crate::IntoResponse for DbError {
    fn into_response(self, res: &mut kiln_http::Response) {
        use std::io::Write;
        res.set_status(self.status());
        res.set_content_type("text/plain; charset=utf-8");
        let _ = writeln!(res.body_mut(), "{self}");
    }
}
