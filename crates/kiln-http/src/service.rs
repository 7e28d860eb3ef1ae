//! The one trait the connection engine calls into.

use std::future::{Future, poll_fn};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::pin;
use std::task::Poll;

use crate::{BodyMode, Request, Response};

/// Answers requests for one worker thread.
///
/// A service is built once per worker by the factory given to
/// [`Server::serve`](crate::Server::serve), so it may hold `!Send` state (an `Rc`, a
/// `RefCell` cache, a database connection) without locks. The engine calls it for each
/// request of a connection in order; the response it fills is encoded straight into the
/// connection's write buffer.
///
/// The response arrives cleared (status 200, no headers, empty body). A service that
/// panics costs that one request a `500 Internal Server Error`; the worker lives on.
pub trait Service: 'static {
    /// Answers one request by filling `res`.
    fn call<'a>(&'a self, req: Request<'a>, res: &'a mut Response) -> impl Future<Output = ()> + 'a;

    /// Header lines (`Link: </static/site.css>; rel=preload; as=style\r\n`) to send in a
    /// `103 Early Hints` (RFC 8297) as soon as `req` arrives, before the service answers,
    /// so that a browser fetches what the page needs while the page is made. Sent over
    /// HTTP/2 only: old HTTP/1.1 clients break on an unexpected 1xx. None by default; a
    /// service that wraps another forwards it.
    fn early_hints<'a>(&'a self, req: &Request<'_>) -> Option<&'a [u8]> {
        let _ = req;
        None
    }

    /// How to read the body of `req`, asked once its head is parsed and only when it
    /// has a body: read whole before [`call`](Self::call) (the default), or handed over
    /// as a stream read as the service asks (an upload route; see [`BodyMode`]). A
    /// service that wraps another forwards it.
    fn body_mode(&self, req: &Request<'_>) -> BodyMode {
        let _ = req;
        BodyMode::Buffer
    }

    /// Whether the service answers extended CONNECT over HTTP/2 (RFC 8441): a request
    /// whose [`Request::protocol`] names the protocol to speak on its stream (a
    /// WebSocket), answered `2xx` with [`Response::set_upgrade`], whose callback then
    /// has the stream as its connection. Asked once per HTTP/2 connection, to decide
    /// whether its SETTINGS offer it ([`Limits::h2_extended_connect`](crate::Limits)
    /// can turn it off). `false` by default; a service that wraps another forwards it.
    fn extended_connect(&self) -> bool {
        false
    }

    /// Called when the engine refuses a request whose head it read without calling
    /// the service (its body over the limit, a malformed chunked body, its body not
    /// received in time): `res` holds the engine's plain-text answer, and the service
    /// may render it its own way (RFC 9457 problem details for an API path), keeping its
    /// status. Refusals made before a head was read (a malformed request line, headers
    /// too large) know no request and stay the engine's. Nothing by default; a service
    /// that wraps another forwards it.
    fn refused(&self, req: &Request<'_>, res: &mut Response) {
        let _ = (req, res);
    }
}

impl<S: Service> Service for std::rc::Rc<S> {
    fn call<'a>(&'a self, req: Request<'a>, res: &'a mut Response) -> impl Future<Output = ()> + 'a {
        (**self).call(req, res)
    }

    fn early_hints<'a>(&'a self, req: &Request<'_>) -> Option<&'a [u8]> {
        (**self).early_hints(req)
    }

    fn body_mode(&self, req: &Request<'_>) -> BodyMode {
        (**self).body_mode(req)
    }

    fn extended_connect(&self) -> bool {
        (**self).extended_connect()
    }

    fn refused(&self, req: &Request<'_>, res: &mut Response) {
        (**self).refused(req, res);
    }
}

/// Calls `service`, catching a panic: `false` when it panicked, while starting its
/// future (a synchronous [`service_fn`]) or while it ran. The caller then answers `500`;
/// a panicking handler costs its request, not the worker.
pub(crate) async fn call_caught<'a, S: Service>(service: &'a S, req: Request<'a>, res: &'a mut Response) -> bool {
    let start = move || {
        let res = res;
        service.call(req, res)
    };
    let Ok(call) = catch_unwind(AssertUnwindSafe(start)) else { return false };
    let mut call = pin!(call);
    poll_fn(|cx| match catch_unwind(AssertUnwindSafe(|| call.as_mut().poll(cx))) {
        Ok(Poll::Ready(())) => Poll::Ready(true),
        Ok(Poll::Pending) => Poll::Pending,
        Err(_) => Poll::Ready(false),
    })
    .await
}

/// Turns a plain function into a [`Service`], for tests and tiny servers.
///
/// ```
/// use kiln_http::{service_fn, Request, Response};
/// let svc = service_fn(|_req: Request<'_>, res: &mut Response| {
///     res.set_content_type("text/plain");
///     res.body_mut().extend_from_slice(b"PONG");
/// });
/// # let _ = svc;
/// ```
pub fn service_fn<F>(f: F) -> ServiceFn<F>
where
    F: Fn(Request<'_>, &mut Response) + 'static,
{
    ServiceFn(f)
}

/// A [`Service`] made from a synchronous function; see [`service_fn`].
#[derive(Debug, Clone, Copy)]
pub struct ServiceFn<F>(F);

impl<F> Service for ServiceFn<F>
where
    F: Fn(Request<'_>, &mut Response) + 'static,
{
    fn call<'a>(&'a self, req: Request<'a>, res: &'a mut Response) -> impl Future<Output = ()> + 'a {
        (self.0)(req, res);
        std::future::ready(())
    }
}
