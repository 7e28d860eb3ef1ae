//! PostgreSQL with `tokio-postgres`: a few connections per worker (one by default),
//! each with its statements prepared once. Queries issued concurrently on one
//! connection are pipelined: they leave in one write and their answers come back
//! in order, so `/queries?queries=20` costs one round trip, not twenty.
//!
//! A connection that breaks is replaced on the next call after a backoff that
//! doubles up to [`MAX_BACKOFF`]; until then calls fail at once with
//! [`DbError::Unavailable`] (a `503`), never hang and never panic.

use std::cell::{Cell, RefCell};
use std::rc::{Rc, Weak};
use std::sync::Arc;
use std::time::Duration;

use futures_util::FutureExt;
use futures_util::future::{LocalBoxFuture, Shared, join, join_all, try_join};
use tokio::time::Instant;
use tokio_postgres::error::SqlState;
use tokio_postgres::types::ToSql;
use tokio_postgres::{Client, Config, NoTls, Row, Statement};

use super::blocking::BlockingPg;
use super::error::DbError;
use super::model::{Fortune, World};

/// Wait before the first reconnect attempt after a failed one.
const MIN_BACKOFF: Duration = Duration::from_millis(50);
/// Longest wait between two reconnect attempts.
pub(crate) const MAX_BACKOFF: Duration = Duration::from_secs(2);

pub(crate) const SELECT_WORLD: &str = "SELECT id, randomnumber FROM world WHERE id = $1";
const SELECT_ALL_WORLDS: &str = "SELECT id, randomnumber FROM world ORDER BY id";
const SELECT_FORTUNES: &str = "SELECT id, message FROM fortune";
/// Every new number of one `/updates` request in one statement, whatever the count.
const UPDATE_WORLDS: &str = "UPDATE world SET randomnumber = v.r \
     FROM unnest($1::int[], $2::int[]) AS v(id, r) WHERE world.id = v.id";
/// The long query of `/mix`: a world row after `pg_sleep($2)` seconds.
pub(crate) const SELECT_WORLD_SLOWLY: &str =
    "SELECT w.id, w.randomnumber FROM world w, pg_sleep($2::float8) WHERE w.id = $1";

/// What every worker's connections are made from.
#[derive(Debug)]
pub(crate) struct PgSettings {
    pub(crate) config: Config,
    pub(crate) connections: usize,
    pub(crate) connect_timeout: Duration,
    pub(crate) long_query: Duration,
}

/// One open connection and its prepared statements.
struct PgConn {
    client: Client,
    world: Statement,
    all_worlds: Statement,
    fortunes: Statement,
    update: Statement,
    slow: Statement,
}

async fn establish(config: &Config) -> Result<PgConn, DbError> {
    let (client, connection) =
        config.connect(NoTls).await.map_err(|e| DbError::Unavailable(format!("cannot connect to PostgreSQL: {e}")))?;
    // The connection future performs the I/O; it ends when the server goes away,
    // which `Client::is_closed` then reports.
    tokio::spawn(async move { drop(connection.await) });
    let prepared = async {
        let (world, all_worlds) = try_join(client.prepare(SELECT_WORLD), client.prepare(SELECT_ALL_WORLDS)).await?;
        let (fortunes, update) = try_join(client.prepare(SELECT_FORTUNES), client.prepare(UPDATE_WORLDS)).await?;
        let slow = client.prepare(SELECT_WORLD_SLOWLY).await?;
        Ok::<_, tokio_postgres::Error>((world, all_worlds, fortunes, update, slow))
    };
    let (world, all_worlds, fortunes, update, slow) =
        prepared.await.map_err(|e| DbError::Unavailable(format!("cannot prepare statements: {e}")))?;
    Ok(PgConn { client, world, all_worlds, fortunes, update, slow })
}

type Connecting = Shared<LocalBoxFuture<'static, Result<Rc<PgConn>, DbError>>>;

enum State {
    Up(Rc<PgConn>),
    /// An attempt in flight; every caller awaits the same one.
    Connecting(Connecting),
    Down {
        retry_at: Instant,
        backoff: Duration,
        reason: String,
    },
}

/// One connection of a worker, with its reconnect state.
struct Slot {
    settings: Arc<PgSettings>,
    state: RefCell<State>,
}

