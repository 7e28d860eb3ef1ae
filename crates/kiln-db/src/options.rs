//! How a database is opened: [`Options`], and which [`Backend`] it is.

use std::time::Duration;

use crate::migrate::Migration;

/// Longest a database call may take before it fails with [`Error::Timeout`](crate::Error::Timeout).
pub const QUERY_TIMEOUT: Duration = Duration::from_secs(5);
/// Longest a PostgreSQL connection attempt may take. As long as a query may wait: on a
/// loaded host, a new process's first connections (a hand-over under load) took over
/// 2 s, and each one given up on is a request answered 503.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// Settings for [`Database::open`](crate::Database::open); [`Default`] gives the documented defaults.
#[derive(Debug, Clone)]
pub struct Options {
    /// SQLite: reader threads, each with its own connection, beside the one writer
    /// (default: the number of cores, 2 to 4).
    pub sqlite_readers: usize,
    /// PostgreSQL: pipelined connections each worker opens for single statements (default 1).
    pub pg_connections: usize,
    /// PostgreSQL: connections each worker may open for transactions, one
    /// transaction on each at a time (default 4, opened on first use).
    pub pg_transaction_connections: usize,
    /// Longest a call may take before it fails with [`Error::Timeout`](crate::Error::Timeout).
    pub query_timeout: Duration,
    /// Longest a PostgreSQL connection attempt may take.
    pub connect_timeout: Duration,
    /// PostgreSQL's `statement_timeout`: the server cancels a statement running
    /// longer (default: none, the server's own setting).
    pub statement_timeout: Option<Duration>,
    /// The app's schema, applied in order at start-up (see [`Migration`](crate::Migration)).
    pub migrations: &'static [Migration],
}

impl Default for Options {
    fn default() -> Self {
        Options {
            sqlite_readers: std::thread::available_parallelism().map_or(2, |n| n.get().clamp(2, 4)),
            pg_connections: 1,
            pg_transaction_connections: 4,
            query_timeout: QUERY_TIMEOUT,
            connect_timeout: CONNECT_TIMEOUT,
            statement_timeout: None,
            migrations: &[],
        }
    }
}

impl Options {
    /// The same options with these migrations.
    pub fn migrations(mut self, migrations: &'static [Migration]) -> Self {
        self.migrations = migrations;
        self
    }
}

/// Which database a [`Database`](crate::Database) talks to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Backend {
    /// Embedded SQLite.
    Sqlite,
    /// A PostgreSQL server.
    Postgres,
}
