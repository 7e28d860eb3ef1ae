//! The database a process opens once and the handle each worker builds from it.

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::path::PathBuf;
use std::rc::Rc;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use super::error::DbError;
use super::model::{Fortune, World};
use super::postgres::{PgSettings, PgWorker};
use super::random::Rng;
use super::sqlite::{SqlitePool, SqliteWorker};

/// Longest a database call may take before it fails with `503`.
pub const QUERY_TIMEOUT: Duration = Duration::from_secs(5);
/// Longest a PostgreSQL connection attempt may take.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);
/// How long the long query of the `/mix` workload runs.
pub const LONG_QUERY: Duration = Duration::from_millis(20);
/// The most rows one call reads or writes, as TechEmpower's `queries` parameter allows.
pub const MAX_ROWS: usize = 500;

/// Settings for [`Database::open`]; [`Default`] gives the documented defaults.
#[derive(Debug, Clone)]
pub struct DbOptions {
    /// SQLite: reader threads, each with its own connection, beside the one writer.
    pub sqlite_readers: usize,
    /// PostgreSQL: connections each worker opens; queries on one are pipelined.
    pub pg_connections_per_worker: usize,
    /// Longest a call may take before it fails with [`DbError::Timeout`].
    pub query_timeout: Duration,
    /// Longest a PostgreSQL connection attempt may take.
    pub connect_timeout: Duration,
    /// How long the long query of `/mix` runs.
    pub long_query: Duration,
}

impl Default for DbOptions {
    fn default() -> Self {
        DbOptions {
            sqlite_readers: std::thread::available_parallelism().map_or(2, |n| n.get().clamp(2, 4)),
            pg_connections_per_worker: 1,
            query_timeout: QUERY_TIMEOUT,
            connect_timeout: CONNECT_TIMEOUT,
            long_query: LONG_QUERY,
        }
    }
}

#[derive(Clone)]
enum Backend {
    Sqlite(SqlitePool),
    Postgres(Arc<PgSettings>),
}

/// A database, opened once per process and shared by every worker; each worker
/// makes its own [`WorkerDb`] from it with [`worker`](Self::worker).
///
/// ```no_run
/// use kiln::db::{Database, DbOptions};
/// let db = Database::open("sqlite://data/kiln.sqlite", DbOptions::default()).unwrap();
/// // In each worker's factory:
/// let worker_db = db.worker();
/// # let _ = worker_db;
/// ```
#[derive(Clone)]
pub struct Database {
    backend: Backend,
    options: DbOptions,
}

impl std::fmt::Debug for Database {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Database").field("backend", &self.backend_name()).field("options", &self.options).finish()
    }
}

impl Database {
    /// Opens `sqlite://PATH` (created, migrated and seeded when new; a relative
    /// `PATH` is relative to the working directory) or `postgres://...` /
    /// `postgresql://...` (connected lazily by each worker, so the process starts
    /// even while the server is down).
    pub fn open(url: &str, options: DbOptions) -> Result<Self, DbError> {
        let backend = if let Some(path) = url.strip_prefix("sqlite://") {
            if path.is_empty() {
                return Err(DbError::Open("sqlite:// needs a path, as in sqlite://data/kiln.sqlite".into()));
            }
            Backend::Sqlite(SqlitePool::open(&PathBuf::from(path), options.sqlite_readers, options.long_query)?)
        } else if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            let mut config =
                tokio_postgres::Config::from_str(url).map_err(|e| DbError::Open(format!("bad PostgreSQL URL: {e}")))?;
            config.connect_timeout(options.connect_timeout);
            Backend::Postgres(Arc::new(PgSettings {
                config,
                connections: options.pg_connections_per_worker.max(1),
                connect_timeout: options.connect_timeout,
                long_query: options.long_query,
            }))
        } else {
            return Err(DbError::Open(format!("unknown database URL {url:?}: use sqlite://PATH or postgres://...")));
        };
        Ok(Database { backend, options })
    }

    /// `"sqlite"` or `"postgres"`.
    pub fn backend_name(&self) -> &'static str {
        match self.backend {
            Backend::Sqlite(_) => "sqlite",
            Backend::Postgres(_) => "postgres",
        }
    }

    /// The handle one worker uses; call it on that worker's thread.
    pub fn worker(&self) -> WorkerDb {
        let backend = match &self.backend {
            Backend::Sqlite(pool) => WorkerBackend::Sqlite(SqliteWorker::new(pool.clone())),
            Backend::Postgres(settings) => WorkerBackend::Postgres(PgWorker::new(Arc::clone(settings))),
        };
        WorkerDb {
            backend,
            rng: Rng::new(),
            cache: RefCell::new(None),
            mix_count: Cell::new(0),
            timeout: self.options.query_timeout,
        }
    }
}

enum WorkerBackend {
    Sqlite(SqliteWorker),
    Postgres(PgWorker),
}

/// One worker's database handle: its own connections, random numbers, `/mix`
/// counter and world cache, none of them shared, so it is `!Send` and needs no lock.
///
/// Every call ends within the query timeout; a database that cannot be reached
/// gives [`DbError::Unavailable`] or [`DbError::Timeout`], both answered with `503`.
pub struct WorkerDb {
    backend: WorkerBackend,
    rng: Rng,
    cache: RefCell<Option<Rc<[World]>>>,
    mix_count: Cell<u64>,
    timeout: Duration,
}

