//! The database a process opens once, and the handle each worker builds from it.

use std::time::Duration;

use crate::backend::WorkerBackend;
use crate::call::{Fetch, Write, queries, timed};
use crate::error::Error;
use crate::options::{Backend, Options};
use crate::row::FromRow;
use crate::transaction::Transaction;
use crate::value::ToParam;

#[derive(Clone)]
enum Opened {
    #[cfg(feature = "sqlite")]
    Sqlite(crate::sqlite::Pool),
    #[cfg(feature = "postgres")]
    Postgres(std::sync::Arc<crate::postgres::Settings>),
}

/// A database, opened once per process and shared by every worker; each worker
/// makes its own [`Db`] from it with [`worker`](Self::worker).
///
/// ```no_run
/// use kiln_db::{Database, Options};
/// let db = Database::open("sqlite://data/app.sqlite", Options::default())?;
/// // In each worker's state factory:
/// let handle = db.worker();
/// # let _ = handle;
/// # Ok::<(), kiln_db::Error>(())
/// ```
#[derive(Clone)]
pub struct Database {
    opened: Opened,
    options: Options,
}

impl std::fmt::Debug for Database {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Database").field("backend", &self.backend()).field("options", &self.options).finish()
    }
}

impl Database {
    /// Opens `sqlite://PATH` (the file is created if missing; a relative `PATH` is
    /// relative to the working directory) or `postgres://USER:PASS@HOST:PORT/DB`
    /// (`?sslmode=require` for TLS, `&sslrootcert=PATH` to verify the server), then
    /// applies the pending [`migrations`](Options::migrations).
    ///
    /// Opening creates no table but the migrations' own and, when there are
    /// migrations, the `kiln_migrations` table that records them. A database that
    /// cannot be migrated (a changed migration, or one newer than this binary)
    /// refuses to open with [`Error::Migration`].
    pub fn open(url: &str, options: Options) -> Result<Self, Error> {
        let opened = if let Some(path) = url.strip_prefix("sqlite://") {
            Self::open_sqlite(path, &options)?
        } else if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            Self::open_postgres(url, &options)?
        } else {
            return Err(Error::Open(format!("unknown database URL {url:?}: use sqlite://PATH or postgres://...")));
        };
        Ok(Database { opened, options })
    }

    #[cfg(feature = "sqlite")]
    fn open_sqlite(path: &str, options: &Options) -> Result<Opened, Error> {
        if path.is_empty() {
            return Err(Error::Open("sqlite:// needs a path, as in sqlite://data/app.sqlite".into()));
        }
        // SQLite would give each connection a database of its own, so the readers would
        // never see the writer's rows (and WAL needs a file).
        if path == ":memory:" || path.starts_with("file::memory:") || path.contains("mode=memory") {
            return Err(Error::Open(format!(
                "sqlite://{path}: kiln's writer and reader threads need one database file, and an \
                 in-memory database is one per connection; give a file path (a test can use a \
                 temporary directory's)"
            )));
        }
        crate::sqlite::Pool::open(std::path::Path::new(path), options).map(Opened::Sqlite)
    }

    #[cfg(not(feature = "sqlite"))]
    fn open_sqlite(_: &str, _: &Options) -> Result<Opened, Error> {
        Err(Error::Open("this binary was built without SQLite (cargo feature `sqlite`)".into()))
    }

    #[cfg(feature = "postgres")]
    fn open_postgres(url: &str, options: &Options) -> Result<Opened, Error> {
        crate::postgres::Settings::open(url, options).map(|s| Opened::Postgres(std::sync::Arc::new(s)))
    }

    #[cfg(not(feature = "postgres"))]
    fn open_postgres(_: &str, _: &Options) -> Result<Opened, Error> {
        Err(Error::Open("this binary was built without PostgreSQL (cargo feature `postgres`)".into()))
    }

    /// Calls waiting now, over every worker: for SQLite, calls queued for its threads;
    /// for PostgreSQL, calls in flight or waiting on the workers' connections (each
    /// worker counts its own, so the count costs the request path no shared write).
    /// Always `Some`; an `Option` so that a backend without a queue can say so.
    pub fn queued_calls(&self) -> Option<usize> {
        match &self.opened {
            #[cfg(feature = "sqlite")]
            Opened::Sqlite(pool) => Some(pool.queued_calls()),
            #[cfg(feature = "postgres")]
            Opened::Postgres(settings) => Some(settings.queued_calls()),
        }
    }

    /// Which database this is.
    pub fn backend(&self) -> Backend {
        match self.opened {
            #[cfg(feature = "sqlite")]
            Opened::Sqlite(_) => Backend::Sqlite,
            #[cfg(feature = "postgres")]
            Opened::Postgres(_) => Backend::Postgres,
        }
    }

    /// Starts this process's link to PostgreSQL `LISTEN`/`NOTIFY` on `channel`: one
    /// dedicated connection that reconnects and listens again with backoff, and
    /// calls `deliver` with every notification, on a thread of its own. A message
    /// bus across processes is built on it; SQLite has none (`Error::Open`).
    ///
    /// It creates, if missing, a sequence `{channel}_ids` (the notifications' ids)
    /// and a table `{channel}_payloads` (payloads too large for `NOTIFY`, kept ten
    /// minutes); [`notifier_with_table`](Self::notifier_with_table) names the table.
    #[cfg(feature = "postgres")]
    pub fn notifier(
        &self,
        channel: &str,
        deliver: impl FnMut(crate::Notice) + Send + 'static,
    ) -> Result<crate::Notifier, Error> {
        self.start_notifier(channel, None, deliver)
    }

    /// [`notifier`](Self::notifier) with the payload table named `table` (a lower-case
    /// SQL identifier, optionally `schema.table`; `Error::Open` otherwise) and its
    /// sequence `{table}_ids`.
    #[cfg(feature = "postgres")]
    pub fn notifier_with_table(
        &self,
        channel: &str,
        table: &str,
        deliver: impl FnMut(crate::Notice) + Send + 'static,
    ) -> Result<crate::Notifier, Error> {
        self.start_notifier(channel, Some(table), deliver)
    }

    #[cfg(feature = "postgres")]
    fn start_notifier(
        &self,
        channel: &str,
        table: Option<&str>,
        deliver: impl FnMut(crate::Notice) + Send + 'static,
    ) -> Result<crate::Notifier, Error> {
        match &self.opened {
            Opened::Postgres(settings) => {
                crate::Notifier::start(std::sync::Arc::clone(settings), channel, table, deliver)
            }
            #[allow(unreachable_patterns)]
            _ => Err(Error::Open("notifications across processes need PostgreSQL".into())),
        }
    }

    /// The handle one worker uses; make it on that worker's thread (in the app's
    /// per-worker state factory).
    pub fn worker(&self) -> Db {
        let backend = match &self.opened {
            #[cfg(feature = "sqlite")]
            Opened::Sqlite(pool) => WorkerBackend::Sqlite(crate::sqlite::Worker::new(pool.clone())),
            #[cfg(feature = "postgres")]
            Opened::Postgres(settings) => {
                WorkerBackend::Postgres(crate::postgres::Worker::new(std::sync::Arc::clone(settings)))
            }
        };
        Db { backend, timeout: self.options.query_timeout }
    }
}

