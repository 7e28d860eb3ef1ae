//! The pool: threads taking boxed closures from one bounded queue, each answer sent
//! back on a oneshot channel the handler awaits.

use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::sync::mpsc::{Receiver, SyncSender, TrySendError, sync_channel};
use std::sync::{Arc, Mutex, OnceLock};

use crate::rejection::Unavailable;

/// Closures the default pool queues per thread before it refuses more.
pub const DEFAULT_QUEUE_PER_THREAD: usize = 64;

type Job = Box<dyn FnOnce() + Send>;

/// A fixed set of threads for blocking work, with a bounded queue in front.
///
/// Most apps use the process's default pool through [`blocking`]; an app that wants
/// other sizes makes it [`install`](Self::install) its own before serving.
#[derive(Debug, Clone)]
pub struct BlockingPool {
    queue: SyncSender<Job>,
}

impl BlockingPool {
    /// Starts `threads` threads (at least one) with room for `queue` closures
    /// waiting beyond those running.
    pub fn new(threads: usize, queue: usize) -> BlockingPool {
        let (tx, rx) = sync_channel::<Job>(queue);
        let rx = Arc::new(Mutex::new(rx));
        for i in 0..threads.max(1) {
            let rx = Arc::clone(&rx);
            std::thread::Builder::new()
                .name(format!("kiln-blocking-{i}"))
                .spawn(move || work(&rx))
                .expect("the operating system refused a thread for the blocking pool");
        }
        BlockingPool { queue: tx }
    }

    /// Makes this pool the one [`blocking`] uses. Returns `false` (and changes
    /// nothing) when the default pool is already in place: install before serving.
    pub fn install(self) -> bool {
        DEFAULT.set(self).is_ok()
    }

    /// Runs `f` on one of the pool's threads and awaits its value. Refused with
    /// `503` when the queue is full. A panic in `f` resumes in the caller, where the
    /// server answers it `500` as it answers a panicking handler.
    pub async fn run<F, T>(&self, f: F) -> Result<T, Unavailable>
    where
        F: FnOnce() -> T + Send + 'static,
        T: Send + 'static,
    {
        let (tx, rx) = tokio::sync::oneshot::channel();
        let job: Job = Box::new(move || {
            // The caller may have gone (its client hung up): the value is dropped.
            let _ = tx.send(catch_unwind(AssertUnwindSafe(f)));
        });
        match self.queue.try_send(job) {
            Ok(()) => {}
            Err(TrySendError::Full(_)) => return Err(Unavailable::new("the server is busy, try again")),
            Err(TrySendError::Disconnected(_)) => return Err(Unavailable::new("the blocking pool has stopped")),
        }
        match rx.await {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(panic)) => resume_unwind(panic),
            // Every thread has died, which only a panic outside `f` could cause.
            Err(_) => Err(Unavailable::new("the blocking pool has stopped")),
        }
    }
}

/// One pool thread: takes the next closure, runs it, until the pool is dropped.
fn work(queue: &Mutex<Receiver<Job>>) {
    loop {
        // The lock is held only while waiting for a job, never while running one.
        let job = match queue.lock() {
            Ok(rx) => rx.recv(),
            Err(_) => return,
        };
        match job {
            Ok(job) => job(),
            Err(_) => return,
        }
    }
}

static DEFAULT: OnceLock<BlockingPool> = OnceLock::new();

/// Runs `f` on the process's blocking pool and awaits its value: CPU-heavy work (a
/// password hash, an image resize) and blocking calls (a synchronous client, a file
/// system walk) belong there, not on the worker, which serves many connections on one
/// thread.
///
/// The default pool has one thread per CPU and queues [`DEFAULT_QUEUE_PER_THREAD`]
/// closures per thread; past that a call gets `Err(Unavailable)`, a `503` with
/// `Retry-After` when returned from a handler (`?` converts it into a
/// [`Rejection`](crate::Rejection)). [`BlockingPool::install`] sets other sizes.
///
/// ```
/// use kiln::{App, Rejection, Route};
///
/// #[derive(Route)]
/// #[route("/fib/{n}")]
/// struct Fib { n: u32 }
///
/// fn fib(n: u32) -> u64 {
///     if n < 2 { u64::from(n) } else { fib(n - 1) + fib(n - 2) }
/// }
///
/// async fn show(route: Fib) -> Result<String, Rejection> {
///     let n = route.n.min(30);
///     let value = kiln::blocking(move || fib(n)).await?;
///     Ok(value.to_string())
/// }
///
/// let mut client = kiln::test::TestClient::new(App::new(|_| ()).route(show));
/// assert_eq!(client.get(&Fib { n: 20 }).text(), "6765");
/// ```
pub async fn blocking<F, T>(f: F) -> Result<T, Unavailable>
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    DEFAULT
        .get_or_init(|| {
            let threads = std::thread::available_parallelism().map_or(1, usize::from);
            BlockingPool::new(threads, threads * DEFAULT_QUEUE_PER_THREAD)
        })
        .run(f)
        .await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block_on<F: std::future::Future>(f: F) -> F::Output {
        tokio::runtime::Builder::new_current_thread().build().expect("runtime").block_on(f)
    }

    #[test]
    fn a_full_queue_refuses_at_once_and_the_pool_recovers() {
        let pool = BlockingPool::new(1, 1);
        let (started_tx, started) = std::sync::mpsc::channel();
        let (release, release_rx) = std::sync::mpsc::channel::<()>();
        let release_rx = Mutex::new(release_rx);
        block_on(async {
            // One running (held until released), one queued, the third refused.
            let running = pool.run(move || {
                started_tx.send(()).unwrap();
                release_rx.lock().unwrap().recv().unwrap();
                1
            });
            let mut running = Box::pin(running);
            // Polled once, so that it is queued; then it waits for the thread.
            assert!(futures_poll_once(running.as_mut()).is_none());
            started.recv().unwrap();
            let mut queued = Box::pin(pool.run(|| 2));
            assert!(futures_poll_once(queued.as_mut()).is_none());
            let refused = pool.run(|| 3).await.unwrap_err();
            assert_eq!(refused.message(), "the server is busy, try again");
            release.send(()).unwrap();
            assert_eq!(running.await.unwrap(), 1);
            assert_eq!(queued.await.unwrap(), 2);
            assert_eq!(pool.run(|| 4).await.unwrap(), 4);
        });
    }

    #[test]
    fn a_panic_in_the_closure_reaches_the_caller_and_the_thread_survives() {
        let pool = BlockingPool::new(1, 4);
        let caught = std::panic::catch_unwind(AssertUnwindSafe(|| block_on(pool.run(|| panic!("boom")))));
        assert!(caught.is_err());
        assert_eq!(block_on(pool.run(|| 5)).unwrap(), 5);
    }

    /// Polls `f` once with a waker that does nothing.
    fn futures_poll_once<F: std::future::Future>(f: std::pin::Pin<&mut F>) -> Option<F::Output> {
        let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
        match f.poll(&mut cx) {
            std::task::Poll::Ready(v) => Some(v),
            std::task::Poll::Pending => None,
        }
    }
}
