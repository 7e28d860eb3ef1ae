//! The one error a database call can end in, one variant per thing a handler may
//! want to answer differently.

use std::fmt;

/// Why a database call failed.
///
/// A handler usually passes it on with `?`; kiln answers `404` for
/// [`NotFound`](Self::NotFound), `409` for a [`Conflict`](Self::Conflict), `503` for
/// [`Unavailable`](Self::Unavailable) and [`Timeout`](Self::Timeout) (the layer
/// reconnects in the background) and `500` for the rest. The driver's own message is
/// kept for the log.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// `query_one` found no row.
    NotFound,
    /// A constraint refused a write: a duplicate key or a missing referenced row.
    Conflict {
        /// Which kind of constraint.
        kind: ConflictKind,
        /// The driver's message, naming the constraint or the columns.
        message: String,
    },
    /// The call did not finish within the query timeout, or the server cancelled the
    /// statement (`statement_timeout`).
    Timeout,
    /// The database cannot be reached now: the server went away, a reconnect is
    /// pending, or the queue in front of it is full.
    Unavailable(String),
    /// A column could not be decoded into the type asked for.
    Decode {
        /// The column's name (or `#index` when read by position).
        column: String,
        /// What was wrong.
        message: String,
    },
    /// A parameter could not be bound.
    Param {
        /// Its number, as in `$1`.
        index: usize,
        /// What was wrong.
        message: String,
    },
    /// The database refused the statement (a syntax error, a missing table, ...).
    Query {
        /// The SQLSTATE (PostgreSQL) or the extended result code (SQLite), when known.
        code: Option<String>,
        /// The driver's message.
        message: String,
    },
    /// The database could not be opened: a bad URL, a file that cannot be created,
    /// a failed authentication.
    Open(String),
    /// The migrations could not be applied, or the database does not match them.
    Migration(String),
    /// The call would wait for itself: a write through [`Db`](crate::Db) from the
    /// request whose own transaction holds SQLite's one writer. The transaction's
    /// handle is the way to write inside it.
    WaitsForItself,
}

/// Which constraint refused a write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ConflictKind {
    /// A unique or primary-key constraint: the row exists already.
    Unique,
    /// A foreign-key constraint: a referenced row is missing, or is still referenced.
    ForeignKey,
}

impl Error {
    /// Whether the database is unreachable for now (a retry later may succeed).
    pub fn is_unavailable(&self) -> bool {
        matches!(self, Error::Unavailable(_) | Error::Timeout)
    }

    /// Whether a unique or primary-key constraint refused the write.
    pub fn is_unique_violation(&self) -> bool {
        matches!(self, Error::Conflict { kind: ConflictKind::Unique, .. })
    }

    /// Whether a foreign-key constraint refused the write.
    pub fn is_foreign_key_violation(&self) -> bool {
        matches!(self, Error::Conflict { kind: ConflictKind::ForeignKey, .. })
    }

    /// A decoding error for `column`.
    pub(crate) fn decode(column: &str, message: impl Into<String>) -> Error {
        Error::Decode { column: column.to_owned(), message: message.into() }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::NotFound => f.write_str("no such row"),
            Error::Conflict { kind: ConflictKind::Unique, message } => write!(f, "already exists: {message}"),
            Error::Conflict { kind: ConflictKind::ForeignKey, message } => {
                write!(f, "a referenced row is missing or still referenced: {message}")
            }
            Error::Timeout => f.write_str("database unavailable: the query timed out"),
            Error::Unavailable(why) => write!(f, "database unavailable: {why}"),
            Error::Decode { column, message } => write!(f, "cannot decode column `{column}`: {message}"),
            Error::Param { index, message } => write!(f, "cannot bind parameter ${index}: {message}"),
            Error::Query { code: Some(code), message } => write!(f, "database error: {message} ({code})"),
            Error::Query { code: None, message } => write!(f, "database error: {message}"),
            Error::Open(why) => write!(f, "cannot open the database: {why}"),
            Error::Migration(why) => write!(f, "migrations: {why}"),
            Error::WaitsForItself => f.write_str(
                "a write through `Db` inside this request's own transaction would wait for it for ever \
                 (SQLite has one writer, and the transaction holds it): write through the transaction's handle",
            ),
        }
    }
}

impl std::error::Error for Error {}

/// The conventional result of a database call.
pub type Result<T, E = Error> = std::result::Result<T, E>;
