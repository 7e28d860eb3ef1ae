//! The thread-per-core runtime: one worker thread per core, each with its own
//! current-thread tokio runtime, its own `SO_REUSEPORT` listener and its own
//! connections. Nothing on the request path crosses threads. Signals: SIGTERM drains
//! then stops, SIGINT stops, SIGUSR2 hands the listeners over to a new process.
//!
//! Here: the map. `builder`: [`Server`], its settings and `serve`, which binds and starts
//! the worker threads; `handle`: [`ServerHandle`], the running server (signals,
//! shutdown, hand-over, the wait for the workers); `accept`: a worker thread's accept
//! loop, its admission of each connection and its drain; `start`: a connection's
//! start-up (PROXY header, TLS, the choice of HTTP/1.1 or HTTP/2).

mod accept;
mod builder;
mod handle;
mod start;
#[cfg(test)]
mod tests;

pub use self::builder::Server;
pub use self::handle::ServerHandle;
