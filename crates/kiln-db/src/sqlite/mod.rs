//! SQLite on threads of its own, so that a worker never blocks on it.
//!
//! One writer thread and a few reader threads each own a connection to the same
//! file (WAL, so readers never wait for the writer; `synchronous=NORMAL`, so a
//! crash never corrupts the file and a power loss may lose only the last
//! transactions; foreign keys enforced; a busy timeout for other processes). A call
//! is a closure sent over a bounded channel to one of them, and the worker awaits
//! the answer. Queries go to a reader unless SQLite says the statement writes;
//! writes and transactions go to the one writer, so they never contend for the lock.

mod batch;
mod exec;
mod migrate;
mod pool;
mod worker;

pub(crate) use pool::Pool;
pub(crate) use worker::{Tx, Worker};
