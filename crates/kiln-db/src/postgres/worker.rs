//! PostgreSQL through the worker's own pipelined connections (see `pipeline`): a
//! few per worker (one by default), each with its statements prepared once. The
//! queries of a request leave in one write with the other requests' and their
//! answers come back in order, so `/queries?queries=20` costs one round trip, not
//! twenty, and the server one transaction, not twenty.
//!
//! A connection that breaks is replaced on the next call after a backoff that
//! doubles up to [`MAX_BACKOFF`]; until then calls fail at once with
//! [`DbError::Unavailable`] (a `503`), never hang and never panic.

use std::cell::{Cell, RefCell};
use std::rc::{Rc, Weak};
use std::sync::Arc;
use std::time::Duration;

use fallible_iterator::FallibleIterator;
use futures_util::FutureExt;
use futures_util::future::{LocalBoxFuture, Shared, join};
use postgres_protocol::message::backend::DataRowBody;
use tokio::time::Instant;
use tokio_postgres::Config;

use super::blocking::BlockingPg;
use super::error::DbError;
use super::model::{Fortune, World};
use super::pipeline::{Batch, Commit, INT4_OID, Param, PgConn, Rows};
use super::startup::{Prepared, open};

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

/// Type oids of the parameters: `int4[]` and `float8`.
const INT4_ARRAY_OID: u32 = 1007;
const FLOAT8_OID: u32 = 701;

/// Names of the statements every connection prepares.
const WORLD: &str = "world";
const ALL_WORLDS: &str = "all_worlds";
const FORTUNES: &str = "fortunes";
const UPDATE: &str = "update";
const SLOW: &str = "slow";

const STATEMENTS: [Prepared; 5] = [
    Prepared { name: WORLD, sql: SELECT_WORLD, params: &[INT4_OID] },
    Prepared { name: ALL_WORLDS, sql: SELECT_ALL_WORLDS, params: &[] },
    Prepared { name: FORTUNES, sql: SELECT_FORTUNES, params: &[] },
    Prepared { name: UPDATE, sql: UPDATE_WORLDS, params: &[INT4_ARRAY_OID, INT4_ARRAY_OID] },
    Prepared { name: SLOW, sql: SELECT_WORLD_SLOWLY, params: &[INT4_OID, FLOAT8_OID] },
];

/// What every worker's connections are made from.
#[derive(Debug)]
pub(crate) struct PgSettings {
    pub(crate) config: Config,
    pub(crate) connections: usize,
    pub(crate) connect_timeout: Duration,
    pub(crate) long_query: Duration,
}

