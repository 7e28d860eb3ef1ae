//! One worker's way to the SQLite threads, and a transaction holding the writer.

use std::cell::{Cell, RefCell};
use std::collections::HashSet;
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, SyncSender, channel};
use std::time::Duration;

use rusqlite::Connection;
use tokio::sync::oneshot;

use super::exec::{self, Param, WRITES};
use super::pool::{Job, Pool, send};
use crate::call::{Fetch, Write};
use crate::error::Error;
use crate::row::FromRow;
use crate::value::ToParam;

/// Statements a worker remembers as writing (sent straight to the writer); past
/// this many the memory is cleared rather than grown.
const REMEMBERED_WRITES: usize = 1024;

/// Runs `f` on the thread behind `to`; the worker awaits the answer without blocking.
async fn call<T, F>(to: &SyncSender<Job>, f: F) -> Result<T, Error>
where
    T: Send + 'static,
    F: FnOnce(&mut Connection) -> Result<T, Error> + Send + 'static,
{
    let (tx, rx) = oneshot::channel();
    send(to, Box::new(move |conn| drop(tx.send(f(conn)))))?;
    rx.await.map_err(|_| Error::Unavailable("the SQLite thread failed".into()))?
}

/// A reader's answer: rows, or the statement handed back because it writes.
enum Read<T> {
    Done(Result<Vec<T>, Error>),
    Writes(String, Vec<Param>),
}

/// One worker's view of the pool: reads spread over the readers in turn, writes to
/// the writer.
pub(crate) struct Worker {
    pool: Pool,
    next: Cell<usize>,
    writes: RefCell<HashSet<String>>,
}

impl Worker {
    pub(crate) fn new(pool: Pool) -> Self {
        Worker { pool, next: Cell::new(0), writes: RefCell::new(HashSet::new()) }
    }

    fn reader(&self) -> &SyncSender<Job> {
        let i = self.next.get();
        self.next.set((i + 1) % self.pool.readers.len());
        &self.pool.readers[i]
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
            let read = call(self.reader(), move |conn| {
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
        call(&self.pool.writer, move |conn| exec::query(conn, &sql, &params, fetch, false)).await
    }

    pub(crate) async fn write(&self, sql: &str, params: &[&dyn ToParam], write: Write) -> Result<i64, Error> {
        let (sql, params) = (sql.to_owned(), exec::params(params)?);
        call(&self.pool.writer, move |conn| exec::write(conn, &sql, &params, write)).await
    }

    pub(crate) async fn native<T, F>(&self, f: F) -> Result<T, Error>
    where
        T: Send + 'static,
        F: FnOnce(&mut Connection) -> rusqlite::Result<T> + Send + 'static,
    {
        call(&self.pool.writer, move |conn| f(conn).map_err(exec::error)).await
    }

    /// Starts a transaction on the writer; it serves nothing else until the
    /// transaction ends, or until it has waited `idle` for the next statement.
    pub(crate) async fn begin(&self, idle: Duration) -> Result<Tx, Error> {
        let (ops, inbox) = channel::<Op>();
        let (ready, begun) = oneshot::channel();
        send(&self.pool.writer, Box::new(move |conn| hold(conn, &inbox, ready, idle)))?;
        begun.await.map_err(|_| Error::Unavailable("the SQLite thread failed".into()))??;
        Ok(Tx { ops })
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
