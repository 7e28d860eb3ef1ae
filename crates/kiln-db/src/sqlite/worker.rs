//! One worker's way to the SQLite threads, and a transaction holding the writer.

use std::cell::{Cell, RefCell};
use std::collections::HashSet;
use std::rc::Rc;
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, channel};
use std::time::Duration;

use rusqlite::Connection;
use tokio::sync::oneshot;
use tokio::task::Id as TaskId;

use super::batch::Outboxes;
use super::exec::{self, Param, WRITES};
use super::pool::{Job, Pool};
use crate::call::{Fetch, Write};
use crate::error::Error;
use crate::row::FromRow;
use crate::value::ToParam;

/// Statements a worker remembers as writing (sent straight to the writer); past
/// this many the memory is cleared rather than grown.
const REMEMBERED_WRITES: usize = 1024;

/// A reader's answer: rows, or the statement handed back because it writes.
enum Read<T> {
    Done(Result<Vec<T>, Error>),
    Writes(String, Vec<Param>),
}

/// One worker's view of the pool: reads spread over the readers in turn, writes to
/// the writer.
pub(crate) struct Worker {
    pool: Pool,
    /// The writer's outbox, then the readers'.
    outboxes: Outboxes,
    next: Cell<usize>,
    writes: RefCell<HashSet<String>>,
    /// The task of this worker whose transaction holds the writer, if one does: a
    /// write it sends around its transaction would queue behind it and wait for itself.
    holder: Rc<Cell<Option<TaskId>>>,
}

/// The writer's place among the outboxes.
const WRITER: usize = 0;

impl Worker {
    pub(crate) fn new(pool: Pool) -> Self {
        let outboxes = Outboxes::new(pool.writer.clone(), pool.readers.iter().cloned());
        Worker {
            outboxes,
            pool,
            next: Cell::new(0),
            writes: RefCell::new(HashSet::new()),
            holder: Rc::new(Cell::new(None)),
        }
    }

    /// Refuses a call for the writer from the task whose transaction holds it.
    fn not_from_the_holder(&self) -> Result<(), Error> {
        match tokio::task::try_id() {
            Some(me) if self.holder.get() == Some(me) => Err(Error::WaitsForItself),
            _ => Ok(()),
        }
    }

    /// A reader's outbox: the one this turn's reads are gathering in, or else the
    /// next reader's, so that one turn's reads make one batch and the turns take
    /// the readers in turn.
    fn reader(&self) -> usize {
        let current = self.next.get();
        if self.outboxes.is_gathering(current + 1) {
            return current + 1;
        }
        let next = (current + 1) % self.pool.readers.len();
        self.next.set(next);
        next + 1
    }

    pub(crate) async fn query<T: FromRow + Send + 'static>(
        &self,
        sql: &str,
        params: &[&dyn ToParam],
        fetch: Fetch,
    ) -> Result<Vec<T>, Error> {
        let (sql, params) = (sql.to_owned(), exec::params(params)?);
        let (sql, params) = if self.writes.borrow().contains(&sql) {
            (sql, params)
        } else {
            let read = self
                .outboxes
                .call(self.reader(), move |conn| {
                    Ok(match exec::query(conn, &sql, &params, fetch, true) {
                        Err(Error::Query { code: None, message }) if message == WRITES => Read::Writes(sql, params),
                        done => Read::Done(done),
                    })
                })
                .await?;
            match read {
                Read::Done(rows) => return rows,
                Read::Writes(sql, params) => {
                    let mut writes = self.writes.borrow_mut();
                    if writes.len() >= REMEMBERED_WRITES {
                        writes.clear();
                    }
                    writes.insert(sql.clone());
                    (sql, params)
                }
            }
        };
        self.not_from_the_holder()?;
        self.outboxes.call(WRITER, move |conn| exec::query(conn, &sql, &params, fetch, false)).await
    }

    pub(crate) async fn write(&self, sql: &str, params: &[&dyn ToParam], write: Write) -> Result<i64, Error> {
        self.not_from_the_holder()?;
        let (sql, params) = (sql.to_owned(), exec::params(params)?);
        self.outboxes.call(WRITER, move |conn| exec::write(conn, &sql, &params, write)).await
    }

    pub(crate) async fn native<T, F>(&self, f: F) -> Result<T, Error>
    where
        T: Send + 'static,
        F: FnOnce(&mut Connection) -> rusqlite::Result<T> + Send + 'static,
    {
        self.not_from_the_holder()?;
        self.outboxes.call(WRITER, move |conn| f(conn).map_err(exec::error)).await
    }

    /// Starts a transaction on the writer; it serves nothing else until the
    /// transaction ends, or until it has waited `idle` for the next statement.
    pub(crate) async fn begin(&self, idle: Duration) -> Result<Tx, Error> {
        self.not_from_the_holder()?;
        let (ops, inbox) = channel::<Op>();
        let (ready, begun) = oneshot::channel();
        self.pool.writer.send(1, Box::new(move |conn| hold(conn, &inbox, ready, idle)))?;
        begun.await.map_err(|_| Error::Unavailable("the SQLite thread failed".into()))??;
        let task = tokio::task::try_id();
        self.holder.set(task);
        Ok(Tx { ops, _holding: Holding { holder: Rc::clone(&self.holder), task } })
    }
}

