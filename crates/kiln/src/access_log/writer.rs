//! The one thread that writes the log: it receives whole buffers from the workers,
//! writes each with one system call, hands the emptied buffers back, and reopens the
//! file when asked (SIGHUP, for logrotate).
//!
//! A write that fails (a full disk, a file that cannot be opened) is reported once on
//! a `tracing` error and its lines are dropped; the workers never wait for this thread.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How often the writer wakes without news: to reopen after SIGHUP, and to retry a
/// file that could not be opened.
pub(crate) const WAKE_EVERY: Duration = Duration::from_millis(250);
/// Buffers in flight between the workers and the writer; past this, lines are dropped
/// rather than making a worker wait.
pub(crate) const QUEUE_DEPTH: usize = 64;
/// Emptied buffers kept for the workers to reuse.
const POOL_MAX: usize = 64;

/// Where the lines go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LogTarget {
    /// Standard output.
    Stdout,
    /// A file, appended to and created if missing.
    File(PathBuf),
}

impl LogTarget {
    /// Parses a command-line value: `-` is stdout, `off` is no log (`None`), anything
    /// else a file path.
    pub fn from_arg(arg: &str) -> Option<LogTarget> {
        match arg {
            "off" => None,
            "-" => Some(LogTarget::Stdout),
            path => Some(LogTarget::File(PathBuf::from(path))),
        }
    }
}

pub(crate) enum Msg {
    /// A buffer of whole lines, and how many.
    Lines(Vec<u8>, u64),
    /// Reopen now rather than at the next wake.
    Wake,
    /// Write what has arrived and stop.
    Shutdown,
}

/// What the workers and the writer share. Touched once per handed-over buffer, never
/// per request.
#[derive(Debug)]
pub(crate) struct Shared {
    pub(crate) tx: SyncSender<Msg>,
    /// Set by the SIGHUP handler (or [`AccessLog::reopen`](super::AccessLog::reopen)).
    pub(crate) reopen: Arc<AtomicBool>,
    pool: Mutex<Vec<Vec<u8>>>,
    /// Lines dropped because the queue was full or a write failed.
    pub(crate) dropped: AtomicU64,
    /// Lines written.
    pub(crate) written: AtomicU64,
}

impl Shared {
    pub(crate) fn new(tx: SyncSender<Msg>) -> Shared {
        Shared {
            tx,
            reopen: Arc::new(AtomicBool::new(false)),
            pool: Mutex::new(Vec::new()),
            dropped: AtomicU64::new(0),
            written: AtomicU64::new(0),
        }
    }

    /// An empty buffer with room for `capacity` bytes, reused when one is spare.
    pub(crate) fn spare_buffer(&self, capacity: usize) -> Vec<u8> {
        let spare = self.pool.lock().ok().and_then(|mut pool| pool.pop());
        spare.unwrap_or_else(|| Vec::with_capacity(capacity))
    }

    /// Sends `buf`, holding `lines` lines, to the writer without waiting. On failure the
    /// buffer comes back, emptied, and its lines are counted as dropped.
    pub(crate) fn hand_over(&self, buf: Vec<u8>, lines: u64) -> Result<(), Vec<u8>> {
        match self.tx.try_send(Msg::Lines(buf, lines)) {
            Ok(()) => Ok(()),
            Err(TrySendError::Full(Msg::Lines(mut back, _)) | TrySendError::Disconnected(Msg::Lines(mut back, _))) => {
                self.dropped.fetch_add(lines, Ordering::Relaxed);
                back.clear();
                Err(back)
            }
            Err(_) => Ok(()),
        }
    }

    fn recycle(&self, mut buf: Vec<u8>) {
        buf.clear();
        if let Ok(mut pool) = self.pool.lock() {
            if pool.len() < POOL_MAX {
                pool.push(buf);
            }
        }
    }
}

/// The writer thread's loop; returns after [`Msg::Shutdown`] or when every sender is gone.
pub(crate) fn run(target: LogTarget, rx: Receiver<Msg>, shared: Arc<Shared>) {
    let mut sink = Sink::new(target);
    loop {
        let msg = rx.recv_timeout(WAKE_EVERY);
        if shared.reopen.swap(false, Ordering::Relaxed) {
            sink.reopen();
        }
        match msg {
            Ok(Msg::Lines(buf, lines)) => {
                sink.write(&buf, lines, &shared);
                shared.recycle(buf);
            }
            Ok(Msg::Wake) | Err(RecvTimeoutError::Timeout) => sink.retry_open(),
            Ok(Msg::Shutdown) | Err(RecvTimeoutError::Disconnected) => break,
        }
    }
    // Whatever the workers handed over before the end is still written.
    while let Ok(Msg::Lines(buf, lines)) = rx.try_recv() {
        sink.write(&buf, lines, &shared);
    }
    sink.flush();
}

/// The open destination and whether it is failing.
struct Sink {
    target: LogTarget,
    file: Option<File>,
    /// Set after a failure was reported; cleared (and said so) once writes work again.
    failing: bool,
    last_open_attempt: Instant,
}

impl Sink {
    fn new(target: LogTarget) -> Sink {
        let mut sink = Sink { target, file: None, failing: false, last_open_attempt: Instant::now() };
        sink.reopen();
        sink
    }

    /// Closes and opens the file again, so that a file renamed by logrotate is left
    /// behind and a new one begins.
    fn reopen(&mut self) {
        let LogTarget::File(path) = &self.target else { return };
        self.last_open_attempt = Instant::now();
        self.file = None;
        match open_for_append(path) {
            Ok(file) => self.file = Some(file),
            Err(e) => self.fail(&e),
        }
    }

    /// After a failed open, tries again, at most once a second.
    fn retry_open(&mut self) {
        if matches!(self.target, LogTarget::File(_))
            && self.file.is_none()
            && self.last_open_attempt.elapsed() >= Duration::from_secs(1)
        {
            self.reopen();
        }
    }

    fn write(&mut self, buf: &[u8], lines: u64, shared: &Shared) {
        self.retry_open();
        let result = match (&self.target, &mut self.file) {
            (LogTarget::Stdout, _) => {
                let mut out = io::stdout().lock();
                out.write_all(buf).and_then(|()| out.flush())
            }
            (LogTarget::File(_), Some(file)) => file.write_all(buf),
            (LogTarget::File(_), None) => Err(io::Error::new(io::ErrorKind::NotFound, "the file is not open")),
        };
        match result {
            Ok(()) => {
                shared.written.fetch_add(lines, Ordering::Relaxed);
                if self.failing {
                    self.failing = false;
                    tracing::info!(target: "kiln::access_log", "access log {}: writing again", self.describe());
                }
            }
            Err(e) => {
                shared.dropped.fetch_add(lines, Ordering::Relaxed);
                self.fail(&e);
            }
        }
    }

    /// Reports a failure once, until writes work again.
    fn fail(&mut self, e: &io::Error) {
        if !self.failing {
            self.failing = true;
            tracing::error!(target: "kiln::access_log", "access log {}: {e}; dropping lines until it can be written again", self.describe());
        }
    }

    fn flush(&mut self) {
        if let Some(file) = &mut self.file {
            let _ = file.flush();
        }
    }

    fn describe(&self) -> String {
        match &self.target {
            LogTarget::Stdout => "stdout".to_owned(),
            LogTarget::File(path) => path.display().to_string(),
        }
    }
}

/// The log file, created if missing, every write going to its end.
pub(super) fn open_for_append(path: &std::path::Path) -> io::Result<File> {
    OpenOptions::new().create(true).append(true).open(path)
}
