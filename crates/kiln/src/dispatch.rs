//! From a built app to one `kiln_http::Service` per worker: [`AppFactory`] builds each
//! worker's [`AppService`], which routes every request to its handler.

use std::borrow::Cow;
use std::error::Error;
use std::fmt;
use std::future::Future;
use std::rc::Rc;
use std::sync::Arc;

use kiln_http::{Request, Response, Service, StatusCode};

use crate::access_log::{AccessLog, Logged};
use crate::config::Config;
use crate::extract::RequestContext;
use crate::handler::Dispatch;
use crate::layers::{Counting, Keying, WorkerCounters};
use crate::make::{MakeService, StateError};
use crate::rejection::{MethodNotAllowed, NotFound};
use crate::route::PathParams;
use crate::router::{Router, TrailingSlash};

pub(crate) type StateFactory<S> = dyn Fn(usize) -> Result<S, Box<dyn Error + Send + Sync>> + Send + Sync;

/// What every worker shares, read-only: the route table and the settings.
struct Shared<S> {
    router: Router<S>,
    config: Config,
    trailing_slash: TrailingSlash,
    /// Some rate limit may cover a request that no route matched (each route's own
    /// answer is its endpoint's `rate_limited`).
    unrouted_rate_limited: bool,
}

/// A checked app, ready to build one service per worker. Made by
/// [`App::build`](crate::App::build).
pub struct AppFactory<S> {
    shared: Arc<Shared<S>>,
    state: Arc<StateFactory<S>>,
    log: Option<AccessLog>,
}

impl<S: 'static> AppFactory<S> {
    pub(crate) fn new(
        mut router: Router<S>,
        config: Config,
        trailing_slash: TrailingSlash,
        state: Arc<StateFactory<S>>,
        log: Option<AccessLog>,
    ) -> Self {
        router.mark_rate_limited(|pattern, method| config.layers.rate_limit_may_cover(pattern, method));
        let unrouted_rate_limited = config.layers.rate_limit_may_cover_unrouted();
        let shared = Shared { router, config, trailing_slash, unrouted_rate_limited };
        AppFactory { shared: Arc::new(shared), state, log }
    }
}

impl<S> fmt::Debug for AppFactory<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let patterns: Vec<&str> = self.shared.router.patterns().collect();
        f.debug_struct("AppFactory").field("patterns", &patterns).finish()
    }
}

impl<S: 'static> MakeService for AppFactory<S> {
    type Service = AppService<S>;

    fn make_service(&self, worker: usize) -> Self::Service {
        self.try_make_service(worker).unwrap_or_else(|e| panic!("{e}"))
    }

    fn try_make_service(&self, worker: usize) -> Result<Self::Service, StateError> {
        let state = (self.state)(worker).map_err(|e| StateError::new(worker, e))?;
        let counters = self.shared.config.layers.metrics.as_ref().map(|m| m.register(self.shared.router.patterns()));
        let routed = Routed { shared: Arc::clone(&self.shared), state: Rc::new(state), counters };
        Ok(AppService { inner: Logged::new(routed, self.log.as_ref()) })
    }

    fn access_log(&self) -> Option<&AccessLog> {
        self.log.as_ref()
    }
}

/// The app on one worker: the shared router and this worker's state, behind the
/// access log when the app has one.
pub struct AppService<S> {
    inner: Logged<Routed<S>>,
}

impl<S: 'static> Service for AppService<S> {
    fn call<'a>(&'a self, req: Request<'a>, res: &'a mut Response) -> impl Future<Output = ()> + 'a {
        self.inner.call(req, res)
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

/// Routes a worker's requests with its state.
struct Routed<S> {
    shared: Arc<Shared<S>>,
    state: Rc<S>,
    /// This worker's counters, when the app serves metrics.
    counters: Option<Arc<WorkerCounters>>,
}