/// One worker's database handle: its own connections (PostgreSQL) or its way to the
/// database threads (SQLite). It is `!Send` and needs no lock; keep it in the
/// worker's state.
///
/// Statements use `$1`, `$2`, ... placeholders on both backends and are prepared
/// once per connection. Every call ends within the query timeout; a database that
/// cannot be reached gives [`Error::Unavailable`] or [`Error::Timeout`].
///
/// ```no_run
/// # async fn demo(db: &kiln_db::Db) -> Result<(), kiln_db::Error> {
/// let (count,): (i64,) = db.query_one("SELECT count(*) FROM users WHERE name = $1", &[&"ada"]).await?;
/// let id = db.insert("INSERT INTO users (name) VALUES ($1)", &[&"grace"]).await?;
/// let changed = db.execute("UPDATE users SET name = $2 WHERE id = $1", &[&id, &"Grace"]).await?;
/// # let _ = (count, changed); Ok(()) }
/// ```
pub struct Db {
    pub(crate) backend: WorkerBackend,
    pub(crate) timeout: Duration,
}

impl std::fmt::Debug for Db {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Db").field("timeout", &self.timeout).finish_non_exhaustive()
    }
}

queries!(Db);

impl Db {
    /// Which database this is.
    pub fn backend(&self) -> Backend {
        match self.backend {
            #[cfg(feature = "sqlite")]
            WorkerBackend::Sqlite(_) => Backend::Sqlite,
            #[cfg(feature = "postgres")]
            WorkerBackend::Postgres(_) => Backend::Postgres,
        }
    }

