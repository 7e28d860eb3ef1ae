//! From a built app to one `kiln_http::Service` per worker: the router on the
//! request path, and the factories the server calls once per worker.

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::rc::Rc;
use std::sync::Arc;

use kiln_http::{Method, Request, Response, Server, ServerHandle, Service, StatusCode};

use crate::app::{App, BuildError, RenderRejection, RouteEntry, TrailingSlash};
use crate::extract::RequestContext;
use crate::handler::{Dispatch, ErasedHandler};
use crate::rejection::{MethodNotAllowed, NotFound, Rejection};
use crate::route::PathParams;

/// Every method registered on one pattern.
struct Endpoint<S> {
    pattern: Cow<'static, str>,
    methods: Vec<(Method, Arc<dyn ErasedHandler<S>>)>,
    /// The `Allow` header for a 405, rendered once at start-up.
    allow: String,
    get: Option<usize>,
}

impl<S> Endpoint<S> {
    /// The handler for `method`; `HEAD` falls back to `GET` (RFC 9110 §9.3.2), the
    /// engine dropping the body and keeping `Content-Length`.
    fn handler(&self, method: &str) -> Option<&dyn ErasedHandler<S>> {
        if let Some((_, h)) = self.methods.iter().find(|(m, _)| m.as_str() == method) {
            return Some(&**h);
        }
        match (method, self.get) {
            ("HEAD", Some(i)) => Some(&*self.methods[i].1),
            _ => None,
        }
    }
}

/// What every worker shares, read-only: the router, the handlers and the policies.
pub(crate) struct Shared<S> {
    router: matchit::Router<usize>,
    endpoints: Vec<Endpoint<S>>,
    fallback: Option<Arc<dyn ErasedHandler<S>>>,
    render: Option<Arc<RenderRejection>>,
    trailing_slash: TrailingSlash,
    pub(crate) body_limit: usize,
}

impl<S> Shared<S> {
    /// Renders a rejection the app's way. The response is still untouched: rejections
    /// happen before a handler runs.
    pub(crate) fn reject(&self, rejection: &Rejection, res: &mut Response) {
        match &self.render {
            Some(render) => render(rejection, res),
            None => rejection.render_plain(res),
        }
        if let Rejection::MethodNotAllowed(r) = rejection {
            // RFC 9110 §15.5.6: a 405 must list the allowed methods.
            if !res.has_header("allow") {
                res.append_header_unchecked(b"Allow", r.allow().as_bytes());
            }
        }
    }
}

/// A checked app, ready to build one service per worker. Made by [`App::build`].
pub struct AppFactory<S> {
    shared: Arc<Shared<S>>,
    state: Arc<dyn Fn(usize) -> S + Send + Sync>,
}

impl<S: 'static> AppFactory<S> {
    pub(crate) fn build(app: App<S>) -> Result<Self, BuildError> {
        let mut endpoints: Vec<Endpoint<S>> = Vec::new();
        let mut owners: Vec<Vec<RouteEntry<S>>> = Vec::new();
        let mut by_pattern: HashMap<Cow<'static, str>, usize> = HashMap::new();
        let mut router = matchit::Router::new();
        for entry in app.routes {
            let index = match by_pattern.get(&entry.pattern) {
                Some(&i) => i,
                None => {
                    let i = endpoints.len();
                    if let Err(e) = router.insert(entry.pattern.to_string(), i) {
                        return Err(insert_error(e, &entry, &owners));
                    }
                    by_pattern.insert(entry.pattern.clone(), i);
                    endpoints.push(Endpoint {
                        pattern: entry.pattern.clone(),
                        methods: Vec::new(),
                        allow: String::new(),
                        get: None,
                    });
                    owners.push(Vec::new());
                    i
                }
            };
            if let Some(first) = owners[index].iter().find(|o| o.method == entry.method) {
                return Err(BuildError::Conflict { first: first.describe(), second: entry.describe() });
            }
            endpoints[index].methods.push((entry.method.clone(), Arc::clone(&entry.handler)));
            owners[index].push(entry);
        }
        for endpoint in &mut endpoints {
            endpoint.get = endpoint.methods.iter().position(|(m, _)| *m == Method::GET);
            let mut allow: Vec<&str> = endpoint.methods.iter().map(|(m, _)| m.as_str()).collect();
            if endpoint.get.is_some() && !allow.contains(&"HEAD") {
                allow.push("HEAD");
            }
            endpoint.allow = allow.join(", ");
        }
        let shared = Shared {
            router,
            endpoints,
            fallback: app.fallback,
            render: app.render,
            trailing_slash: app.trailing_slash,
            body_limit: app.body_limit,
        };
        Ok(AppFactory { shared: Arc::new(shared), state: app.state })
    }
}

fn insert_error<S>(e: matchit::InsertError, entry: &RouteEntry<S>, owners: &[Vec<RouteEntry<S>>]) -> BuildError {
    match e {
        matchit::InsertError::Conflict { with } => {
            let first = owners
                .iter()
                .flatten()
                .find(|o| o.pattern == with)
                .map_or_else(|| format!("`{with}`"), RouteEntry::describe);
            BuildError::Conflict { first, second: entry.describe() }
        }
        other => BuildError::InvalidPattern { route: entry.describe(), reason: other.to_string() },
    }
}