impl<S: 'static> Routed<S> {
    /// Routes the request (whose `path` the caller read once: it is validated text,
    /// not free) and starts its handler; rejections are rendered at once.
    /// Returns the index of the route that matched too (`None`: none did).
    fn dispatch<'a>(&'a self, req: Request<'a>, path: &'a str, res: &'a mut Response) -> (Option<usize>, Dispatch<'a>) {
        let shared = &*self.shared;
        let found = shared.router.at(path);
        let config = &shared.config;
        let limited = match &found {
            Some((_, endpoint, _)) => endpoint.rate_limited,
            None => shared.unrouted_rate_limited,
        };
        if limited {
            let keying = Keying { trusted_proxies: &config.trusted_proxies, secret: config.key.as_ref() };
            let route = found.as_ref().map(|(_, endpoint, _)| &*endpoint.pattern);
            if let Err(refused) = config.layers.rate_limit(&req, path, route, &keying) {
                config.reject_at(path, &refused.into(), res);
                return (found.map(|(index, ..)| index), Dispatch::Done);
            }
        }
        let Some((index, endpoint, params)) = found else {
            return (None, self.miss(req, path, res));
        };
        let Some(handler) = endpoint.handler_for(&req) else {
            shared.config.reject_at(path, &MethodNotAllowed::new(req.method(), &endpoint.allow).into(), res);
            return (Some(index), Dispatch::Done);
        };
        let cx = RequestContext {
            req,
            params: PathParams::new(params),
            pattern: Some(&endpoint.pattern),
            state: &self.state,
            config: &shared.config,
        };
        (Some(index), handler.start(&cx, res))
    }

    /// No pattern matched: redirect across a trailing slash, call the fallback, or 404.
    fn miss<'a>(&'a self, req: Request<'a>, path: &'a str, res: &'a mut Response) -> Dispatch<'a> {
        let shared = &*self.shared;
        if shared.trailing_slash == TrailingSlash::Redirect && path.len() > 1 {
            let other = match path.strip_suffix('/') {
                Some(trimmed) => Cow::Borrowed(trimmed),
                None => Cow::Owned(format!("{path}/")),
            };
            if shared.router.matches(&other) {
                let mut location = other.into_owned();
                if let Some(q) = req.query() {
                    location.push('?');
                    location.push_str(q);
                }
                res.set_status(StatusCode::PERMANENT_REDIRECT);
                res.append_header_unchecked(b"Location", location.as_bytes());
                return Dispatch::Done;
            }
        }
        match &shared.router.fallback {
            Some(fallback) => {
                let cx = RequestContext {
                    req,
                    params: PathParams::default(),
                    pattern: None,
                    state: &self.state,
                    config: &shared.config,
                };
                fallback.start(&cx, res)
            }
            None => {
                shared.config.reject_at(path, &NotFound::new(format!("no route for {path}")).into(), res);
                Dispatch::Done
            }
        }
    }
}

impl<S: 'static> Service for Routed<S> {
    /// Without a span (the common case, metrics or not), the answer is polled in
    /// place: a nested future made every request's future larger, and the engine
    /// moves it (issue 25: 92 instructions a `/pong`). With one, the answer runs inside
    /// the request's span, entered once per poll: a `/pong` is answered in one poll,
    /// so one enter and one exit (each a call into the subscriber), not one per stage.
    async fn call<'a>(&'a self, req: Request<'a>, res: &'a mut Response) {
        let path = req.path();
        let observed = self.observe(req, path);
        let route = match observed.as_ref().and_then(|o| o.span.as_ref()) {
            None => {
                let route = {
                    let Some((route, dispatch)) = self.start(req, path, &mut *res) else {
                        // A CORS preflight or a scrape: counted (but for the scrape) by
                        // its route; rare, so routed again.
                        if let Some(observed) = observed {
                            observed.finish(self.shared.router.index_of(path), res.status());
                        }
                        return;
                    };
                    if let Dispatch::Running(handler) = dispatch {
                        handler.await;
                    }
                    route
                };
                self.end(req, path, res);
                route
            }
            Some(span) => {
                let mut answer = std::pin::pin!(self.answer(req, path, &mut *res));
                std::future::poll_fn(|cx| {
                    let _entered = span.enter();
                    answer.as_mut().poll(cx)
                })
                .await
            }
        };
        if let Some(observed) = observed {
            observed.finish(route, res.status());
        }
    }

    /// The app's hints, for a browser loading a page: a `GET` that accepts HTML.
    fn early_hints<'a>(&'a self, req: &Request<'_>) -> Option<&'a [u8]> {
        let hints = self.shared.config.early_hints.as_deref()?;
        let page = req.method() == "GET" && req.header("accept").is_some_and(|a| contains(a, b"text/html"));
        page.then_some(hints)
    }

    /// Streamed for the routes registered with [`App::stream_body`](crate::App::stream_body);
    /// an app without any answers at once, without routing.
    fn body_mode(&self, req: &Request<'_>) -> kiln_http::BodyMode {
        self.shared.router.body_mode(req.path(), req.method())
    }

    /// Offered when a route takes a WebSocket handshake: it answers over HTTP/2 too.
    fn extended_connect(&self) -> bool {
        self.shared.router.websockets
    }

    /// Under a problem+json prefix, the engine's own refusal (a body over its limit, a
    /// malformed or late body) becomes problem details too.
    fn refused(&self, req: &Request<'_>, res: &mut Response) {
        if let Some(problems) = &self.shared.config.problems {
            let path = req.path();
            if problems.covers(path) {
                crate::problem::rewrite_refusal(path, res);
            }
        }
    }
}

