//! The process signals a server acts on (SIGTERM, SIGINT, SIGUSR2), listened for from
//! the moment the server starts serving.
//!
//! They are made in [`Server::serve`](crate::Server::serve), before any worker
//! accepts, not when [`ServerHandle::until_signal`](crate::ServerHandle::until_signal)
//! first runs: until a listener exists a signal takes its default action, and for
//! SIGTERM that ends the process at once, without the drain. A SIGTERM sent as soon as
//! the server answers (a supervisor's health check passed, then a rolling restart) must
//! drain like any other. A signal that comes before `until_signal` runs is kept and
//! acted on when it does.

use std::io;

use tokio::signal::unix::{Signal, SignalKind, signal};

/// One listener per signal the server acts on.
#[derive(Debug)]
pub(crate) struct Signals {
    pub(crate) terminate: Signal,
    pub(crate) interrupt: Signal,
    pub(crate) handover: Signal,
}

impl Signals {
    /// Installs the handlers and starts listening.
    ///
    /// Made on a thread of its own with a runtime of its own, dropped once they exist:
    /// `serve` may be called with or without a runtime around it (and dropping a runtime
    /// inside another one panics). The listeners keep every signal delivered after this
    /// returns; whichever runtime later polls them delivers it (each tokio runtime's
    /// driver reads the process-wide signal pipe).
    pub(crate) fn listen() -> io::Result<Signals> {
        std::thread::scope(|scope| {
            let made = scope.spawn(|| {
                let rt = tokio::runtime::Builder::new_current_thread().enable_io().build()?;
                let _inside = rt.enter();
                Ok(Signals {
                    terminate: signal(SignalKind::terminate())?,
                    interrupt: signal(SignalKind::interrupt())?,
                    handover: signal(SignalKind::user_defined2())?,
                })
            });
            made.join().unwrap_or_else(|_| Err(io::Error::other("the signal listeners' thread panicked")))
        })
    }
}
