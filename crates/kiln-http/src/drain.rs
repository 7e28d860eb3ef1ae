//! The drain signal: a future that resolves when the worker it runs on begins to shut
//! down, so that long-lived responses (streams, Server-Sent Events, long polls,
//! WebSockets) end cleanly instead of holding the shutdown grace period.
//!
//! Each worker thread has one signal, installed when its [`Worker`](crate::worker::Worker)
//! is built; nothing crosses threads, so waiting on it takes no lock.

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

thread_local! {
    /// The signal of the worker running on this thread, if any.
    static CURRENT: RefCell<Option<Rc<Signal>>> = const { RefCell::new(None) };
}

/// One worker's drain signal: whether shutdown has begun, and who waits for it.
#[derive(Default)]
pub(crate) struct Signal {
    begun: Cell<bool>,
    /// The waker of each pending [`Drain`], by its slot; `free` lists slots not in use.
    /// A slot is given back when its `Drain` is dropped, so ten thousand short-lived
    /// streams leave nothing behind.
    waiters: RefCell<Vec<Option<Waker>>>,
    free: RefCell<Vec<usize>>,
}

impl Signal {
    /// A new signal, made the current thread's: [`draining`] called on this thread
    /// from now on waits for it.
    pub(crate) fn install() -> Rc<Signal> {
        let signal = Rc::new(Signal::default());
        CURRENT.with(|current| *current.borrow_mut() = Some(Rc::clone(&signal)));
        signal
    }

    /// Shutdown begins: every [`Drain`] of this worker resolves.
    pub(crate) fn begin(&self) {
        self.begun.set(true);
        let wakers: Vec<Waker> = self.waiters.borrow_mut().iter_mut().filter_map(Option::take).collect();
        wakers.into_iter().for_each(Waker::wake);
    }

    fn register(&self, slot: &mut Option<usize>, waker: &Waker) {
        let mut waiters = self.waiters.borrow_mut();
        let at = *slot.get_or_insert_with(|| {
            self.free.borrow_mut().pop().unwrap_or_else(|| {
                waiters.push(None);
                waiters.len() - 1
            })
        });
        match &mut waiters[at] {
            Some(w) if w.will_wake(waker) => {}
            entry => *entry = Some(waker.clone()),
        }
    }

    fn unregister(&self, slot: usize) {
        self.waiters.borrow_mut()[slot] = None;
        self.free.borrow_mut().push(slot);
    }
}

/// A future that resolves when the worker it was made on begins to shut down
/// (SIGTERM once the drain delay has passed, SIGINT, a hand-over, or
/// [`ServerHandle::shutdown`](crate::ServerHandle::shutdown)).
///
/// A long-lived response selects on it and ends cleanly: an event stream sends its
/// last event and ends, a long poll answers, a WebSocket closes with 1001. Those that
/// do not are cut when the shutdown grace period runs out. Made outside a worker (in a
/// unit test, say) it never resolves. Get one with [`draining`].
///
/// ```no_run
/// # async fn long_poll() -> Option<String> { None }
/// # async fn handler() {
/// tokio::select! {
///     update = long_poll() => { /* answer with the update */ }
///     () = kiln_http::draining() => { /* answer "try again" now */ }
/// }
/// # }
/// ```
pub struct Drain {
    signal: Option<Rc<Signal>>,
    slot: Option<usize>,
}

/// The drain signal of the worker this is called on: see [`Drain`].
pub fn draining() -> Drain {
    let signal = CURRENT.with(|current| current.borrow().clone());
    Drain { signal, slot: None }
}

impl Drain {
    /// Whether shutdown has begun (the future would resolve at once).
    pub fn is_draining(&self) -> bool {
        self.signal.as_ref().is_some_and(|s| s.begun.get())
    }
}

impl Clone for Drain {
    fn clone(&self) -> Self {
        Drain { signal: self.signal.clone(), slot: None }
    }
}

impl std::fmt::Debug for Drain {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Drain").field("draining", &self.is_draining()).finish()
    }
}

impl Future for Drain {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = self.get_mut();
        let Some(signal) = &this.signal else { return Poll::Pending };
        if signal.begun.get() {
            if let Some(slot) = this.slot.take() {
                signal.unregister(slot);
            }
            return Poll::Ready(());
        }
        signal.register(&mut this.slot, cx.waker());
        Poll::Pending
    }
}

impl Drop for Drain {
    fn drop(&mut self) {
        if let (Some(signal), Some(slot)) = (&self.signal, self.slot) {
            signal.unregister(slot);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::task::Wake;

    struct Count(AtomicUsize);
    impl Wake for Count {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    #[test]
    fn drain_resolves_when_its_worker_begins_shutdown_and_frees_its_slot_when_dropped() {
        let signal = Signal::install();
        let count = Arc::new(Count(AtomicUsize::new(0)));
        let waker = Waker::from(Arc::clone(&count));
        let mut cx = Context::from_waker(&waker);
        let mut first = draining();
        let mut second = first.clone();
        assert!(Pin::new(&mut first).poll(&mut cx).is_pending());
        assert!(Pin::new(&mut second).poll(&mut cx).is_pending());
        // Polled again, a waiter keeps its one slot.
        assert!(Pin::new(&mut second).poll(&mut cx).is_pending());
        assert_eq!(signal.waiters.borrow().len(), 2);
        drop(second);
        assert_eq!(*signal.free.borrow(), [1]);

        signal.begin();
        assert_eq!(count.0.load(Ordering::SeqCst), 1);
        assert!(first.is_draining());
        assert!(Pin::new(&mut first).poll(&mut cx).is_ready());
        assert!(Pin::new(&mut draining()).poll(&mut cx).is_ready());
    }

    #[test]
    fn drain_made_outside_a_worker_never_resolves() {
        let drain = std::thread::spawn(|| {
            let waker = Waker::noop();
            let mut cx = Context::from_waker(waker);
            let mut drain = draining();
            (Pin::new(&mut drain).poll(&mut cx).is_pending(), drain.is_draining())
        });
        assert_eq!(drain.join().unwrap(), (true, false));
    }
}
