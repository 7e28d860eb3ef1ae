//! [`PgConn`]: a pipelined connection as the calls see it. A call's statements are
//! encoded straight into the write buffer ([`Batch`]), closed by a `Sync` of their own
//! or left to share one, and the call waits for the `ReadyForQuery` that answers it.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::future::poll_fn;
use std::rc::Rc;
use std::task::Poll;

use bytes::BytesMut;
use postgres_protocol::message::frontend;
use tokio::task::JoinHandle;

use super::drive::drive;
use super::{Answer, Commit, Expect, READ_CHUNK, Shared, Syncs, push_sync};
use crate::error::Error;
use crate::postgres::call::{Call, Kept};
use crate::postgres::rows::Rows;
use crate::postgres::statement::Statement;
use crate::postgres::stream::Stream;
use crate::postgres::types::{encode, param_format};
use crate::value::ToParam;

/// Statements that may wait for the server's answers on one connection; past this a
/// call fails at once with `503` instead of queueing without bound while the server
/// is stuck (calls that time out leave their statements behind).
pub(crate) const MAX_PENDING: usize = 64 * 1024;
/// How often a call rolled back for another call's failure is sent again.
const ROLLED_BACK_RETRIES: usize = 3;

/// A pipelined connection; dropping it closes the socket.
pub(crate) struct PgConn {
    pub(super) shared: Rc<RefCell<Shared>>,
    driver: JoinHandle<()>,
}

impl Drop for PgConn {
    fn drop(&mut self) {
        self.driver.abort();
    }
}

/// The statements of one call, as they are queued.
pub(crate) struct Batch<'a> {
    out: &'a mut BytesMut,
    expected: &'a mut VecDeque<Expect>,
    call: &'a Rc<Call>,
}

impl Batch<'_> {
    /// Queues `sql` to be prepared as `name`, and described.
    pub(crate) fn prepare(&mut self, name: &str, sql: &str) {
        let start = self.out.len();
        if frontend::parse(name, sql, std::iter::empty(), self.out).is_err() {
            self.out.truncate(start);
            self.call.fail(Error::Query { code: None, message: "the statement has a NUL byte".into() });
            return;
        }
        frontend::describe(b'S', name, self.out).expect("a statement name has no NUL byte");
        self.expected.push_back(Expect::Describe(Rc::clone(self.call)));
    }

    /// Queues the closing of the prepared statement `name`.
    pub(crate) fn close(&mut self, name: &str) {
        frontend::close(b'S', name, self.out).expect("a statement name has no NUL byte");
    }

    /// Queues the prepared `statement` with these parameters, all rows.
    pub(crate) fn execute(&mut self, statement: &Statement, params: &[&dyn ToParam]) {
        if params.len() != statement.params.len() {
            self.call.fail(Error::Param {
                index: params.len().min(statement.params.len()) + 1,
                message: format!("the statement takes {} parameters, {} given", statement.params.len(), params.len()),
            });
            return;
        }
        let start = self.out.len();
        let mut failed = None;
        let formats = params.iter().zip(&statement.params).map(|(p, &oid)| param_format(p.to_param(), oid));
        let encoded = frontend::bind(
            "",
            &statement.name,
            formats,
            params.iter().zip(&statement.params).enumerate(),
            |(i, (param, &oid)), buf| {
                encode(param.to_param(), oid, buf).map_err(|message| {
                    failed = Some(Error::Param { index: i + 1, message });
                    "unencodable".into()
                })
            },
            statement.columns.iter().map(|c| c.format),
            self.out,
        );
        if encoded.is_err() {
            self.out.truncate(start);
            self.call.fail(failed.unwrap_or_else(|| Error::Param {
                index: params.len(),
                message: "past the protocol's limits (65,535 parameters, 1 GiB)".into(),
            }));
            return;
        }
        // The unnamed portal, all rows; cannot fail for an empty name.
        let _ = frontend::execute("", 0, self.out);
        self.expected.push_back(Expect::Statement(Rc::clone(self.call)));
    }
}

