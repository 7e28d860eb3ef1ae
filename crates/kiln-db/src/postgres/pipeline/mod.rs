//! One PostgreSQL connection, pipelined, owned by one worker thread.
//!
//! Why not one round trip, transaction and flush per statement, as a conventional
//! driver does: the server ends every `Sync` with a commit and a flush of its
//! socket, and on loopback that flush costs the server more than a primary-key
//! read. Measured on this project's machine (PostgreSQL 15): a `Sync` per query
//! costs the server about 30 µs a query, a `Sync` per 20 queries about 13 µs.
//!
//! So statements are encoded straight into the connection's write buffer, and a
//! `Sync` is added only where one is needed:
//! - [`Commit::Shared`] (queries): the statements queued before the driver next
//!   writes share one `Sync`, and so one implicit transaction; each is still its own
//!   statement with its own rows.
//! - [`Commit::Own`] (writes, and everything on a transaction's connection): its own
//!   `Sync`, so its commit is its own.
//!
//! And at most two batches are out at once, one the server works on and the next
//! waiting in its socket: what is queued meanwhile waits, and goes with one `Sync` when
//! the first is answered. Written as soon as each turn of the worker queued something,
//! batches were about three queries under load; held, they grow with the load by
//! themselves (a lone query still goes at once). On this machine that took the
//! server's cost of a primary-key read from about 3.9 to 3.2 µs, and a page making one
//! such read from about 87,000 to 97,000 requests a second. Two out rather than one let
//! the next batch wait in the server's socket while it works on the last: that page
//! about 3 % faster again (seven alternated probe runs), one reading twelve rows the same.
//!
//! Every call is answered only once the server has reported its `Sync` done, so
//! what it returns is committed. When a statement fails, the server rolls back the
//! rest of its implicit transaction: the failing call gets the error, and the other
//! calls of that transaction, rolled back for a neighbour's failure, are sent again
//! (up to [`ROLLED_BACK_RETRIES`] times); a commit that fails as a whole (a deferred
//! constraint) fails every call in it.
//!
//! A driver task (`spawn_local`, no locks, no channels) writes whatever is queued
//! and hands each answer to the call waiting for it, in order. When the connection
//! breaks, every waiting call fails at once with [`Error::Unavailable`].
//!
//! Here: what the calls and the driver share (the queue of what the server owes, the
//! `Sync`s out). `conn`: [`PgConn`], how a call's statements are queued and its answer
//! awaited; `drive`: the driver task, which writes and reads the socket; `dispatch`:
//! the server's messages handed to the calls they answer.

mod conn;
mod dispatch;
mod drive;
#[cfg(test)]
mod tests;

use std::collections::VecDeque;
use std::rc::Rc;
use std::task::Waker;

use bytes::BytesMut;
use postgres_protocol::message::frontend;

use super::call::{Call, Description, Kept};
use super::rows::Rows;
use crate::error::Error;

pub(crate) use self::conn::PgConn;
pub(crate) use self::dispatch::{next_message, server_error};

/// Bytes read from the socket at once.
const READ_CHUNK: usize = 16 * 1024;

/// How a call's statements are committed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Commit {
    /// May share a `Sync` (one implicit transaction) with other calls.
    Shared,
    /// A `Sync` of its own.
    Own,
}

/// What the server still owes, in the order it will answer.
enum Expect {
    /// `ParseComplete`, `ParameterDescription`, then `RowDescription` or `NoData`.
    Describe(Rc<Call>),
    /// `BindComplete`, `DataRow`s, `CommandComplete`, or an `ErrorResponse`.
    Statement(Rc<Call>),
    /// `ReadyForQuery`: the calls it answers.
    Sync(Vec<Rc<Call>>),
}

/// The state of one connection, shared by the calls and the driver of one thread.
struct Shared {
    out: BytesMut,
    /// [`Commit::Shared`] calls in `out` that no `Sync` closes yet.
    unsynced: Vec<Rc<Call>>,
    expected: VecDeque<Expect>,
    /// A statement failed since the last `ReadyForQuery`: the rest of its
    /// transaction was rolled back.
    rolled_back: bool,
    /// The commit itself failed, with this error.
    commit_failed: Option<Error>,
    driver: Option<Waker>,
    /// Why the connection is gone, once it is.
    closed: Option<String>,
    syncs: Syncs,
    kept: Kept,
}

/// The `Sync`s the server owes a `ReadyForQuery` for, and how many of them are still
/// in `out`: the difference is what the server is working on.
#[derive(Debug, Default)]
struct Syncs {
    expected: usize,
    unsent: usize,
    /// `out` was written in part; the rest goes out before anything else waits.
    writing: bool,
}

/// `Sync`s that may be out at once (see the module's documentation).
const SYNCS_OUT: usize = 2;

impl Syncs {
    /// Whether what is queued may go: the server is on its last `Sync`, or idle.
    fn may_send(&self) -> bool {
        self.expected - self.unsent < SYNCS_OUT
    }
}

/// Closes what `out` holds with a `Sync`, whose `ReadyForQuery` answers `calls`.
fn push_sync(out: &mut BytesMut, expected: &mut VecDeque<Expect>, syncs: &mut Syncs, calls: Vec<Rc<Call>>) {
    frontend::sync(out);
    expected.push_back(Expect::Sync(calls));
    syncs.expected += 1;
    syncs.unsent += 1;
}

/// What a finished call returns.
#[derive(Debug, Default)]
pub(crate) struct Answer {
    pub(crate) rows: Rows,
    pub(crate) affected: u64,
    /// The last command tag was `ROLLBACK`.
    pub(crate) rollback: bool,
    pub(crate) description: Description,
}