impl Slot {
    async fn conn(self: &Rc<Self>) -> Result<Rc<PgConn>, DbError> {
        let pending = {
            let mut state = self.state.borrow_mut();
            let backoff = match &*state {
                State::Up(conn) if !conn.client.is_closed() => return Ok(Rc::clone(conn)),
                State::Up(_) => Ok(Duration::ZERO),
                State::Connecting(pending) => Err(pending.clone()),
                State::Down { retry_at, reason, .. } if Instant::now() < *retry_at => {
                    let wait = retry_at.saturating_duration_since(Instant::now()).as_millis();
                    return Err(DbError::Unavailable(format!("{reason}; next attempt in {wait} ms")));
                }
                State::Down { backoff, .. } => Ok(*backoff),
            };
            match backoff {
                Err(pending) => pending,
                Ok(backoff) => {
                    let attempt =
                        connect(Rc::downgrade(self), Arc::clone(&self.settings), backoff).boxed_local().shared();
                    *state = State::Connecting(attempt.clone());
                    attempt
                }
            }
        };
        pending.await
    }

    /// Turns a query's error into a [`DbError`], marking the connection down when
    /// the error means the server is gone.
    fn failed(&self, conn: &Rc<PgConn>, e: tokio_postgres::Error) -> DbError {
        let gone = conn.client.is_closed()
            || e.is_closed()
            || e.code().is_some_and(|c| {
                [SqlState::ADMIN_SHUTDOWN, SqlState::CRASH_SHUTDOWN, SqlState::CANNOT_CONNECT_NOW].contains(c)
            });
        if !gone {
            return DbError::Query(e.to_string());
        }
        let mut state = self.state.borrow_mut();
        if matches!(&*state, State::Up(c) if Rc::ptr_eq(c, conn)) {
            *state = State::Down { retry_at: Instant::now(), backoff: MIN_BACKOFF, reason: format!("PostgreSQL: {e}") };
        }
        DbError::Unavailable(format!("lost the connection to PostgreSQL: {e}"))
    }
}

async fn connect(slot: Weak<Slot>, settings: Arc<PgSettings>, backoff: Duration) -> Result<Rc<PgConn>, DbError> {
    let result = match tokio::time::timeout(settings.connect_timeout, establish(&settings.config)).await {
        Ok(result) => result.map(Rc::new),
        Err(_) => Err(DbError::Unavailable("connecting to PostgreSQL timed out".into())),
    };
    if let Some(slot) = slot.upgrade() {
        *slot.state.borrow_mut() = match &result {
            Ok(conn) => State::Up(Rc::clone(conn)),
            Err(e) => State::Down {
                retry_at: Instant::now() + backoff,
                backoff: (backoff * 2).clamp(MIN_BACKOFF, MAX_BACKOFF),
                reason: e.to_string(),
            },
        };
    }
    result
}

fn world_from(row: &Row) -> World {
    World { id: row.get(0), random_number: row.get(1) }
}

/// Connections per worker reserved for `/mix`'s long query, opened on first use. A
/// connection answers its queries in order, so a long query pipelined with the short
/// ones would hold every one of them up for its whole duration: the non-blocking mode
/// would then be no faster than the blocking one. On connections of their own, long
/// queries overlap one another and the short queries never wait behind them.
const LONG_QUERY_CONNECTIONS: usize = 16;

/// One worker's connections, used in turn.
pub(crate) struct PgWorker {
    settings: Arc<PgSettings>,
    slots: Vec<Rc<Slot>>,
    next: Cell<usize>,
    long_slots: Vec<Rc<Slot>>,
    next_long: Cell<usize>,
    blocking: RefCell<Option<BlockingPg>>,
}

impl PgWorker {
    pub(crate) fn new(settings: Arc<PgSettings>) -> Self {
        let new_slots = |n: usize| -> Vec<Rc<Slot>> {
            (0..n)
                .map(|_| {
                    let state = State::Down { retry_at: Instant::now(), backoff: MIN_BACKOFF, reason: String::new() };
                    Rc::new(Slot { settings: Arc::clone(&settings), state: RefCell::new(state) })
                })
                .collect()
        };
        let slots = new_slots(settings.connections.max(1));
        let long_slots = new_slots(LONG_QUERY_CONNECTIONS);
        PgWorker {
            settings,
            slots,
            next: Cell::new(0),
            long_slots,
            next_long: Cell::new(0),
            blocking: RefCell::new(None),
        }
    }

    async fn slot(&self) -> Result<(&Rc<Slot>, Rc<PgConn>), DbError> {
        Self::take_turn(&self.slots, &self.next).await
    }

