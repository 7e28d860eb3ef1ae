//! The SQLite threads of one process: opening the file, applying migrations, and
//! the bounded queues in front of the writer and the readers.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{Sender, channel};
use std::time::Duration;

use rusqlite::{Connection, OpenFlags};

use super::exec::error;
use super::migrate::migrate;
use crate::error::Error;
use crate::options::Options;

/// Calls that may wait in front of one SQLite thread, however they are batched; past
/// this a call fails with [`Error::Unavailable`] (a `503`) at once instead of
/// queueing without bound.
pub(crate) const MAX_QUEUED_CALLS: usize = 4096;
/// How long a connection waits for a lock held by another process before giving up.
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);
/// Statements each connection keeps prepared.
const STATEMENT_CACHE: usize = 64;

/// Work for one SQLite thread.
pub(crate) type Job = Box<dyn FnOnce(&mut Connection) + Send>;

/// One SQLite thread: its queue, and how many calls wait in it.
///
/// The queue is bounded by the count, not by the channel: a `sync_channel` of
/// [`MAX_QUEUED_CALLS`] slots allocated and wrote all of them at once, 96 KiB of an
/// idle server's memory per thread; an unbounded channel grows in blocks as jobs come.
#[derive(Clone)]
pub(crate) struct Thread {
    jobs: Sender<Job>,
    queued: Arc<AtomicUsize>,
}

impl Thread {
    /// Counts `calls` more calls in front of the thread, or refuses them at once
    /// when that would make more than [`MAX_QUEUED_CALLS`].
    pub(crate) fn reserve(&self, calls: usize) -> Result<(), Error> {
        if self.queued.fetch_add(calls, Ordering::Relaxed) + calls > MAX_QUEUED_CALLS {
            self.queued.fetch_sub(calls, Ordering::Relaxed);
            return Err(Error::Unavailable("too many SQLite calls queued".into()));
        }
        Ok(())
    }

    /// Queues `job`, holding `calls` calls already [reserved](Self::reserve).
    pub(crate) fn send_reserved(&self, calls: usize, job: Job) -> Result<(), Error> {
        let done = Done { queued: Arc::clone(&self.queued), calls };
        let counted: Job = Box::new(move |conn| {
            let _done = done;
            job(conn);
        });
        // Never blocks: the channel is unbounded, and `reserve` bounds what waits in it.
        self.jobs.send(counted).map_err(|_| Error::Unavailable("the SQLite thread has stopped".into()))
    }

    /// Queues `job`, which holds `calls` calls, or fails at once.
    pub(crate) fn send(&self, calls: usize, job: Job) -> Result<(), Error> {
        self.reserve(calls)?;
        self.send_reserved(calls, job)
    }
}

/// Takes a job's calls off its thread's count when the job ends, even by a panic.
struct Done {
    queued: Arc<AtomicUsize>,
    calls: usize,
}

impl Drop for Done {
    fn drop(&mut self) {
        self.queued.fetch_sub(self.calls, Ordering::Relaxed);
    }
}

/// The SQLite threads of one process; cheap to clone, shared by every worker.
#[derive(Clone)]
pub(crate) struct Pool {
    pub(crate) readers: Arc<[Thread]>,
    pub(crate) writer: Thread,
}

impl Pool {
    /// Calls waiting in front of every thread, writer and readers.
    pub(crate) fn queued_calls(&self) -> usize {
        self.readers.iter().chain([&self.writer]).map(|t| t.queued.load(Ordering::Relaxed)).sum()
    }

    /// Opens (creating it if need be) the database at `path`, applies the
    /// migrations and starts one writer and the reader threads.
    pub(crate) fn open(path: &Path, options: &Options) -> Result<Self, Error> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| Error::Open(format!("{}: {e}", dir.display())))?;
        }
        let open_err = |e: rusqlite::Error| Error::Open(format!("{}: {}", path.display(), error(e)));
        let mut writer = open_connection(path).map_err(open_err)?;
        migrate(&mut writer, options.migrations)?;
        let mut readers = Vec::with_capacity(options.sqlite_readers.max(1));
        for i in 0..options.sqlite_readers.max(1) {
            let conn = open_connection(path).map_err(open_err)?;
            readers.push(spawn(conn, format!("kiln-sqlite-r{i}"))?);
        }
        Ok(Pool { readers: readers.into(), writer: spawn(writer, "kiln-sqlite-w".into())? })
    }
}

fn open_connection(path: &Path) -> rusqlite::Result<Connection> {
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags(path, flags)?;
    conn.busy_timeout(BUSY_TIMEOUT)?;
    let mode: String = conn.pragma_update_and_check(None, "journal_mode", "WAL", |row| row.get(0))?;
    if !mode.eq_ignore_ascii_case("wal") {
        return Err(rusqlite::Error::InvalidParameterName(format!("journal_mode is {mode}, WAL refused")));
    }
    // In WAL mode NORMAL never corrupts the file on a crash; it may only lose the
    // last transactions on power loss.
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    // Off by default in SQLite; on here so that both backends refuse the same writes.
    conn.pragma_update(None, "foreign_keys", "ON")?;
    conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
    Ok(conn)
}

fn spawn(conn: Connection, name: String) -> Result<Thread, Error> {
    let (tx, rx) = channel::<Job>();
    std::thread::Builder::new()
        .name(name)
        .spawn(move || {
            let mut conn = conn;
            // Ends when every sender is gone. A panicking job drops its reply sender,
            // which its caller sees as a failure; the thread and connection live on.
            for job in rx {
                let _ = catch_unwind(AssertUnwindSafe(|| job(&mut conn)));
                // A job that panicked inside a transaction must not leave the next
                // job running in it.
                if !conn.is_autocommit() {
                    let _ = conn.execute_batch("ROLLBACK");
                }
            }
        })
        .map_err(|e| Error::Open(format!("cannot start a SQLite thread: {e}")))?;
    Ok(Thread { jobs: tx, queued: Arc::new(AtomicUsize::new(0)) })
}