async fn establish(config: &Config) -> Result<PgConn, DbError> {
    let (stream, leftover) = open(config, &STATEMENTS).await?;
    Ok(PgConn::start(stream, leftover))
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
                State::Up(conn) if !conn.is_closed() => return Ok(Rc::clone(conn)),
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

    /// Passes a call's error on, marking the connection down when it is gone.
    fn failed(&self, conn: &Rc<PgConn>, e: DbError) -> DbError {
        if conn.is_closed() {
            let mut state = self.state.borrow_mut();
            if matches!(&*state, State::Up(c) if Rc::ptr_eq(c, conn)) {
                *state = State::Down { retry_at: Instant::now(), backoff: MIN_BACKOFF, reason: e.to_string() };
            }
        }
        e
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

/// The columns of a row, which must number `N` and none be `NULL`.
fn columns<const N: usize>(row: &DataRowBody) -> Result<[&[u8]; N], DbError> {
    let malformed = || DbError::Query(format!("PostgreSQL sent a row without the {N} expected columns"));
    let mut columns = [&[][..]; N];
    let mut ranges = row.ranges();
    for column in &mut columns {
        let range = ranges.next().ok().flatten().flatten().ok_or_else(malformed)?;
        *column = row.buffer().get(range).ok_or_else(malformed)?;
    }
    match ranges.next() {
        Ok(None) => Ok(columns),
        _ => Err(malformed()),
    }
}

fn int4(column: &[u8]) -> Result<i32, DbError> {
    postgres_protocol::types::int4_from_sql(column).map_err(|e| DbError::Query(format!("not an int4: {e}")))
}

fn world_from(row: &DataRowBody) -> Result<World, DbError> {
    let [id, random_number] = columns(row)?;
    Ok(World { id: int4(id)?, random_number: int4(random_number)? })
}

fn fortune_from(row: &DataRowBody) -> Result<Fortune, DbError> {
    let [id, message] = columns(row)?;
    let message = postgres_protocol::types::text_from_sql(message)
        .map_err(|e| DbError::Query(format!("a fortune that is not UTF-8: {e}")))?;
    Ok(Fortune { id: int4(id)?, message: message.to_owned() })
}

fn worlds_from(rows: &[DataRowBody]) -> Result<Vec<World>, DbError> {
    rows.iter().map(world_from).collect()
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

    /// Runs one call on this worker's next connection, marking it down if it broke.
    async fn run(&self, commit: Commit, build: impl Fn(&mut Batch<'_>)) -> Result<Vec<DataRowBody>, DbError> {
        let (slot, conn) = self.slot().await?;
        conn.call(commit, build).await.map_err(|e| slot.failed(&conn, e))
    }

    pub(crate) async fn world(&self, id: i32) -> Result<World, DbError> {
        let rows = self.run(Commit::Shared, |b| b.statement(WORLD, &[Param::Int(id)], Rows::One)).await?;
        rows.first().map_or_else(|| Err(DbError::Query(format!("world {id} is missing"))), world_from)
    }

    /// Reads each row with a statement of its own; the reads are pipelined.
    pub(crate) async fn worlds(&self, ids: &[i32]) -> Result<Vec<World>, DbError> {
        let rows = self
            .run(Commit::Shared, |b| ids.iter().for_each(|&id| b.statement(WORLD, &[Param::Int(id)], Rows::One)))
            .await?;
        worlds_from(&rows)
    }

    pub(crate) async fn all_worlds(&self) -> Result<Vec<World>, DbError> {
        let rows = self.run(Commit::Shared, |b| b.statement(ALL_WORLDS, &[], Rows::Any)).await?;
        worlds_from(&rows)
    }

    pub(crate) async fn fortunes(&self) -> Result<Vec<Fortune>, DbError> {
        let rows = self.run(Commit::Shared, |b| b.statement(FORTUNES, &[], Rows::Any)).await?;
        rows.iter().map(fortune_from).collect()
    }

    /// Reads each row of `worlds` with a statement of its own, then writes every new
    /// number in one statement; reads and write travel together and commit together.
    pub(crate) async fn update(&self, worlds: Vec<World>) -> Result<Vec<World>, DbError> {
        // Rows locked in id order by every request cannot deadlock one another.
        let mut sorted = worlds.clone();
        sorted.sort_unstable_by_key(|w| w.id);
        let ids: Vec<i32> = sorted.iter().map(|w| w.id).collect();
        let numbers: Vec<i32> = sorted.iter().map(|w| w.random_number).collect();
        let rows = self
            .run(Commit::Own, |b| {
                worlds.iter().for_each(|w| b.statement(WORLD, &[Param::Int(w.id)], Rows::One));
                b.statement(UPDATE, &[Param::Ints(&ids), Param::Ints(&numbers)], Rows::Any);
            })
            .await?;
        // The reads are TechEmpower's to make; what they saw is overwritten.
        worlds_from(&rows)?;
        Ok(worlds)
    }

    pub(crate) async fn mix(&self, id: i32, long: bool) -> Result<Vec<World>, DbError> {
        let (slot, conn) = self.slot().await?;
        let short = conn.call(Commit::Shared, |b| b.statement(WORLD, &[Param::Int(id)], Rows::One));
        let mut rows = Vec::with_capacity(2);
        if long {
            let secs = self.settings.long_query.as_secs_f64();
            let (long_slot, long_conn) = Self::take_turn(&self.long_slots, &self.next_long).await?;
            let slow =
                long_conn.call(Commit::Shared, |b| b.statement(SLOW, &[Param::Int(id), Param::Float(secs)], Rows::One));
            let (short, slow) = join(short, slow).await;
            rows.extend(worlds_from(&short.map_err(|e| slot.failed(&conn, e))?)?);
            rows.extend(worlds_from(&slow.map_err(|e| long_slot.failed(&long_conn, e))?)?);
        } else {
            rows.extend(worlds_from(&short.await.map_err(|e| slot.failed(&conn, e))?)?);
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
