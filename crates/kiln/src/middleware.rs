//! Middleware: code that runs before and after every request, and may answer
//! instead of the app.
//!
//! A [`Middleware`] is built once per worker, so it may keep `!Send` state (a counter
//! in a `Cell`). Wrapping is static: `app.build()?.wrap(|w| A::new(w)).wrap(|_| B)`
//! nests services without boxing, `B` outermost. Anything that needs more (an access
//! log writing off the request path) can wrap a `kiln_http::Service` the same way.

use std::cell::Cell;
use std::fmt::Write;
use std::time::Instant;

use kiln_http::{Request, Response, Service};

/// What [`Middleware::before`] decided.
#[derive(Debug)]
pub enum Flow<C> {
    /// Call the inner service, then `after` with this value.
    Continue(C),
    /// The response is complete: skip the inner service and `after`.
    Respond,
}

/// Runs around every request of a worker.
pub trait Middleware: 'static {
    /// What `before` hands to `after` (a start time, an id).
    type Carry;

    /// Runs before the app; may fill `res` and return [`Flow::Respond`] to answer alone.
    fn before(&self, req: &Request<'_>, res: &mut Response) -> Flow<Self::Carry>;

    /// Runs after the app has filled `res`.
    fn after(&self, req: &Request<'_>, res: &mut Response, carry: Self::Carry);
}

/// A service wrapped in a middleware.
#[derive(Debug)]
pub struct Wrapped<M, S> {
    middleware: M,
    inner: S,
}

impl<M, S> Wrapped<M, S> {
    pub(crate) fn new(middleware: M, inner: S) -> Self {
        Wrapped { middleware, inner }
    }
}

impl<M: Middleware, S: Service> Service for Wrapped<M, S> {
    async fn call<'a>(&'a self, req: Request<'a>, res: &'a mut Response) {
        if let Flow::Continue(carry) = self.middleware.before(&req, res) {
            self.inner.call(req, res).await;
            self.middleware.after(&req, res, carry);
        }
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

/// A [`MakeService`](crate::MakeService) whose services are wrapped in a middleware;
/// see [`MakeService::wrap`](crate::MakeService::wrap).
#[derive(Debug)]
pub struct Layered<I, F> {
    pub(crate) inner: I,
    pub(crate) make: F,
}

impl<I, F> Layered<I, F> {
    pub(crate) fn new(inner: I, make: F) -> Self {
        Layered { inner, make }
    }
}

/// Tags every response with `X-Request-Id`: the client's own when it sent one (and it
/// is short and printable), else `<worker>-<counter>`, unique within the process.
#[derive(Debug)]
pub struct RequestId {
    worker: usize,
    next: Cell<u64>,
}

impl RequestId {
    /// Longest client-supplied id that is passed through.
    pub const MAX_LEN: usize = 128;

    /// The middleware for worker `worker`.
    pub fn new(worker: usize) -> Self {
        RequestId { worker, next: Cell::new(1) }
    }
}

impl Middleware for RequestId {
    type Carry = ();

    fn before(&self, _: &Request<'_>, _: &mut Response) -> Flow<()> {
        Flow::Continue(())
    }

    fn after(&self, req: &Request<'_>, res: &mut Response, _: ()) {
        match req.header("x-request-id") {
            Some(id) if id.len() <= Self::MAX_LEN && id.iter().all(|b| b.is_ascii_graphic()) => {
                res.append_header_unchecked(b"X-Request-Id", id);
            }
            _ => {
                let n = self.next.get();
                self.next.set(n + 1);
                let mut id = [0u8; 48];
                let len = {
                    let mut w = Cursor { buf: &mut id, len: 0 };
                    let _ = write!(w, "{}-{n}", self.worker);
                    w.len
                };
                res.append_header_unchecked(b"X-Request-Id", &id[..len]);
            }
        }
    }
}

/// Reports how long the app took in `Server-Timing: app;dur=<ms>`.
#[derive(Debug, Default, Clone, Copy)]
pub struct ServerTiming;

impl Middleware for ServerTiming {
    type Carry = Instant;

    fn before(&self, _: &Request<'_>, _: &mut Response) -> Flow<Instant> {
        Flow::Continue(Instant::now())
    }

    fn after(&self, _: &Request<'_>, res: &mut Response, start: Instant) {
        let micros = start.elapsed().as_micros();
        let mut value = [0u8; 64];
        let len = {
            let mut w = Cursor { buf: &mut value, len: 0 };
            let _ = write!(w, "app;dur={}.{:03}", micros / 1000, micros % 1000);
            w.len
        };
        res.append_header_unchecked(b"Server-Timing", &value[..len]);
    }
}

/// Formats into a stack buffer, so that a header value costs no allocation.
struct Cursor<'a> {
    buf: &'a mut [u8],
    len: usize,
}

impl Write for Cursor<'_> {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        let end = self.len + s.len();
        let slot = self.buf.get_mut(self.len..end).ok_or(std::fmt::Error)?;
        slot.copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}
