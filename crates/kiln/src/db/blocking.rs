//! The synchronous PostgreSQL client behind `/mix/blocking`.
//!
//! The non-blocking Ruby report compared evented database access with a driver
//! that blocks the whole process for the length of a query. A worker here blocks the
//! same way: it hands the query to a helper thread, which owns its own connection
//! and runtime, and waits for the answer without serving anything else meanwhile.
//! That connection is a conventional driver's (`tokio-postgres`: one round trip and
//! one transaction per query), as the report's blocking mode had, not the pipeline.

use std::sync::Arc;
use std::sync::mpsc::{RecvTimeoutError, SyncSender, TrySendError, sync_channel};
use std::time::Duration;

use tokio_postgres::{Client, NoTls, Statement};

use super::error::DbError;
use super::model::World;
use super::postgres::{PgSettings, SELECT_WORLD, SELECT_WORLD_SLOWLY};

/// Queries that may wait for the helper thread (more than one only after a timeout).
const QUEUE_DEPTH: usize = 16;

struct Job {
    id: i32,
    long: bool,
    reply: SyncSender<Result<Vec<World>, DbError>>,
}

struct Conn {
    client: Client,
    world: Statement,
    slow: Statement,
}

/// A helper thread with one PostgreSQL connection, driven synchronously.
pub(crate) struct BlockingPg {
    jobs: SyncSender<Job>,
}

impl BlockingPg {
    pub(crate) fn start(settings: Arc<PgSettings>) -> Result<Self, DbError> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| DbError::Open(format!("cannot start a runtime: {e}")))?;
        let (jobs, rx) = sync_channel::<Job>(QUEUE_DEPTH);
        std::thread::Builder::new()
            .name("kiln-pg-blocking".into())
            .spawn(move || {
                let mut conn = None;
                // Ends when the worker drops its sender.
                for job in rx {
                    let result = rt.block_on(run(&mut conn, &settings, job.id, job.long));
                    drop(job.reply.send(result));
                }
            })
            .map_err(|e| DbError::Open(format!("cannot start the blocking client: {e}")))?;
        Ok(BlockingPg { jobs })
    }

    /// Runs the `/mix` queries and blocks the calling thread until they answer.
    pub(crate) fn mix(&self, id: i32, long: bool, timeout: Duration) -> Result<Vec<World>, DbError> {
        let (reply, answer) = sync_channel(1);
        self.jobs.try_send(Job { id, long, reply }).map_err(|e| match e {
            TrySendError::Full(_) => DbError::Unavailable("the blocking client is busy".into()),
            TrySendError::Disconnected(_) => DbError::Unavailable("the blocking client has stopped".into()),
        })?;
        answer.recv_timeout(timeout).map_err(|e| match e {
            RecvTimeoutError::Timeout => DbError::Timeout,
            RecvTimeoutError::Disconnected => DbError::Unavailable("the blocking client failed".into()),
        })?
    }
}

async fn open(settings: &PgSettings) -> Result<Conn, DbError> {
    let unavailable = |e: tokio_postgres::Error| DbError::Unavailable(format!("cannot connect to PostgreSQL: {e}"));
    let (client, connection) = settings.config.connect(NoTls).await.map_err(unavailable)?;
    tokio::spawn(async move { drop(connection.await) });
    let world = client.prepare(SELECT_WORLD).await.map_err(unavailable)?;
    let slow = client.prepare(SELECT_WORLD_SLOWLY).await.map_err(unavailable)?;
    Ok(Conn { client, world, slow })
}

async fn run(conn: &mut Option<Conn>, settings: &PgSettings, id: i32, long: bool) -> Result<Vec<World>, DbError> {
    if conn.as_ref().is_none_or(|c| c.client.is_closed()) {
        *conn = None;
        let opened = tokio::time::timeout(settings.connect_timeout, open(settings)).await;
        *conn = Some(opened.map_err(|_| DbError::Unavailable("connecting to PostgreSQL timed out".into()))??);
    }
    let Some(c) = conn.as_ref() else { return Err(DbError::Unavailable("not connected".into())) };
    let mut rows = Vec::with_capacity(2);
    let result = async {
        let row = c.client.query_one(&c.world, &[&id]).await?;
        rows.push(World { id: row.get(0), random_number: row.get(1) });
        if long {
            let row = c.client.query_one(&c.slow, &[&id, &settings.long_query.as_secs_f64()]).await?;
            rows.push(World { id: row.get(0), random_number: row.get(1) });
        }
        Ok::<_, tokio_postgres::Error>(())
    }
    .await;
    match result {
        Ok(()) => Ok(rows),
        Err(e) if e.is_closed() || c.client.is_closed() => {
            *conn = None;
            Err(DbError::Unavailable(format!("lost the connection to PostgreSQL: {e}")))
        }
        Err(e) => Err(DbError::Query(e.to_string())),
    }
}
