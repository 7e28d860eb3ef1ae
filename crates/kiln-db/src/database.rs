//! The database a process opens once, and the handle each worker builds from it.

use std::future::Future;
use std::time::Duration;

use crate::error::Error;
use crate::migrate::Migration;
use crate::row::FromRow;
use crate::transaction::Transaction;
use crate::value::ToParam;

/// Longest a database call may take before it fails with [`Error::Timeout`].
pub const QUERY_TIMEOUT: Duration = Duration::from_secs(5);
/// Longest a PostgreSQL connection attempt may take.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);

/// Settings for [`Database::open`]; [`Default`] gives the documented defaults.
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
    /// Longest a call may take before it fails with [`Error::Timeout`].
    pub query_timeout: Duration,
    /// Longest a PostgreSQL connection attempt may take.
    pub connect_timeout: Duration,
    /// PostgreSQL's `statement_timeout`: the server cancels a statement running
    /// longer (default: none, the server's own setting).
    pub statement_timeout: Option<Duration>,
    /// The app's schema, applied in order at start-up (see [`migrations!`](crate::Migration)).
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

/// Which database a [`Database`] talks to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Backend {
    /// Embedded SQLite.
    Sqlite,
    /// A PostgreSQL server.
    Postgres,
}

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

    /// Which database this is.
    pub fn backend(&self) -> Backend {
        match self.opened {
            #[cfg(feature = "sqlite")]
            Opened::Sqlite(_) => Backend::Sqlite,
            #[cfg(feature = "postgres")]
            Opened::Postgres(_) => Backend::Postgres,
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

pub(crate) enum WorkerBackend {
    #[cfg(feature = "sqlite")]
    Sqlite(crate::sqlite::Worker),
    #[cfg(feature = "postgres")]
    Postgres(crate::postgres::Worker),
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
        let tx = Transaction::begin(self).await?;
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