impl std::fmt::Debug for WorkerDb {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WorkerDb").field("timeout", &self.timeout).finish_non_exhaustive()
    }
}

impl WorkerDb {
    async fn timed<T>(&self, call: impl Future<Output = Result<T, DbError>>) -> Result<T, DbError> {
        tokio::time::timeout(self.timeout, call).await.unwrap_or(Err(DbError::Timeout))
    }

    /// The world rows with these ids, each read with its own query.
    pub async fn worlds_by_id(&self, ids: Vec<i32>) -> Result<Vec<World>, DbError> {
        match &self.backend {
            WorkerBackend::Sqlite(db) => self.timed(db.worlds(ids)).await,
            WorkerBackend::Postgres(db) => self.timed(db.worlds(&ids)).await,
        }
    }

    /// One random world row (TechEmpower `/db`).
    pub async fn random_world(&self) -> Result<World, DbError> {
        let id = self.rng.world_number();
        match &self.backend {
            WorkerBackend::Sqlite(db) => {
                let mut rows = self.timed(db.worlds(vec![id])).await?;
                rows.pop().ok_or_else(|| DbError::Query(format!("world {id} is missing")))
            }
            WorkerBackend::Postgres(db) => self.timed(db.world(id)).await,
        }
    }

    /// `n` random world rows (clamped to `1..=MAX_ROWS`), each read with its own
    /// query (TechEmpower `/queries`).
    pub async fn worlds(&self, n: usize) -> Result<Vec<World>, DbError> {
        let ids = (0..n.clamp(1, MAX_ROWS)).map(|_| self.rng.world_number()).collect();
        self.worlds_by_id(ids).await
    }

    /// Every fortune, in table order (TechEmpower `/fortunes` adds one and sorts).
    pub async fn fortunes(&self) -> Result<Vec<Fortune>, DbError> {
        match &self.backend {
            WorkerBackend::Sqlite(db) => self.timed(db.fortunes()).await,
            WorkerBackend::Postgres(db) => self.timed(db.fortunes()).await,
        }
    }

    /// `n` distinct random rows (clamped to `1..=MAX_ROWS`), each read on its own,
    /// given new random numbers and written back in one batch; returns them as now
    /// stored (TechEmpower `/updates`).
    pub async fn update_worlds(&self, n: usize) -> Result<Vec<World>, DbError> {
        let worlds = self
            .rng
            .distinct_ids(n.clamp(1, MAX_ROWS))
            .into_iter()
            .map(|id| World { id, random_number: self.rng.world_number() })
            .collect();
        match &self.backend {
            WorkerBackend::Sqlite(db) => self.timed(db.update(worlds)).await,
            WorkerBackend::Postgres(db) => self.timed(db.update(worlds)).await,
        }
    }

    /// `n` random rows (clamped to `1..=MAX_ROWS`) from this worker's copy of the
    /// world table, read once on first use (TechEmpower `/cached-queries`).
    pub async fn cached_worlds(&self, n: usize) -> Result<Vec<World>, DbError> {
        let cached = self.cache.borrow().clone();
        let table = match cached {
            Some(table) => table,
            None => {
                let all: Rc<[World]> = match &self.backend {
                    WorkerBackend::Sqlite(db) => self.timed(db.all_worlds()).await?,
                    WorkerBackend::Postgres(db) => self.timed(db.all_worlds()).await?,
                }
                .into();
                *self.cache.borrow_mut() = Some(Rc::clone(&all));
                all
            }
        };
        (0..n.clamp(1, MAX_ROWS))
            .map(|_| {
                let id = self.rng.world_number();
                // Loaded in id order, so a binary search finds any row.
                table
                    .binary_search_by_key(&id, |w| w.id)
                    .map(|i| table[i])
                    .map_err(|_| DbError::Query(format!("world {id} is missing")))
            })
            .collect()
    }

    /// Counts a `/mix` request and says whether it is an `every`-th one, which runs
    /// the long query too.
    pub fn mix_is_long(&self, every: u64) -> bool {
        let n = self.mix_count.get().wrapping_add(1);
        self.mix_count.set(n);
        n % every.max(1) == 0
    }

    /// The `/mix` workload, awaited without blocking the worker: one short query,
    /// and the long one too when `long`. Returns the rows read.
    pub async fn mix(&self, long: bool) -> Result<Vec<World>, DbError> {
        let id = self.rng.world_number();
        match &self.backend {
            WorkerBackend::Sqlite(db) => self.timed(db.mix(id, long)).await,
            WorkerBackend::Postgres(db) => self.timed(db.mix(id, long)).await,
        }
    }

    /// The `/mix` workload through a synchronous client: blocks the calling worker
    /// thread until the queries answer (or the query timeout passes), as a blocking
    /// database driver would.
    pub fn mix_blocking(&self, long: bool) -> Result<Vec<World>, DbError> {
        let id = self.rng.world_number();
        match &self.backend {
            WorkerBackend::Sqlite(db) => db.mix_blocking(id, long, self.timeout),
            WorkerBackend::Postgres(db) => db.mix_blocking(id, long, self.timeout),
        }
    }
}
