//! One worker's PostgreSQL connections: the pipelined ones every statement shares,
//! those a transaction holds alone, and the native client, each reconnected with
//! backoff when it breaks.
//!
//! A connection that breaks is replaced on the next call after a backoff that
//! doubles up to [`MAX_BACKOFF`]; until then calls fail at once with
//! [`Error::Unavailable`] (a `503`), never hang and never panic.

use std::cell::{Cell, RefCell};
use std::rc::{Rc, Weak};
use std::sync::Arc;
use std::time::Duration;

use futures_util::FutureExt;
use futures_util::future::{LocalBoxFuture, Shared};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::time::Instant;

use super::Settings;
use super::depth::InFlight;
use super::pipeline::{Commit, PgConn};
use super::rows::field;
use super::startup::{connect, open};
use super::statement::{Statement, Statements};
use super::types::decode;
use crate::call::{Fetch, Write};
use crate::error::Error;
use crate::row::{FromRow, Row, RowSource};
use crate::value::{ToParam, Value};

/// Wait before the first reconnect attempt after a failed one.
const MIN_BACKOFF: Duration = Duration::from_millis(50);
/// Longest wait between two reconnect attempts.
pub(crate) const MAX_BACKOFF: Duration = Duration::from_secs(2);

/// A live connection and the statements prepared on it.
pub(crate) struct Conn {
    pipe: PgConn,
    statements: Statements,
}

impl Conn {
    /// `sql` prepared on this connection: from the cache, or parsed and described
    /// now (one round trip, the first time only).
    async fn statement(&self, sql: &str) -> Result<Rc<Statement>, Error> {
        if let Some(statement) = self.statements.get(sql) {
            return Ok(statement);
        }
        let name = self.statements.name();
        let answer = self.pipe.call(Commit::Own, |b| b.prepare(&name, sql)).await?;
        let statement =
            Rc::new(Statement { name, params: answer.description.params, columns: answer.description.columns });
        let evicted = self.statements.remember(sql, Rc::clone(&statement));
        if !evicted.is_empty() {
            self.pipe.send(|b| evicted.iter().for_each(|name| b.close(name)));
        }
        Ok(statement)
    }

    async fn fetch<T: FromRow>(
        &self,
        commit: Commit,
        sql: &str,
        params: &[&dyn ToParam],
        fetch: Fetch,
    ) -> Result<Vec<T>, Error> {
        let statement = self.statement(sql).await?;
        let answer = self.pipe.call(commit, |b| b.execute(&statement, params)).await?;
        let take = if fetch == Fetch::First { 1 } else { answer.rows.len() };
        // Sized up front: collecting a `Result` iterator starts from nothing and grows.
        let mut rows = Vec::with_capacity(take.min(answer.rows.len()));
        for fields in answer.rows.iter().take(take) {
            rows.push(T::from_row(&Row::new(&PgRow { fields, statement: &statement }))?);
        }
        self.pipe.keep_rows(answer.rows);
        Ok(rows)
    }

    async fn write(&self, sql: &str, params: &[&dyn ToParam], write: Write) -> Result<i64, Error> {
        match write {
            Write::Execute => {
                let statement = self.statement(sql).await?;
                let answer = self.pipe.call(Commit::Own, |b| b.execute(&statement, params)).await?;
                Ok(answer.affected as i64)
            }
            Write::Insert => {
                let sql = if contains_returning(sql) { sql.to_owned() } else { format!("{sql} RETURNING id") };
                let mut ids: Vec<(i64,)> = self.fetch(Commit::Own, &sql, params, Fetch::First).await?;
                ids.pop().map(|(id,)| id).ok_or(Error::NotFound)
            }
        }
    }

    /// Runs one of `BEGIN`, `COMMIT`, `ROLLBACK`; `true` if the server answered
    /// `ROLLBACK`.
    async fn control(&self, sql: &str) -> Result<bool, Error> {
        let statement = self.statement(sql).await?;
        Ok(self.pipe.call(Commit::Own, |b| b.execute(&statement, &[])).await?.rollback)
    }
}

fn contains_returning(sql: &str) -> bool {
    sql.to_ascii_lowercase().split(|c: char| !c.is_ascii_alphanumeric() && c != '_').any(|w| w == "returning")
}

/// A row of a pipelined answer, its columns described by its statement.
struct PgRow<'a> {
    /// The `DataRow`'s fields.
    fields: &'a [u8],
    statement: &'a Statement,
}

impl RowSource for PgRow<'_> {
    fn index_of(&self, name: &str) -> Option<usize> {
        // A field names its column as the SQL spells it, nearly always: try the exact
        // name first, a byte comparison, and only then ignore case as SQL does.
        let columns = &self.statement.columns;
        columns
            .iter()
            .position(|c| c.name == name)
            .or_else(|| columns.iter().position(|c| c.name.eq_ignore_ascii_case(name)))
    }

    fn len(&self) -> usize {
        self.statement.columns.len()
    }

    fn value(&self, index: usize) -> Result<Value<'_>, String> {
        let column = &self.statement.columns[index];
        decode(column.oid, column.format, field(self.fields, index)?)
    }

    fn names(&self) -> Vec<String> {
        self.statement.columns.iter().map(|c| c.name.clone()).collect()
    }
}

