//! The database layer: embedded SQLite by default, pipelined PostgreSQL at scale,
//! behind one typed API.
//!
//! - [`Database::open`] takes `sqlite://PATH` or `postgres://...`. SQLite runs on its
//!   own threads (WAL, busy timeout, migrations at start-up) and is awaited over a
//!   channel, so a worker never blocks on it. PostgreSQL uses one pipelined
//!   connection per worker with statements prepared once, and a `Sync` per batch of
//!   reads rather than per query (see `pipeline`).
//! - [`WorkerDb`] is a worker's handle: the TechEmpower queries
//!   ([`random_world`](WorkerDb::random_world), [`worlds`](WorkerDb::worlds),
//!   [`fortunes`](WorkerDb::fortunes), [`update_worlds`](WorkerDb::update_worlds),
//!   [`cached_worlds`](WorkerDb::cached_worlds)) and the `/mix` workload.
//! - A database that cannot be reached gives a [`DbError`] whose status is `503`;
//!   PostgreSQL reconnects with backoff.

mod blocking;
mod database;
mod error;
mod migrate;
mod model;
mod pipeline;
mod postgres;
mod random;
mod sqlite;
mod startup;

pub use database::{CONNECT_TIMEOUT, Database, DbOptions, LONG_QUERY, MAX_ROWS, QUERY_TIMEOUT, WorkerDb};
pub use error::DbError;
pub use model::{ADDED_FORTUNE, FORTUNES, Fortune, WORLD_ROWS, World};
