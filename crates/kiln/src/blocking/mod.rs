//! Blocking work off the workers: [`blocking`] runs a closure on a bounded pool of
//! threads shared by the process, so a password hash or a synchronous library call
//! does not stall every connection of the worker that asked for it.
//!
//! Each worker is one thread running many connections; a closure that computes for
//! 0.4 s there holds all of them for 0.4 s. On the pool the worker goes on serving
//! while the closure runs, and resumes the handler when it is done. The pool's queue
//! is bounded: past it a call is refused at once with `503`
//! ([`Unavailable`](crate::rejection::Unavailable)) rather than piling up work the
//! clients have long stopped waiting for.

mod pool;

pub use pool::{BlockingPool, DEFAULT_QUEUE_PER_THREAD, blocking};