    async fn take_turn<'s>(slots: &'s [Rc<Slot>], next: &Cell<usize>) -> Result<(&'s Rc<Slot>, Rc<PgConn>), DbError> {
        let i = next.get();
        next.set((i + 1) % slots.len());
        let slot = &slots[i];
        Ok((slot, slot.conn().await?))
    }

    pub(crate) async fn world(&self, id: i32) -> Result<World, DbError> {
        let (slot, conn) = self.slot().await?;
        let row = conn.client.query_one(&conn.world, &[&id]).await.map_err(|e| slot.failed(&conn, e))?;
        Ok(world_from(&row))
    }

    /// Reads each row on its own; the reads are pipelined on one connection.
    pub(crate) async fn worlds(&self, ids: &[i32]) -> Result<Vec<World>, DbError> {
        let (slot, conn) = self.slot().await?;
        let params: Vec<[&(dyn ToSql + Sync); 1]> = ids.iter().map(|id| [id as _]).collect();
        let rows = join_all(params.iter().map(|p| conn.client.query_one(&conn.world, p))).await;
        rows.into_iter().map(|row| row.map(|r| world_from(&r)).map_err(|e| slot.failed(&conn, e))).collect()
    }

    pub(crate) async fn all_worlds(&self) -> Result<Vec<World>, DbError> {
        let (slot, conn) = self.slot().await?;
        let rows = conn.client.query(&conn.all_worlds, &[]).await.map_err(|e| slot.failed(&conn, e))?;
        Ok(rows.iter().map(world_from).collect())
    }

    pub(crate) async fn fortunes(&self) -> Result<Vec<Fortune>, DbError> {
        let (slot, conn) = self.slot().await?;
        let rows = conn.client.query(&conn.fortunes, &[]).await.map_err(|e| slot.failed(&conn, e))?;
        Ok(rows.iter().map(|r| Fortune { id: r.get(0), message: r.get(1) }).collect())
    }

    /// Reads each row of `worlds` on its own (pipelined), then writes every new
    /// number in one statement.
    pub(crate) async fn update(&self, worlds: Vec<World>) -> Result<Vec<World>, DbError> {
        let (slot, conn) = self.slot().await?;
        let params: Vec<[&(dyn ToSql + Sync); 1]> = worlds.iter().map(|w| [&w.id as _]).collect();
        let reads = join_all(params.iter().map(|p| conn.client.query_one(&conn.world, p))).await;
        for read in reads {
            read.map_err(|e| slot.failed(&conn, e))?;
        }
        // Rows locked in id order by every request cannot deadlock one another.
        let mut sorted = worlds.clone();
        sorted.sort_unstable_by_key(|w| w.id);
        let ids: Vec<i32> = sorted.iter().map(|w| w.id).collect();
        let numbers: Vec<i32> = sorted.iter().map(|w| w.random_number).collect();
        conn.client.execute(&conn.update, &[&ids, &numbers]).await.map_err(|e| slot.failed(&conn, e))?;
        Ok(worlds)
    }

    pub(crate) async fn mix(&self, id: i32, long: bool) -> Result<Vec<World>, DbError> {
        let (slot, conn) = self.slot().await?;
        let params: [&(dyn ToSql + Sync); 1] = [&id];
        let short = conn.client.query_one(&conn.world, &params);
        let mut rows = Vec::with_capacity(2);
        if long {
            let secs = self.settings.long_query.as_secs_f64();
            let (long_slot, long_conn) = Self::take_turn(&self.long_slots, &self.next_long).await?;
            let long_params: [&(dyn ToSql + Sync); 2] = [&id, &secs];
            let slow = long_conn.client.query_one(&long_conn.slow, &long_params);
            let (short, slow) = join(short, slow).await;
            rows.push(world_from(&short.map_err(|e| slot.failed(&conn, e))?));
            rows.push(world_from(&slow.map_err(|e| long_slot.failed(&long_conn, e))?));
        } else {
            rows.push(world_from(&short.await.map_err(|e| slot.failed(&conn, e))?));
        }
        Ok(rows)
    }

    /// The `/mix` queries through a synchronous client: this thread waits for them.
    pub(crate) fn mix_blocking(&self, id: i32, long: bool, timeout: Duration) -> Result<Vec<World>, DbError> {
        let mut blocking = self.blocking.borrow_mut();
        if blocking.is_none() {
            *blocking = Some(BlockingPg::start(Arc::clone(&self.settings))?);
        }
        blocking.as_ref().map_or(Err(DbError::Unavailable("no blocking client".into())), |b| b.mix(id, long, timeout))
    }
}
