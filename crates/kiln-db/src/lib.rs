//! kiln's database layer: one API over embedded SQLite and pipelined PostgreSQL,
//! awaited without ever blocking a worker. Used through `kiln::db`.
//!
//! - **Open once, a handle per worker**: [`Database::open`] takes `sqlite://PATH`
//!   or `postgres://...` and applies the app's [`Migration`]s; [`Database::worker`]
//!   gives each worker its [`Db`].
//! - **Statements with `$1` placeholders on both backends**, prepared once per
//!   connection; parameters of any [`ToParam`] type; rows decoded into the app's
//!   types through [`FromRow`] (derived, by column name), with an error naming the
//!   column that did not fit.
//! - [`query_one`](Db::query_one), [`query_opt`](Db::query_opt),
//!   [`query_all`](Db::query_all), [`execute`](Db::execute), [`insert`](Db::insert)
//!   and [`transaction`](Db::transaction) (committed on `Ok`, rolled back on `Err`,
//!   panic or cancellation, never interleaved with other requests' statements).
//! - **Typed errors** ([`Error`]): not found, unique and foreign-key conflicts,
//!   timeout, unavailable, with the driver's message kept for the log.
//! - **SQLite** (feature `sqlite`, the default): one writer thread and a few reader
//!   threads, WAL, `synchronous=NORMAL`, a busy timeout, bounded queues.
//! - **PostgreSQL** (feature `postgres`): one pipelined connection per worker (reads
//!   queued in one turn share a `Sync`), reconnection with backoff,
//!   `statement_timeout`, TLS with rustls (`sslmode=require`).
//! - **Escape hatches**: `Db::sqlite` runs a closure on the native
//!   `rusqlite::Connection`; `Db::postgres` hands out a `tokio-postgres` client. The
//!   drivers are re-exported, so an app never pins their versions.
//!
//! The [`guide`] says how each backend behaves: commits, retries, queues, limits.
//!
//! ```no_run
//! use kiln_db::{Database, Db, Error, FromRow, Migration, Options, Row};
//!
//! static MIGRATIONS: &[Migration] =
//!     &[Migration::new(1, "users", "CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE)")];
//!
//! struct User { id: i64, name: String }
//! impl FromRow for User {
//!     fn from_row(row: &Row<'_>) -> Result<Self, Error> {
//!         Ok(User { id: row.get("id")?, name: row.get("name")? })
//!     }
//! }
//!
//! async fn rename(db: &Db, id: i64, name: &str) -> Result<User, Error> {
//!     db.execute("UPDATE users SET name = $2 WHERE id = $1", &[&id, &name]).await?;
//!     db.query_one("SELECT id, name FROM users WHERE id = $1", &[&id]).await
//! }
//!
//! let database = Database::open("sqlite://data/app.sqlite", Options::default().migrations(MIGRATIONS))?;
//! # let _ = (database, rename);
//! # Ok::<(), Error>(())
//! ```

/// The guide: opening, statements, transactions, errors, and how each backend
/// behaves (`docs/database.md`).
#[doc = include_str!("../../../docs/database.md")]
pub mod guide {}

mod backend;
mod call;
mod database;
#[cfg(any(feature = "chrono", feature = "time"))]
mod dates;
mod error;
mod migrate;
mod options;
#[cfg(feature = "postgres")]
mod postgres;
mod row;
#[cfg(feature = "sqlite")]
mod sqlite;
mod transaction;
mod value;

pub use database::{Database, Db};
pub use error::{ConflictKind, Error, Result};
pub use migrate::Migration;
pub use options::{Backend, CONNECT_TIMEOUT, Options, QUERY_TIMEOUT};
#[cfg(feature = "postgres")]
pub use postgres::{Notice, Notifier};
pub use row::{FromRow, Row};
pub use transaction::Transaction;
pub use value::{FromValue, ToParam, Value};

#[cfg(feature = "chrono")]
pub use chrono;
#[cfg(feature = "sqlite")]
pub use rusqlite;
#[cfg(feature = "time")]
pub use time;
#[cfg(feature = "postgres")]
pub use tokio_postgres;