/// What the app watches of one request: its counters (the scrape itself is not
/// counted) and its span.
struct Observed<'c> {
    counted: Option<Counting<'c>>,
    span: Option<tracing::Span>,
}

impl Observed<'_> {
    fn finish(self, route: Option<usize>, status: StatusCode) {
        if let Some(counting) = self.counted {
            counting.finish(route, status);
        }
    }
}

impl<S: 'static> Routed<S> {
    /// Answers the request: the layers before, the handler, the layers after. Returns
    /// the index of the route that matched (`None`: none did), for the metrics.
    async fn answer<'a>(&'a self, req: Request<'a>, path: &'a str, res: &'a mut Response) -> Option<usize> {
        let route = {
            let Some((route, dispatch)) = self.start(req, path, &mut *res) else {
                // A CORS preflight or a scrape; rare, so routed again.
                return self.shared.router.index_of(path);
            };
            if let Dispatch::Running(handler) = dispatch {
                handler.await;
            }
            route
        };
        self.end(req, path, res);
        route
    }

    /// The layers before the handler, then routing: `None` when a layer answered (a
    /// CORS preflight, a scrape), else the route's index and its handler.
    fn start<'a>(
        &'a self,
        req: Request<'a>,
        path: &'a str,
        res: &'a mut Response,
    ) -> Option<(Option<usize>, Dispatch<'a>)> {
        if self.shared.config.layers.before(req, path, res) {
            return None;
        }
        Some(self.dispatch(req, path, res))
    }

    /// The layers after the handler, and a 5xx's event.
    fn end(&self, req: Request<'_>, path: &str, res: &mut Response) {
        let config = &self.shared.config;
        if let Some(headers) = &config.secure_headers {
            headers.apply(path, res);
        }
        config.layers.after(req, path, res);
        if res.status().is_server_error() {
            tracing::warn!(target: "kiln::request", method = req.method(), path, "answered {}", res.status());
        }
    }

    /// `None` (the common case: nothing to do) unless the app serves metrics or
    /// wants request spans.
    fn observe<'c>(&'c self, req: Request<'_>, path: &str) -> Option<Observed<'c>> {
        let layers = &self.shared.config.layers;
        if self.counters.is_none() && !layers.request_spans {
            return None;
        }
        let scrape = layers.metrics.as_ref().is_some_and(|m| m.is_scrape(req, path));
        let counted = match &self.counters {
            Some(counters) if !scrape => Some(counters.started()),
            _ => None,
        };
        // A static callsite: the subscriber's interest is cached there, so a span it
        // does not want costs a load and a compare, and is not kept (no enter, no
        // nested future). The fields are borrowed; a subscriber formats them if it
        // wants to. A root (`parent: None`): the engine enters no span around the
        // service, so the registry's look-up of the thread's current span for a
        // parent would find none at best (about 40 instructions a request, issue
        // 25), and at worst a span other code left entered on the worker's thread,
        // which would adopt every request after it.
        let span = layers
            .request_spans
            .then(|| tracing::info_span!(target: "kiln::request", parent: None, "request", method = req.method(), path))
            .filter(|span| !span.is_disabled());
        Some(Observed { counted, span })
    }
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w.eq_ignore_ascii_case(needle))
}
