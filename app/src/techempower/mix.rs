//! The non-blocking report's workload: a short query per request and a long one
//! every `every`-th, awaited without blocking (`/mix/async`) or with the worker
//! thread blocked on each query, as a blocking driver would (`/mix/blocking`).
//!
//! On PostgreSQL the long query is `pg_sleep` on connections of its own (a second
//! `Database` with many connections per worker): a connection answers in order, so
//! a long query pipelined with the short ones would hold them all up. On SQLite it
//! counts rows of a recursive query, calibrated at first use to take about as long.

use std::cell::{Cell, RefCell};
use std::time::{Duration, Instant};

use futures_util::future::join;
use kiln::db::{Backend, Database, Db, Error};

use super::blocking::Blocking;
use super::model::{SELECT_WORLD, World};

/// The long query on PostgreSQL: a world row after `pg_sleep($2)` seconds.
const SELECT_WORLD_SLOWLY_PG: &str = "SELECT w.id, w.randomnumber FROM world w, pg_sleep($2) WHERE w.id = $1";
/// The long query on SQLite: a world row, after counting `$2` rows of a recursive
/// query, which costs CPU time in proportion to `$2` as `pg_sleep` costs wall time.
const SELECT_WORLD_SLOWLY_SQLITE: &str = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < $2) \
     SELECT id, randomnumber FROM world WHERE id = $1 AND (SELECT count(*) FROM c) > 0";
const COUNT_ROWS: &str =
    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < ?1) SELECT count(*) FROM c";
/// Rows counted to calibrate the SQLite long query.
const CALIBRATION_ROWS: i64 = 50_000;

/// How the long query is made long.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Slow {
    /// PostgreSQL: sleep this many seconds.
    Sleep(f64),
    /// SQLite: count this many rows.
    Count(i64),
}

/// One worker's `/mix` state.
pub(crate) struct Mix {
    count: Cell<u64>,
    database: Database,
    /// PostgreSQL: the connections for long queries.
    long: Option<Db>,
    long_query: Duration,
    slow: Cell<Option<Slow>>,
    blocking: RefCell<Option<Blocking>>,
}

impl Mix {
    pub(crate) fn new(database: &Database, long: Option<&Database>, long_query: Duration) -> Self {
        Mix {
            count: Cell::new(0),
            database: database.clone(),
            long: long.map(Database::worker),
            long_query,
            slow: Cell::new(None),
            blocking: RefCell::new(None),
        }
    }

    /// Counts a request and says whether it is an `every`-th one, which runs the
    /// long query too.
    pub(crate) fn is_long(&self, every: u64) -> bool {
        let n = self.count.get().wrapping_add(1);
        self.count.set(n);
        n % every.max(1) == 0
    }

    async fn slow(&self, db: &Db) -> Result<Slow, Error> {
        if let Some(slow) = self.slow.get() {
            return Ok(slow);
        }
        let slow = slow_for(db, self.long_query).await?;
        self.slow.set(Some(slow));
        Ok(slow)
    }

    /// The short query, and the long one too when `long`, awaited together.
    pub(crate) async fn run(&self, db: &Db, id: i32, long: bool) -> Result<Vec<World>, Error> {
        if !long {
            return Ok(vec![db.query_one(SELECT_WORLD, &[&id]).await?]);
        }
        let slow = self.slow(db).await?;
        let short = async { db.query_one::<World>(SELECT_WORLD, &[&id]).await };
        let (short, slow) = join(short, long_query(self.long.as_ref().unwrap_or(db), id, slow)).await;
        Ok(vec![short?, slow?])
    }

    /// As [`run`](Self::run), one query after the other on a client of its own, this
    /// thread waiting for the answers.
    pub(crate) fn run_blocking(&self, id: i32, long: bool, timeout: Duration) -> Result<Vec<World>, Error> {
        let mut blocking = self.blocking.borrow_mut();
        if blocking.is_none() {
            *blocking = Some(Blocking::start(&self.database, self.long_query)?);
        }
        blocking.as_ref().map_or(Err(Error::Unavailable("no blocking client".into())), |b| b.run(id, long, timeout))
    }
}

/// How the long query is made long on `db`'s backend.
pub(crate) async fn slow_for(db: &Db, long_query: Duration) -> Result<Slow, Error> {
    Ok(match db.backend() {
        Backend::Postgres => Slow::Sleep(long_query.as_secs_f64()),
        _ => Slow::Count(calibrate(db, long_query).await?),
    })
}

/// The long query.
pub(crate) async fn long_query(db: &Db, id: i32, slow: Slow) -> Result<World, Error> {
    match slow {
        Slow::Sleep(secs) => db.query_one(SELECT_WORLD_SLOWLY_PG, &[&id, &secs]).await,
        Slow::Count(rows) => db.query_one(SELECT_WORLD_SLOWLY_SQLITE, &[&id, &rows]).await,
    }
}

/// How many rows the SQLite long query must count to run for about `long`.
async fn calibrate(db: &Db, long: Duration) -> Result<i64, Error> {
    db.sqlite(move |conn| {
        let mut best = Duration::MAX;
        for _ in 0..3 {
            let start = Instant::now();
            conn.query_row(COUNT_ROWS, [CALIBRATION_ROWS], |row| row.get::<_, i64>(0))?;
            best = best.min(start.elapsed());
        }
        let per_row = best.as_nanos().max(1) as f64 / CALIBRATION_ROWS as f64;
        Ok(((long.as_nanos() as f64 / per_row) as i64).max(1))
    })
    .await
}
