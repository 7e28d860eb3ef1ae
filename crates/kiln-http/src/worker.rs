//! What one worker thread owns and its connections share: limits, the `Date` header,
//! a pool of connection buffers and the counts that drive shutdown. Nothing here is
//! shared across threads, so none of it needs a lock.

use std::cell::{Cell, RefCell};
use std::ops::{Deref, DerefMut};
use std::rc::Rc;
use std::task::Waker;
use std::time::SystemTime;

use tokio::time::Instant;

use crate::config::Limits;
use crate::drain::Signal;
use crate::gauge::OpenConnections;
use crate::h1::turns::Turns;
use crate::head::Head;
use crate::memory::Load;
use crate::response::Response;

/// Capacity a connection's read and write buffers start with.
pub(crate) const INITIAL_BUFFER: usize = 4 * 1024;
/// A buffer grown past this is shrunk back before it returns to the pool.
pub(crate) const KEEP_BUFFER: usize = 64 * 1024;
/// Buffer sets kept for reuse; beyond this, idle connections' buffers are freed.
const POOL_MAX: usize = 256;

/// The buffers a connection needs only while it is reading or answering a request.
/// An idle connection hands them back, so ten thousand idle connections cost ten
/// thousand sockets and small futures, not ten thousand sets of buffers.
#[derive(Default)]
pub(crate) struct ConnBufs {
    pub(crate) read: Vec<u8>,
    pub(crate) write: Vec<u8>,
    pub(crate) chunked_body: Vec<u8>,
    pub(crate) head: Head,
    pub(crate) res: Response,
}

/// A connection's hold on a set of buffers from the pool, or on none while it is idle.
/// Boxed, so that a connection's future carries a pointer rather than the buffers'
/// two hundred bytes of bookkeeping: a connection that never sends a byte is smaller.
#[derive(Default)]
pub(crate) struct Bufs(Option<Box<ConnBufs>>);

impl Bufs {
    pub(crate) fn is_allocated(&self) -> bool {
        self.0.is_some()
    }
}

impl Deref for Bufs {
    type Target = ConnBufs;

    fn deref(&self) -> &ConnBufs {
        self.0.as_deref().expect("a connection's buffers are used only between acquire and release")
    }
}

impl DerefMut for Bufs {
    fn deref_mut(&mut self) -> &mut ConnBufs {
        self.0.as_deref_mut().expect("a connection's buffers are used only between acquire and release")
    }
}

pub(crate) struct Worker {
    pub(crate) limits: Limits,
    date: Cell<[u8; 29]>,
    /// The time at the last tick, good to a second: idle deadlines need no finer clock,
    /// and reading it costs nothing per request.
    coarse_now: Cell<Instant>,
    // Boxed in the pool too: a set moves between the pool and a connection as a
    // pointer, with no allocation and no copy.
    #[allow(clippy::vec_box)]
    pool: RefCell<Vec<Box<ConnBufs>>>,
    /// Open connections, for the per-worker limit and the end of shutdown.
    pub(crate) connections: Cell<usize>,
    /// Connections opened since the worker started, for the end of a burst ([`Load`]).
    opened: Cell<u64>,
    /// The same count, for `/metrics` on any thread ([`crate::open_connections`]).
    open: OpenConnections,
    /// Set once shutdown begins: responses say `Connection: close`, idle connections end.
    pub(crate) shutting_down: Cell<bool>,
    /// Bytes of request bodies and responses held in connection buffers, against
    /// `Limits::max_buffered_bytes`.
    buffered: Cell<usize>,
    /// The waker of each connection waiting for its next request, by its slot, so that
    /// shutdown can tell them at once; `free` lists the slots not in use.
    parked: RefCell<Vec<Option<Waker>>>,
    free: RefCell<Vec<usize>>,
    /// What [`draining`](crate::draining) waits for on this worker's thread.
    drain: Rc<Signal>,
    /// The pipelining connections waiting for their next turn (see [`crate::h1::turns`]).
    pub(crate) turns: Turns,
    /// The HTTP/2 response header sets last encoded, shared by the worker's connections.
    pub(crate) h2_heads: RefCell<crate::h2::HeadMemo>,
}

impl Worker {
    /// A worker for the current thread; its drain signal becomes the thread's.
    pub(crate) fn new(limits: Limits) -> Self {
        Worker {
            limits,
            date: Cell::new(render_date()),
            coarse_now: Cell::new(Instant::now()),
            pool: RefCell::new(Vec::new()),
            connections: Cell::new(0),
            opened: Cell::new(0),
            open: OpenConnections::install(),
            shutting_down: Cell::new(false),
            buffered: Cell::new(0),
            parked: RefCell::new(Vec::new()),
            free: RefCell::new(Vec::new()),
            drain: Signal::install(),
            turns: Turns::default(),
            h2_heads: RefCell::default(),
        }
    }

