//! The blocking client behind `/mix/blocking`.
//!
//! The non-blocking Ruby report compared evented database access with a driver
//! that blocks the whole process for the length of a query. A worker here blocks the
//! same way: it hands the queries to a helper thread, which has its own runtime and
//! its own `kiln::db` handle and runs them one after the other, and waits for the
//! answer without serving anything else meanwhile.

use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender, TrySendError, sync_channel};
use std::time::Duration;

use kiln::db::{Database, Db, Error};

use super::long_query::{Slow, long_query, slow_for};
use super::model::{SELECT_WORLD, World};

/// Queries that may wait for the helper thread (more than one only after a timeout).
const QUEUE_DEPTH: usize = 16;

struct Job {
    id: i32,
    long: bool,
    reply: SyncSender<Result<Vec<World>, Error>>,
}

/// A helper thread with a database handle of its own, driven synchronously.
pub(crate) struct Blocking {
    jobs: SyncSender<Job>,
}

impl Blocking {
    pub(crate) fn start(database: &Database, long_query: Duration) -> Result<Self, Error> {
        let (jobs, inbox) = sync_channel::<Job>(QUEUE_DEPTH);
        let database = database.clone();
        std::thread::Builder::new()
            .name("kiln-demo-blocking".into())
            .spawn(move || serve(&database, long_query, &inbox))
            .map_err(|e| Error::Unavailable(format!("cannot start the blocking client: {e}")))?;
        Ok(Blocking { jobs })
    }

    /// Runs the `/mix` queries and blocks the calling thread until they answer.
    pub(crate) fn run(&self, id: i32, long: bool, timeout: Duration) -> Result<Vec<World>, Error> {
        let (reply, answer) = sync_channel(1);
        self.jobs.try_send(Job { id, long, reply }).map_err(|e| match e {
            TrySendError::Full(_) => Error::Unavailable("the blocking client is busy".into()),
            TrySendError::Disconnected(_) => Error::Unavailable("the blocking client has stopped".into()),
        })?;
        answer.recv_timeout(timeout).map_err(|e| match e {
            RecvTimeoutError::Timeout => Error::Timeout,
            RecvTimeoutError::Disconnected => Error::Unavailable("the blocking client failed".into()),
        })?
    }
}

/// The helper thread: one job at a time, until the worker drops its sender.
fn serve(database: &Database, long_query: Duration, inbox: &Receiver<Job>) {
    let Ok(runtime) = tokio::runtime::Builder::new_current_thread().enable_all().build() else { return };
    let local = tokio::task::LocalSet::new();
    local.block_on(&runtime, async {
        let db = database.worker();
        let mut slow: Option<Slow> = None;
        for job in inbox {
            let result = queries(&db, &mut slow, long_query, job.id, job.long).await;
            drop(job.reply.send(result));
        }
    });
}

async fn queries(db: &Db, slow: &mut Option<Slow>, length: Duration, id: i32, long: bool) -> Result<Vec<World>, Error> {
    let mut rows = vec![db.query_one::<World>(SELECT_WORLD, &[&id]).await?];
    if long {
        let how = match *slow {
            Some(how) => how,
            None => *slow.insert(slow_for(db, length).await?),
        };
        rows.push(long_query(db, id, how).await?);
    }
    Ok(rows)
}
