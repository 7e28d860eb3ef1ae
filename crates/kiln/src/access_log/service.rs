//! [`Logged`]: any service, with one log line per request written into the worker's
//! own buffer after the inner service returns.

use std::cell::{Cell, RefCell};
use std::io::Write;
use std::net::IpAddr;
use std::rc::{Rc, Weak};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use kiln_http::{Request, Response, Service, TrustedProxies, Version};

use super::AccessLog;
use super::format::{Clock, Line, LogFormat};
use super::writer::Shared;

/// A worker's buffer is handed to the writer once it holds this much: about 2,500
/// lines, so that the hand-over and the writer's system call are rare.
const HAND_OVER_AT: usize = 256 * 1024;
/// Capacity of a fresh buffer: a line past the hand-over mark still fits.
const BUFFER_CAPACITY: usize = 320 * 1024;

/// A service whose every request is logged; see [`AccessLog::wrap`].
///
/// Its lines are handed to the writer thread when the buffer fills, at least once a
/// second (by a timer on the worker's event loop, started with the first request), and
/// when the service is dropped at shutdown.
pub struct Logged<S> {
    inner: S,
    log: Option<Rc<WorkerLog>>,
    ticking: Cell<bool>,
}

impl<S> Logged<S> {
    /// Wraps `inner`, logging to `log`, or not at all when `log` is `None` (so that a
    /// `--access-log off` server has the same type).
    pub fn new(inner: S, log: Option<&AccessLog>) -> Logged<S> {
        let log = log.map(|l| {
            Rc::new(WorkerLog {
                buf: RefCell::new(l.shared.spare_buffer(BUFFER_CAPACITY)),
                lines: Cell::new(0),
                clock: RefCell::new(Clock::new()),
                epoch: Cell::new(Epoch::now()),
                second: Cell::new(None),
                remote: RefCell::new(Remote::default()),
                format: l.format,
                trusted: l.trusted.clone(),
                shared: Arc::clone(&l.shared),
            })
        });
        Logged { inner, log, ticking: Cell::new(false) }
    }
}

impl<S> std::fmt::Debug for Logged<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Logged").field("enabled", &self.log.is_some()).finish()
    }
}

impl<S: Service> Service for Logged<S> {
    async fn call<'a>(&'a self, req: Request<'a>, res: &'a mut Response) {
        let Some(log) = &self.log else { return self.inner.call(req, res).await };
        let started = Instant::now();
        self.inner.call(req, res).await;
        let micros = started.elapsed().as_micros() as u64;
        if !self.ticking.replace(true) {
            // Spawned here, not in `new`: only now is it certain that we run on a
            // worker's event loop.
            tokio::task::spawn_local(tick(Rc::downgrade(log)));
        }
        log.record(&req, res, started, micros);
    }

    fn early_hints<'a>(&'a self, req: &Request<'_>) -> Option<&'a [u8]> {
        self.inner.early_hints(req)
    }

    fn body_mode(&self, req: &Request<'_>) -> kiln_http::BodyMode {
        self.inner.body_mode(req)
    }

    fn extended_connect(&self) -> bool {
        self.inner.extended_connect()
    }

    fn refused(&self, req: &Request<'_>, res: &mut Response) {
        self.inner.refused(req, res);
    }
}

/// What one worker owns for logging; no lock, no atomic on the request path.
struct WorkerLog {
    buf: RefCell<Vec<u8>>,
    /// Lines in `buf`, so that the writer need not count them.
    lines: Cell<u64>,
    clock: RefCell<Clock>,
    /// The wall clock's second at a monotonic instant, so that a request's time costs
    /// no second clock read; set again every [`FLUSH_EVERY`](super::FLUSH_EVERY).
    epoch: Cell<Epoch>,
    /// The Unix second last logged and the instants it runs between, by the epoch: a
    /// request in the same second costs two comparisons, not a clock subtraction.
    second: Cell<Option<(Instant, Instant, u64)>>,
    /// The last client address, rendered: most requests come from one.
    remote: RefCell<Remote>,
    format: LogFormat,
    trusted: TrustedProxies,
    shared: Arc<Shared>,
}