type Connecting = Shared<LocalBoxFuture<'static, Result<Rc<Conn>, Error>>>;

enum State {
    Up(Rc<Conn>),
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
    settings: Arc<Settings>,
    state: RefCell<State>,
}

impl Slot {
    fn new(settings: &Arc<Settings>) -> Rc<Slot> {
        let state = State::Down { retry_at: Instant::now(), backoff: MIN_BACKOFF, reason: String::new() };
        Rc::new(Slot { settings: Arc::clone(settings), state: RefCell::new(state) })
    }

    async fn conn(self: &Rc<Self>) -> Result<Rc<Conn>, Error> {
        let pending = {
            let mut state = self.state.borrow_mut();
            let backoff = match &*state {
                State::Up(conn) if !conn.pipe.is_closed() => return Ok(Rc::clone(conn)),
                State::Up(_) => Ok(Duration::ZERO),
                State::Connecting(pending) => Err(pending.clone()),
                State::Down { retry_at, reason, .. } if Instant::now() < *retry_at => {
                    let wait = retry_at.saturating_duration_since(Instant::now()).as_millis();
                    return Err(Error::Unavailable(format!("{reason}; next attempt in {wait} ms")));
                }
                State::Down { backoff, .. } => Ok(*backoff),
            };
            match backoff {
                Err(pending) => pending,
                Ok(backoff) => {
                    let attempt =
                        reconnect(Rc::downgrade(self), Arc::clone(&self.settings), backoff).boxed_local().shared();
                    *state = State::Connecting(attempt.clone());
                    attempt
                }
            }
        };
        pending.await
    }

    /// Passes a call's error on, marking the connection down when it is gone.
    fn failed(&self, conn: &Rc<Conn>, e: Error) -> Error {
        if conn.pipe.is_closed() {
            let mut state = self.state.borrow_mut();
            if matches!(&*state, State::Up(c) if Rc::ptr_eq(c, conn)) {
                *state = State::Down { retry_at: Instant::now(), backoff: MIN_BACKOFF, reason: reason(&e) };
            }
        }
        e
    }
}

/// Why a connection is down, without the "database unavailable" its error says.
fn reason(e: &Error) -> String {
    match e {
        Error::Unavailable(why) => why.clone(),
        other => other.to_string(),
    }
}

async fn establish(settings: &Settings) -> Result<Conn, Error> {
    let (stream, leftover) = open(&settings.config, &settings.tls, settings.server_options.as_deref()).await?;
    Ok(Conn { pipe: PgConn::start(stream, leftover), statements: Statements::default() })
}

async fn reconnect(slot: Weak<Slot>, settings: Arc<Settings>, backoff: Duration) -> Result<Rc<Conn>, Error> {
    let result = match tokio::time::timeout(settings.connect_timeout, establish(&settings)).await {
        Ok(result) => result.map(Rc::new),
        Err(_) => Err(Error::Unavailable("connecting to PostgreSQL timed out".into())),
    };
    if let Some(slot) = slot.upgrade() {
        *slot.state.borrow_mut() = match &result {
            Ok(conn) => State::Up(Rc::clone(conn)),
            Err(e) => State::Down {
                retry_at: Instant::now() + backoff,
                backoff: (backoff * 2).clamp(MIN_BACKOFF, MAX_BACKOFF),
                reason: reason(e),
            },
        };
    }
    result
}

/// One worker's connections.
pub(crate) struct Worker {
    settings: Arc<Settings>,
    slots: Vec<Rc<Slot>>,
    next: Cell<usize>,
    /// Connections for transactions, one transaction on each at a time.
    transaction_slots: Vec<Rc<Slot>>,
    /// Which transaction slots are free.
    free: Rc<RefCell<Vec<usize>>>,
    /// A permit per free transaction slot, so that a transaction waits for one.
    permits: Arc<Semaphore>,
    native: RefCell<Option<Rc<tokio_postgres::Client>>>,
    /// This worker's calls in flight, for [`Settings::queued_calls`].
    in_flight: Arc<std::sync::atomic::AtomicUsize>,
}

impl Worker {
    pub(crate) fn new(settings: Arc<Settings>) -> Self {
        let slots = (0..settings.connections).map(|_| Slot::new(&settings)).collect();
        let n = settings.transaction_connections;
        Worker {
            transaction_slots: (0..n).map(|_| Slot::new(&settings)).collect(),
            free: Rc::new(RefCell::new((0..n).rev().collect())),
            permits: Arc::new(Semaphore::new(n)),
            slots,
            next: Cell::new(0),
            native: RefCell::new(None),
            in_flight: settings.depths.register(),
            settings,
        }
    }

    async fn slot(&self) -> Result<(&Rc<Slot>, Rc<Conn>), Error> {
        let i = self.next.get();
        self.next.set((i + 1) % self.slots.len());
        let slot = &self.slots[i];
        Ok((slot, slot.conn().await?))
    }