impl PgConn {
    /// Takes over a connection that is started and authenticated.
    pub(crate) fn start(stream: Stream, leftover: BytesMut) -> PgConn {
        let shared = Rc::new(RefCell::new(Shared {
            out: BytesMut::with_capacity(READ_CHUNK),
            unsynced: Vec::new(),
            expected: VecDeque::new(),
            rolled_back: false,
            commit_failed: None,
            driver: None,
            closed: None,
            syncs: Syncs::default(),
            kept: Kept::default(),
        }));
        let driver = tokio::task::spawn_local(drive(Rc::clone(&shared), stream, leftover));
        PgConn { shared, driver }
    }

    /// Whether the connection is gone (the server closed it or it broke).
    pub(crate) fn is_closed(&self) -> bool {
        self.shared.borrow().closed.is_some() || self.driver.is_finished()
    }

    /// Queues the statements `build` adds and waits for their answer, committed.
    pub(crate) async fn call(&self, commit: Commit, build: impl Fn(&mut Batch<'_>)) -> Result<Answer, Error> {
        let mut retries = ROLLED_BACK_RETRIES;
        loop {
            let call = self.submit(commit, &build)?;
            poll_fn(|cx| {
                if call.done.get() {
                    return Poll::Ready(());
                }
                let mut waker = call.waker.borrow_mut();
                if !waker.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
                    *waker = Some(cx.waker().clone());
                }
                Poll::Pending
            })
            .await;
            if let Some(error) = call.error.borrow_mut().take() {
                return Err(error);
            }
            if !call.rolled_back.get() {
                let mut shared = self.shared.borrow_mut();
                // A call without rows (a write, a prepare) gives its buffer straight
                // back; one with rows gives it back once they are read (`keep_rows`).
                let mut rows = call.rows.take();
                if rows.len() == 0 {
                    shared.kept.keep_rows(std::mem::take(&mut rows));
                }
                let answer = Answer {
                    rows,
                    affected: call.affected.get(),
                    rollback: call.rollback.get(),
                    description: call.description.take(),
                };
                shared.kept.keep_call(call);
                return Ok(answer);
            }
            if retries == 0 {
                return Err(Error::Query {
                    code: None,
                    message: "rolled back again and again because other statements failed".into(),
                });
            }
            retries -= 1;
        }
    }

    /// Queues the statements `build` adds and does not wait for them (a rollback
    /// sent by a dropped transaction).
    pub(crate) fn send(&self, build: impl Fn(&mut Batch<'_>)) {
        let _ = self.submit(Commit::Own, &build);
    }

    /// Keeps the buffer of an answer whose rows have been read, for a later call.
    pub(crate) fn keep_rows(&self, rows: Rows) {
        self.shared.borrow_mut().kept.keep_rows(rows);
    }

    fn submit(&self, commit: Commit, build: &impl Fn(&mut Batch<'_>)) -> Result<Rc<Call>, Error> {
        let mut shared = self.shared.borrow_mut();
        if let Some(why) = &shared.closed {
            return Err(Error::Unavailable(format!("lost the connection to PostgreSQL: {why}")));
        }
        if shared.expected.len() >= MAX_PENDING {
            let waiting = shared.expected.len();
            return Err(Error::Unavailable(format!(
                "PostgreSQL is not keeping up: {waiting} statements wait for its answers on this connection"
            )));
        }
        let call = shared.kept.call();
        let Shared { out, unsynced, expected, driver, syncs, .. } = &mut *shared;
        let was_idle = out.is_empty();
        if commit == Commit::Own && !unsynced.is_empty() {
            push_sync(out, expected, syncs, std::mem::take(unsynced));
        }
        let (start, queued) = (out.len(), expected.len());
        build(&mut Batch { out, expected, call: &call });
        if let Some(error) = call.error.borrow_mut().take() {
            // Refused before anything was sent: nothing of it may stay queued.
            out.truncate(start);
            expected.truncate(queued);
            return Err(error);
        }
        match commit {
            Commit::Shared => unsynced.push(Rc::clone(&call)),
            Commit::Own => push_sync(out, expected, syncs, vec![Rc::clone(&call)]),
        }
        if was_idle && let Some(driver) = driver {
            driver.wake_by_ref();
        }
        Ok(call)
    }
}
