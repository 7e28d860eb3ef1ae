//! A transaction: statements that commit together or not at all, never interleaved
//! with other requests' statements.

use std::time::Duration;

use crate::backend::WorkerBackend;
use crate::call::{Fetch, Write, queries, timed};
use crate::error::Error;
use crate::row::FromRow;
use crate::value::ToParam;

enum Held {
    #[cfg(feature = "sqlite")]
    Sqlite(crate::sqlite::Tx),
    #[cfg(feature = "postgres")]
    Postgres(crate::postgres::Tx),
}

/// The handle [`Db::transaction`](crate::Db::transaction) gives its closure; it has the query methods of
/// [`Db`](crate::Db). Dropped without a commit (the closure returned `Err`, panicked, or its
/// request was cancelled), it rolls back.
pub struct Transaction {
    held: Held,
    timeout: Duration,
}

impl std::fmt::Debug for Transaction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Transaction").finish_non_exhaustive()
    }
}

queries!(Transaction);

impl Transaction {
    pub(crate) async fn begin(backend: &WorkerBackend, timeout: Duration) -> Result<Self, Error> {
        let held = match backend {
            #[cfg(feature = "sqlite")]
            WorkerBackend::Sqlite(w) => Held::Sqlite(timed(timeout, w.begin(timeout)).await?),
            #[cfg(feature = "postgres")]
            WorkerBackend::Postgres(w) => Held::Postgres(timed(timeout, w.begin()).await?),
        };
        Ok(Transaction { held, timeout })
    }

    pub(crate) async fn commit(self) -> Result<(), Error> {
        match self.held {
            #[cfg(feature = "sqlite")]
            Held::Sqlite(tx) => timed(self.timeout, tx.commit()).await,
            #[cfg(feature = "postgres")]
            Held::Postgres(tx) => timed(self.timeout, tx.commit()).await,
        }
    }

    /// Rolls back now rather than when dropped; a failure to roll back leaves the
    /// backend to discard the transaction (SQLite's writer, PostgreSQL's connection).
    pub(crate) async fn rollback(self) {
        match self.held {
            #[cfg(feature = "sqlite")]
            Held::Sqlite(tx) => drop(tx),
            #[cfg(feature = "postgres")]
            Held::Postgres(tx) => tx.rollback(),
        }
    }

    async fn fetch<T: FromRow + Send + 'static>(
        &self,
        sql: &str,
        params: &[&dyn ToParam],
        fetch: Fetch,
    ) -> Result<Vec<T>, Error> {
        match &self.held {
            #[cfg(feature = "sqlite")]
            Held::Sqlite(tx) => timed(self.timeout, tx.query(sql, params, fetch)).await,
            #[cfg(feature = "postgres")]
            Held::Postgres(tx) => timed(self.timeout, tx.query(sql, params, fetch)).await,
        }
    }

    async fn write(&self, sql: &str, params: &[&dyn ToParam], write: Write) -> Result<i64, Error> {
        match &self.held {
            #[cfg(feature = "sqlite")]
            Held::Sqlite(tx) => timed(self.timeout, tx.write(sql, params, write)).await,
            #[cfg(feature = "postgres")]
            Held::Postgres(tx) => timed(self.timeout, tx.write(sql, params, write)).await,
        }
    }
}
