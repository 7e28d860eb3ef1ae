//! The per-worker drain signal: long-lived responses (WebSockets, streams) wait on
//! [`draining`] beside their own work and end cleanly once shutdown begins, instead
//! of holding the worker until the grace period runs out.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use tokio::sync::Notify;

#[derive(Default)]
struct State {
    begun: Cell<bool>,
    notify: Notify,
}

thread_local! {
    // Each worker is one thread, so its drain state needs no lock.
    static STATE: RefCell<Rc<State>> = RefCell::new(Rc::default());
}

fn state() -> Rc<State> {
    STATE.with(|s| Rc::clone(&s.borrow()))
}

/// Starts a fresh drain state for the worker on this thread.
pub(crate) fn reset() {
    STATE.with(|s| *s.borrow_mut() = Rc::default());
}

/// Tells everything waiting on [`draining`] on this worker that shutdown began.
pub(crate) fn begin() {
    let state = state();
    state.begun.set(true);
    state.notify.notify_waiters();
}

/// Whether shutdown has begun on this worker.
pub fn is_draining() -> bool {
    state().begun.get()
}

/// Resolves once shutdown begins on the current worker (at once if it has). Call it
/// from a task on a worker thread; outside a server it never resolves.
pub async fn draining() {
    let state = state();
    loop {
        // Created before the check, so a `begin` between the two is not missed.
        let notified = state.notify.notified();
        if state.begun.get() {
            return;
        }
        notified.await;
    }
}
