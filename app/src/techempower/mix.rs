//! The non-blocking report's workload: a short query per request and a long one
//! every `every`-th, awaited without blocking (`/mix/async`) or with the worker
//! thread blocked on each query, as a blocking driver would (`/mix/blocking`).
//!
//! On PostgreSQL the long query runs on connections of its own (a second
//! `Database` with many connections per worker): a connection answers in order, so
//! a long query pipelined with the short ones would hold them all up. On SQLite it
//! counts rows of a recursive query, calibrated at first use to take about as long.

use std::cell::{Cell, RefCell};
use std::time::Duration;

use futures_util::future::join;
use kiln::db::{Database, Db, Error};

use super::blocking::Blocking;
use super::long_query::{Slow, long_query, slow_for};
use super::model::{SELECT_WORLD, World};

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