    async fn fetch<T: FromRow + Send + 'static>(
        &self,
        sql: &str,
        params: &[&dyn ToParam],
        fetch: Fetch,
    ) -> Result<Vec<T>, Error> {
        match &self.backend {
            #[cfg(feature = "sqlite")]
            WorkerBackend::Sqlite(db) => timed(self.timeout, db.query(sql, params, fetch)).await,
            #[cfg(feature = "postgres")]
            WorkerBackend::Postgres(db) => timed(self.timeout, db.query(sql, params, fetch)).await,
        }
    }

    async fn write(&self, sql: &str, params: &[&dyn ToParam], write: Write) -> Result<i64, Error> {
        match &self.backend {
            #[cfg(feature = "sqlite")]
            WorkerBackend::Sqlite(db) => timed(self.timeout, db.write(sql, params, write)).await,
            #[cfg(feature = "postgres")]
            WorkerBackend::Postgres(db) => timed(self.timeout, db.write(sql, params, write)).await,
        }
    }

    /// Runs `f` in a transaction: committed if it returns `Ok`, rolled back if it
    /// returns `Err`, panics, or is dropped (a cancelled request). Its statements
    /// never interleave with other requests': on SQLite it holds the one writer, on
    /// PostgreSQL a connection of its own.
    ///
    /// ```no_run
    /// # async fn demo(db: &kiln_db::Db) -> Result<(), kiln_db::Error> {
    /// let id = db
    ///     .transaction(async |tx| {
    ///         let id = tx.insert("INSERT INTO posts (title) VALUES ($1)", &[&"hello"]).await?;
    ///         tx.execute("UPDATE users SET posts = posts + 1 WHERE id = $1", &[&1]).await?;
    ///         Ok::<_, kiln_db::Error>(id)
    ///     })
    ///     .await?;
    /// # let _ = id; Ok(()) }
    /// ```
    pub async fn transaction<T, E, F>(&self, f: F) -> Result<T, E>
    where
        F: AsyncFnOnce(&Transaction) -> Result<T, E>,
        E: From<Error>,
    {
        let tx = Transaction::begin(&self.backend, self.timeout).await?;
        let result = f(&tx).await;
        match result {
            Ok(value) => {
                tx.commit().await?;
                Ok(value)
            }
            Err(e) => {
                tx.rollback().await;
                Err(e)
            }
        }
    }

    /// Runs `f` with the native SQLite connection of the writer thread, for what
    /// the common API does not cover (`PRAGMA`s, backups, bulk loads). The worker
    /// awaits it without blocking.
    #[cfg(feature = "sqlite")]
    pub async fn sqlite<T, F>(&self, f: F) -> Result<T, Error>
    where
        T: Send + 'static,
        F: FnOnce(&mut rusqlite::Connection) -> rusqlite::Result<T> + Send + 'static,
    {
        match &self.backend {
            WorkerBackend::Sqlite(db) => timed(self.timeout, db.native(f)).await,
            #[cfg(feature = "postgres")]
            WorkerBackend::Postgres(_) => Err(Error::Open("Db::sqlite on a PostgreSQL database".into())),
        }
    }

    /// A `tokio-postgres` client on a connection of its own, for what the common API
    /// does not cover (`COPY`, `LISTEN`, simple-protocol batches). Opened on first
    /// use and kept by this worker; reopened after it breaks.
    #[cfg(feature = "postgres")]
    pub async fn postgres(&self) -> Result<std::rc::Rc<tokio_postgres::Client>, Error> {
        match &self.backend {
            WorkerBackend::Postgres(db) => timed(self.timeout, db.native()).await,
            #[cfg(feature = "sqlite")]
            WorkerBackend::Sqlite(_) => Err(Error::Open("Db::postgres on a SQLite database".into())),
        }
    }
}