    pub(crate) async fn query<T: FromRow>(
        &self,
        sql: &str,
        params: &[&dyn ToParam],
        fetch: Fetch,
    ) -> Result<Vec<T>, Error> {
        let _counted = InFlight::new(&self.in_flight);
        let (slot, conn) = self.slot().await?;
        conn.fetch(Commit::Shared, sql, params, fetch).await.map_err(|e| slot.failed(&conn, e))
    }

    pub(crate) async fn write(&self, sql: &str, params: &[&dyn ToParam], write: Write) -> Result<i64, Error> {
        let _counted = InFlight::new(&self.in_flight);
        let (slot, conn) = self.slot().await?;
        conn.write(sql, params, write).await.map_err(|e| slot.failed(&conn, e))
    }

    /// Starts a transaction on a connection of its own, waiting for one to be free.
    pub(crate) async fn begin(&self) -> Result<Tx, Error> {
        // Counted while it waits for a connection of its own, not while it is held.
        let counted = InFlight::new(&self.in_flight);
        let permit = Arc::clone(&self.permits)
            .acquire_owned()
            .await
            .map_err(|_| Error::Unavailable("no transaction connection".into()))?;
        let index =
            self.free.borrow_mut().pop().ok_or_else(|| Error::Unavailable("no transaction connection".into()))?;
        let held = Held { free: Rc::clone(&self.free), index, _permit: permit };
        let slot = Rc::clone(&self.transaction_slots[index]);
        let conn = slot.conn().await?;
        conn.control("BEGIN").await.map_err(|e| slot.failed(&conn, e))?;
        drop(counted);
        Ok(Tx { slot, conn, _held: held, open: Cell::new(true) })
    }

    /// The native client, opened on first use and after it breaks.
    pub(crate) async fn native(&self) -> Result<Rc<tokio_postgres::Client>, Error> {
        if let Some(client) = self.native.borrow().as_ref().filter(|c| !c.is_closed()) {
            return Ok(Rc::clone(client));
        }
        let stream = connect(&self.settings.config, &self.settings.tls).await?;
        let mut config = self.settings.config.clone();
        // TLS, if any, is already on `stream`.
        config.ssl_mode(tokio_postgres::config::SslMode::Disable);
        if let Some(options) = &self.settings.server_options {
            config.options(options);
        }
        let (client, connection) = config
            .connect_raw(stream, tokio_postgres::NoTls)
            .await
            .map_err(|e| Error::Unavailable(format!("PostgreSQL: {e}")))?;
        tokio::task::spawn_local(connection);
        let client = Rc::new(client);
        *self.native.borrow_mut() = Some(Rc::clone(&client));
        Ok(client)
    }
}

/// Gives a transaction connection back when the transaction ends.
struct Held {
    free: Rc<RefCell<Vec<usize>>>,
    index: usize,
    _permit: OwnedSemaphorePermit,
}

impl Drop for Held {
    fn drop(&mut self) {
        self.free.borrow_mut().push(self.index);
    }
}

/// A transaction on a connection it holds alone. Dropped while open, it sends a
/// `ROLLBACK` ahead of anything the next holder of the connection sends.
pub(crate) struct Tx {
    slot: Rc<Slot>,
    conn: Rc<Conn>,
    _held: Held,
    open: Cell<bool>,
}

impl Tx {
    pub(crate) async fn query<T: FromRow>(
        &self,
        sql: &str,
        params: &[&dyn ToParam],
        fetch: Fetch,
    ) -> Result<Vec<T>, Error> {
        self.conn.fetch(Commit::Own, sql, params, fetch).await.map_err(|e| self.slot.failed(&self.conn, e))
    }

    pub(crate) async fn write(&self, sql: &str, params: &[&dyn ToParam], write: Write) -> Result<i64, Error> {
        self.conn.write(sql, params, write).await.map_err(|e| self.slot.failed(&self.conn, e))
    }

    pub(crate) async fn commit(self) -> Result<(), Error> {
        let rolled_back = self.conn.control("COMMIT").await.map_err(|e| self.slot.failed(&self.conn, e))?;
        self.open.set(false);
        // The server answers `COMMIT` of a failed transaction with `ROLLBACK`.
        if rolled_back {
            return Err(Error::Query {
                code: Some("25P02".into()),
                message: "the transaction was rolled back: a statement in it failed".into(),
            });
        }
        Ok(())
    }

    pub(crate) fn rollback(self) {
        drop(self);
    }
}

impl Drop for Tx {
    fn drop(&mut self) {
        if !self.open.get() {
            return;
        }
        match self.conn.statements.get("ROLLBACK") {
            Some(rollback) => self.conn.pipe.send(|b| b.execute(&rollback, &[])),
            // Never prepared on this connection: prepare it in the same breath.
            None => {
                let name = self.conn.statements.name();
                self.conn.pipe.send(|b| {
                    b.prepare(&name, "ROLLBACK");
                    b.execute(&Statement { name: name.clone(), params: Vec::new(), columns: Vec::new() }, &[]);
                });
            }
        }
    }
}
