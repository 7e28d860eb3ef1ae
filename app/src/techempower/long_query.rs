//! The long query of `/mix`: `pg_sleep` on PostgreSQL; on SQLite, counting rows of a
//! recursive query, calibrated to take about as long.

use std::time::{Duration, Instant};

use kiln::db::{Backend, Db, Error};

use super::model::World;

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
