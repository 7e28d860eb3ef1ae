//! What the query methods of [`Db`](crate::Db) and [`Transaction`](crate::Transaction)
//! share: the kinds of call, the timeout around each, and the methods themselves,
//! written once.

use std::future::Future;
use std::time::Duration;

use crate::error::Error;

/// Bounds a call by the query timeout.
pub(crate) async fn timed<T>(timeout: Duration, call: impl Future<Output = Result<T, Error>>) -> Result<T, Error> {
    tokio::time::timeout(timeout, call).await.unwrap_or(Err(Error::Timeout))
}

/// What a writing statement returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Write {
    /// How many rows it changed.
    Execute,
    /// The new row's id.
    Insert,
}

/// The query methods of [`Db`] and [`Transaction`], written once over their
/// `fetch` and `write`.
macro_rules! queries {
    ($target:ty) => {
        impl $target {
            /// The first row, or [`Error::NotFound`] when there is none.
            pub async fn query_one<T: FromRow + Send + 'static>(
                &self,
                sql: &str,
                params: &[&dyn ToParam],
            ) -> Result<T, Error> {
                self.fetch(sql, params, Fetch::First).await?.pop().ok_or(Error::NotFound)
            }

            /// The first row, if there is one.
            pub async fn query_opt<T: FromRow + Send + 'static>(
                &self,
                sql: &str,
                params: &[&dyn ToParam],
            ) -> Result<Option<T>, Error> {
                Ok(self.fetch(sql, params, Fetch::First).await?.pop())
            }

            /// Every row.
            pub async fn query_all<T: FromRow + Send + 'static>(
                &self,
                sql: &str,
                params: &[&dyn ToParam],
            ) -> Result<Vec<T>, Error> {
                self.fetch(sql, params, Fetch::All).await
            }

            /// Runs a statement that writes; returns how many rows it changed.
            pub async fn execute(&self, sql: &str, params: &[&dyn ToParam]) -> Result<u64, Error> {
                self.write(sql, params, Write::Execute).await.map(|n| n as u64)
            }

            /// Runs an `INSERT` and returns the new row's id: the first column of its
            /// `RETURNING` clause if it has one; otherwise SQLite's `rowid`, and on
            /// PostgreSQL the `id` column (kiln adds `RETURNING id`).
            pub async fn insert(&self, sql: &str, params: &[&dyn ToParam]) -> Result<i64, Error> {
                self.write(sql, params, Write::Insert).await
            }
        }
    };
}
pub(crate) use queries;

/// How many rows a query keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fetch {
    /// The first, if any.
    First,
    /// Every one.
    All,
}