/// A monotonic instant and the Unix time (in seconds) it was read at.
#[derive(Clone, Copy)]
struct Epoch {
    at: Instant,
    unix: u64,
}

impl Epoch {
    fn now() -> Epoch {
        let unix = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
        Epoch { at: Instant::now(), unix }
    }

    /// The Unix second of `instant`, which is no earlier than the epoch's.
    fn unix_at(self, instant: Instant) -> u64 {
        self.unix + instant.saturating_duration_since(self.at).as_secs()
    }
}

/// A client address and its text.
#[derive(Default)]
struct Remote {
    ip: Option<IpAddr>,
    text: Vec<u8>,
}

impl Remote {
    fn render(&mut self, ip: IpAddr) -> &[u8] {
        if self.ip != Some(ip) {
            self.text.clear();
            let _ = write!(self.text, "{ip}");
            self.ip = Some(ip);
        }
        &self.text
    }
}

impl WorkerLog {
    fn record(&self, req: &Request<'_>, res: &Response, started: Instant, micros: u64) {
        let status = res.status().as_u16();
        // The engine sends no body for these, whatever the response holds.
        let bodiless = req.method() == "HEAD" || status < 200 || status == 204 || status == 304;
        let mut remote = self.remote.borrow_mut();
        // Both in one pass over the headers.
        let (mut referer, mut user_agent) = (None, None);
        for (name, value) in req.raw_headers() {
            if referer.is_none() && name.eq_ignore_ascii_case(b"referer") {
                referer = Some(value);
            } else if user_agent.is_none() && name.eq_ignore_ascii_case(b"user-agent") {
                user_agent = Some(value);
            }
        }
        let line = Line {
            remote: remote.render(self.trusted.client_ip(req)),
            method: req.method(),
            target: req.target(),
            version: match req.version() {
                Version::Http10 => "HTTP/1.0",
                Version::Http11 => "HTTP/1.1",
                Version::Http2 => "HTTP/2.0",
            },
            status,
            bytes: if bodiless { 0 } else { res.body_len().unwrap_or(0) },
            referer,
            user_agent,
            micros,
        };
        let mut clock = self.clock.borrow_mut();
        clock.set_unix(self.unix_at(started));
        let mut buf = self.buf.borrow_mut();
        line.write(self.format, &clock, &mut buf);
        self.lines.set(self.lines.get() + 1);
        if buf.len() >= HAND_OVER_AT {
            drop(buf);
            self.hand_over();
        }
    }

    /// The Unix second `instant` falls in.
    fn unix_at(&self, instant: Instant) -> u64 {
        if let Some((from, until, unix)) = self.second.get()
            && from <= instant
            && instant < until
        {
            return unix;
        }
        let epoch = self.epoch.get();
        let unix = epoch.unix_at(instant);
        let from = epoch.at + Duration::from_secs(unix - epoch.unix);
        self.second.set(Some((from, from + Duration::from_secs(1), unix)));
        unix
    }

    fn hand_over(&self) {
        let mut buf = self.buf.borrow_mut();
        if buf.is_empty() {
            return;
        }
        let fresh = self.shared.spare_buffer(BUFFER_CAPACITY);
        let full = std::mem::replace(&mut *buf, fresh);
        if let Err(back) = self.shared.hand_over(full, self.lines.replace(0)) {
            *buf = back;
        }
    }
}

impl Drop for WorkerLog {
    fn drop(&mut self) {
        self.hand_over();
    }
}

/// Hands the buffer over once a second, until the service is gone.
async fn tick(log: Weak<WorkerLog>) {
    let mut every = tokio::time::interval(super::FLUSH_EVERY);
    every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        every.tick().await;
        match log.upgrade() {
            Some(log) => {
                log.epoch.set(Epoch::now());
                log.second.set(None);
                log.hand_over();
            }
            None => return,
        }
    }
}