impl<S> fmt::Debug for AppFactory<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let patterns: Vec<&str> = self.shared.endpoints.iter().map(|e| &*e.pattern).collect();
        f.debug_struct("AppFactory").field("patterns", &patterns).finish()
    }
}

/// The app on one worker: the shared router and this worker's state.
pub struct AppService<S> {
    shared: Arc<Shared<S>>,
    state: Rc<S>,
}

impl<S: 'static> AppService<S> {
    /// Routes the request and starts its handler; rejections are rendered at once.
    fn dispatch<'a>(&'a self, req: Request<'a>, res: &'a mut Response) -> Dispatch<'a> {
        let shared = &*self.shared;
        let path = req.path();
        let Ok(matched) = shared.router.at(path) else {
            return self.miss(req, res);
        };
        let endpoint = &shared.endpoints[*matched.value];
        let Some(handler) = endpoint.handler(req.method()) else {
            shared.reject(&MethodNotAllowed::new(req.method(), &endpoint.allow).into(), res);
            return Dispatch::Done;
        };
        let cx = RequestContext {
            req,
            params: PathParams::new(matched.params),
            pattern: Some(&endpoint.pattern),
            state: &self.state,
            shared,
        };
        handler.start(&cx, res)
    }

    /// No pattern matched: redirect across a trailing slash, call the fallback, or 404.
    fn miss<'a>(&'a self, req: Request<'a>, res: &'a mut Response) -> Dispatch<'a> {
        let shared = &*self.shared;
        let path = req.path();
        if shared.trailing_slash == TrailingSlash::Redirect && path.len() > 1 {
            let other = match path.strip_suffix('/') {
                Some(trimmed) => Cow::Borrowed(trimmed),
                None => Cow::Owned(format!("{path}/")),
            };
            if shared.router.at(&other).is_ok() {
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
        match &shared.fallback {
            Some(fallback) => {
                let cx =
                    RequestContext { req, params: PathParams::default(), pattern: None, state: &self.state, shared };
                fallback.start(&cx, res)
            }
            None => {
                shared.reject(&NotFound::new(format!("no route for {path}")).into(), res);
                Dispatch::Done
            }
        }
    }
}

impl<S: 'static> Service for AppService<S> {
    fn call<'a>(&'a self, req: Request<'a>, res: &'a mut Response) -> impl Future<Output = ()> + 'a {
        let dispatch = self.dispatch(req, res);
        async move {
            if let Dispatch::Running(handler) = dispatch {
                handler.await;
            }
        }
    }
}

/// Builds one service per worker, on the worker's thread: what
/// [`Server::serve`] needs, as a trait so that it can be wrapped.
pub trait MakeService: Send + Sync + 'static {
    /// The per-worker service.
    type Service: Service;

    /// Builds the service of worker `worker`.
    fn make_service(&self, worker: usize) -> Self::Service;

    /// Wraps every worker's service in middleware built per worker by `make`.
    fn wrap<M, F>(self, make: F) -> crate::middleware::Layered<Self, F>
    where
        Self: Sized,
        M: crate::middleware::Middleware,
        F: Fn(usize) -> M + Send + Sync + 'static,
    {
        crate::middleware::Layered::new(self, make)
    }

    /// The factory as a closure, for [`Server::serve`] or another wrapper.
    fn into_factory(self) -> impl Fn(usize) -> Self::Service + Send + Sync + 'static
    where
        Self: Sized,
    {
        move |worker| self.make_service(worker)
    }
}

impl<S: 'static> MakeService for AppFactory<S> {
    type Service = AppService<S>;

    fn make_service(&self, worker: usize) -> AppService<S> {
        AppService { shared: Arc::clone(&self.shared), state: Rc::new((self.state)(worker)) }
    }
}

impl<F, T> MakeService for F
where
    F: Fn(usize) -> T + Send + Sync + 'static,
    T: Service,
{
    type Service = T;

    fn make_service(&self, worker: usize) -> T {
        self(worker)
    }
}

/// An app, or anything already turned into a [`MakeService`].
pub trait IntoMakeService {
    /// The factory it becomes.
    type MakeService: MakeService;

    /// Checks and builds it.
    fn into_make_service(self) -> Result<Self::MakeService, BuildError>;
}

impl<S: 'static> IntoMakeService for App<S> {
    type MakeService = AppFactory<S>;

    fn into_make_service(self) -> Result<AppFactory<S>, BuildError> {
        self.build()
    }
}

impl<M: MakeService> IntoMakeService for M {
    type MakeService = M;

    fn into_make_service(self) -> Result<M, BuildError> {
        Ok(self)
    }
}

/// Why [`serve`] could not start.
#[derive(Debug)]
pub enum ServeError {
    /// The app's routes are inconsistent.
    Build(BuildError),
    /// The server could not bind or start its workers.
    Server(kiln_http::Error),
}

impl fmt::Display for ServeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ServeError::Build(e) => e.fmt(f),
            ServeError::Server(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for ServeError {}

/// Builds the app (reporting route conflicts) and starts `server` with it.
pub fn serve(app: impl IntoMakeService, server: Server) -> Result<ServerHandle, ServeError> {
    let make = app.into_make_service().map_err(ServeError::Build)?;
    server.serve(make.into_factory()).map_err(ServeError::Server)
}
