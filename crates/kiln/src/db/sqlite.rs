//! SQLite on its own threads, so that a worker never blocks on it.
//!
//! One writer thread and a few reader threads each own a connection to the same file
//! (WAL mode, so readers never wait for the writer). A call is a closure sent over a
//! bounded channel to one of them; the answer comes back on a oneshot channel that
//! the worker awaits. Writes all go to the one writer, so they never contend for the
//! file lock; the busy timeout covers other processes.

use std::cell::Cell;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;
use std::sync::Arc;
use std::sync::mpsc::{RecvTimeoutError, SyncSender, TrySendError, sync_channel};
use std::time::{Duration, Instant};

use rusqlite::{Connection, OpenFlags, Row, TransactionBehavior, params};
use tokio::sync::oneshot;

use super::error::DbError;
use super::migrate::migrate;
use super::model::{Fortune, World};

/// Calls that may wait in front of one SQLite thread; past this a call fails with
/// `503` at once instead of queueing without bound.
const QUEUE_DEPTH: usize = 4096;
/// How long a connection waits for a lock held by another process before giving up.
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);
/// Rows counted by the recursive query that calibrates the `/mix` long query.
const CALIBRATION_ROWS: i64 = 50_000;

const SELECT_WORLD: &str = "SELECT id, randomnumber FROM world WHERE id = ?1";
const SELECT_ALL_WORLDS: &str = "SELECT id, randomnumber FROM world ORDER BY id";
const SELECT_FORTUNES: &str = "SELECT id, message FROM fortune";
const UPDATE_WORLD: &str = "UPDATE world SET randomnumber = ?2 WHERE id = ?1";
/// The long query of `/mix`: a world row, after counting `?2` rows of a recursive
/// CTE, which costs CPU time in proportion to `?2` as `pg_sleep` costs wall time.
const SELECT_WORLD_SLOWLY: &str = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < ?2)
     SELECT id, randomnumber FROM world WHERE id = ?1 AND (SELECT count(*) FROM c) > 0";
const COUNT_ROWS: &str =
    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < ?1) SELECT count(*) FROM c";

/// Work for one SQLite thread.
type Job = Box<dyn FnOnce(&mut Connection) + Send>;

/// The SQLite threads of one process; cheap to clone, shared by every worker.
#[derive(Clone)]
pub(crate) struct SqlitePool {
    readers: Arc<[SyncSender<Job>]>,
    writer: SyncSender<Job>,
    /// Rows [`SELECT_WORLD_SLOWLY`] counts to run about as long as asked.
    slow_rows: i64,
}

impl SqlitePool {
    /// Opens (creating it if need be) the database at `path`, brings its schema up
    /// to date and starts one writer and `readers` reader threads.
    pub(crate) fn open(path: &Path, readers: usize, long_query: Duration) -> Result<Self, DbError> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| DbError::Open(format!("{}: {e}", dir.display())))?;
        }
        let open_err = |e: rusqlite::Error| DbError::Open(format!("{}: {e}", path.display()));
        let mut writer = open_connection(path).map_err(open_err)?;
        migrate(&mut writer).map_err(open_err)?;
        let slow_rows = calibrate(&writer, long_query).map_err(open_err)?;
        let mut senders = Vec::with_capacity(readers.max(1));
        for i in 0..readers.max(1) {
            let conn = open_connection(path).map_err(open_err)?;
            senders.push(spawn(conn, format!("kiln-sqlite-r{i}"))?);
        }
        Ok(SqlitePool { readers: senders.into(), writer: spawn(writer, "kiln-sqlite-w".into())?, slow_rows })
    }
}

fn open_connection(path: &Path) -> rusqlite::Result<Connection> {
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags(path, flags)?;
    conn.busy_timeout(BUSY_TIMEOUT)?;
    let mode: String = conn.pragma_update_and_check(None, "journal_mode", "WAL", |row| row.get(0))?;
    if !mode.eq_ignore_ascii_case("wal") {
        return Err(rusqlite::Error::InvalidParameterName(format!("journal_mode is {mode}, WAL refused")));
    }
    // In WAL mode NORMAL never corrupts the file on a crash; it may only lose the
    // last transactions on power loss.
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    conn.set_prepared_statement_cache_capacity(16);
    Ok(conn)
}

/// How many rows the slow query must count to run for about `long`.
fn calibrate(conn: &Connection, long: Duration) -> rusqlite::Result<i64> {
    let mut best = Duration::MAX;
    for _ in 0..3 {
        let start = Instant::now();
        conn.query_row(COUNT_ROWS, [CALIBRATION_ROWS], |row| row.get::<_, i64>(0))?;
        best = best.min(start.elapsed());
    }
    let per_row = best.as_nanos().max(1) as f64 / CALIBRATION_ROWS as f64;
    Ok(((long.as_nanos() as f64 / per_row) as i64).max(1))
}

fn spawn(conn: Connection, name: String) -> Result<SyncSender<Job>, DbError> {
    let (tx, rx) = sync_channel::<Job>(QUEUE_DEPTH);
    std::thread::Builder::new()
        .name(name)
        .spawn(move || {
            let mut conn = conn;
            // Ends when every sender is gone. A panicking job drops its reply sender,
            // which its caller sees as a failure; the thread and connection live on.
            for job in rx {
                let _ = catch_unwind(AssertUnwindSafe(|| job(&mut conn)));
            }
        })
        .map_err(|e| DbError::Open(format!("cannot start a SQLite thread: {e}")))?;
    Ok(tx)
}

