//! The SQLite side: one writer and a few reader connections to the same file, each on
//! its own tokio-rusqlite thread, in WAL mode so readers never wait for the writer.
//! Reads take the readers in turn; every write goes to the one writer, so writes never
//! contend for the file lock (the busy timeout only covers other processes).

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde::Serialize;
use tokio_rusqlite::{params, rusqlite, Connection, Row, TransactionBehavior};

/// How many rows the `world` table holds; ids and random numbers run from 1 to this.
pub const WORLD_ROWS: i32 = 10_000;
/// How long a connection waits for a lock held by another process (kiln, say) before giving up.
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

const SELECT_WORLD: &str = "SELECT id, randomnumber FROM world WHERE id = ?1";
const SELECT_FORTUNES: &str = "SELECT id, message FROM fortune";
const UPDATE_WORLD: &str = "UPDATE world SET randomnumber = ?2 WHERE id = ?1";

/// kiln's schema, created only where missing: the file may well be kiln's own.
const SCHEMA: &str = "CREATE TABLE IF NOT EXISTS world (id INTEGER PRIMARY KEY, randomnumber INTEGER NOT NULL);
     CREATE TABLE IF NOT EXISTS fortune (id INTEGER PRIMARY KEY, message TEXT NOT NULL);";
/// Ids `1..=?1`, each with a random number in `1..=?1`, as kiln seeds them.
const SEED_WORLD: &str = "WITH RECURSIVE n(id) AS (SELECT 1 UNION ALL SELECT id + 1 FROM n WHERE id < ?1)
     INSERT INTO world (id, randomnumber) SELECT id, abs(random() % ?1) + 1 FROM n";
const INSERT_FORTUNE: &str = "INSERT INTO fortune (id, message) VALUES (?1, ?2)";

/// The twelve fortunes of the TechEmpower `fortune` table.
const FORTUNES: [(i32, &str); 12] = [
    (1, "fortune: No such file or directory"),
    (2, "A computer scientist is someone who fixes things that aren't broken."),
    (3, "After enough decimal places, nobody gives a damn."),
    (4, "A bad random number generator: 1, 1, 1, 1, 1, 4.33e+67, 1, 1, 1"),
    (5, "A computer program does what you tell it to do, not what you want it to do."),
    (6, "Emacs is a nice operating system, but I prefer UNIX. \u{2014} Tom Christaensen"),
    (7, "Any program that runs right is obsolete."),
    (8, "A list is only as strong as its weakest link. \u{2014} Donald Knuth"),
    (9, "Feature: A bug with seniority."),
    (10, "Computers make very fast, very accurate mistakes."),
    (11, "<script>alert(\"This should not be displayed in a browser alert box.\");</script>"),
    (12, "フレームワークのベンチマーク"),
];

pub type Error = tokio_rusqlite::Error;

#[derive(Serialize, Clone, Copy)]
pub struct World {
    pub id: i32,
    #[serde(rename = "randomNumber")]
    pub random_number: i32,
}

pub struct Fortune {
    pub id: i32,
    pub message: String,
}

pub struct Db {
    writer: Connection,
    readers: Vec<Connection>,
    next: AtomicUsize,
}

impl Db {
    /// Opens `path` (creating it if need be), seeds whatever tables are missing and
    /// opens `readers` reader connections beside the writer.
    pub async fn open(path: &Path, readers: usize) -> Result<Db, Error> {
        let writer = open_connection(path).await?;
        if writer.call(seed).await? {
            eprintln!("peer-axum-sqlite: seeded {}", path.display());
        }
        let mut conns = Vec::with_capacity(readers);
        for _ in 0..readers.max(1) {
            conns.push(open_connection(path).await?);
        }
        Ok(Db { writer, readers: conns, next: AtomicUsize::new(0) })
    }

    fn reader(&self) -> &Connection {
        &self.readers[self.next.fetch_add(1, Ordering::Relaxed) % self.readers.len()]
    }

    /// Each id read with its own (cached, prepared) query, all in one call to a reader.
    pub async fn worlds(&self, ids: Vec<i32>) -> Result<Vec<World>, Error> {
        self.reader()
            .call(move |conn| {
                let mut select = conn.prepare_cached(SELECT_WORLD)?;
                ids.iter().map(|id| select.query_row([id], world_from)).collect()
            })
            .await
    }

    pub async fn fortunes(&self) -> Result<Vec<Fortune>, Error> {
        self.reader()
            .call(|conn| {
                let mut select = conn.prepare_cached(SELECT_FORTUNES)?;
                let rows = select.query_map([], |row| Ok(Fortune { id: row.get(0)?, message: row.get(1)? }))?;
                rows.collect()
            })
            .await
    }

    /// Reads each row of `worlds`, then writes every new number, in one transaction
    /// on the writer.
    pub async fn update(&self, worlds: Vec<World>) -> Result<Vec<World>, Error> {
        self.writer
            .call(move |conn| {
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
}

async fn open_connection(path: &Path) -> Result<Connection, Error> {
    let conn = Connection::open(path).await?;
    conn.call(|conn| {
        conn.busy_timeout(BUSY_TIMEOUT)?;
        let mode: String = conn.pragma_update_and_check(None, "journal_mode", "WAL", |row| row.get(0))?;
        if !mode.eq_ignore_ascii_case("wal") {
            return Err(rusqlite::Error::InvalidParameterName(format!("journal_mode is {mode}, not WAL")));
        }
        // In WAL mode NORMAL cannot corrupt the file on a crash, as kiln sets it.
        conn.pragma_update(None, "synchronous", "NORMAL")
    })
    .await?;
    Ok(conn)
}

/// Creates and fills the tables that are missing or empty; whether it did anything.
fn seed(conn: &mut rusqlite::Connection) -> rusqlite::Result<bool> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    tx.execute_batch(SCHEMA)?;
    let empty = |table: &str| tx.query_row(&format!("SELECT NOT EXISTS (SELECT 1 FROM {table})"), [], |r| r.get(0));
    let (no_worlds, no_fortunes): (bool, bool) = (empty("world")?, empty("fortune")?);
    if no_worlds {
        tx.execute(SEED_WORLD, [WORLD_ROWS])?;
    }
    if no_fortunes {
        let mut insert = tx.prepare(INSERT_FORTUNE)?;
        for (id, message) in FORTUNES {
            insert.execute(params![id, message])?;
        }
    }
    tx.commit()?;
    Ok(no_worlds || no_fortunes)
}

fn world_from(row: &Row<'_>) -> rusqlite::Result<World> {
    Ok(World { id: row.get(0)?, random_number: row.get(1)? })
}
