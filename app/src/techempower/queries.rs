//! The benchmark's reads and writes, on either backend, and each worker's share of
//! its state: the random numbers, the world cache and the `/mix` clients.

use std::cell::RefCell;
use std::rc::Rc;

use futures_util::future::try_join_all;
use kiln::db::{Backend, Database, Db, Error};

use super::mix::Mix;
use super::model::{Fortune, MAX_ROWS, SELECT_WORLD, World};
use super::random::Rng;

const SELECT_ALL_WORLDS: &str = "SELECT id, randomnumber FROM world ORDER BY id";
const SELECT_FORTUNES: &str = "SELECT id, message FROM fortune";
/// Every new number of one `/updates` request in one statement, whatever the count.
const UPDATE_WORLDS_PG: &str = "UPDATE world SET randomnumber = v.r \
     FROM unnest($1::int[], $2::int[]) AS v(id, r) WHERE world.id = v.id";
const UPDATE_WORLD: &str = "UPDATE world SET randomnumber = ?2 WHERE id = ?1";

/// One worker's benchmark state: none of it shared, so no lock.
pub(crate) struct Bench {
    rng: Rng,
    cache: RefCell<Option<Rc<[World]>>>,
    pub(crate) mix: Mix,
}

impl Bench {
    pub(crate) fn new(database: &Database, long: Option<&Database>, long_query: std::time::Duration) -> Self {
        Bench { rng: Rng::new(), cache: RefCell::new(None), mix: Mix::new(database, long, long_query) }
    }

    pub(crate) fn random_id(&self) -> i32 {
        self.rng.world_number()
    }

    /// One random world row (TechEmpower `/db`).
    pub(crate) async fn random_world(&self, db: &Db) -> Result<World, Error> {
        db.query_one(SELECT_WORLD, &[&self.rng.world_number()]).await
    }

    /// `n` random rows, each read with its own statement; on PostgreSQL they travel
    /// in one pipelined batch (TechEmpower `/queries`).
    pub(crate) async fn worlds(&self, db: &Db, n: usize) -> Result<Vec<World>, Error> {
        let ids: Vec<i32> = (0..n.clamp(1, MAX_ROWS)).map(|_| self.rng.world_number()).collect();
        try_join_all(ids.into_iter().map(|id| async move { db.query_one(SELECT_WORLD, &[&id]).await })).await
    }

    /// Every fortune, in table order (TechEmpower `/fortunes` adds one and sorts).
    pub(crate) async fn fortunes(db: &Db) -> Result<Vec<Fortune>, Error> {
        db.query_all(SELECT_FORTUNES, &[]).await
    }

    /// `n` distinct random rows, each read on its own, given new random numbers and
    /// written back in one batch; returns them as now stored (TechEmpower `/updates`).
    pub(crate) async fn update_worlds(&self, db: &Db, n: usize) -> Result<Vec<World>, Error> {
        let mut ids = self.rng.distinct_ids(n.clamp(1, MAX_ROWS));
        let reads = ids.iter().map(|&id| async move { db.query_one::<World>(SELECT_WORLD, &[&id]).await });
        let mut worlds = try_join_all(reads).await?;
        worlds.iter_mut().for_each(|w| w.random_number = self.rng.world_number());
        // Rows written in id order by every request cannot deadlock one another.
        ids.sort_unstable();
        let numbers: Vec<i32> =
            ids.iter().map(|id| worlds.iter().find(|w| w.id == *id).map_or(1, |w| w.random_number)).collect();
        match db.backend() {
            Backend::Postgres => {
                db.execute(UPDATE_WORLDS_PG, &[&ids, &numbers]).await?;
            }
            // No arrays in SQLite: one prepared statement per row, all in one
            // transaction on the writer thread, through the native connection.
            _ => {
                db.sqlite(move |conn| {
                    let tx = conn.transaction()?;
                    {
                        let mut update = tx.prepare_cached(UPDATE_WORLD)?;
                        for (id, number) in ids.iter().zip(&numbers) {
                            update.execute([id, number])?;
                        }
                    }
                    tx.commit()
                })
                .await?;
            }
        }
        Ok(worlds)
    }

    /// `n` random rows from this worker's copy of the world table, read once on
    /// first use (TechEmpower `/cached-queries`).
    pub(crate) async fn cached_worlds(&self, db: &Db, n: usize) -> Result<Vec<World>, Error> {
        let cached = self.cache.borrow().clone();
        let table = match cached {
            Some(table) => table,
            None => {
                let all: Rc<[World]> = db.query_all::<World>(SELECT_ALL_WORLDS, &[]).await?.into();
                *self.cache.borrow_mut() = Some(Rc::clone(&all));
                all
            }
        };
        (0..n.clamp(1, MAX_ROWS))
            .map(|_| {
                let id = self.rng.world_number();
                // Loaded in id order, so a binary search finds any row.
                table.binary_search_by_key(&id, |w| w.id).map(|i| table[i]).map_err(|_| Error::NotFound)
            })
            .collect()
    }
}