fn world_from(row: &Row<'_>) -> rusqlite::Result<World> {
    Ok(World { id: row.get(0)?, random_number: row.get(1)? })
}

fn send(to: &SyncSender<Job>, job: Job) -> Result<(), DbError> {
    to.try_send(job).map_err(|e| match e {
        TrySendError::Full(_) => DbError::Unavailable("too many SQLite calls queued".into()),
        TrySendError::Disconnected(_) => DbError::Unavailable("the SQLite thread has stopped".into()),
    })
}

/// One worker's view of the pool: spreads reads over the reader threads in turn.
pub(crate) struct SqliteWorker {
    pool: SqlitePool,
    next: Cell<usize>,
}

impl SqliteWorker {
    pub(crate) fn new(pool: SqlitePool) -> Self {
        SqliteWorker { pool, next: Cell::new(0) }
    }

    fn reader(&self) -> &SyncSender<Job> {
        let i = self.next.get();
        self.next.set((i + 1) % self.pool.readers.len());
        &self.pool.readers[i]
    }

    /// Runs `f` on a SQLite thread; the worker awaits the answer without blocking.
    async fn call<T, F>(to: &SyncSender<Job>, f: F) -> Result<T, DbError>
    where
        T: Send + 'static,
        F: FnOnce(&mut Connection) -> rusqlite::Result<T> + Send + 'static,
    {
        let (tx, rx) = oneshot::channel();
        send(to, Box::new(move |conn| drop(tx.send(f(conn).map_err(DbError::from)))))?;
        rx.await.map_err(|_| DbError::Unavailable("the SQLite thread failed".into()))?
    }

    /// Runs `f` on a SQLite thread and blocks this thread until it answers.
    fn call_blocking<T, F>(to: &SyncSender<Job>, timeout: Duration, f: F) -> Result<T, DbError>
    where
        T: Send + 'static,
        F: FnOnce(&mut Connection) -> rusqlite::Result<T> + Send + 'static,
    {
        let (tx, rx) = sync_channel(1);
        send(to, Box::new(move |conn| drop(tx.send(f(conn).map_err(DbError::from)))))?;
        rx.recv_timeout(timeout).map_err(|e| match e {
            RecvTimeoutError::Timeout => DbError::Timeout,
            RecvTimeoutError::Disconnected => DbError::Unavailable("the SQLite thread failed".into()),
        })?
    }

    pub(crate) async fn worlds(&self, ids: Vec<i32>) -> Result<Vec<World>, DbError> {
        Self::call(self.reader(), move |conn| {
            let mut select = conn.prepare_cached(SELECT_WORLD)?;
            ids.iter().map(|id| select.query_row([id], world_from)).collect()
        })
        .await
    }

    pub(crate) async fn all_worlds(&self) -> Result<Vec<World>, DbError> {
        Self::call(self.reader(), |conn| conn.prepare_cached(SELECT_ALL_WORLDS)?.query_map([], world_from)?.collect())
            .await
    }

    pub(crate) async fn fortunes(&self) -> Result<Vec<Fortune>, DbError> {
        Self::call(self.reader(), |conn| {
            let mut select = conn.prepare_cached(SELECT_FORTUNES)?;
            select.query_map([], |row| Ok(Fortune { id: row.get(0)?, message: row.get(1)? }))?.collect()
        })
        .await
    }

    /// Reads each row of `worlds` on its own, then writes every new number in one
    /// transaction on the writer thread.
    pub(crate) async fn update(&self, worlds: Vec<World>) -> Result<Vec<World>, DbError> {
        Self::call(&self.pool.writer, move |conn| {
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            {
                let mut select = tx.prepare_cached(SELECT_WORLD)?;
                let mut update = tx.prepare_cached(UPDATE_WORLD)?;
                for w in &worlds {
                    select.query_row([w.id], world_from)?;
                }
                for w in &worlds {
                    update.execute(params![w.id, w.random_number])?;
                }
            }
            tx.commit()?;
            Ok(worlds)
        })
        .await
    }

    fn mix_job(
        &self,
        id: i32,
        long: bool,
    ) -> impl FnOnce(&mut Connection) -> rusqlite::Result<Vec<World>> + Send + use<> {
        let slow_rows = self.pool.slow_rows;
        move |conn| {
            let mut rows = vec![conn.prepare_cached(SELECT_WORLD)?.query_row([id], world_from)?];
            if long {
                rows.push(conn.prepare_cached(SELECT_WORLD_SLOWLY)?.query_row(params![id, slow_rows], world_from)?);
            }
            Ok(rows)
        }
    }

    pub(crate) async fn mix(&self, id: i32, long: bool) -> Result<Vec<World>, DbError> {
        Self::call(self.reader(), self.mix_job(id, long)).await
    }

    pub(crate) fn mix_blocking(&self, id: i32, long: bool, timeout: Duration) -> Result<Vec<World>, DbError> {
        Self::call_blocking(self.reader(), timeout, self.mix_job(id, long))
    }
}