    /// Counts a new connection and gives it a slot to park its waker in.
    pub(crate) fn open_connection(&self) -> usize {
        self.connections.set(self.connections.get() + 1);
        self.opened.set(self.opened.get() + 1);
        self.open.set(self.connections.get());
        let mut parked = self.parked.borrow_mut();
        self.free.borrow_mut().pop().unwrap_or_else(|| {
            parked.push(None);
            parked.len() - 1
        })
    }

    pub(crate) fn close_connection(&self, slot: usize) {
        self.connections.set(self.connections.get() - 1);
        self.open.set(self.connections.get());
        self.parked.borrow_mut()[slot] = None;
        self.free.borrow_mut().push(slot);
    }

    /// Records the waker of an idle connection; a task's waker rarely changes, so this
    /// is a comparison, not a clone.
    pub(crate) fn park(&self, slot: usize, waker: &Waker) {
        let mut parked = self.parked.borrow_mut();
        match &mut parked[slot] {
            Some(w) if w.will_wake(waker) => {}
            entry => *entry = Some(waker.clone()),
        }
    }

    /// Begins shutdown: from now on responses say `Connection: close`, every idle
    /// connection wakes up to drain and close, and long-lived responses waiting on
    /// [`draining`](crate::draining) are told to end.
    pub(crate) fn begin_shutdown(&self) {
        self.shutting_down.set(true);
        self.drain.begin();
        let wakers: Vec<Waker> = self.parked.borrow_mut().iter_mut().filter_map(Option::take).collect();
        wakers.into_iter().for_each(Waker::wake);
    }

    /// Raises the bytes this connection holds (`held`) to `want`, if the worker's
    /// budget allows; `false` when it does not (the caller answers 503).
    pub(crate) fn hold(&self, held: &mut usize, want: usize) -> bool {
        if want <= *held {
            return true;
        }
        let total = self.buffered.get() + (want - *held);
        if total > self.limits.max_buffered_bytes {
            return false;
        }
        self.buffered.set(total);
        *held = want;
        true
    }

    /// Bytes held now, for the fuzz target's check that every byte is given back.
    #[cfg(any(test, feature = "fuzzing"))]
    pub(crate) fn buffered(&self) -> usize {
        self.buffered.get()
    }

    /// The worker's load now, for its watch on the end of a burst.
    pub(crate) fn load(&self) -> Load {
        Load { connections: self.connections.get(), buffered: self.buffered.get(), opened: self.opened.get() }
    }

    /// Gives back what a connection held.
    pub(crate) fn unhold(&self, held: &mut usize) {
        self.buffered.set(self.buffered.get() - *held);
        *held = 0;
    }

    /// The `Date` header value, as rendered by the last [`refresh_date`](Self::refresh_date).
    pub(crate) fn date(&self) -> [u8; 29] {
        self.date.get()
    }

    /// Renders `Date` anew and moves the coarse clock; the worker calls this once a second.
    pub(crate) fn refresh_date(&self) {
        self.date.set(render_date());
        self.coarse_now.set(Instant::now());
    }

    /// The time at the last tick (at most a second old).
    pub(crate) fn coarse_now(&self) -> Instant {
        self.coarse_now.get()
    }

    pub(crate) fn acquire(&self) -> Bufs {
        let bufs = self.pool.borrow_mut().pop().unwrap_or_else(|| {
            Box::new(ConnBufs {
                read: Vec::with_capacity(INITIAL_BUFFER),
                write: Vec::with_capacity(INITIAL_BUFFER),
                ..ConnBufs::default()
            })
        });
        Bufs(Some(bufs))
    }

    pub(crate) fn release(&self, bufs: Bufs) {
        let Some(mut bufs) = bufs.0 else { return };
        let mut pool = self.pool.borrow_mut();
        if pool.len() >= POOL_MAX {
            return;
        }
        bufs.read.clear();
        bufs.write.clear();
        bufs.chunked_body = Vec::new();
        bufs.res.clear();
        shrink(&mut bufs.read, INITIAL_BUFFER);
        shrink(&mut bufs.write, INITIAL_BUFFER);
        shrink(&mut bufs.res.buffer, 0);
        shrink(&mut bufs.res.headers, 0);
        pool.push(bufs);
    }
}

pub(crate) fn shrink(v: &mut Vec<u8>, to: usize) {
    if v.capacity() > KEEP_BUFFER {
        v.shrink_to(to);
    }
}

fn render_date() -> [u8; 29] {
    let mut out = [b' '; 29];
    let s = httpdate::fmt_http_date(SystemTime::now());
    let n = s.len().min(29);
    out[..n].copy_from_slice(&s.as_bytes()[..n]);
    out
}
