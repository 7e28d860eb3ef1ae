//! Calls a worker makes in one turn of its event loop travel to a SQLite thread
//! together, as one job.
//!
//! Why: a call is a hand-over to another thread and back. Sent one by one, each
//! call wakes the database thread, and each answer wakes the worker; when the
//! process is pinned to one core, as in the benchmarks, every wake-up is a context
//! switch. Queued while the worker runs and sent once it has handled what this turn
//! brought, twenty calls cost one wake-up each way instead of twenty. The answers of
//! a batch travel back together, as one message, after its last call has run, and
//! the worker hands them to their callers itself: a caller woken from another thread
//! costs the worker's run queue a lock and often a system call, a caller woken on its
//! own thread costs neither. A reader's batch runs in one read transaction, as
//! PostgreSQL's queries of a turn share one `Sync`.

use std::cell::{Cell, RefCell};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::rc::Rc;

use rusqlite::Connection;
use tokio::sync::oneshot;

use super::pool::Thread;
use crate::error::Error;

/// Handing one call's answer to its caller.
type Delivery = Box<dyn FnOnce() + Send>;

/// One call waiting in an outbox.
trait Call: Send {
    /// Runs it on the database thread; returns how to deliver its answer.
    fn run(self: Box<Self>, conn: &mut Connection) -> Delivery;
    /// Answers it with `error` without running it.
    fn refuse(self: Box<Self>, error: Error);
}

struct Pending<T, F> {
    f: F,
    answer: oneshot::Sender<Result<T, Error>>,
}

impl<T, F> Call for Pending<T, F>
where
    T: Send + 'static,
    F: FnOnce(&mut Connection) -> Result<T, Error> + Send + 'static,
{
    fn run(self: Box<Self>, conn: &mut Connection) -> Delivery {
        let Pending { f, answer } = *self;
        let result = f(conn);
        Box::new(move || drop(answer.send(result)))
    }

    fn refuse(self: Box<Self>, error: Error) {
        let _ = self.answer.send(Err(error));
    }
}

type Work = Box<dyn Call>;

/// Calls that wait in one outbox before it is sent at once, whatever the turn.
const MAX_BATCH: usize = 256;

/// The calls of this turn for one database thread.
struct Outbox {
    to: Thread,
    /// A reader's: its calls only read, so a batch of them shares one read transaction.
    reads: bool,
    work: RefCell<Vec<Work>>,
    /// A flush is scheduled for the end of this turn.
    scheduled: Cell<bool>,
}

/// One worker's outboxes, one per database thread.
pub(crate) struct Outboxes(Rc<[Outbox]>);

impl Outboxes {
    /// Outboxes for the writer, then for each reader.
    pub(crate) fn new(writer: Thread, readers: impl IntoIterator<Item = Thread>) -> Self {
        let outbox = |to, reads| Outbox { to, reads, work: RefCell::new(Vec::new()), scheduled: Cell::new(false) };
        Outboxes(std::iter::once(outbox(writer, false)).chain(readers.into_iter().map(|r| outbox(r, true))).collect())
    }

    /// Whether calls for thread `thread` are gathering for the end of this turn.
    pub(crate) fn is_gathering(&self, thread: usize) -> bool {
        self.0[thread].scheduled.get()
    }

    /// Runs `f` on thread `thread`, queued with this turn's other calls to it; the
    /// worker awaits the answer without blocking.
    pub(crate) async fn call<T, F>(&self, thread: usize, f: F) -> Result<T, Error>
    where
        T: Send + 'static,
        F: FnOnce(&mut Connection) -> Result<T, Error> + Send + 'static,
    {
        let (answer, rx) = oneshot::channel();
        let work: Work = Box::new(Pending { f, answer });
        let outbox = &self.0[thread];
        let queued = {
            let mut queue = outbox.work.borrow_mut();
            queue.push(work);
            queue.len()
        };
        if queued >= MAX_BATCH {
            if let Some(answers) = flush(outbox) {
                tokio::task::spawn_local(deliver(answers));
            }
        } else if !outbox.scheduled.replace(true) {
            let outboxes = Rc::clone(&self.0);
            tokio::task::spawn_local(async move {
                let outbox = &outboxes[thread];
                outbox.scheduled.set(false);
                if let Some(answers) = flush(outbox) {
                    deliver(answers).await;
                }
            });
        }
        rx.await.map_err(|_| Error::Unavailable("the SQLite thread failed".into()))?
    }
}

/// Hands a batch's answers to their callers, on the worker's own thread. If the
/// database thread died instead, the answers are dropped, and their callers see that.
async fn deliver(answers: oneshot::Receiver<Vec<Delivery>>) {
    if let Ok(answers) = answers.await {
        answers.into_iter().for_each(|deliver| deliver());
    }
}

/// Sends what `outbox` holds as one job, or answers every call in it with the
/// refusal when the thread has too many calls waiting. The job's answers come back
/// through the receiver, all at once.
fn flush(outbox: &Outbox) -> Option<oneshot::Receiver<Vec<Delivery>>> {
    let work = std::mem::take(&mut *outbox.work.borrow_mut());
    if work.is_empty() {
        return None;
    }
    let calls = work.len();
    let shared_read = outbox.reads && calls > 1;
    if let Err(refused) = outbox.to.reserve(calls) {
        work.into_iter().for_each(|w| w.refuse(refused.clone()));
        return None;
    }
    let (answers, delivered) = oneshot::channel();
    // Fails only if the thread is gone; the calls' dropped answers then say so.
    let _ = outbox.to.send_reserved(
        calls,
        Box::new(move |conn| {
            // One read transaction for the batch: SQLite takes and drops its file lock
            // once, not once per statement. (If it cannot begin, each reads on its own.)
            let began = shared_read && run(conn, "BEGIN");
            let deliveries: Vec<Delivery> = work
                .into_iter()
                // A panicking call drops its own answer channel; the others go on.
                .filter_map(|w| catch_unwind(AssertUnwindSafe(|| w.run(conn))).ok())
                .collect();
            if began {
                run(conn, "COMMIT");
            }
            let _ = answers.send(deliveries);
        }),
    );
    Some(delivered)
}

/// Runs a statement without parameters or rows, prepared once; says whether it ran.
fn run(conn: &Connection, sql: &str) -> bool {
    conn.prepare_cached(sql).and_then(|mut s| s.execute([])).is_ok()
}
