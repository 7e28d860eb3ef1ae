//! The access log: one line per request, in Combined Log Format (or JSON lines), for
//! almost nothing on the request path.
//!
//! - `format`: the line, appended to a buffer without allocating; the time rendered
//!   once a second.
//! - `service`: [`Logged`], a wrapper over any [`Service`](kiln_http::Service) that
//!   writes into its worker's own buffer.
//! - `writer`: the one thread that writes whole buffers, reopens on SIGHUP, and drops
//!   lines (saying so once) rather than ever making a worker wait.
//!
//! ```no_run
//! use kiln::access_log::{AccessLog, LogFormat, LogTarget};
//! use kiln::http::{service_fn, Server};
//!
//! let log = AccessLog::open(LogTarget::File("access.log".into()), LogFormat::Combined);
//! log.reopen_on_sighup().expect("SIGHUP handler");
//! let for_workers = log.clone();
//! let server = Server::new()
//!     .serve(move |_| for_workers.wrap(service_fn(|_req, res| res.set_body_static(b"PONG"))))
//!     .expect("listen");
//! server.run_until_signal().expect("serve");
//! log.shutdown();
//! ```

mod format;
mod service;
mod writer;

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

pub use format::LogFormat;
pub use service::Logged;
pub use writer::LogTarget;

use writer::{Msg, QUEUE_DEPTH, Shared};

/// Longest a line waits in a worker's buffer before it is handed to the writer.
pub const FLUSH_EVERY: Duration = Duration::from_secs(1);

/// A handle to the access log and its writer thread. Cheap to clone; give a clone to
/// the worker factory and [`wrap`](Self::wrap) each worker's service.
#[derive(Debug, Clone)]
pub struct AccessLog {
    shared: Arc<Shared>,
    format: LogFormat,
    writer: Arc<Mutex<Option<JoinHandle<()>>>>,
    trusted: kiln_http::TrustedProxies,
}

impl AccessLog {
    /// Starts the writer thread for `target`. This never fails: a file that cannot be
    /// opened is reported once (a `tracing` error), its lines are dropped, and opening is retried
    /// once a second.
    pub fn open(target: LogTarget, format: LogFormat) -> AccessLog {
        let (tx, rx) = std::sync::mpsc::sync_channel(QUEUE_DEPTH);
        let shared = Arc::new(Shared::new(tx));
        let for_thread = Arc::clone(&shared);
        let writer = std::thread::Builder::new()
            .name("kiln-access-log".into())
            .spawn(move || writer::run(target, rx, for_thread))
            .expect("spawn the access log writer thread");
        AccessLog { shared, format, writer: Arc::new(Mutex::new(Some(writer))), trusted: Default::default() }
    }

    /// [`AccessLog::open`], but a file that cannot be opened for appending now (a typo,
    /// a missing folder, no permission) is an error naming it: for a start-up that
    /// should refuse to run rather than drop every line. Later failures (the file
    /// removed, the disk full) are handled as `open` handles them.
    ///
    /// ```
    /// use kiln::access_log::{AccessLog, LogFormat, LogTarget};
    ///
    /// let target = LogTarget::File("/no/such/folder/access.log".into());
    /// let err = AccessLog::try_open(target, LogFormat::Combined).unwrap_err();
    /// assert!(err.to_string().starts_with("access log /no/such/folder/access.log: "), "{err}");
    /// ```
    pub fn try_open(target: LogTarget, format: LogFormat) -> std::io::Result<AccessLog> {
        if let LogTarget::File(path) = &target {
            writer::open_for_append(path)
                .map_err(|e| std::io::Error::new(e.kind(), format!("access log {}: {e}", path.display())))?;
        }
        Ok(AccessLog::open(target, format))
    }

    /// Logs as the client the address a trusted proxy names in `Forwarded` or
    /// `X-Forwarded-For` (see [`TrustedProxies::client_ip`](kiln_http::TrustedProxies::client_ip)),
    /// rather than the connection's peer. An [`App`](crate::App)'s log gets the app's
    /// [trusted proxies](crate::App::trusted_proxies).
    pub fn trusted_proxies(mut self, trusted: kiln_http::TrustedProxies) -> Self {
        self.trusted = trusted;
        self
    }

    /// Wraps a worker's service so that each of its requests is logged.
    pub fn wrap<S>(&self, inner: S) -> Logged<S> {
        Logged::new(inner, Some(self))
    }

    /// Makes SIGHUP reopen the file (for logrotate). Replaces SIGHUP's default action,
    /// which would end the process.
    pub fn reopen_on_sighup(&self) -> std::io::Result<()> {
        signal_hook::flag::register(signal_hook::consts::SIGHUP, Arc::clone(&self.shared.reopen)).map(drop)
    }

    /// Reopens the file, as SIGHUP does: lines after this go to a file newly opened at
    /// the same path.
    pub fn reopen(&self) {
        self.shared.reopen.store(true, Ordering::Relaxed);
        let _ = self.shared.tx.try_send(Msg::Wake);
    }

    /// Writes every line handed over so far and stops the writer. Call it after the
    /// server's workers have stopped (their last lines are handed over as they end).
    pub fn shutdown(&self) {
        let Some(writer) = self.writer.lock().ok().and_then(|mut w| w.take()) else { return };
        // A blocking send: at shutdown, waiting for room in the queue is right.
        let _ = self.shared.tx.send(Msg::Shutdown);
        let _ = writer.join();
    }

    /// Lines written so far.
    pub fn written_lines(&self) -> u64 {
        self.shared.written.load(Ordering::Relaxed)
    }

    /// Lines dropped so far, because a write failed or the writer fell behind.
    pub fn dropped_lines(&self) -> u64 {
        self.shared.dropped.load(Ordering::Relaxed)
    }
}