/// What a transaction sends to the writer it holds.
enum Op {
    Run(Job),
    Commit(oneshot::Sender<Result<(), Error>>),
}

/// The writer's side of a transaction: runs its statements, and nothing else, until
/// it commits; rolls back if the [`Tx`] is dropped or falls silent for `idle`.
fn hold(conn: &mut Connection, inbox: &Receiver<Op>, ready: oneshot::Sender<Result<(), Error>>, idle: Duration) {
    if let Err(e) = conn.execute_batch("BEGIN IMMEDIATE") {
        let _ = ready.send(Err(exec::error(e)));
        return;
    }
    let _ = ready.send(Ok(()));
    loop {
        match inbox.recv_timeout(idle) {
            Ok(Op::Run(job)) => job(conn),
            Ok(Op::Commit(reply)) => {
                let committed = conn.execute_batch("COMMIT").map_err(exec::error);
                if committed.is_err() {
                    let _ = conn.execute_batch("ROLLBACK");
                }
                let _ = reply.send(committed);
                return;
            }
            Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => {
                let _ = conn.execute_batch("ROLLBACK");
                return;
            }
        }
    }
}

/// A transaction holding the SQLite writer. Dropping it rolls back.
pub(crate) struct Tx {
    ops: Sender<Op>,
    /// Held for its `Drop`: the writer is this task's until the transaction ends.
    _holding: Holding,
}

/// Marks the worker's writer as held by a task until the transaction ends (dropped,
/// or committed, which consumes it).
struct Holding {
    holder: Rc<Cell<Option<TaskId>>>,
    task: Option<TaskId>,
}

impl Drop for Holding {
    fn drop(&mut self) {
        if self.holder.get() == self.task {
            self.holder.set(None);
        }
    }
}

impl Tx {
    async fn run<T, F>(&self, f: F) -> Result<T, Error>
    where
        T: Send + 'static,
        F: FnOnce(&mut Connection) -> Result<T, Error> + Send + 'static,
    {
        let (tx, rx) = oneshot::channel();
        let job: Job = Box::new(move |conn| drop(tx.send(f(conn))));
        self.ops.send(Op::Run(job)).map_err(|_| Error::Unavailable("the transaction has ended".into()))?;
        rx.await.map_err(|_| Error::Unavailable("the transaction has ended".into()))?
    }

    pub(crate) async fn query<T: FromRow + Send + 'static>(
        &self,
        sql: &str,
        params: &[&dyn ToParam],
        fetch: Fetch,
    ) -> Result<Vec<T>, Error> {
        let (sql, params) = (sql.to_owned(), exec::params(params)?);
        self.run(move |conn| exec::query(conn, &sql, &params, fetch, false)).await
    }

    pub(crate) async fn write(&self, sql: &str, params: &[&dyn ToParam], write: Write) -> Result<i64, Error> {
        let (sql, params) = (sql.to_owned(), exec::params(params)?);
        self.run(move |conn| exec::write(conn, &sql, &params, write)).await
    }

    pub(crate) async fn commit(self) -> Result<(), Error> {
        let (reply, committed) = oneshot::channel();
        self.ops.send(Op::Commit(reply)).map_err(|_| Error::Unavailable("the transaction has ended".into()))?;
        committed.await.map_err(|_| Error::Unavailable("the transaction has ended".into()))?
    }
}
